"""Reading an optimizer construction: its class and the parameters it gets, group by group."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from dataclasses import replace

from sparselint.analysis.evaluation.facts import Callee, Choice, Params, Tensor
from sparselint.analysis.evaluation.inference import ABSENT, arg, params_of_tensor
from sparselint.analysis.evaluation.gradflags import Flags


def optimizer_call(node: cst.Call, ctx) -> Optional[str]:
    """The class name of `torch.optim.X(...)`, else None."""
    q = ctx.qualname(node.func)
    if q is None or not q.startswith("torch.optim.") or q.count(".") != 2:
        return None
    name = q.split(".")[-1]
    return name if name[:1].isupper() and name != "Optimizer" else None


def classes_called(node: cst.Call, ctx) -> list[tuple[str, str, tuple, bool]]:
    """(class name, how the finding names it, why it is that class, whether it is one a table
    offers) for each `torch.optim` class the call may build: the one it names, or each one a
    table offers for a key the caller chooses (`OPTIMIZERS[cfg["optimizer"]](params)`)."""
    name = optimizer_call(node, ctx)
    if name is not None:
        return [(name, f"`{name}`", chosen_by(node, ctx), False)]
    held = ctx.fact(node.func)
    if not isinstance(held, Choice):
        return []
    out = []
    for key, callee, where in held.options:
        name = callee.target.split(".")[-1]
        said = f"the table offers `{key!r}`: `{name}`"
        why = (*held.evidence, replace(where, text=said)) if where is not None else held.evidence
        out.append((name, f"`{name}` (the table's `{key!r}`, a key the caller may choose)", why, True))
    return out


def chosen_by(node: cst.Call, ctx) -> tuple:
    """Why the class called is the one it is, when a value picked it (`OPTIMIZERS[name]`,
    `getattr(torch.optim, name)`): that value's evidence."""
    held = ctx.fact(node.func)
    return held.evidence if isinstance(held, Callee) else ()


def params_of(node: cst.Call, ctx) -> Optional[Params]:
    expr = arg(node, 0, "params")
    if expr is None:
        return None
    fact = ctx.fact(expr)
    if isinstance(fact, Tensor) and fact.parameter:
        return params_of_tensor(fact, None)
    return fact if isinstance(fact, Params) else None


def groups(params: Params, default_decay) -> list[tuple[Params, object]]:
    """(params, effective weight decay) per param group."""
    if params.groups is None:
        return [(params, default_decay)]
    return [(p, default_decay if decay is None else decay) for p, decay in params.groups]


def default_weight_decay(node: cst.Call, ctx, position: int):
    expr = arg(node, position, "weight_decay")
    if expr is None:
        passed = ctx.unpacked(node, "weight_decay")  # `SGD(params, **cfg)`
        if passed is not ABSENT:
            return passed
        held = ctx.fact(node.func)  # `functools.partial(torch.optim.SGD, weight_decay=1e-4)`
        return dict(held.keywords).get("weight_decay", 0) if isinstance(held, Callee) else 0
    return ctx.value(expr)


def positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def describe(flags: Flags) -> str:
    if flags.has_sparse and flags.has_dense:
        return "some of these parameters get sparse gradients"
    return "these parameters get sparse gradients"
