"""What a run saw, printed in the static linter's formats when the program ends.

Paths are shown relative to the current folder where they lie beneath it, as `sparselint check`
shows the paths it is given; the report keeps them absolute. In the text formats a hazard seen
more than once says how often; in `json` each finding carries `count` and `raised`, as in the
report."""
from __future__ import annotations

import json
import os
from dataclasses import replace

from .. import output
from ..diagnostics import Diagnostic

_COUNTED = ("concise", "full", "grouped")


def render(findings: list[Diagnostic], counts: dict, fmt: str, color: bool = False, start: str = "") -> str:
    """`start`: the folder paths are shown from (default: the current one)."""
    start = start or os.getcwd()
    if fmt == "json":
        rows = []
        for d in findings:
            count, raised = counts.get(_key(d), (1, False))
            rows.append(_relative(d, start).to_json() | {"count": count, "raised": raised})
        return json.dumps(rows, indent=2)
    shown = []
    for d in findings:
        count, raised = counts.get(_key(d), (1, False))
        d = _relative(d, start)
        if fmt in _COUNTED and (count > 1 or raised):
            times = f"seen {count} times" if count > 1 else "seen once"
            d = replace(d, message=f"{d.message} ({times}{', raised' if raised else ''})")
        shown.append(d)
    sources = _sources(shown, start) if fmt == "full" else {}
    return output.render(shown, fmt, sources, color=color)


def summary(findings: list[Diagnostic], counts: dict) -> str:
    if not findings:
        return "sparselint: run-time check: no hazards seen."
    raised = sum(1 for d in findings if counts.get(_key(d), (1, False))[1])
    n = len(findings)
    return (f"sparselint: run-time check: found {n} hazard{'s' if n != 1 else ''}"
            + (f" ({raised} raised)." if raised else "."))


def _key(d: Diagnostic) -> tuple:
    return (d.code, d.path, d.line, d.column)


def _shorter(path: str, start: str) -> str:
    if not path or not os.path.isabs(path):
        return path
    rel = os.path.relpath(path, start)
    return path if rel.startswith(os.pardir) else rel


def _relative(d: Diagnostic, start: str) -> Diagnostic:
    evidence = tuple(replace(e, path=_shorter(e.path, start)) if e.path else e for e in d.evidence)
    return replace(d, path=_shorter(d.path, start), evidence=evidence)


def _sources(findings: list[Diagnostic], start: str) -> dict:
    sources = {}
    for d in findings:
        if d.path not in sources:
            try:
                with open(os.path.join(start, d.path), encoding="utf-8") as f:
                    sources[d.path] = f.read()
            except (OSError, UnicodeDecodeError):
                pass
    return sources
