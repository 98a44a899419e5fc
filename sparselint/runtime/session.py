"""A recording session: what is installed into torch while a program runs, and what it saw."""
from __future__ import annotations

import itertools
import os
import sys
import sysconfig
import threading
from dataclasses import dataclass, replace
from typing import Optional

from ..diagnostics import Diagnostic, Evidence

_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the standard library's frames (contextlib, functools, copy, runpy) are never the user's line
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"])


@dataclass
class _Seen:
    diagnostic: Diagnostic
    count: int = 1
    raised: bool = False


class Session:
    """Records hazards while installed, as Diagnostics keyed by (code, place): a hazard seen
    a thousand times in a training loop is one finding with a count."""

    def __init__(self, root: Optional[str] = None):
        self.root = os.path.abspath(root or os.getcwd())
        self._seen: dict[tuple, _Seen] = {}
        self._lock = threading.Lock()
        self._installed = None
        # called after each new finding (not each sighting): a runner that must keep what was
        # seen if the process dies (memory corruption, SPL603) saves the report there
        self.on_new_finding = None

    def __enter__(self) -> "Session":
        from . import hooks  # imports torch
        self._installed = hooks.install(self)
        return self

    def __exit__(self, *exc) -> bool:
        if self._installed is not None:
            self._installed.uninstall()
            self._installed = None
        return False

    def record(self, code: str, message: str, *, frame=None, when: str = "",
               evidence: tuple[Evidence, ...] = (), suggestion: str = "", raised: bool = False,
               at: Optional[tuple[str, int, int]] = None) -> None:
        """One sighting of hazard `code`, placed at `frame` (default: the user's frame that
        is running now, the first outside torch and sparselint), or at a (path, line, column)
        seen earlier (`at`: a silent hazard proven only when a tensor dies)."""
        if at is not None:
            path, line, column = at
            end_line, end_column = line, 0
        else:
            frame = frame or user_frame()
            if frame is None:
                return
            path, line, column, end_line, end_column = _position(frame)
        # as in static findings, an evidence link names its file only when it is another one
        evidence = tuple(replace(e, path="") if os.path.abspath(e.path or path) == path else e for e in evidence)
        diagnostic = Diagnostic(code, rule_name(code), message, path, line, column, end_line, end_column,
                                evidence=evidence, suggestion=suggestion, when=when)
        key = (code, path, line, column)
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                self._seen[key] = _Seen(diagnostic, raised=raised)
            else:
                seen.count += 1
                seen.raised = seen.raised or raised
        if seen is None and self.on_new_finding is not None:
            self.on_new_finding()

    def findings(self) -> list[Diagnostic]:
        with self._lock:
            found = [s.diagnostic for s in self._seen.values()]
        return sorted(found, key=Diagnostic.sort_key)

    def counts(self) -> dict[tuple, tuple[int, bool]]:
        """(code, path, line, column) -> (times seen, whether it raised)."""
        with self._lock:
            return {k: (s.count, s.raised) for k, s in self._seen.items()}


def rule_name(code: str) -> str:
    from ..rule import rule_index
    return dict(rule_index()).get(code, "")


_OURS_OR_TORCH: dict[str, bool] = {}


def _is_ours_or_torch(filename: str) -> bool:
    # asked for every frame of every watched call: an absolute name's answer never changes
    known = _OURS_OR_TORCH.get(filename)
    if known is None:
        known = _classify(filename)
        if os.path.isabs(filename) and "torch" in sys.modules:
            _OURS_OR_TORCH[filename] = known
    return known


def _classify(filename: str) -> bool:
    if filename.startswith("<") and not filename.startswith("<ipython"):
        return True
    path = os.path.abspath(filename)
    if path.startswith(_OWN_DIR + os.sep):
        return True
    if path.startswith(_STDLIB_DIR + os.sep) and os.sep + "site-packages" + os.sep not in path:
        return True
    torch = sys.modules.get("torch")
    torch_dir = os.path.dirname(getattr(torch, "__file__", "") or "") if torch else ""
    return bool(torch_dir) and path.startswith(torch_dir + os.sep)


def user_frame(start=None):
    """The innermost frame of the user's code: the first outside torch and sparselint."""
    frame = start or sys._getframe(1)
    while frame is not None and _is_ours_or_torch(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


# (code object, instruction offset) -> its source positions: a training loop asks for the
# same few instructions at every step, and finding one walks the code's positions from the start
_POSITIONS: dict = {}


def _positions(code, lasti: int):
    key = (code, lasti)
    found = _POSITIONS.get(key, _POSITIONS)
    if found is _POSITIONS:
        try:
            found = next(itertools.islice(code.co_positions(), lasti // 2, None), None)
        except AttributeError:  # Python before 3.11
            found = None
        if len(_POSITIONS) > 50_000:
            _POSITIONS.clear()
        _POSITIONS[key] = found
    return found


def _position(frame) -> tuple[str, int, int, int, int]:
    path = os.path.abspath(frame.f_code.co_filename)
    line = frame.f_lineno
    start_col, end_line, end_col = 0, line, 0
    positions = _positions(frame.f_code, frame.f_lasti)
    if positions is not None and positions[0] == line and positions[2] is not None:
        start_col, end_line, end_col = positions[2], positions[1] or line, positions[3] or 0
    return path, line, start_col + 1, end_line, end_col + 1
