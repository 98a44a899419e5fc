"""The output formats ruff users know beyond the first few: json-lines, junit, pylint, grouped,
azure and rdjson (reviewdog). A notebook cell's line is not a line of the `.ipynb` file, so
where a format needs a file line, a finding in a cell gives none (or the notebook's first
line) and its message says which cell and line."""
from __future__ import annotations

import json
from collections import defaultdict
from xml.etree import ElementTree as ET

from .diagnostics import Diagnostic


def _where(d: Diagnostic) -> str:
    return f"cell {d.cell}, line {d.line}: " if d.cell is not None else ""


def json_lines(diagnostics: list[Diagnostic]) -> str:
    return "\n".join(json.dumps(d.to_json()) for d in diagnostics)


def pylint(diagnostics: list[Diagnostic]) -> str:
    """`path:line: [CODE] message`, the format pylint's `parseable` readers take."""
    out = []
    for d in diagnostics:
        line = f"cell {d.cell}:{d.line}" if d.cell is not None else str(d.line)
        out.append(f"{d.path}:{line}: [{d.code}] {d.shown_message}")
    return "\n".join(out)


def grouped(diagnostics: list[Diagnostic], color: bool = False) -> str:
    """Findings under their file, `  line:column CODE message`, the positions aligned (ruff's
    `grouped`)."""
    by_path: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        by_path[d.path].append(d)
    blocks = []
    for path, items in by_path.items():
        rows = [(f"cell {d.cell}:{d.line}" if d.cell is not None else str(d.line), str(d.column), d) for d in items]
        lw = max(len(r[0]) for r in rows)
        cw = max(len(r[1]) for r in rows)
        head = f"\x1b[1m{path}\x1b[0m:" if color else f"{path}:"
        lines = [head]
        for line, column, d in rows:
            mark = "[*] " if d.fix is not None and d.fix.safe else ""
            code = f"\x1b[1;31m{d.code}\x1b[0m" if color else d.code
            lines.append(f"  {line:>{lw}}:{column:<{cw}} {code} {mark}{d.shown_message}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _azure_escape(text: str) -> str:
    # Azure Pipelines logging commands: `;` and `]` end a property, a newline the command
    return (text.replace("%", "%AZP25").replace(";", "%3B").replace("]", "%5D")
            .replace("\r", "%0D").replace("\n", "%0A"))


def azure(diagnostics: list[Diagnostic]) -> str:
    out = []
    for d in diagnostics:
        props = ["type=error", f"sourcepath={_azure_escape(d.path)}"]
        if d.cell is None:
            props += [f"linenumber={d.line}", f"columnnumber={d.column}"]
        props.append(f"code={d.code}")
        out.append(f"##vso[task.logissue {';'.join(props)};]{_azure_escape(_where(d) + d.shown_message)}")
    return "\n".join(out)


def _range(start: tuple[int, int], end: tuple[int, int]) -> dict:
    return {"start": {"line": start[0], "column": start[1]}, "end": {"line": end[0], "column": end[1]}}


def rdjson(diagnostics: list[Diagnostic]) -> dict:
    """reviewdog's Diagnostic Format (rdjson): one `DiagnosticResult`."""
    items = []
    for d in diagnostics:
        location: dict = {"path": d.path}
        if d.cell is None:
            location["range"] = _range((d.line, d.column), (d.end_line, d.end_column))
        item = {"message": _where(d) + d.shown_message, "location": location, "severity": "ERROR",
                "code": {"value": d.code}}
        if d.fix is not None and d.cell is None:
            item["suggestions"] = [{"range": _range(e.start, e.end), "text": e.text} for e in d.fix.edits]
        items.append(item)
    return {"source": {"name": "sparselint", "url": "https://pypi.org/project/sparselint/"},
            "severity": "ERROR", "diagnostics": items}


def junit(diagnostics: list[Diagnostic]) -> str:
    """JUnit XML: a test suite per file, a failed test case per finding (as ruff writes it);
    one passing case when there is nothing to report."""
    root = ET.Element("testsuites", name="sparselint", tests=str(max(len(diagnostics), 1)), skipped="0",
                      failures=str(len(diagnostics)), errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="sparselint", tests="1", skipped="0", errors="0",
                              failures="0", package="org.sparselint")
        ET.SubElement(suite, "testcase", name="No findings", classname="sparselint")
    by_path: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        by_path[d.path].append(d)
    for path, items in by_path.items():
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(items)), skipped="0", errors="0",
                              failures=str(len(items)), package="org.sparselint")
        classname = path[:-len(".py")] if path.endswith(".py") else path
        for d in items:
            attrs = {"name": f"org.sparselint.{d.code}", "classname": classname}
            if d.cell is None:
                attrs.update(line=str(d.line), column=str(d.column))
            case = ET.SubElement(suite, "testcase", **attrs)
            where = f"cell {d.cell}, " if d.cell is not None else ""
            failure = ET.SubElement(case, "failure", message=d.shown_message)
            failure.text = f"{where}line {d.line}, col {d.column}, {d.shown_message}"
    ET.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
