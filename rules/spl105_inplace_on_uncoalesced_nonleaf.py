"""
## What it does
Checks for in-place ops on a sparse tensor fresh from a sparse constructor whose values
require grad (an uncoalesced COO tensor, or a CSR tensor from `torch.sparse_csr_tensor`),
when a backward follows: `s.mul_(2)`, `s.add_(s)`, `s.zero_()`, `s *= 2`.

## Why is this bad?
The constructor's backward saves its own output, so changing the tensor in place bumps its
version counter and the next backward fails: `RuntimeError: one of the variables needed for
gradient computation has been modified by an inplace operation: [torch.sparse.FloatTensor
[3, 3]], which is output 0 of SparseCooTensorWithDimsAndTensors ...` (CSR:
`SparseCompressedTensor`). A coalesced tensor (`s.coalesce().mul_(2)`) and a CSR made with
`dense.to_sparse_csr()` are fine and not flagged.

## Example
```python
s = torch.sparse_coo_tensor(i, v, size)  # v.requires_grad
s.mul_(2)
torch.sparse.sum(s).backward()
```

## Use instead
```python
s = s * 2
```

## Fix safety
Unsafe: the fix rebinds the name to an out-of-place result (`s = s.mul(2)`, and `s = s * (a +
b)` for `s *= a + b`). Other names that alias the old tensor no longer see the change. No fix
for a call inside parentheses (`(s.mul_(2))`), where an assignment cannot go.

## References
- hazards 08, 44 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.context import is_inplace_method
from sparselint.analysis.evaluation.facts import NONLEAF
from sparselint.analysis.cst.names import dotted
from sparselint.rule import Rule

from ._common import OUT_OF_PLACE, describe_layout, method_call

_AUG_TO_BIN = {"*=": "*", "/=": "/", "+=": "+", "-=": "-"}


class InplaceOnUncoalescedNonleaf(Rule):
    code = "SPL105"
    name = "inplace-on-uncoalesced-nonleaf"
    error = ("RuntimeError: one of the variables needed for gradient computation has been modified "
             "by an inplace operation")
    when = "backward"
    hazards = ("08", "44")
    fix_title = "Rebind to an out-of-place result"
    valid = (
        "import torch\nv = torch.ones(3, requires_grad=True)\n"
        "c = torch.sparse_coo_tensor(i, v, (3, 3)).coalesce()\nc.mul_(2)\ntorch.sparse.sum(c).backward()\n",
        "import torch\nw = torch.ones(3, 3, requires_grad=True)\ns = w.to_sparse_csr()\n"
        "s.mul_(2)\ns.to_dense().sum().backward()\n",
    )
    invalid = (
        "import torch\nv = torch.ones(3, requires_grad=True)\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3))\ns.mul_(2)  # SPL105\ntorch.sparse.sum(s).backward()\n",
    )

    def _flagged(self, target, ctx):
        t = ctx.tensor(target)
        if t is None or t.grad != NONLEAF:
            return None
        if t.is_coo and t.coalesced is False and t.origin != "coalesce":
            # a coalesced tensor whose flag an in-place op cleared (`c.mul_(2)`) holds no
            # duplicate entries, and in-place ops on it backpropagate (torch 2.13.0, 2.9.1)
            return t
        if t.is_compressed and t.origin == "constructor":
            return t
        return None

    def _report(self, node, target, op, t, fix, ctx):
        what = ctx.code(target)
        ctx.report(self, node,
                   f"`{op}` on `{what}`, a {describe_layout(t)} tensor fresh from its constructor in an autograd "
                   "graph, makes backward raise `RuntimeError: one of the variables needed for gradient "
                   "computation has been modified by an inplace operation`",
                   evidence=t.evidence, fix=fix, suggestion=f"go out of place: `{what} = {what} * 2` instead of `{what}.mul_(2)`")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or not is_inplace_method(mc[1]) or not ctx.backward_follows(node, mc[0]):
            return
        t = self._flagged(mc[0], ctx)
        if t is None:
            return
        fix = None
        path = dotted(mc[0])
        stmt = ctx.statement
        if path and mc[1] in OUT_OF_PLACE and isinstance(stmt, cst.Expr) and stmt.value is node and not node.lpar:
            # (not inside parentheses: `(s.mul_(2))` would become `(s = s.mul(2))`)
            new = node.with_changes(func=node.func.with_changes(attr=cst.Name(OUT_OF_PLACE[mc[1]])))
            fix = ctx.make_fix(self, [ctx.replace_text(node, f"{path} = {ctx.code(new)}")], safe=False)
        self._report(node, mc[0], f".{mc[1]}()", t, fix, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        if not ctx.backward_follows(node, node.target):
            return
        t = self._flagged(node.target, ctx)
        if t is None:
            return
        op = ctx.code(node.operator).strip()
        path = dotted(node.target)
        fix = None
        if path and op in _AUG_TO_BIN:
            value = ctx.code(node.value)
            if not isinstance(node.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)):
                value = f"({value})"  # `s *= a + b` is `s = s * (a + b)`
            text = f"{path} = {path} {_AUG_TO_BIN[op]} {value}"
            fix = ctx.make_fix(self, [ctx.replace_text(node, text)], safe=False)
        self._report(node, node.target, op, t, fix, ctx)
