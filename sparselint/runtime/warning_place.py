"""torch's C++ warnings (`Sparse invariant checks are implicitly disabled`, ...) are issued at
the innermost Python frame, which under the checker is its torch function mode: the user
would read `watch.py:143` and `result = func(*args, **kwargs)` under their warning. While a
session runs, a warning shown from the checker's own files is shown at the user's line."""
from __future__ import annotations

import linecache
import os
import warnings

from .session import user_frame

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def install(session):
    shown = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if os.path.abspath(filename).startswith(_HERE):
            frame = user_frame()
            if frame is not None:
                filename, lineno = frame.f_code.co_filename, frame.f_lineno
                line = linecache.getline(filename, lineno)
        return shown(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning

    def undo():
        if warnings.showwarning is showwarning:
            warnings.showwarning = shown
    return undo
