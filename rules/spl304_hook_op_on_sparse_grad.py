"""
## What it does
Checks for a gradient hook (`p.register_hook(lambda g: ...)`, or a function of the file passed
by name) on a tensor whose gradient is sparse (the weight of an `nn.Embedding(sparse=True)`, a parameter used with
`F.embedding(..., sparse=True)`) when the hook applies to `g` an op that has no kernel for a
sparse gradient: `g.clamp(-1, 1)`, `torch.clamp(g, ...)`, `g > 0`, `g.masked_fill(...)`...
Which ops, comes from the op table `tools/probe_torch.py` generates for each torch release.

## Why is this bad?
The hook runs inside `backward()`, so the error comes from there, far from the hook:
`NotImplementedError: Could not run 'aten::clamp' with arguments from the 'SparseCPU'
backend`. Ops that scale the gradient (`g * 0.5`, `g.mul(s)`) work.

## Example
```python
emb.weight.register_hook(lambda g: g.clamp(-1, 1))
```

## Use instead
```python
emb.weight.register_hook(lambda g: torch.sparse_coo_tensor(
    g.coalesce().indices(), g.coalesce().values().clamp(-1, 1), g.shape))
```

## Fix safety
No fix: the op has to move to the coalesced values.

## References
- the bad and good fixtures in `fixtures/SPL304/`, proven under torch
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.torchops import optable
from sparselint.diagnostics import Evidence
from sparselint.analysis.evaluation.facts import NOGRAD, Tensor
from sparselint.analysis.torchops.opcall import uses_of_binary, uses_of_call, uses_of_comparison, uses_of_unary
from sparselint.rule import Rule
from sparselint.analysis.cst.syntax import assigned_names
from sparselint.analysis.cst.tree import walk

from ._common import method_call
from ._optable import GRAD, probed, verdict_of_uses


class HookOpOnSparseGrad(Rule):
    code = "SPL304"
    name = "hook-op-on-sparse-grad"
    error = "NotImplementedError: Could not run 'aten::clamp' with arguments from the 'SparseCPU' backend"
    when = "backward"
    hazards = ("beyond-catalog",)
    valid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\nemb.weight.register_hook(lambda g: g * 0.5)\n",
        "import torch.nn as nn\nemb = nn.Embedding(10, 3)\nemb.weight.register_hook(lambda g: g.clamp(-1, 1))\n",
    )
    invalid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "emb.weight.register_hook(lambda g: g.clamp(-1, 1))  # SPL304\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] != "register_hook" or len(node.args) != 1:
            return
        fn = ctx.function_of(node.args[0].value)  # a lambda, or a function passed by name
        if fn is None or len(fn.params.params) != 1 or isinstance(fn.params.star_arg, cst.Param):
            return
        if isinstance(fn, cst.FunctionDef) and fn.params.params[0].name.value in assigned_names(fn.body.body):
            return  # `g = g.coalesce()` first: what later lines apply ops to is another tensor
        owner = ctx.tensor(mc[0])
        if owner is None or owner.grad_layout != "coo":
            return
        name = fn.params.params[0].name.value
        grad = Tensor(layout="coo", coalesced=owner.grad_coalesced, grad=NOGRAD, is_grad=True, origin="grad",
                      evidence=owner.evidence)

        def tensor(n):
            return grad if isinstance(n, cst.Name) and n.value == name else None

        table = optable.active()
        dense_only = _dense_only(fn.body, name)
        for n in walk(fn.body, stop=(cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            if id(n) in dense_only:
                continue
            if isinstance(n, cst.Call):
                found = uses_of_call(n, ctx.qualname, tensor, table.__contains__)
            elif isinstance(n, cst.BinaryOperation):
                found = uses_of_binary(n, tensor)
            elif isinstance(n, cst.Comparison):
                found = uses_of_comparison(n, tensor)
            elif isinstance(n, cst.UnaryOperation):
                found = uses_of_unary(n, tensor)
            else:
                continue
            v = verdict_of_uses(found)
            if v is not None and v.category == GRAD:
                # a function passed by name fails on its own line, where a traceback shows it;
                # the registration is evidence
                at, evidence = node, grad.evidence
                if isinstance(fn, cst.FunctionDef):
                    at = n
                    evidence = (*grad.evidence, Evidence.at(node, f"`{ctx.code(node.args[0].value)}` registered as "
                                                                  f"a gradient hook of `{ctx.code(mc[0])}`"))
                ctx.report(self, at, f"the hook applies {v.use.spelled} to `{name}`, a sparse gradient: the next "
                           f"backward raises `{v.error}` {probed(v.version)}", evidence=evidence,
                           suggestion=f"apply the op to `{name}.coalesce().values()` and rebuild the sparse gradient")
                return


def _dense_only(body: cst.CSTNode, name: str) -> set:
    """Ids of the nodes of a hook's body that run only for a dense gradient: the other
    branch of a layout test of it (`if grad.is_sparse: ... else: <here>`, `a if
    grad.is_sparse else <here>`), and what follows a branch for a sparse one that leaves
    (`if grad.is_sparse: return grad`)."""
    skipped: list = []
    for n in (body, *walk(body, stop=(cst.Lambda, cst.FunctionDef, cst.ClassDef))):
        if isinstance(n, (cst.If, cst.IfExp)):
            sparse = _sparse_test(n.test, name)
            if sparse is None:
                continue
            dense_arm = n.orelse if sparse else n.body
            if dense_arm is not None:
                skipped.append(dense_arm)
        if isinstance(n, (cst.IndentedBlock, cst.Module)):
            lines = list(n.body)
            for i, line in enumerate(lines):
                if (isinstance(line, cst.If) and _sparse_test(line.test, name) is True and line.orelse is None
                        and _leaves(line.body)):
                    skipped.extend(lines[i + 1:])
                    break
    return {id(x) for top in skipped for x in walk(top)}


def _sparse_test(test: cst.BaseExpression, name: str):
    """True for a test that holds for a sparse `name` only (`name.is_sparse`, `name.layout ==
    torch.sparse_coo`, `name.layout != torch.strided`), False for its negation, None for any
    other test."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _sparse_test(test.expression, name)
        return None if inner is None else not inner
    if (isinstance(test, cst.Attribute) and test.attr.value == "is_sparse" and isinstance(test.value, cst.Name)
            and test.value.value == name):
        return True
    if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Attribute)
            and test.left.attr.value == "layout" and isinstance(test.left.value, cst.Name)
            and test.left.value.value == name and isinstance(test.comparisons[0].comparator, cst.Attribute)):
        op = test.comparisons[0].operator
        layout = test.comparisons[0].comparator.attr.value
        if layout not in ("sparse_coo", "strided") or not isinstance(op, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
            return None
        equal = isinstance(op, (cst.Equal, cst.Is))
        return equal if layout == "sparse_coo" else not equal
    return None


def _leaves(block: cst.BaseSuite) -> bool:
    """The block always ends in `return` or `raise`."""
    lines = list(block.body) if isinstance(block, cst.IndentedBlock) else [block]
    last = lines[-1] if lines else None
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    if isinstance(last, cst.SimpleStatementSuite):
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    return False
