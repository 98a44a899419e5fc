"""
## What it does
Checks for a CSC, BSR or BSC leaf that requires grad used through `.to_dense()` or
`torch.sparse.mm` / `torch.sparse.addmm`, when a backward follows.

## Why is this bad?
These backward paths are only implemented for COO and CSR leaves. The backward raises
`RuntimeError: Sparse CSC tensors do not have is_contiguous` (`Sparse BSR ...`) or
`RuntimeError: sparse_addmm_sparse_backward: unsupported combination of layouts, grad:
Strided, mat1: SparseCsc, mat2: Strided`. `@`, `torch.mm` and `.sum()` work.

## Example
```python
w = dense.to_sparse_csc().requires_grad_()
torch.sparse.mm(w, x).sum().backward()
```

## Use instead
```python
w = dense.to_sparse_csr().requires_grad_()  # CSR works
```
or make the values the leaf: `torch.sparse_csc_tensor(ccol, row, values, size)` with
`values.requires_grad`.

## Fix safety
No fix: the layout is usually chosen for a reason elsewhere.

## References
- hazards 42, 43 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.facts import LEAF
from sparselint.rule import Rule

from ._common import describe_layout, method_call

_LAYOUTS = {"csc", "bsr", "bsc"}
_PRODUCTS = {"torch.sparse.mm": 0, "torch.sparse.addmm": 1}


class CompressedBackwardGap(Rule):
    code = "SPL507"
    name = "compressed-backward-gap"
    error = "RuntimeError: Sparse CSC tensors do not have is_contiguous"
    when = "backward"
    hazards = ("42", "43")
    valid = (
        "import torch\ns = torch.eye(3).to_sparse_csr().requires_grad_()\ntorch.sparse.mm(s, torch.ones(3, 2)).sum().backward()\n",
        "import torch\ns = torch.eye(3).to_sparse_csc().requires_grad_()\n(s @ torch.ones(3, 2)).sum().backward()\n",
    )
    invalid = (
        "import torch\ns = torch.eye(3).to_sparse_csc().requires_grad_()\ns.to_dense().sum().backward()  # SPL507\n",
    )

    def _check(self, node, operand, what, ctx) -> None:
        if not ctx.grad_enabled:
            return
        t = ctx.tensor(operand)
        if t is None or t.layout not in _LAYOUTS or t.grad != LEAF or not ctx.backward_follows(node, operand):
            return
        ctx.report(self, node, f"{what} of a {describe_layout(t)} leaf has no backward for that layout: "
                   "the next backward raises (`Sparse CSC tensors do not have is_contiguous` or "
                   "`sparse_addmm_sparse_backward: unsupported combination of layouts`)",
                   evidence=t.evidence, suggestion="use a CSR leaf, or make the values tensor the leaf")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q in _PRODUCTS and len(node.args) > _PRODUCTS[q]:
            self._check(node, node.args[_PRODUCTS[q]].value, f"`{q.split('.')[-1]}`", ctx)
            return
        mc = method_call(node)
        if mc is not None and q is None and mc[1] == "to_dense":
            self._check(node, mc[0], "`.to_dense()`", ctx)
