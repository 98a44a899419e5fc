"""
## What it does
Checks for an optimizer that rejects sparse gradients (`Adam`, `AdamW`, `RMSprop`,
`Adadelta`, `Adamax`, `NAdam`, `RAdam`, `ASGD`, `Rprop`, `Adafactor`, and `SGD` or `Adagrad`
with `fused=True`, which reject them with their own messages) built over parameters
that get sparse gradients: the weight of an `nn.Embedding(sparse=True)` or
`nn.EmbeddingBag(sparse=True)`, a model that owns one (also through `nn.ModuleList`,
`nn.Sequential`, `nn.ModuleDict`, subclassing, or a model class defined in another module of
the project), or a parameter used with `F.embedding(..., sparse=True)`. An optimizer class
picked from a table by a key the caller passes (`OPTIMIZERS[opt["optimizer"]](params)`, the
key not tested or set by the function) may be any class the table offers: each one is checked.

## Why is this bad?
The first `optimizer.step()` raises `RuntimeError: Adam does not support sparse gradients,
please consider SparseAdam instead` (`<Name> does not support sparse gradients`), after the
data pipeline has loaded and the first forward and backward have run. The cause is the
line that built the optimizer.

## Example
```python
model = Recommender()  # owns nn.Embedding(..., sparse=True)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
```

## Use instead
```python
sparse_params = list(model.emb.parameters())
dense_params = [p for n, p in model.named_parameters() if not n.startswith("emb.")]
opt_sparse = torch.optim.SparseAdam(sparse_params, lr=1e-3)
opt_dense = torch.optim.Adam(dense_params, lr=1e-3)
```
(or `sparse=False` on the embedding, or SGD / Adagrad, which accept sparse gradients).

## Fix safety
No fix: splitting the parameters and stepping two optimizers changes the training loop.

## References
- hazards 19, 20 of the catalog in `docs/hazards.md`
- https://pytorch.org/docs/stable/generated/torch.optim.SparseAdam.html
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule

from sparselint.analysis.evaluation.inference import arg, literal

from ._optim import classes_called, describe, params_of


class OptimizerRejectsSparseGrads(Rule):
    code = "SPL401"
    name = "optimizer-rejects-sparse-grads"
    error = "RuntimeError: Adam does not support sparse gradients, please consider SparseAdam instead"
    when = "step"
    hazards = ("19", "20")
    prefilter = api.OPTIMIZER_TOKENS
    valid = (
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "opt = torch.optim.SparseAdam(emb.parameters())\n",
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3)\nopt = torch.optim.Adam(emb.parameters())\n",
        "import torch\nopt = torch.optim.Adam(model.parameters())\n",
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "opt = torch.optim.SGD(emb.parameters(), lr=0.1, foreach=True)\n",
        # a linear layer shares the embedding's weight: its matmul makes the gradient dense
        "import torch\nimport torch.nn as nn\n\n\nclass LM(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.emb = nn.Embedding(10, 3, sparse=True)\n"
        "        self.out = nn.Linear(3, 10, bias=False)\n        self.out.weight = self.emb.weight\n\n\n"
        "opt = torch.optim.Adam(LM().parameters())\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "opt = torch.optim.Adam(emb.parameters())  # SPL401\n",
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "opt = torch.optim.SGD(emb.parameters(), lr=0.1, fused=True)  # SPL401\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        fused = literal(arg(node, None, "fused")) is True
        rejecting = [(name, shown, why, offered) for name, shown, why, offered in classes_called(node, ctx)
                     if name in api.REJECTS_SPARSE_GRADS or (fused and name in api.FUSED_REJECTS_SPARSE_GRADS)]
        if not rejecting:
            return
        params = params_of(node, ctx)
        if params is None or params.flags.has_sparse is not True:
            return
        name, shown, why, offered = rejecting[0]
        error = (api.FUSED_REJECTS_SPARSE_GRADS[name] if name not in api.REJECTS_SPARSE_GRADS
                 else f"RuntimeError: {api.REJECTS_SPARSE_GRADS[name]} does not support sparse gradients")
        kind = f"`{name}(fused=True)`" if name not in api.REJECTS_SPARSE_GRADS else shown
        ctx.report(self, node,
                   f"{kind} over parameters with sparse gradients: `optimizer.step()` raises "
                   f"`{error}` ({describe(params.flags)})",
                   evidence=(*why, *params.evidence),
                   suggestion="give the sparse-gradient parameters to `torch.optim.SparseAdam` (or SGD/Adagrad) "
                              f"and the rest to `{name}`",
                   provisional=offered, depends=params.models, holds=lambda flags: flags.has_sparse is True)
