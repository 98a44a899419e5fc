"""Small pieces several rules share: recognising a method call, writes, and two fix shapes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from sparselint.analysis.evaluation.facts import Items, Tensor
from sparselint.analysis.cst.names import dotted

WRITES = frozenset({"inplace", "item-assign", "item-augassign", "augassign"})
# Elementwise in-place ops that scale every stored entry alike: harmless on duplicate entries.
LINEAR_INPLACE = frozenset({"mul_", "div_", "neg_", "zero_"})
OUT_OF_PLACE = {"mul_": "mul", "div_": "div", "add_": "add", "sub_": "sub", "neg_": "neg", "clamp_": "clamp"}


def method_call(node: cst.CSTNode) -> Optional[tuple[cst.BaseExpression, str]]:
    """(receiver, method) of a call `receiver.method(...)`."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute:  # exact types: fast, and run on every node
        return node.func.value, node.func.attr.value
    return None


def describe_layout(t: Tensor) -> str:
    return {"coo": "sparse COO", "csr": "sparse CSR", "csc": "sparse CSC", "bsr": "sparse BSR",
            "bsc": "sparse BSC"}.get(t.layout or "", "sparse")


def write_method(ctx, node: cst.BaseExpression) -> Optional[str]:
    """The in-place method applied to an expression, or "[]=" for an item write."""
    usage = ctx.usage(node)
    if usage == "inplace":
        return ctx.parent(node).attr.value
    if usage in ("item-assign", "item-augassign"):
        return "[]="
    return None


@dataclass(frozen=True)
class ValuesWrite:
    """An in-place write to the values of a sparse tensor."""

    op: str  # "mul_", "[]=", "+="
    owner: Tensor  # the sparse tensor whose values are written
    code: str  # the values as written: `s.values()`, or `vals` where `vals = s.values()`
    subject: cst.BaseExpression  # the expression a loop would have to rebuild for a fresh tensor
    alias: bool = False  # written through a name bound to `s.values()`
    held: tuple = ()  # evidence for the name: the sparse tensor's, then the binding

    @property
    def evidence(self) -> tuple:
        return self.held if self.alias else self.owner.evidence

    @property
    def named(self) -> str:
        return f"`{self.code}`" + (" (a view of `.values()`)" if self.alias else "")


def values_written(ctx, node: cst.BaseExpression) -> Optional[ValuesWrite]:
    """An expression written in place that is `s.values()`, or a name holding it
    (`vals.mul_(2)`, `vals[0] *= 2`, `vals += 1` after `vals = s.values()`)."""
    op = write_method(ctx, node) or ("+=" if ctx.usage(node) == "augassign" else None)
    if op is None:
        return None
    mc = method_call(node)
    if mc is not None:
        if mc[1] != "values" or node.args:
            return None
        t = ctx.tensor(mc[0])
        return ValuesWrite(op, t, f"{ctx.code(mc[0])}.values()", mc[0]) if t is not None else None
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    alias = ctx.tensor(node)
    if alias is None or alias.values_of is None:
        return None
    return ValuesWrite(op, alias.values_of, ctx.code(node), node, True, alias.evidence)


def wrap_in_no_grad(ctx, rule, title: str):
    """An unsafe fix that runs the current statement under `torch.no_grad()`, when the
    statement sits alone on one physical line."""
    stmt, line = ctx.statement, ctx.line_node
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or line.body[0] is not stmt:
        return None
    indent = ctx.statement_indent(stmt)
    torch_name = ctx.torch_spelling("torch.no_grad")
    l1, _, l2, _ = ctx.span(stmt)
    if indent is None or torch_name is None or l1 != l2:
        return None
    nl = ctx.newline()
    edit = ctx.insert_before(stmt, f"with {torch_name}():{nl}{indent}    ")
    return ctx.make_fix(rule, [edit], safe=False, title=title)


def coalesce_first(ctx, rule, receiver: cst.BaseExpression, replace_node: cst.CSTNode, title: str):
    """A fix that stores the coalesced tensor first (`x.grad = x.grad.coalesce()`) and then
    runs the statement on it. `replace_node` is the expression to swap for the receiver.

    None where the line inserted before the statement would not run where the receiver is
    read (a comprehension's variable, an arm of a conditional expression). Always unsafe: the
    statement edits the new tensor in place, and whatever else holds the old one (a list a
    helper collected, a hook, another model sharing the gradient) misses the edit; such
    holders cannot all be seen."""
    path = dotted(receiver)
    stmt, line = ctx.statement, ctx.line_node
    if path is None or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    if not ctx.evaluated_once(replace_node):
        return None
    indent = ctx.statement_indent(stmt)
    if indent is None:
        return None
    nl = ctx.newline()
    edits = [ctx.insert_before(stmt, f"{path} = {path}.coalesce(){nl}{indent}")]
    if replace_node is not receiver:
        edits.append(ctx.replace(replace_node, receiver))
    return ctx.make_fix(rule, edits, safe=False, title=title)


def per_input(returned, count: int) -> Optional[tuple]:
    """The gradient a custom `backward` returned for each of `count` inputs (what
    `ctx.backward_gradients(call)` gives), when known by position."""
    if isinstance(returned, Items):
        if not returned.counted or returned.kind == "generator" or len(returned.items) != count:
            return None
        return returned.items
    if count == 1 and isinstance(returned, Tensor):
        return (returned,)
    return None


def custom_function_call(node: cst.Call, ctx) -> bool:
    """Whether `node` is `F.apply(...)` of a project `autograd.Function` run with grad on,
    with plain positional arguments, so that argument k is input k of its `backward`."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "apply") or not ctx.grad_enabled:
        return False
    if any(a.star or a.keyword is not None for a in node.args):
        return False
    return ctx.autograd_function(node) is not None


def trainable_sparse_inputs(node: cst.Call, ctx, gradients=None):
    """(position, argument, tensor, gradient) for each input of a custom Function call that
    is a sparse tensor whose values require grad and whose result reaches a backward; each
    with the gradient `backward` returns for it, when `gradients` gives them by position."""
    for k, arg in enumerate(node.args):
        t = ctx.tensor(arg.value)
        if t is None or not t.is_sparse or t.requires_grad is not True:
            continue
        if not ctx.backward_follows(node, arg.value):
            continue
        yield k, arg, t, (gradients[k] if gradients is not None else None)
