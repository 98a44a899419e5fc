"""
## What it does
Checks for calls of a custom `torch.autograd.Function` whose `backward` returns `None` in the
place of a sparse input whose values require grad: `SpMM.apply(adj, x)` where `adj` was built
from trainable edge weights and `backward` returns `None, grad_x`.

## Why is this bad?
`None` tells autograd that the input gets no gradient. Nothing raises: the values the sparse
tensor was built from keep `.grad` at `None`, and the optimizer skips them at every step. A
"learned" adjacency, or a sparse weight, never changes.

## Example
```python
class SpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, adj, x):
        ctx.save_for_backward(adj, x)
        return torch.sparse.mm(adj, x)

    @staticmethod
    def backward(ctx, grad):
        adj, x = ctx.saved_tensors
        return None, torch.sparse.mm(adj.t(), grad)

adj = torch.sparse_coo_tensor(edges, weights, size)  # weights is a Parameter
out = SpMM.apply(adj, x)
```

## Use instead
```python
    @staticmethod
    def backward(ctx, grad):
        adj, x = ctx.saved_tensors
        row, col = adj.indices()
        grad_adj = torch.sparse_coo_tensor(adj.indices(), (grad[row] * x[col]).sum(-1), adj.shape)
        return grad_adj, torch.sparse.mm(adj.t(), grad)
```
(with `adj` coalesced before the call, so that `indices()` can be read)

## Fix safety
No fix: the gradient of a custom function is the author's mathematics.

## References
- [Extending torch.autograd](https://pytorch.org/docs/stable/notes/extending.html)
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.cst.syntax import returned_values
from sparselint.diagnostics import Evidence
from sparselint.rule import Rule

from ._common import custom_function_call, trainable_sparse_inputs


class CustomBackwardDropsSparseGrad(Rule):
    code = "SPL204"
    name = "custom-backward-drops-sparse-grad"
    error = "no error: the sparse input's values get no gradient and never train"
    when = "silent"
    hazards = ("beyond-catalog",)
    valid = (
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, x):\n"
        "        return torch.sparse.mm(a, x)\n    @staticmethod\n    def backward(ctx, g):\n        return None, g\n"
        "a = torch.sparse_coo_tensor(i, torch.ones(2), (2, 2))\ny = F.apply(a, torch.ones(2, 2, requires_grad=True))\n"
        "y.sum().backward()\n",
    )
    invalid = (
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, x):\n"
        "        return torch.sparse.mm(a, x)\n    @staticmethod\n    def backward(ctx, g):\n        return None, g\n"
        "w = torch.ones(2, requires_grad=True)\na = torch.sparse_coo_tensor(i, w, (2, 2))\n"
        "y = F.apply(a, torch.ones(2, 2))  # SPL204\ny.sum().backward()\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not custom_function_call(node, ctx):
            return
        returns = returned_values(ctx.autograd_function(node)[1])
        if not returns:
            return
        count = len(node.args)
        for k, arg, t, _ in trainable_sparse_inputs(node, ctx):
            if not all(_none_at(r, k, count) for r in returns):
                continue
            what = ctx.code(arg.value)
            ctx.report(self, node,
                       f"`{ctx.code(node.func.value)}.backward` returns `None` for `{what}`, a sparse tensor whose values "
                       "require grad: autograd gives them no gradient, their `.grad` stays None and the "
                       "optimizer never updates them",
                       evidence=(*t.evidence, Evidence.at(returns[0], f"`backward` returns `None` at position {k}")),
                       suggestion=f"return the gradient of `{what}` from `backward`, or pass `{what}.detach()` "
                                  "if it is not meant to train")
            return


def _none_at(value: cst.BaseExpression, k: int, count: int) -> bool:
    """Whether a returned value gives `None` as the gradient of input `k` of `count`."""
    if isinstance(value, (cst.Tuple, cst.List)):
        elements = value.elements
        if len(elements) != count or any(isinstance(e, cst.StarredElement) for e in elements):
            return False
        value = elements[k].value
    elif count != 1:
        return False
    return isinstance(value, cst.Name) and value.value == "None"
