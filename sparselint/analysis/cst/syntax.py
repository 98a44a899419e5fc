"""Syntactic queries over statement lists: what a block binds, where backward runs."""
from __future__ import annotations

from typing import Callable, Iterable, Optional

import libcst as cst

from ..torchops import torchapi as api
from .names import dotted
from .tree import child_list, child_tuple

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
        stack.extend(reversed(child_tuple(n)))


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
        elif (t is cst.MatchAs or t is cst.MatchStar) and n.name is not None:
            found.append(n.name.value)  # a `case` capture
        elif t is cst.MatchMapping and n.rest is not None:
            found.append(n.rest.value)
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
        stack.extend((c, n, parent) for c in reversed(child_list(n)))
    return out


# Reads of a tensor whose result shares nothing with it: a handle to the tensor never leaves
_APART_ATTRIBUTES = frozenset({"shape", "dtype", "device", "layout", "is_sparse", "is_leaf", "requires_grad",
                               "ndim", "grad", "grad_fn", "is_cuda"})
_APART_METHODS = frozenset({"size", "dim", "numel", "nelement", "is_coalesced", "_nnz", "item", "tolist",
                            "sparse_dim", "dense_dim", "to_dense", "clone", "sum", "is_contiguous", "backward"})
_BINDERS = frozenset({cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.Del})
# In-place methods that do not write the tensor's data.
NOT_WRITES = frozenset({"requires_grad_", "share_memory_", "detach_", "retain_grad", "register_hook"})
_GRAD_FREE = ("torch.no_grad", "torch.inference_mode")


def handed_on(stmts: Iterable[cst.CSTNode], matches: Callable[[cst.CSTNode], bool],
              holds: Callable[[cst.Call], bool], writes: bool = False) -> list[cst.CSTNode]:
    """The uses, in these statements (no nested function, class or lambda), of a value that
    `matches` picks out, that may leave a second handle on its object: an assignment from it,
    a container item, a view (`.data`, `._values()`), an argument of a call that `holds`
    says may keep it. Not one: being rebound, compared, formatted, read for its shape or a
    scalar, or the receiver of a call whose result is thrown away (`x.mul_(2)`). With
    `writes`, an in-place write to it (`x.mul_(2)`, `x[i] = v`, `x += v`) counts too."""
    out = []
    stack: list[tuple] = [(st, ()) for st in reversed(list(stmts))]
    while stack:
        n, above = stack.pop()
        kind = type(n)
        if kind in _SCOPE_TYPES:
            continue
        if kind in (cst.Name, cst.Attribute) and above and matches(n):
            if not _kept_apart(n, above, holds, writes):
                out.append(n)
            continue
        inner = (n, *above[:11])  # the nearest ancestors are all a use is judged by
        stack.extend((c, inner) for c in reversed(child_list(n)))
    return out


def _kept_apart(n, above: tuple, holds, writes: bool) -> bool:
    parent = above[0]
    kind = type(parent)
    if kind is cst.AugAssign and parent.target is n:
        return not writes
    if kind in _BINDERS and getattr(parent, "target", None) is n:
        return True
    if kind in (cst.Del, cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression):
        return True
    if kind is cst.Attribute and parent.value is n:
        if not (len(above) > 1 and type(above[1]) is cst.Call and above[1].func is parent):
            return parent.attr.value in _APART_ATTRIBUTES
        # a chain of calls on it (`x.coalesce().values().clamp_(-1, 1)`): nothing is kept
        # when the chain's result is thrown away, or its first method gives a new value
        methods, k = [], 0
        while k + 1 < len(above) and type(above[k]) is cst.Attribute and type(above[k + 1]) is cst.Call \
                and above[k + 1].func is above[k]:
            methods.append(above[k].attr.value)
            k += 2
        if writes and any(m.endswith("_") and m not in NOT_WRITES for m in methods):
            return False
        return methods[0] in _APART_METHODS or (k < len(above) and type(above[k]) is cst.Expr)
    if kind is cst.Arg and parent.value is n and len(above) > 1 and type(above[1]) is cst.Call and not parent.star:
        return not holds(above[1])
    return False


def grad_free(with_node: cst.With, qualify: Callable) -> bool:
    """A `with torch.no_grad():` (or `inference_mode()`) block."""
    return any(qualify(i.item.func if isinstance(i.item, cst.Call) else i.item) in _GRAD_FREE for i in with_node.items)


def parameter_loop_owner(node) -> dict:
    """{loop variable: X} for `for p in X.parameters()` or `for name, p in
    X.named_parameters()`, and for the modules of X (`for m in X.modules()`, `children()`,
    `named_modules()`, `named_children()`), X a path."""
    it = node.iter if type(node) is cst.For else None
    if not (type(it) is cst.Call and type(it.func) is cst.Attribute and not it.args
            and it.func.attr.value in _OWNED):
        return {}
    owner, target = dotted(it.func.value), node.target
    if it.func.attr.value.startswith("named_"):
        if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
            return {}
        target = target.elements[1].value
    return {target.value: owner} if owner and isinstance(target, cst.Name) else {}


_OWNED = frozenset({"parameters", "named_parameters", "modules", "children", "named_modules", "named_children"})


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
        kids = child_list(n)
        if type(n) is cst.Arg and type(n.value) is cst.Name:
            out.append(n.value)
        elif type(n) is cst.BinaryOperation:
            out.extend(k for k in (n.left, n.right) if type(k) is cst.Name)
        stack.extend(reversed(kids))
    return out


# Reads of a tensor that give it no gradient: `W.grad`, `W.shape`, `W.detach()`.
_GRADLESS_ATTRIBUTES = frozenset({"grad", "data", "shape", "dtype", "device", "requires_grad", "is_leaf", "is_sparse",
                                  "layout", "size", "numel", "nelement", "dim", "ndim", "detach", "element_size",
                                  "indices", "_indices", "crow_indices", "col_indices", "ccol_indices", "row_indices",
                                  "is_coalesced", "sparse_dim", "dense_dim", "_nnz"})
# Calls whose arguments get no gradient from the call: building an optimizer, initialising
# or clipping in place.
_GRADLESS_CALLS = ("torch.optim.", "torch.nn.init.", "torch.nn.utils.clip_grad")
_BINDING_PARENTS = frozenset({cst.AssignTarget, cst.AnnAssign})


def sparse_embedding_weight(node: cst.CSTNode, qualify: Callable) -> Optional[cst.BaseExpression]:
    """The weight `F.embedding(x, W, sparse=True)` (or `embedding_bag`) is passed, when the
    node is such a call."""
    if type(node) is not cst.Call or qualify(node.func) not in api.FUNCTIONAL_EMBEDDINGS:
        return None
    sparse = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "sparse"), None)
    if not (isinstance(sparse, cst.Name) and sparse.value == "True"):
        return None
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    return positional[1] if len(positional) > 1 else next(
        (a.value for a in node.args if a.keyword is not None and a.keyword.value == "weight"), None)


def sparse_embedding_weights(stmts: list, qualify: Callable) -> dict[str, cst.Call]:
    """Tensors a scope passes as the weight of `F.embedding(..., sparse=True)` (or
    `embedding_bag`), by path, with the first such call: their gradient is sparse whatever
    the order of that call and an optimizer built over them. Only paths whose root the scope
    binds at most once, so the call and the optimizer see one tensor, and that nothing else
    reads in a way that could add a dense gradient (a tied output projection `h @ W.t()`
    makes the accumulated gradient dense)."""
    found: dict[str, cst.Call] = {}
    weights: set[int] = set()

    def visit(n: cst.CSTNode) -> None:
        weight = sparse_embedding_weight(n, qualify)
        path = dotted(weight) if weight is not None else None
        if path:
            weights.add(id(weight))
            found.setdefault(path, n)

    for st in stmts:
        try:
            _walk(st, visit)
        except RecursionError:
            return {}
    if not found:
        return found
    counts: dict[str, int] = {}
    assigned_names(stmts, attributes=True, count=counts)
    found = {p: c for p, c in found.items() if counts.get(p.split(".")[0], 0) <= 1 and counts.get(p, 0) <= 1}
    for path in read_with_grad(stmts, set(found), weights, qualify):
        found.pop(path, None)
    return found


def read_with_grad(stmts: list, paths: set, allowed: set, qualify: Callable) -> set:
    """Of these paths, those read anywhere in the statements (nested functions included)
    other than at the nodes `allowed`, as an assignment target, through a gradless
    attribute, or as an argument of a gradless call."""
    out: set = set()
    # (node, its parent, inside the arguments of a gradless call)
    stack: list = [(st, None, False) for st in stmts]
    while stack:
        n, parent, gradless = stack.pop()
        t = type(n)
        if t is cst.Name or t is cst.Attribute:
            path = dotted(n)
            if path in paths:
                if not (id(n) in allowed or gradless or type(parent) in _BINDING_PARENTS
                        or type(parent) is cst.Attribute and parent.attr.value in _GRADLESS_ATTRIBUTES):
                    out.add(path)
                continue
            if t is cst.Attribute:
                stack.append((n.value, n, gradless))  # `obj.W` is not a read of `W`
                continue
        if t is cst.Call:
            q = qualify(n.func) or ""
            if q.startswith(_GRADLESS_CALLS):
                stack.append((n.func, n, gradless))
                stack.extend((a, n, True) for a in n.args)
                continue
        try:
            kids = child_list(n)
        except RecursionError:
            return set(paths)
        stack.extend((k, n, gradless) for k in kids)
    return out


def returned_values(func: cst.FunctionDef) -> Optional[list[cst.BaseExpression]]:
    """The expressions a function's `return` statements give (a bare `return` gives the
    name `None`), outside nested functions and classes; None for a generator, or when the
    body can also run off its end (what it then returns is implicit)."""
    if not isinstance(func.body, cst.IndentedBlock):
        return None
    found: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = list(func.body.body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is cst.Return:
            found.append(n.value if n.value is not None else cst.Name("None"))
        elif t is cst.Yield:
            return None
        elif t not in _SCOPE_TYPES:
            stack.extend(child_list(n))
    last = func.body.body[-1] if func.body.body else None
    ends = isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, (cst.Return, cst.Raise)) for s in last.body)
    return found if found and ends else None
