"""
## What it does
Checks for `.values()` or `.indices()` on a sparse COO tensor that is known to be
uncoalesced: fresh from `torch.sparse_coo_tensor` (without `is_coalesced=True`), the grad of
`nn.Embedding(sparse=True)`, the grad a sparse leaf gets from `torch.sparse.mm`, or a sparse
parameter after an optimizer step or an in-place update.

## Why is this bad?
Both accessors refuse an uncoalesced tensor: the line raises
`RuntimeError: Cannot get values on an uncoalesced tensor, please call .coalesce() first`
(or `Cannot get indices ...`). The error has nothing to do with autograd; it fires even
when nothing requires grad.

## Example
```python
adj = torch.sparse_coo_tensor(edge_index, edge_weight, (n, n))
deg = torch.zeros(n).index_add_(0, adj.indices()[0], adj.values())
```

## Use instead
```python
adj = torch.sparse_coo_tensor(edge_index, edge_weight, (n, n)).coalesce()
deg = torch.zeros(n).index_add_(0, adj.indices()[0], adj.values())
```
To change the values, build a new tensor out of place:
`torch.sparse_coo_tensor(i, v + delta, size)`.

## Fix safety
Where the result is only read, the fix inserts `.coalesce()` before the accessor, which is
safe. Where the result is written (`x.values()[0] = 1`, `x.values().mul_(2)`) or bound to a
name that may be written later, no safe fix exists: the write would land in the temporary
copy that `coalesce()` returns. Those get the suggestion only (an unsafe fix for a bound name).

## References
- hazards 01, 02, 03, 04, 47 of the catalog in `docs/hazards.md`
- https://pytorch.org/docs/stable/sparse.html#uncoalesced-sparse-coo-tensors
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._common import WRITES, method_call


class ValuesOnUncoalesced(Rule):
    code = "SPL001"
    name = "values-on-uncoalesced"
    error = "RuntimeError: Cannot get values on an uncoalesced tensor, please call .coalesce() first"
    when = "line"
    hazards = ("01", "02", "03", "04", "47")
    fix_title = "Call `.coalesce()` before reading"
    valid = (
        "import torch\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3)).coalesce()\n"
        "print(s.values())\n",
        "import torch\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3), is_coalesced=True)\n"
        "print(s.indices())\n",
        "import torch\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "s = s.coalesce()\n"
        "print(s.values())\n",
    )
    invalid = (
        "import torch\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "print(s.values())  # SPL001\n",
        "import torch.nn as nn\n"
        "emb = nn.Embedding(10, 3, sparse=True)\n"
        "emb(idx).sum().backward()\n"
        "emb.weight.grad.values().mul_(0.5)  # SPL001\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] not in ("values", "indices") or node.args:
            return
        receiver, method = mc
        t = ctx.tensor(receiver)
        if t is None or not t.is_coo or t.coalesced is not False:
            return
        what = ctx.code(receiver)
        message = (f"`{what}.{method}()` on an uncoalesced sparse tensor raises "
                   f"`RuntimeError: Cannot get {method} on an uncoalesced tensor` at this line")
        usage = ctx.usage(node)
        fix = None
        if usage not in WRITES:
            new = node.with_changes(func=node.func.with_changes(
                value=cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("coalesce")))))
            parent = ctx.parent(node)
            bound = isinstance(parent, (cst.Assign, cst.AnnAssign))
            fix = ctx.make_fix(self, [ctx.replace(node, new)], safe=not bound)
        suggestion = (f"read through `{what}.coalesce().{method}()`" if usage not in WRITES else
                      f"coalesce and store first (`g = {what}.coalesce()`), edit `g.{method}()`, "
                      "and assign `g` back; or build a new tensor out of place")
        ctx.report(self, node, message, evidence=t.evidence, fix=fix, suggestion=suggestion)
