"""
## What it does
Checks for item assignment on a sparse tensor or a sparse gradient: `s[0, 1] = 5.0`,
`emb.weight.grad[3] = 0`, `s[i] += 1`.

## Why is this bad?
Sparse tensors of every layout (COO, CSR, CSC, BSR) reject `__setitem__`:
`TypeError: Cannot assign to a sparse tensor` at this line.

## Example
```python
s[0, 1] = 5.0
```

## Use instead
```python
s = s.to_dense().index_put((rows, cols), vals).to_sparse()
```
or concatenate the new indices and values and build a new sparse tensor.

## Fix safety
No fix: densifying may not fit in memory, and the right rewrite depends on the data.

## References
- hazard 11 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._common import describe_layout


class SparseItemAssignment(Rule):
    code = "SPL106"
    name = "sparse-item-assignment"
    error = "TypeError: Cannot assign to a sparse tensor"
    when = "line"
    hazards = ("11",)
    valid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\nd = s.to_dense()\nd[0, 1] = 5.0\n",
    )
    invalid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\ns[0, 1] = 5.0  # SPL106\n",
    )

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        parent = ctx.parent(node)
        if not (isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.AugAssign) and parent.target is node)):
            return
        t = ctx.tensor(node.value)
        if t is None or not t.is_sparse:
            return
        what = ctx.code(node.value)
        ctx.report(self, node,
                   f"item assignment on `{what}`, a {describe_layout(t)} tensor, raises "
                   "`TypeError: Cannot assign to a sparse tensor` at this line",
                   evidence=t.evidence,
                   suggestion="edit a dense copy and convert back, or build a new sparse tensor from new indices and values")
