"""Python's own verdict on a source text, before LibCST is asked to parse it.

CPython's parser answers in milliseconds where LibCST's native parser, which cannot be
interrupted, can run for minutes and take a gigabyte on a shape Python refuses anyway (a
1,000-deep bracket nest, a 3,000-long attribute chain) or on an expression thousands of
levels deep. So the `ast` comes first: what Python cannot build is reported at once, where
Python points, and a statement nested deeper than LibCST parses in reasonable time is
found up front.
"""
from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from typing import Optional

from .source import line_starts, split_lines

# Deeper than this, LibCST's parse time grows past seconds per statement (quadratically:
# 0.14 s at 1,000 terms of a sum, 8 s at 5,000), and the analysis would hit Python's
# recursion limit on the tree anyway.
MAX_DEPTH = 1000

# Limits of CPython's parser rather than mistakes of grammar: newer syntax than the running
# Python knows is left to LibCST, these are not.
_LIMIT_MESSAGES = ("too many nested parentheses", "too many statically nested blocks")


@dataclass(frozen=True)
class Verdict:
    tree: Optional[ast.Module] = None
    # Python's SyntaxError, when it has one
    error: Optional[SyntaxError] = None
    # set when Python cannot build the file at all: (line, column, message)
    refused: Optional[tuple[int, int, str]] = None


def examine(text: str) -> Verdict:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Verdict(tree=ast.parse(text))
    except SyntaxError as exc:
        line, column = position(exc)
        if any(m in (exc.msg or "") for m in _LIMIT_MESSAGES):
            return Verdict(error=exc, refused=(line, column, f"cannot parse: {exc.msg}"))
        return Verdict(error=exc)
    except (RecursionError, MemoryError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else "too large"
        # Python gives no position: the longest line is the likely culprit
        return Verdict(refused=(_longest_line(text), 1, f"cannot parse: Python cannot compile this file, an expression "
                                                        f"is {why} ({type(exc).__name__})"))
    except ValueError as exc:  # source code with NUL bytes and the like
        return Verdict(refused=(1, 1, f"cannot parse: {exc}"))


def position(exc: SyntaxError) -> tuple[int, int]:
    """1-based line and column as Python reports them."""
    return max(exc.lineno or 1, 1), max(exc.offset or 1, 1)


def _longest_line(text: str) -> int:
    lines = split_lines(text)
    return max(range(len(lines)), key=lambda i: len(lines[i])) + 1 if lines else 1


def deep_statements(tree: ast.Module, text: str, limit: int = MAX_DEPTH,
                    reduced: Optional[str] = None) -> list[tuple[int, int]]:
    """The (first, last) lines of statements holding an expression nested more than `limit`
    levels deep, innermost statements only. A level costs at least one character, so only a
    statement whose lines span more than `limit` characters is walked; with `reduced` (what
    the reduction leaves of the text), only one of which some line is left."""
    starts = line_starts(text)
    # written[n]: how many of the first n lines the reduction left
    written = [0]
    for line in split_lines(reduced) if reduced is not None else ():
        written.append(written[-1] + bool(line.strip()))

    def span(node: ast.stmt) -> int:
        if reduced is not None:
            last = min(node.end_lineno, len(written) - 1)
            if node.lineno > last or written[last] == written[node.lineno - 1]:
                return 0  # none of its lines is parsed
        end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(text)
        return end - starts[node.lineno - 1]

    found: dict[int, tuple[int, int]] = {}
    stack: list[tuple[ast.AST, int, Optional[ast.stmt]]] = [(s, 0, None) for s in tree.body]
    while stack:
        node, depth, stmt = stack.pop()
        if isinstance(node, ast.stmt):
            if span(node) <= limit:
                continue
            node_stmt, depth = node, 0
        else:
            node_stmt = stmt
            if depth > limit:
                found[id(node_stmt)] = (node_stmt.lineno, node_stmt.end_lineno)
                continue
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1, node_stmt))
    return sorted(found.values())


def kept(lines: tuple[int, int], reduced: str) -> bool:
    """Whether the reduction left any of these lines for LibCST to parse."""
    text_lines = split_lines(reduced)
    first, last = lines
    return any(n <= len(text_lines) and text_lines[n - 1].strip() for n in range(first, last + 1))
