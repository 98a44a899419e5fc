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

from . import opcall, optable, shapes
from . import torchapi as api
from .diagnostics import Evidence
from .facts import (LEAF, NOGRAD, NONLEAF, Callee, Const, Fact, Instance, Literal, Module, Optimizer, Params, Scalar,
                    Tensor, attr_of, element_of, join, grad_layout_of, union_flags, union_params)
from .models import DENSE, NONE as NO_GRADS, SPARSE, UNKNOWN, Flags
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
_CONSTANTS = {"True": Const(value=True), "False": Const(value=False), "None": Const(value=None)}
# Methods whose result layout the operation alone decides: (layout, coalesced or None).
_FIXED_RESULT = {"coalesce": ("coo", True), "to_sparse": ("coo", None), "to_sparse_coo": ("coo", None),
                 "to_sparse_csr": ("csr", None), "to_sparse_csc": ("csc", None)}


def _is_optimizer_class(q: str) -> bool:
    return q.startswith(api.OPTIMIZER_PREFIX) and q.count(".") == 2 and q.split(".")[-1][:1].isupper()


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
        models: Optional[Callable[..., Optional[Module]]] = None,
        calls=None,
        project_names: frozenset[str] = frozenset(),
    ):
        self.names = names
        self.summary = summary
        self.outer = outer or {}
        self.locals = locals_
        self.models = models
        # call-site analyses of the file's own functions and classes (sparselint.calls)
        self.calls = calls
        # names of the functions and classes the file defines at module level
        self.project_names = project_names
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

    def value(self, node: Optional[cst.BaseExpression], state: State):
        """The Python value of a literal, or of a name that holds one (`sparse=sparse`)."""
        v = literal(node)
        if v is _UNKNOWN and isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
            fact = self.fact(node, state)
            if isinstance(fact, (Const, Scalar)) and (fact.value is not None or isinstance(fact, Const)):
                return fact.value
        return v

    def callee_name(self, func: cst.BaseExpression, state: State) -> Optional[str]:
        """The torch name a callee means: spelled out, or held by a name (`opt_cls(...)`)."""
        q = self.names.qualify(func)
        if q is None and isinstance(func, (cst.Name, cst.Attribute, cst.Subscript)):
            fact = self.fact(func, state)
            if isinstance(fact, Callee) and not fact.local:
                return fact.target
        return q

    def fact(self, node: cst.BaseExpression, state: State) -> Optional[Fact]:
        # Facts are memoised for the length of one outermost evaluation (the state cannot
        # change inside it), so that asking the op table about a call, which looks at its
        # operands again, stays linear in the depth of nested calls.
        memo = getattr(self, "_memo", None)
        top = memo is None
        if top:
            memo = self._memo = {}
        try:
            key = (id(node), id(state))
            if key not in memo:
                memo[key] = self._fact(node, state)
            return memo[key]
        except RecursionError:
            return None
        finally:
            if top:
                self._memo = None

    def _fact(self, node: cst.BaseExpression, state: State) -> Optional[Fact]:
        if isinstance(node, cst.Name):
            if node.value in _CONSTANTS:
                return _CONSTANTS[node.value]
            fact = self.lookup(node.value, state)
            if fact is None and node.value in self.project_names and node.value not in self.locals:
                return Callee(target=node.value, local=True)
            return fact
        if isinstance(node, (cst.Integer, cst.Float)):
            return Scalar(value=literal(node))
        if isinstance(node, cst.SimpleString):
            v = literal(node)
            return Const(value=v) if isinstance(v, str) and len(v) <= 80 else None
        if isinstance(node, cst.Attribute):
            return self._attribute(node, state)
        if isinstance(node, cst.Dict):
            return self._dict(node, state)
        if isinstance(node, cst.Call):
            return self._call(node, state)
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, state)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            t = self.tensor(node.expression, state)
            return self._derived(t, t.layout, None, [t], elementwise=True) if t else None
        if isinstance(node, cst.Subscript):
            base = self.fact(node.value, state)
            if isinstance(base, Tensor) and base.layout == "strided":
                return self._derived(base, "strided", None, [base])
            if isinstance(base, Instance) and base.cls == "dict" and len(node.slice) == 1:
                key = self.value(getattr(node.slice[0].slice, "value", None), state)
                return attr_of(base.attrs, key) if isinstance(key, str) else None
            return None
        if isinstance(node, (cst.List, cst.Tuple)):
            return self._collection(node, state)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return self._comprehension(node, state)
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

    def _derived(self, base: Optional[Tensor], layout, coalesced, inputs, origin="op", elementwise=False) -> Tensor:
        """A new tensor computed from `inputs`; an elementwise op keeps the base's needs."""
        ev = base.evidence if base is not None else ()
        needs = bool(elementwise and base is not None and base.needs_sparse_grad)
        return Tensor(layout=layout, coalesced=coalesced, grad=self._grad_of(inputs), origin=origin,
                      needs_sparse_grad=needs, evidence=ev)

    def _attribute(self, node: cst.Attribute, state: State) -> Optional[Fact]:
        path = dotted(node)
        if path is not None:
            fact = self.lookup(path, state)
            if fact is not None:
                return fact
        attr = node.attr.value
        q = self.names.qualify(node)
        if q is not None:
            return Callee(target=q) if _is_optimizer_class(q) else None
        base = self.fact(node.value, state)
        where = node
        if isinstance(base, Instance):
            return attr_of(base.attrs, attr)
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
            if attr == "T" and base.literal is not None:
                value = shapes.transpose(base.literal)
                return _literal_tensor(value, base) if value is not None else None
            if attr in ("T", "mT", "H", "mH"):
                return self._derived(base, base.layout, None, [base])
            return None
        if isinstance(base, Module):
            held = attr_of(base.attrs, attr)
            if held is not None:
                return held
            exact = [f for p, f in base.parts or () if p == attr]
            if exact:
                return _parameter_of(exact[0], base.evidence)
            child = base.child(attr)
            if child is not None and child.parts == (("", child.flags),):
                return _parameter_of(child.flags, child.evidence)
            if child is not None:
                return child
            if attr in ("weight", "bias") and base.kind in ("Embedding", "EmbeddingBag"):
                return _parameter_of(base.flags, base.evidence)
        return None

    def _strings(self, node: cst.BaseExpression, state: State) -> Optional[tuple]:
        """A literal list or tuple of strings, written out or held by a name."""
        if isinstance(node, (cst.List, cst.Tuple)):
            out = tuple(literal(el.value) for el in node.elements)
            return out if all(isinstance(v, str) for v in out) else None
        fact = self.fact(node, state)
        if isinstance(fact, Const) and isinstance(fact.value, tuple):
            return fact.value
        return None

    def _dict(self, node: cst.Dict, state: State) -> Optional[Instance]:
        """A config dict with literal keys: `cfg["sparse"]` reads the value's fact."""
        attrs = []
        for el in node.elements:
            if not isinstance(el, cst.DictElement):
                return None
            key = literal(el.key)
            if not isinstance(key, str):
                return None
            fact = self.fact(el.value, state)
            if fact is not None:
                attrs.append((key, fact))
        return Instance(cls="dict", attrs=tuple(attrs))

    def _collection(self, node, state: State) -> Optional[Fact]:
        """`(3, 3)`, `[p, q]`, `[*a.parameters(), *b.parameters()]`, or param-group dicts."""
        data = self._literal_data(node)
        if data is not None:
            return Literal(data)
        words = self._strings(node, state) if node.elements else None
        if words is not None:
            return Const(value=words)
        out: Optional[Params] = None
        for el in node.elements:
            if isinstance(el.value, cst.Dict):
                part = self._param_group(el.value, state)
            else:
                fact = self.fact(el.value, state)
                if isinstance(el, cst.StarredElement):
                    part = fact if isinstance(fact, Params) else None
                elif isinstance(fact, Tensor) and (fact.parameter or fact.grad == LEAF):
                    part = params_of_tensor(fact, dotted(el.value))
                else:
                    part = None
            if part is None:
                return None
            out = part if out is None else union_params(out, part)
        return out

    def _param_group(self, node: cst.Dict, state: State) -> Optional[Params]:
        params, decay = None, None
        for el in node.elements:
            if not isinstance(el, cst.DictElement):
                return None
            key = literal(el.key)
            if key == "params":
                fact = self.fact(el.value, state)
                if isinstance(fact, Tensor) and fact.parameter:
                    fact = params_of_tensor(fact, dotted(el.value))
                params = fact if isinstance(fact, Params) else None
            elif key == "weight_decay":
                decay = self.value(el.value, state)
        if params is None:
            return None
        return Params(flags=params.flags, paths=params.paths, parts=params.parts,
                      groups=((params, decay),), evidence=params.evidence)

    def _comprehension(self, node, state: State) -> Optional[Params]:
        """`[p for n, p in model.named_parameters() if "emb" in n]` and similar filters."""
        if node.for_in.inner_for_in is not None:
            return None
        source = self.fact(node.for_in.iter, state)
        if not isinstance(source, Params):
            return None
        target = node.for_in.target
        name_var = param_var = None
        if isinstance(target, cst.Tuple) and len(target.elements) == 2 and source.named:
            name_var, param_var = (dotted(e.value) for e in target.elements)
        else:
            param_var = dotted(target)
        if param_var is None or dotted(node.elt) != param_var:
            return None
        ifs = node.for_in.ifs
        if not ifs:
            return replace(source, named=False)
        if len(ifs) > 1:
            return _subset(source)
        keep = _filter(ifs[0].test, name_var, param_var, lambda e: self._strings(e, state))
        if keep is None:
            return _subset(source)
        kind, value = keep
        if kind == "grad-sparse":
            f = source.flags
            flags = Flags(f.has_sparse if value else False, False if value else f.has_dense, f.sparse_param)
            return Params(flags=flags, evidence=source.evidence)
        if kind == "requires-grad":
            return replace(source, named=False)
        if source.parts is None:
            return _subset(source)
        chosen = tuple((n, f) for n, f in source.parts if value(n))
        return Params(flags=union_flags(f for _, f in chosen), parts=chosen, evidence=source.evidence)

    def _binary(self, node: cst.BinaryOperation, state: State) -> Optional[Fact]:
        op = node.operator
        left, right = node.left, node.right
        if isinstance(op, cst.Add):
            lp, rp = self.fact(left, state), self.fact(right, state)
            if isinstance(lp, Params) and isinstance(rp, Params):
                return union_params(lp, rp)
        lt, rt = self.tensor(left, state), self.tensor(right, state)
        if isinstance(op, cst.MatrixMultiply):
            if lt is None:
                return None
            layout = "strided" if rt is not None and rt.layout == "strided" else None
            return self._derived(lt, layout, None, [lt, rt])
        scalar_l = is_number(left) or isinstance(self.fact(left, state), Scalar)
        scalar_r = is_number(right) or isinstance(self.fact(right, state), Scalar)
        if scalar_l and scalar_r:
            return Scalar()
        if isinstance(op, (cst.Multiply, cst.Divide)):
            if lt is not None and scalar_r:
                return self._probed(node, state, lt) or self._derived(lt, lt.layout, None, [lt], elementwise=True)
            if rt is not None and scalar_l and isinstance(op, cst.Multiply):
                return self._probed(node, state, rt) or self._derived(rt, rt.layout, None, [rt], elementwise=True)
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
        if isinstance(op, (cst.Add, cst.Subtract)) and lt.is_coo and rt.is_coo:
            return self._probed(node, state, lt)
        return None

    def _call(self, node: cst.Call, state: State) -> Optional[Fact]:
        func = node.func
        where = node
        outcome = self.calls.outcome(node) if self.calls is not None else None
        if outcome is not None and outcome.returned is not None:
            return outcome.returned
        q = self.callee_name(func, state)
        if q == "functools.partial" and node.args and not node.args[0].keyword:
            target = self.callee_name(node.args[0].value, state)
            if target is not None:
                kws = tuple((a.keyword.value, self.value(a.value, state)) for a in node.args[1:] if a.keyword is not None)
                return Callee(target=target, keywords=kws)
            return None
        if q is not None:
            return self._torch_call(q, node, state, where)
        if isinstance(func, cst.Name):
            if func.value in ("list", "tuple", "iter") and len(node.args) == 1:
                inner = self.fact(node.args[0].value, state)
                return inner if isinstance(inner, Params) else None
            if func.value == "filter" and len(node.args) == 2:
                inner = self.fact(node.args[1].value, state)
                if isinstance(inner, Params):
                    return inner if _filters_on_requires_grad(node.args[0].value) else _subset(inner)
                return None
            fact = self.summary(func.value)
            if isinstance(fact, Tensor):
                return fact.why(where, f"returned by `{func.value}()`")
            if fact is not None:
                return fact
        model = self.models(node, self, state) if self.models is not None else None
        if model is not None:
            return model
        if isinstance(func, cst.Attribute):
            recv = self.fact(func.value, state)
            method = func.attr.value
            if isinstance(recv, Tensor):
                return self._tensor_method(recv, method, node, state, where)
            if recv is None and method in _FIXED_RESULT:
                # the operation alone fixes the result's layout, whatever the receiver is
                layout, coalesced = _FIXED_RESULT[method]
                t = Tensor(layout=layout, coalesced=coalesced, origin="conversion")
                return t.why(where, f"`.{method}()` returns a {'coalesced ' if coalesced else ''}sparse {layout.upper()} tensor")
            if isinstance(recv, Module):
                if method in ("parameters", "named_parameters"):
                    return Params(flags=recv.flags, named=method == "named_parameters", parts=recv.parts,
                                  evidence=recv.evidence)
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
        if q in api.DATA_FACTORIES:
            data_node = arg(node, 0, "data")
            data = self._literal_data(data_node) if data_node is not None else None
            rg = literal(arg(node, None, "requires_grad"))
            t = Tensor(layout="strided", grad=LEAF if rg is True else NOGRAD, origin="factory")
            if rg is True:
                t = t.why(where, f"a leaf that requires grad: `{short}(..., requires_grad=True)`")
            return _literal_tensor(data, t) if data is not None else t
        if q == "torch.Size":
            data = self._literal_data(arg(node, 0)) if node.args else ()
            return Literal(data) if data is not None else None
        if q in ("torch.stack", "torch.cat"):
            items = arg(node, 0, "tensors")
            dim = literal(arg(node, 1, "dim")) if arg(node, 1, "dim") is not None else 0
            if isinstance(items, (cst.List, cst.Tuple)) and isinstance(dim, int):
                tensors = [self.tensor(el.value, state) for el in items.elements]
                if tensors and all(t is not None and t.literal is not None for t in tensors):
                    fn = shapes.stack if q == "torch.stack" else shapes.cat
                    value = fn([t.literal for t in tensors], dim)
                    if value is not None:
                        return _literal_tensor(value, tensors[0])
                return self._probed(node, state, tensors[0] if tensors else None)
            return None
        if q in api.LIKE_FACTORIES:
            src = arg(node, 0, "input")
            st = self.tensor(src, state) if src is not None else None
            if st is None or st.layout != "strided":
                return None
            rg = literal(arg(node, None, "requires_grad"))
            return Tensor(layout="strided", grad=LEAF if rg is True else NOGRAD, origin="factory", shape=st.shape)
        if q in api.DENSE_FACTORIES:
            rg_node = arg(node, None, "requires_grad")
            rg = literal(rg_node)
            grad = LEAF if rg is True else NOGRAD if rg_node is None or rg is False else None
            dims = [literal(a.value) for a in node.args if a.keyword is None]
            shape = tuple(dims) if q in api.SHAPE_FACTORIES and dims and all(
                isinstance(d, int) and not isinstance(d, bool) for d in dims) else None
            t = Tensor(layout="strided", grad=grad, origin="factory", shape=shape)
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
            sparse = self.value(arg(node, None, "sparse"), state)
            mode = self.value(arg(node, None, "mode"), state)
            kind = api.EMBEDDINGS[q]
            flags = SPARSE if sparse is True else DENSE if arg(node, None, "sparse") is None or sparse is False else UNKNOWN
            if q.endswith("from_pretrained") and self.value(arg(node, None, "freeze"), state) is not False:
                flags = NO_GRADS  # frozen: its weight never gets a gradient
            m = Module(kind=kind, flags=flags, parts=(("weight", flags),), mode=mode if isinstance(mode, str) else None)
            if flags is SPARSE:
                m = replace(m, evidence=(Evidence.at(where, f"`nn.{kind}(..., sparse=True)`: its weight gets an uncoalesced sparse COO grad"),))
            return m
        if q in api.CONTAINERS:
            return self._container(q, node, state)
        if q.startswith("torch.nn.") and q.count(".") == 2 and q.split(".")[-1][:1].isupper() and q not in api.CONTAINERS:
            return Module(kind=q.split(".")[-1], flags=DENSE, parts=api.dense_layer_parts(q))
        if q in api.CHAINS:
            out = None
            for a in node.args:
                f = self.fact(a.value, state)
                if not isinstance(f, Params):
                    return None
                out = f if out is None else union_params(out, f)
            return out
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
            t = self._derived(at or bt, layout, None, [at, bt])
            if layout == "coo" and at is not None and at.is_coo:
                t = replace(t, coalesced=getattr(opcall.result_of(self._op_uses(node, state)), "coalesced", None))
            if layout == "coo" and at is not None and at.is_sparse:
                t = replace(t, needs_sparse_grad=True).why(where, f"`{short}(sparse, sparse)` returns a sparse tensor whose backward needs a sparse gradient")
            return t
        if q in api.SPARSE_RESULT:
            a = arg(node, 0)
            at = self.tensor(a, state) if a is not None else None
            if at is None:
                return None
            t = replace(self._derived(at, "coo", None, [at]), needs_sparse_grad=True)
            return t.why(where, f"`{short}` returns a sparse tensor whose backward needs a sparse gradient")
        if q == "torch.sparse.sum":
            a = arg(node, 0)
            at = self.tensor(a, state) if a is not None else None
            if at is None:
                return None
            dim = arg(node, 1, "dim")
            if dim is None:
                return self._derived(at, "strided", None, [at])
            t = replace(self._derived(at, "coo", None, [at]), needs_sparse_grad=True)
            return t.why(where, "`torch.sparse.sum(..., dim)` returns a sparse tensor whose backward needs a sparse gradient")
        first = arg(node, 0)
        return self._probed(node, state, self.tensor(first, state) if first is not None else None)

    def _probed(self, node, state: State, base: Optional[Tensor], fallback: Optional[bool] = None,
                layout: Optional[str] = None) -> Optional[Tensor]:
        """The result of an op on a sparse COO operand as the op table records it (layout and
        coalescing); `fallback` is the coalescing to assume when the table does not say."""
        if base is None or base.layout not in ("coo", "csr", "csc"):
            return None
        result = opcall.result_of(self._op_uses(node, state))
        if result is not None and base.is_compressed and result.layout in ("csr", "csc"):
            return self._derived(base, result.layout, None, [base], elementwise=True)  # `csr.t()` is CSC
        if base.is_compressed or result is None or result.layout != "coo":
            return self._derived(base, layout, fallback, [base], elementwise=True) if layout else None
        t = self._derived(base, "coo", result.coalesced, [base], elementwise=True)
        if result.coalesced is False:
            t = t.why(node, f"`{_spelling(node, self.names)}` gives an uncoalesced result "
                      f"(probed on torch {optable.active().version})")
        return t

    def _op_uses(self, node, state: State):
        tensor = lambda n: self.tensor(n, state)  # noqa: E731
        if isinstance(node, cst.Call):
            return opcall.uses_of_call(node, self.names.qualify, tensor, optable.active().__contains__)
        if isinstance(node, cst.BinaryOperation):
            return opcall.uses_of_binary(node, tensor)
        if isinstance(node, cst.AugAssign):
            return opcall.uses_of_augassign(node, tensor)
        return []

    def _container(self, q: str, node: cst.Call, state: State) -> Optional[Module]:
        """`nn.Sequential(a, b)`, `nn.ModuleList([a, b])`, `nn.ModuleDict({"a": a})`."""
        items: list[tuple[str, cst.BaseExpression]] = []
        if q.endswith("Sequential"):
            if any(a.star or a.keyword for a in node.args):
                return None
            items = [(str(i), a.value) for i, a in enumerate(node.args)]
        elif node.args:
            inner = node.args[0].value
            if isinstance(inner, (cst.List, cst.Tuple)) and q.endswith("ModuleList"):
                items = [(str(i), el.value) for i, el in enumerate(inner.elements) if not isinstance(el, cst.StarredElement)]
                if len(items) != len(inner.elements):
                    return None
            elif isinstance(inner, cst.Dict) and q.endswith("ModuleDict"):
                for el in inner.elements:
                    key = literal(el.key) if isinstance(el, cst.DictElement) else None
                    if not isinstance(key, str):
                        return None
                    items.append((key, el.value))
            else:
                return None
        parts: list[tuple[str, Flags]] = []
        evidence: tuple = ()
        for key, expr in items:
            m = self.fact(expr, state)
            if not isinstance(m, Module) or m.parts is None:
                return None
            parts.extend((f"{key}.{p}" if p else key, f) for p, f in m.parts)
            evidence += m.evidence
        flags = union_flags(f for _, f in parts)
        return Module(kind=q.split(".")[-1], flags=flags, parts=tuple(parts), evidence=evidence)

    def _tensor_method(self, r: Tensor, method: str, node: cst.Call, state: State, where) -> Optional[Tensor]:
        if r.literal is not None:
            value = self._literal_method(r.literal, method, node)
            if value is not None:
                return _literal_tensor(value, r)
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
            return self._probed(node, state, r, coalesced, r.layout) or self._derived(r, r.layout, coalesced, [r], elementwise=True)
        if method == "sum" and not node.args:
            return self._derived(r, "strided", None, [r])
        if method == "sum" and r.is_coo:
            t = self._derived(r, "coo", None, [r], origin="tensor-sum-dim")
            return t.why(where, "`Tensor.sum(dim)` of a sparse tensor: its result cannot be densified in a graph")
        return self._probed(node, state, r)

    def _literal_method(self, value, method: str, node: cst.Call):
        ints = [literal(a.value) for a in node.args if a.keyword is None]
        if any(not isinstance(i, int) or isinstance(i, bool) for i in ints):
            return None
        if method in api.LITERAL_METHODS:
            return value
        if method == "t" and not ints:
            return shapes.transpose(value)
        if method == "transpose" and len(ints) == 2:
            return shapes.transpose(value, *ints)
        if method == "permute" and ints:
            return shapes.permute(value, tuple(ints))
        return None

    def _literal_data(self, node: cst.BaseExpression):
        """Nested lists or tuples of numbers, as nested tuples."""
        if isinstance(node, (cst.List, cst.Tuple)):
            items = []
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    return None
                v = self._literal_data(el.value)
                if v is None:
                    return None
                items.append(v)
            return tuple(items)
        v = literal(node)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    # -- statements --------------------------------------------------------------------

    def apply(self, stmt: cst.BaseSmallStatement, state: State) -> State:
        """The facts after a simple statement."""
        value = getattr(stmt, "value", None)
        value_fact = self.fact(value, state) if isinstance(value, cst.BaseExpression) else None
        out = state.copy()
        for node in (self.calls.calls_in(stmt) if self.calls is not None else _calls_in(stmt)):
            if isinstance(node, cst.Call):
                self._call_effect(node, out)
            else:
                # `p @ x` / `x @ p`: a sparse parameter in a dense product gets a dense grad
                self._sparse_operand_effect("@", node.left, node.right, out, node)
                self._sparse_operand_effect("@", node.right, node.left, out, node)
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                self._bind(target.target, value_fact, out, value)
        elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, value_fact, out, stmt.value)
        elif isinstance(stmt, cst.AugAssign):
            target, path = self.tensor(stmt.target, state), dotted(stmt.target)
            after = self._probed(stmt, state, target)
            if after is not None and path:
                out.env[path] = replace(target, coalesced=after.coalesced, evidence=after.evidence)
            else:
                self._inplace_update(stmt.target, isinstance(stmt.operator, (cst.AddAssign, cst.SubtractAssign)), stmt, out)
        elif isinstance(stmt, cst.Del):
            for el in _del_targets(stmt.target):
                p = dotted(el)
                if p:
                    out.bind(p, None)
        return out

    def truth(self, test: cst.BaseExpression, state: State) -> Optional[bool]:
        """The value of a branch test that depends only on literals the facts hold (`if clip:`
        with `clip=False` passed or defaulted, `if name == "adam":`, `if self.max_norm is
        not None:`); None when it cannot be decided."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.truth(test.expression, state)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left, right = self.truth(test.left, state), self.truth(test.right, state)
            if isinstance(test.operator, cst.And):
                return False if False in (left, right) else True if left is True and right is True else None
            return True if True in (left, right) else False if left is False and right is False else None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op = test.comparisons[0].operator
            a, b = self._known_value(test.left, state), self._known_value(test.comparisons[0].comparator, state)
            if a is _UNKNOWN or b is _UNKNOWN:
                return None
            if isinstance(op, cst.Is):
                return a is b if b is None or a is None else None
            if isinstance(op, cst.IsNot):
                return a is not b if b is None or a is None else None
            if isinstance(op, (cst.Equal, cst.NotEqual)) and type(a) is type(b) and isinstance(a, (str, bool, int)):
                return (a == b) == isinstance(op, cst.Equal)
            return None
        v = self._known_value(test, state)
        if v is _UNKNOWN or not isinstance(v, (bool, int, float, str, type(None))):
            return None
        return bool(v)

    def _known_value(self, node: cst.BaseExpression, state: State):
        if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)) and not (
                isinstance(node, cst.Name) and node.value in _CONSTANTS):
            fact = self.fact(node, state)
            if isinstance(fact, Const) or (isinstance(fact, Scalar) and fact.value is not None):
                return fact.value
            return _UNKNOWN
        return literal(node)

    def refine(self, test: cst.BaseExpression, state: State, truth: bool) -> State:
        """The facts inside a branch of `if x.is_sparse:` / `if x.layout == torch.strided:`."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.refine(test.expression, state, not truth)
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and truth:
            return self.refine(test.right, self.refine(test.left, state, True), True)
        sparse, subject = None, None
        if isinstance(test, cst.Attribute) and test.attr.value == "is_sparse":
            subject, sparse = test.value, truth
        elif (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
              and isinstance(test.left, cst.Attribute) and test.left.attr.value == "layout"):
            op = test.comparisons[0].operator
            layout = api.LAYOUT_NAMES.get(self.names.qualify(test.comparisons[0].comparator) or "")
            if layout is not None and isinstance(op, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
                equal = isinstance(op, (cst.Equal, cst.Is)) == truth
                subject = test.left.value
                sparse = (layout != "strided") if equal else (True if layout == "strided" else None)
        path = dotted(subject) if subject is not None else None
        if path is None or sparse is None:
            return state
        old = self.tensor(subject, state) or Tensor()
        if sparse and old.is_sparse:
            return state
        out = state.copy()
        new = replace(old, layout="sparse" if sparse else "strided", coalesced=None if sparse else old.coalesced)
        out.env[path] = new if not sparse or old.layout is None else old
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
            old = (state.env.get(owner) or self.lookup(owner, state)) if owner else None
            if owner and isinstance(old, Tensor) and isinstance(fact, Tensor):
                state.env[owner] = replace(old, layout=fact.layout, coalesced=fact.coalesced,
                                           evidence=old.evidence + fact.evidence[-1:])
            elif owner:
                state.bind(owner, None)
            return
        if (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"
                and isinstance(fact, Const) and fact.value is False and self._freeze(dotted(target.value) or "", state)):
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
        outcome = self.calls.outcome(call) if self.calls is not None else None
        if outcome is not None:
            for path in sorted(outcome.effects, key=len):
                state.bind(path, outcome.effects[path])
            return
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
        if method == "requires_grad_" and self.value(arg(call, 0, "requires_grad"), state) is False:
            if self._freeze(recv_path, state):
                return
        if isinstance(recv, Tensor):
            if method == "requires_grad_":
                state.env[recv_path] = self._tensor_method(recv, method, call, state, where)
            elif method == "retain_grad":
                state.env[recv_path] = replace(recv, retains_grad=True)
            elif recv.is_coo and method.endswith("_") and self._probed(call, state, recv) is not None:
                after = self._probed(call, state, recv)
                state.env[recv_path] = replace(recv, coalesced=after.coalesced, evidence=after.evidence)
            elif method in api.UNCOALESCING_UPDATES:
                self._inplace_update(func.value, True, call, state)
            elif method == "to_dense":
                self._sparse_operand_effect("to_dense", func.value, None, state, where)
            elif method == "sum" and not call.args:
                self._sparse_operand_effect("sum", func.value, None, state, where)
        elif isinstance(recv, Optimizer) and method == "step" and recv.params is not None:
            for p in recv.params.paths:
                t = state.env.get(p) or self.lookup(p, state)
                if isinstance(t, Tensor) and t.is_coo:
                    state.env[p] = replace(t, coalesced=False).why(
                        where, f"`{recv_path}.step()` adds the sparse grad into it, leaving it uncoalesced")

    def _freeze(self, path: str, state: State) -> bool:
        """`model.emb.weight.requires_grad_(False)`: that parameter gets no gradient, in the
        module that owns it (the nearest enclosing path with a module fact)."""
        parts = path.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            owner, suffix = ".".join(parts[:cut]), ".".join(parts[cut:])
            module = state.env.get(owner) or self.lookup(owner, state)
            if not isinstance(module, Module):
                continue
            if module.parts is None:
                state.bind(owner, None)  # which parameter it was is unknown
                return True
            frozen = tuple((n, NO_GRADS if n == suffix or n.startswith(suffix + ".") else f) for n, f in module.parts)
            state.env[owner] = replace(module, parts=frozen, flags=union_flags(f for _, f in frozen))
            return True
        return False

    def _sparse_operand_effect(self, q: str, a, b, state: State, where) -> None:
        ap = dotted(a) if a is not None else None
        at = state.env.get(ap) if ap else None
        if not isinstance(at, Tensor) or not at.is_sparse:
            return
        if at.grad == LEAF and q in api.DENSE_GRAD_PRODUCTS:
            state.env[ap] = replace(at, grad_layout="strided", grad_coalesced=None).why(
                where, f"`{q.split('.')[-1]}` gives a sparse parameter a dense (strided) grad")
            at = state.env[ap]
        elif at.grad == LEAF and at.is_coo:
            coalesced = False if q == "to_dense" else api.GRAD_COALESCED_BY.get(q, False)
            if at.grad_layout == "coo" and at.grad_coalesced is False:
                coalesced = False
            text = f"the backward of `{q.split('.')[-1]}` gives it a {'coalesced' if coalesced else 'uncoalesced'} sparse grad"
            at = replace(at, grad_layout="coo", grad_coalesced=coalesced).why(where, text)
            state.env[ap] = at
        bt = self.tensor(b, state) if b is not None else None
        if bt is not None and bt.requires_grad and self.grad_enabled:
            state.saved[ap] = Evidence.at(where, f"`{ap}` is saved for backward by `{q.split('.')[-1]}` (the other operand requires grad)")


def _spelling(node, names: Names) -> str:
    if isinstance(node, cst.Call):
        q = names.qualify(node.func)
        if q is not None:
            return q
        if isinstance(node.func, cst.Attribute):
            return "." + node.func.attr.value + "()"
    op = type(getattr(node, "operator", None)).__name__
    return opcall.SYMBOLS.get(op.replace("Assign", ""), op) + ("=" if op.endswith("Assign") else "")


def _calls_in(node: cst.CSTNode) -> list:
    """Calls and matrix products in evaluation order (inner first), not entering lambdas."""
    out: list = []

    def walk(n: cst.CSTNode) -> None:
        if isinstance(n, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            return
        for child in children(n):
            walk(child)
        if isinstance(n, cst.Call) or (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.MatrixMultiply)):
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


def _parameter_of(flags: Flags, evidence) -> Tensor:
    """The one parameter tensor of a module part (an embedding's weight, an `nn.Parameter`)."""
    grad_layout = grad_layout_of(flags)
    if grad_layout == "mixed":
        grad_layout = None
    layout = "strided" if flags.sparse_param is False else None
    return Tensor(layout=layout, grad=LEAF, parameter=True, grad_layout=grad_layout,
                  grad_coalesced=False if grad_layout == "coo" else None, evidence=evidence)


def params_of_tensor(t: Tensor, path: Optional[str]) -> Params:
    if t.grad_layout == "coo":
        flags = SPARSE
    elif t.grad_layout == "strided":
        flags = DENSE
    else:
        flags = Flags(None, None, None)
    if t.is_sparse and t.grad == NOGRAD:
        return Params(flags=Flags(False, False, None), paths=(path,) if path else (), evidence=t.evidence)
    if t.is_sparse:
        flags = Flags(flags.has_sparse, flags.has_dense, True)
    elif t.layout == "strided":
        flags = Flags(flags.has_sparse, flags.has_dense, False)
        if t.grad_layout is None and t.parameter:
            flags = Flags(None, None, False)
    return Params(flags=flags, paths=(path,) if path else (), parts=None, evidence=t.evidence)


def _subset(p: Params) -> Params:
    """Some unknown part of a collection: what it lacks, it still lacks."""
    f = p.flags
    return Params(flags=Flags(False if f.has_sparse is False else None, False if f.has_dense is False else None,
                              False if f.sparse_param is False else None), evidence=p.evidence)


def _filters_on_requires_grad(fn: cst.BaseExpression) -> bool:
    return (isinstance(fn, cst.Lambda) and isinstance(fn.body, cst.Attribute)
            and fn.body.attr.value == "requires_grad")


def _filter(test: cst.BaseExpression, name_var: Optional[str], param_var: str, strings=lambda e: None):
    """What a comprehension filter keeps: ("name", predicate) on parameter names,
    ("grad-sparse", bool), ("requires-grad", True), or None when it cannot be read.
    `strings` reads a literal list of strings, also through a name (`no_decay`)."""
    negate = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negate, test = True, test.expression
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        # `p.grad is not None and p.grad.is_sparse`: the None check keeps every parameter
        left = test.left
        if _is_grad_check(left, param_var) and not negate:
            return _filter(test.right, name_var, param_var, strings)
        return None
    if _is_grad_check(test, param_var) and not negate:
        return ("requires-grad", True)  # every parameter has a grad after backward
    if (name_var is not None and isinstance(test, cst.Call) and isinstance(test.func, cst.Name)
            and test.func.value in ("any", "all") and len(test.args) == 1 and isinstance(test.args[0].value, cst.GeneratorExp)):
        # `any(nd in n for nd in no_decay)`
        gen = test.args[0].value
        words = strings(gen.for_in.iter)
        elt = gen.elt
        if (words is not None and not gen.for_in.ifs and gen.for_in.inner_for_in is None
                and isinstance(elt, cst.Comparison) and len(elt.comparisons) == 1
                and isinstance(elt.comparisons[0].operator, cst.In)
                and dotted(elt.left) == dotted(gen.for_in.target) and dotted(elt.comparisons[0].comparator) == name_var):
            combine = any if test.func.value == "any" else all
            return ("name", lambda n, ws=words, c=combine, k=not negate: c(w in n for w in ws) == k)
        return None
    d = dotted(test)
    if d in (f"{param_var}.grad.is_sparse",):
        return ("grad-sparse", not negate)
    if d == f"{param_var}.requires_grad" and not negate:
        return ("requires-grad", True)
    if name_var is None:
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        right = test.comparisons[0].comparator
        lit = literal(test.left)
        if isinstance(lit, str) and dotted(right) == name_var and isinstance(op, (cst.In, cst.NotIn)):
            keep_in = isinstance(op, cst.In) != negate
            return ("name", lambda n, s=lit, k=keep_in: (s in n) == k)
        rlit = literal(right)
        if dotted(test.left) == name_var and isinstance(rlit, str) and isinstance(op, (cst.Equal, cst.NotEqual)):
            eq = isinstance(op, cst.Equal) != negate
            return ("name", lambda n, s=rlit, k=eq: (n == s) == k)
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and dotted(test.func.value) == name_var:
        method = test.func.attr.value
        if method in ("startswith", "endswith") and len(test.args) == 1:
            lit = literal(test.args[0].value)
            if isinstance(lit, str):
                return ("name", lambda n, s=lit, m=method, k=not negate: getattr(n, m)(s) == k)
    return None


def _is_grad_check(test: cst.BaseExpression, param_var: str) -> bool:
    """`p.grad is not None`."""
    return (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.IsNot) and dotted(test.left) == f"{param_var}.grad"
            and literal(test.comparisons[0].comparator) is None)


def _literal_tensor(value, base: Tensor) -> Tensor:
    shape = shapes.shape_of(value)
    if shape is None or shapes.size(shape) > shapes.MAX_ELEMENTS:
        return replace(base, literal=None, shape=shape)
    return replace(base, literal=value, shape=shape)
