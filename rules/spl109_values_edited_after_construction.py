"""
## What it does
Checks for an in-place edit of the values tensor a sparse tensor was built from, after the
constructor, while that values tensor is part of an autograd graph and a backward follows:
`adj = torch.sparse_coo_tensor(idx, w, size)` then `w /= w.sum()`, `w.mul_(s)`,
`w.clamp_(0, 1)`.

## Why is this bad?
The constructor's node in the graph refers to the values as they were. The forward sees the
edit (the sparse tensor shares the values' storage), but the gradient flows as if the edit
had not happened: gradients are silently wrong. If the op that produced the values saved them
for its own backward (`torch.sigmoid`, `torch.exp`...), backward raises `RuntimeError: one of
the variables needed for gradient computation has been modified by an inplace operation`
instead.

## Example
```python
w = edge_weight * mask
adj = torch.sparse_coo_tensor(edge_index, w, (n, n))
w /= w.sum()
```

## Use instead
```python
w = edge_weight * mask
w = w / w.sum()  # before the constructor, and out of place
adj = torch.sparse_coo_tensor(edge_index, w, (n, n))
```

## Fix safety
No fix: the edit has to move before the constructor.

## References
- the bad and good fixtures in `fixtures/SPL109/`, proven under torch
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.context import is_inplace_method
from sparselint.analysis.evaluation.facts import NONLEAF
from sparselint.rule import Rule

from ._common import method_call


class ValuesEditedAfterConstruction(Rule):
    code = "SPL109"
    name = "values-edited-after-construction"
    error = "no error: gradients through the sparse tensor use the values before the edit"
    when = "silent"
    hazards = ("beyond-catalog",)
    valid = (
        "import torch\np = torch.ones(3, requires_grad=True)\nw = p * 2\nw = w / w.sum()\n"
        "adj = torch.sparse_coo_tensor(i, w, (3, 3))\ntorch.sparse.sum(adj).backward()\n",
        "import torch\np = torch.ones(3, requires_grad=True)\nw = p * 2\n"
        "adj = torch.sparse_coo_tensor(i, w, (3, 3))\nwith torch.no_grad():\n    w /= 2\n",
    )
    invalid = (
        "import torch\np = torch.ones(3, requires_grad=True)\nw = p * 2\n"
        "adj = torch.sparse_coo_tensor(i, w, (3, 3))\nw /= w.sum()  # SPL109\ntorch.sparse.sum(adj).backward()\n",
    )

    def _check(self, node, target, op: str, ctx) -> None:
        if not ctx.grad_enabled or not isinstance(target, (cst.Name, cst.Attribute)):
            return
        t = ctx.tensor(target)
        if t is None or not t.values_of_sparse or t.grad != NONLEAF or t.layout != "strided":
            return
        if not ctx.backward_follows(node, target):
            return
        what = ctx.code(target)
        ctx.report(self, node, f"`{op}` edits `{what}` in place after a sparse tensor was built from it: the forward "
                   "sees the edit, the gradient does not (silently wrong, or a backward error if the op that made "
                   f"`{what}` saved it)", evidence=t.evidence,
                   suggestion=f"edit `{what}` out of place before building the sparse tensor")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is not None and is_inplace_method(mc[1]):
            self._check(node, mc[0], f".{mc[1]}()", ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        self._check(node, node.target, ctx.code(node.operator).strip(), ctx)
