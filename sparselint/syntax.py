"""Syntactic queries over statement lists: what a block binds, where backward runs."""
from __future__ import annotations

from typing import Callable, Iterable, Optional

import libcst as cst

from . import torchapi as api
from .names import dotted
from .tree import children

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_SCOPE_TYPES = frozenset(_SCOPES)  # concrete types: a set lookup, not an abstract `isinstance`
_TARGETED = frozenset({cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr})
_DEF_TYPES = frozenset({cst.FunctionDef, cst.ClassDef})


def _walk(node: cst.CSTNode, visit: Callable[[cst.CSTNode], None]) -> None:
    """Visit a block, entering no nested function, class or lambda."""
    stack = [node]
    while stack:
        n = stack.pop()
        visit(n)
        if type(n) in _SCOPE_TYPES:
            continue
        stack.extend(reversed(list(children(n))))


def _target_names(target: cst.BaseExpression, attributes: bool) -> list[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for el in target.elements:
            out.extend(_target_names(el.value, attributes))
        return out
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value, attributes)
    if isinstance(target, cst.Name) or (attributes and isinstance(target, cst.Attribute)):
        p = dotted(target)
        return [p] if p else []
    return []


def assigned_names(stmts: Iterable[cst.CSTNode], attributes: bool = False,
                   count: Optional[dict[str, int]] = None) -> set[str]:
    """Names (and with `attributes`, dotted paths) bound anywhere in these statements."""
    found: list[str] = []

    def visit(n: cst.CSTNode) -> None:
        t = type(n)
        if t is cst.AssignTarget or t in _TARGETED:
            found.extend(_target_names(n.target, attributes))
        elif t is cst.AsName:
            found.extend(_target_names(n.name, attributes) if isinstance(n.name, cst.BaseExpression) else [])
        elif t in _DEF_TYPES:
            found.append(n.name.value)
        elif t is cst.ImportAlias and n.asname is None:
            name = dotted(n.name)
            if name:
                found.append(name.split(".")[0])

    for st in stmts:
        try:
            _walk(st, visit)
        except RecursionError:
            break
    if count is not None:
        for name in found:
            count[name] = count.get(name, 0) + 1
    return set(found)


def declared_names(stmts: Iterable[cst.CSTNode]) -> set[str]:
    """Names a function's `global` and `nonlocal` statements declare."""
    found: set[str] = set()

    def visit(n: cst.CSTNode) -> None:
        if type(n) in (cst.Global, cst.Nonlocal):
            found.update(item.name.value for item in n.names)

    for st in stmts:
        _walk(st, visit)
    return found


def reads_of(stmts: Iterable[cst.CSTNode], name: str) -> list[tuple[cst.Name, cst.CSTNode, Optional[cst.CSTNode]]]:
    """Each use of the name `name` in these statements (entering no nested function, class or
    lambda), with its parent and grandparent, in source order."""
    out = []
    stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode], Optional[cst.CSTNode]]] = [
        (st, None, None) for st in reversed(list(stmts))]
    while stack:
        n, parent, grand = stack.pop()
        if type(n) is cst.Name and n.value == name and parent is not None:
            if not (type(parent) is cst.Attribute and parent.attr is n):
                out.append((n, parent, grand))
        if type(n) in _SCOPE_TYPES:
            continue
        stack.extend((c, n, parent) for c in reversed(list(children(n))))
    return out


def parameters_of(func: cst.FunctionDef) -> set[str]:
    p = func.params
    names = [a.name.value for a in (*p.posonly_params, *p.params, *p.kwonly_params)]
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return set(names)


def is_backward_call(node: cst.CSTNode, qualify: Optional[Callable] = None) -> bool:
    if type(node) is not cst.Call:
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "backward":
        return True
    return qualify is not None and qualify(func) in api.BACKWARD_FUNCTIONS


def backward_calls_in_block(stmts: Iterable[cst.CSTNode]) -> list[cst.Call]:
    """The backward calls of a scope (not inside nested functions)."""
    found: list[cst.Call] = []
    for st in stmts:
        found.extend(backward_calls(st))
    return found


def contains_backward(node: cst.CSTNode) -> bool:
    hit = []

    def visit(n: cst.CSTNode) -> None:
        if not hit and is_backward_call(n):
            hit.append(n)

    try:
        _walk(node, visit)
    except RecursionError:
        return False
    return bool(hit)


def backward_calls(node: cst.CSTNode) -> list[cst.Call]:
    out: list[cst.Call] = []
    try:
        _walk(node, lambda n: out.append(n) if is_backward_call(n) else None)
    except RecursionError:
        pass
    return out


def operand_names(node: cst.CSTNode, skip_block=None) -> list[cst.Name]:
    """Names used as a call argument or an arithmetic operand in a block, in source order;
    blocks for which `skip_block(with_node)` is true (say, `torch.no_grad()`) are passed over."""
    out: list[cst.Name] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if type(n) in _SCOPE_TYPES or (skip_block is not None and type(n) is cst.With and skip_block(n)):
            continue
        kids = list(children(n))
        if type(n) is cst.Arg and type(n.value) is cst.Name:
            out.append(n.value)
        elif type(n) is cst.BinaryOperation:
            out.extend(k for k in (n.left, n.right) if type(k) is cst.Name)
        stack.extend(reversed(kids))
    return out
