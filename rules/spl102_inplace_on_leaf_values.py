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

No fix is offered when a forward op already saved the tensor for a `.backward()` that comes
later (`loss = torch.sparse.mm(s, x).sum()`, then the edit, then `loss.backward()`): under
`torch.no_grad()` the edit still bumps the version counter, and backward fails instead
(SPL107). Moving the edit after `backward()` or before the forward changes what is computed,
so that choice is left to you.

## References
- hazard 09 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations


from sparselint.analysis.evaluation.facts import LEAF
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
        evidence, fix = w.evidence, None
        suggestion = "run an intended parameter edit under `torch.no_grad()`; otherwise rebuild out of place"
        # The tensor a forward op may have saved is the owner: `s` of `s.values()`. Through an
        # alias the owner's name is not at hand, so any saved tensor withholds the fix.
        saved = ctx.saved_for_backward(w.subject) if not w.alias else ctx.anything_saved_for_backward()
        if saved is not None and ctx.backward_follows(node, w.subject):
            # under `no_grad` the edit still bumps the version the saved copy checks (SPL107)
            evidence += (saved,)
            suggestion = (f"a forward op saved the tensor behind {w.named} for the backward that follows, so the "
                          "edit fails there even under `torch.no_grad()`; edit it after `backward()` or before the forward")
        else:
            fix = wrap_in_no_grad(ctx, self, self.fix_title)
        ctx.report(self, node,
                   f"in-place write to {w.named} of a sparse leaf that requires grad raises "
                   "`RuntimeError: a view of a leaf Variable that requires grad is being used in an "
                   "in-place operation` at this line",
                   evidence=evidence, fix=fix, suggestion=suggestion)

    # `s.values()` written in place, or a name bound to it (`vals.mul_(2)`, `vals[0] *= 2`)
    visit_Call = visit_Name = visit_Attribute = _check
