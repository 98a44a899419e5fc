"""
## What it does
Checks for `.data` reads of a tensor that requires grad where the detached copy feeds a sparse
tensor: `torch.sparse_coo_tensor(edges, weight.data, size)` with `weight` an `nn.Parameter`, or
`torch.sparse.mm(adj.data, x)` with `adj` built from trainable values, in a function that
later calls `.backward()` (or is called before one), when nothing else in that scope reads the
tensor in a way that carries its gradient.

## Why is this bad?
`.data` is the same storage with no autograd history: the sparse tensor built from it does not
require grad, and the gradient path to the trainable values is cut without a warning. Backward
runs through the rest of the model, the values' `.grad` stays `None`, and the optimizer skips
them at every step: a "learned" adjacency or sparse weight never changes. When nothing else in
the loss requires grad, backward raises `RuntimeError: element 0 of tensors does not require
grad and does not have a grad_fn` instead.

## Example
```python
def weighted_adjacency(edge_index, edge_weight, num_nodes):
    return torch.sparse_coo_tensor(edge_index, edge_weight.data, (num_nodes, num_nodes))

edge_weight = torch.nn.Parameter(torch.ones(num_edges))
adj = weighted_adjacency(edge_index, edge_weight, n)
loss = model(torch.sparse.mm(adj, x)).mean()
loss.backward()  # edge_weight.grad is None
```

## Use instead
```python
def weighted_adjacency(edge_index, edge_weight, num_nodes):
    return torch.sparse_coo_tensor(edge_index, edge_weight, (num_nodes, num_nodes))
```
(or `edge_weight.detach()` where the weights are not meant to train, which says so)

## Fix safety
No fix: dropping `.data` makes the values train, which changes what the program computes.

## References
- [torch.Tensor.detach](https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html)
- [Autograd mechanics](https://pytorch.org/docs/stable/notes/autograd.html)
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule

from ._common import method_call

# Calls whose arguments are shown or recorded, not computed with: a metric, a log line.
_REPORTING = frozenset({"print", "repr", "str", "format", "len", "float", "int", "bool", "isinstance"})
_REPORTING_METHODS = frozenset({"info", "debug", "warning", "log", "append", "write", "add_scalar", "add_histogram",
                                "format"})


class DataCutsSparseGradient(Rule):
    code = "SPL205"
    name = "data-cuts-sparse-gradient"
    error = "no error: the values read through .data get no gradient and never train"
    when = "silent"
    hazards = ("beyond-catalog",)
    torch_versions = ("2.13.0",)
    valid = (
        # an optimizer-like update under no_grad
        "import torch\nw = torch.nn.Parameter(torch.ones(2))\nadj = torch.sparse_coo_tensor(i, w, (2, 2))\n"
        "torch.sparse.sum(adj).backward()\nwith torch.no_grad():\n"
        "    snapshot = torch.sparse_coo_tensor(i, w.data, (2, 2))\n",
        # the parameter reaches the loss another way too (a straight-through estimate)
        "import torch\nw = torch.nn.Parameter(torch.ones(2))\n"
        "adj = torch.sparse_coo_tensor(i, w.data, (2, 2))\n"
        "(torch.sparse.sum(adj) + w.sum()).backward()\n",
        # a global parameter that another function puts into the loss
        "import torch\nW = torch.nn.Parameter(torch.ones(2))\nx = torch.ones(2, 2, requires_grad=True)\n"
        "def adjacency():\n    return torch.sparse_coo_tensor(i, W.data, (2, 2))\n"
        "def penalty():\n    return W.pow(2).sum()\n"
        "(torch.sparse.mm(adjacency(), x).sum() + penalty()).backward()\n",
        # shown, not computed with
        "import torch\nw = torch.nn.Parameter(torch.ones(2))\nadj = torch.sparse_coo_tensor(i, w, (2, 2))\n"
        "print(adj.data)\ntorch.sparse.sum(adj).backward()\n",
    )
    invalid = (
        "import torch\nw = torch.nn.Parameter(torch.ones(2))\nx = torch.ones(2, 2, requires_grad=True)\n"
        "adj = torch.sparse_coo_tensor(i, w.data, (2, 2))  # SPL205\n"
        "torch.sparse.mm(adj, x).sum().backward()\n",
    )

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        if node.attr.value != "data" or not ctx.grad_enabled or ctx.usage(node) != "read":
            return
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node and _elementwise_of(ctx, parent) is None:
            return  # `w.data.copy_(...)`, `w.data.shape`: a write or a read of metadata
        base = node.value
        t = ctx.tensor(base)
        if t is None or t.requires_grad is not True:
            return
        into = _constructor_taking(ctx, node)
        if into is None and not (t.is_sparse and _computed_with(ctx, node)):
            return
        if into is not None and not _computed_with(ctx, into):
            return
        owner = _owner(base)
        if owner is None or ctx.read_with_grad_elsewhere(owner) or not ctx.backward_follows(node, owner):
            return
        what = ctx.code(base)
        use = f"the sparse tensor built by `{ctx.code(into.func)}(...)`" if into is not None else "what is computed from it"
        ctx.report(self, node,
                   f"`{what}.data` is detached from the graph: no gradient flows from {use} back to `{what}`, "
                   "which requires grad and reaches the loss no other way here; its `.grad` stays None and it "
                   "never trains",
                   evidence=t.evidence,
                   suggestion=f"pass `{what}` itself, or `{what}.detach()` if it is not meant to train")


def _constructor_taking(ctx, node: cst.BaseExpression) -> Optional[cst.Call]:
    """The sparse constructor call that takes this expression, or arithmetic on it, as its
    values, if any."""
    arg = ctx.parent(node)
    while True:
        if isinstance(arg, (cst.BinaryOperation, cst.UnaryOperation)):
            arg = ctx.parent(arg)
            continue
        inner = _elementwise_of(ctx, arg)  # `w.data.exp()`, `torch.sigmoid(w.data)`
        if inner is None:
            break
        arg = ctx.parent(inner)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call) or arg.star:
        return None
    spec = api.SPARSE_CONSTRUCTORS.get(ctx.qualname(call.func) or "")
    if spec is None:
        return None
    if arg.keyword is not None:
        return call if arg.keyword.value == "values" else None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return call if spec[1] < len(positional) and positional[spec[1]] is arg else None


def _elementwise_of(ctx, up: Optional[cst.CSTNode]) -> Optional[cst.Call]:
    """The elementwise call that `up`, the parent of an operand, makes of it, if any."""
    if isinstance(up, cst.Attribute) and up.attr.value in api.DENSE_ELEMENTWISE:
        call = ctx.parent(up)
        return call if isinstance(call, cst.Call) and call.func is up else None
    if isinstance(up, cst.Arg) and not up.star and up.keyword is None:
        call = ctx.parent(up)
        if isinstance(call, cst.Call) and call.args and call.args[0] is up:
            q = ctx.qualname(call.func) or ""
            name = q.rsplit(".", 1)[-1]
            if name in api.DENSE_ELEMENTWISE and q[:len(q) - len(name)] in api.DENSE_ELEMENTWISE_MODULES:
                return call
    return None


def _computed_with(ctx, node: cst.CSTNode) -> bool:
    """The value of this expression goes into a computation, not only into a report of it."""
    here = node
    while True:
        up = ctx.parent(here)
        if up is None or isinstance(up, (cst.SimpleStatementLine, cst.IndentedBlock, cst.Module)):
            return True
        if isinstance(up, (cst.FormattedString, cst.Comparison)):
            return False
        if isinstance(up, cst.Call) and here is not up.func:
            func = up.func
            if isinstance(func, cst.Name) and func.value in _REPORTING:
                return False
            if isinstance(func, cst.Attribute) and func.attr.value in _REPORTING_METHODS:
                return False
        here = up


def _owner(base: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The tensor whose gradient `.data` cuts: `w` in `w.data`, `s` in `s.values().data`."""
    mc = method_call(base)
    if mc is not None:
        return mc[0] if mc[1] == "values" and not base.args else None
    return base if isinstance(base, (cst.Name, cst.Attribute)) else None
