"""
## What it does
Checks for adding or copying a dense tensor into a sparse gradient: `p.grad.add_(p.data,
alpha=wd)`, `g.add_(torch.ones_like(...))`, `g.copy_(dense)`, `p.grad = p.grad + wd * p`.
This is hand-written weight decay or gradient noise on an `nn.Embedding(sparse=True)`.

## Why is this bad?
A sparse tensor cannot absorb a dense one: `RuntimeError: add(sparse, dense) is not
supported. Use add(dense, sparse) instead.` (for `copy_`: `copy_() between dense and sparse
Tensors is not implemented!`) at this line. Writing it the other way round,
`wd * p.detach() + p.grad`, runs but turns the gradient dense, which SparseAdam then rejects.

## Example
```python
emb.weight.grad.add_(emb.weight.data, alpha=1e-4)
```

## Use instead
Decay only the rows the gradient touches:
```python
g = emb.weight.grad.coalesce()
rows = g.indices()[0]
values = g.values() + 1e-4 * emb.weight.detach()[rows]
emb.weight.grad = torch.sparse_coo_tensor(g.indices(), values, g.shape)
```

## Fix safety
No fix: the row-wise rewrite changes what is computed for untouched rows.

## References
- hazard 25 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule

from ._common import method_call

_ERRORS = {
    "add_": "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead.",
    "sub_": "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead.",
    "copy_": "RuntimeError: copy_() between dense and sparse Tensors is not implemented!",
}


class DenseIntoSparseGrad(Rule):
    code = "SPL303"
    name = "dense-into-sparse-grad"
    error = "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead."
    when = "line"
    hazards = ("25",)
    prefilter = api.SPARSE_SOURCE_TOKENS
    valid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "emb.weight.grad.add_(emb.weight.grad)\n",
        "import torch.nn as nn\nlin = nn.Linear(3, 3)\nlin(x).sum().backward()\nlin.weight.grad.add_(lin.weight.data)\n",
    )
    invalid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "emb.weight.grad.add_(emb.weight.data, alpha=1e-4)  # SPL303\n",
    )

    def _report(self, node, grad, other, error, ctx) -> None:
        g = ctx.tensor(grad)
        d = ctx.tensor(other)
        if g is None or not g.is_coo or not g.is_grad or d is None or d.layout != "strided":
            return
        what = ctx.code(grad)
        ctx.report(self, node,
                   f"a dense tensor into the sparse gradient `{what}` raises `{error}` at this line",
                   evidence=g.evidence,
                   suggestion="decay only the touched rows: rebuild the gradient from `g.indices()` and "
                              "`g.values() + wd * p.detach()[rows]`")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] not in _ERRORS or not node.args:
            return
        self._report(node, mc[0], node.args[0].value, _ERRORS[mc[1]], ctx)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            self._report(node, node.left, node.right, _ERRORS["add_"], ctx)
