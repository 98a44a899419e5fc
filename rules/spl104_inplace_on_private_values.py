"""
## What it does
Checks for writes through `._values()` or `._indices()` of an uncoalesced sparse COO tensor
that is part of an autograd graph: `s._values().mul_(2)`, `s._values()[1] += 1`.

## Why is this bad?
`_values()` of a tensor fresh from `torch.sparse_coo_tensor(i, v, size)` is the tensor `v`
itself. The write raises nothing and silently changes `v`, the leaf you are training.
Because the constructor saved its output for backward, the next backward fails:
`RuntimeError: one of the variables needed for gradient computation has been modified by an
inplace operation: [torch.sparse.FloatTensor ...], which is output 0 of
SparseCooTensorWithDimsAndTensors ...`. People reach for `_values()` to dodge SPL001; this
is where that leads.

## Example
```python
s = torch.sparse_coo_tensor(i, v, size)  # v.requires_grad
s._values().mul_(2)
```

## Use instead
```python
s = torch.sparse_coo_tensor(i, v * 2, size)
```

## Fix safety
No fix: the out-of-place rebuild needs the tensor's constructor arguments.

## References
- hazard 07 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.evaluation.facts import NONLEAF
from sparselint.rule import Rule

from ._common import method_call, write_method


class InplaceOnPrivateValues(Rule):
    code = "SPL104"
    name = "inplace-on-private-values"
    error = ("RuntimeError: one of the variables needed for gradient computation has been modified "
             "by an inplace operation")
    when = "backward"
    hazards = ("07",)
    valid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3), requires_grad=True)\n"
        "s._values().mul_(2)\n",
    )
    invalid = (
        "import torch\nv = torch.ones(3, requires_grad=True)\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3))\ns._values().mul_(2)  # SPL104\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] not in ("_values", "_indices") or node.args:
            return
        if write_method(ctx, node) is None:
            return
        t = ctx.tensor(mc[0])
        if t is None or not t.is_coo or t.grad != NONLEAF or t.coalesced is not False:
            return
        what = ctx.code(mc[0])
        ctx.report(self, node,
                   f"write through `{what}.{mc[1]}()` silently changes the tensor it was built from and "
                   "makes backward raise `RuntimeError: one of the variables needed for gradient "
                   "computation has been modified by an inplace operation`",
                   evidence=t.evidence,
                   suggestion="build a new tensor from modified values: `torch.sparse_coo_tensor(i, v * 2, size)`")
