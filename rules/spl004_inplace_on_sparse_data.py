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
Safe on gradients that no autograd graph can hold: the fix drops `.data`, so the op runs on
the gradient itself. It is unsafe where a gradient may be in a graph, in the module or in a
project module it imports, since an in-place op on one is then one autograd checks and the
backward through that graph raises:
- a backward asks for a graph of the gradients (`create_graph`, by keyword, by position or
  through `**kwargs`), or a hook is registered that may return a gradient computed in one;
- the op's argument is not a number or a tensor known to need no grad
  (`mul_(log_lr.exp())` would put the gradient itself into a graph);
- a gradient is read anywhere but where it surely is not saved for a backward. Those places
  are: a store to it, an `is None` test, `.data` and properties of it, `print`, an in-place
  op, and a method that gives a number or a new tensor, called with no tensor argument. A
  name bound to a gradient (`g = p.grad`) counts only where every use of it is one of these.
  `torch.exp(log_lr) * p.grad`, `p.grad.mul(w)` and `g = p.grad; g * scale` all save it,
  and `getattr(p, "grad")` (or a `getattr` whose name is not written out) is such a read;
- a gradient is stored from elsewhere (`p.grad = g`, `p.grad = t.requires_grad_()`): what
  else holds that tensor, or whether it is a leaf that requires grad, is not known;
- the gradient's owner is not an object this file builds: `self.emb.weight.grad` in a
  method, or the gradients of a model a function is passed. A caller in another module may
  have saved that gradient for a backward of its own.

The fixed line does what it was written to do and nothing else: the op changes the gradient
in place (the same object, also through any other name bound to it), and an op that torch
refuses on a sparse tensor (a dense argument to `add_` or `copy_`) raised on `.data` too. No
name is rebound, and a receiver in parentheses keeps them. No fix is offered on a sparse
parameter, where dropping `.data` would be an in-place op on a leaf (SPL103); wrap the
update in `torch.no_grad()` instead. Nor where `.data` follows a line break or a comment:
dropping it would drop the comment too, or join the lines.

## References
- hazard 53 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from sparselint.analysis.cst.names import dotted
from sparselint.analysis.cst.syntax import parameters_of
from sparselint.analysis.cst.tree import walk
from sparselint.analysis.evaluation.facts import NOGRAD, Const, Scalar, Tensor
from sparselint.analysis.evaluation.inference.values import is_number
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
                # (where a gradient may be in an autograd graph, an in-place op on it is one
                # autograd checks, and the backward through that graph may then raise)
                safe = _plain_operands(node, ctx) and _owner_built_here(owner, ctx) and not any(
                    _graph_of_gradients(m) for m in (ctx.module, *ctx.imported_modules()))
                fix = ctx.make_fix(self, [ctx.replace(data, owner)], safe=safe)
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


def _plain_operands(call: cst.Call, ctx) -> bool:
    """Every argument of the in-place op is a number, or a tensor known to need no grad:
    one that does (`mul_(log_lr.exp())`) would put the gradient itself into a graph."""
    for a in call.args:
        if a.star or is_number(a.value):
            continue
        f = ctx.fact(a.value)
        if isinstance(f, Scalar) or (isinstance(f, Const) and isinstance(f.value, (int, float))):
            continue
        if isinstance(f, Tensor) and f.grad == NOGRAD:
            continue
        return False
    return True


def _owner_built_here(grad: cst.BaseExpression, ctx) -> bool:
    """The gradient belongs to an object this file binds itself (`model = Rec()` in the
    function, a module-level name), so no caller in another module can have saved that
    gradient for a backward of its own: not `self.emb.weight.grad`, nor the `.grad` of a
    parameter the function was passed or of one drawn from a model it was passed."""
    holder = grad.value if isinstance(grad, cst.Attribute) and grad.attr.value == "grad" else grad
    path = dotted(holder)
    if path is None:
        return False
    root = path.split(".")[0]
    scope = ctx.scope.node if ctx.scope is not None else None
    if not isinstance(scope, cst.FunctionDef):
        return True
    if any(isinstance(n, (cst.For, cst.CompFor)) and any(isinstance(x, cst.Name) and x.value == root
                                                         for x in walk(n.target)) for n in walk(scope.body)):
        # a loop variable: a parameter drawn from a model (`for p in model.parameters()`)
        held = ctx.tensor(cst.Name(root))
        model = held.model if held is not None else None
        if not model:
            return False
        root = model.split(".")[0]
    return root != "self" and root not in parameters_of(scope)


def _graph_of_gradients(module: cst.Module) -> bool:
    """Whether a gradient may be in an autograd graph in this module, where an in-place op
    on it is one autograd checks: a backward asks for a graph of the gradients
    (`create_graph=`, by keyword, by position or through `**kwargs`), a hook may replace a
    gradient with one computed in a graph, or a gradient is read anywhere but where it
    surely is not saved for a backward (`torch.exp(log_lr) * p.grad`, `p.grad.mul(w)`, or
    `g = p.grad` with `g` used later, save it for the backward through the product)."""
    parents: dict = {}
    names: dict = {}
    for n in walk(module):
        for child in n.children:
            parents[child] = n
        if type(n) is cst.Name:
            names.setdefault(n.value, []).append(n)
    for n in walk(module):
        t = type(n)
        if t is cst.Call:
            func = n.func
            name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
            if name in ("backward", "grad") and (
                    any(a.star == "**" for a in n.args)
                    or len([a for a in n.args if a.keyword is None and not a.star]) > (1 if name == "backward" else 2)):
                return True
            if name in _HOOKS:
                return True
            if name in ("getattr", "attrgetter") and _may_name_grad(n, 1 if name == "getattr" else 0):
                return True  # a gradient read where the scan below cannot see it
        elif t is cst.Arg and n.keyword is not None and n.keyword.value == "create_graph":
            if not (type(n.value) is cst.Name and n.value.value == "False"):
                return True
        elif t is cst.Attribute and n.attr.value == "grad" and not _unsaved_read(n, parents, names):
            return True
        elif t is cst.Assign and any(type(a.target) is cst.Attribute and a.target.attr.value == "grad"
                                     for a in n.targets) and not _stored_as_gradient(n.value):
            # a gradient set from elsewhere (`p.grad = g`, a leaf that requires grad): what else
            # holds it, or whether it is in a graph, is not known
            return True
    return False


def _may_name_grad(call: cst.Call, at: int) -> bool:
    """`getattr(p, "grad")`, `attrgetter("grad")`, or one whose name is not written out."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) <= at:
        return True
    name = positional[at].value
    return not isinstance(name, cst.SimpleString) or name.evaluated_value == "grad"


def _stored_as_gradient(value: cst.BaseExpression) -> bool:
    """`None`, or what a gradient itself gives (`p.grad = p.grad.coalesce()`), read where
    gradients are: no tensor from elsewhere becomes the gradient."""
    if type(value) is cst.Name:
        return value.value == "None"
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _ALIASING \
            and not value.args:
        value = value.func.value
    return type(value) is cst.Attribute and value.attr.value == "grad"


def _unsaved_read(grad: cst.BaseExpression, parents: dict, names: Optional[dict]) -> bool:
    """`x.grad` read where it is surely not saved for a backward: stored to, tested against
    `None`, taken `.data` of, asked a property, passed to `print`, the receiver of an
    in-place op or of a method that makes a new tensor or a number, with no tensor argument,
    or bound to a name (`g = p.grad`) whose every use in the module is one of those."""
    up = parents.get(grad)
    if type(up) is cst.Assign and up.value is grad and all(
            type(t.target) is cst.Attribute and t.target.attr.value == "grad" for t in up.targets):
        return True  # stored back as a gradient (`p.grad = p.grad.coalesce()`): read as gradients are
    if names is not None and type(up) is cst.Assign and up.value is grad and len(up.targets) == 1 \
            and type(up.targets[0].target) is cst.Name:
        return all(_unsaved_read(use, parents, None) for use in names.get(up.targets[0].target.value, ())
                   if not _not_a_read(use, parents))
    if type(up) in (cst.AssignTarget, cst.Del) or (type(up) in (cst.AugAssign, cst.AnnAssign) and up.target is grad):
        return type(up) is not cst.AugAssign
    if type(up) is cst.ComparisonTarget and type(up.operator) in (cst.Is, cst.IsNot):
        return True
    if type(up) is cst.Comparison and all(type(c.operator) in (cst.Is, cst.IsNot) for c in up.comparisons):
        return True
    if type(up) is cst.Arg:
        call = parents.get(up)
        return type(call) is cst.Call and type(call.func) is cst.Name and call.func.value in _DISPLAY
    if type(up) is cst.Attribute and up.value is grad:
        attr = up.attr.value
        if attr in _PROPERTIES:
            return True
        call = parents.get(up)
        if type(call) is not cst.Call or call.func is not up or not all(
                not a.star and (is_number(a.value) or type(a.value) is cst.SimpleString) for a in call.args):
            return False
        if attr.endswith("_") or attr in _FRESH:
            return True
        # (what may be the gradient itself, or share its version counter, is read as it is)
        return attr in _ALIASING and _unsaved_read(call, parents, names)
    return False


def _not_a_read(name: cst.Name, parents: dict) -> bool:
    """A name that reads no variable: an attribute's name, a keyword, a parameter."""
    up = parents.get(name)
    return ((type(up) is cst.Attribute and up.attr is name) or (type(up) is cst.Arg and up.keyword is name)
            or type(up) in (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias))


# what a gradient's reader asks of it that is no tensor in a graph
_PROPERTIES = frozenset({"data", "is_sparse", "shape", "layout", "dtype", "device", "requires_grad", "is_leaf",
                         "grad_fn", "ndim"})
# methods that give a number or a new tensor, never a view sharing the gradient's version
# counter (`detach()`, `coalesce()` of a coalesced tensor and views do share it)
_FRESH = frozenset({"size", "dim", "numel", "_nnz", "is_coalesced", "item", "tolist", "norm", "sum", "abs", "max",
                    "min", "mean", "to_dense", "clone", "isfinite", "isnan", "any", "all", "pow"})
_ALIASING = frozenset({"coalesce", "detach", "values", "indices", "_values", "_indices", "float", "double", "cpu", "to",
                       "view_as", "contiguous"})
_DISPLAY = frozenset({"print", "repr", "str", "len", "isinstance", "type", "id"})
_HOOKS = frozenset({"register_hook", "register_post_accumulate_grad_hook", "register_full_backward_hook",
                    "register_backward_hook"})
