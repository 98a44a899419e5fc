"""
## What it does
Checks for reads of `._values()` from a sparse tensor in an autograd graph, in a function
that later calls `.backward()`: `w = adj._values()` where `adj` was built from edge weights
that require grad.

## Why is this bad?
`_values()` returns the raw storage with `requires_grad=False`: the gradient path to the
values the tensor was built from is cut without a warning. If nothing else in the loss
requires grad, backward raises `RuntimeError: element 0 of tensors does not require grad and
does not have a grad_fn`; otherwise the gradient through that path is silently missing.

## Example
```python
adj = torch.sparse_coo_tensor(edges, weights, size)  # weights.requires_grad
w = adj._values()
row_sum = torch.zeros(n).index_add_(0, adj._indices()[0], w)
```

## Use instead
```python
adj = torch.sparse_coo_tensor(edges, weights, size).coalesce()
w = adj.values()
row_sum = torch.zeros(n).index_add(0, adj.indices()[0], w)
```

## Fix safety
No fix: `coalesce()` reorders and merges entries, so every `_indices()` read that pairs
with the values must change with it.

## References
- hazard 51 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.evaluation.facts import NONLEAF
from sparselint.rule import Rule

from ._common import method_call, write_method


_METADATA = frozenset({"numel", "nelement", "shape", "size", "dtype", "device", "dim", "ndim", "is_cuda",
                       "detach", "item", "tolist", "cpu", "numpy"})


class PrivateValuesCutGradient(Rule):
    code = "SPL203"
    name = "private-values-cut-gradient"
    error = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
    when = "backward"
    hazards = ("51",)
    valid = (
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3), requires_grad=True)\n"
        "w = s._values()\ntorch.sparse.sum(s).backward()\n",
        "import torch\nweights = torch.rand(4, requires_grad=True)\n"
        "adj = torch.sparse_coo_tensor(e, weights, (3, 3))\nprint(adj._values())\n",
    )
    invalid = (
        "import torch\nweights = torch.rand(4, requires_grad=True)\n"
        "adj = torch.sparse_coo_tensor(e, weights, (3, 3))\nw = adj._values()  # SPL203\n"
        "w.sum().backward()\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] != "_values" or node.args or not ctx.grad_enabled:
            return
        if write_method(ctx, node) is not None:
            return
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr.value in _METADATA:
            return  # `adj._values().numel()`, `.shape`, `.detach()`: nothing flows into a loss
        t = ctx.tensor(mc[0])
        if t is None or not t.is_coo or t.grad != NONLEAF or not ctx.backward_follows(node, mc[0]):
            return
        what = ctx.code(mc[0])
        ctx.report(self, node,
                   f"`{what}._values()` is detached from the graph: the gradient to the values `{what}` was "
                   "built from is cut (silently, or `RuntimeError: element 0 of tensors does not require "
                   "grad` at backward)",
                   evidence=t.evidence,
                   suggestion=f"`{what} = {what}.coalesce()` and read `{what}.values()` / `{what}.indices()`")
