"""
## What it does
Checks for `torch.nn.utils.clip_grad_norm_`, `clip_grad_value_` or `get_total_norm` over
parameters that get sparse gradients (an `nn.Embedding(sparse=True)` weight or a model that
owns one). `clip_grads_with_norm_` (given the total norm) and `p.grad.norm()` work on sparse
gradients and are not flagged.

## Why is this bad?
The norm and clamp kernels do not exist for sparse tensors. The call raises
`NotImplementedError: Could not run 'aten::linalg_vector_norm' with arguments from the
'SparseCPU' backend` (`'aten::clamp_min_'` for `clip_grad_value_`) at this line, usually
inside the training loop after the first backward.

## Example
```python
loss.backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
```

## Use instead
Clip only the dense parameters, or compute the norm over the coalesced values:
```python
params = [p for p in model.parameters() if p.grad is not None]
norms = [(p.grad.coalesce().values() if p.grad.is_sparse else p.grad).norm() for p in params]
total = torch.stack(norms).norm()
coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
for p in params:
    p.grad.mul_(coef)  # scaling a sparse grad is supported
```

## Fix safety
No fix: the replacement is a loop the author has to own.

## References
- hazards 16, 17 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.analysis.evaluation.facts import Params, Tensor
from sparselint.analysis.evaluation.inference import arg, params_of_tensor
from sparselint.rule import Rule

from ._optim import describe


class ClipGradWithSparseGrads(Rule):
    code = "SPL301"
    name = "clip-grad-with-sparse-grads"
    error = "NotImplementedError: Could not run 'aten::linalg_vector_norm' with arguments from the 'SparseCPU' backend"
    when = "line"
    hazards = ("16", "17")
    prefilter = api.CLIP_TOKENS
    valid = (
        "import torch\nimport torch.nn as nn\nhead = nn.Linear(3, 1)\n"
        "torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)\n",
        "import torch\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "torch.nn.utils.clip_grads_with_norm_(emb.parameters(), 1.0, torch.tensor(2.0))\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "torch.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)  # SPL301\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q not in api.CLIP_FUNCTIONS:
            return
        target = arg(node, 0, "parameters") or arg(node, 0, "tensors")
        fact = ctx.fact(target) if target is not None else None
        op = api.CLIP_FUNCTIONS[q]
        short = q.split(".")[-1]
        grads = [fact] if isinstance(fact, Tensor) else (
            [ctx.tensor(el.value) for el in target.elements] if isinstance(target, (cst.List, cst.Tuple)) else [])
        grad = next((g for g in grads if g is not None and g.is_grad and g.is_coo), None)
        if grad is not None:  # gradients passed themselves (`get_total_norm([p.grad, ...])`)
            ctx.report(self, node, f"`{short}` of a sparse gradient raises `NotImplementedError: Could not run "
                       f"'{op}' with arguments from the 'SparseCPU' backend` at this line", evidence=grad.evidence,
                       suggestion="take each gradient's norm with `g.norm()` (supported) and combine them")
            return
        if isinstance(fact, Tensor) and fact.parameter:
            fact = params_of_tensor(fact, None)
        if not isinstance(fact, Params) or fact.flags.has_sparse is not True:
            return
        ctx.report(self, node,
                   f"`{short}` over parameters with sparse gradients raises `NotImplementedError: Could not run "
                   f"'{op}' with arguments from the 'SparseCPU' backend` at this line ({describe(fact.flags)})",
                   evidence=fact.evidence,
                   suggestion="clip only dense parameters, or compute norms from `p.grad.coalesce().values()` "
                              "and scale with `p.grad.mul_(coef)`")
