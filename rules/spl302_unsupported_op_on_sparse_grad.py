"""
## What it does
Checks for ops that have no kernel for sparse COO tensors applied to a sparse gradient
(SPL503 covers other sparse tensors): `clamp`/`clamp_`/`clip`, `clamp_min`/`clamp_max`,
`max`/`min`, `masked_fill(_)`, `torch.isfinite`/`isnan`/`isinf`, and comparisons such as
`g > 0`.

## Why is this bad?
Each raises `NotImplementedError: Could not run 'aten::clamp_' with arguments from the
'SparseCPU' backend` (or `'aten::gt.Scalar'`, `'aten::ne.Scalar'`, `'aten::max'` ...) at
this line. Gradient-clipping and NaN-guard code written for dense models hits this first.
What does work on a sparse gradient: `mul_`, `div_`, `zero_`, `add_` of another sparse
tensor, `norm()`, `abs()`, `sign()`, `pow`, `sum()`, `to_dense()`, `torch.nan_to_num`.

## Example
```python
emb.weight.grad.clamp_(-1, 1)
ok = torch.isfinite(emb.weight.grad).all()
```

## Use instead
```python
g = emb.weight.grad.coalesce()
g.values().clamp_(-1, 1)
emb.weight.grad = g
ok = torch.isfinite(g.values()).all()
```

## Fix safety
No fix: the op has to move to the coalesced values, and the result must be stored back.

## References
- hazards 15, 18 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint import torchapi as api
from sparselint.rule import Rule

from ._common import method_call

_FUNCTIONS = {f"torch.{name}": op for name, op in api.NO_SPARSE_KERNEL.items() if not name.endswith("_")}


class UnsupportedOpOnSparseGrad(Rule):
    code = "SPL302"
    name = "unsupported-op-on-sparse-grad"
    error = "NotImplementedError: Could not run 'aten::clamp_' with arguments from the 'SparseCPU' backend"
    when = "line"
    hazards = ("15", "18")
    prefilter = api.SPARSE_SOURCE_TOKENS
    valid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "emb.weight.grad.mul_(0.5)\nprint(emb.weight.grad.norm())\n",
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "if emb.weight.grad is not None:\n    pass\n",
    )
    invalid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "emb.weight.grad.clamp_(-1, 1)  # SPL302\n",
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "bad = (emb.weight.grad > 1).any()  # SPL302\n",
    )

    def _report(self, node, operand, op, ctx) -> None:
        t = ctx.tensor(operand)
        if t is None or not t.is_coo or not t.is_grad:
            return  # on other sparse tensors this is SPL503
        what = ctx.code(operand)
        kind = "a sparse gradient"
        ctx.report(self, node,
                   f"`{what}` is {kind}; this op raises `NotImplementedError: Could not run '{op}' with "
                   "arguments from the 'SparseCPU' backend` at this line",
                   evidence=t.evidence,
                   suggestion=f"work on the coalesced values: `g = {what}.coalesce()`, edit `g.values()`, store `g` back")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q in _FUNCTIONS and node.args:
            self._report(node, node.args[0].value, _FUNCTIONS[q], ctx)
            return
        mc = method_call(node)
        if mc is not None and q is None and mc[1] in api.NO_SPARSE_KERNEL:
            self._report(node, mc[0], api.NO_SPARSE_KERNEL[mc[1]], ctx)

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        if len(node.comparisons) != 1:
            return
        op = api.COMPARISON_KERNELS.get(type(node.comparisons[0].operator).__name__)
        if op is None:
            return
        self._report(node, node.left, op, ctx)
