"""
## What it does
Checks for in-place ops on a sparse leaf that requires grad (a sparse `nn.Parameter`, a
sparse tensor made with `requires_grad=True`) outside `torch.no_grad()`: `p.sub_(lr * p.grad)`,
`p.add_(...)`, `p.zero_()`, `p -= lr * p.grad`.

## Why is this bad?
Autograd forbids in-place changes of a leaf that requires grad:
`RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.`
at this line.

## Example
```python
p.sub_(lr * p.grad)
```

## Use instead
```python
with torch.no_grad():
    p.sub_(lr * p.grad)
p.data = p.data.coalesce()  # the update leaves a sparse p uncoalesced
```

## Fix safety
Unsafe: the fix wraps the statement in `torch.no_grad()`. That is what a manual optimizer
step means, but it also hides the op from autograd, which is wrong if the update was meant
to be differentiated through.

## References
- hazard 10 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.context import is_inplace_method
from sparselint.analysis.evaluation.facts import LEAF
from sparselint.rule import Rule

from ._common import method_call, wrap_in_no_grad


class InplaceOnSparseLeaf(Rule):
    code = "SPL103"
    name = "inplace-on-sparse-leaf"
    error = "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."
    when = "line"
    hazards = ("10",)
    fix_title = "Run the update under `torch.no_grad()`"
    valid = (
        "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.eye(3).to_sparse())\n"
        "with torch.no_grad():\n    p.sub_(0.1 * p.grad)\n",
        "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.eye(3))\np.sub_(1)\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.eye(3).to_sparse())\n"
        "p.sub_(0.1 * p.grad)  # SPL103\n",
        "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.eye(3).to_sparse())\n"
        "p -= 0.1 * p.grad  # SPL103\n",
    )

    def _check(self, node, target, op: str, ctx) -> None:
        if not ctx.grad_enabled:
            return
        t = ctx.tensor(target)
        if t is None or t.grad != LEAF or not t.is_sparse:
            return
        what = ctx.code(target)
        kind = "sparse `nn.Parameter`" if t.parameter else "sparse leaf that requires grad"
        ctx.report(self, node,
                   f"`{op}` on `{what}`, a {kind}, raises `RuntimeError: a leaf Variable that requires "
                   "grad is being used in an in-place operation` at this line",
                   evidence=t.evidence, fix=wrap_in_no_grad(ctx, self, self.fix_title),
                   suggestion="update parameters under `torch.no_grad()` (then `p.data = p.data.coalesce()`)")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is not None and is_inplace_method(mc[1]):
            self._check(node, mc[0], f".{mc[1]}()", ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        op = ctx.code(node.operator).strip()
        self._check(node, node.target, op, ctx)
