"""Rendering findings: concise, full, json, github, sarif, gitlab (the others: formats.py)."""
from __future__ import annotations

import difflib
import json
import os
from collections import Counter
from typing import Iterable

from .diagnostics import Diagnostic
from .fixer import apply_edits

FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif", "gitlab", "junit", "pylint", "grouped",
           "azure", "rdjson")
# Formats read by programs: nothing but the format goes to stdout.
MACHINE_FORMATS = ("json", "json-lines", "github", "sarif", "gitlab", "junit", "pylint", "azure", "rdjson")


def location(d: Diagnostic) -> str:
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    return f"{d.path}:{cell}{d.line}:{d.column}"


def concise(d: Diagnostic, color: bool = False) -> str:
    mark = " [*]" if d.fix is not None and d.fix.safe else ""
    if color:
        return f"\x1b[1m{location(d)}\x1b[0m: \x1b[1;31m{d.code}\x1b[0m{mark} {d.shown_message}"
    return f"{location(d)}: {d.code}{mark} {d.shown_message}"


def use_color(stream) -> bool:
    """Colour only on a terminal; NO_COLOR turns it off and FORCE_COLOR on (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


class Progress:
    """`checked N/M files` on stderr, for long runs on a terminal only."""

    MIN_FILES = 200

    def __init__(self, total: int):
        import sys
        self.total, self.count, self.stream = total, 0, sys.stderr
        self.enabled = total >= self.MIN_FILES and self.stream.isatty()
        self._last = -1

    def step(self, n: int) -> None:
        if not self.enabled:
            return
        self.count += n
        percent = self.count * 100 // max(self.total, 1)
        if percent != self._last:
            self._last = percent
            self.stream.write(f"\rsparselint: checked {self.count}/{self.total} files")
            self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def fixes_applied(results, would: bool = False) -> str:
    lines = ["Fixes that would be applied:" if would else "Fixes applied:"]
    for r in results:
        for code, n in sorted(Counter(r.fixed_codes).items()):
            lines.append(f"  {r.path}: {n} x {code}")
    return "\n".join(lines)


def _frame(d: Diagnostic, lines: list[str]) -> list[str]:
    first = max(1, d.line - 1)
    last = min(len(lines), d.end_line + 1)
    width = len(str(last))
    out = [" " * width + " |"]
    for n in range(first, last + 1):
        text = lines[n - 1].rstrip("\r\n")
        out.append(f"{n:>{width}} | {text}")
        if d.line <= n <= d.end_line:
            start = d.column if n == d.line else 1 + (len(text) - len(text.lstrip()))
            end = d.end_column if n == d.end_line else len(text) + 1
            carets = "^" * max(1, end - start)
            label = f" {d.code}" if n == d.end_line else ""
            out.append(" " * width + " | " + " " * (start - 1) + carets + label)
    out.append(" " * width + " |")
    return out


def _where(line: int, cell) -> str:
    return f"cell {cell}, line {line}" if cell is not None else f"line {line}"


def full(d: Diagnostic, source: str | None) -> str:
    """A finding with its code frame; for a notebook, `source` is the text of the finding's cell."""
    out = [concise(d)]
    if source is not None:
        if d.cell is not None:
            out.append(f"  --> cell {d.cell}")
        out.extend("  " + line for line in _frame(d, source.splitlines()))
    if d.when:
        out.append(f"  = when: {_when(d.when)}")
    for ev in d.evidence:
        where = ev.place if ev.path else _where(ev.line, ev.cell)
        out.append(f"  = because: {where}: {ev.text}")
    if d.suggestion:
        out.append(f"  = help: {d.suggestion}")
    if d.fix is not None:
        out.append(f"  = fix ({d.fix.applicability}): {d.fix.title}")
        # A notebook's fix edits the joined cells; its diff is shown by --diff.
        if source is not None and d.cell is None:
            fixed, _ = apply_edits(source, [d.fix])
            diff = difflib.unified_diff(source.splitlines(), fixed.splitlines(), lineterm="", n=0)
            out.extend("    " + line for line in list(diff)[2:])
    return "\n".join(out)


def _when(when: str) -> str:
    return {"line": "at this line", "backward": "at `.backward()`", "step": "at `optimizer.step()`",
            "silent": "silently", "construct": "at construction"}.get(when, when)


def github(d: Diagnostic) -> str:
    def esc(s: str) -> str:
        return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    def prop(s: str) -> str:
        return esc(s).replace(":", "%3A").replace(",", "%2C")

    if d.cell is not None:
        # Lines of a cell are not lines of the .ipynb file: the annotation names the file,
        # and its title and message the cell and line.
        where = f"cell {d.cell}, line {d.line}"
        return (f"::error title={prop('sparselint (' + d.code + ') at ' + where)},file={prop(d.path)}"
                f"::{esc(where + ': ' + d.code + ' ' + d.shown_message)}")
    return (f"::error title={prop('sparselint (' + d.code + ')')},file={prop(d.path)},line={d.line},"
            f"col={d.column},endLine={d.end_line},endColumn={d.end_column}::{esc(d.code + ' ' + d.shown_message)}")


def _uri(path: str) -> str:
    """An absolute path as a file:// URI; a relative one as a relative URI reference."""
    from pathlib import Path
    from urllib.parse import quote
    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(path.replace(os.sep, "/"))


def _region(line: int, column: int, end_line: int = 0, end_column: int = 0) -> dict:
    region = {"startLine": max(line, 1), "startColumn": max(column, 1)}
    if end_line:
        region.update(endLine=end_line, endColumn=max(end_column, 1))
    return region


def sarif(diagnostics: list[Diagnostic]) -> dict:
    from . import __version__
    from .rule import all_rules, doc_sections
    rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    descriptors = []
    for r in rules:
        sections = doc_sections(r.doc())
        descriptors.append({
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary()},
            "fullDescription": {"text": " ".join(sections.get("Why is this bad?", "").split())},
            "help": {"text": r.doc(), "markdown": r.doc()},
            "properties": {"error": r.error, "when": r.when, "torchVersions": list(r.torch_versions),
                           "tags": ["pytorch", "sparse"]},
        })
    results = []
    for d in diagnostics:
        uri = _uri(d.path)
        if d.cell is None:
            location = {"physicalLocation": {"artifactLocation": {"uri": uri},
                                             "region": _region(d.line, d.column, d.end_line, d.end_column)}}
        else:
            # A cell's lines are not lines of the .ipynb file: the notebook is the artifact,
            # the cell a logical location, and the message says where.
            location = {"physicalLocation": {"artifactLocation": {"uri": uri}},
                        "logicalLocations": [{"name": f"cell {d.cell}", "kind": "module",
                                              "fullyQualifiedName": f"{d.path}:cell {d.cell}"}],
                        "properties": {"cell": d.cell, "line": d.line, "column": d.column}}
        where = f"cell {d.cell}, line {d.line}: " if d.cell is not None else ""
        result = {
            "ruleId": d.code,
            "level": "error",
            "message": {"text": where + d.shown_message},
            "locations": [location],
        }
        if d.runtime:
            result["properties"] = {"runtime": d.runtime}
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.evidence:
            related = []
            for i, e in enumerate(d.evidence):
                # evidence in another module (a call site) points at that file
                at = _uri(e.path) if e.path else uri
                if e.cell is None and d.cell is None:
                    related.append({"id": i, "message": {"text": e.text},
                                    "physicalLocation": {"artifactLocation": {"uri": at},
                                                         "region": _region(e.line, e.column)}})
                else:
                    related.append({"id": i, "message": {"text": f"{_where(e.line, e.cell)}: {e.text}"},
                                    "physicalLocation": {"artifactLocation": {"uri": at}}})
            result["relatedLocations"] = related
        if d.fix is not None and d.cell is None:
            result["fixes"] = [{
                "description": {"text": f"{d.fix.title} ({d.fix.applicability})"},
                "artifactChanges": [{"artifactLocation": {"uri": uri}, "replacements": [
                    {"deletedRegion": _region(e.start[0], e.start[1], e.end[0], e.end[1]),
                     "insertedContent": {"text": e.text}} for e in d.fix.edits]}],
            }]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "sparselint", "version": __version__,
                                      "informationUri": "https://pypi.org/project/sparselint/",
                                      "rules": descriptors}},
                  "results": results}],
    }


def gitlab(diagnostics: list[Diagnostic]) -> list:
    import hashlib
    out = []
    for d in diagnostics:
        key = f"{d.path}:{d.cell}:{d.code}:{d.line}:{d.column}:{d.message}".encode()
        where = f"cell {d.cell}, line {d.line}: " if d.cell is not None else ""
        # GitLab needs a line of the file; a cell's line is not one, so the notebook's first
        # line carries it and the description says where.
        lines = {"begin": d.line, "end": d.end_line} if d.cell is None else {"begin": 1, "end": 1}
        out.append({"description": f"{where}{d.code} {d.shown_message}", "check_name": d.code,
                    "fingerprint": hashlib.sha256(key).hexdigest(), "severity": "major",
                    "location": {"path": d.path, "lines": lines}})
    return out


def render(diagnostics: list[Diagnostic], fmt: str, sources: dict[str, str], color: bool = False) -> str:
    if fmt == "json":
        return json.dumps([d.to_json() for d in diagnostics], indent=2)
    if fmt == "sarif":
        return json.dumps(sarif(diagnostics), indent=2)
    if fmt == "gitlab":
        return json.dumps(gitlab(diagnostics), indent=2)
    if fmt == "github":
        return "\n".join(github(d) for d in diagnostics)
    if fmt in ("json-lines", "junit", "pylint", "grouped", "azure", "rdjson"):
        from . import formats
        if fmt == "rdjson":
            return json.dumps(formats.rdjson(diagnostics), indent=2)
        if fmt == "grouped":
            return formats.grouped(diagnostics, color)
        return getattr(formats, fmt.replace("-", "_"))(diagnostics)
    if fmt == "full":
        return "\n\n".join(full(d, sources.get((d.path, d.cell) if d.cell is not None else d.path))
                           for d in diagnostics)
    return "\n".join(concise(d, color) for d in diagnostics)


def statistics_json(diagnostics: Iterable[Diagnostic]) -> list:
    diagnostics = list(diagnostics)
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix is not None and d.fix.safe)
    return [{"code": code, "name": name, "count": n, "fixable": bool(fixable[code])}
            for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def statistics(diagnostics: Iterable[Diagnostic]) -> str:
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix is not None and d.fix.safe)
    rows = []
    for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rows.append(f"{n:>5}  {code}  {'[*] ' if fixable[code] else '    '}{name}")
    return "\n".join(rows)


_PLURALS = {"fix": "fixes", "hidden fix": "hidden fixes", "more fix": "more fixes"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else _PLURALS.get(word, word + 's')}"


def summary(remaining: int, fixable: int, fixed: int, hidden: int = 0, would: bool = False,
            fix_only: bool = False) -> str:
    """The closing lines, worded as ruff's: `hidden` counts the remaining unsafe fixes, `would`
    is for --diff, where nothing was written. As in ruff, `Found` counts every finding, the
    fixed ones included: `Found 15 findings (4 fixed, 11 remaining).`"""
    parts = []
    unsafe = f"{_plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option"
    if fix_only:
        # --fix-only reports what was fixed, never what remains
        if fixed:
            parts.append(f"{'Would fix' if would else 'Fixed'} {_plural(fixed, 'finding')}.")
        else:
            parts.append("No findings fixed" + (f" ({unsafe})." if hidden else "."))
        return "\n".join(parts)
    if would and fixed:
        parts.append(f"Would fix {_plural(fixed, 'finding')}.")
    if (remaining or fixed) and not would:
        found = remaining + fixed
        parts.append(f"Found {_plural(found, 'finding')}" +
                     (f" ({fixed} fixed, {remaining} remaining)." if fixed else "."))
        if fixable and hidden:
            parts.append(f"[*] {fixable} fixable with the `--fix` option ({unsafe}).")
        elif fixable:
            parts.append(f"[*] {fixable} fixable with the `--fix` option.")
        elif hidden:
            parts.append(f"No fixes available ({unsafe}).")
    elif would and hidden:
        parts.append(f"{_plural(hidden, 'more fix')} would be applied with the `--unsafe-fixes` option.")
    elif not fixed and not remaining:
        parts.append("All checks passed!")
    elif would and not fixed:
        parts.append("No fixes would be applied.")
    return "\n".join(parts)


def unified_diff(path: str, before: str, after: str) -> str:
    if path.endswith(".ipynb"):
        # a notebook's fixes are shown per cell, not as a diff of its JSON
        from .notebook import cell_diff
        return cell_diff(path, before, after)
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=path, tofile=path))
