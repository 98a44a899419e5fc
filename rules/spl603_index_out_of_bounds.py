"""
## What it does
Checks for `torch.sparse_coo_tensor` whose literal indices reach past its literal size.

## Why is this bad?
Invariant checks are off by default, so construction accepts it with only a `UserWarning:
Sparse invariant checks are implicitly disabled`. Later `to_dense()` writes out of bounds:
sums come out wrong, and the process can crash with a segmentation fault far from this line.

## Example
```python
s = torch.sparse_coo_tensor(torch.tensor([[0, 1], [0, 2]]), vals, (3, 1))  # column 2 >= 1
```

## Use instead
```python
s = torch.sparse_coo_tensor(torch.tensor([[0, 1], [0, 0]]), vals, (3, 1), check_invariants=True)
```
Pass `check_invariants=True` (or use `torch.sparse.check_sparse_tensor_invariants` in tests)
so a bad index raises `RuntimeError: size is inconsistent with indices` at construction.

## Fix safety
No fix: the right index or size is the author's knowledge.

## References
- hazard 49 of the catalog in `docs/hazards.md`; write-up A block 1 (`fixtures/writeups/`)
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._construction import construction


class IndexOutOfBounds(Rule):
    code = "SPL603"
    name = "index-out-of-bounds"
    error = "no error: out-of-bounds writes later (memory corruption)"
    when = "silent"
    hazards = ("49", "A1")
    prefilter = ("sparse_coo_tensor()",)
    valid = (
        "import torch\ns = torch.sparse_coo_tensor(torch.tensor([[0, 1], [0, 0]]), torch.ones(2), (3, 1))\n",
    )
    invalid = (
        "import torch\ns = torch.sparse_coo_tensor(torch.tensor([[0, 1], [0, 2]]), torch.ones(2), (3, 1))  # SPL603\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        c = construction(node, ctx)
        if c is None or c.indices is None or c.indices.literal is None or c.size is None:
            return
        rows = c.indices.literal
        if c.indices.shape is None or len(c.indices.shape) != 2 or len(rows) > len(c.size):
            return
        if c.values is not None and c.values.shape and c.values.shape[0] != c.indices.shape[1]:
            return  # construction already fails (SPL601); nothing is ever written
        for dim, row in enumerate(rows):
            bad = [i for i in row if isinstance(i, int) and (i >= c.size[dim] or i < 0)]
            if bad:
                ctx.report(self, node, f"index {bad[0]} in dimension {dim} is outside size {c.size[dim]}: torch accepts "
                           "it silently and later writes out of bounds (wrong results or a crash)",
                           suggestion="fix the index or the size, and pass `check_invariants=True`")
                return
