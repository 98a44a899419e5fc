"""The verdicts the op-table rules share: does this op, on this sparse operand, fail in
forward (and why: a sparse gradient, a dense operand, a layout without the op, no sparse
kernel at all) or in backward, according to the table of the target torch release."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from sparselint.analysis.torchops import optable
from sparselint.analysis.evaluation.facts import LEAF
from sparselint.analysis.cst.tree import children
from sparselint.analysis.torchops.opcall import (OpUse, joined, uses_of_augassign, with_alternatives, uses_of_binary, uses_of_call, uses_of_comparison,
                               uses_of_subscript, uses_of_unary)

from ._common import describe_layout

# What a forward failure is, in the order the rules claim it.
GRAD, DENSE_OPERAND, LAYOUT, NO_KERNEL = "grad", "dense-operand", "layout", "no-kernel"
_LAYOUT_KINDS = ("coo", "csr", "csc")


@dataclass(frozen=True)
class Verdict:
    category: str
    use: OpUse
    error: str
    version: str
    works_on: tuple[str, ...] = ()  # other layouts where the op works (LAYOUT)
    consumer: Optional[str] = None  # how the result is reduced, when that decided (backward)


def uses(node: cst.CSTNode, ctx) -> list[OpUse]:
    table = optable.active()
    if isinstance(node, cst.Call):
        return uses_of_call(node, ctx.qualname, ctx.tensor, table.__contains__, ctx.number, ctx.truth)
    if isinstance(node, cst.BinaryOperation):
        return uses_of_binary(node, ctx.tensor, ctx.number)
    if isinstance(node, cst.AugAssign):
        return uses_of_augassign(node, ctx.tensor, ctx.number)
    if isinstance(node, cst.Comparison):
        return uses_of_comparison(node, ctx.tensor, ctx.number)
    if isinstance(node, cst.UnaryOperation):
        return uses_of_unary(node, ctx.tensor)
    if isinstance(node, cst.Subscript):
        if ctx.usage(node) == "assign" or isinstance(ctx.parent(node), (cst.AssignTarget, cst.AugAssign)):
            return []
        return uses_of_subscript(node, ctx.tensor)
    return []


def _fails(table, op, forms, kinds) -> Optional[optable.Outcome]:
    outs = [table.outcome(op, f, k) for f in forms for k in kinds]
    if outs and all(o is not None and not o.works for o in outs):
        return outs[0]
    return None


def _forward_kinds(t) -> tuple[str, ...]:
    """Kinds that must all fail: for COO the coalesced kind always, so that a failure only
    on uncoalesced input stays with the coalescing rules."""
    kinds = optable.kind_of(t)
    if t.layout == "coo" and "coo" not in kinds:
        kinds = ("coo",) + kinds
    return kinds


def forward_verdict(node, ctx) -> Optional[Verdict]:
    key = ("forward", node, id(ctx.state), ctx.grad_enabled)
    if key not in ctx.node_memo:
        ctx.node_memo[key] = verdict_of_uses(uses(node, ctx))
    return ctx.node_memo[key]


def _outcomes(table, use, kind):
    return [table.outcome(use.op, f, kind) for f in use.forms]


def verdict_of_uses(found) -> Optional[Verdict]:
    """The forward verdict for the sparse operands of one op (see `uses`)."""
    table = optable.active()
    for use in with_alternatives(found):
        t = joined(use)
        kinds = _forward_kinds(t)
        if not kinds:
            continue
        if use.fact.grad == LEAF and _is_inplace(use.op):
            continue  # an in-place op on a leaf fails for autograd reasons (SPL103)
        if use.form is None:
            if not use.fallback_ok:
                continue
            outs = [table.failing_everywhere(use.op, k) for k in kinds]
            if not all(outs):
                continue
            category = GRAD if t.is_grad and t.is_coo else NO_KERNEL
            return Verdict(category, use, outs[0].error, table.version)
        failed = _fails(table, use.op, use.forms, kinds)
        if failed is None:
            continue
        dense_works = all(o is not None and o.works for o in _outcomes(table, use, "dense"))
        if use.form == "x,dense" and dense_works:
            same = table.outcome(use.op, "x,x", kinds[0])
            if same is not None and same.works:
                if t.is_grad:
                    continue  # a dense tensor into a sparse gradient is SPL303
                return Verdict(DENSE_OPERAND, use, failed.error, table.version)
        if t.is_grad and t.is_coo:
            if dense_works:
                return Verdict(GRAD, use, failed.error, table.version)
            continue
        own = t.layout
        others = tuple(k for k in _LAYOUT_KINDS if k != own and all(o is not None and o.works for o in _outcomes(table, use, k)))
        if others and (t.is_compressed or not dense_works):
            return Verdict(LAYOUT, use, failed.error, table.version, others)
        if dense_works:
            return Verdict(NO_KERNEL, use, failed.error, table.version)
    return None


def backward_verdict(node, ctx) -> Optional[Verdict]:
    """The op works in forward on an operand in an autograd graph, and its backward fails
    for that operand where it works for a dense one."""
    key = ("backward", node, id(ctx.state), ctx.grad_enabled)
    if key not in ctx.node_memo:
        ctx.node_memo[key] = _backward_verdict(node, ctx)
    return ctx.node_memo[key]


def _backward_verdict(node, ctx) -> Optional[Verdict]:
    if not ctx.grad_enabled:
        return None
    table = optable.active()
    for use in with_alternatives(uses(node, ctx)):
        t = joined(use)
        if t.requires_grad is not True or use.form is None or _is_inplace(use.op):
            continue  # in-place ops in a graph are the SPL1xx rules
        kinds = optable.kind_of(t, "auto")
        if not kinds or "+" not in kinds[0]:
            continue
        mode = kinds[0].split("+")[1]
        consumer = _consumer(node, ctx) or _later_consumer(node, ctx)
        outs = [table.outcome(use.op, f, k) for f in use.forms for k in kinds]
        if not outs or any(o is None or not o.works or not o.backward_error_for(consumer) for o in outs):
            continue
        dense = _outcomes(table, use, "dense+" + mode)
        sparse_only = all(d is None or not d.works for d in dense)
        if not sparse_only and any(d is None or d.backward != "ok" for d in dense):
            continue  # fails for a dense operand too: not a sparse gap
        return Verdict("backward", use, outs[0].backward_error_for(consumer), table.version, consumer=consumer)
    return None


def _consumer(node, ctx, parent_of=None) -> Optional[str]:
    """How the op's result is reduced right where it is made: `op(...).sum()`,
    `op(...).to_dense()`, `torch.sparse.sum(op(...))`; None when it is not (assigned, passed on)."""
    parent_of = parent_of or ctx.parent
    parent = parent_of(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        call = parent_of(parent)
        if isinstance(call, cst.Call) and call.func is parent:
            if parent.attr.value == "sum" and not call.args:
                return "sum"
            if parent.attr.value == "to_dense":
                return "to_dense"
    if isinstance(parent, cst.Arg):
        call = parent_of(parent)
        if isinstance(call, cst.Call) and len(call.args) == 1:
            return {"torch.sparse.sum": "sparse.sum", "torch.sum": "sum"}.get(ctx.qualname(call.func) or "")
        if (isinstance(call, cst.Call) and len(call.args) == 2 and call.args[0] is parent
                and ctx.qualname(call.func) == "torch.sparse.mm"):
            # (a product detached or read as a number takes no part in a backward)
            return "detached" if _detached(call, parent_of) else "sparse.mm"
    return None


_DETACHING = frozenset({"detach", "item", "tolist", "numpy"})


def _detached(call: cst.Call, parent_of) -> bool:
    """Whether the chain of method calls on `call`'s result ends its graph:
    `torch.sparse.mm(rows, x).sum().item()`, `torch.sparse.mm(rows, x).detach()`."""
    node = call
    for _ in range(8):
        attr = parent_of(node)
        if not (isinstance(attr, cst.Attribute) and attr.value is node):
            return False
        if attr.attr.value in _DETACHING:
            return True
        nxt = parent_of(attr)
        if not (isinstance(nxt, cst.Call) and nxt.func is attr):
            return False
        node = nxt
    return False


def _later_consumer(node, ctx) -> Optional[str]:
    """For `y = op(...)`, how the first later use of `y` in this scope reduces it."""
    parent = ctx.parent(node)
    if not (isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)):
        return None
    name = parent.targets[0].target.value
    # the walk has not reached later statements yet, so their parents are collected here
    parents: dict = {}
    seen = False
    stack = [ctx.scope.node]
    while stack:
        n = stack.pop()
        if n is parent:
            seen = True
        elif seen and isinstance(n, cst.Name) and n.value == name and n is not parent.targets[0].target:
            return _consumer(n, ctx, parents.get)
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and n is not ctx.scope.node:
            continue
        kids = list(children(n))
        for k in kids:
            parents[k] = n
        stack.extend(reversed(kids))
    return None


def _is_inplace(op: str) -> bool:
    name = op.split(".")[-1]
    return (name.endswith("_") and not name.startswith("_")) or name.startswith("__i") and name not in (
        "__int__", "__index__", "__invert__")


def layout_text(t) -> str:
    if t.is_grad and t.is_coo:
        return "a sparse COO gradient"
    return "a " + describe_layout(t)


def probed(version: str) -> str:
    return f"(probed on torch {version})"
