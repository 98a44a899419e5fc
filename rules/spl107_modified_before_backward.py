"""
## What it does
Checks for an in-place change of a sparse tensor that a forward op saved for backward,
made between that forward op and the `.backward()` that needs it: `loss =
torch.sparse.mm(s, d).sum()`, then `s.mul_(2)`, then `loss.backward()`. The change is
flagged inside `torch.no_grad()` too.

## Why is this bad?
`torch.sparse.mm(s, d)` saves `s` to compute the gradient of `d`, and, when `s` itself
requires grad, to mask its own gradient to its pattern (`torch.sparse.addmm`,
`torch.sparse.sum`, `torch.sparse.softmax`, `torch.sparse.log_softmax` and `.to_dense()` do
the same). Changing `s` in place, directly or through `.values()`, bumps its version
counter, under `torch.no_grad()` too, and backward refuses the stale value:
`RuntimeError: one of the variables needed for gradient computation has been modified by an
inplace operation: [torch.sparse.FloatTensor [3, 3]] is at version 1; expected version 0
instead.` Only flagged when an op is known to have saved the tensor: a dense product
(`torch.mm`, `@`) or an elementwise product (`s * d`) saves a sparse `s` only when the
other operand requires grad, and an edit
through `.data` does not bump the version (backward then runs, on the changed values).

## Example
```python
loss = torch.sparse.mm(s, d).sum()
with torch.no_grad():
    s.mul_(2)
loss.backward()
```

## Use instead
```python
loss = torch.sparse.mm(s, d).sum()
loss.backward()
with torch.no_grad():
    s.mul_(2)
```

## Fix safety
No fix: moving statements across a backward changes what the program computes.

## References
- hazard 45 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.context import is_inplace_method
from sparselint.rule import Rule

from ._common import method_call, write_method


class ModifiedBeforeBackward(Rule):
    code = "SPL107"
    name = "modified-before-backward"
    error = ("RuntimeError: one of the variables needed for gradient computation has been modified "
             "by an inplace operation")
    when = "backward"
    hazards = ("45",)
    valid = (
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\nd = torch.randn(3, 2)\n"
        "with torch.no_grad():\n    s.values().mul_(2)\nloss = torch.sparse.mm(s, d).sum()\nloss.backward()\n",
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\nd = torch.randn(3, 2)\n"
        "loss = torch.sparse.mm(s, d).sum()\ns.values().data.mul_(2)\nloss.backward()\n",
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\nloss = s.sum()\n"
        "with torch.no_grad():\n    s.mul_(2)\nloss.backward()\n",
    )
    invalid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3), requires_grad=True)\n"
        "d = torch.randn(3, 2, requires_grad=True)\nloss = torch.sparse.mm(s, d).sum()\n"
        "with torch.no_grad():\n    s.mul_(2)  # SPL107\nloss.backward()\n",
        "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\nd = torch.randn(3, 2)\n"
        "loss = torch.sparse.mm(s, d).sum()\nwith torch.no_grad():\n    s.values().mul_(2)  # SPL107\n"
        "loss.backward()\n",
    )

    def _check(self, node, target, op, ctx) -> None:
        saved = ctx.saved_for_backward(target)
        if saved is None or not ctx.backward_follows(node, target):
            return
        t = ctx.tensor(target)
        what = ctx.code(target)
        ctx.report(self, node,
                   f"`{op}` changes `{what}` after a forward op saved it and before `.backward()`, which "
                   "then raises `RuntimeError: one of the variables needed for gradient computation has been "
                   "modified by an inplace operation`",
                   evidence=(t.evidence if t else ()) + (saved,),
                   suggestion="make the change after `backward()`, or use an out-of-place copy in the forward")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None:
            return
        if is_inplace_method(mc[1]):
            self._check(node, mc[0], f".{mc[1]}()", ctx)
        elif mc[1] in ("_values", "values") and write_method(ctx, node) is not None:
            self._check(node, mc[0], f"a write through .{mc[1]}()", ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        self._check(node, node.target, ctx.code(node.operator).strip(), ctx)
