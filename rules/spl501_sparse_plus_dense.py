"""
## What it does
Checks for an op on a sparse tensor with a dense second operand that torch only supports
with a sparse one: `adj + torch.eye(n)` (the self-loops of a GCN adjacency), `adj - d`,
`torch.add(adj, d)`, `adj.add(d)`, `adj += d`, `adj.sub_(d)`. Which ops, in which spelling,
comes from the op table `tools/probe_torch.py` generates (a call is reported when the dense
second operand fails where a sparse one works).

## Why is this bad?
`sparse + dense` raises `RuntimeError: add(sparse, dense) is not supported. Use add(dense,
sparse) instead.` at this line. (`dense + sparse` works and gives a dense result.) The
finding names the torch release the table was probed on.

## Example
```python
scores = torch.softmax(att + bias, dim=-1)
```

## Use instead
```python
scores = torch.softmax(bias + att, dim=-1)  # dense + sparse: a dense result
```
or, where the sum must stay sparse (a GCN adjacency with self loops, normalised through its
indices and values):
```python
a_hat = (adj + torch.eye(n).to_sparse()).coalesce()
```

## Fix safety
Only `+` and `-` get a fix, and it is unsafe: torch gives no result to keep, so the fix must
choose the layout of the sum, and the wrong choice breaks the code that follows. By default
it puts the dense operand first (`bias + att`, or `-d + adj` for `adj - d`), which is what
torch accepts and gives a dense result, as `att + bias` would if it ran: dense code that
follows (`softmax`, a dense matmul) keeps working. When the sum is bound to a name that later
code in the same scope reads as a sparse tensor (`.indices()`, `.values()`, `.coalesce()`, a
`torch.sparse` function), the fix keeps the sum sparse instead: `(adj + d.to_sparse()).coalesce()`
(coalesced, since a sum of sparse tensors is uncoalesced and its `.indices()` would raise).
Both are unsafe: the dense result of a large sparse operand takes n x n memory, the sparse
result of a dense operand with many non-zeros may be large, and code the fix cannot see (a
caller, another module) may need the other layout. `torch.add`, `.add()`, `.sub()` and the
augmented assignments get no fix, nor does a sum written over lines with a comment inside it,
which the rewrite would drop.

## References
- hazard 26 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule

from ._optable import DENSE_OPERAND, forward_verdict, layout_text, probed


class SparsePlusDense(Rule):
    code = "SPL501"
    name = "sparse-plus-dense"
    error = "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead."
    when = "line"
    hazards = ("26",)
    fix_title = "Convert the dense operand with `.to_sparse()`"
    valid = (
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = torch.eye(3) + adj\n",
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = adj + torch.eye(3).to_sparse()\n",
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = torch.add(torch.eye(3), adj)\n",
    )
    invalid = (
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\na = adj + torch.eye(3)  # SPL501\n",
        "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\nd = torch.eye(3)\n"
        "a = torch.add(adj, d)  # SPL501\nb = adj.add(d)  # SPL501\nadj += d  # SPL501\n",
    )

    def _check(self, node, ctx) -> None:
        v = forward_verdict(node, ctx)
        if v is None or v.category != DENSE_OPERAND:
            return
        use = v.use
        dense = _dense_operand(node, use.op)
        fix = None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)) and (
                "#" not in ctx.code(node)):  # (the rewritten sum would drop a comment inside it)
            fix = ctx.make_fix(self, [ctx.replace(node, _sparse_sum(node) if _used_as_sparse(node, ctx)
                                                  else _dense_sum(node))], safe=False)
        what = f"`{ctx.code(dense)}` is dense" if dense is not None else "the other operand is dense"
        ctx.report(self, node,
                   f"`{ctx.code(use.subject)}` is {layout_text(use.fact)[2:]} and {what}: {use.spelled} with a dense "
                   f"second operand raises `{v.error}` at this line {probed(v.version)}",
                   evidence=use.fact.evidence, fix=fix,
                   suggestion="make the dense operand sparse (`.to_sparse()`), or put the dense tensor first")

    visit_Call = visit_BinaryOperation = visit_AugAssign = _check


# Reading one of these from the sum needs it sparse; a dense sum would raise there.
_SPARSE_ONLY = frozenset({"indices", "values", "_indices", "_values", "coalesce", "is_coalesced", "_nnz",
                          "sparse_dim", "dense_dim"})


def _used_as_sparse(node: cst.BinaryOperation, ctx) -> bool:
    """The sum is bound to a name that later code reads as a sparse tensor (its indices or
    values, or an argument of a `torch.sparse` function)."""
    assign = ctx.parent(node)
    if not isinstance(assign, cst.Assign) or assign.value is not node or len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    for _, parent, grand in ctx.uses_after(target.value):
        if isinstance(parent, cst.Attribute) and parent.attr.value in _SPARSE_ONLY:
            return True
        if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call):
            if (ctx.qualname(grand.func) or "").startswith("torch.sparse."):
                return True
    return False


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation)) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _dense_sum(node: cst.BinaryOperation) -> cst.BaseExpression:
    """`d + s` for `s + d`, `-d + s` for `s - d`: torch adds a sparse tensor into a dense one,
    and the result is dense, as the rule's help says."""
    dense = _parenthesized(node.right)
    if isinstance(node.operator, cst.Subtract):
        dense = cst.UnaryOperation(operator=cst.Minus(), expression=dense)
    return node.with_changes(left=dense, operator=cst.Add(), right=_parenthesized(node.left))


def _sparse_sum(node: cst.BinaryOperation) -> cst.BaseExpression:
    """`(s + d.to_sparse()).coalesce()`: sparse, for code that goes on to read it as sparse. A sum
    of sparse tensors is uncoalesced; without `.coalesce()`, the fix would trade this error for
    SPL001 at the next `.indices()` or `.values()`."""
    summed = node.with_changes(right=cst.Call(func=cst.Attribute(value=_parenthesized(node.right),
                                                                attr=cst.Name("to_sparse"))),
                               lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=summed, attr=cst.Name("coalesce")))


def _dense_operand(node, op: str):
    if isinstance(node, cst.BinaryOperation):
        return node.right
    if isinstance(node, cst.AugAssign):
        return node.value
    if isinstance(node, cst.Call):
        args = [a.value for a in node.args if a.keyword is None]
        at = 0 if op.startswith("Tensor.") else 1  # `a.add(b)` or `torch.add(a, b)`
        return args[at] if at < len(args) else None
    return None
