"""
## What it does
Checks for an op on a sparse tensor with a dense second operand that torch only supports
with a sparse one: `adj + torch.eye(n)` (the self-loops of a GCN adjacency), `adj - d`,
`torch.add(adj, d)`, `adj.add(d)`, `adj += d`, `adj.sub_(d)`. Which ops, in which spelling,
comes from the op table `tools/probe_torch.py` generates (a call is reported when the dense
second operand fails where a sparse one works).

## Why is this bad?
`sparse + dense` raises `RuntimeError: add(sparse, dense) is not supported. Use add(dense,
sparse) instead.` at this line. (`dense + sparse` works and gives a dense result.) The
finding names the torch release the table was probed on.

## Example
```python
a_hat = adj + torch.eye(n)
```

## Use instead
```python
a_hat = (adj + torch.eye(n).to_sparse()).coalesce()  # stays sparse, and coalesced
```

## Fix safety
For `+` and `-`, the fix converts the dense operand with `.to_sparse()`, which keeps the sum
sparse as the author wrote it, and coalesces the sum (a sum of sparse tensors is
uncoalesced, so its `.indices()` and `.values()` would raise). It is marked unsafe: for a
dense operand with many non-zeros, the result is a sparse tensor that may be large. The other
spellings get no fix.

## References
- hazard 26 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._optable import DENSE_OPERAND, forward_verdict, layout_text, probed


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
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = torch.add(torch.eye(3), adj)\n",
    )
    invalid = (
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = adj + torch.eye(3)  # SPL501\n",
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\nd = torch.eye(3)\n"
        "a = torch.add(adj, d)  # SPL501\nb = adj.add(d)  # SPL501\nadj += d  # SPL501\n",
    )

    def _check(self, node, ctx) -> None:
        v = forward_verdict(node, ctx)
        if v is None or v.category != DENSE_OPERAND:
            return
        use = v.use
        dense = _dense_operand(node, use.op)
        fix = None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
            right = node.right
            if isinstance(right, (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation)) and not right.lpar:
                right = right.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            summed = node.with_changes(right=cst.Call(func=cst.Attribute(value=right, attr=cst.Name("to_sparse"))),
                                       lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            # A sum of sparse tensors is uncoalesced: without `.coalesce()`, the fix would trade
            # this error for SPL001 at the next `.indices()` or `.values()`.
            new = cst.Call(func=cst.Attribute(value=summed, attr=cst.Name("coalesce")))
            fix = ctx.make_fix(self, [ctx.replace(node, new)], safe=False)
        what = f"`{ctx.code(dense)}` is dense" if dense is not None else "the other operand is dense"
        ctx.report(self, node,
                   f"`{ctx.code(use.subject)}` is {layout_text(use.fact)[2:]} and {what}: {use.spelled} with a dense "
                   f"second operand raises `{v.error}` at this line {probed(v.version)}",
                   evidence=use.fact.evidence, fix=fix,
                   suggestion="make the dense operand sparse (`.to_sparse()`), or put the dense tensor first")

    visit_Call = visit_BinaryOperation = visit_AugAssign = _check


def _dense_operand(node, op: str):
    if isinstance(node, cst.BinaryOperation):
        return node.right
    if isinstance(node, cst.AugAssign):
        return node.value
    if isinstance(node, cst.Call):
        args = [a.value for a in node.args if a.keyword is None]
        at = 0 if op.startswith("Tensor.") else 1  # `a.add(b)` or `torch.add(a, b)`
        return args[at] if at < len(args) else None
    return None
