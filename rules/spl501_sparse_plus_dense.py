"""
## What it does
Checks for a sparse COO tensor on the left of `+` or `-` with a dense tensor on the right:
`adj + torch.eye(n)`, the self-loops of a GCN adjacency.

## Why is this bad?
`sparse + dense` raises `RuntimeError: add(sparse, dense) is not supported. Use add(dense,
sparse) instead.` at this line. (`dense + sparse` works and gives a dense result.)

## Example
```python
a_hat = adj + torch.eye(n)
```

## Use instead
```python
a_hat = (adj + torch.eye(n).to_sparse()).coalesce()  # stays sparse, and coalesced
```

## Fix safety
The fix converts the dense operand with `.to_sparse()`, which keeps the sum sparse as the
author wrote it, and coalesces the sum (a sum of sparse tensors is uncoalesced, so its
`.indices()` and `.values()` would raise). It is marked unsafe: for a dense operand with many
non-zeros, the result is a sparse tensor that may be large.

## References
- hazard 26 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule


class SparsePlusDense(Rule):
    code = "SPL501"
    name = "sparse-plus-dense"
    error = "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead."
    when = "line"
    hazards = ("26",)
    fix_title = "Convert the dense operand with `.to_sparse()`"
    valid = (
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = torch.eye(3) + adj\n",
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = adj + torch.eye(3).to_sparse()\n",
    )
    invalid = (
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = adj + torch.eye(3)  # SPL501\n",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if not isinstance(node.operator, (cst.Add, cst.Subtract)):
            return
        left, right = ctx.tensor(node.left), ctx.tensor(node.right)
        if left is None or not left.is_coo or left.is_grad or right is None or right.layout != "strided":
            return
        right = node.right
        if isinstance(right, (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation)) and not right.lpar:
            right = right.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        summed = node.with_changes(right=cst.Call(func=cst.Attribute(value=right, attr=cst.Name("to_sparse"))),
                                   lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        # A sum of sparse tensors is uncoalesced: without `.coalesce()`, the fix would trade
        # this error for SPL001 at the next `.indices()` or `.values()`.
        new = cst.Call(func=cst.Attribute(value=summed, attr=cst.Name("coalesce")))
        fix = ctx.make_fix(self, [ctx.replace(node, new)], safe=False)
        ctx.report(self, node,
                   f"`{ctx.code(node.left)}` is sparse and `{ctx.code(node.right)}` is dense: sparse + dense raises "
                   "`RuntimeError: add(sparse, dense) is not supported` at this line",
                   evidence=left.evidence, fix=fix,
                   suggestion="make the dense operand sparse (`.to_sparse()`), or put the dense tensor first")
