"""
## What it does
Checks for ops that have no kernel for sparse COO tensors at all, applied to a known sparse
tensor: `s.mean()`, `torch.mean(s)`, `std`, `var`, `median`, `argmax`, `cumsum`, `prod`,
`amax`, `logsumexp`, `view`, `reshape`, `flatten`, `sigmoid`, `exp`, `log`, `cos`,
`clamp`, `max`, `min`, comparisons... (sparse gradients are SPL302).

## Why is this bad?
The call raises at this line, typically `NotImplementedError: Could not run 'aten::mean.dim'
with arguments from the 'SparseCPU' backend` (`RuntimeError: reshape is not implemented for
sparse tensors` for `reshape`/`flatten`). The rule's table lists each op with its error and
the torch versions it was verified on.

## Example
```python
avg = adj.mean()
```

## Use instead
```python
avg = torch.sparse.sum(adj) / adj.numel()
```
or apply the op to `adj.coalesce().values()`, or to `adj.to_dense()` when it fits in memory.

## Fix safety
No fix: whether implicit zeros count (mean over all entries or over the stored ones) is the
author's call.

## References
- hazard 37 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint import torchapi as api
from sparselint.rule import Rule

from ._common import method_call


class UnsupportedSparseOp(Rule):
    code = "SPL503"
    name = "unsupported-sparse-op"
    error = "NotImplementedError: Could not run 'aten::mean.dim' with arguments from the 'SparseCPU' backend"
    when = "line"
    op_table = api.NO_SPARSE_FORWARD
    hazards = ("37",)
    valid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\nm = torch.sparse.sum(s) / s.numel()\n",
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\nm = s.to_dense().mean()\n",
    )
    invalid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\nm = s.mean()  # SPL503\n",
    )

    def _report(self, node, operand, name, ctx) -> None:
        t = ctx.tensor(operand)
        if t is None or not t.is_coo or t.is_grad:
            return
        error, _versions = api.NO_SPARSE_FORWARD[name]
        ctx.report(self, node, f"`{name}` has no kernel for sparse COO tensors: `{error}` at this line",
                   evidence=t.evidence,
                   suggestion="use `torch.sparse.*`, or apply the op to `.coalesce().values()` or `.to_dense()`")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q is not None:
            name = q[len("torch."):] if q.startswith("torch.") and q.count(".") == 1 else None
            if name in api.NO_SPARSE_FORWARD and not name.endswith("_") and node.args:
                self._report(node, node.args[0].value, name, ctx)
            return
        mc = method_call(node)
        if mc is not None and mc[1] in api.NO_SPARSE_FORWARD:
            self._report(node, mc[0], mc[1], ctx)

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        if len(node.comparisons) != 1:
            return
        op = api.COMPARISON_KERNELS.get(type(node.comparisons[0].operator).__name__)
        t = ctx.tensor(node.left)
        if op is None or t is None or not t.is_coo or t.is_grad:
            return
        ctx.report(self, node, f"comparison of a sparse COO tensor: `NotImplementedError: Could not run '{op}' "
                   "... 'SparseCPU'` at this line", evidence=t.evidence,
                   suggestion="compare `.coalesce().values()` instead")
