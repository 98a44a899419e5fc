"""
## What it does
Checks for an in-place op that leaves a sparse tensor or a sparse gradient unchanged because
it runs on `.data`: `p.grad.data.zero_()`, `p.grad.data.mul_(scale)`, `.add_()`, `.sub_()`,
`.copy_()`, and `*=`, `+=`, `-=` on a name bound to `.data` (`d = p.grad.data; d *= s`).
Only these: `div_()` and `neg_()` on `.data` do change the tensor, and `p.grad.data *= s`
(an augmented assignment to the attribute) stores its result back.

## Why is this bad?
`.data` of a sparse tensor is a new tensor object; `mul_`, `zero_`, `add_`, `sub_` and `copy_`
on it replace its own storage and leave the original as it was. Nothing is raised. A
hand-written zero-grad loop keeps accumulating gradients; gradient scaling never happens.
(Verified with torch 2.13.0 and 2.9.1, on sparse gradients and on sparse parameters.)

## Example
```python
for p in emb.parameters():
    p.grad.data.zero_()
```

## Use instead
```python
for p in emb.parameters():
    p.grad.zero_()  # or: p.grad = None
```

## Fix safety
Safe on gradients: the fix drops `.data`, so the op runs on the gradient itself (a gradient
does not require grad, so no autograd check is involved). Unsafe in a module where a gradient
may be in an autograd graph: a backward asked for a graph of the gradients (`create_graph`,
by keyword, by position or through `**kwargs`), or a gradient is an operand of arithmetic or
an argument of a call (`torch.exp(log_lr) * p.grad` saves it for the backward through the
product). An in-place op on such a gradient makes that backward raise. The fixed line does what it was
written to do and nothing else: the op changes the gradient in place (the same object, also
through any other name bound to it), and an op that torch refuses on a sparse tensor (a
dense argument to `add_` or `copy_`) raised on `.data` too. No name is rebound. No fix is offered on a sparse
parameter, where dropping `.data` would be an in-place op on a leaf (SPL103); wrap the
update in `torch.no_grad()` instead. Nor where `.data` follows a line break or a comment:
dropping it would drop the comment too, or join the lines.

## References
- hazard 53 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.cst.tree import walk
from sparselint.rule import Rule

from ._common import method_call

# In-place ops that do nothing on `.data` of a sparse tensor (torch 2.13.0 and 2.9.1);
# `div_` and `neg_` do change it.
NO_OP_ON_DATA = frozenset({"mul_", "zero_", "add_", "sub_", "copy_"})
_NO_OP_AUGMENTED = (cst.MultiplyAssign, cst.AddAssign, cst.SubtractAssign)


class InplaceOnSparseData(Rule):
    code = "SPL004"
    name = "inplace-on-sparse-data"
    error = "no error: the in-place op changes a detached copy"
    when = "silent"
    hazards = ("53",)
    fix_title = "Apply the op to the gradient itself"
    valid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "for p in emb.parameters():\n    p.grad.zero_()\n",
        "import torch.nn as nn\nlin = nn.Linear(3, 3)\nfor p in lin.parameters():\n    p.grad.data.zero_()\n",
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "for p in emb.parameters():\n    p.grad.data.div_(2)\n    p.grad.data.neg_()\n    p.grad.data *= 2\n",
    )
    invalid = (
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "for p in emb.parameters():\n    p.grad.data.zero_()  # SPL004\n",
        "import torch.nn as nn\nemb = nn.Embedding(10, 3, sparse=True)\n"
        "for p in emb.parameters():\n    g = p.grad.data\n    g *= 0.5  # SPL004\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] not in NO_OP_ON_DATA:
            return
        data = mc[0]
        if isinstance(data, cst.Attribute) and data.attr.value == "data":
            owner = data.value
            t = ctx.tensor(owner)
            if t is None or not t.is_sparse:
                return
            what = ctx.code(owner)
            fix = None
            if t.is_grad and _plain(data.dot):
                # (a backward that keeps the graph of its gradients makes them require grad:
                # an in-place op on one would then be one autograd checks)
                fix = ctx.make_fix(self, [ctx.replace(data, owner)], safe=not _graph_of_gradients(ctx.module))
            ctx.report(self, node,
                       f"`{what}.data.{mc[1]}(...)` on a sparse tensor changes a detached copy; `{what}` is unchanged",
                       evidence=t.evidence, fix=fix,
                       suggestion=f"`{what}.{mc[1]}(...)` (under `torch.no_grad()` for a parameter), or `{what} = None`")
            return
        t = ctx.tensor(data)
        if t is not None and t.is_sparse and t.origin == "data" and isinstance(data, cst.Name):
            ctx.report(self, node, f"`{data.value}` is `.data` of a sparse tensor: `.{mc[1]}(...)` on it changes a "
                       "detached copy; the tensor it came from is unchanged", evidence=t.evidence,
                       suggestion="apply the op to the tensor itself, not to its `.data`")

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        if not isinstance(node.target, cst.Name) or not isinstance(node.operator, _NO_OP_AUGMENTED):
            return
        t = ctx.tensor(node.target)
        if t is None or not t.is_sparse or t.origin != "data":
            return
        op = ctx.code(node.operator).strip()
        ctx.report(self, node, f"`{node.target.value}` is `.data` of a sparse tensor: `{op}` on it changes a "
                   "detached copy; the tensor it came from is unchanged", evidence=t.evidence,
                   suggestion="apply the op to the tensor itself (`p.grad.mul_(s)`), not to its `.data`")


def _plain(dot: cst.Dot) -> bool:
    """The `.` of `.data` sits on its line with nothing around it but spaces: dropping it
    loses no comment and joins no lines."""
    return all(type(w) is cst.SimpleWhitespace and "\\" not in w.value
               for w in (dot.whitespace_before, dot.whitespace_after))


def _graph_of_gradients(module: cst.Module) -> bool:
    """Whether a gradient may be in an autograd graph somewhere in the module, where an
    in-place op on it is one autograd checks: a backward asks for a graph of the gradients
    (`create_graph=`, by keyword, by position or through `**kwargs`), or a gradient is an
    operand of arithmetic or an argument of a call (`torch.exp(log_lr) * p.grad`, which
    saves it for a backward through the product)."""
    for n in walk(module):
        if type(n) is cst.Call:
            func = n.func
            name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
            if name in ("backward", "grad") and (
                    any(a.star == "**" for a in n.args)
                    or len([a for a in n.args if a.keyword is None and not a.star]) > (1 if name == "backward" else 2)):
                return True
            if any(_grad_read(a.value) for a in n.args):
                return True
        elif type(n) is cst.Arg and n.keyword is not None and n.keyword.value == "create_graph":
            if not (type(n.value) is cst.Name and n.value.value == "False"):
                return True
        elif type(n) is cst.BinaryOperation and (_grad_read(n.left) or _grad_read(n.right)):
            return True
    return False


def _grad_read(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Attribute and node.attr.value == "grad"
