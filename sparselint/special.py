"""Paths named on the command line that exist but are neither a regular file nor a folder (a
FIFO, `/dev/null`, a process substitution such as `<(git show HEAD:m.py)`). As ruff does, such
a path is read as a file: once, since a pipe cannot be read twice, and never from the cache."""
from __future__ import annotations

import os
import stat

from .diagnostics import READ_ERROR, Diagnostic, FileResult


def is_special(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check(path: str, settings) -> FileResult:
    from .engine import check_bytes, check_notebook
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        code, name = READ_ERROR
        return FileResult(path=path, diagnostics=[Diagnostic(
            code=code, name=name, path=path, line=1, column=1, end_line=1, end_column=1,
            message=f"cannot read: {exc.strerror or exc}")])
    rules = settings.rules_for(path)
    if path.endswith(".ipynb"):
        return check_notebook(data, path, settings, rules)
    return check_bytes(data, path, settings, rules)
