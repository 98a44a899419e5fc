"""What the server checks: a Python buffer, or the code cells of a notebook joined into one
program as `sparselint check` joins an .ipynb. Each result remembers the exact text it was
computed from, so it is reused while that text is unchanged and never applied to another."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from .. import notebook
from ..diagnostics import Diagnostic
from ..engine import check_text
from .settings import Resolved
from .syntax_errors import relocate


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
    findings, _, _ = check_text(source.text, source.name, settings, _rules(source, resolved), deps)
    return Analysis(source, resolved, relocate(findings, source.text), tuple(sorted(deps)))
