"""From a call site to the op-table entry that answers for it.

Every spelling of an op reaches the entry torch itself dispatches: `torch.add(s, d)` is
`torch.add` in form `x,dense`, `s.add(d)` is `Tensor.add`, `s + d` is `Tensor.__add__`,
`d + s` is `Tensor.__add__` in form `dense,x`, `2 * s` is `Tensor.__rmul__`, `s += d` is
`Tensor.__iadd__`, `s > 0` is `Tensor.__gt__`, `-s` is `Tensor.__neg__`, `s[0]` is
`Tensor.__getitem__`, `F.softmax(s, dim=1)` is `torch.nn.functional.softmax` in form `x,dim`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from ..cst.names import dotted
from ..evaluation.facts import Tensor
from .optable import AUGMENTED_DUNDERS, BINARY_DUNDERS, COMPARISON_DUNDERS

# Keywords that, when given, can make an op skip its work (`F.dropout(x, training=False)`
# returns `x`): a call with one of them is never judged from the op's other forms.
_SKIPPING_KEYWORDS = frozenset({"training", "inplace", "out"})


@dataclass(frozen=True)
class OpUse:
    op: str  # the table entry
    form: Optional[str]  # None when the arguments match no probed form
    subject: cst.BaseExpression  # the sparse operand the entry is about
    fact: Tensor
    other: Optional[Tensor] = None  # a sparse second operand (form `x,x`)
    spelled: str = ""  # how the call site spells the op, for messages
    fallback_ok: bool = False  # no keyword that could make the op skip its work
    also: tuple[str, ...] = ()  # other probed forms the call may equally be (a float: 0.5 or 2.0)

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.form,) + self.also if self.form else ()


def _number(node) -> Optional[str]:
    """The probed stand-in for a literal: "0", "int" (1), "2" (any int from 2 up), "-1",
    "float" or "bool"; None for other negative ints, whose meaning (a dim, an exponent)
    the probe has no value for."""
    negated = False
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        if isinstance(node.expression, cst.Integer):
            return "-1" if _int(node.expression) == 1 else None
        node, negated = node.expression, True
    if isinstance(node, cst.Integer):
        value = _int(node)
        return None if value is None else "0" if value == 0 else "int" if value == 1 else "2"
    if isinstance(node, cst.Float):
        return _float_kind(node, negated)
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return "bool"
    return None


def _float_kind(node: cst.Float, negated: bool) -> str:
    """As `number_kind` for the literal's value: "fraction" between 0 and 1 (a dropout rate,
    a momentum), which the probe's 0.5 stands for alone; "float" for any other."""
    try:
        value = float(node.value.replace("_", ""))
    except ValueError:
        return "float"
    return number_kind(-value if negated else value)


def number_kind(value) -> Optional[str]:
    """The probed stand-in for a number held by a name: as `_number` for a literal of that
    value, "num" for a number of unknown value."""
    if value is None:
        return "num"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        return "fraction" if 0 < value < 1 else "float"
    return "0" if value == 0 else "int" if value == 1 else "2" if value >= 2 else "-1" if value == -1 else None


def _int(node: cst.Integer) -> Optional[int]:
    try:
        return int(node.value.replace("_", ""), 0)
    except ValueError:
        return None


def _number_or_held(node, number: Optional[Callable]) -> Optional[str]:
    """The probed stand-in for a literal, or for a name or expression that holds a Python
    number (`eps = math.exp(-4)`): "num" when its value is not known."""
    kind = _number(node)
    if kind is None and number is not None:
        kind = number(node)
    return kind


def _operand_form(node, fact: Optional[Tensor], subject: Tensor, number: Optional[Callable] = None) -> Optional[str]:
    kind = _number_or_held(node, number)
    if kind is not None:
        return kind
    if fact is None or fact.layout is None:
        return None
    if fact.layout == "strided":
        return "dense"
    if fact.layout == subject.layout:
        return "x"
    return None


def form_of(rest: list, keywords: dict, tensor, subject: Tensor,
            number: Optional[Callable] = None, index_only: bool = False) -> tuple[Optional[str], Optional[Tensor]]:
    """The probed form of a call given its arguments after the subject, and a sparse second
    operand when there is one."""
    names = set(keywords)
    if names - {"dim", "keepdim"}:
        return None, None
    if "dim" in names:
        # (a number held by a name as well: `dim=dim` of a helper's `dim=1` default)
        kind = _number(keywords["dim"]) or (number(keywords["dim"]) if number is not None else None)
        if rest or kind not in ("int", "-1"):
            return None, None
        if "keepdim" in names:
            keep = keywords["keepdim"]
            return ("x,dim,keepdim" if isinstance(keep, cst.Name) and keep.value == "True" else None), None
        return "x,dim", None
    if "keepdim" in names:
        return None, None
    if not rest:
        return "x", None
    facts = [tensor(a) if _number(a) is None else None for a in rest]
    parts = [_operand_form(a, f, subject, number) for a, f in zip(rest, facts)]
    if len(rest) == 1 and parts[0] is not None:
        form = "x," + parts[0]
        return form, facts[0] if parts[0] == "x" else None
    if len(rest) == 2:
        if all(p in ("0", "int", "2", "-1") for p in parts):
            return "x,int,int", None
        if parts == ["dense", "dense"]:
            return "x,dense,dense", None
        if parts[0] == "0" and facts[1] is not None and facts[1].layout == "strided":
            return "x,0,index", None
        if parts[0] == "0" and facts[1] is None and index_only:
            return "x,0,index", None  # (what `index_select` takes there is a dense index)
    return None, None


def _split(call: cst.Call):
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    starred = any(a.star for a in call.args)
    return positional, keywords, starred


def uses_of_call(call: cst.Call, qualname: Callable, tensor: Callable, in_table: Callable[[str], bool],
                 number: Optional[Callable] = None, truth: Optional[Callable] = None) -> list[OpUse]:
    """The sparse operands of a call and the entry for each (usually one). `truth(node)` is
    True for an argument known to be `True` (`training=self.training` of a model in training
    mode: the default the table was probed with, so the keyword is left out)."""
    positional, keywords, starred = _split(call)
    if starred:
        return []
    if "training" in keywords and truth is not None and truth(keywords["training"]) is True:
        keywords = {k: v for k, v in keywords.items() if k != "training"}
    fallback_ok = not (set(keywords) & _SKIPPING_KEYWORDS)
    q = qualname(call.func)
    if q is not None:
        op = q
        if not in_table(op) or not positional:
            return []
        spelled = "`" + q.replace("torch.nn.functional.", "F.") + "`"
        written = dotted(call.func)
        if written is not None and written.rpartition(".")[2] != q.rpartition(".")[2]:
            spelled = f"`{written}` (holding {spelled})"  # `self.act(x)` of `self.act = torch.tanh`
        first = positional[0]
        if isinstance(first, (cst.List, cst.Tuple)) and first.elements and len(positional) == 1 and not keywords:
            items = [tensor(el.value) for el in first.elements]
            if all(t is not None and t.is_sparse for t in items) and len({t.layout for t in items}) == 1:
                return [OpUse(op, "[x,x]", first.elements[0].value, _join_items(items), spelled=spelled)]
            return []
        ft = tensor(first)
        if ft is not None and ft.is_sparse:
            form, other = form_of(positional[1:], keywords, tensor, ft, number, op.endswith(".index_select"))
            return [OpUse(op, form, first, ft, other, spelled, fallback_ok)]
        if ft is not None and ft.layout == "strided" and len(positional) in (2, 3) and not keywords:
            st = tensor(positional[1])
            if st is not None and st.is_sparse:
                if len(positional) == 2:
                    return [OpUse(op, "dense,x", positional[1], st, spelled=spelled)]
                third = tensor(positional[2])
                if third is not None and third.layout == "strided":
                    return [OpUse(op, "dense,x,dense", positional[1], st, spelled=spelled)]
        return []
    if not isinstance(call.func, cst.Attribute):
        return []
    method = call.func.attr.value
    op = "Tensor." + method
    if not in_table(op):
        return []
    receiver = call.func.value
    rt = tensor(receiver)
    if rt is None:
        return []
    spelled = f"`.{method}()`"
    if rt.is_sparse:
        form, other = form_of(positional, keywords, tensor, rt, number, method == "index_select")
        return [OpUse(op, form, receiver, rt, other, spelled, fallback_ok)]
    if rt.layout == "strided" and len(positional) == 1 and not keywords:
        st = tensor(positional[0])
        if st is not None and st.is_sparse:
            return [OpUse(op, "dense,x", positional[0], st, spelled=spelled)]
    return []


def _join_items(items: list[Tensor]) -> Tensor:
    """The fact that answers for a list of sparse tensors of one layout: coalesced only when
    every item is."""
    first = items[0]
    coalesced = True if all(t.coalesced is True for t in items) else (
        False if any(t.coalesced is False for t in items) else None)
    from dataclasses import replace
    return replace(first, coalesced=coalesced)


def _scalar_or_tensor(node, tensor, number: Optional[Callable] = None) -> tuple[Optional[str], Optional[Tensor]]:
    kind = _number_or_held(node, number)
    if kind is not None:
        return kind, None
    return None, tensor(node)


def uses_of_binary(node: cst.BinaryOperation, tensor: Callable, number: Optional[Callable] = None) -> list[OpUse]:
    name = BINARY_DUNDERS.get(type(node.operator).__name__)
    if name is None:
        return []
    symbol = SYMBOLS.get(type(node.operator).__name__, name)
    lt = tensor(node.left)
    if lt is not None and lt.is_sparse:
        kind, rt = _scalar_or_tensor(node.right, tensor, number)
        form = _operand_form(node.right, rt, lt, number)
        if form is None:
            return []
        return [OpUse(f"Tensor.__{name}__", "x," + form, node.left, lt, rt if form == "x" else None, f"`{symbol}`")]
    rt = tensor(node.right)
    if rt is None or not rt.is_sparse:
        return []
    if lt is not None and lt.layout == "strided":
        return [OpUse(f"Tensor.__{name}__", "dense,x", node.right, rt, spelled=f"`{symbol}`")]
    kind = _number_or_held(node.left, number)
    if kind is not None:
        return [OpUse(f"Tensor.__r{name}__", "x," + kind, node.right, rt, spelled=f"`{symbol}`")]
    return []


def uses_of_augassign(node: cst.AugAssign, tensor: Callable, number: Optional[Callable] = None) -> list[OpUse]:
    name = AUGMENTED_DUNDERS.get(type(node.operator).__name__)
    if name is None:
        return []
    t = tensor(node.target)
    if t is None or not t.is_sparse:
        return []
    kind, vt = _scalar_or_tensor(node.value, tensor, number)
    form = _operand_form(node.value, vt, t, number)
    if form is None:
        return []
    symbol = SYMBOLS.get(type(node.operator).__name__[: -len("Assign")], name) + "="
    return [OpUse(f"Tensor.__i{name}__", "x," + form, node.target, t, vt if form == "x" else None, f"`{symbol}`")]


def uses_of_comparison(node: cst.Comparison, tensor: Callable, number: Optional[Callable] = None) -> list[OpUse]:
    if len(node.comparisons) != 1:
        return []
    name = COMPARISON_DUNDERS.get(type(node.comparisons[0].operator).__name__)
    t = tensor(node.left)
    if name is None or t is None or not t.is_sparse:
        return []
    right = node.comparisons[0].comparator
    kind, rt = _scalar_or_tensor(right, tensor, number)
    form = _operand_form(right, rt, t, number)
    if form is None:
        return []
    return [OpUse(f"Tensor.__{name}__", "x," + form, node.left, t, rt if form == "x" else None, "a comparison")]


def uses_of_unary(node: cst.UnaryOperation, tensor: Callable) -> list[OpUse]:
    name = {"Minus": "neg", "BitInvert": "invert"}.get(type(node.operator).__name__)
    t = tensor(node.expression) if name else None
    if t is None or not t.is_sparse:
        return []
    return [OpUse(f"Tensor.__{name}__", "x", node.expression, t, spelled="unary `-`" if name == "neg" else "`~`")]


def uses_of_subscript(node: cst.Subscript, tensor: Callable) -> list[OpUse]:
    t = tensor(node.value)
    if t is None or not t.is_sparse:
        return []
    form = None
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        kind = _number(node.slice[0].slice.value)
        form = "x," + kind if kind in ("0", "int", "2", "-1") else None
    return [OpUse("Tensor.__getitem__", form, node.value, t, spelled="indexing", fallback_ok=True)]


SYMBOLS = {"Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "FloorDivide": "//", "Modulo": "%",
            "Power": "**", "MatrixMultiply": "@", "BitAnd": "&", "BitOr": "|", "BitXor": "^",
            "LeftShift": "<<", "RightShift": ">>"}


# The probed numbers a number of unknown value may be (a bool is a `Const`, never one of them).
_ANY_NUMBER = ("float", "2.0", "int", "0", "2", "-1")


def with_alternatives(uses: list[OpUse]) -> list[OpUse]:
    """A float literal is probed as 0.5 and as 2.0; a call with any float is judged only where
    both agree (`s ** 0.5` and `s ** 2.0` differ in backward), one between 0 and 1 as 0.5
    alone (`F.dropout(s, 0.3)`: 2.0 is no rate). A number of unknown value is judged only
    where every probed number agrees."""
    from dataclasses import replace
    out = []
    for u in uses:
        if u.form and u.form.endswith(",fraction"):
            u = replace(u, form=u.form[: -len("fraction")] + "float")
        elif u.form and u.form.endswith(",num"):
            head = u.form[: -len("num")]
            u = replace(u, form=head + _ANY_NUMBER[0], also=tuple(head + k for k in _ANY_NUMBER[1:]))
        elif u.form and u.form.endswith(",float"):
            u = replace(u, also=(u.form.replace("float", "2.0"),))
        out.append(u)
    return out


def joined(use: OpUse) -> Tensor:
    """The fact whose kind answers for a use: for `x,x` the two operands joined, coalesced
    only when both are."""
    from dataclasses import replace
    t = use.fact
    if use.other is not None and t.layout == "coo":
        a, b = t.coalesced, use.other.coalesced
        t = replace(t, coalesced=True if a is True and b is True else False if False in (a, b) else None)
    return t


def result_of(uses: list[OpUse]):
    """What the table says the op gives for its sparse operand (its layout and, for COO,
    whether it is coalesced), or None when the table does not know or the kinds disagree."""
    from . import optable
    if not uses or uses[0].form is None:
        return None
    use = with_alternatives(uses)[0]
    kinds = optable.kind_of(joined(use))
    if not kinds:
        return None
    table = optable.active()
    out = optable.agreed(table, use.op, use.forms, kinds)
    return out if out is not None and out.works else None
