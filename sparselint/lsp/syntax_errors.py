"""Where a buffer stops being Python, as Python itself says it.

The engine reports SPL900 where LibCST's parser gave up, which can be the end of the file
or the start of a line; while typing, the editor must underline the character Python
would complain about. Python's own parser gives that place and a message people know."""
from __future__ import annotations

import ast
import warnings
from dataclasses import replace

from ..diagnostics import PARSE_ERROR, Diagnostic


def relocate(findings: list[Diagnostic], text: str) -> list[Diagnostic]:
    if not any(d.code == PARSE_ERROR[0] for d in findings):
        return findings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
        return findings  # Python accepts it: keep the engine's own account
    except SyntaxError as exc:
        error = exc
    except (ValueError, RecursionError, MemoryError):
        return findings
    if not error.lineno:
        return findings
    line, column = error.lineno, max(error.offset or 1, 1)
    end_line, end_column = error.end_lineno or line, error.end_offset or column
    if (end_line, end_column) <= (line, column):
        end_line, end_column = line, column + 1
    message = f"cannot parse: {error.msg}"
    return [replace(d, line=line, column=column, end_line=end_line, end_column=end_column, message=message)
            if d.code == PARSE_ERROR[0] else d for d in findings]
