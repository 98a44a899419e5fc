"""
## What it does
Checks for an optimizer other than `SGD` built over a sparse `nn.Parameter` (a parameter
whose tensor is itself sparse, such as `nn.Parameter(torch.sparse_coo_tensor(...))`).

## Why is this bad?
`SparseAdam([p])` raises `ValueError: Sparse params at indices [[0, 0]]: SparseAdam requires
dense parameter tensors` and `Adagrad([p])` raises `RuntimeError: memory format option is
only supported by strided tensors` when they are built; Adam and the others reject the
sparse gradient at `optimizer.step()`. Only SGD steps a sparse parameter (and leaves it
uncoalesced, see SPL001).

## Example
```python
w = nn.Parameter(torch.sparse_coo_tensor(i, v, size).coalesce())
opt = torch.optim.Adagrad([w])
```

## Use instead
```python
values = nn.Parameter(v)  # keep the values as a dense parameter
opt = torch.optim.Adagrad([values])
w = torch.sparse_coo_tensor(i, values, size)  # build the sparse tensor in forward
```

## Fix safety
No fix: the model has to keep its values as a dense parameter instead.

## References
- hazard 24 of the catalog in `docs/hazards.md`; write-up A block 1 (`fixtures/writeups/`; its design is the fix)
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule

from ._optim import optimizer_call, params_of


class OptimizerOverSparseParameter(Rule):
    code = "SPL404"
    name = "optimizer-over-sparse-parameter"
    error = "ValueError: Sparse params at indices [...]: SparseAdam requires dense parameter tensors"
    when = "construct"
    hazards = ("24",)
    prefilter = api.OPTIMIZER_TOKENS
    valid = (
        "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.eye(3).to_sparse())\n"
        "opt = torch.optim.SGD([p], lr=0.1)\n",
        "import torch\nimport torch.nn as nn\nv = nn.Parameter(torch.ones(3))\nopt = torch.optim.Adam([v])\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.eye(3).to_sparse())\n"
        "opt = torch.optim.Adagrad([p], lr=0.1)  # SPL404\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = optimizer_call(node, ctx)
        if name not in api.SPARSE_PARAMETER_ERRORS:
            return
        params = params_of(node, ctx)
        if params is None or params.flags.sparse_param is not True:
            return
        when, error = api.SPARSE_PARAMETER_ERRORS[name]
        at = "when it is built" if when == "construct" else "at `optimizer.step()`"
        ctx.report(self, node,
                   f"`{name}` over a sparse `nn.Parameter` raises `{error}` {at}",
                   evidence=params.evidence, when=when,
                   suggestion="keep the values as a dense `nn.Parameter` and build the sparse tensor in `forward`")
