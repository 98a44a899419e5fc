"""
## What it does
Checks for `torch.optim.SparseAdam` built over parameters of which some are known to get
dense gradients: `SparseAdam(model.parameters())` for a model with an `nn.Linear` beside
its sparse embedding, `SparseAdam(list(emb.parameters()) + list(head.parameters()))`, or the
embedding's weight once a linear layer shares it (`self.out.weight = self.emb.weight`: the
linear layer's matmul makes the shared parameter's gradient dense, and
`named_parameters()` yields it once, as `emb.weight`, so a name filter for "emb" picks it).

## Why is this bad?
Construction succeeds; the first `optimizer.step()` raises `RuntimeError: SparseAdam does not
support dense gradients, please consider Adam instead`.

## Example
```python
opt = torch.optim.SparseAdam(model.parameters(), lr=1e-3)
```

## Use instead
```python
opt_sparse = torch.optim.SparseAdam(model.emb.parameters(), lr=1e-3)
opt_dense = torch.optim.Adam(model.head.parameters(), lr=1e-3)
```

## Fix safety
No fix: the training loop has to step both optimizers.

## References
- hazard 23 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule

from ._optim import classes_called, params_of


class SparseAdamWithDenseGrads(Rule):
    code = "SPL403"
    name = "sparseadam-with-dense-grads"
    error = "RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead"
    when = "step"
    hazards = ("23",)
    prefilter = api.OPTIMIZER_TOKENS
    valid = (
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "opt = torch.optim.SparseAdam(emb.parameters())\n",
        "import torch\nopt = torch.optim.SparseAdam(model.parameters())\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nhead = nn.Linear(3, 1)\n"
        "opt = torch.optim.SparseAdam(list(emb.parameters()) + list(head.parameters()))  # SPL403\n",
        "import torch\nimport torch.nn as nn\n\n\nclass LM(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.emb = nn.Embedding(10, 3, sparse=True)\n"
        "        self.out = nn.Linear(3, 10, bias=False)\n        self.out.weight = self.emb.weight\n\n\n"
        "model = LM()\nemb_params = [p for n, p in model.named_parameters() if n.startswith('emb.')]\n"
        "opt = torch.optim.SparseAdam(emb_params)  # SPL403\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        chosen = [(shown, why, offered) for name, shown, why, offered in classes_called(node, ctx)
                  if name == "SparseAdam"]
        if not chosen:
            return
        params = params_of(node, ctx)
        if params is None or params.flags.has_dense is not True:
            return
        shown, why, offered = chosen[0]
        ctx.report(self, node,
                   f"{shown} over parameters that get dense gradients: `optimizer.step()` raises "
                   "`RuntimeError: SparseAdam does not support dense gradients`",
                   evidence=(*why, *params.evidence),
                   suggestion="give only the sparse-gradient parameters (embeddings) to SparseAdam, the rest to Adam",
                   provisional=offered, depends=params.models, holds=lambda flags: flags.has_dense is True)
