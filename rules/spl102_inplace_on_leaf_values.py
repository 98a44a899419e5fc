"""
## What it does
Checks for in-place writes to `.values()` of a sparse leaf that requires grad (a sparse
`nn.Parameter`, `x.to_sparse().requires_grad_()`, `sparse_coo_tensor(..., requires_grad=True)`
after coalescing), outside `torch.no_grad()`, also through a name that holds them
(`vals = s.values()` then `vals.mul_(2)`).

## Why is this bad?
`.values()` of a sparse leaf is a view of the leaf, and autograd forbids in-place ops on it:
`RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place
operation.` at this line. CSR, CSC and BSR leaves fail the same way.

## Example
```python
s = dense.to_sparse().requires_grad_()
s.values().mul_(2)
```

## Use instead
```python
with torch.no_grad():  # an intended edit of the parameter
    s.values().mul_(2)
```

## Fix safety
Unsafe: the fix wraps the statement in `torch.no_grad()`, which makes the edit invisible to
autograd. That is right for a manual parameter update and wrong if the edit was meant to be
differentiated through; then rebuild the tensor out of place instead.

## References
- hazard 09 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.facts import LEAF
from sparselint.rule import Rule

from ._common import values_written, wrap_in_no_grad


class InplaceOnLeafValues(Rule):
    code = "SPL102"
    name = "inplace-on-leaf-values"
    error = "RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation."
    when = "line"
    hazards = ("09",)
    fix_title = "Run the edit under `torch.no_grad()`"
    valid = (
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\n"
        "with torch.no_grad():\n    s.values().mul_(2)\n",
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\ns.values().data.mul_(2)\n",
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\nvals = s.values().clone()\nvals.clamp_(0, 1)\n",
    )
    invalid = (
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\ns.values().mul_(2)  # SPL102\n",
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\nvals = s.values()\nvals.clamp_(0, 1)  # SPL102\n",
    )

    def _check(self, node, ctx) -> None:
        if not ctx.grad_enabled:
            return
        w = values_written(ctx, node)
        if w is None:
            return
        t = w.owner
        if t.grad != LEAF or not t.is_sparse:
            return
        if t.is_coo and t.coalesced is not True:
            return  # an uncoalesced leaf fails earlier, in `.values()` itself (SPL001)
        ctx.report(self, node,
                   f"in-place write to {w.named} of a sparse leaf that requires grad raises "
                   "`RuntimeError: a view of a leaf Variable that requires grad is being used in an "
                   "in-place operation` at this line",
                   evidence=w.evidence, fix=wrap_in_no_grad(ctx, self, self.fix_title),
                   suggestion="run an intended parameter edit under `torch.no_grad()`; otherwise rebuild out of place")

    # `s.values()` written in place, or a name bound to it (`vals.mul_(2)`, `vals[0] *= 2`)
    visit_Call = visit_Name = visit_Attribute = _check
