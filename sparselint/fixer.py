"""Applying fixes: non-overlapping edits, one round at a time, never producing unparsable code."""
from __future__ import annotations

from typing import Iterable


from .diagnostics import Diagnostic, Fix
from .source import line_starts, offset


def applicable(diagnostics: Iterable[Diagnostic], unsafe: bool) -> list[Fix]:
    return [d.fix for d in diagnostics if d.fix is not None and (d.fix.safe or unsafe)]


def apply_edits(text: str, fixes: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """Apply whole fixes whose edits do not overlap an earlier one; return the new text and
    the fixes that went in."""
    starts = line_starts(text)
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, str]] = []
    applied: list[Fix] = []
    for fix in sorted(fixes, key=lambda f: min(e.start for e in f.edits)):
        spans = [(offset(starts, *e.start), offset(starts, *e.end), e.text) for e in fix.edits]
        if any(_overlaps(a, b, x, y) for a, b, _ in spans for x, y in taken):
            continue
        taken.extend((a, b) for a, b, _ in spans)
        chosen.extend(spans)
        applied.append(fix)
    for a, b, new in sorted(chosen, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:a] + new + text[b:]
    return text, applied


def _overlaps(a: int, b: int, x: int, y: int) -> bool:
    if a == b or x == y:
        # Two insertions at one point, or an insertion inside a replaced span.
        return (a == x and b == y) or (x < a < y) or (a < x < b)
    return a < y and x < b


def parses(text: str) -> bool:
    try:
        import libcst as cst  # only when a fix is checked: a warm run never imports LibCST
        cst.parse_module(text)
    except Exception:
        return False
    return True
