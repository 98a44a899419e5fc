"""Literal values in source, and reading call arguments."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ...torchops import optable, torchapi as api
from ..facts import Const


def literal(node: Optional[cst.BaseExpression]):
    """The Python value of a literal True/False/None/number/string, else a sentinel."""
    t = type(node)  # exact types: LibCST classes are ABCs, whose `isinstance` is slow
    if t is cst.Name and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if t is cst.Integer:
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return _UNKNOWN
    if t is cst.Float:
        try:
            return float(node.value.replace("_", ""))
        except ValueError:
            return _UNKNOWN
    if t is cst.SimpleString:
        try:
            return node.evaluated_value
        except Exception:
            return _UNKNOWN
    if t is cst.UnaryOperation and isinstance(node.operator, cst.Minus):
        v = literal(node.expression)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else _UNKNOWN
    return _UNKNOWN


_UNKNOWN = object()
# an argument that no argument of a call passes (neither written out nor in a `**mapping`)
ABSENT = object()
_CONSTANTS = {"True": Const(value=True), "False": Const(value=False), "None": Const(value=None)}
# Methods whose result layout the operation alone decides: (layout, coalesced or None).
_FIXED_RESULT = {"coalesce": ("coo", True), "to_sparse": ("coo", None), "to_sparse_coo": ("coo", None),
                 "to_sparse_csr": ("csr", None), "to_sparse_csc": ("csc", None)}


def _is_optimizer_class(q: str) -> bool:
    return q.startswith(api.OPTIMIZER_PREFIX) and q.count(".") == 2 and q.split(".")[-1][:1].isupper()


def held_torch_callable(q: str) -> bool:
    """A torch name read as a value that is worth holding as a callable: an optimizer class,
    or a function the engine's tables or the probed op table know (`act = torch.tanh`,
    `{"relu": F.relu}`, `spmm = torch.sparse.mm`), so a call of what holds it is that call."""
    return _is_optimizer_class(q) or q in api.KNOWN_FUNCTIONS or (q.startswith("torch.") and q in optable.active())


def is_number(node: cst.BaseExpression) -> bool:
    v = literal(node)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def arg(call: cst.Call, index: Optional[int], keyword: Optional[str] = None) -> Optional[cst.BaseExpression]:
    """The argument written at a position or by keyword (None: not written, or after a
    `*seq`, which makes the positions that follow it unknown)."""
    if keyword is not None:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a.value
    if index is not None:
        positional = []
        for a in call.args:
            if a.star == "*":
                break
            if a.keyword is None and not a.star:
                positional.append(a)
        if index < len(positional):
            return positional[index].value
    return None

