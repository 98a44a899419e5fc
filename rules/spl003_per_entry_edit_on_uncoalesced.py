"""
## What it does
Checks for per-entry edits through `._values()` of a sparse tensor known to be uncoalesced,
such as the gradient of `nn.Embedding(sparse=True)`: `emb.weight.grad._values().clamp_(-1, 1)`,
`g._values()[0] = 10.0`.

## Why is this bad?
An uncoalesced tensor may hold several entries for one index (an embedding row looked up
twice has two). `._values()` skips the coalesced check of `.values()`, so the edit runs on
each duplicate entry: clamping every entry to 1 still leaves the row's gradient at 2, and
writing 10 into one entry gives 11. Nothing is raised; the result is silently wrong.
Uniform scaling (`mul_`, `div_`, `neg_`, `zero_`) is not flagged: it is correct on duplicates.

## Example
```python
emb.weight.grad._values().clamp_(-1, 1)
```

## Use instead
```python
emb.weight.grad = emb.weight.grad.coalesce()
emb.weight.grad._values().clamp_(-1, 1)
```

## Fix safety
Unsafe, on a gradient attribute (`p.grad._values().clamp_(...)`): the fix stores the
coalesced gradient first (`p.grad = p.grad.coalesce()`; summing duplicates does not change the
gradient it represents), so the edit then applies per index, as the author meant. But the
edit then reaches only the new gradient: whatever else holds the old one (a list of gradients
a helper collected, a hook that kept it, another model whose `.grad` is the same tensor) keeps
the unedited entries, and such holders cannot all be seen. No fix is offered
through a name bound to a gradient (`g = p.grad`): `g = g.coalesce()` would bind `g` to a
copy, and the edit would never reach `p.grad`; coalesce `p.grad` before binding the name. No
fix is offered for other tensors.

Coalescing sorts the entries by index, so the fix is offered only for an edit that is the
same for every entry: an in-place method whose arguments are Python numbers
(`clamp_(-1.0, 1.0)`). A write by position or mask (`_values()[0] = 10.0`) or with a tensor
lined up with the old order would land on other entries, and gets no fix. Nor does an edit
where the inserted line could not run just before it (a comprehension's variable, an arm of
a conditional expression, a lambda's body). An earlier use that hands the gradient on
(`g = p.grad`) is one such holder: `g` would keep the old gradient.

## References
- hazard 13 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.evaluation.facts import NONLEAF
from sparselint.rule import Rule

from ._common import LINEAR_INPLACE, coalesce_first, method_call, write_method


class PerEntryEditOnUncoalesced(Rule):
    code = "SPL003"
    name = "per-entry-edit-on-uncoalesced"
    error = "no error: the edit applies to each duplicate entry"
    when = "silent"
    hazards = ("13",)
    fix_title = "Coalesce the gradient before editing its entries"
    valid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "emb.weight.grad._values().mul_(0.5)\n",
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "g = emb.weight.grad.coalesce()\ng._values().clamp_(-1, 1)\n",
    )
    invalid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb(i).sum().backward()\n"
        "emb.weight.grad._values().clamp_(-1, 1)  # SPL003\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] != "_values" or node.args:
            return
        receiver = mc[0]
        t = ctx.tensor(receiver)
        if t is None or not t.is_coo or t.coalesced is not False or t.grad == NONLEAF:
            return
        op = write_method(ctx, node)
        if op is None or op in LINEAR_INPLACE:
            return
        what = ctx.code(receiver)
        edit = "item assignment" if op == "[]=" else f"`{op}`"
        # Only on the gradient attribute itself: for a name bound to it (`g = p.grad`), `g = g.coalesce()`
        # would rebind the name to a copy and the edit would never reach `p.grad`.
        grad_attribute = isinstance(receiver, cst.Attribute) and receiver.attr.value == "grad"
        # Coalescing sorts the entries: a write by position or mask (`[0] = ...`) or with a
        # tensor lined up with the old order would then land on other entries.
        fix = None
        if t.is_grad and grad_attribute and op != "[]=" and _scalar_arguments(ctx.inplace_call(node), ctx):
            fix = coalesce_first(ctx, self, receiver, receiver, self.fix_title)
        ctx.report(self, node,
                   f"{edit} on `{what}._values()` of an uncoalesced tensor applies to each duplicate "
                   "entry, not to each index: the result is silently wrong",
                   evidence=t.evidence, fix=fix,
                   suggestion=f"coalesce first: `{what} = {what}.coalesce()`")


def _scalar_arguments(call, ctx) -> bool:
    """Every argument of the in-place call is a Python number: the edit is the same for
    each entry, whatever order the entries are in."""
    if call is None:
        return False
    for arg in call.args:
        expr = arg.value
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            expr = expr.expression
        value = ctx.value(expr)
        if arg.star or isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
    return True
