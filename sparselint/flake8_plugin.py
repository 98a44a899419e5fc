"""The flake8 plugin: `flake8 --select SPL` runs the same rules with the same positions.

flake8 reports only for the file it is checking. A finding inside another module of the
project, set off by this file's call, is reported in this file at the place that leads
there (the last step of its evidence in this file: usually the call), with the module,
line and column where it fails named in the message. It cannot be left to the run on that
module: checked alone, the module lacks this file's facts and is silent."""
from __future__ import annotations

import os
from typing import Iterator

from . import __version__
from .config import Settings
from .diagnostics import Diagnostic
from .engine import check_text


class Plugin:
    name = "sparselint"
    version = __version__

    def __init__(self, tree, filename: str = "stdin", lines=None):
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        if self.lines is not None:
            source = "".join(self.lines)
        else:
            with open(self.filename, encoding="utf-8", errors="surrogateescape") as fh:
                source = fh.read()
        diagnostics, _, _ = check_text(source, self.filename, Settings())
        for d in diagnostics:
            if _same_file(d.path, self.filename):
                # flake8 columns are 0-based offsets and it prints them plus one, as the CLI does.
                yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)
                continue
            here = _last_step_here(d, self.filename)
            if here is not None:
                where = f"{d.path}:{d.line}:{d.column}"
                yield here.line, here.column - 1, f"{d.code} in {where}: {d.message} (reached from this line)", type(self)


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _last_step_here(d: Diagnostic, filename: str):
    steps = [e for e in d.evidence if e.path and e.line > 0 and _same_file(e.path, filename)]
    return steps[-1] if steps else None
