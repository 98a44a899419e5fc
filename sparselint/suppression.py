"""`# noqa` comments: per line (`# noqa`, `# noqa: SPL001`) and per file (`# sparselint: noqa`)."""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from .source import split_lines

_LINE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.I)
_FILE = re.compile(r"#\s*sparselint:\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.I)
ALL = "*"


def _codes(m: re.Match) -> frozenset[str]:
    if not m.group("codes"):
        return frozenset({ALL})
    return frozenset(c.upper() for c in re.split(r"[\s,]+", m.group("codes")) if c)


@dataclass
class Suppressions:
    lines: dict[int, frozenset[str]] = field(default_factory=dict)
    file: frozenset[str] = frozenset()
    # line of a directive after a multi-line string -> the first line of that string
    covers: dict[int, int] = field(default_factory=dict)

    def directive_line(self, line: int) -> int:
        """The line of the directive that covers a finding's line."""
        return next((last for last, first in self.covers.items() if first <= line <= last), line)

    def suppresses(self, code: str, line: int) -> bool:
        if ALL in self.file or code in self.file:
            return True
        codes = self.lines.get(line)
        return codes is not None and (ALL in codes or code in codes)


def _scan(source: str) -> tuple[list[tuple[int, str]], list[tuple[int, int]]]:
    """The comments (line, text) and the multi-line string spans of a source, in one pass."""
    comments: list[tuple[int, str]] = []
    spans: list[tuple[int, int]] = []
    starts: list[int] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            kind = tok.type
            if kind == tokenize.COMMENT:
                comments.append((tok.start[0], tok.string))
            elif kind == tokenize.STRING:
                if tok.end[0] > tok.start[0]:
                    spans.append((tok.start[0], tok.end[0]))
            elif kind == _FSTRING_START:
                starts.append(tok.start[0])
            elif kind == _FSTRING_END and starts:
                first = starts.pop()
                if tok.end[0] > first:
                    spans.append((first, tok.end[0]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # Fall back to a plain scan; a `# noqa` inside a string may then count.
        comments = []
        for n, line in enumerate(split_lines(source), 1):
            i = line.find("#")
            if i >= 0:
                comments.append((n, line[i:]))
    return comments, _statement_spans(source, spans, {line for line, _ in comments})


def _statement_spans(source: str, strings: list[tuple[int, int]], commented: set[int]) -> list[tuple[int, int]]:
    """(first line, last line) of each run of lines that no comment can end: the lines of a
    multi-line string, and lines continued by a backslash, which both end where the
    statement's physical part does (as ruff reads them)."""
    inside: dict[int, int] = {}
    for first, last in strings:
        for line in range(first, last):
            inside[line] = max(inside.get(line, 0), last)
    lines = split_lines(source)
    end: dict[int, int] = {}
    for n in range(len(lines), 0, -1):
        nxt = inside.get(n)
        if nxt is None and n < len(lines) and n not in commented and lines[n - 1].endswith("\\"):
            nxt = n + 1
        end[n] = end.get(nxt, nxt) if nxt else n
    spans: list[tuple[int, int]] = []
    n = 1
    while n <= len(lines):
        if end[n] > n:
            spans.append((n, end[n]))
            n = end[n]
        n += 1
    return spans


# Python 3.12 splits f-strings into tokens; before, an f-string is one STRING token.
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


def statement_spans(source: str) -> list[tuple[int, int]]:
    """(first line, last line) of every run of lines whose directive goes on the last one:
    strings that span lines (f-strings included) and backslash continuations."""
    return _scan(source)[1]


def parse(source: str) -> Suppressions:
    sup = Suppressions()
    if "noqa" not in source.lower():
        return sup
    file_codes: set[str] = set()
    comments, spans = _scan(source)
    for line, comment in comments:
        fm = _FILE.search(comment)
        if fm:
            file_codes |= _codes(fm)
            continue
        m = _LINE.search(comment)
        if m:
            sup.lines[line] = sup.lines.get(line, frozenset()) | _codes(m)
    # A directive after a multi-line string covers every line of the string (as in ruff),
    # since no comment can be written inside it; one after a backslash continuation covers
    # the lines it continues, since a comment cannot follow the backslash.
    for first, last in spans if sup.lines else ():
        codes = sup.lines.get(last)
        if codes:
            sup.covers[last] = min(first, sup.covers.get(last, first))
            for line in range(first, last):
                sup.lines[line] = sup.lines.get(line, frozenset()) | codes
    sup.file = frozenset(file_codes)
    return sup


def unused(source: str, path: str, raw, kind: tuple[str, str]):
    """Diagnostics for `# noqa` comments (of SPL codes) that suppress no finding."""
    sup = parse(source)
    hits: dict[int, set[str]] = {}
    for d in raw:
        if d.path == path:  # a finding in a called module is at a line of that module
            hits.setdefault(d.line, set()).add(d.code)
    out = []
    covered = {line for last, first in sup.covers.items() for line in range(first, last)}
    for line, codes in sorted(sup.lines.items()):
        if line in covered and line not in sup.covers:
            continue  # no directive written here: it is the one after the string
        found = set().union(*(hits.get(n, set()) for n in range(sup.covers.get(line, line), line + 1)))
        if ALL in codes:
            stale = [] if found else ["noqa"]
        else:
            stale = sorted(c for c in codes if c.startswith("SPL") and c not in found)
        if stale:
            out.append(_unused(kind, path, line, stale))
    return out


def _unused(kind: tuple[str, str], path: str, line: int, stale):
    from .diagnostics import Diagnostic
    return Diagnostic(code=kind[0], name=kind[1], path=path, line=line, column=1, end_line=line,
                      end_column=1, message=f"unused `# noqa` directive ({', '.join(stale)})")


_STALE = re.compile(r"\((?P<codes>[^()]*)\)$")


def drop_used_elsewhere(diagnostics, used: set, kind: tuple[str, str]):
    """`diagnostics` without the unused-noqa findings of directives that suppressed a finding
    when another file was checked (a module's line that fails only with its caller's facts):
    `used` holds (real path, directive line, code)."""
    import os
    out = []
    for d in diagnostics:
        m = _STALE.search(d.message) if d.code == kind[0] else None
        if m is None:
            out.append(d)
            continue
        here = {code for path, line, code in used if line == d.line and path == os.path.realpath(d.path)}
        stale = [c for c in m.group("codes").split(", ") if c not in here and not (c == "noqa" and here)]
        if stale:
            out.append(_unused(kind, d.path, d.line, stale) if len(stale) < len(m.group("codes").split(", ")) else d)
    return out
