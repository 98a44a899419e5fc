"""
## What it does
Checks for a sparse COO `nn.Parameter` used in a dense product or reduction: `p @ x`, `torch.mm(p, x)`, `torch.matmul`, `torch.mv`, `torch.addmm`,
`F.linear(x, p)`, `p.sum()`.

## Why is this bad?
The backward of these ops gives the sparse parameter a **dense** (strided) gradient. The
optimizer step then fails: SGD raises `RuntimeError: add(sparse, dense) is not supported.
Use add(dense, sparse) instead.`, `p.grad.values()` raises `RuntimeError: values expected
sparse tensor layout but got Strided`. For a sparse COO leaf that is not a parameter
(`s.requires_grad_()`), the rule reports the `.values()` / `.indices()` read of that dense
gradient, where the error comes.

## Example
```python
out = p @ features
```

## Use instead
```python
out = torch.sparse.mm(p, features)  # keeps p.grad sparse
```

## Fix safety
No fix offered yet: `torch.sparse.mm` needs a 2-D sparse first operand, which is not known
here in general.

## References
- hazard 27 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import torchapi as api
from sparselint.analysis.evaluation.facts import LEAF
from sparselint.rule import Rule

from ._common import method_call

_FUNCS = api.DENSE_GRAD_PRODUCTS - {"@", "sum"}
_SPARSE_ACCESSORS = ("values", "indices")


class DenseGradForSparseParam(Rule):
    code = "SPL504"
    name = "dense-grad-for-sparse-param"
    error = "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead."
    when = "step"
    hazards = ("27",)
    valid = (
        "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.eye(3).to_sparse())\n"
        "y = torch.sparse.mm(p, torch.ones(3, 2))\n",
        "import torch\ns = torch.eye(3).to_sparse()\ny = s @ torch.ones(3, 2)\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.eye(3).to_sparse())\n"
        "y = p @ torch.ones(3, 2)  # SPL504\n",
    )

    def _report(self, node, operand, op, ctx) -> None:
        if not ctx.grad_enabled:
            return
        t = ctx.tensor(operand)
        # CSR/CSC/BSR leaves take a strided grad fine; the hazard is a COO parameter that an
        # optimizer will step (verified on hazard 27).
        if t is None or not t.is_coo or t.grad != LEAF or not t.parameter:
            return
        what = ctx.code(operand)
        ctx.report(self, node,
                   f"`{op}` gives the sparse parameter `{what}` a dense gradient; the optimizer step then raises "
                   "`RuntimeError: add(sparse, dense) is not supported`",
                   evidence=t.evidence, suggestion=f"use `torch.sparse.mm({what}, ...)`, which keeps the gradient sparse")

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if isinstance(node.operator, cst.MatrixMultiply):
            self._report(node, node.left, "@", ctx)
            self._report(node, node.right, "@", ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q in _FUNCS:
            for a in node.args:
                self._report(node, a.value, q.split(".")[-1], ctx)
            return
        mc = method_call(node)
        if mc is not None and q is None and mc[1] == "sum" and not node.args:
            self._report(node, mc[0], ".sum()", ctx)
        elif mc is not None and q is None and mc[1] in _SPARSE_ACCESSORS:
            self._dense_grad_accessor(node, mc[0], mc[1], ctx)

    def _dense_grad_accessor(self, node, receiver, method, ctx) -> None:
        """`s.grad.values()` where `s` is a sparse COO leaf whose grad a dense product made dense."""
        if not (isinstance(receiver, cst.Attribute) and receiver.attr.value == "grad"):
            return
        owner, g = ctx.tensor(receiver.value), ctx.tensor(receiver)
        if owner is None or not owner.is_coo or owner.grad != LEAF or g is None or g.layout != "strided":
            return
        what = ctx.code(receiver)
        ctx.report(self, node, f"`{what}` is dense (a dense product gave the sparse leaf a dense gradient): "
                   f"`.{method}()` raises `RuntimeError: {method} expected sparse tensor layout but got Strided` "
                   "at this line", evidence=g.evidence,
                   suggestion="use `torch.sparse.mm`, which keeps the gradient sparse, or read the dense gradient as it is")
