"""`--add-noqa`: suppress every current finding in place, to adopt sparselint on an existing codebase.

A directive goes into the file where the finding is (a finding inside a module that the
checked file calls goes into that module), where a comment is legal and where suppression
reads it: at the end of the finding's line, or, for a finding inside a multi-line (f-)string
or on a line continued by a backslash, at the end of the statement's last physical line (a
`# noqa` there covers every line before it). In a notebook, directives go into the cells'
source. Only lines that gain a code are counted and rewritten."""
from __future__ import annotations

import json
import os
import re
from collections import defaultdict

from . import notebook
from . import source as src
from .fixer import parses
from .suppression import statement_spans

_EXISTING = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.I)


def _target_lines(text: str, by_line: dict[int, set[str]]) -> dict[int, set[str]]:
    """Move each line that no comment can end to the end of its statement's span."""
    spans = statement_spans(text)
    out: dict[int, set[str]] = defaultdict(set)
    for line, codes in by_line.items():
        end = next((e for s, e in spans if s <= line < e), line)
        out[end] |= codes
    return out


def add_to_text(text: str, by_line: dict[int, set[str]], analysed: str | None = None) -> tuple[str, int]:
    """`text` with the directives added; `analysed` is the text tokens are read from when it
    differs (a notebook cell with its magics masked, same lines)."""
    parts = re.split(r"(\r\n|\r|\n)", text)
    lines, seps = parts[0::2], parts[1::2]
    added = 0
    for line, codes in sorted(_target_lines(analysed if analysed is not None else text, by_line).items()):
        if line < 1 or line > len(lines) or not lines[line - 1].strip():
            continue  # not a line of this text: never a comment on a line of its own
        new = with_codes(lines[line - 1], codes)
        if new != lines[line - 1]:
            lines[line - 1] = new
            added += 1
    return "".join(l + (seps[i] if i < len(seps) else "") for i, l in enumerate(lines)), added


def with_codes(text: str, codes) -> str:
    """One line with `# noqa: ...` added, or its existing list extended by `codes`."""
    m = _EXISTING.search(text)
    if m:
        old = [c.upper() for c in re.split(r"[\s,]+", m.group("codes")) if c]
        merged = old + sorted(set(codes) - set(old))
        return text[:m.start("codes")] + ", ".join(merged) + text[m.end("codes"):]
    return text.rstrip() + "  # noqa: " + ", ".join(sorted(codes))


def _by_line(diagnostics, cell=None) -> dict[int, set[str]]:
    out: dict[int, set[str]] = defaultdict(set)
    for d in diagnostics:
        if d.cell == cell and not d.code.startswith("SPL90"):
            out[d.line].add(d.code)
    return out


def add_all(results) -> tuple[int, list[str]]:
    """Directives for every finding of a run, each in the file it lives in; a finding that
    several checked files lead to gets one. (directives added, errors)"""
    by_file: dict[str, tuple[str, dict]] = {}
    for result in results:
        for d in result.diagnostics:
            if d.code.startswith("SPL90"):
                continue
            shown, found = by_file.setdefault(os.path.realpath(d.path), (d.path, {}))
            found[(d.cell, d.line, d.code)] = d
    added, problems = 0, []
    for shown, found in by_file.values():
        count, problem = add(shown, list(found.values()))
        added += count
        if problem:
            problems.append(problem)
    return added, problems


def add(path: str, diagnostics) -> tuple[int, str | None]:
    """Add or extend `# noqa: ...` for each finding; (directives added, error)."""
    diagnostics = [d for d in diagnostics if not d.code.startswith("SPL90")]
    if not diagnostics:
        return 0, None
    if path.endswith(".ipynb"):
        return _add_to_notebook(path, diagnostics)
    try:
        with open(path, "rb") as fh:
            decoded = src.decode(fh.read())
    except (OSError, src.DecodeError) as exc:
        return 0, f"{path}: cannot add noqa: {exc}"
    new, added = add_to_text(decoded.text, _by_line(diagnostics))
    if not added:
        return 0, None
    if not parses(new):
        return 0, f"{path}: cannot add noqa without breaking the code"
    try:
        src.write_atomic(path, src.encode(new, decoded.encoding))
    except OSError as exc:
        return 0, f"{path}: cannot write: {exc}"
    return added, None


def _add_to_notebook(path: str, diagnostics) -> tuple[int, str | None]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        nb = notebook.load(data)
    except (OSError, notebook.NotebookError) as exc:
        return 0, f"{path}: cannot add noqa: {exc}"
    out = json.loads(json.dumps(nb))
    added = 0
    for cell in sorted({d.cell for d in diagnostics if d.cell is not None}):
        original = notebook.cell_sources(nb).get(cell)
        if original is None:
            continue
        masked = notebook.mask(original, {})
        new, n = add_to_text(original, _by_line(diagnostics, cell), masked)
        if masked is not None and not parses(notebook.mask(new, {})):
            return 0, f"{path}: cannot add noqa to cell {cell} without breaking the code"
        out["cells"][cell - 1]["source"] = new.splitlines(keepends=True)
        added += n
    if not added:
        return 0, None
    try:
        # only the edited cells change, in the file's own formatting
        src.write_atomic(path, notebook.rewrite(data.decode("utf-8"), nb, out).encode("utf-8"))
    except OSError as exc:
        return 0, f"{path}: cannot write: {exc}"
    return added, None
