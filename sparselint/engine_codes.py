"""The codes the engine prints about a file rather than about the code in it (SPL900-905), with
the same documentation a rule has: `sparselint rule SPL900` explains them and each has a page
under docs/rules/."""
from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import DECODE_ERROR, INTERNAL_ERROR, PARSE_ERROR, READ_ERROR, TIMEOUT, UNUSED_NOQA


@dataclass(frozen=True)
class EngineCode:
    code: str
    name: str
    summary: str
    doc: str
    selectable: bool = False  # SPL904 is opt-in; the others cannot be deselected


_SECTIONS = "## What it does\n{what}\n\n## Why is this bad?\n{why}\n\n## Example\n{example}\n\n## Use instead\n{instead}\n\n## Fix safety\nThere is no fix.\n"

CODES = (
    EngineCode(PARSE_ERROR[0], PARSE_ERROR[1], "A file, or a notebook cell, that does not parse as Python.",
               _SECTIONS.format(
                   what="Reports a file that Python cannot parse, at the place Python points to, and a "
                        "notebook cell that still does not parse once its IPython lines are masked. A file "
                        "whose text holds nothing any selected rule looks for (no sparse constructor, "
                        "optimizer, clipping call...) is not parsed at all, so its syntax errors are not "
                        "reported: the check stays as fast as reading it.",
                   why="Nothing in a file (or cell) that does not parse can be checked, so its hazards go "
                       "unreported. The run exits 1, as for any finding; the code cannot be deselected, "
                       "like a syntax error in ruff.",
                   example="```python\ndef f(:\n    pass\n```",
                   instead="```python\ndef f():\n    pass\n```")),
    EngineCode(DECODE_ERROR[0], DECODE_ERROR[1], "A file that cannot be decoded, or a notebook that is not JSON.",
               _SECTIONS.format(
                   what="Reports a file whose bytes are not text in its declared encoding (PEP 263, UTF-8 "
                        "by default), and a `.ipynb` file that is not a readable notebook.",
                   why="A file that cannot be read as text cannot be checked.",
                   example="A `.py` file saved as Latin-1 with no `# -*- coding: latin-1 -*-` line.",
                   instead="Save it as UTF-8, or declare its encoding on the first or second line.")),
    EngineCode(READ_ERROR[0], READ_ERROR[1], "A file that exists but cannot be read.",
               _SECTIONS.format(
                   what="Reports a file the operating system refuses to read (permissions, an I/O error).",
                   why="A file that cannot be read cannot be checked; the run exits 1, as for any finding.",
                   example="`chmod 000 model.py`",
                   instead="Make the file readable by the user who runs sparselint.")),
    EngineCode(INTERNAL_ERROR[0], INTERNAL_ERROR[1], "sparselint failed on this file (a bug in sparselint).",
               _SECTIONS.format(
                   what="Reports a file on which sparselint itself failed, or whose fixes could not be "
                        "applied; the other files are still checked.",
                   why="The file was not (fully) checked; the run exits 2. This is a bug: please report it "
                       "with the file that triggers it.",
                   example="Any file on which the engine raises.",
                   instead="Report the bug; until it is fixed, exclude the file.")),
    EngineCode(UNUSED_NOQA[0], UNUSED_NOQA[1], "A `# noqa: SPLnnn` directive that suppresses nothing (opt-in).",
               _SECTIONS.format(
                   what="Reports a `# noqa` directive naming an SPL code (or a bare `# noqa`) on a line "
                        "that has no such finding. Not part of `ALL`: enable it with "
                        "`--extend-select SPL904`.",
                   why="A stale directive hides the next real finding on its line.",
                   example="```python\nx = adj.coalesce().values()  # noqa: SPL001\n```",
                   instead="```python\nx = adj.coalesce().values()\n```"),
               selectable=True),
    EngineCode(TIMEOUT[0], TIMEOUT[1], "A file that took more than `--file-timeout` seconds of CPU time to check.",
               _SECTIONS.format(
                   what="Reports a file whose check took more than `--file-timeout` seconds of CPU time "
                        "(60 by default; time spent waiting on a loaded machine does not count), and a "
                        "statement holding an expression nested more than 1,000 levels deep, which is "
                        "skipped up front because the parser cannot be interrupted. The findings made "
                        "before the budget ran out are kept.",
                   why="The file was not checked to the end.",
                   example="A generated module of tens of thousands of lines.",
                   instead="Raise `--file-timeout`, or exclude the file.")),
)

BY_CODE = {c.code: c for c in CODES}


def lookup(code: str):
    """The engine code named by its code (any case) or name, or None."""
    for c in CODES:
        if c.code == code.upper() or c.name == code:
            return c
    return None


def page(c: EngineCode) -> str:
    doc = c.doc.replace("## ", "### ")
    kind = "opt-in (`--extend-select SPL904`)" if c.selectable else "always on; cannot be deselected"
    return (f"# {c.code}: {c.name}\n\n"
            f"- **Reported by:** the engine, about the file (not a rule)\n"
            f"- **Selection:** {kind}\n"
            f"- **Fix:** none\n\n"
            f"{c.summary}\n\n{doc}")
