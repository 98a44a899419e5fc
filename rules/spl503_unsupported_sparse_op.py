"""
## What it does
Checks for ops that have no kernel for the sparse layout of their operand at all (they work
on a dense tensor, and on no sparse layout in that argument form): `s.mean()`,
`torch.softmax(s, 1)`, `F.softmax(s, dim=1)`, `s.softmax(1)`, `F.dropout(s)`, `s.reshape(-1)`,
`torch.sigmoid(s)`, comparisons such as `s > 0`, a number added to a sparse tensor
(`s + eps`)... Every spelling of the op is covered: function, method, operator, in-place and
augmented assignment. A number counts whether it is written out or held by a name, an
attribute or a config field (`eps = math.exp(-4)`, `cfg.jitter`); one whose value is not
known is reported only where the op fails for every number the table probes (`s * eps`
works, `s + eps` does not). Sparse gradients are SPL302; ops that exist for another sparse
layout are SPL506; `sparse + dense` is SPL501.

## Why is this bad?
The call raises at this line, typically `NotImplementedError: Could not run 'aten::mean.dim'
with arguments from the 'SparseCPU' backend` (`RuntimeError: reshape is not implemented for
sparse tensors` for `reshape`). The op set is not a hand list: it is the table that
`tools/probe_torch.py` generates by running every public op on sparse inputs under each
supported torch release (`sparselint/data/torch-<release>.json`), and the finding names the
release it was probed on (`target-torch-version` picks the table; the newest by default).

## Example
```python
avg = adj.mean()
att = F.softmax(scores, dim=1)
```

## Use instead
```python
avg = torch.sparse.sum(adj) / adj.numel()
att = torch.sparse.softmax(scores, dim=1)
```
or apply the op to `adj.coalesce().values()`, or to `adj.to_dense()` when it fits in memory.

## Fix safety
No fix: whether implicit zeros count (mean over all entries or over the stored ones) is the
author's call.

## References
- hazard 37 of the catalog in `docs/hazards.md`
- `tools/probe_torch.py`, `sparselint/data/`
"""
from __future__ import annotations

from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule

from ._optable import NO_KERNEL, forward_verdict, layout_text, probed


class UnsupportedSparseOp(Rule):
    code = "SPL503"
    name = "unsupported-sparse-op"
    error = "NotImplementedError: Could not run 'aten::mean.dim' with arguments from the 'SparseCPU' backend"
    when = "line"
    hazards = ("37",)
    valid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\nm = torch.sparse.sum(s) / s.numel()\n",
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\nm = s.to_dense().mean()\n",
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\na = torch.sparse.softmax(s, dim=1)\n",
        "import torch\nimport torch.nn.functional as F\ns = torch.eye(3).to_sparse()\n"
        "y = F.dropout(s, p=0.5, training=False)\n",
    )
    invalid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\nm = s.mean()  # SPL503\n",
        "import torch\nimport torch.nn.functional as F\ns = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "a = F.softmax(s, dim=1)  # SPL503\nb = torch.softmax(s, 1)  # SPL503\nc = s.softmax(1)  # SPL503\n"
        "d = F.dropout(s)  # SPL503\n",
    )
    prefilter = api.SPARSE_SOURCE_TOKENS

    def _check(self, node, ctx) -> None:
        v = forward_verdict(node, ctx)
        if v is None or v.category != NO_KERNEL:
            return
        use = v.use
        ctx.report(self, node, f"{use.spelled} has no kernel for {layout_text(use.fact)} tensor: `{v.error}` "
                   f"at this line {probed(v.version)}",
                   evidence=use.fact.evidence,
                   suggestion="use `torch.sparse.*`, or apply the op to `.coalesce().values()` or `.to_dense()`")

    visit_Call = visit_BinaryOperation = visit_AugAssign = visit_Comparison = _check
    visit_UnaryOperation = visit_Subscript = _check
