"""A run's report laid over the static findings (`sparselint check --runtime-report FILE`).

A static finding is *confirmed* when the run saw the same code at the same place: its
path:line is the run finding's, or one of the run finding's evidence places (the line that
built the tensor the run failed on), or the run finding's place is one of its own evidence
places. What the run saw in the checked files that no static finding matches is listed as
*seen at run time only*. The marks are laid on after the cache has answered, so a changed
report never meets stale marks. Nothing here imports torch."""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable, Iterable, Optional

from ..diagnostics import Diagnostic
from . import report

_loaded: dict[str, tuple[tuple, list[Diagnostic]]] = {}


def load(path: str) -> list[Diagnostic]:
    """The report's findings, read again only when the file changed (the language server asks
    at every check); a `report.ReportError` for a missing or invalid file."""
    key = os.path.abspath(path)
    try:
        st = os.stat(key)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    cached = _loaded.get(key)
    if cached is not None and stamp is not None and cached[0] == stamp:
        return cached[1]
    findings = report.load(path)
    _loaded[key] = (stamp, findings)
    return findings


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


def _places(d: Diagnostic) -> tuple[tuple[str, int], set[tuple[str, int]]]:
    """(the finding's own place, the places of its evidence), files resolved."""
    own = _real(d.path)
    return (own, d.line), {(_real(e.path) if e.path else own, e.line) for e in d.evidence if e.line > 0}


def _matches(code: str, places, run: Diagnostic, run_places, end_line: int = 0) -> bool:
    if code != run.code:
        return False
    (s_place, s_evidence), (r_place, r_evidence) = places, run_places
    if s_place == r_place or s_place in r_evidence or r_place in s_evidence:
        return True
    # an expression over several lines: the run places a method call on the line of its
    # name (`.coalesce()` below a parenthesised receiver), the static finding where it starts
    return s_place[0] == r_place[0] and s_place[1] < r_place[1] <= end_line


def merge(static: list[Diagnostic], run: list[Diagnostic], checked: Iterable[str],
          selected: Optional[Callable[[str, Diagnostic], bool]] = None) -> list[Diagnostic]:
    """`static` marked confirmed or not-seen, then the run's findings in the `checked` files that
    no static finding matches (those `selected(path, finding)` keeps: the rules chosen for
    that file and no `# noqa` on its line), marked run-only."""
    run_places = [_places(r) for r in run]  # each path resolved once, not once per pair
    marked, matched = [], set()
    for d in static:
        places = _places(d) if d.cell is None else None
        hits = [i for i, r in enumerate(run) if places and _matches(d.code, places, r, run_places[i], d.end_line)]
        matched.update(hits)
        marked.append(replace(d, runtime="confirmed" if hits else "not-seen"))
    files = {_real(p): p for p in checked}
    only = []
    for i, r in enumerate(run):
        shown = files.get(run_places[i][0][0])
        if i in matched or shown is None:
            continue
        if selected is not None and not selected(shown, r):
            continue
        only.append(replace(r, path=shown, runtime="run-only",
                            evidence=tuple(replace(e, path=_shown(e.path, r.path, shown)) for e in r.evidence)))
    return marked + sorted(only, key=Diagnostic.sort_key)


def _shown(evidence_path: str, run_path: str, shown: str) -> str:
    """An evidence path as the finding shows its own: none in the same file, relative when beneath
    the current folder."""
    if not evidence_path or _real(evidence_path) == _real(run_path):
        return ""
    rel = os.path.relpath(evidence_path)
    return evidence_path if rel.startswith(os.pardir) else rel


def suppressions_of(path: str):
    """The `# noqa` directives of a file (None when it cannot be read), parsed once per file
    however many of the run's findings lie in it."""
    from ..source import DecodeError, decode
    from ..suppression import parse
    try:
        with open(path, "rb") as f:
            return parse(decode(f.read()).text)
    except (OSError, DecodeError):
        return None


def not_suppressed_by(s, d: Diagnostic) -> bool:
    """No directive of `s` (a file's parsed `# noqa`s, or None) covers the finding's line."""
    return s is None or not s.suppresses(d.code, s.directive_line(d.line))


def not_suppressed_in(text: str, d: Diagnostic) -> bool:
    from ..suppression import parse
    return not_suppressed_by(parse(text), d)


def changed_since(report_path: str, run: list[Diagnostic], checked: Iterable[str]) -> list[str]:
    """The checked files the run saw something in that were written after the report: the
    run's lines may no longer be theirs."""
    try:
        written = os.stat(report_path).st_mtime_ns
    except OSError:
        return []
    seen = {_real(d.path) for d in run}
    out = []
    for path in checked:
        try:
            if _real(path) in seen and os.stat(path).st_mtime_ns > written:
                out.append(path)
        except OSError:
            pass
    return out


def summary(diagnostics: list[Diagnostic], report_path: str) -> str:
    confirmed = sum(1 for d in diagnostics if d.runtime == "confirmed")
    only = sum(1 for d in diagnostics if d.runtime == "run-only")
    static = sum(1 for d in diagnostics if d.runtime in ("confirmed", "not-seen"))
    return (f"Run-time report {report_path}: {confirmed} of {static} finding{'s' if static != 1 else ''} "
            f"confirmed at run time, {only} seen at run time only.")
