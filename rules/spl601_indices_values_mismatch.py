"""
## What it does
Checks for `torch.sparse_coo_tensor(indices, values, size)` where the literal shapes say the
number of indices columns (nnz) differs from the number of values.

## Why is this bad?
Construction raises `RuntimeError: indices and values must have same nnz, but got nnz from
indices: 1, nnz from values: 2` at this line.

## Example
```python
target = torch.sparse_coo_tensor(torch.tensor([[0], [1]]), torch.tensor([0.5, 0.8]), size=(2, 1))
```

## Use instead
```python
target = torch.sparse_coo_tensor(torch.tensor([[0, 1], [0, 0]]), torch.tensor([0.5, 0.8]), size=(2, 1))
```
Indices are `sparse_dim x nnz`: one column per value.

## Fix safety
No fix: which side is wrong is the author's knowledge.

## References
- write-up A block 1 (`fixtures/writeups/`)
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._construction import construction


class IndicesValuesMismatch(Rule):
    code = "SPL601"
    name = "indices-values-mismatch"
    error = "RuntimeError: indices and values must have same nnz"
    when = "line"
    hazards = ("A1",)
    prefilter = ("sparse_coo_tensor()",)
    valid = (
        "import torch\ns = torch.sparse_coo_tensor(torch.tensor([[0, 1], [0, 0]]), torch.tensor([0.5, 0.8]), (2, 1))\n",
    )
    invalid = (
        "import torch\ns = torch.sparse_coo_tensor(torch.tensor([[0], [1]]), torch.tensor([0.5, 0.8]), (2, 1))  # SPL601\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        c = construction(node, ctx)
        if c is None or c.indices is None or c.values is None:
            return
        ishape, vshape = c.indices.shape, c.values.shape
        if not ishape or not vshape or len(ishape) != 2:
            return
        if ishape[1] != vshape[0]:
            ctx.report(self, node, f"indices hold {ishape[1]} entries (shape {list(ishape)}) but values hold "
                       f"{vshape[0]}: construction raises `RuntimeError: indices and values must have same nnz` "
                       "at this line", suggestion="indices are `sparse_dim x nnz`: one column per value")
