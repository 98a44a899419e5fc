"""What the server checks: a Python buffer, or the code cells of a notebook joined into one
program as `sparselint check` joins an .ipynb. Each result remembers the exact text it was
computed from, so it is reused while that text is unchanged and never applied to another."""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace
from typing import Optional

from .. import notebook
from ..diagnostics import Diagnostic
from ..engine import check_text
from .settings import Resolved
from .syntax_errors import relocate

log = logging.getLogger(__name__)


@dataclass
class Source:
    key: str  # the uri of the document or notebook
    path: Optional[str]  # its file, when it has one
    text: str  # the text the engine sees
    version: Optional[int]
    # uri -> text of every document a finding can land in (the buffer, or each cell)
    targets: dict[str, str]
    # a notebook's cells as joined for the engine, and the uri of each cell; None for a buffer
    joined: Optional[notebook.Joined] = None
    cell_uris: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.path or self.key

    def locate(self, line: int) -> Optional[tuple[str, int]]:
        if self.joined is None:
            return self.key, line
        where = self.joined.lines.get(line)
        if where is None:
            return None
        return self.cell_uris[where[0] - 1], where[1]


def buffer(uri: str, path: Optional[str], text: str, version: Optional[int]) -> Source:
    return Source(uri, path, text, version, {uri: text})


def notebook_source(uri: str, path: Optional[str], cells: list[tuple[str, bool, str]],
                    version: Optional[int]) -> Source:
    """cells: (cell uri, is code, text) in notebook order."""
    nb = {"cells": [{"cell_type": "code" if code else "markdown", "source": text} for _, code, text in cells]}
    joined = notebook.join(nb)
    return Source(uri, path, joined.text, version, {u: t for u, _, t in cells}, joined,
                  tuple(u for u, _, _ in cells))


@dataclass
class Analysis:
    source: Source
    resolved: Resolved
    findings: list[Diagnostic]
    dependencies: tuple[str, ...]
    _fixed: dict = field(default_factory=dict, repr=False)

    def fixed_text(self) -> Optional[str]:
        """The text with every safe fix applied (computed once per analysis)."""
        if "text" not in self._fixed:
            settings = replace(self.resolved.settings, fix=True, unsafe_fixes=False)
            _, fixed, _ = check_text(self.source.text, self.source.name, settings, _rules(self.source, self.resolved))
            self._fixed["text"] = fixed
        return self._fixed["text"]


def _rules(source: Source, resolved: Resolved):
    settings = resolved.settings
    return settings.rules_for(source.path) if source.path else settings.rules()


def analyse(source: Source, resolved: Resolved) -> Analysis:
    if resolved.error or resolved.excluded:
        return Analysis(source, resolved, [], ())
    deps: set = set()
    settings = replace(resolved.settings, fix=False)
    rules = _rules(source, resolved)
    findings, _, _ = check_text(source.text, source.name, settings, rules, deps)
    findings = relocate(findings, source.text)
    if resolved.runtime_report and source.path and source.joined is None:
        findings = _with_run(findings, source, resolved.runtime_report, {r.code for r in rules})
        deps.add(os.path.abspath(resolved.runtime_report))  # a new run's report re-checks the file
    return Analysis(source, resolved, findings, tuple(sorted(deps)))


def _with_run(findings: list[Diagnostic], source: Source, report_path: str, codes: set) -> list[Diagnostic]:
    """The findings marked by the configured run-time report, and what only the run saw in this
    file (where the buffer's rules and `# noqa` comments let it through). A report that cannot
    be read leaves the findings as they are: the command line says why."""
    from ..runtime.merge import load, merge, not_suppressed_in
    from ..runtime.report import ReportError
    try:
        run = load(report_path)
    except ReportError as exc:
        log.warning("run-time report not used: %s", exc)
        return findings
    return merge(findings, run, [source.name],
                 lambda _path, d: d.code in codes and not_suppressed_in(source.text, d))
