"""Findings, their evidence and their fixes: plain data shared by every layer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Evidence:
    """One link of the chain that made a fact: where, and what it established.

    While the engine runs, evidence points at a syntax node; positions are resolved only
    when a finding is reported, so files without findings never pay for them."""

    line: int
    column: int
    text: str
    node: object = field(default=None, compare=False, repr=False)
    cell: Optional[int] = None  # notebook cell (1-based); the line is then in the cell
    # the file, when it is not the one the finding is in (a call site in another module)
    path: str = ""
    # what places `node` when it is a node of another module (its Places): resolved, like
    # this file's nodes, only when a finding is reported
    where: object = field(default=None, compare=False, repr=False)

    @classmethod
    def at(cls, node, text: str) -> "Evidence":
        return cls(0, 0, text, node)

    @property
    def place(self) -> str:
        if self.path and self.cell is not None:
            return f"{self.path}:cell {self.cell}:{self.line}"
        return f"{self.path}:{self.line}" if self.path else f"line {self.line}"

    def to_json(self) -> dict:
        out = {"line": self.line, "column": self.column, "cell": self.cell, "message": self.text}
        if self.path:
            out["path"] = self.path
        return out


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool

    @property
    def applicability(self) -> str:
        return "safe" if self.safe else "unsafe"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    evidence: tuple[Evidence, ...] = ()
    fix: Fix | None = None
    suggestion: str = ""
    when: str = ""
    cell: Optional[int] = None  # notebook cell (1-based); line and column are then in the cell
    # what a run-time report (`check --runtime-report`) says of it: "confirmed" (the run saw
    # it), "not-seen", "run-only" (the run saw it, the static pass did not); "": no report
    runtime: str = ""

    @property
    def shown_message(self) -> str:
        """The message with the run-time report's word on it, for formats that carry text only."""
        mark = RUNTIME_MARKS.get(self.runtime)
        return f"{self.message} {mark}" if mark else self.message

    def sort_key(self):
        return (self.path, self.cell or 0, self.line, self.column, self.code)

    def to_json(self) -> dict:
        fix = None
        if self.fix is not None:
            fix = {
                "title": self.fix.title,
                "applicability": self.fix.applicability,
                "edits": [
                    {
                        "location": {"line": e.start[0], "column": e.start[1]},
                        "end_location": {"line": e.end[0], "column": e.end[1]},
                        "content": e.text,
                    }
                    for e in self.fix.edits
                ],
            }
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "cell": self.cell,
            "when": self.when,
            "suggestion": self.suggestion,
            "fix": fix,
            "evidence": [e.to_json() for e in self.evidence],
        } | ({"runtime": self.runtime} if self.runtime else {})


RUNTIME_MARKS = {"confirmed": "[confirmed at run time]", "run-only": "[seen at run time only]"}


# Codes the engine itself emits about a file it could not check; they are not rules and
# cannot be deselected, like a syntax error in ruff.
PARSE_ERROR = ("SPL900", "syntax-error")
DECODE_ERROR = ("SPL901", "decode-error")
READ_ERROR = ("SPL902", "io-error")
INTERNAL_ERROR = ("SPL903", "internal-error")
TIMEOUT = ("SPL905", "timeout")
ENGINE_CODES = {c for c, _ in (PARSE_ERROR, DECODE_ERROR, READ_ERROR, INTERNAL_ERROR, TIMEOUT)}
# Opt-in (not part of ALL): a `# noqa: SPLnnn` that suppresses nothing.
UNUSED_NOQA = ("SPL904", "unused-noqa")


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed_source: str | None = None
    fixes_applied: int = 0
    encoding: str = "utf-8"
    original_source: str | None = None
    # other files whose content these findings depend on (model classes defined there)
    dependencies: tuple[str, ...] = ()
    fixed_codes: tuple[str, ...] = ()
    # (real path, directive line, code) of `# noqa` directives in other files that suppressed
    # a finding this file's facts set off there: used, though that file's own check cannot tell
    noqa_used_elsewhere: tuple = ()
