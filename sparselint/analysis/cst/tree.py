"""Cheap structural access to a LibCST tree.

`node.children` in LibCST rebuilds the node to collect them, which made every walk as costly
as a parse. Reading the dataclass fields directly is an order of magnitude cheaper; the
field order follows the source closely enough for evaluation order and "comes later" tests.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Iterator

import libcst as cst

# Formatting nodes carry no meaning for analysis.
_SKIP = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline,
    cst.Comment, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Dot, cst.Comma, cst.Colon, cst.Semicolon,
    cst.AssignEqual, cst.ImportStar,
)
# Per concrete node type: the fields that can hold nodes worth entering, and for each value
# type met whether it is such a node, a sequence, or neither. Dispatching on the concrete
# type avoids `isinstance` against LibCST's abstract classes, which costs a Python-level
# `__instancecheck__` per call and dominated every traversal.
_FIELDS: dict[type, tuple[str, ...]] = {}
_NODE, _SEQ, _OTHER = 1, 2, 0
_KINDS: dict[type, int] = {}


def _kind(t: type) -> int:
    k = _KINDS.get(t)
    if k is None:
        if issubclass(t, cst.CSTNode):
            k = _OTHER if issubclass(t, _SKIP) else _NODE
        elif issubclass(t, (list, tuple)):
            k = _SEQ
        else:
            k = _OTHER
        _KINDS[t] = k
    return k


def _fields(kind: type) -> tuple[str, ...]:
    # fields that only ever hold formatting
    names = tuple(f.name for f in dataclasses.fields(kind)
                  if not f.name.startswith("whitespace")
                  and f.name not in ("lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer",
                                     "trailing_whitespace", "comma", "semicolon", "empty_lines"))
    _FIELDS[kind] = names
    return names


def _getter(kind: type):
    names = _FIELDS.get(kind) or _fields(kind)
    if not names:
        get = _no_fields
    elif len(names) == 1:
        one = operator.attrgetter(names[0])
        get = lambda node: (one(node),)  # noqa: E731
    else:
        get = operator.attrgetter(*names)
    _GETTERS[kind] = get
    return get


def _no_fields(node) -> tuple:
    return ()


# Per concrete node type: one call that reads all its fields at once.
_GETTERS: dict[type, object] = {}


# Node -> its children, for the check under way: a function's body is walked by each run of
# it (its own, each call analysed, each configuration) and scanned by many syntax queries.
# Holding the nodes keeps their ids from being reused; `forget_children` empties it at the
# end of a check.
_CHILDREN: dict = {}


def forget_children() -> None:
    _CHILDREN.clear()


def child_tuple(node: cst.CSTNode) -> tuple:
    """The children of a node, in field order, read once per check."""
    found = _CHILDREN.get(node)
    if found is None:
        found = _CHILDREN[node] = tuple(_read_children(node))
    return found


def child_list(node: cst.CSTNode) -> list:
    """The children of a node as a new list, in field order (the cheapest form for walks,
    which reverse it onto a stack)."""
    found = _CHILDREN.get(node)
    if found is None:
        found = _CHILDREN[node] = tuple(_read_children(node))
    return list(found)


def _read_children(node: cst.CSTNode) -> list:
    out = []
    kinds = _KINDS
    kind = type(node)
    for value in (_GETTERS.get(kind) or _getter(kind))(node):
        k = kinds.get(type(value))
        if k is None:
            k = _kind(type(value))
        if k == _NODE:
            out.append(value)
        elif k == _SEQ:
            for item in value:
                ki = kinds.get(type(item))
                if ki is None:
                    ki = _kind(type(item))
                if ki == _NODE:
                    out.append(item)
    return out


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    return iter(child_tuple(node))


def walk(root: cst.CSTNode, stop=()) -> Iterator[cst.CSTNode]:
    """Pre-order, source order; nodes of the `stop` types are yielded but not entered."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if stop and isinstance(node, stop) and node is not root:
            continue
        stack.extend(reversed(child_tuple(node)))


_EXPRESSION: dict[type, bool] = {}


def statement_children(node: cst.CSTNode) -> list:
    """The children of a node that is not an expression (none for an expression): enough to
    reach every statement, and every `def`, `class`, `global` and `nonlocal`."""
    t = type(node)
    e = _EXPRESSION.get(t)
    if e is None:
        e = _EXPRESSION[t] = issubclass(t, cst.BaseExpression)
    return [] if e else child_list(node)


def statements(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """What `walk` yields, without entering expressions: the statements and the nodes that
    make them up (`Import`, `Global`, an assignment's targets), at a fraction of the cost
    for scans that look only for statements."""
    stack = [root]
    expression = _EXPRESSION
    while stack:
        node = stack.pop()
        yield node
        t = type(node)
        e = expression.get(t)
        if e is None:
            e = expression[t] = issubclass(t, cst.BaseExpression)
        if not e:
            stack.extend(reversed(child_tuple(node)))


class Order:
    """Pre-order numbers of every node under a root, and where each subtree ends."""

    def __init__(self, root: cst.CSTNode):
        self.pre: dict[cst.CSTNode, int] = {}
        self.end: dict[cst.CSTNode, int] = {}
        counter = 0
        stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                self.end[node] = counter - 1
                continue
            self.pre[node] = counter
            counter += 1
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(child_list(node)))
