"""
## What it does
Checks for a `.coalesce()` whose result is thrown away: `x.coalesce()` as a statement, an
in-place edit through a temporary, `p.grad.coalesce().values().clamp_(-1, 1)`, or through a
name bound to the copy of a tensor known to be uncoalesced that nothing reads after the edit
(`c = g.coalesce(); c.values()[hit] = 0` in a helper that never stores `c` back).

## Why is this bad?
`coalesce()` never changes its receiver: it returns a **new** tensor when the receiver is
uncoalesced. The statement `x.coalesce()` does nothing, and an edit through
`p.grad.coalesce().values()` changes a copy while `p.grad` stays as it was. No error is
raised; gradients are silently left unclipped or unscaled. When the receiver happens to be
coalesced already, `coalesce()` returns `self` and the edit works, so the behaviour depends
on run-time state.

## Example
```python
emb.weight.grad.coalesce().values().clamp_(-1, 1)
```

## Use instead
```python
emb.weight.grad = emb.weight.grad.coalesce()
emb.weight.grad.values().clamp_(-1, 1)
```

## Fix safety
Unsafe. `x.coalesce()` becomes `x = x.coalesce()`, and `p.grad.coalesce()` becomes
`p.grad = p.grad.coalesce()`, which is what the statement was written to do, but it changes
what the program computes in two ways a check cannot rule out:
- coalescing sums duplicate entries, and a float sum in another order rounds differently,
  so a multigraph's `to_dense()` can differ in its last bits;
- the name is rebound to a new tensor, and whatever else holds the old one (a dict the name
  was taken from, a default argument, a closure, a cache, a view, a caller, for `.grad` a
  hook or a list a helper collected) no longer sees what is done through the name later.

No fix is offered for a name bound to a leaf that requires grad or to an `nn.Parameter`:
after `w = w.coalesce()`, `w` is no longer the leaf, so `torch.optim.SGD([w])` raises
`ValueError: can't optimize a non-leaf Tensor` and `w.grad` stays `None` after backward.
Such a tensor is coalesced in place of its data, under `torch.no_grad()`:
`w.data = w.data.coalesce()`.

No fix is offered:
- for a name a function reads from the module without a `global` statement: assigning it
  in the function makes it a local, and the read on the right of the assignment raises
  `UnboundLocalError`;
- for any attribute other than `.grad` (`self.W.coalesce()`): the attribute may be an
  `nn.Parameter`, and `self.W = self.W.coalesce()` raises `TypeError: cannot assign ... as
  parameter 'W'`; a sparse parameter is coalesced in place of its data, under
  `torch.no_grad()`: `self.W.data = self.W.data.coalesce()`;
- for an edit through `.coalesce()` of a tensor in an autograd graph (assigning it back would
  turn the edit into an in-place write on a graph tensor, SPL101).

For an edit through a gradient, the fix stores the coalesced gradient first and edits that;
it is unsafe, for the same reason, and none is offered where that line cannot run just
before the edit (the gradient of a comprehension's variable, an arm of a conditional
expression, a lambda's body).

In a notebook, `x.coalesce()` as the last line of a cell is not reported: the cell displays
its value, so it is not thrown away.

## References
- hazard 14 of the catalog in `docs/hazards.md`
- https://pytorch.org/docs/stable/generated/torch.Tensor.coalesce.html
"""
from __future__ import annotations

import libcst as cst

from sparselint.analysis.cst.names import dotted
from sparselint.analysis.evaluation.facts import LEAF
from sparselint.rule import Rule
from sparselint.analysis.torchops.torchapi import SPARSE_SOURCE_TOKENS

from sparselint.analysis.cst.tree import walk

from ._common import WRITES, coalesce_first, method_call


def _is_grad(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == "grad"


class CoalesceResultDiscarded(Rule):
    code = "SPL002"
    name = "coalesce-result-discarded"
    error = "no error: the edit changes a temporary copy"
    when = "silent"
    hazards = ("14",)
    fix_title = "Assign the coalesced tensor back"
    prefilter = SPARSE_SOURCE_TOKENS + ("grad.coalesce()",)
    valid = (
        "g = emb.weight.grad.coalesce()\ng.values().clamp_(-1, 1)\nemb.weight.grad = g\n",
        "x = x.coalesce()\n",
        "data.coalesce()  # not known to be a tensor\n",
    )
    invalid = (
        "p.grad.coalesce()  # SPL002\n",
        "import torch\ns = torch.sparse_coo_tensor(i, v, (3, 3))\ns.coalesce()  # SPL002\n",
        "emb.weight.grad.coalesce().values().clamp_(-1, 1)  # SPL002\n",
    )

    def visit_Expr(self, node: cst.Expr, ctx) -> None:
        mc = method_call(node.value)
        if mc is None or mc[1] != "coalesce" or node.value.args:
            return
        if ctx.displayed(node):
            return  # a notebook cell's last expression: its value is shown, not thrown away
        receiver = mc[0]
        t = ctx.tensor(receiver)
        if not (_is_grad(receiver) or (t is not None and t.is_coo)):
            return
        what = ctx.code(receiver)
        fix = None
        suggestion = f"`{what} = {what}.coalesce()`"
        if isinstance(receiver, cst.Name) and ctx.outer_name(receiver.value):
            suggestion = (f"coalesce `{what}` where it is built, or declare `global {what}` before "
                          f"`{what} = {what}.coalesce()` (assigning it here makes it a local of the function)")
        elif isinstance(receiver, cst.Name) and t is not None and (t.parameter or t.grad == LEAF):
            # rebinding a leaf to its coalesced copy makes the name a graph node: an optimizer
            # built over it raises, and its `.grad` stays None
            suggestion = f"`{what}.data = {what}.data.coalesce()` under `torch.no_grad()`"
        elif isinstance(receiver, cst.Name):
            # (never safe: see "Fix safety")
            fix = ctx.make_fix(self, [ctx.insert_before(node, f"{what} = ")], safe=False)
        elif _is_grad(receiver) and dotted(receiver) is not None:
            # (the gradient outlives the scope: a hook, a helper or another model may hold the
            # old one and miss what is done through `.grad` later, anywhere)
            fix = ctx.make_fix(self, [ctx.insert_before(node, f"{what} = ")], safe=False)
        elif t is not None and t.parameter:
            suggestion = f"`{what}.data = {what}.data.coalesce()` under `torch.no_grad()`"
        ctx.report(self, node.value, f"`{what}.coalesce()` returns a new tensor; as a statement it does nothing",
                   evidence=t.evidence if t else (), fix=fix, suggestion=suggestion)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is not None and isinstance(mc[0], cst.Name) and (
                (mc[1] in ("values", "_values") and not node.args and ctx.usage(node) in WRITES)
                or ctx.usage(mc[0]) == "inplace"):
            self._dead_copy_edit(node, mc[0], ctx)
        if mc is None or mc[1] != "coalesce" or node.args:
            return
        receiver = mc[0]
        # The temporary is edited directly, or through `.values()` / `._values()`.
        target = node
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr.value in ("values", "_values"):
            call = ctx.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent and not call.args:
                target = call
        if target is node and ctx.usage(node) not in WRITES:
            return
        if target is not node and ctx.usage(target) not in WRITES:
            return
        t = ctx.tensor(receiver)
        if t is not None and t.coalesced is True:
            return
        grad = _is_grad(receiver)
        if not (grad or (t is not None and t.is_coo)):
            return
        what = ctx.code(receiver)
        fix = coalesce_first(ctx, self, receiver, node, self.fix_title) if grad else None
        ctx.report(self, node,
                   f"edit through `{what}.coalesce()` changes a temporary copy; `{what}` is left unchanged",
                   evidence=t.evidence if t else (), fix=fix,
                   suggestion=f"store it first: `{what} = {what}.coalesce()`, then edit `{what}`")

    def _dead_copy_edit(self, edit: cst.Call, name: cst.Name, ctx) -> None:
        """`c = g.coalesce()` with `g` known uncoalesced, then `c.values()[hit] = 0`: `c` is a
        new tensor, and the edit is lost where nothing reads `c` after it (it is not stored
        back, returned or handed on) and nothing but its own methods read it before."""
        if ctx.loops or ctx.ranges.get(ctx.statement) is None:
            return  # (a statement the analysis made, a lambda's body, has no lines after it)
        if ctx.outer_name(name.value) or ctx.uses_after(name.value):
            return
        bound = _last_binding(ctx.scope.node, name.value, edit, ctx)
        if bound is None:
            return
        source, between = bound
        t = ctx.tensor(source)
        if t is None or not t.is_coo or t.coalesced is not False or not between:
            return
        what = ctx.code(source)
        ctx.report(self, edit, f"`{name.value}` is a coalesced copy of `{what}` (a new tensor, since `{what}` is "
                   f"uncoalesced): the edit changes the copy, which nothing reads afterwards; `{what}` is left "
                   "unchanged", evidence=t.evidence,
                   suggestion=f"store the edited copy back where `{what}` came from (`p.grad = {name.value}`)")


def _last_binding(scope: cst.CSTNode, name: str, at: cst.CSTNode, ctx):
    """(`g` of the last `name = g.coalesce()` before `at` in the scope, True when every read
    of `name` from there to `at` is a method or attribute of it), or None when `name` was
    last bound otherwise, or is read bare (stored, passed, aliased) on the way."""
    line = ctx.position(at)[0]
    found, clean = None, True
    for n in walk(scope, stop=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if n is at or (ctx.position(n)[0] or 0) > line:
            break
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.With, cst.NamedExpr)):
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [getattr(n, "target", None)]
            if any(isinstance(t, cst.Name) and t.value == name for t in targets) or (
                    not isinstance(n, cst.Assign) and any(isinstance(x, cst.Name) and x.value == name
                                                          for x in walk(n.target if hasattr(n, "target") else n))):
                mc = method_call(n.value) if isinstance(n, cst.Assign) and len(n.targets) == 1 else None
                found = mc[0] if mc is not None and mc[1] == "coalesce" and not n.value.args else None
                clean = True
        elif isinstance(n, cst.Name) and n.value == name and found is not None:
            parent = ctx.parent(n)
            if not (isinstance(parent, cst.Attribute) and parent.value is n):
                if not isinstance(parent, cst.AssignTarget):
                    clean = False
    return (found, clean) if found is not None else None
