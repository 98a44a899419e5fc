"""
## What it does
Checks for calls of a custom `torch.autograd.Function` whose `backward` returns, for an
uncoalesced sparse COO input that requires grad, a sparse gradient built on that input's
`_indices()`: one gradient entry for each stored entry, duplicates included.

## Why is this bad?
A sparse gradient is a sum over its entries. Built on the indices of an uncoalesced tensor, it
holds the gradient of a position once for each duplicate stored there, and autograd adds them
up: every duplicated entry is trained with its gradient times the number of its duplicates.
Nothing raises; the same function gives the right gradient once its input is coalesced, so
the error shows only on data with repeated edges.

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
        row, col = adj._indices()
        grad_adj = torch.sparse_coo_tensor(adj._indices(), (grad[row] * x[col]).sum(-1), adj.shape)
        return grad_adj, torch.sparse.mm(adj.t(), grad)

adj = torch.sparse_coo_tensor(edges, weights, size)  # edges repeat, weights is a Parameter
out = SpMM.apply(adj, x)
```

## Use instead
```python
    @staticmethod
    def backward(ctx, grad):
        adj, x = ctx.saved_tensors
        adj = adj.coalesce()
        row, col = adj.indices()
        grad_adj = torch.sparse_coo_tensor(adj.indices(), (grad[row] * x[col]).sum(-1), adj.shape)
        return grad_adj, torch.sparse.mm(adj.t(), grad)
```
(or coalesce the input before the call)

## Fix safety
No fix: the gradient of a custom function is the author's mathematics.

## References
- [Extending torch.autograd](https://pytorch.org/docs/stable/notes/extending.html)
- [Sparse COO tensors: uncoalesced tensors](https://pytorch.org/docs/stable/sparse.html#sparse-uncoalesced-coo-docs)
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._common import custom_function_call, per_input, trainable_sparse_inputs


class CustomGradOnDuplicateEntries(Rule):
    code = "SPL207"
    name = "custom-grad-on-duplicate-entries"
    error = "no error: each duplicated entry gets its gradient once per duplicate"
    when = "silent"
    hazards = ("beyond-catalog",)
    torch_versions = ("2.13.0",)
    valid = (
        # the input is coalesced before the call: its `_indices()` hold no duplicates
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, x):\n"
        "        ctx.save_for_backward(a, x)\n        return torch.sparse.mm(a, x)\n    @staticmethod\n"
        "    def backward(ctx, g):\n        a, x = ctx.saved_tensors\n        r, c = a._indices()\n"
        "        return torch.sparse_coo_tensor(a._indices(), (g[r] * x[c]).sum(-1), a.shape), None\n"
        "w = torch.ones(2, requires_grad=True)\na = torch.sparse_coo_tensor(i, w, (2, 2)).coalesce()\n"
        "y = F.apply(a, torch.ones(2, 3))\ny.sum().backward()\n",
    )
    invalid = (
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, x):\n"
        "        ctx.save_for_backward(a, x)\n        return torch.sparse.mm(a, x)\n    @staticmethod\n"
        "    def backward(ctx, g):\n        a, x = ctx.saved_tensors\n        r, c = a._indices()\n"
        "        return torch.sparse_coo_tensor(a._indices(), (g[r] * x[c]).sum(-1), a.shape), None\n"
        "w = torch.ones(2, requires_grad=True)\na = torch.sparse_coo_tensor(i, w, (2, 2))\n"
        "y = F.apply(a, torch.ones(2, 3))  # SPL207\ny.sum().backward()\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not custom_function_call(node, ctx):
            return
        gradients = per_input(ctx.backward_gradients(node), len(node.args))
        if gradients is None:
            return
        func = node.func
        for _, arg, t, grad in trainable_sparse_inputs(node, ctx, gradients):
            if not t.is_coo or t.coalesced is not False:
                continue
            if grad is None or not getattr(grad, "repeats_duplicates", False) or not grad.is_coo:
                continue
            what = ctx.code(arg.value)
            ctx.report(self, node,
                       f"`{ctx.code(func.value)}.backward` builds the gradient of `{what}`, an uncoalesced sparse "
                       f"tensor that requires grad, on its `_indices()`: a position stored twice gets its gradient "
                       f"twice, and the values there train with a multiplied gradient",
                       evidence=(*t.evidence, *grad.evidence),
                       suggestion=f"coalesce `{what}` before the call, or build the gradient on "
                                  f"`{what}.coalesce().indices()` in `backward`")
            return
