"""The flake8 plugin: `flake8 --select SPL` runs the same rules with the same positions."""
from __future__ import annotations

from typing import Iterator

from . import __version__
from .config import Settings
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
            # flake8 columns are 0-based offsets and it prints them plus one, as the CLI does.
            yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)
