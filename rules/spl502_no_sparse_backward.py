"""
## What it does
Checks for ops applied to a sparse tensor in an autograd graph whose backward has no sparse
implementation, when a backward follows: `torch.smm`, `torch.hspmm`, elementwise functions
such as `torch.tanh(s)` or `torch.sin(s)`, `torch.norm(s)`, indexing `s[0]` and
`s.index_select(...)`, `s.sum(dim).to_dense()`, and `Tensor.sum()` of the sparse result of
`torch.sparse.sum(s, dim)`, `torch.sparse.softmax` / `log_softmax` or
`torch.sparse.mm(sparse, sparse)`.

## Why is this bad?
The forward runs; the error comes at `.backward()`, far from its cause:
`RuntimeError: derivative for aten::sspaddmm is not implemented` (smm),
`NotImplementedError: Could not run 'aten::tanh_backward' ... 'SparseCPU'`,
`RuntimeError: expand is unsupported for Sparse tensors`,
`RuntimeError: _sparse_sum_backward_cpu: expected grad_ Tensor to be sparse, but got dense`,
and others (the rule's table lists each op with the error and the torch versions it was
verified on).

## Example
```python
out = torch.tanh(adj)
loss = torch.sparse.sum(adj, dim=0).sum()
```

## Use instead
```python
c = adj.coalesce()
out = torch.sparse_coo_tensor(c.indices(), torch.tanh(c.values()), c.shape)
loss = torch.sparse.sum(adj, dim=0).to_dense().sum()  # or torch.sparse.sum(...)
```
`torch.sparse.mm` instead of `smm` / `hspmm`; `torch.sparse.sum(s, dim)` instead of
`s.sum(dim)`; `s.coalesce().values().norm()` instead of `torch.norm(s)`;
`s.to_dense()[0]` instead of `s[0]`.

## Fix safety
No fix: each rewrite is specific to the op.

## References
- hazards 28 to 36 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint import torchapi as api
from sparselint.rule import Rule

from ._common import method_call

_PRODUCTS = {
    "torch.smm": "RuntimeError: derivative for aten::sspaddmm is not implemented",
    "torch.hspmm": "RuntimeError: derivative for aten::hspmm is not implemented",
}
_REDUCE_ERRORS = "RuntimeError: _sparse_sum_backward_cpu: expected grad_ Tensor to be sparse, but got dense (or a related error)"


_INSPECTING_METHODS = frozenset({"item", "tolist", "detach", "cpu", "numpy"})
_INSPECTING_FUNCTIONS = frozenset({"print", "float", "int", "str", "repr", "format", "len"})
_LOGGING_METHODS = frozenset({"info", "debug", "warning", "log", "add_scalar", "write"})


def _only_inspected(node, ctx) -> bool:
    """The op's result is read for logging (`.item()`, `print(...)`, an f-string), not used
    in the loss, so no backward goes through it."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return parent.attr.value in _INSPECTING_METHODS
    if isinstance(parent, cst.FormattedStringExpression):
        return True
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        if isinstance(call, cst.Call):
            func = call.func
            if isinstance(func, cst.Name):
                return func.value in _INSPECTING_FUNCTIONS
            if isinstance(func, cst.Attribute):
                return func.attr.value in _LOGGING_METHODS
    return False


class NoSparseBackward(Rule):
    code = "SPL502"
    name = "no-sparse-backward"
    error = "NotImplementedError: Could not run 'aten::tanh_backward' with arguments from the 'SparseCPU' backend"
    when = "backward"
    op_table = api.NO_SPARSE_BACKWARD
    hazards = ("28", "29", "30", "31", "32", "33", "34", "35", "36")
    valid = (
        "import torch\nv = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "torch.sparse.softmax(s, 1).to_dense().sum().backward()\n",
        "import torch\nv = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "torch.sparse.sum(s, dim=1).to_dense().sum().backward()\n",
        "import torch\ns = torch.sparse_coo_tensor(i, torch.ones(3), (3, 3))\nprint(torch.tanh(s), s.norm())\n",
    )
    invalid = (
        "import torch\nv = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "torch.tanh(s).to_dense().sum().backward()  # SPL502\n",
    )

    def _in_graph(self, expr, ctx):
        if not ctx.grad_enabled:
            return None
        t = ctx.tensor(expr)
        if t is None or not t.is_sparse or t.requires_grad is not True:
            return None
        return t

    def _report(self, node, t, what, error, ctx, subject=None):
        if _only_inspected(node, ctx) or not ctx.backward_follows(node, subject):
            return
        ctx.report(self, node, f"{what} in an autograd graph: the next backward raises `{error}`",
                   evidence=t.evidence, suggestion="see `sparselint rule SPL502` for the rewrite of this op")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q in _PRODUCTS and node.args:
            t = self._in_graph(node.args[0].value, ctx)
            if t is not None:
                self._report(node, t, f"`{q.split('.')[-1]}` of a sparse tensor", _PRODUCTS[q], ctx)
            return
        if q is not None and q.startswith("torch.") and q.count(".") == 1 and node.args:
            name = q.split(".")[1]
            if name in api.NO_SPARSE_BACKWARD:
                t = self._in_graph(node.args[0].value, ctx)
                if t is not None:
                    self._report(node, t, f"`torch.{name}` of a sparse tensor", api.NO_SPARSE_BACKWARD[name][0], ctx)
            elif name == "sum" and len(node.args) == 1:
                self._reduction(node, node.args[0].value, ctx)
            return
        mc = method_call(node)
        if mc is None or q is not None:
            return
        receiver, method = mc
        if method in api.NO_SPARSE_BACKWARD and not node.args:
            t = self._in_graph(receiver, ctx)
            if t is not None:
                self._report(node, t, f"`.{method}()` of a sparse tensor", api.NO_SPARSE_BACKWARD[method][0], ctx)
        elif method == "index_select":
            t = self._in_graph(receiver, ctx)
            if t is not None:
                self._report(node, t, "`index_select` on a sparse tensor",
                             "NotImplementedError: Could not run 'aten::index_add_' ... 'SparseCPU'", ctx)
        elif method == "to_dense":
            t = self._in_graph(receiver, ctx)
            if t is not None and t.origin == "tensor-sum-dim":
                self._report(node, t, "`.to_dense()` of `Tensor.sum(dim)` of a sparse tensor",
                             "RuntimeError: expand is unsupported for Sparse tensors", ctx)
        elif method == "sum" and not node.args:
            self._reduction(node, receiver, ctx)

    def _reduction(self, node, operand, ctx):
        t = self._in_graph(operand, ctx)
        if t is not None and t.needs_sparse_grad:
            self._report(node, t, "`Tensor.sum()` of a sparse result whose backward needs a sparse gradient",
                         _REDUCE_ERRORS, ctx)

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        if ctx.usage(node) == "assign" or isinstance(ctx.parent(node), cst.AssignTarget):
            return
        parent = ctx.parent(node)
        if isinstance(parent, cst.AugAssign) and parent.target is node:
            return
        t = self._in_graph(node.value, ctx)
        if t is not None:
            self._report(node, t, "indexing a sparse tensor",
                         "NotImplementedError: Could not run 'aten::select_backward' ... 'SparseCPU'", ctx)
