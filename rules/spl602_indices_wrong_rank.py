"""
## What it does
Checks for `torch.sparse_coo_tensor` whose literal indices are not 2-D (`sparse_dim x nnz`),
for example a batch of index lists stacked into a 3-D tensor.

## Why is this bad?
Construction raises at this line: `RuntimeError: indices must be sparse_dim x nnz, but got:
[2, 2, 3]` (or a `len(size) == sparse_dim + dense_dim` check failure, depending on the size).

## Example
```python
batch = torch.sparse_coo_tensor(indices_batch.permute(0, 2, 1), values_batch, size)  # 3-D indices
```

## Use instead
Build one sparse tensor per batch element, or add the batch index as the first row of
2-D indices: `torch.cat([batch_ids[None], indices], dim=0)` with `size=(batch, n, m)`.

## Fix safety
No fix.

## References
- write-up B blocks 2 and 3 (`fixtures/writeups/`)
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._construction import construction


class IndicesWrongRank(Rule):
    code = "SPL602"
    name = "indices-wrong-rank"
    error = "RuntimeError: indices must be sparse_dim x nnz"
    when = "line"
    hazards = ("B2", "B3")
    prefilter = ("sparse_coo_tensor()",)
    valid = (
        "import torch\ns = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2))\n",
    )
    invalid = (
        "import torch\nidx = torch.tensor([[[0, 1], [1, 2]], [[0, 0], [1, 1]]])\n"
        "s = torch.sparse_coo_tensor(idx, torch.ones(2, 2), (2, 3, 3))  # SPL602\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        c = construction(node, ctx)
        if c is None or c.indices is None or c.indices.shape is None:
            return
        if len(c.indices.shape) != 2:
            ctx.report(self, node, f"indices have shape {list(c.indices.shape)}, not `sparse_dim x nnz`: "
                       "construction raises `RuntimeError: indices must be sparse_dim x nnz` at this line",
                       suggestion="use 2-D indices: one row per sparse dimension, one column per value")
