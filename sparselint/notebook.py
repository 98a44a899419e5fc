"""Jupyter notebooks: the code cells are checked as one program, findings point at cells.

Cells are joined in order with a marker line between them, so facts flow from cell to cell
as they do in a kernel. Findings are mapped back to (cell, line). IPython syntax (a cell
magic such as `%%time` on the first line, line magics `%`, shell escapes `!`, help `?`) is
masked line by line with a placeholder statement, so every other line keeps its number and is
checked; a fix puts the original lines back. A cell whose body is not Python (`%%bash`,
`%%html`, ...) holds nothing to check. A cell that still does not parse is left out and
reported (SPL900 at that cell). Fixes are applied to the joined source and split back on the
markers; only the `source` of code cells changes, never outputs or metadata.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field, replace
from typing import Optional

from .diagnostics import Diagnostic, Evidence

MARKER = "# sparselint: cell boundary"
PLACEHOLDER = "pass  # sparselint: magic {n}"
_PLACEHOLDER = re.compile(r"^([ \t]*)pass  # sparselint: magic (\d+)$")
# Cell magics whose body is Python run by the kernel; the body of any other is not Python.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit", "mprun"})


class NotebookError(Exception):
    pass


@dataclass
class Joined:
    text: str
    # virtual line (1-based) -> (cell number (1-based, counting all cells), line in cell)
    lines: dict[int, tuple[int, int]]
    code_cells: list[int]  # indexes into nb["cells"] of the joined cells
    # the original text of each masked line, by placeholder number
    masked: dict[int, str] = field(default_factory=dict)
    # cells left out because they do not parse: (cell number, line in cell, why)
    unparsable: list[tuple[int, int, str]] = field(default_factory=list)


def _cell_text(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _is_magic(line: str) -> bool:
    """IPython syntax: a line magic, shell escape, help request, or an assignment of one."""
    stripped = line.strip()
    if stripped.startswith(("%", "!", "?")) or re.match(r"^[\w.\[\]()]+\?{1,2}$", stripped):
        return True
    return re.match(r"^[\w.,\s\[\]()]+=\s*[%!]", stripped) is not None


def mask(text: str, masked: dict[int, str]) -> Optional[str]:
    """The cell with its IPython lines replaced by numbered placeholders (same line count), or
    None when the cell's body is not Python."""
    lines = text.split("\n")
    first = lines[0].strip() if lines else ""
    start = 0
    if first.startswith("%%"):
        name = first[2:].split()[0] if first[2:].split() else ""
        if name not in PYTHON_CELL_MAGICS:
            return None
        start = 1
    out = []
    continued = False
    for i, line in enumerate(lines):
        if (i < start or continued or _is_magic(line)) and line.strip():
            n = len(masked) + 1
            masked[n] = line
            indent = line[:len(line) - len(line.lstrip())] if i >= start and not continued else ""
            out.append(indent + PLACEHOLDER.format(n=n))
            continued = line.rstrip().endswith("\\")
        else:
            out.append(line)
            continued = False
    return "\n".join(out)


def unmask(text: str, masked: dict[int, str]) -> str:
    def back(line: str) -> str:
        m = _PLACEHOLDER.match(line)
        return masked.get(int(m.group(2)), line) if m else line
    return "\n".join(back(line) for line in text.split("\n"))


def _parse_problem(text: str) -> Optional[tuple[int, str]]:
    try:
        # a kernel runs top-level `await`
        compile(text, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError as exc:
        return (exc.lineno or 1, exc.msg)
    except (ValueError, RecursionError) as exc:
        return (1, str(exc))
    return None


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
    masked: dict[int, str] = {}
    unparsable: list[tuple[int, int, str]] = []
    line = 1
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = mask(_cell_text(cell), masked)
        if text is None:
            continue
        problem = _parse_problem(text)
        if problem is not None:
            unparsable.append((index + 1, problem[0], problem[1]))
            continue
        cells.append(index)
        parts.append(MARKER + "\n")
        line += 1
        body = text if text.endswith("\n") or not text else text + "\n"
        for n in range(body.count("\n")):
            mapping[line + n] = (index + 1, n + 1)
        line += body.count("\n")
        parts.append(body)
    return Joined("".join(parts), mapping, cells, masked, unparsable)


def map_diagnostic(d: Diagnostic, joined: Joined) -> Optional[Diagnostic]:
    where = joined.lines.get(d.line)
    if where is None:
        return None
    end = joined.lines.get(d.end_line, (where[0], where[1]))
    evidence = tuple(Evidence(joined.lines.get(e.line, (0, e.line))[1], e.column, e.text,
                              cell=joined.lines.get(e.line, (None, 0))[0]) for e in d.evidence)
    # Fixes are applied to the joined source, not through these positions.
    return replace(d, line=where[1], end_line=end[1], cell=where[0], evidence=evidence)


def map_evidence_in(d: Diagnostic, joined: Joined, path: str) -> Diagnostic:
    """A finding in another module, with the steps in this notebook (the call that leads
    there) placed in their cells."""
    evidence = tuple(replace(e, line=joined.lines.get(e.line, (None, e.line))[1],
                             cell=joined.lines.get(e.line, (None, 0))[0]) if e.path == path else e
                     for e in d.evidence)
    return replace(d, evidence=evidence)


def split(fixed: str, joined: Joined, nb: dict) -> dict:
    chunks = fixed.split(MARKER + "\n")[1:]
    if len(chunks) != len(joined.code_cells):
        raise NotebookError("cell boundaries changed while fixing")
    out = json.loads(json.dumps(nb))
    for index, chunk in zip(joined.code_cells, chunks):
        chunk = unmask(chunk, joined.masked)
        original = _cell_text(nb["cells"][index])
        if not original.endswith("\n") and chunk.endswith("\n"):
            chunk = chunk[:-1]
        out["cells"][index]["source"] = chunk.splitlines(keepends=True)
    return out


def dump(nb: dict) -> bytes:
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def is_joined(text: str) -> bool:
    """The text is code cells joined by `join` (it opens with a cell boundary)."""
    return text.startswith(MARKER + "\n")


def ends_cell(text: str, line: int) -> bool:
    """Nothing but blank lines and comments follows `line` (1-based) of a joined text up to
    the next cell boundary or the end: a statement ending there is its cell's last."""
    for rest in text.split("\n")[line:]:
        if rest == MARKER:
            return True
        if rest.strip() and not rest.lstrip().startswith("#"):
            return False
    return True


def cell_sources(nb: dict) -> dict[int, str]:
    """The text of each code cell, by cell number (1-based), for code frames."""
    return {i + 1: _cell_text(c) for i, c in enumerate(nb["cells"])
            if isinstance(c, dict) and c.get("cell_type") == "code"}


# --- Writing fixes back byte for byte -------------------------------------------------------
# A fix rewrites only the `source` of the cells it changed, in the file's own JSON text: its
# indentation, key order, escapes and trailing newline stay as the file had them.

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity")


def _ws(s: str, i: int) -> int:
    return _WS.match(s, i).end()


def _value_end(s: str, i: int) -> int:
    c = s[i]
    if c == '"':
        return _STRING.match(s, i).end()
    if c in "[{":
        depth, j = 0, i
        while True:
            c = s[j]
            if c == '"':
                j = _STRING.match(s, j).end()
                continue
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
    m = _SCALAR.match(s, i)
    if m is None:
        raise ValueError(f"no JSON value at offset {i}")
    return m.end()


def _members(s: str, i: int):
    """(key, value start, value end) of the object at `i`."""
    j = _ws(s, i + 1)
    if s[j] == "}":
        return
    while True:
        m = _STRING.match(s, j)
        key = json.loads(m.group())
        j = _ws(s, m.end())
        if s[j] != ":":
            raise ValueError(f"expected `:` at offset {j}")
        j = _ws(s, j + 1)
        end = _value_end(s, j)
        yield key, j, end
        j = _ws(s, end)
        if s[j] != ",":
            return
        j = _ws(s, j + 1)


def _elements(s: str, i: int) -> list[tuple[int, int]]:
    """(start, end) of each element of the array at `i`."""
    out = []
    j = _ws(s, i + 1)
    if s[j] == "]":
        return out
    while True:
        end = _value_end(s, j)
        out.append((j, end))
        j = _ws(s, end)
        if s[j] != ",":
            return out
        j = _ws(s, j + 1)


def _source_spans(text: str) -> dict[int, tuple[int, int]]:
    """Cell index -> (start, end) of its `source` value in the notebook's text."""
    start = _ws(text, 0)
    cells = next(((a, b) for k, a, b in _members(text, start) if k == "cells"), None)
    if cells is None or text[cells[0]] != "[":
        raise ValueError("no cells array")
    out = {}
    for index, (a, b) in enumerate(_elements(text, cells[0])):
        if text[a] != "{":
            continue
        for key, vs, ve in _members(text, a):
            if key == "source":
                out[index] = (vs, ve)
    return out


def _indent_unit(text: str) -> str:
    m = re.search(r"\n([ \t]+)\S", text)
    return m.group(1) if m else " "


def _list_text(text: str, span: tuple[int, int], new_lines: list[str], ensure_ascii: bool) -> str:
    """The JSON list of `new_lines`, laid out as the list at `span` is, its unchanged elements
    kept as written."""
    import difflib
    vs, ve = span
    elements = _elements(text, vs)
    raws = [text[a:b] for a, b in elements]
    old_lines = [json.loads(r) for r in raws]
    if elements:
        lead, trail = text[vs + 1:elements[0][0]], text[elements[-1][1]:ve - 1]
        if len(elements) > 1:
            sep = text[elements[0][1]:elements[1][0]]
        else:
            sep = "," + lead if "\n" in lead else ", "
    else:
        line = text[text.rfind("\n", 0, vs) + 1:vs]
        key_indent = line[:len(line) - len(line.lstrip())]
        lead = "\n" + key_indent + _indent_unit(text)
        trail, sep = "\n" + key_indent, "," + lead
    if not new_lines:
        return "[]"
    parts: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            parts.extend(raws[a1:a2])
        else:
            parts.extend(json.dumps(line, ensure_ascii=ensure_ascii) for line in new_lines[b1:b2])
    return "[" + lead + sep.join(parts) + trail + "]"


def rewrite(text: str, nb: dict, fixed_nb: dict) -> str:
    """The notebook's text with the `source` of each cell that differs between `nb` and
    `fixed_nb` replaced, every other byte kept. Falls back to a full dump when the text cannot
    be scanned (it is valid JSON, but not as this scanner expects)."""
    changed = [i for i, (a, b) in enumerate(zip(nb["cells"], fixed_nb["cells"]))
               if isinstance(a, dict) and _cell_text(a) != _cell_text(b)]
    if not changed:
        return text
    # escape non-ASCII only where the file does
    ensure_ascii = text.isascii() and "\\u" in text
    try:
        spans = _source_spans(text)
        edits = []
        for i in changed:
            if i not in spans:
                raise ValueError(f"cell {i + 1} has no source")
            vs, ve = spans[i]
            new = _cell_text(fixed_nb["cells"][i])
            if text[vs] == '"':
                edits.append((vs, ve, json.dumps(new, ensure_ascii=ensure_ascii)))
            else:
                edits.append((vs, ve, _list_text(text, spans[i], new.splitlines(keepends=True), ensure_ascii)))
    except (ValueError, AttributeError, IndexError, json.JSONDecodeError):
        return dump(fixed_nb).decode("utf-8")
    for vs, ve, new in sorted(edits, reverse=True):
        text = text[:vs] + new + text[ve:]
    return text


def cell_diff(path: str, before: str, after: str) -> str:
    """A unified diff per changed cell of the cell's source, headed `--- nb.ipynb:cell 3` (as
    ruff shows a notebook's fixes) rather than a diff of the JSON."""
    import difflib
    try:
        old, new = load(before.encode("utf-8")), load(after.encode("utf-8"))
    except NotebookError:
        return ""
    out = []
    for i, (a, b) in enumerate(zip(old["cells"], new["cells"])):
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        x, y = _cell_text(a), _cell_text(b)
        if x == y:
            continue
        name = f"{path}:cell {i + 1}"
        out.extend(difflib.unified_diff(x.splitlines(), y.splitlines(), fromfile=name, tofile=name, lineterm=""))
    return "\n".join(out) + "\n" if out else ""
