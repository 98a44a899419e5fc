"""What a run saw, kept as a file for `sparselint check --runtime-report`.

The file is JSON: `{"kind": "sparselint-runtime-report", "version": 1, "command": [...],
"torch": "2.13.0", "findings": [...]}`, each finding a Diagnostic's JSON (as `--output-format
json` prints it) with `count` (times seen) and `raised` (whether torch raised there)."""
from __future__ import annotations

import json
from typing import Iterable

from ..diagnostics import Diagnostic, Evidence

KIND = "sparselint-runtime-report"
VERSION = 1


class ReportError(ValueError):
    """A file that is not a run-time report this version can read."""


def rows_of(findings: Iterable[Diagnostic], counts: dict) -> list[dict]:
    """Findings as the report's rows: each Diagnostic's JSON with `count` and `raised`."""
    rows = []
    for d in findings:
        row = d.to_json()
        count, raised = counts.get((d.code, d.path, d.line, d.column), (1, False))
        row.update(count=count, raised=raised)
        rows.append(row)
    return rows


def merge_rows(rows: Iterable[dict]) -> tuple[list[Diagnostic], dict]:
    """Rows of several processes (pytest-xdist workers) as one run's findings and counts: a
    hazard seen by two workers is one finding, its counts added."""
    findings: dict[tuple, Diagnostic] = {}
    counts: dict[tuple, tuple[int, bool]] = {}
    for row in rows:
        d = _diagnostic(row)
        key = (d.code, d.path, d.line, d.column)
        findings.setdefault(key, d)
        count, raised = counts.get(key, (0, False))
        counts[key] = (count + int(row.get("count", 1)), raised or bool(row.get("raised")))
    return sorted(findings.values(), key=Diagnostic.sort_key), counts


def save(path: str, findings: Iterable[Diagnostic], counts: dict, command: list[str], torch_version: str) -> None:
    rows = rows_of(findings, counts)
    data = {"kind": KIND, "version": VERSION, "command": list(command), "torch": torch_version, "findings": rows}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def load(path: str) -> list[Diagnostic]:
    """The findings of a report, as Diagnostics; a clear ReportError for anything else."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise ReportError(f"cannot read run-time report {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path} is not a run-time report (not JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise ReportError(f"{path} is not a run-time report (written by `sparselint run --report`)")
    if data.get("version") != VERSION:
        raise ReportError(f"{path} is a run-time report of version {data.get('version')!r}; this sparselint reads {VERSION}")
    try:
        return [_diagnostic(row) for row in data["findings"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportError(f"{path}: a finding lacks {exc}") from None


def _diagnostic(row: dict) -> Diagnostic:
    evidence = tuple(Evidence(e["line"], e["column"], e["message"], cell=e.get("cell"), path=e.get("path", ""))
                     for e in row.get("evidence", ()))
    return Diagnostic(row["code"], row.get("name", ""), row["message"], row["path"], int(row["line"]),
                      int(row["column"]), int(row.get("end_line") or row["line"]), int(row.get("end_column") or 0),
                      evidence=evidence, suggestion=row.get("suggestion", ""), when=row.get("when", ""),
                      cell=row.get("cell"))
