"""
## What it does
Checks for `.grad` read from a sparse tensor that is not a leaf: one built by a sparse
constructor from values that require grad, or by `.coalesce()` / `.to_sparse()` of a tensor
in the graph: `sparse_tensor.grad.values()`. The gradient bound to a name counts as well
when the next read of that name uses it (`g = adj.grad` then `g.coalesce()`); a test of the
name first (`if g is not None:`) keeps the rule silent.

## Why is this bad?
Autograd populates `.grad` only on leaves. On a non-leaf it stays `None` (with a
`UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being
accessed`), and the next attribute access raises
`AttributeError: 'NoneType' object has no attribute 'values'` at this line. The gradient you
want lives on the leaf you built the tensor from: `values.grad`, a dense tensor aligned with
`values`.

## Example
```python
sparse_tensor = torch.sparse_coo_tensor(indices, values, size)  # values.requires_grad
sparse_tensor.sum().backward()
sparse_tensor.grad.values()[0] = 10.0
```

## Use instead
```python
g = values.grad.clone()  # dense, aligned with `values`
g[0] = 10.0
```
or call `sparse_tensor.retain_grad()` before backward.

## Fix safety
No fix: which leaf holds the gradient is a choice for the author.

## References
- hazard 12 of the catalog in `docs/hazards.md`; write-up B blocks 4 and 5 (`fixtures/writeups/`)
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.evaluation.facts import NONLEAF
from sparselint.rule import Rule


class GradOfNonleafSparse(Rule):
    code = "SPL201"
    name = "grad-of-nonleaf-sparse"
    error = "AttributeError: 'NoneType' object has no attribute"
    when = "line"
    hazards = ("12",)
    valid = (
        "import torch\nv = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "s.retain_grad()\ntorch.sparse.sum(s).backward()\nprint(s.grad.coalesce())\n",
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3), requires_grad=True)\n"
        "torch.sparse.sum(s).backward()\nprint(s.grad.coalesce())\n",
        "import torch\nv = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "assert s.grad is None\n",
        "import torch\nv = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, v * 2, (3, 3))\n"
        "torch.sparse.sum(s).backward()\ng = s.grad\nif g is not None:\n    print(g.coalesce())\n",
    )
    invalid = (
        "import torch\nv = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "s.sum().backward()\nprint(s.grad.values())  # SPL201\n",
        "import torch\nv = torch.ones(3, requires_grad=True)\ns = torch.sparse_coo_tensor(i, v * 2, (3, 3))\n"
        "torch.sparse.sum(s).backward()\ng = s.grad  # SPL201\ng = g.coalesce()\n",
    )

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        if node.attr.value != "grad":
            return
        parent = ctx.parent(node)
        dereferenced = (isinstance(parent, cst.Attribute) and parent.value is node) or (
            isinstance(parent, cst.Subscript) and parent.value is node)
        later = None
        if not dereferenced:
            later = _dereferenced_next(node, parent, ctx)
            if later is None:
                return
        elif ctx.usage(parent) == "assign":
            return
        t = ctx.tensor(node.value)
        if t is None or not t.is_sparse or t.grad != NONLEAF or t.retains_grad:
            return
        what = ctx.code(node.value)
        where = "at this line" if later is None else f"at line {ctx.position(later)[0]}, where `{later.value}` is used"
        ctx.report(self, node,
                   f"`{what}` is not a leaf, so `{what}.grad` is None and using it raises "
                   f"`AttributeError: 'NoneType' object has no attribute ...` {where}",
                   evidence=t.evidence,
                   suggestion="read the gradient of the leaf it was built from (`values.grad`), "
                              f"or call `{what}.retain_grad()` before backward")


def _dereferenced_next(node: cst.Attribute, parent, ctx):
    """For `g = adj.grad`, the name `g` where the scope next reads it, when that read takes
    an attribute or an item of it (`g.coalesce()`): no test of `g` comes first, and `g` is
    not bound anew before it. None otherwise."""
    if not (isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)):
        return None
    name = parent.targets[0].target.value
    found = []
    for use, up, grand in ctx.uses_after(name):
        # (in `g = g.coalesce()` the read comes before the new binding)
        rank = 1 if isinstance(up, cst.AssignTarget) else 0
        found.append(((ctx.position(use)[0], rank), use, up))
    if not found:
        return None
    _, use, up = min(found, key=lambda f: f[0])
    if (isinstance(up, cst.Attribute) and up.value is use) or (isinstance(up, cst.Subscript) and up.value is use):
        return use
    return None
