"""
## What it does
Checks for a gradient hook (`p.register_hook(lambda g: ...)`) on a tensor whose gradient is
sparse (the weight of an `nn.Embedding(sparse=True)`, a parameter used with
`F.embedding(..., sparse=True)`) when the hook applies to `g` an op that has no kernel for a
sparse gradient: `g.clamp(-1, 1)`, `torch.clamp(g, ...)`, `g > 0`, `g.masked_fill(...)`...
Which ops, comes from the op table `tools/probe_torch.py` generates for each torch release.

## Why is this bad?
The hook runs inside `backward()`, so the error comes from there, far from the hook:
`NotImplementedError: Could not run 'aten::clamp' with arguments from the 'SparseCPU'
backend`. Ops that scale the gradient (`g * 0.5`, `g.mul(s)`) work.

## Example
```python
emb.weight.register_hook(lambda g: g.clamp(-1, 1))
```

## Use instead
```python
emb.weight.register_hook(lambda g: torch.sparse_coo_tensor(
    g.coalesce().indices(), g.coalesce().values().clamp(-1, 1), g.shape))
```

## Fix safety
No fix: the op has to move to the coalesced values.

## References
- the bad and good fixtures in `fixtures/SPL304/`, proven under torch
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import optable
from sparselint.analysis.evaluation.facts import NOGRAD, Tensor
from sparselint.analysis.torchops.opcall import uses_of_binary, uses_of_call, uses_of_comparison, uses_of_unary
from sparselint.rule import Rule
from sparselint.analysis.cst.tree import walk

from ._common import method_call
from ._optable import GRAD, probed, verdict_of_uses


class HookOpOnSparseGrad(Rule):
    code = "SPL304"
    name = "hook-op-on-sparse-grad"
    error = "NotImplementedError: Could not run 'aten::clamp' with arguments from the 'SparseCPU' backend"
    when = "backward"
    hazards = ("beyond-catalog",)
    valid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb.weight.register_hook(lambda g: g * 0.5)\n",
        "import torch.nn as nn\nemb = nn.Embedding(10, 3)\nemb.weight.register_hook(lambda g: g.clamp(-1, 1))\n",
    )
    invalid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "emb.weight.register_hook(lambda g: g.clamp(-1, 1))  # SPL304\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] != "register_hook" or len(node.args) != 1:
            return
        fn = node.args[0].value
        if not isinstance(fn, cst.Lambda) or len(fn.params.params) != 1:
            return
        owner = ctx.tensor(mc[0])
        if owner is None or owner.grad_layout != "coo":
            return
        name = fn.params.params[0].name.value
        grad = Tensor(layout="coo", coalesced=owner.grad_coalesced, grad=NOGRAD, is_grad=True, origin="grad",
                      evidence=owner.evidence)

        def tensor(n):
            return grad if isinstance(n, cst.Name) and n.value == name else None

        table = optable.active()
        for n in walk(fn.body, stop=(cst.Lambda,)):
            if isinstance(n, cst.Call):
                found = uses_of_call(n, ctx.qualname, tensor, table.__contains__)
            elif isinstance(n, cst.BinaryOperation):
                found = uses_of_binary(n, tensor)
            elif isinstance(n, cst.Comparison):
                found = uses_of_comparison(n, tensor)
            elif isinstance(n, cst.UnaryOperation):
                found = uses_of_unary(n, tensor)
            else:
                continue
            v = verdict_of_uses(found)
            if v is not None and v.category == GRAD:
                ctx.report(self, node, f"the hook applies {v.use.spelled} to `{name}`, a sparse gradient: the next "
                           f"backward raises `{v.error}` {probed(v.version)}", evidence=grad.evidence,
                           suggestion=f"apply the op to `{name}.coalesce().values()` and rebuild the sparse gradient")
                return
