"""
## What it does
Checks for `SGD` or `Adagrad` with `weight_decay > 0` applied to parameters that get sparse
gradients (an `nn.Embedding(sparse=True)` weight, or a model that owns one), including
param groups that inherit a non-zero default.

## Why is this bad?
Weight decay adds the dense parameter to the sparse gradient. At `optimizer.step()` SGD
raises `RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead.`
and Adagrad raises `RuntimeError: weight_decay option is not compatible with sparse gradients`.

## Example
```python
opt = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=1e-4)
```

## Use instead
```python
opt = torch.optim.SGD([
    {"params": model.emb.parameters(), "weight_decay": 0.0},
    {"params": model.head.parameters(), "weight_decay": 1e-4},
], lr=0.1)
```

## Fix safety
No fix: which parameters keep their decay is a modelling decision.

## References
- hazards 21, 22 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule

from ._optim import default_weight_decay, groups, optimizer_call, params_of, positive


class WeightDecayWithSparseGrads(Rule):
    code = "SPL402"
    name = "weight-decay-with-sparse-grads"
    error = "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead."
    when = "step"
    hazards = ("21", "22")
    prefilter = api.OPTIMIZER_TOKENS
    valid = (
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "opt = torch.optim.SGD(emb.parameters(), lr=0.1)\n",
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nhead = nn.Linear(3, 1)\n"
        "opt = torch.optim.SGD([{'params': emb.parameters(), 'weight_decay': 0.0},\n"
        "                       {'params': head.parameters()}], lr=0.1, weight_decay=1e-4)\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "opt = torch.optim.Adagrad(emb.parameters(), weight_decay=1e-4)  # SPL402\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = optimizer_call(node, ctx)
        if name not in api.WEIGHT_DECAY_WITH_SPARSE:
            return
        params = params_of(node, ctx)
        if params is None:
            return
        position = 4 if name == "SGD" else 3
        decayed = [p for p, decay in groups(params, default_weight_decay(node, ctx, position))
                   if positive(decay) and p.flags.has_sparse is True]
        if not decayed:
            return
        error = api.WEIGHT_DECAY_WITH_SPARSE[name]
        ctx.report(self, node,
                   f"`{name}` with `weight_decay > 0` on parameters with sparse gradients: `optimizer.step()` "
                   f"raises `{error}`",
                   evidence=decayed[0].evidence,
                   suggestion="put the sparse-gradient parameters in a param group with `weight_decay=0.0`",
                   depends=decayed[0].models, holds=lambda flags: flags.has_sparse is True)
