"""Which names a function rebinds outside itself (`global`, `nonlocal`), directly or through
the functions it calls by name.

A name a function declares `global` or `nonlocal` is written in the scope that owns it, so a
call changes the caller's view of it; a call that cannot be followed makes it unknown.
Everything here is syntax, computed once per function; the facts are the walker's.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from .cst.syntax import assigned_names, parameters_of
from .cst.tree import statement_children, statements, walk

# Calls through which a function's writes are looked for; deeper chains are cut.
_MAX_CHAIN = 6
_SCOPE_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})
_DECLARATION = re.compile(r"^[ \t]*(?:global|nonlocal)[ \t]+\w", re.M)


def _body(node: cst.FunctionDef) -> list:
    return list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []


def _declared(node: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """(global, nonlocal) names a function's own statements declare (not nested functions')."""
    globals_, nonlocals = set(), set()
    stack = _body(node)
    while stack:
        n = stack.pop()
        kind = type(n)  # exact types: a failed `isinstance` on a LibCST class is costly
        if kind is cst.Global:
            globals_.update(item.name.value for item in n.names)
        elif kind is cst.Nonlocal:
            nonlocals.update(item.name.value for item in n.names)
        if kind in _SCOPE_TYPES:
            continue
        # `global` and `nonlocal` are statements: expressions need not be entered
        stack.extend(statement_children(n))
    return globals_, nonlocals


class Scopes:
    def __init__(self, module: cst.Module, source: str):
        self.module = module
        # a file without these keywords rebinds nothing outside a function
        self.declares = _DECLARATION.search(source) is not None
        self._parents: Optional[dict[cst.FunctionDef, Optional[cst.FunctionDef]]] = None
        self._nested: dict[cst.FunctionDef, dict[str, cst.FunctionDef]] = {}
        self._declared: dict[cst.FunctionDef, tuple[set[str], set[str]]] = {}
        self._writes: dict[cst.FunctionDef, tuple] = {}
        self._module_writes: Optional[frozenset] = None
        self._assigned: dict[cst.FunctionDef, frozenset] = {}

    # -- the tree of functions ---------------------------------------------------------

    def parent(self, node: cst.FunctionDef) -> Optional[cst.FunctionDef]:
        """The function a function is defined in (None at module or class level)."""
        if self._parents is None:
            parents: dict = {}
            stack: list = [(self.module, None)]
            while stack:
                n, owner = stack.pop()
                kind = type(n)
                if kind is cst.FunctionDef:
                    parents[n] = owner
                    owner = n
                elif kind is cst.ClassDef:
                    owner = None  # a method's enclosing scope is not the class
                # a `def` is a statement: expressions (lambdas among them) need not be entered
                for c in statement_children(n):
                    stack.append((c, owner))
            self._parents = parents
        return self._parents.get(node)

    def nested(self, node: cst.FunctionDef) -> dict[str, cst.FunctionDef]:
        """The functions defined directly inside a function, by name."""
        if node not in self._nested:
            self.parent(node)
            self._nested[node] = {f.name.value: f for f, p in (self._parents or {}).items() if p is node}
        return self._nested[node]

    def declared(self, node: cst.FunctionDef) -> tuple[set[str], set[str]]:
        if node not in self._declared:
            self._declared[node] = _declared(node) if self.declares else (set(), set())
        return self._declared[node]

    def assigned(self, node: cst.FunctionDef) -> frozenset:
        """The names a function's statements bind (its own variables, with its parameters),
        found once for the walker, the call analyses and the scopes alike: every run of the
        function asks."""
        found = self._assigned.get(node)
        if found is None:
            found = self._assigned[node] = frozenset(assigned_names(node.body.body))
        return found

    # -- writes outside a function -------------------------------------------------------

    def writes(self, node: cst.FunctionDef, functions: dict[str, cst.FunctionDef]) -> frozenset:
        """Names owned by an enclosing scope (the module's, or an enclosing function's) that a
        call of this function may rebind: those it declares `global`/`nonlocal` and those the
        functions it calls by name rebind, less the ones that are its own variables. Within
        the function they are followed as its own variables, from the owner's facts."""
        kinds = self.kinds(node, functions)
        return kinds[0] | kinds[1]

    def kinds(self, node: cst.FunctionDef, functions: dict[str, cst.FunctionDef], depth: int = 0) -> tuple:
        """(module names it rebinds, enclosing functions' names it rebinds, module names a
        function it calls rebinds that it cannot follow, being variables of its own)."""
        if not self.declares:
            return _NO_WRITES
        found = self._writes.get(node)
        if found is not None:
            return found
        self._writes[node] = _NO_WRITES  # recursion ends here
        globals_, nonlocals = (set(k) for k in self.declared(node))
        lost: set[str] = set()
        if depth < _MAX_CHAIN:
            mine = self.assigned(node) if isinstance(node.body, cst.IndentedBlock) else frozenset()
            own = (parameters_of(node) | mine) - globals_ - nonlocals
            parent = self.parent(node)
            visible = dict(functions)
            if parent is not None:
                visible.update(self.nested(parent))
            visible.update(self.nested(node))
            for n in walk(node.body):
                if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value in visible:
                    callee = visible[n.func.value]
                    if callee is not node:
                        g, nl, lo = self.kinds(callee, functions, depth + 1)
                        globals_ |= g - own
                        nonlocals |= nl - own - globals_
                        lost |= (g & own) | lo
        found = self._writes[node] = (frozenset(globals_), frozenset(nonlocals), frozenset(lost - globals_))
        return found

    def inside(self, node: cst.FunctionDef, owner: cst.CSTNode) -> bool:
        """Whether a function is defined (at any depth) inside `owner`."""
        for _ in range(64):
            node = self.parent(node)
            if node is None:
                return False
            if node is owner:
                return True
        return False

    def module_writes(self) -> frozenset:
        """Names some function of the module declares `global`: the module's value of such a
        name can change whenever a function runs."""
        if self._module_writes is None:
            found: set[str] = set()
            if self.declares:
                for n in statements(self.module):
                    if isinstance(n, cst.Global):
                        found.update(item.name.value for item in n.names)
            self._module_writes = frozenset(found)
        return self._module_writes


_NO_WRITES = (frozenset(), frozenset(), frozenset())
