"""
## What it does
Checks for ops applied to a sparse tensor in an autograd graph whose backward has no sparse
implementation, when a backward follows: `torch.smm`, `torch.hspmm`, elementwise functions
such as `torch.tanh(s)` or `torch.sin(s)`, `torch.norm(s)`, indexing `s[0]` and
`s.index_select(...)`, `torch.cat([s, s])`, `s.sum(dim).to_dense()`, and `Tensor.sum()` of
the sparse result of `torch.sparse.sum(s, dim)`, `torch.sparse.softmax` / `log_softmax` or
`torch.sparse.mm(sparse, sparse)`. Which ops fail in backward, for a leaf and for a tensor
built from values that require grad, comes from the op table `tools/probe_torch.py`
generates for each torch release (an op is reported when its backward works for a dense
operand and fails for the sparse one); compressed leaves are SPL507.

## Why is this bad?
The forward runs; the error comes at `.backward()`, far from its cause:
`RuntimeError: derivative for aten::sspaddmm is not implemented` (smm),
`NotImplementedError: Could not run 'aten::tanh_backward' ... 'SparseCPU'`,
`RuntimeError: expand is unsupported for Sparse tensors`,
`RuntimeError: _sparse_sum_backward_cpu: expected grad_ Tensor to be sparse, but got dense`,
and others; the finding names the error the table recorded and the torch release it was
probed on.

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

from sparselint.analysis.evaluation.facts import LEAF
from sparselint.rule import Rule

from ._optable import backward_verdict, probed

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

    def _report(self, node, t, what, error, ctx, subject=None, version=None):
        if _only_inspected(node, ctx) or not ctx.backward_follows(node, subject):
            return
        tail = f" {probed(version)}" if version else ""
        ctx.report(self, node, f"{what} in an autograd graph: the next backward raises `{error}`{tail}",
                   evidence=t.evidence, suggestion="see `sparselint rule SPL502` for the rewrite of this op")

    def _check(self, node, ctx) -> None:
        v = backward_verdict(node, ctx)
        if v is None:
            return
        t = v.use.fact
        if t.is_compressed and t.grad == LEAF:
            return  # SPL507
        result = ctx.tensor(node)
        if v.consumer == "sum" and result is not None and result.needs_sparse_grad:
            return  # reported at the `.sum()`, which the engine follows through elementwise ops
        self._report(node, t, f"{v.use.spelled} of a sparse tensor", v.error, ctx, version=v.version)

    visit_BinaryOperation = visit_AugAssign = visit_UnaryOperation = visit_Subscript = _check

    def visit_Call(self, node: cst.Call, ctx) -> None:
        self._check(node, ctx)
        q = ctx.qualname(node.func)
        if q == "torch.sum" and len(node.args) == 1:
            self._reduction(node, node.args[0].value, ctx)
        elif q is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "sum" and not node.args:
            self._reduction(node, node.func.value, ctx)

    def _reduction(self, node, operand, ctx):
        """`Tensor.sum()` of a sparse result whose backward needs a sparse gradient (from
        `torch.sparse.sum(s, dim)`, `torch.sparse.softmax`, `torch.sparse.mm(sparse, sparse)`,
        followed through elementwise ops)."""
        if not ctx.grad_enabled:
            return
        t = ctx.tensor(operand)
        if t is None or not t.is_sparse or t.requires_grad is not True or not t.needs_sparse_grad:
            return
        self._report(node, t, "`Tensor.sum()` of a sparse result whose backward needs a sparse gradient",
                     _REDUCE_ERRORS, ctx)
