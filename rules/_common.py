"""Small pieces several rules share: recognising a method call, writes, and two fix shapes."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from sparselint.facts import Tensor
from sparselint.names import dotted

WRITES = frozenset({"inplace", "item-assign", "item-augassign", "augassign"})
# Elementwise in-place ops that scale every stored entry alike: harmless on duplicate entries.
LINEAR_INPLACE = frozenset({"mul_", "div_", "neg_", "zero_"})
OUT_OF_PLACE = {"mul_": "mul", "div_": "div", "add_": "add", "sub_": "sub", "neg_": "neg", "clamp_": "clamp"}


def method_call(node: cst.CSTNode) -> Optional[tuple[cst.BaseExpression, str]]:
    """(receiver, method) of a call `receiver.method(...)`."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
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


def wrap_in_no_grad(ctx, rule, title: str):
    """An unsafe fix that runs the current statement under `torch.no_grad()`, when the
    statement sits alone on one physical line."""
    stmt, line = ctx.statement, ctx.line_node
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
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
    runs the statement on it. `replace_node` is the expression to swap for the receiver."""
    path = dotted(receiver)
    stmt, line = ctx.statement, ctx.line_node
    if path is None or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    indent = ctx.statement_indent(stmt)
    if indent is None:
        return None
    nl = ctx.newline()
    edits = [ctx.insert_before(stmt, f"{path} = {path}.coalesce(){nl}{indent}")]
    if replace_node is not receiver:
        edits.append(ctx.replace(replace_node, receiver))
    return ctx.make_fix(rule, edits, safe=True, title=title)
