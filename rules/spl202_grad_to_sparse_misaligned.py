"""
## What it does
Checks for `values.grad.to_sparse()` where `values` is the dense values tensor of a sparse
tensor: an attempt to get "the gradient with the sparse tensor's indices".

## Why is this bad?
`values.grad` is already dense and aligned entry by entry with `values`. `.to_sparse()`
re-indexes it by position (1-D indices `[[0, 1, 2]]`, not the (row, col) indices of the
sparse tensor) and drops exact zeros. Combining the result with `values` then raises
`RuntimeError: The size of tensor a (3) must match the size of tensor b (2) at non-singleton
dimension 0` when a gradient entry is zero, and silently misaligns when sizes happen to match.

## Example
```python
g = values.grad.to_sparse().values()
updated = values - lr * g
```

## Use instead
```python
updated = values - lr * values.grad
```

## Fix safety
No fix: the code that consumes the sparse result has to change too.

## References
- hazard 50 of the catalog in `docs/hazards.md`; write-up A block 2 (`fixtures/writeups/`)
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._common import method_call


class GradToSparseMisaligned(Rule):
    code = "SPL202"
    name = "grad-to-sparse-misaligned"
    error = "RuntimeError: The size of tensor a"
    when = "line"
    hazards = ("50",)
    valid = (
        "import torch\nvalues = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, values, (3, 3))\n"
        "g = values.grad\n",
        "import torch\nw = torch.ones(3, requires_grad=True)\ng = w.grad.to_sparse()\n",
    )
    invalid = (
        "import torch\nvalues = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, values, (3, 3))\n"
        "g = values.grad.to_sparse()  # SPL202\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] != "to_sparse" or node.args:
            return
        grad = mc[0]
        if not (isinstance(grad, cst.Attribute) and grad.attr.value == "grad"):
            return
        t = ctx.tensor(grad.value)
        if t is None or t.layout != "strided" or not t.values_of_sparse:
            return
        what = ctx.code(grad.value)
        ctx.report(self, node,
                   f"`{what}.grad` is dense and aligned with `{what}`; `.to_sparse()` re-indexes it by position "
                   "and drops zeros, so it no longer lines up (`RuntimeError: The size of tensor a ... must "
                   "match` or silent misalignment)",
                   evidence=t.evidence, suggestion=f"use `{what}.grad` directly")
