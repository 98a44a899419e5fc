"""Jupyter notebooks: the code cells are checked as one program, findings point at cells.

Cells are joined in order with a marker line between them, so facts flow from cell to cell
as they do in a kernel. Findings are mapped back to (cell, line). A cell that holds IPython
magics (`%`, `!`) is left out of the analysis and never rewritten. Fixes are applied to the
joined source and split back on the markers; only the `source` of code cells changes, never
outputs or metadata.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Optional

from .diagnostics import Diagnostic, Evidence

MARKER = "# sparselint: cell boundary"


class NotebookError(Exception):
    pass


@dataclass
class Joined:
    text: str
    # virtual line (1-based) -> (cell number (1-based, counting all cells), line in cell)
    lines: dict[int, tuple[int, int]]
    code_cells: list[int]  # indexes into nb["cells"] of the joined cells


def _cell_text(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _has_magic(text: str) -> bool:
    return any(line.lstrip().startswith(("%", "!")) for line in text.splitlines())


def load(data: bytes) -> dict:
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotebookError(f"not a readable notebook: {exc}") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("not a notebook: no `cells` list")
    return nb


def join(nb: dict) -> Joined:
    parts: list[str] = []
    mapping: dict[int, tuple[int, int]] = {}
    cells: list[int] = []
    line = 1
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = _cell_text(cell)
        if _has_magic(text):
            continue
        cells.append(index)
        parts.append(MARKER + "\n")
        line += 1
        body = text if text.endswith("\n") or not text else text + "\n"
        for n in range(body.count("\n")):
            mapping[line + n] = (index + 1, n + 1)
        line += body.count("\n")
        parts.append(body)
    return Joined("".join(parts), mapping, cells)


def map_diagnostic(d: Diagnostic, joined: Joined) -> Optional[Diagnostic]:
    where = joined.lines.get(d.line)
    if where is None:
        return None
    end = joined.lines.get(d.end_line, (where[0], where[1]))
    evidence = tuple(Evidence(joined.lines.get(e.line, (0, e.line))[1], e.column,
                              f"cell {joined.lines.get(e.line, (0, 0))[0]}: {e.text}") for e in d.evidence)
    # Fixes are applied to the joined source, not through these positions.
    return replace(d, line=where[1], end_line=end[1], cell=where[0], evidence=evidence)


def split(fixed: str, joined: Joined, nb: dict) -> dict:
    chunks = fixed.split(MARKER + "\n")[1:]
    if len(chunks) != len(joined.code_cells):
        raise NotebookError("cell boundaries changed while fixing")
    out = json.loads(json.dumps(nb))
    for index, chunk in zip(joined.code_cells, chunks):
        original = _cell_text(nb["cells"][index])
        if not original.endswith("\n") and chunk.endswith("\n"):
            chunk = chunk[:-1]
        out["cells"][index]["source"] = chunk.splitlines(keepends=True)
    return out


def dump(nb: dict) -> bytes:
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
