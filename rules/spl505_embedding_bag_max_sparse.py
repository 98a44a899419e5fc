"""
## What it does
Checks for `nn.EmbeddingBag(..., mode="max", sparse=True)` and
`F.embedding_bag(..., mode="max", sparse=True)`.

## Why is this bad?
Max pooling has no sparse gradient: the first forward raises `ValueError: max mode does not
support sparse weights`.

## Example
```python
bag = nn.EmbeddingBag(vocab, dim, mode="max", sparse=True)
```

## Use instead
```python
bag = nn.EmbeddingBag(vocab, dim, mode="sum", sparse=True)  # or mode="max", sparse=False
```

## Fix safety
No fix: changing the pooling or dropping sparse gradients changes the model.

## References
- hazard 46 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

_TARGETS = {"torch.nn.EmbeddingBag": 3, "torch.nn.functional.embedding_bag": 5}


class EmbeddingBagMaxSparse(Rule):
    code = "SPL505"
    name = "embedding-bag-max-sparse"
    error = "ValueError: max mode does not support sparse weights"
    when = "line"
    hazards = ("46",)
    # only bags: their `mode` and `sparse` may come from names, a config, a caller
    prefilter = ("EmbeddingBag()", "embedding_bag()")
    valid = (
        "import torch.nn as nn\nbag = nn.EmbeddingBag(10, 3, mode='max')\n",
        "import torch.nn as nn\nbag = nn.EmbeddingBag(10, 3, mode='sum', sparse=True)\n",
    )
    invalid = (
        "import torch.nn as nn\nbag = nn.EmbeddingBag(10, 3, mode='max', sparse=True)  # SPL505\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q not in _TARGETS:
            return
        # literals, or names holding them (a constructor's `pooling` given "max" by its
        # caller), or a `**config` that holds them
        if _option(node, "mode", ctx) != "max" or _option(node, "sparse", ctx) is not True:
            return
        ctx.report(self, node, "`EmbeddingBag` with `mode='max'` and `sparse=True`: the first forward raises "
                   "`ValueError: max mode does not support sparse weights`",
                   suggestion="use `mode='sum'` or `mode='mean'` with sparse gradients, or `sparse=False` with max")


def _option(call: cst.Call, keyword: str, ctx):
    return ctx.argument(call, keyword)
