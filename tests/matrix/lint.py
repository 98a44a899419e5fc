"""What the engine reports on a cell's programs, read the way the CLI reads a project: the
entry script checked with the modules it imports on disk beside it."""
from __future__ import annotations

import os
from dataclasses import dataclass

from sparselint.config import Settings
from sparselint.engine import check_text

from .cells import Cell, Program, write
from .shape import ENTRY


@dataclass(frozen=True)
class Finding:
    file: str  # relative to the cell's folder
    line: int
    code: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.code}"


def findings(program: Program, folder: str) -> list[Finding]:
    entry = write(program, folder)
    with open(entry, encoding="utf-8") as fh:
        text = fh.read()
    diagnostics, _, _ = check_text(text, entry, Settings())
    return sorted({Finding(os.path.relpath(d.path, folder).replace(os.sep, "/"), d.line, d.code)
                   for d in diagnostics}, key=lambda f: (f.file, f.line, f.code))


@dataclass(frozen=True)
class Result:
    cell: Cell
    bad: tuple  # findings on the bad program
    twin: tuple  # findings on the safe twin (each one a false alarm)

    @property
    def expected(self) -> Finding:
        return Finding(self.cell.bad.report_file, self.cell.bad.report_line, self.cell.hazard.code)

    @property
    def found(self) -> bool:
        return self.expected in self.bad


def lint(cell: Cell, folder: str) -> Result:
    return Result(cell, tuple(findings(cell.bad, os.path.join(folder, cell.id, "bad"))),
                  tuple(findings(cell.twin, os.path.join(folder, cell.id, "twin"))))


def lint_all(cells, folder: str) -> list[Result]:
    return [lint(c, folder) for c in cells]


__all__ = ["ENTRY", "Finding", "Result", "findings", "lint", "lint_all"]
