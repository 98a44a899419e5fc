"""Tensor-fact inference: the value of an expression, and the effect of a statement.

`Inference.fact(expr, state)` is pure: it reads the facts that hold before the statement.
`Inference.apply(statement, state)` returns the facts that hold after it: bindings, in-place
updates that change a tensor (an optimizer step leaves a sparse parameter uncoalesced),
`requires_grad_()`, `retain_grad()`, tensors saved for backward.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import libcst as cst

from . import torchapi as api
from .diagnostics import Evidence
from .facts import LEAF, NOGRAD, NONLEAF, Fact, Module, Optimizer, Params, Tensor, element_of, join
from .names import Names, dotted
from .tree import children


@dataclass
class State:
    env: dict[str, Fact] = field(default_factory=dict)
    # sparse tensors (by access path) that a forward op saved for backward
    saved: dict[str, Evidence] = field(default_factory=dict)

    def copy(self) -> "State":
        return State(dict(self.env), dict(self.saved))

    def bind(self, path: str, fact: Optional[Fact]) -> None:
        prefix = path + "."
        for key in [k for k in self.env if k.startswith(prefix)]:
            del self.env[key]
        self.saved.pop(path, None)
        if fact is None:
            self.env.pop(path, None)
        else:
            self.env[path] = fact


def join_states(a: State, b: State) -> State:
    env = {}
    for key in a.env.keys() & b.env.keys():
        fact = join(a.env[key], b.env[key])
        if fact is not None:
            env[key] = fact
    saved = dict(b.saved)
    saved.update(a.saved)
    return State(env, saved)


def literal(node: Optional[cst.BaseExpression]):
    """The Python value of a literal True/False/None/number/string, else a sentinel."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return _UNKNOWN
    if isinstance(node, cst.Float):
        try:
            return float(node.value.replace("_", ""))
        except ValueError:
            return _UNKNOWN
    if isinstance(node, cst.SimpleString):
        try:
            return node.evaluated_value
        except Exception:
            return _UNKNOWN
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        v = literal(node.expression)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else _UNKNOWN
    return _UNKNOWN


_UNKNOWN = object()


def is_number(node: cst.BaseExpression) -> bool:
    v = literal(node)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def arg(call: cst.Call, index: Optional[int], keyword: Optional[str] = None) -> Optional[cst.BaseExpression]:
    """The argument at a position (positional only) or by keyword."""
    if keyword is not None:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a.value
    if index is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if index < len(positional):
            return positional[index].value
    return None


class Inference:
    """Derives facts for one scope (module body or one function body)."""

    def __init__(
        self,
        names: Names,
        summary: Callable[[str], Optional[Fact]] = lambda name: None,
        outer: Optional[dict[str, Fact]] = None,
        locals_: frozenset[str] = frozenset(),
    ):
        self.names = names
        self.summary = summary
        self.outer = outer or {}
        self.locals = locals_
        self.grad_enabled = True

    # -- expressions -------------------------------------------------------------------

    def lookup(self, path: str, state: State) -> Optional[Fact]:
        fact = state.env.get(path)
        if fact is not None:
            return fact
        head = path.split(".")[0]
        if head in self.locals:
            return None
        return self.outer.get(path)

    def tensor(self, node: cst.BaseExpression, state: State) -> Optional[Tensor]:
        fact = self.fact(node, state)
        return fact if isinstance(fact, Tensor) else None

    def fact(self, node: cst.BaseExpression, state: State) -> Optional[Fact]:
        try:
            return self._fact(node, state)
        except RecursionError:
            return None

    def _fact(self, node: cst.BaseExpression, state: State) -> Optional[Fact]:
        if isinstance(node, cst.Name):
            return self.lookup(node.value, state)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, state)
        if isinstance(node, cst.Call):
            return self._call(node, state)
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, state)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            t = self.tensor(node.expression, state)
            return self._derived(t, t.layout, None, [t]) if t else None
        if isinstance(node, cst.Subscript):
            t = self.tensor(node.value, state)
            if t is not None and t.layout == "strided":
                return self._derived(t, "strided", None, [t])
            return None
        if isinstance(node, (cst.List, cst.Tuple)):
            return self._collection(node, state)
        return None

    def _grad_of(self, inputs: list[Optional[Tensor]]) -> Optional[str]:
        if not self.grad_enabled:
            return NOGRAD
        states = [t.requires_grad if t is not None else None for t in inputs]
        if any(s is True for s in states):
            return NONLEAF
        if states and all(s is False for s in states):
            return NOGRAD
        return None

    def _derived(self, base: Optional[Tensor], layout, coalesced, inputs, origin="op") -> Tensor:
        ev = base.evidence if base is not None else ()
        return Tensor(layout=layout, coalesced=coalesced, grad=self._grad_of(inputs), origin=origin, evidence=ev)

    def _attribute(self, node: cst.Attribute, state: State) -> Optional[Fact]:
        path = dotted(node)
        if path is not None:
            fact = self.lookup(path, state)
            if fact is not None:
                return fact
        attr = node.attr.value
        base = self.fact(node.value, state)
        where = node
        if isinstance(base, Tensor):
            if attr == "grad":
                if base.grad_layout in ("coo", "strided"):
                    t = Tensor(layout=base.grad_layout, coalesced=base.grad_coalesced, grad=NOGRAD, is_grad=True, origin="grad", evidence=base.evidence)
                    if base.grad_layout == "coo":
                        state_text = {False: "uncoalesced", True: "coalesced", None: "of unknown coalescing"}[base.grad_coalesced]
                        return t.why(where, f"its `.grad` is a sparse COO tensor, {state_text}")
                    return t.why(where, "its `.grad` is dense")
                if base.grad_layout == "mixed":
                    return Tensor(grad=NOGRAD, is_grad=True, origin="grad", evidence=base.evidence)
                return None
            if attr == "data":
                return replace(base, grad=NOGRAD, parameter=False, origin="data")
            if attr in ("T", "mT", "H", "mH"):
                return self._derived(base, base.layout, None, [base])
            return None
        if isinstance(base, Module) and attr in ("weight", "bias"):
            grad_layout = {"all": "coo", "none": "strided"}.get(base.sparse_grads or "")
            t = Tensor(layout="strided", grad=LEAF, parameter=True, grad_layout=grad_layout,
                       grad_coalesced=False if grad_layout == "coo" else None, evidence=base.evidence)
            return t
        return None

    def _collection(self, node, state: State) -> Optional[Params]:
        paths, grads = [], set()
        for el in node.elements:
            if isinstance(el, (cst.StarredElement,)):
                return None
            p = dotted(el.value)
            t = self.tensor(el.value, state)
            if p is None or t is None or not t.parameter and t.grad != LEAF:
                return None
            paths.append(p)
            grads.add("sparse" if t.grad_layout == "coo" or t.is_sparse else "dense" if t.grad_layout == "strided" else "?")
        if not paths:
            return None
        sparse = "all" if grads == {"sparse"} else "none" if grads == {"dense"} else "some" if "sparse" in grads and "dense" in grads else None
        return Params(sparse_grads=sparse, paths=tuple(paths))

    def _binary(self, node: cst.BinaryOperation, state: State) -> Optional[Tensor]:
        op = node.operator
        left, right = node.left, node.right
        lt, rt = self.tensor(left, state), self.tensor(right, state)
        if isinstance(op, cst.MatrixMultiply):
            if lt is None:
                return None
            layout = "strided" if rt is not None and rt.layout == "strided" else None
            return self._derived(lt, layout, None, [lt, rt])
        scalar_l, scalar_r = is_number(left), is_number(right)
        if isinstance(op, (cst.Multiply, cst.Divide)):
            if lt is not None and scalar_r:
                return self._derived(lt, lt.layout, None, [lt])
            if rt is not None and scalar_l and isinstance(op, cst.Multiply):
                return self._derived(rt, rt.layout, None, [rt])
        if lt is None or rt is None:
            if lt is not None and lt.layout == "strided" and (scalar_r or scalar_l):
                return self._derived(lt, "strided", None, [lt])
            if rt is not None and rt.layout == "strided" and (scalar_l or scalar_r):
                return self._derived(rt, "strided", None, [rt])
            return None
        if lt.layout == "strided" and rt.layout == "strided":
            return self._derived(lt, "strided", None, [lt, rt])
        if isinstance(op, cst.Multiply) and (lt.is_sparse or rt.is_sparse) and None not in (lt.layout, rt.layout):
            sparse = lt if lt.is_sparse else rt
            return self._derived(sparse, sparse.layout, None, [lt, rt])
        return None

    def _call(self, node: cst.Call, state: State) -> Optional[Fact]:
        func = node.func
        q = self.names.qualify(func)
        where = node
        if q is not None:
            return self._torch_call(q, node, state, where)
        if isinstance(func, cst.Name):
            fact = self.summary(func.value)
            if isinstance(fact, Tensor):
                return fact.why(where, f"returned by `{func.value}()`")
            return fact
        if isinstance(func, cst.Attribute):
            recv = self.fact(func.value, state)
            method = func.attr.value
            if isinstance(recv, Tensor):
                return self._tensor_method(recv, method, node, state, where)
            if isinstance(recv, Module):
                if method in ("parameters", "named_parameters"):
                    return Params(sparse_grads=recv.sparse_grads, named=method == "named_parameters", evidence=recv.evidence)
                if method in ("to", "cuda", "cpu", "train", "eval", "float", "double", "requires_grad_"):
                    return recv
        if isinstance(func, cst.Name) or isinstance(func, cst.Attribute):
            callee = self.fact(func, state)
            if isinstance(callee, Module):
                return Tensor(layout="strided", grad=NONLEAF if self.grad_enabled else NOGRAD, origin="op")
        return None

    def _torch_call(self, q: str, node: cst.Call, state: State, where) -> Optional[Fact]:
        short = q
        if q in api.SPARSE_CONSTRUCTORS:
            layout, values_at = api.SPARSE_CONSTRUCTORS[q]
            if layout == "sparse":
                lay = arg(node, None, "layout")
                layout = api.LAYOUT_NAMES.get(self.names.qualify(lay) if lay is not None else "", "sparse")
            values = arg(node, values_at, "values")
            if values is None:
                return None
            vt = self.tensor(values, state)
            rg = literal(arg(node, None, "requires_grad"))
            if rg is True:
                grad, how = LEAF, "a leaf that requires grad (`requires_grad=True`)"
            else:
                grad = self._grad_of([vt])
                how = "in the autograd graph: its values require grad" if grad == NONLEAF else ""
            coalesced = None
            text = f"built by `{short}`"
            if layout == "coo":
                coalesced = literal(arg(node, None, "is_coalesced")) is True
                if not coalesced:
                    text += " without `is_coalesced=True`, so it is uncoalesced"
            ev = (vt.evidence if vt is not None and grad == NONLEAF else ())
            t = Tensor(layout=layout, coalesced=coalesced, grad=grad, origin="constructor", evidence=ev)
            t = t.why(where, text + (f"; {how}" if how else ""))
            return t
        if q in api.DENSE_FACTORIES:
            rg_node = arg(node, None, "requires_grad")
            rg = literal(rg_node)
            grad = LEAF if rg is True else NOGRAD if rg_node is None or rg is False else None
            t = Tensor(layout="strided", grad=grad, origin="factory")
            if grad == LEAF:
                t = t.why(where, f"a leaf that requires grad: `{short}(..., requires_grad=True)`")
            return t
        if q == api.PARAMETER:
            inner = arg(node, 0, "data")
            it = self.tensor(inner, state) if inner is not None else None
            rg = literal(arg(node, 1, "requires_grad"))
            layout = it.layout if it is not None else None
            coalesced = it.coalesced if it is not None else None
            t = Tensor(layout=layout, coalesced=coalesced, grad=NOGRAD if rg is False else LEAF, parameter=True,
                       origin="parameter", evidence=it.evidence if it is not None else ())
            kind = "a sparse" if t.is_sparse else "an"
            return t.why(where, f"{kind} `nn.Parameter`: a leaf that requires grad")
        if q in api.EMBEDDINGS:
            sparse = literal(arg(node, None, "sparse"))
            mode = literal(arg(node, None, "mode"))
            kind = api.EMBEDDINGS[q]
            sparse_grads = "all" if sparse is True else "none" if sparse in (False,) or arg(node, None, "sparse") is None else None
            m = Module(kind=kind, sparse_grads=sparse_grads, mode=mode if isinstance(mode, str) else None)
            if sparse_grads == "all":
                m = replace(m, evidence=(Evidence.at(where, f"`nn.{kind}(..., sparse=True)`: its weight gets an uncoalesced sparse COO grad"),))
            return m
        if q.startswith(api.OPTIMIZER_PREFIX) and q.count(".") == 2 and q.split(".")[-1][:1].isupper():
            params = arg(node, 0, "params")
            pf = self.fact(params, state) if params is not None else None
            return Optimizer(kind=q.split(".")[-1], params=pf if isinstance(pf, Params) else None,
                             evidence=(Evidence.at(where, f"`{q.split('.')[-1]}` optimizer"),))
        if q in api.PRODUCTS:
            a_at, b_at = api.PRODUCTS[q]
            a, b = arg(node, a_at), arg(node, b_at)
            at = self.tensor(a, state) if a is not None else None
            bt = self.tensor(b, state) if b is not None else None
            if at is None and bt is None:
                return None
            layout = "strided" if bt is not None and bt.layout == "strided" else "coo" if bt is not None and bt.is_sparse and q.startswith("torch.sparse") else None
            return self._derived(at or bt, layout, None, [at, bt])
        if q in api.SPARSE_RESULT:
            a = arg(node, 0)
            at = self.tensor(a, state) if a is not None else None
            return self._derived(at, "coo", None, [at]) if at is not None else None
        if q == "torch.sparse.sum":
            a = arg(node, 0)
            at = self.tensor(a, state) if a is not None else None
            if at is None:
                return None
            dim = arg(node, 1, "dim")
            return self._derived(at, "strided" if dim is None else None, None, [at])
        return None

    def _tensor_method(self, r: Tensor, method: str, node: cst.Call, state: State, where) -> Optional[Tensor]:
        if method == "coalesce":
            if r.coalesced is True:
                return r
            grad = NOGRAD if not self.grad_enabled else (NONLEAF if r.requires_grad else r.grad)
            t = replace(r, layout="coo", coalesced=True, grad=grad, parameter=False, origin="coalesce",
                        grad_layout=None, grad_coalesced=None, is_grad=False)
            return t.why(where, "coalesced by `.coalesce()`")
        if method in api.CONVERSIONS or method == "to_sparse":
            layout = api.CONVERSIONS.get(method, "coo")
            lay = arg(node, None, "layout")
            if method == "to_sparse" and lay is not None:
                layout = api.LAYOUT_NAMES.get(self.names.qualify(lay) or "", None)
            coalesced = True if layout == "coo" else None
            if r.is_sparse and layout == r.layout:
                return r
            t = self._derived(r, layout, coalesced, [r], origin="conversion")
            return t.why(where, f"converted by `.{method}()`" + (" (coalesced)" if coalesced else "") +
                         ("; in the autograd graph" if t.grad == NONLEAF else ""))
        if method == "to_dense":
            return self._derived(r, "strided", None, [r])
        if method == "requires_grad_":
            flag = literal(arg(node, 0, "requires_grad"))
            if flag is False:
                return replace(r, grad=NOGRAD)
            if r.grad == NONLEAF:
                return r
            return replace(r, grad=LEAF).why(where, "made a leaf that requires grad by `.requires_grad_()`")
        if method in api.DETACHING:
            return replace(r, grad=NOGRAD, parameter=False, grad_layout=None, grad_coalesced=None, origin="detach")
        if method in api.VALUE_ACCESSORS:
            return self._derived(r, "strided", None, [r], origin="values")
        if method in api.PRIVATE_ACCESSORS:
            return Tensor(layout="strided", grad=NOGRAD, origin="private-values")
        if method in api.LAYOUT_PRESERVING:
            coalesced = r.coalesced if method in api.COALESCE_PRESERVING else None
            if method in api.MAYBE_SELF and r.grad == LEAF:
                return replace(r, grad=None, coalesced=coalesced)
            return self._derived(r, r.layout, coalesced, [r])
        if method == "sum" and not node.args:
            return self._derived(r, "strided", None, [r])
        return None

    # -- statements --------------------------------------------------------------------

    def apply(self, stmt: cst.BaseSmallStatement, state: State) -> State:
        """The facts after a simple statement."""
        value = getattr(stmt, "value", None)
        value_fact = self.fact(value, state) if isinstance(value, cst.BaseExpression) else None
        out = state.copy()
        for call in _calls_in(stmt):
            self._call_effect(call, out)
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                self._bind(target.target, value_fact, out, value)
        elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, value_fact, out, stmt.value)
        elif isinstance(stmt, cst.AugAssign):
            self._inplace_update(stmt.target, isinstance(stmt.operator, (cst.AddAssign, cst.SubtractAssign)), stmt, out)
        elif isinstance(stmt, cst.Del):
            for el in _del_targets(stmt.target):
                p = dotted(el)
                if p:
                    out.bind(p, None)
        return out

    def bind_loop_target(self, target: cst.BaseExpression, iterable: cst.BaseExpression, state: State) -> State:
        out = state.copy()
        it = self.fact(iterable, state)
        where = iterable
        if isinstance(it, Params):
            element = element_of(it, where)
            if it.named and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                first = dotted(target.elements[0].value)
                if first:
                    out.bind(first, None)
                target = target.elements[1].value
            p = dotted(target)
            if p:
                out.bind(p, element)
                return out
        for name in _target_paths(target):
            out.bind(name, None)
        return out

    def _bind(self, target: cst.BaseExpression, fact: Optional[Fact], state: State, value) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for p in _target_paths(target):
                state.bind(p, None)
            return
        path = dotted(target)
        if path is None:
            return
        if isinstance(target, cst.Attribute) and target.attr.value == "data":
            # `p.data = p.data.coalesce()` swaps the storage of `p`, keeping its autograd identity.
            owner = dotted(target.value)
            old = state.env.get(owner) if owner else None
            if owner and isinstance(old, Tensor) and isinstance(fact, Tensor):
                state.env[owner] = replace(old, layout=fact.layout, coalesced=fact.coalesced,
                                           evidence=old.evidence + fact.evidence[-1:])
            elif owner:
                state.bind(owner, None)
            return
        if isinstance(fact, Tensor) and fact.is_grad is False and isinstance(target, cst.Attribute) and target.attr.value == "grad":
            fact = replace(fact, is_grad=True, grad=NOGRAD)
        if isinstance(fact, Tensor) and fact.evidence:
            where = target
            fact = fact.why(where, f"assigned to `{path}`")
        state.bind(path, fact)
        # A tensor passed as the values of a sparse constructor is remembered as such.
        if isinstance(value, cst.Call):
            q = self.names.qualify(value.func)
            if q in api.SPARSE_CONSTRUCTORS:
                vnode = arg(value, api.SPARSE_CONSTRUCTORS[q][1], "values")
                vpath = dotted(vnode) if vnode is not None else None
                vt = state.env.get(vpath) if vpath else None
                if isinstance(vt, Tensor) and vt.layout == "strided":
                    state.env[vpath] = replace(vt, values_of_sparse=True)

    def _inplace_update(self, target, adds_entries: bool, node, state: State) -> None:
        path = dotted(target)
        fact = state.env.get(path) if path else None
        if isinstance(fact, Tensor) and fact.is_coo and adds_entries:
            where = node
            state.env[path] = replace(fact, coalesced=False).why(where, "an in-place update adds entries, leaving it uncoalesced")

    def _call_effect(self, call: cst.Call, state: State) -> None:
        func = call.func
        q = self.names.qualify(func)
        where = call
        if q is not None:
            if q in api.BACKWARD_FUNCTIONS:
                state.saved.clear()
            if q in api.PRODUCTS or q in api.GRAD_COALESCED_BY:
                a_at, b_at = api.PRODUCTS.get(q, (0, None))
                a = arg(call, a_at)
                b = arg(call, b_at) if b_at is not None else None
                self._sparse_operand_effect(q, a, b, state, where)
            if q in api.FUNCTIONAL_EMBEDDINGS and literal(arg(call, None, "sparse")) is True:
                w = arg(call, 1, "weight")
                wp = dotted(w) if w is not None else None
                wt = state.env.get(wp) if wp else None
                if wp and isinstance(wt, Tensor):
                    state.env[wp] = replace(wt, grad_layout="coo", grad_coalesced=False).why(
                        where, "`F.embedding(..., sparse=True)` gives it an uncoalesced sparse grad")
            return
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        recv_path = dotted(func.value)
        if method == "backward":
            state.saved.clear()
            return
        if recv_path is None:
            return
        recv = state.env.get(recv_path) or self.lookup(recv_path, state)
        if isinstance(recv, Tensor):
            if method == "requires_grad_":
                state.env[recv_path] = self._tensor_method(recv, method, call, state, where)
            elif method == "retain_grad":
                state.env[recv_path] = replace(recv, retains_grad=True)
            elif method in api.UNCOALESCING_UPDATES:
                self._inplace_update(func.value, True, call, state)
            elif method == "to_dense":
                self._sparse_operand_effect("to_dense", func.value, None, state, where)
        elif isinstance(recv, Optimizer) and method == "step" and recv.params is not None:
            for p in recv.params.paths:
                t = state.env.get(p)
                if isinstance(t, Tensor) and t.is_coo:
                    state.env[p] = replace(t, coalesced=False).why(
                        where, f"`{recv_path}.step()` adds the sparse grad into it, leaving it uncoalesced")

    def _sparse_operand_effect(self, q: str, a, b, state: State, where) -> None:
        ap = dotted(a) if a is not None else None
        at = state.env.get(ap) if ap else None
        if not isinstance(at, Tensor) or not at.is_sparse:
            return
        if at.grad == LEAF and at.is_coo:
            coalesced = False if q == "to_dense" else api.GRAD_COALESCED_BY.get(q, False)
            if at.grad_layout == "coo" and at.grad_coalesced is False:
                coalesced = False
            text = f"the backward of `{q.split('.')[-1]}` gives it a {'coalesced' if coalesced else 'uncoalesced'} sparse grad"
            at = replace(at, grad_layout="coo", grad_coalesced=coalesced).why(where, text)
            state.env[ap] = at
        bt = self.tensor(b, state) if b is not None else None
        if bt is not None and bt.requires_grad and self.grad_enabled:
            state.saved[ap] = Evidence.at(where, f"`{ap}` is saved for backward by `{q.split('.')[-1]}` (the other operand requires grad)")


def _calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Calls in evaluation order (inner first), not entering lambdas or comprehensions."""
    out: list[cst.Call] = []

    def walk(n: cst.CSTNode) -> None:
        if isinstance(n, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            return
        for child in children(n):
            walk(child)
        if isinstance(n, cst.Call):
            out.append(n)

    try:
        walk(node)
    except RecursionError:
        return []
    return out


def _target_paths(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for el in target.elements:
            out.extend(_target_paths(el.value))
        return out
    if isinstance(target, cst.StarredElement):
        return _target_paths(target.value)
    p = dotted(target)
    return [p] if p else []


def _del_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [el.value for el in target.elements]
    return [target]
