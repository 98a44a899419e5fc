"""
## What it does
Checks for `.values()` or `.indices()` on a sparse COO tensor that is known to be
uncoalesced: fresh from `torch.sparse_coo_tensor` (without `is_coalesced=True`), the grad of
`nn.Embedding(sparse=True)`, the grad a sparse leaf gets from `torch.sparse.mm`, or a sparse
parameter after an optimizer step or an in-place update.

A step (SGD adds the gradient into the weight) counts only for a parameter that has a
gradient to add: one left without (frozen, or no backward yet) is skipped, as torch skips
it, and so is one whose gradient is known coalesced. Two ways into one backward (the product
and an L1 term on the weight's `.values()` in a model's method) give a gradient torch sums
and coalesces, and a gradient replaced, coalesced or hooked where the step runs is not the
one backward made: the weight is then not taken as uncoalesced. The weight read after the
step counts wherever it is read, a callback given the model or a method of it included.

In a package, a public function or method is also checked as an entry point: where its own
layout test (`if adj.is_sparse:`, `adj.layout == torch.sparse_coo`, or a helper function that
returns such a test) narrows a parameter to COO, or its docstring says the parameter is a
sparse COO tensor (`adj: sparse COO adjacency`, `:param adj: a sparse COO matrix`, "the
sparse COO matrix ``adj``"), a caller may pass any COO tensor there, the uncoalesced one
straight from `torch.sparse_coo_tensor` included. The finding then names the function and
the test or docstring that admits it. A docstring that speaks of coalescing, an
`assert adj.is_coalesced()` or a test of `is_coalesced()` says otherwise; the
`api-entry-points` setting turns this off.

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
The fix reads through `.coalesce()`: `adj.values()` becomes `adj.coalesce().values()`. It is
unsafe, because the coalesced tensor is not the same list of entries: they are sorted by
index and duplicate entries are merged into one (their values summed). Wherever the result
meets something indexed in the original order, the fixed code runs and computes something
else: in a weighted degree `deg.index_add_(0, row, adj.values())` with `row` taken from the
edge list, each weight lands on another node (and with a duplicate edge the lengths differ
and it raises). There the right rewrite is to coalesce once and read both sides from the
result (`adj = adj.coalesce(); row = adj.indices()[0]`), or to keep the edge list and its
weights and not read them back from the tensor. Even an order-free reduction is not safe in
general: merging changes `.values().norm()`, `.max()`, `.mean()`, `.numel()`, and also
`.values().sum()` (duplicate bool entries merge into one `True`; small integer types wrap
when duplicates are summed; float sums round differently).

The fix is safe only for `.indices().max()` and `.indices().min()`: coalescing keeps the set
of index columns (explicit zeros included), so the largest and smallest index are the same.
Even there it is unsafe when the receiver is not a name its own scope binds (a parameter,
an attribute, a module-level name read in a function): a caller the check does not follow
(`map(max_index, edge_lists)`, a subclass made by a classmethod, a `copy.deepcopy`) may pass
an object of a class with its own `indices()` method, which has no `.coalesce()`.

Where the result is written (`x.values()[0] = 1`, `x.values().mul_(2)`), no fix exists: the
write would land in the temporary copy that `coalesce()` returns. Those get a suggestion.

## References
- hazards 01, 02, 03, 04, 47 of the catalog in `docs/hazards.md`
- https://pytorch.org/docs/stable/sparse.html#uncoalesced-sparse-coo-tensors
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.cst.syntax import parameters_of
from sparselint.analysis.evaluation.inference.effects import ADMITTED, DOCUMENTED
from sparselint.rule import Rule

from ._common import WRITES, method_call


class ValuesOnUncoalesced(Rule):
    code = "SPL001"
    name = "values-on-uncoalesced"
    error = "RuntimeError: Cannot get values on an uncoalesced tensor, please call .coalesce() first"
    # in a package, a public function whose layout test admits a COO parameter is a source too
    # (the test written out, or through the layout helpers graph libraries name so), and so
    # is one whose docstring says a parameter is a sparse COO tensor
    entry_prefilter = (("is_sparse", "sparse_coo", "is_sparse_tensor()", "is_torch_sparse_tensor()", "COO"),
                       ("values()", "indices()"))
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
        "import torch\n"
        "s = torch.sparse_coo_tensor(i, v, (3, 3))\n"
        "n = s.indices().max() + 1  # SPL001\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] not in ("values", "indices") or node.args:
            return
        receiver, method = mc
        t = ctx.tensor(receiver)
        if t is None or not t.is_coo or t.coalesced is not False:
            if t is None and ctx.fact(receiver) is not None and _order_free(node, method, ctx):
                # here the receiver is known to be no tensor (an object of a class with an
                # `indices()` method): `.coalesce()` added for another context would raise
                ctx.fix_unsafe_here(self, node)
            return
        what = ctx.code(receiver)
        message = (f"`{what}.{method}()` on an uncoalesced sparse tensor raises "
                   f"`RuntimeError: Cannot get {method} on an uncoalesced tensor` at this line")
        if t.admitted is not None:
            # a public function: worded as what its contract admits
            function, param, test = t.admitted
            said = "docstring" if isinstance(test, cst.SimpleStatementLine) else "layout test"
            message = (f"`{function}({param})` raises `RuntimeError: Cannot get {method} on an uncoalesced tensor` "
                       f"at this line for an uncoalesced COO `{param}` (any tensor straight from "
                       f"`torch.sparse_coo_tensor`), which the {said} at {_place(test, t, ctx)} admits")
        usage = ctx.usage(node)
        fix = None
        if usage not in WRITES:
            new = node.with_changes(func=node.func.with_changes(
                value=cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("coalesce")))))
            fix = ctx.make_fix(self, [ctx.replace(node, new)],
                               safe=_order_free(node, method, ctx) and _bound_here(receiver, ctx))
        suggestion = (f"read through `{what}.coalesce().{method}()`; its entries are sorted by index with "
                      f"duplicates summed, so pair them only with `{what}.coalesce().{_OTHER[method]}()`, never "
                      "with the index or weights the tensor was built from" if usage not in WRITES else
                      f"coalesce and store first (`g = {what}.coalesce()`), edit `g.{method}()`, "
                      "and assign `g` back; or build a new tensor out of place")
        ctx.report(self, node, message, evidence=t.evidence, fix=fix, suggestion=suggestion)


_OTHER = {"values": "indices", "indices": "values"}
# Reductions of an accessor's result that neither the order of the entries nor the merging of
# duplicate entries can change. Only the largest and smallest index qualify: coalescing keeps
# the set of index columns (explicit zeros included). A sum of the values does not: duplicate
# bool entries merge into one `True`, small integers wrap when merged, and floats round
# differently.
_ORDER_FREE = {"indices": frozenset({"max", "min"})}


def _order_free(node: cst.Call, method: str, ctx) -> bool:
    parent = ctx.parent(node)
    if not isinstance(parent, cst.Attribute) or parent.attr.value not in _ORDER_FREE.get(method, ()):
        return False
    call = ctx.parent(parent)
    return isinstance(call, cst.Call) and call.func is parent and not call.args


def _bound_here(receiver: cst.BaseExpression, ctx) -> bool:
    """The receiver is a name this scope binds itself (not a parameter, an attribute, or a
    name a function reads from its module): no caller, subclass or copy can hand it an
    object without `.coalesce()` that the walk did not see."""
    if type(receiver) is not cst.Name:
        return False
    scope = ctx.scope.node if ctx.scope is not None else None
    if isinstance(scope, cst.FunctionDef):
        return receiver.value not in parameters_of(scope) and not ctx.outer_name(receiver.value)
    return True


def _place(test: cst.CSTNode, t, ctx) -> str:
    """Where the layout test is: a line of this file, or of the module whose entry point
    called into this one (as its evidence says)."""
    line = ctx.position(test)[0]
    if line:
        return f"line {line}"
    placed = ctx.resolve(e for e in t.evidence if e.node is test or e.text.startswith((ADMITTED, DOCUMENTED)))
    return next((e.place for e in placed if e.line), "the entry point")
