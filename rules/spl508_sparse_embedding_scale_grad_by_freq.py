"""
## What it does
Checks for an embedding with sparse gradients that also scales its gradient by word
frequency: `nn.Embedding(..., sparse=True, scale_grad_by_freq=True)`, the same on
`nn.EmbeddingBag`, `Embedding.from_pretrained`, and `F.embedding(..., sparse=True,
scale_grad_by_freq=True)`.

## Why is this bad?
The forward runs; the first backward raises `RuntimeError: embedding_backward:
scale_grad_by_freq not supported with sparse gradients` (torch 2.13.0 and 2.9.1).

## Example
```python
emb = nn.Embedding(vocab, dim, sparse=True, scale_grad_by_freq=True)
```

## Use instead
```python
emb = nn.Embedding(vocab, dim, sparse=True)  # or scale_grad_by_freq with dense gradients
```

## Fix safety
No fix: dropping either option changes the training.

## References
- the bad and good fixtures in `fixtures/SPL508/`, proven under torch
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.analysis.evaluation.facts import Callee
from sparselint.analysis.evaluation.inference import ABSENT
from sparselint.rule import Rule

_TARGETS = set(api.EMBEDDINGS) | set(api.FUNCTIONAL_EMBEDDINGS)


class SparseEmbeddingScaleGradByFreq(Rule):
    code = "SPL508"
    name = "sparse-embedding-scale-grad-by-freq"
    error = "RuntimeError: embedding_backward: scale_grad_by_freq not supported with sparse gradients"
    when = "backward"
    hazards = ("beyond-catalog",)
    # the flag written out; files that only name the parameter (torch's own embedding code) are not parsed
    prefilter = ("scale_grad_by_freq=True",)
    valid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n",
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, scale_grad_by_freq=True)\n",
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True, scale_grad_by_freq=False)\n",
    )
    invalid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True, scale_grad_by_freq=True)  # SPL508\n",
        "import torch.nn.functional as F\ny = F.embedding(i, w, sparse=True, scale_grad_by_freq=True)  # SPL508\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q not in _TARGETS:
            return
        # `Emb(10, 3)` of `Emb = functools.partial(nn.Embedding, sparse=True, ...)`, also held
        # in a table (`EMBEDDINGS["glove"](weights)`)
        held = ctx.fact(node.func)
        stored = dict(held.keywords) if isinstance(held, Callee) and held.target == q else {}

        def given(keyword):
            value = ctx.argument(node, keyword)
            return stored.get(keyword, value) if value is ABSENT else value
        if given("sparse") is not True or given("scale_grad_by_freq") is not True:
            return
        if q.endswith("from_pretrained") and given("freeze") is not False:
            return  # frozen: no gradient, no backward through the weight
        ctx.report(self, node, "sparse gradients with `scale_grad_by_freq=True`: the first backward raises "
                   "`RuntimeError: embedding_backward: scale_grad_by_freq not supported with sparse gradients`",
                   suggestion="drop `scale_grad_by_freq`, or use dense gradients (`sparse=False`)")
