"""
## What it does
Checks for an in-place method called directly on `.data` of a sparse tensor or a sparse
gradient: `p.grad.data.zero_()`, `p.grad.data.mul_(scale)`.

## Why is this bad?
`.data` of a sparse tensor is a new tensor object that shares nothing the in-place op can
change: the op runs on it and the original stays as it was. Nothing is raised. A hand-written
zero-grad loop keeps accumulating gradients; gradient scaling never happens.

## Example
```python
for p in emb.parameters():
    p.grad.data.zero_()
```

## Use instead
```python
for p in emb.parameters():
    p.grad.zero_()  # or: p.grad = None
```

## Fix safety
Safe on gradients: the fix drops `.data`, so the op runs on the gradient itself (a gradient
does not require grad, so no autograd check is involved). No fix is offered on a sparse
parameter, where dropping `.data` would be an in-place op on a leaf (SPL103); wrap the
update in `torch.no_grad()` instead.

## References
- hazard 53 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.context import is_inplace_method
from sparselint.rule import Rule

from ._common import method_call


class InplaceOnSparseData(Rule):
    code = "SPL004"
    name = "inplace-on-sparse-data"
    error = "no error: the in-place op changes a detached copy"
    when = "silent"
    hazards = ("53",)
    fix_title = "Apply the op to the gradient itself"
    valid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "for p in emb.parameters():\n    p.grad.zero_()\n",
        "import torch.nn as nn\nlin = nn.Linear(3, 3)\nfor p in lin.parameters():\n    p.grad.data.zero_()\n",
    )
    invalid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "for p in emb.parameters():\n    p.grad.data.zero_()  # SPL004\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or not is_inplace_method(mc[1]):
            return
        data = mc[0]
        if not (isinstance(data, cst.Attribute) and data.attr.value == "data"):
            return
        owner = data.value
        t = ctx.tensor(owner)
        if t is None or not t.is_sparse:
            return
        what = ctx.code(owner)
        fix = ctx.make_fix(self, [ctx.replace(data, owner)], safe=True) if t.is_grad else None
        ctx.report(self, node,
                   f"`{what}.data.{mc[1]}(...)` on a sparse tensor changes a detached copy; `{what}` is unchanged",
                   evidence=t.evidence, fix=fix,
                   suggestion=f"`{what}.{mc[1]}(...)` (under `torch.no_grad()` for a parameter), or `{what} = None`")
