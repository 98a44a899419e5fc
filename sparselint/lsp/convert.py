"""Engine findings as LSP diagnostics, fixes as text edits, each placed in the document (or
notebook cell) it belongs to, in the position units the client negotiated."""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Optional

from lsprotocol import types as lsp

from ..diagnostics import UNUSED_NOQA, Diagnostic, Edit
from ..rule import rule_by_code
from .documents import Source
from .positions import Lines

SOURCE = "sparselint"
DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "rules")


@lru_cache(maxsize=None)
def rule_page(code: str) -> Optional[str]:
    """The rule's reference page (docs/rules/SPLnnn.md), when it ships beside the package."""
    page = os.path.join(DOCS, f"{code}.md")
    return lsp_uri(page) if os.path.isfile(page) else None


def lsp_uri(path: str) -> str:
    from pygls.uris import from_fs_path
    return from_fs_path(path) or path


class Placer:
    """Positions of one source in the client's units, per target document."""

    def __init__(self, source: Source, codec):
        self.source = source
        self.codec = codec
        self._lines: dict[str, Lines] = {}

    def lines(self, uri: str) -> Lines:
        if uri not in self._lines:
            self._lines[uri] = Lines.of(self.source.targets[uri], self.codec)
        return self._lines[uri]

    def position(self, line: int, column: int) -> Optional[tuple[str, lsp.Position]]:
        where = self.source.locate(line)
        if where is None:
            return None
        uri, there = where
        l, c = self.lines(uri).to_client(there, column)
        return uri, lsp.Position(line=l, character=c)

    def range(self, line: int, column: int, end_line: int, end_column: int) -> Optional[tuple[str, lsp.Range]]:
        start = self.position(line, column)
        if start is None:
            return None
        end = self.position(end_line, end_column)
        if end is None or end[0] != start[0] or (end[1].line, end[1].character) < (start[1].line, start[1].character):
            end = start
        uri, s = start
        e = end[1]
        if (s.line, s.character) == (e.line, e.character):
            # A point (an engine message): mark the rest of that line so the editor has
            # something to underline; at the end of a line the point stays a point.
            text = self.lines(uri).lines[s.line] if s.line < len(self.lines(uri).lines) else ""
            e = lsp.Position(line=s.line, character=max(self.codec.client_num_units(text), s.character))
        return uri, lsp.Range(start=s, end=e)

    def edit(self, edit: Edit) -> Optional[tuple[str, lsp.TextEdit]]:
        start = self.position(*edit.start)
        end = self.position(*edit.end)
        if start is None or end is None or start[0] != end[0]:
            return None
        return start[0], lsp.TextEdit(range=lsp.Range(start=start[1], end=end[1]), new_text=edit.text)


def severity(d: Diagnostic) -> lsp.DiagnosticSeverity:
    if d.code == UNUSED_NOQA[0] or d.when == "silent":
        # Silent misbehaviour and stale suppressions: worth fixing, but nothing crashes.
        return lsp.DiagnosticSeverity.Warning
    return lsp.DiagnosticSeverity.Error


def to_lsp(d: Diagnostic, placer: Placer) -> Optional[tuple[str, lsp.Diagnostic]]:
    """A finding of the document, at its place; a finding inside another module that this
    document calls, at the last place of this document that leads there (usually the call),
    with the module's line named in the message and linked as related information."""
    name = placer.source.name
    message = d.shown_message  # with a run-time report: "[confirmed at run time]", ...
    related = []
    if d.path == name:
        placed = placer.range(d.line, d.column, d.end_line, d.end_column)
    else:
        steps = [e for e in d.evidence if e.path == name and e.line > 0]
        placed = placer.range(steps[-1].line, steps[-1].column, steps[-1].line, steps[-1].column) if steps else None
        where = os.path.relpath(d.path, os.path.dirname(name)) if placer.source.path else d.path
        message = f"in {where}:{d.line}:{d.column}: {message}"
        related.append(lsp.DiagnosticRelatedInformation(location=lsp.Location(
            uri=lsp_uri(os.path.abspath(d.path)),
            range=lsp.Range(start=_elsewhere(d.line, d.column), end=_elsewhere(d.end_line, d.end_column))),
            message=f"{d.code} fails here"))
    if placed is None:
        return None
    uri, rng = placed
    for e in d.evidence:
        if e.line <= 0:
            continue
        file = e.path or d.path
        if file == name:
            at = placer.position(e.line, e.column)
        else:
            at = (lsp_uri(os.path.abspath(file)), _elsewhere(e.line, e.column))
        if at is None:
            continue
        related.append(lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=at[0], range=lsp.Range(start=at[1], end=at[1])), message=e.text))
    if d.suggestion:
        message += f"\n{d.suggestion}"
    page = rule_page(d.code)
    return uri, lsp.Diagnostic(
        range=rng,
        message=message,
        severity=severity(d),
        code=d.code,
        code_description=lsp.CodeDescription(href=page) if page else None,
        source=SOURCE,
        related_information=related or None,
        tags=[lsp.DiagnosticTag.Unnecessary] if d.code == UNUSED_NOQA[0] else None,
        data={"name": d.name, "fix": d.fix.applicability if d.fix else None}
        | ({"runtime": d.runtime} if d.runtime else {}),
    )


def _elsewhere(line: int, column: int) -> lsp.Position:
    # A file that is not this document: its text is not at hand, so columns stay in code
    # points (the same units for ASCII, as source lines mostly are).
    return lsp.Position(line=max(line - 1, 0), character=max(column - 1, 0))


def why(code: str) -> Optional[str]:
    """The rule's "Why is this bad?" section, as Markdown."""
    from ..rule import doc_sections
    rule = rule_by_code(code)
    if rule is None:
        return None
    return doc_sections(rule.doc()).get("Why is this bad?")
