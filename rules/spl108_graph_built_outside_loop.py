"""
## What it does
Checks for a sparse tensor built from trainable values before a training loop and used
inside it, where the loop calls `.backward()` and never rebuilds the tensor:
`A = torch.sparse_coo_tensor(idx, vals, size)` with `vals.requires_grad`, then
`for step in ...: loss = f(A); loss.backward()`. The same holds for a model whose constructor
builds the tensor once (`self.adj = torch.sparse_coo_tensor(idx, self.edge_weight, size)`)
and whose `forward` reads it, called again after each backward.

## Why is this bad?
The sparse constructor is a node of the autograd graph. The first backward frees that
graph, and the second iteration raises `RuntimeError: Trying to backward through the graph a
second time (or directly access saved tensors after they have already been freed)`. Even
with `retain_graph=True` the tensor would keep the values of the first step.

## Example
```python
A = torch.sparse_coo_tensor(idx, vals, (n, n))
for step in range(epochs):
    loss = (torch.sparse.mm(A, X) - Y).pow(2).mean()
    loss.backward()
```

## Use instead
```python
for step in range(epochs):
    A = torch.sparse_coo_tensor(idx, vals, (n, n))
    loss = (torch.sparse.mm(A, X) - Y).pow(2).mean()
    loss.backward()
```

## Fix safety
No fix: moving the construction into the loop is a change of structure to review.

## References
- hazard 52 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.cst.syntax import assigned_names
from sparselint.analysis.evaluation.facts import NONLEAF
from sparselint.analysis.evaluation.inference import ABSENT
from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule


class GraphBuiltOutsideLoop(Rule):
    code = "SPL108"
    name = "graph-built-outside-loop"
    error = "RuntimeError: Trying to backward through the graph a second time"
    when = "backward"
    hazards = ("52",)
    valid = (
        "import torch\nvals = torch.zeros(4, requires_grad=True)\nfor step in range(3):\n"
        "    A = torch.sparse_coo_tensor(idx, vals, (3, 3))\n    torch.sparse.sum(A).backward()\n",
        "import torch\nvals = torch.zeros(4)\nA = torch.sparse_coo_tensor(idx, vals, (3, 3))\n"
        "for step in range(3):\n    torch.sparse.mm(A, X).sum().backward()\n",
    )
    invalid = (
        "import torch\nvals = torch.zeros(4, requires_grad=True)\nA = torch.sparse_coo_tensor(idx, vals, (3, 3))\n"
        "for step in range(3):\n    loss = torch.sparse.mm(A, X).sum()  # SPL108\n    loss.backward()\n",
    )

    def _check(self, loop, ctx) -> None:
        if not ctx.grad_enabled or not ctx.loop_has_backward(loop):
            return
        if any(_may_retain_graph(call, ctx) for call in ctx.backward_calls_in(loop)):
            return
        rebuilt = ctx.assigned_in(loop)
        reported = set()
        for name in ctx.operands_in(loop.body):
            if name.value in rebuilt or name.value in reported:
                continue
            t = ctx.tensor(name)
            if not _constructed_in_graph(t):
                continue
            reported.add(name.value)
            ctx.report(self, name,
                       f"`{name.value}` is a sparse tensor built from trainable values before this loop; the "
                       "first backward frees its graph and the second iteration raises `RuntimeError: Trying "
                       "to backward through the graph a second time`",
                       evidence=t.evidence,
                       suggestion=f"build `{name.value}` inside the loop (or in `forward`) from the trainable values")

    def _check_held(self, operand: cst.BaseExpression, ctx) -> None:
        """`self.adj` read by a method that runs again after each backward (a model's
        `forward` in a training loop) when the constructor built it from trainable values."""
        if type(operand) is not cst.Attribute or type(operand.value) is not cst.Name or operand.value.value != "self":
            return
        if not ctx.backward_repeats or not ctx.grad_enabled:
            return
        scope = ctx.scope.node if ctx.scope is not None else None
        if not isinstance(scope, cst.FunctionDef) or scope.name.value == "__init__":
            return
        path = f"self.{operand.attr.value}"
        if path in assigned_names(scope.body.body, attributes=True):
            return  # (built again on this call, or cached here: not what the constructor made)
        t = ctx.tensor(operand)
        if not _constructed_in_graph(t) or ctx.computed_on_read(operand):
            return  # (a property's getter builds it again on each read)
        ctx.report(self, operand,
                   f"`{path}` is a sparse tensor the constructor built from trainable values; the first "
                   "backward frees its graph, and the backward after the next call raises `RuntimeError: "
                   "Trying to backward through the graph a second time`",
                   evidence=t.evidence,
                   suggestion=f"build `{path}` in `{scope.name.value}` from the trainable values on each call")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        for a in node.args:
            self._check_held(a.value, ctx)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        self._check_held(node.left, ctx)
        self._check_held(node.right, ctx)

    def visit_For(self, node: cst.For, ctx) -> None:
        self._check(node, ctx)

    def visit_While(self, node: cst.While, ctx) -> None:
        self._check(node, ctx)


def _may_retain_graph(call: cst.Call, ctx) -> bool:
    """A backward call that keeps the graph, or may: `retain_graph` (which defaults to
    `create_graph`) passed by keyword, position or `**mapping` as anything but False."""
    positions = api.BACKWARD_GRAPH_POSITIONS
    retain_at, create_at = positions.get(ctx.qualname(call.func), positions["method"])
    retain = ctx.argument(call, "retain_graph", retain_at)
    if retain is ABSENT or retain is None:
        retain = ctx.argument(call, "create_graph", create_at)
    return retain is not ABSENT and retain is not False


def _constructed_in_graph(t) -> bool:
    """A sparse tensor its constructor built from values in a graph. The constructor's
    backward saves its output; conversions such as `w.to_sparse()` save nothing, and a
    second backward through them works."""
    return t is not None and t.is_sparse and t.grad == NONLEAF and t.origin == "constructor"
