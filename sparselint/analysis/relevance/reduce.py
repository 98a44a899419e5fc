"""Parse only what is needed: blank out the definitions and statements that cannot matter.

The units are the top-level statements and, inside a class, its methods. A unit matters
when its code (not its strings or comments) holds a rule token (`sparselint.tokens`), a
name imported from a token's module (`from torch.optim import SGD`), or a project helper
the engine follows into (`names`); then, to a fixed point:

- a statement that matters keeps the statements binding the names it reads and those
  reading the names it binds;
- a function, class or method that matters keeps the code calling it or reading it as a
  value (a class: also its subclasses' headers; a method returning a value or a class attribute: the code reading it
  through the class), and the functions and classes of the module it reads (the whole-program engine may follow a call there
  with the facts of the caller);
- a method that matters keeps its class, the methods it reaches through `self.`/`cls.`
  and those that reach it; `__init__`, a class-level statement or a header (bases,
  decorators) that matters, or any use of the class from code that matters, keeps the
  class whole, since then facts reach every method through `self`.

Everything else is replaced by empty lines before the LibCST parse: every line keeps its
number and every kept character its column, so positions and fixes need no mapping. The
`ast` tree built here is handed on (the project index reads the checked file from it), and
a file where nothing matters is not parsed by LibCST at all. When `ast` cannot parse the
file, nothing is blanked and LibCST reports the error.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Optional

from ...source import NEWLINE, split_lines
from ..project.models import class_may_own_parameters, parse_python, push_children as _push_children
from ..entry import documents_coo
from .tokens import Tokens

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TYPE_TESTS = frozenset({"isinstance", "issubclass"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_IMPORTS = (ast.Import, ast.ImportFrom)
_SELF = frozenset({"self", "cls"})


@dataclass
class Reduced:
    """`text`: what to parse (None: nothing in the file can matter); `tree`: the `ast` of
    the whole file (None when it does not parse)."""
    text: Optional[str]
    tree: Optional[ast.Module]


@dataclass
class _Unit:
    node: ast.AST
    parent: int = -1  # the class unit of a member
    words: set[str] = field(default_factory=set)
    bound: set[str] = field(default_factory=set)
    used: set[str] = field(default_factory=set)
    called: set[str] = field(default_factory=set)
    callee_words: set[str] = field(default_factory=set)  # what calls call: `x.to_sparse` of `x.to_sparse()`
    members: set[str] = field(default_factory=set)  # `self.x` / `cls.x` / `Class.x` read
    writes: set[str] = field(default_factory=set)  # `self.x = ...`
    stores: set[str] = field(default_factory=set)  # `name[...] = ...`: what it puts into a container
    decorators: set[str] = field(default_factory=set)  # names its decorators read
    owner: bool = False  # a class whose `self` the engine knows as a model: kept whole
    seed_names: set[str] = field(default_factory=set)  # imported from a token's module
    rebinds: set[str] = field(default_factory=set)  # names a `global` statement in it declares
    # what its lambdas' bodies name (also in the sets above): code that runs where it is called
    lambda_words: set[str] = field(default_factory=set)
    # names it reads other than as `name.attr` (a call, an argument, a value): a class read
    # only through its attributes (`Case.helper`) is not built there
    bare: set[str] = field(default_factory=set)
    tested: set[str] = field(default_factory=set)  # the classes of its `isinstance` tests


def _module_words(dotted_name: str, tokens: Optional[Tokens] = None) -> list[str]:
    parts = dotted_name.split(".")
    pairs = [f"{a}.{b}" for a, b in zip(parts, parts[1:])]
    if tokens is not None and tokens.dead_ends:
        # `torch.optim.lr_scheduler`: no optimizer is imported from there
        parts = [p for p, after in zip(parts, [*parts[1:], None]) if after is None or not tokens.dead_end(p, after)]
    return parts + pairs


def _summarise(unit: _Unit, nodes, tokens: Tokens, class_name: str = "") -> None:
    stmt = unit.node
    if isinstance(stmt, _DEFS):
        unit.bound.add(stmt.name)
        unit.decorators = {n.id for d in stmt.decorator_list for n in ast.walk(d) if type(n) is ast.Name}
    is_def = isinstance(stmt, _DEFS)
    words, used, bound = unit.words, unit.used, unit.bound
    dead_ends = tokens.dead_ends
    dead: set[int] = set()  # a name or attribute whose token does not count here (`optim` of `optim.step`)
    heads: set[int] = set()  # names read as `name.attr`
    tested: set[int] = set()  # names of the classes of an `isinstance` test
    stack = list(nodes)
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is ast.Name:
            if tested and id(n) in tested:
                used.add(n.id)
                unit.tested.add(n.id)
                continue
            if not dead or id(n) not in dead:
                words.add(n.id)
            if type(n.ctx) is ast.Load:
                used.add(n.id)
                if id(n) not in heads:
                    unit.bare.add(n.id)
            elif not is_def:
                bound.add(n.id)
        elif kind is ast.Attribute:
            if not dead or id(n) not in dead:
                words.add(n.attr)
            v = n.value
            if dead_ends:
                head = v.id if type(v) is ast.Name else v.attr if type(v) is ast.Attribute else None
                if head in dead_ends and tokens.dead_end(head, n.attr):
                    dead.add(id(v))
            if type(v) is ast.Name:
                heads.add(id(v))
                words.add(f"{v.id}.{n.attr}")
                if v.id in _SELF or v.id == class_name:
                    unit.members.add(n.attr)
                    if type(n.ctx) is ast.Store:
                        unit.writes.add(n.attr)
            elif type(v) is ast.Attribute:
                words.add(f"{v.attr}.{n.attr}")
            elif type(v) is ast.Call and type(v.func) is ast.Name and v.func.id == "super":
                unit.members.add(n.attr)
        elif kind is ast.Call:
            f = n.func
            if type(f) is ast.Name:
                unit.called.add(f.id)
                unit.callee_words.add(f.id)
                if f.id == "cls" or f.id == class_name:
                    # `cls(adjs, n)` in a classmethod builds an object: its `__init__` runs
                    unit.members.add("__init__")
                if f.id in _TYPE_TESTS and len(n.args) == 2:
                    # `isinstance(x, Case)` runs none of `Case`'s code and builds nothing
                    classes = n.args[1].elts if type(n.args[1]) is ast.Tuple else [n.args[1]]
                    for c in classes:
                        if type(c) is ast.Name:
                            tested.add(id(c))
            elif type(f) is ast.Attribute:
                unit.callee_words.add(f.attr)
                if type(f.value) is ast.Name:
                    unit.callee_words.add(f"{f.value.id}.{f.attr}")
                elif type(f.value) is ast.Attribute:
                    unit.callee_words.add(f"{f.value.attr}.{f.attr}")
        elif kind is ast.AugAssign:
            # `adj += d` reads `adj` as much as it binds it: `ast` marks the target Store only
            if type(n.target) is ast.Name:
                used.add(n.target.id)
        elif kind is ast.Subscript and type(n.ctx) is ast.Store and type(n.value) is ast.Name:
            unit.stores.add(n.value.id)
        elif kind is ast.arguments:
            # a default is a keyword the caller did not write: `def __init__(self, sparse=True)`
            positional = [*n.posonlyargs, *n.args]
            for a, d in zip(positional[len(positional) - len(n.defaults):], n.defaults):
                if type(d) is ast.Constant:
                    words.add(f"{a.arg}={d.value!r}")
            for a, d in zip(n.kwonlyargs, n.kw_defaults):
                if type(d) is ast.Constant:
                    words.add(f"{a.arg}={d.value!r}")
        elif kind is ast.keyword:
            if n.arg and type(n.value) is ast.Constant:
                words.add(f"{n.arg}={n.value.value!r}")
        elif kind is ast.comprehension and not is_def:
            # its loop variables do not outlive it: no code elsewhere reads them
            words.update(t.id for t in ast.walk(n.target) if type(t) is ast.Name)
            stack.append(n.iter)
            stack.extend(n.ifs)
            continue
        elif kind is ast.Lambda:
            # its defaults run here; its body where it is called
            inner = _Unit(n)
            _summarise(inner, [n.body], tokens, class_name)
            for name in ("words", "used", "called", "callee_words", "members", "stores", "bare", "tested"):
                getattr(unit, name).update(getattr(inner, name))
            unit.lambda_words.update(inner.words, inner.callee_words, inner.lambda_words)
            stack.append(n.args)
            continue
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            words.add(n.name)
        elif kind is ast.Global:
            unit.rebinds.update(n.names)
            bound.update(n.names)  # what code reading the name sees may be set there
        elif kind in (ast.Import, ast.ImportFrom):
            module_words = _module_words(n.module, tokens) if kind is ast.ImportFrom and n.module else []
            words.update(module_words)
            from_token_module = any(tokens.matches_word(w, False) for w in module_words)
            for alias in n.names:
                alias_words = _module_words(alias.name, tokens)
                words.update(alias_words)
                bound.add((alias.asname or alias.name).split(".")[0])
                if alias.name == "*" or (kind is ast.Import and alias.asname is None):
                    continue  # `import torch.optim` is read as `torch.optim.X`, a token itself
                if from_token_module or any(tokens.matches_word(w) for w in alias_words):
                    # `from torch import sparse_coo_tensor as make`: `make(...)` is that call
                    unit.seed_names.add(alias.asname or alias.name)
            continue
        _push_children(n, stack)


def _units(statements: list[ast.stmt], tokens: Tokens, parent: int = -1, units=None) -> list[_Unit]:
    units = [] if units is None else units
    for stmt in statements:
        unit = _Unit(stmt, parent=parent)
        units.append(unit)
        if isinstance(stmt, ast.ClassDef):
            # the header alone: bases, keywords and decorators; the members are units
            _summarise(unit, [*stmt.bases, *stmt.keywords, *stmt.decorator_list], tokens)
            # then every method sees a model with the parameters the project index builds,
            # and any of them may matter
            unit.owner = class_may_own_parameters(stmt)
            at = len(units) - 1
            for member in stmt.body:
                if isinstance(member, ast.ClassDef):
                    _units([member], tokens, at, units)
                    continue
                sub = _Unit(member, parent=at)
                _summarise(sub, [member], tokens, stmt.name)
                units.append(sub)
        else:
            _summarise(unit, [stmt], tokens)
    return units


# Call chains the whole-program engine follows are at most this deep (`calls.MAX_DEPTH`).
MAX_CALLEE_DEPTH = 4
_NONE, _REACHED, _CONTEXT, _BEARING = 0, 1, 2, 3
# A global that code kept reads is kept with it when it is a flag, a constant or a config
# (a few lines); a statement longer than this is a data table (6,800 lines of tuning data
# in torch/sparse/_triton_ops_meta.py), whose value no fact describes. So is a table that
# holds a token only inside its lambdas, or holds functions that matter only as values (an
# operator database of 11,000 lines naming 600 functions): it is kept only when its own code
# holds a token.
MAX_CONTEXT_LINES = 50


def _lines(node: ast.AST) -> int:
    return (node.end_lineno or node.lineno) - node.lineno + 1


def _relevant(units: list[_Unit], tokens: Tokens, names: tuple[str, ...],
              entry_words: tuple[str, ...] = ()) -> tuple[list[bool], list[bool]]:
    """Which units are kept, and which classes are kept whole.

    A unit is kept as *bearing* facts (it holds a token, or reads or returns what such code
    binds), as *context* (it binds a global or a `self.` attribute that kept code reads:
    a flag, a constant, the model `__init__` builds), or as *reached*: a function, class or
    method that code kept calls, so the engine may follow the call into it with the
    caller's facts, at most `MAX_CALLEE_DEPTH` deep. Only bearing code propagates to its
    callers and readers; context and reached code make no fact of their own.

    A public function naming one of `entry_words` (a layout test in a package's module) is
    kept as reached: it is analysed as an entry point with what its own test admits, and so
    are the helpers it calls, but its callers get no fact from it (what they pass is
    unknown). A private one is no entry point, and a test there narrows nothing a caller
    passed (a layout predicate aside, whose callers are marked)."""
    binders, users = defaultdict(list), defaultdict(list)
    children: dict[int, list[int]] = defaultdict(list)
    members_of: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    readers_of: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    writers_of: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    seeds = set(names)
    for u in units:
        seeds |= u.seed_names
    dotted_readers: dict[str, list[int]] = defaultdict(list)
    for i, u in enumerate(units):
        for w in u.words:
            if "." in w:
                dotted_readers[w].append(i)
        if u.parent < 0:
            for n in u.bound:
                binders[n].append(i)
        for n in u.used:
            users[n].append(i)
        if u.parent >= 0:
            children[u.parent].append(i)
            if isinstance(u.node, _DEFS):
                members_of[u.parent][u.node.name].append(i)
            for m in u.members:
                readers_of[u.parent][m].append(i)
            for m in u.writes:
                writers_of[u.parent][m].append(i)

    words_by_head: dict[str, list[str]] = defaultdict(list)
    for w in dotted_readers:
        words_by_head[w.partition(".")[0]].append(w)

    kind = [_NONE] * len(units)
    depth = [0] * len(units)
    whole = [False] * len(units)
    work: list[int] = []

    def is_class(j: int) -> bool:
        return isinstance(units[j].node, ast.ClassDef)

    def is_table(j: int) -> bool:
        node = units[j].node
        if units[j].parent >= 0 or isinstance(node, (ast.ClassDef, *_IMPORTS)) or _lines(node) <= MAX_CONTEXT_LINES:
            return False
        # a function that builds a table (torch's `get_new_module_tests()`, 1,600 lines of
        # test cases whose constructors are lambdas) is one when its lambdas alone hold a
        # token and nothing here calls it (a call runs its body, whose effects count)
        if not isinstance(node, _FUNCS):
            return True
        return (names_token(units[j]) and not runs_token(units[j])
                and not any(node.name in units[k].called for k in users[node.name]))

    def names_token(u: _Unit, skip=frozenset()) -> bool:
        return (any(tokens.matches_word(w) for w in u.callee_words if w not in skip)
                or any(tokens.matches_word(w, False) for w in u.words if w not in skip))

    def matches(u: _Unit) -> bool:
        return names_token(u) or bool(seeds) and not seeds.isdisjoint(u.words)

    def runs_token(u: _Unit) -> bool:
        """Its own code, not its lambdas, holds a token or calls what a token module gave."""
        skip = u.lambda_words
        return names_token(u, skip) or any(n in seeds and n not in skip for n in u.called)

    direct = {i for i, u in enumerate(units) if is_table(i) and runs_token(u)}

    def keep(j: int, how: int, d: int = 0) -> None:
        if how == _REACHED and d > MAX_CALLEE_DEPTH:
            return
        if j not in direct and is_table(j):
            return
        if units[j].owner and not whole[j]:
            whole[j] = True
            how, kind[j] = max(how, kind[j]), _NONE
        if kind[j] < how or (how == _REACHED and kind[j] == _REACHED and d < depth[j]):
            kind[j], depth[j] = how, (d if how == _REACHED else 0)
            work.append(j)

    def make_whole(j: int, how: int, d: int = 0) -> None:
        if is_class(j) and not whole[j]:
            whole[j] = True
            how, kind[j] = max(how, kind[j]), _NONE  # processed again, now whole
        keep(j, how, d)

    # unit -> the names of defs that matter which it holds as values without calling them:
    # what it does with them is kept; they are not reached through it again
    holds: dict[int, set[str]] = defaultdict(set)

    def context_of(i: int, u: _Unit, d: int = 1) -> None:
        for n in u.used:
            if n in holds.get(i, ()):
                continue
            for j in binders[n]:
                if j == i or isinstance(units[j].node, _IMPORTS):
                    continue
                if is_class(j) and n not in u.bare:
                    through_attributes(j, u, n, d)
                elif isinstance(units[j].node, _DEFS):
                    use(j, _REACHED, d)
                elif _lines(units[j].node) <= MAX_CONTEXT_LINES:
                    keep(j, _CONTEXT)

    def through_attributes(j: int, u: _Unit, name: str, d: int) -> None:
        """A class that `u` reads only through its attributes (`Case.helper`, `Case.limit`)
        is not built there: the members read are reached, not every method; a member it
        inherits (`Fn.apply` runs `Fn.forward`) keeps it whole."""
        own = class_members.get(j)
        if own is None:
            own = class_members[j] = {m for k in children[j] for m in _bound_names(units[k].node)}
        read = {w[len(name) + 1:] for w in u.words if w.startswith(name + ".")}
        if not read and name in u.tested:
            keep(j, _REACHED, d)  # the class must exist for the test; its header says what it derives from
            return
        if not read or not read <= own:
            make_whole(j, _REACHED, d)
            return
        keep(j, _REACHED, d)
        for attr in read:
            for k in members_of[j].get(attr, ()):
                use(k, _REACHED, d + 1)

    class_members: dict[int, set[str]] = {}

    def use(j: int, how: int, d: int = 0) -> None:
        """`j` is read by code kept: a class so reached is kept whole, since facts may enter
        through its constructor."""
        (make_whole if is_class(j) else keep)(j, how, d)

    entry = {w.rstrip("()") for w in entry_words}
    # a layout predicate of the module (`def is_coo(t): return t.layout == torch.sparse_coo`)
    # is a layout test wherever it is called
    predicates = [i for i, u in enumerate(units) if entry and u.parent < 0 and _returns_word(u.node, entry)]
    while predicates:
        name = units[predicates.pop()].node.name
        if name not in entry:
            entry.add(name)
            predicates.extend(j for j in users[name] if units[j].parent < 0 and _returns_word(units[j].node, entry))
    for i, u in enumerate(units):
        if matches(u):
            if u.parent >= 0 and not isinstance(u.node, _DEFS):
                make_whole(u.parent, _BEARING)
            elif is_class(i):
                make_whole(i, _BEARING)
            else:
                keep(i, _BEARING)
        elif entry and _public(u, units) and (not entry.isdisjoint(u.words) or (
                "COO" in entry and isinstance(u.node, _FUNCS) and documents_coo(ast.get_docstring(u.node)))):
            keep(i, _REACHED)  # (a docstring that says a parameter is sparse COO is a layout test too)
    while work:
        i = work.pop()
        u, node, how, d = units[i], units[i].node, kind[i], depth[i]
        is_def = isinstance(node, _DEFS)
        if u.parent >= 0:
            # a member: its class, the methods it reaches and (if bearing) those reaching it
            if isinstance(node, _FUNCS) and node.name == "__init__":
                make_whole(u.parent, how, d)
            else:
                keep(u.parent, how, d)
            for m in u.members:
                for j in members_of[u.parent].get(m, ()):
                    use(j, _REACHED, d + 1)
                for j in writers_of[u.parent].get(m, ()):
                    if j != i and (isinstance(units[j].node, _DEFS) or _lines(units[j].node) <= MAX_CONTEXT_LINES):
                        keep(j, _CONTEXT)  # what `self.m` holds is set there
            if is_def and how == _BEARING:
                for j in readers_of[u.parent].get(node.name, ()):
                    use(j, _BEARING)
            if how == _BEARING:
                # read through the class from outside it: `Factory.build()` (a method that
                # returns a value), `Holder.value` (a class attribute)
                owner = units[u.parent].node.name
                for m in _member_values(node):
                    for j in dotted_readers.get(f"{owner}.{m}", ()):
                        use(j, _BEARING)
        if whole[i]:
            for j in children[i]:
                use(j, how, d)
        if u.parent < 0 and not is_def:
            if isinstance(node, _IMPORTS) and not (seeds and not seeds.isdisjoint(u.words)):
                continue
            if how == _BEARING:
                for n in u.used:
                    if n in holds.get(i, ()):
                        continue
                    for j in binders[n]:
                        use(j, _BEARING)
                for n in u.bound:
                    for j in users[n]:
                        use(j, _BEARING)
            else:
                context_of(i, u)
            continue
        if how == _BEARING:
            # a module name it rebinds (`global x`): the code reading that name sees the value
            for n in u.rebinds:
                for j in users[n]:
                    use(j, _BEARING)
        if how == _BEARING and u.parent < 0:
            # the code calling it, and the code holding it as a value (`{"main": make}`,
            # `apply(make)`), which may call it
            through = node.name + "."
            for j in users[node.name]:
                if node.name in units[j].called or any(w.startswith(through) for w in units[j].callee_words):
                    use(j, _BEARING)  # a call of it, or through it (`Fn.apply(x)`)
                    continue
                if is_class(i) and is_class(j) and _derives_from(units[j].node, node.name):
                    continue  # a subclass: its header, below
                holds[j].add(node.name)
                if units[j].parent < 0:
                    # a method holding it (`patch_fn=Patcher.patch`) would make its whole
                    # class matter through `__init__` and its bases: not followed
                    use(j, _BEARING)
            for j in users[node.name]:
                if units[j].parent >= 0 and not isinstance(units[j].node, _DEFS):
                    # a class-level statement naming it: a dataclass field's `default_factory`
                    make_whole(units[j].parent, _BEARING)
            # its decorators get it as a value (`@register("main")`), and the containers
            # they fill (`REGISTRY[name] = fn`) then hold it; the other functions they
            # decorate get nothing from it
            for n in u.decorators:
                for j in binders[n]:
                    if isinstance(units[j].node, _DEFS):
                        use(j, _REACHED, 1)
                        for m in units[j].stores:
                            for k in users[m]:
                                if k != j:
                                    use(k, _BEARING)
            for n in u.stores:
                for j in users[n]:
                    use(j, _BEARING)
            if is_class(i):
                # a subclass naming it as a base: its header (facts reach inherited methods
                # through calls on the subclass)
                for j in users[node.name]:
                    if is_class(j):
                        keep(j, _BEARING)
                # a member it inherits from a library base, read through the class, may run
                # its own methods (`Fn.apply(x)` runs `Fn.forward` and `Fn.backward`)
                own = {units[j].node.name for j in children[i] if isinstance(units[j].node, _DEFS)}
                own.update(m for j in children[i] for m in _member_values(units[j].node))
                for w in words_by_head.get(node.name, ()):
                    if w.partition(".")[2] not in own:
                        for j in dotted_readers[w]:
                            use(j, _BEARING)
        # The definitions a function reads may be called; the globals it reads are its
        # context (their stable facts: a flag, a constant).
        context_of(i, u, d + 1 if how == _REACHED else 1)
    keep_flags = [k != _NONE or (u.parent < 0 and isinstance(u.node, _IMPORTS)) for k, u in zip(kind, units)]
    return keep_flags, whole


def _public(u: _Unit, units: list[_Unit]) -> bool:
    """A function or method an entry point can be: public, in a public class."""
    if not isinstance(u.node, _FUNCS) or u.node.name.startswith("_"):
        return False
    return u.parent < 0 or not units[u.parent].node.name.startswith("_")


def _returns_word(node: ast.AST, words: set[str]) -> bool:
    """Whether a function returns an expression naming one of `words`."""
    if not isinstance(node, _FUNCS):
        return False
    for n in ast.walk(node):
        if isinstance(n, ast.Return) and n.value is not None:
            for m in ast.walk(n.value):
                if (m.id if isinstance(m, ast.Name) else m.attr if isinstance(m, ast.Attribute) else None) in words:
                    return True
    return False


def _derives_from(node: ast.ClassDef, name: str) -> bool:
    return any(type(b) is ast.Name and b.id == name for b in node.bases)


def _bound_names(node: ast.AST) -> list[str]:
    """The names a class body statement binds in the class."""
    if isinstance(node, _DEFS):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _member_values(node: ast.AST) -> list[str]:
    """What a class body statement gives a reader through the class: a method that returns
    a value, a class attribute (not a nested class)."""
    if isinstance(node, _FUNCS):
        stack = list(node.body)
        while stack:
            n = stack.pop()
            if isinstance(n, ast.Return) and n.value is not None:
                return [node.name]
            if not isinstance(n, (*_DEFS, ast.Lambda)):
                _push_children(n, stack)
        return []
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _span(s: ast.stmt) -> tuple[int, int]:
    decorators = getattr(s, "decorator_list", ())
    return min([s.lineno, *(d.lineno for d in decorators)]), s.end_lineno or s.lineno


def reduce_source(text: str, tokens: Tokens, names: tuple[str, ...] = (),
                  tree: Optional[ast.Module] = None, entry_words: tuple[str, ...] = ()) -> Reduced:
    """`tokens` in their forms; `names` (imported helpers that can hold a hazard) match
    whole names only, as do `entry_words` (the layout tests of entry points)."""
    tree = tree or parse_python(text)
    if tree is None:
        return Reduced(text, None)
    units = _units(tree.body, tokens)
    keep, whole = _relevant(units, tokens, names, entry_words)
    if not any(k and not isinstance(u.node, _IMPORTS) for k, u in zip(keep, units)):
        return Reduced(None, tree)
    if all(keep):
        return Reduced(text, tree)
    lines = split_lines(text)
    endings = NEWLINE.findall(text)
    spans = [_span(u.node) for u in units]
    kept_lines: set[int] = set()
    empty: list[int] = []  # the first line of the body of a class kept without its members
    with_members = {u.parent for k, u in zip(keep, units) if k and u.parent >= 0 and isinstance(u.node, _DEFS)}
    for i, (u, (first, last)) in enumerate(zip(units, spans)):
        if not keep[i]:
            continue
        partial = isinstance(u.node, ast.ClassDef) and not whole[i]
        if partial and i not in with_members and all(isinstance(m, _DEFS) for m in u.node.body):
            # no member kept and none that stays with it: the header and a `pass` (a
            # subclass's header is what its instances inherit through)
            start = _span(u.node.body[0])[0]
            if start > u.node.lineno:
                empty.append(start)
            else:
                partial = False
        if partial:
            # a class kept for some of its methods: its header stays, members are decided one by one
            kept_lines.update(range(first, max(u.node.lineno, _span(u.node.body[0])[0] - 1) + 1))
        else:
            kept_lines.update(range(first, last + 1))
    source_lines = lines[:]
    for i, (u, (first, last)) in enumerate(zip(units, spans)):
        if keep[i] or any(n in kept_lines for n in range(first, last + 1)):
            continue  # a statement sharing a line with a kept one stays
        if u.parent >= 0 and not isinstance(u.node, _DEFS) and keep[u.parent]:
            continue  # class-level statements stay with their class
        for n in range(first - 1, last):
            lines[n] = ""
    for start in empty:
        original = source_lines[start - 1]
        lines[start - 1] = original[:len(original) - len(original.lstrip())] + "pass"
    # Blank lines after the last kept one are dropped: LibCST would tokenize every one of
    # them (26,000 in a 27,820-line file whose op table is blanked), and no position
    # refers to them.
    last = len(lines)
    while last > 0 and not lines[last - 1].strip():
        last -= 1
    out = []
    for i, line in enumerate(lines[:last]):
        out.append(line)
        if i < len(endings):
            out.append(endings[i])
    return Reduced("".join(out), tree)
