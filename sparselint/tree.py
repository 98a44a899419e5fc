"""Cheap structural access to a LibCST tree.

`node.children` in LibCST rebuilds the node to collect them, which made every walk as costly
as a parse. Reading the dataclass fields directly is an order of magnitude cheaper; the
field order follows the source closely enough for evaluation order and "comes later" tests.
"""
from __future__ import annotations

import dataclasses
from typing import Iterator

import libcst as cst

# Formatting nodes carry no meaning for analysis.
_SKIP = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline,
    cst.Comment, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Dot, cst.Comma, cst.Colon, cst.Semicolon,
    cst.AssignEqual, cst.ImportStar,
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    kind = type(node)
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            if not isinstance(value, _SKIP):
                yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode) and not isinstance(item, _SKIP):
                    yield item


def walk(root: cst.CSTNode, stop=()) -> Iterator[cst.CSTNode]:
    """Pre-order, source order; nodes of the `stop` types are yielded but not entered."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if stop and isinstance(node, stop) and node is not root:
            continue
        stack.extend(reversed(list(children(node))))


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
            stack.extend((c, False) for c in reversed(list(children(node))))
