"""The results of torch calls and tensor methods: constructors, conversions, products,
reductions, and what the op table says of every other op."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from ...torchops import opcall, optable
from .. import shapes
from ...torchops import torchapi as api
from ....diagnostics import Evidence
from ..facts import LEAF, NOGRAD, NONLEAF, Const, Fact, Literal, Module, Optimizer, Params, Tensor, union_params
from ..gradflags import DENSE, NONE as NO_GRADS, SPARSE, UNKNOWN
from ...cst.names import Names
from .values import _UNKNOWN, ABSENT, arg, literal
from .state import State


class TorchCalls:
    """Methods of `Inference` (sparselint.inference.expressions)."""

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
            rg = self.argument(node, "requires_grad", None, state)
            if rg is True:
                grad, how = LEAF, "a leaf that requires grad (`requires_grad=True`)"
            elif rg is _UNKNOWN:
                grad, how = None, ""  # a `**mapping` or a name not known may ask for grad
            else:
                grad = self._grad_of([vt])
                how = "in the autograd graph: its values require grad" if grad == NONLEAF else ""
            coalesced = None
            text = f"built by `{short}`"
            if layout == "coo":
                flag = self.argument(node, "is_coalesced", None, state)
                coalesced = None if flag is _UNKNOWN else flag is True
                if coalesced is False:
                    text += " without `is_coalesced=True`, so it is uncoalesced"
            ev = (vt.evidence if vt is not None and grad == NONLEAF else ())
            indices = arg(node, 0, "indices") if layout == "coo" else None
            it = self.tensor(indices, state) if indices is not None else None
            rows = None
            if coalesced is False and indices is not None:
                rows = it.literal if it is not None and it.literal is not None else self._literal_data(indices)
            disorder = _disorder(rows)
            nnz = it.shape[1] if it is not None and it.shape is not None and len(it.shape) == 2 else None
            if coalesced is False and isinstance(nnz, int) and nnz <= 1:
                # torch marks a tensor of one entry or none coalesced, whatever it is told
                coalesced, disorder = True, None
                text += f" with {'one entry' if nnz else 'no entry'}, which torch marks coalesced"
            t = Tensor(layout=layout, coalesced=coalesced, grad=grad, origin="constructor", evidence=ev,
                       shape=self._size(arg(node, values_at + 1, "size"), state),
                       repeats_duplicates=it is not None and it.uncoalesced_indices, scrambled=disorder is not None)
            t = t.why(where, text + (f"; {how}" if how else ""))
            if t.repeats_duplicates:
                t = t.why(where, "built on the `_indices()` of an uncoalesced tensor: one entry for each of its "
                                 "duplicates")
            if disorder is not None:
                t = t.why(indices, f"its written-out index list {disorder}")
            return t
        if q in api.DATA_FACTORIES:
            data_node = arg(node, 0, "data")
            data = self._literal_data(data_node) if data_node is not None else None
            rg = self.argument(node, "requires_grad", None, state)
            t = Tensor(layout="strided", grad=_grad_asked(rg), origin="factory")
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
                if tensors and all(t is not None and t.layout == "strided" for t in tensors):
                    return self._derived(tensors[0], "strided", None, tensors)  # dense parts: a dense whole
                return self._probed(node, state, tensors[0] if tensors else None)
            return None
        if q in api.LIKE_FACTORIES:
            src = arg(node, 0, "input")
            st = self.tensor(src, state) if src is not None else None
            if st is None or st.layout != "strided":
                return None
            rg = self.argument(node, "requires_grad", None, state)
            return Tensor(layout="strided", grad=_grad_asked(rg), origin="factory", shape=st.shape)
        if q in api.DENSE_FACTORIES:
            grad = _grad_asked(self.argument(node, "requires_grad", None, state))
            dims = [literal(a.value) for a in node.args if a.keyword is None]
            shape = tuple(dims) if q in api.SHAPE_FACTORIES and dims and all(
                isinstance(d, int) and not isinstance(d, bool) for d in dims) else None
            t = Tensor(layout="strided", grad=grad, origin="factory", shape=shape)
            if grad == LEAF:
                t = t.why(where, f"a leaf that requires grad: `{short}(..., requires_grad=True)`")
            if q == "torch.arange" and 1 <= len(node.args) <= 3 and all(a.keyword is None for a in node.args):
                # `torch.arange(n)` with `n` known: the values it holds (self-loop indices)
                bounds = [self.value(a.value, state) for a in node.args]
                if all(isinstance(b, int) and not isinstance(b, bool) for b in bounds) and (len(bounds) < 3 or bounds[2]):
                    span = range(*bounds)
                    if len(span) <= shapes.MAX_ELEMENTS:
                        return _literal_tensor(tuple(span), t)
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
            positions = api.EMBEDDING_POSITIONS[q]
            sparse = self.argument(node, "sparse", positions.get("sparse"), state)
            mode = self.argument(node, "mode", positions.get("mode"), state)
            kind = api.EMBEDDINGS[q]
            flags = SPARSE if sparse is True else DENSE if sparse is ABSENT or sparse is False else UNKNOWN
            if q.endswith("from_pretrained"):
                freeze = self.argument(node, "freeze", positions.get("freeze"), state)
                if freeze is True or freeze is ABSENT:
                    flags = NO_GRADS  # frozen: its weight never gets a gradient
                elif freeze is not False:
                    flags = UNKNOWN
            elif "_freeze" in positions:
                # `nn.Embedding(..., _freeze=True)`: made frozen, as `from_pretrained` does
                freeze = self.argument(node, "_freeze", positions["_freeze"], state)
                if freeze is True:
                    flags = NO_GRADS
                elif freeze is not False and freeze is not ABSENT:
                    flags = UNKNOWN
            m = Module(kind=kind, flags=flags, parts=(("weight", flags),), mode=mode if isinstance(mode, str) else None,
                       ordered=True, layers=(("", f"torch.nn.{kind}"),))
            # where a `sparse=` given by name got its value: an option of a public class
            given = arg(node, positions.get("sparse"), "sparse")
            held = self.fact(given, state) if given is not None else None
            option = held.evidence if isinstance(held, Const) else ()
            if flags is SPARSE:
                m = replace(m, evidence=(*option, Evidence.at(
                    where, f"`nn.{kind}(..., sparse=True)`: its weight gets an uncoalesced sparse COO grad")))
            elif flags is DENSE and option:
                m = replace(m, evidence=(*option, Evidence.at(where, f"`nn.{kind}(..., sparse=False)`: its weight gets a dense grad")))
            return m
        if q in api.CONTAINERS:
            return self._container(q, node, state)
        if q.startswith("torch.nn.") and q.count(".") == 2 and q.split(".")[-1][:1].isupper() and q not in api.CONTAINERS:
            kind = q.split(".")[-1]
            if kind in api.PARAMETER_FREE:
                return Module(kind=kind, flags=NO_GRADS, parts=(), ordered=True, layers=(("", q),))
            bias = self.argument(node, "bias", api.BIAS_POSITION[kind], state) if kind in api.BIAS_POSITION else ABSENT
            bias = True if bias is ABSENT else bias if isinstance(bias, bool) else None
            layers = (("", q),)
            if kind == "MultiheadAttention":
                given = [self.argument(node, n, at, state) for n, at in api.ATTENTION_VARIANTS.items()]
                if any(v not in (ABSENT, None, False) for v in given):
                    bias = None  # (separate or extra projections: their names are not listed)
                layers += (("out_proj", "torch.nn.Linear"),)  # (a subclass of it)
            parts = self._recurrent_parts(kind, node, state) if kind in api.RECURRENT else api.dense_layer_parts(q, bias)
            return Module(kind=kind, flags=DENSE, parts=parts, ordered=True, layers=layers)
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
            if q in api.MATRIX_PRODUCTS and at is not None and bt is not None:
                t = replace(t, shape=shapes.matmul_shape(at.shape, bt.shape))
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
            if not _one_dim(dim):
                return None  # (`dim=(0, 1)` over every sparse dim gives a dense tensor)
            t = replace(self._derived(at, "coo", None, [at]), needs_sparse_grad=True)
            return t.why(where, "`torch.sparse.sum(..., dim)` returns a sparse tensor whose backward needs a sparse gradient")
        first = arg(node, 0)
        ft = self.tensor(first, state) if first is not None else None
        name = q.rsplit(".", 1)[-1]
        if ft is not None and ft.layout == "strided" and name in api.DENSE_ELEMENTWISE \
                and q[:len(q) - len(name)] in api.DENSE_ELEMENTWISE_MODULES:
            return self._elementwise(ft)
        if ft is not None and ft.layout == "strided" and q == f"torch.{name}" and (
                name in api.DENSE_SHAPE_OPS or name in api.DENSE_REDUCTIONS):
            return self._derived(ft, "strided", None, [ft])  # `torch.squeeze(w, 1)`, `torch.sum(w, dim=1)`
        return self._probed(node, state, ft)

    def _elementwise(self, r: Tensor) -> Tensor:
        """A dense tensor's elementwise function: of its shape, in its graph."""
        return replace(self._derived(r, "strided", None, [r], elementwise=True), shape=r.shape)

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

    def _size(self, node: Optional[cst.BaseExpression], state: State) -> Optional[tuple]:
        """A size written as a tuple or list of ints, or of names holding ints."""
        if not isinstance(node, (cst.Tuple, cst.List)) or not node.elements:
            return None
        dims = []
        for el in node.elements:
            v = None if isinstance(el, cst.StarredElement) else self.value(el.value, state)
            if not isinstance(v, int) or isinstance(v, bool):
                return None
            dims.append(v)
        return tuple(dims)

    def _tensor_method(self, r: Tensor, method: str, node: cst.Call, state: State, where) -> Optional[Tensor]:
        t = self._tensor_method_result(r, method, node, state, where)
        if t is None or t.literal is not None or r.shape is None:
            return t
        if method in api.SHAPE_KEEPING:
            return replace(t, shape=r.shape)
        if method == "t" and not node.args and len(r.shape) == 2:
            return replace(t, shape=(r.shape[1], r.shape[0]))
        # any other method may change the shape: what it is is not known
        return replace(t, shape=None) if t.shape is not None else t

    def _tensor_method_result(self, r: Tensor, method: str, node: cst.Call, state: State, where) -> Optional[Tensor]:
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
            # a write through the detached tensor is not one autograd sees
            return replace(r, grad=NOGRAD, parameter=False, grad_layout=None, grad_coalesced=None, origin="detach",
                           values_of=None)
        if method in api.VALUE_ACCESSORS:
            t = self._derived(r, "strided", None, [r], origin="values")
            if method == "values" and r.is_sparse and not node.args:
                t = replace(t, values_of=r)
            return t
        if method in api.PRIVATE_ACCESSORS:
            return Tensor(layout="strided", grad=NOGRAD, origin="private-values",
                          uncoalesced_indices=method == "_indices" and r.is_coo and r.coalesced is False)
        if method in api.LAYOUT_PRESERVING:
            coalesced = r.coalesced if method in api.COALESCE_PRESERVING else None
            if method in api.MAYBE_SELF and r.grad == LEAF:
                return replace(r, grad=None, coalesced=coalesced)
            return self._probed(node, state, r, coalesced, r.layout) or self._derived(r, r.layout, coalesced, [r], elementwise=True)
        if method == "sum" and not node.args:
            return self._derived(r, "strided", None, [r])
        if method == "sum" and r.is_coo:
            dim = arg(node, 0, "dim")
            if dim is not None and not _one_dim(dim):
                return None  # (`dim=(0, 1)` over every sparse dim gives a dense tensor)
            t = self._derived(r, "coo", None, [r], origin="tensor-sum-dim")
            return t.why(where, "`Tensor.sum(dim)` of a sparse tensor: its result cannot be densified in a graph")
        if r.layout == "strided" and method in api.DENSE_ELEMENTWISE:
            return self._elementwise(r)
        if r.layout == "strided" and (method in api.DENSE_REDUCTIONS or method in api.DENSE_SHAPE_OPS):
            return self._derived(r, "strided", None, [r])
        return self._probed(node, state, r)

    def _literal_method(self, value, method: str, node: cst.Call):
        if method == "flip" and len(node.args) == 1:
            # `edge_index.flip(0)`: the reversed edges; `flip((0,))` and `flip(dims=[0])` too
            dims = literal(node.args[0].value)
            dims = (dims,) if isinstance(dims, int) and not isinstance(dims, bool) else dims
            return shapes.flip(value, dims) if isinstance(dims, tuple) else None
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
        if method == "repeat" and ints:
            return shapes.repeat(value, tuple(ints))
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

    def _recurrent_parts(self, kind: str, node: cst.Call, state: State):
        """`nn.GRU(d, h, num_layers=2, bidirectional=True)`: its parameter names, where the
        sizes are the only positional arguments and every keyword that shapes it is known."""
        if sum(1 for a in node.args if a.keyword is None) > 2 or any(a.star for a in node.args):
            return None
        given = {}
        for name, default in api.RECURRENT[kind].items():
            value = self.argument(node, name, None, state)
            value = default if value is ABSENT else value
            if type(value) is not type(default):
                return None
            given[name] = value
        return api.recurrent_parts(given) if given["num_layers"] <= 8 else None


def _disorder(rows) -> Optional[str]:
    """How written-out COO indices (one row per dimension) fail to be coalesced: an entry
    repeated, or entries out of order; None when they are coalesced or not all known."""
    if not rows or not isinstance(rows, tuple) or not all(
            isinstance(r, tuple) and len(r) == len(rows[0]) and all(isinstance(v, int) for v in r) for r in rows):
        return None
    entries = list(zip(*rows))
    if len(set(entries)) != len(entries):
        return "repeats an entry"
    if entries != sorted(entries):
        return "is not in sorted order"
    return None


def _spelling(node, names: Names) -> str:
    if isinstance(node, cst.Call):
        q = names.qualify(node.func)
        if q is not None:
            return q
        if isinstance(node.func, cst.Attribute):
            return "." + node.func.attr.value + "()"
    op = type(getattr(node, "operator", None)).__name__
    return opcall.SYMBOLS.get(op.replace("Assign", ""), op) + ("=" if op.endswith("Assign") else "")


def _literal_tensor(value, base: Tensor) -> Tensor:
    shape = shapes.shape_of(value)
    if shape is None or shapes.size(shape) > shapes.MAX_ELEMENTS:
        return replace(base, literal=None, shape=shape)
    return replace(base, literal=value, shape=shape)


def _grad_asked(requires_grad) -> Optional[str]:
    """The grad state of a fresh tensor given what its call passes for `requires_grad`."""
    if requires_grad is True:
        return LEAF
    return NOGRAD if requires_grad is False or requires_grad is ABSENT else None


def _one_dim(dim: cst.BaseExpression) -> bool:
    """A `dim` argument that names one dimension: an int written out, or a one-element
    tuple or list of one."""
    if isinstance(dim, (cst.Tuple, cst.List)):
        return len(dim.elements) == 1 and _one_dim(dim.elements[0].value)
    if isinstance(dim, cst.UnaryOperation) and isinstance(dim.operator, cst.Minus):
        dim = dim.expression
    return isinstance(dim, cst.Integer)
