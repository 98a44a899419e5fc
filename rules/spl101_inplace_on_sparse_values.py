"""
## What it does
Checks for in-place writes to `.values()` of a sparse tensor that is part of an autograd
graph (built from values that require grad, or converted from a tensor that does), outside
`torch.no_grad()`: `s.values()[1] += 1`, `s.values().mul_(2)`, `s.values()[:] = 0`, also
through a name that holds them (`vals = s.values()` then `vals.mul_(2)`): it is the same storage.

## Why is this bad?
For a COO tensor the write is accepted silently (`s.grad_fn` becomes `CopySlices`) and the
next backward fails: `NotImplementedError: Could not run 'aten::new_empty_strided' with
arguments from the 'SparseCPU' backend` through `torch.sparse.sum` / `to_dense()` /
`sparse.mm`, or `RuntimeError: unsupported operation: more than one element of the
written-to tensor refers to a single memory location` through `Tensor.sum()` / `s @ d`.
For a CSR tensor the write itself raises `RuntimeError: Sparse CSR tensors do not have strides`.
A COO write is only reported when a backward follows in the same function or loop.

## Example
```python
s = torch.sparse_coo_tensor(i, v, size).coalesce()  # v.requires_grad
s.values()[1] += 1
torch.sparse.sum(s).backward()
```

## Use instead
```python
s = torch.sparse_coo_tensor(s.indices(), s.values() + delta, s.shape)
```
or, for an edit that must not be tracked, `with torch.no_grad(): s.values()[1] += 1`.

## Fix safety
No fix: an out-of-place rebuild depends on what the write means.

## References
- hazards 05, 06, 38, 48 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations


from sparselint.analysis.evaluation.facts import NONLEAF
from sparselint.rule import Rule

from ._common import describe_layout, values_written


class InplaceOnSparseValues(Rule):
    code = "SPL101"
    name = "inplace-on-sparse-values"
    error = "NotImplementedError: Could not run 'aten::new_empty_strided' with arguments from the 'SparseCPU' backend"
    when = "backward"
    hazards = ("05", "06", "38", "48")
    valid = (
        "import torch\nv = torch.ones(3, requires_grad=True)\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3)).coalesce()\n"
        "with torch.no_grad():\n    s.values()[1] += 1\ntorch.sparse.sum(s).backward()\n",
        "import torch\nv = torch.ones(3, requires_grad=True)\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3)).coalesce()\ntorch.sparse.sum(s).backward()\n"
        "s.values().mul_(2)\n",
        "import torch\nw = torch.randn(3, 3, requires_grad=True)\ns = w.to_sparse()\nvals = s.values()\n"
        "vals = vals * 2\nvals.mul_(2)\ntorch.sparse.sum(s).backward()\n",
    )
    invalid = (
        "import torch\nw = torch.randn(3, 3, requires_grad=True)\ns = w.to_sparse()\n"
        "s.values().mul_(2)  # SPL101\ntorch.sparse.sum(s).backward()\n",
        "import torch\nw = torch.randn(3, 3, requires_grad=True)\ns = w.to_sparse()\nvals = s.values()\n"
        "vals[0] *= 2  # SPL101\ntorch.sparse.sum(s).backward()\n",
    )

    def _check(self, node, ctx) -> None:
        if not ctx.grad_enabled:
            return
        w = values_written(ctx, node)
        if w is None:
            return
        t = w.owner
        if t.grad != NONLEAF:
            return
        if t.is_compressed:
            message = (f"in-place write to {w.named} of a {describe_layout(t)} tensor in an autograd graph "
                       "raises `RuntimeError: Sparse CSR tensors do not have strides` at this line")
            when = "line"
        elif t.is_coo and t.coalesced is True and ctx.backward_follows(node, w.subject):
            message = (f"in-place write to {w.named} of a sparse tensor in an autograd graph "
                       "makes the next backward fail (`NotImplementedError: Could not run "
                       "'aten::new_empty_strided' ... 'SparseCPU'` or `RuntimeError: unsupported operation: "
                       "more than one element of the written-to tensor refers to a single memory location`)")
            when = "backward"
        else:
            return
        ctx.report(self, node, message, evidence=w.evidence, when=when,
                   suggestion=f"rebuild out of place from `{w.code} + delta`, or edit under `torch.no_grad()`")

    # `s.values()` written in place, or a name bound to it (`vals.mul_(2)`, `vals[0] *= 2`)
    visit_Call = visit_Name = visit_Attribute = _check
