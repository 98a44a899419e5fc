"""
## What it does
Checks for calls of a custom `torch.autograd.Function` whose `backward` returns, in the place
of a sparse input that requires grad, a gradient whose shape is known to differ from that
input's: the incoming gradient `grad_output` (shaped like the output), the gradient meant for
another input, or a product of another shape.

## Why is this bad?
Autograd checks each gradient a custom `backward` returns against the shape of its input. A
gradient the input's shape cannot be broadcast to fails the first `.backward()` through the
function: `RuntimeError: Function SpMMBackward returned an invalid gradient at index 0 - got
[3, 2] but expected shape compatible with [3, 3]`. The check is made only for inputs that
require grad, so the same function runs clean while the sparse tensor is built from constant
values, and breaks the day its values become trainable.

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
        return grad, torch.sparse.mm(adj.t(), grad)  # `grad` is shaped like the output

adj = torch.sparse_coo_tensor(edges, weights, (3, 3))  # weights is a Parameter
out = SpMM.apply(adj, torch.randn(3, 2))
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

from sparselint.analysis.evaluation.facts import Tensor
from sparselint.rule import Rule

from ._common import custom_function_call, per_input, trainable_sparse_inputs


class CustomBackwardMissizesSparseGrad(Rule):
    code = "SPL206"
    name = "custom-backward-missizes-sparse-grad"
    error = "RuntimeError: Function"
    when = "backward"
    hazards = ("beyond-catalog",)
    torch_versions = ("2.13.0",)
    valid = (
        # the sparse input does not require grad: autograd drops what backward returns for it
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, x):\n"
        "        ctx.save_for_backward(a, x)\n        return torch.sparse.mm(a, x)\n    @staticmethod\n"
        "    def backward(ctx, g):\n        a, x = ctx.saved_tensors\n        return g, torch.sparse.mm(a.t(), g)\n"
        "a = torch.sparse_coo_tensor(i, torch.ones(2), (2, 2))\n"
        "y = F.apply(a, torch.ones(2, 3, requires_grad=True))\ny.sum().backward()\n",
        # the output is shaped like the sparse input: the incoming gradient fits it
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, x):\n"
        "        ctx.save_for_backward(a, x)\n        return torch.sparse.mm(a, x)\n    @staticmethod\n"
        "    def backward(ctx, g):\n        a, x = ctx.saved_tensors\n        return g, torch.sparse.mm(a.t(), g)\n"
        "w = torch.ones(2, requires_grad=True)\na = torch.sparse_coo_tensor(i, w, (2, 2))\n"
        "y = F.apply(a, torch.ones(2, 2))\ny.sum().backward()\n",
    )
    invalid = (
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, x):\n"
        "        ctx.save_for_backward(a, x)\n        return torch.sparse.mm(a, x)\n    @staticmethod\n"
        "    def backward(ctx, g):\n        a, x = ctx.saved_tensors\n        return g, torch.sparse.mm(a.t(), g)\n"
        "w = torch.ones(2, requires_grad=True)\na = torch.sparse_coo_tensor(i, w, (2, 2))\n"
        "y = F.apply(a, torch.ones(2, 3))  # SPL206\ny.sum().backward()\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not custom_function_call(node, ctx):
            return
        gradients = per_input(ctx.backward_gradients(node), len(node.args))
        if gradients is None:
            return
        func = node.func
        for k, arg, t, grad in trainable_sparse_inputs(node, ctx, gradients):
            if t.shape is None or not isinstance(grad, Tensor) or grad.shape is None \
                    or _expandable(t.shape, grad.shape):
                continue
            what = ctx.code(arg.value)
            name = f"{ctx.code(func.value).split('.')[-1]}Backward"
            ctx.report(self, node,
                       f"`{ctx.code(func.value)}.backward` returns a gradient of shape {list(grad.shape)} for `{what}`, "
                       f"a sparse tensor of shape {list(t.shape)} that requires grad: backward raises "
                       f"`RuntimeError: Function {name} returned an invalid gradient at index {k} - got "
                       f"{list(grad.shape)} but expected shape compatible with {list(t.shape)}`",
                       evidence=(*t.evidence, *grad.evidence),
                       suggestion=f"return a gradient shaped like `{what}` (a sparse tensor on its indices), or "
                                  f"pass `{what}.detach()` if it is not meant to train")
            return


def _expandable(shape: tuple, target: tuple) -> bool:
    """An input of `shape` can be broadcast to a gradient of shape `target`, which autograd
    then sums back to the input's shape."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))
