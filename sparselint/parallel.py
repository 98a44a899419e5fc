"""Checking many files on several cores."""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Optional

from .config import Settings
from .diagnostics import FileResult
from .engine import check_file

# Below this many files, starting workers costs more than it saves.
MIN_FILES_PER_WORKER = 8


def _check_one(args: tuple[str, Settings]) -> FileResult:
    path, settings = args
    return check_file(path, settings)


def check_files(paths: list[str], settings: Settings, jobs: Optional[int] = None) -> list[FileResult]:
    jobs = jobs or os.cpu_count() or 1
    jobs = min(jobs, max(1, len(paths) // MIN_FILES_PER_WORKER))
    if jobs <= 1:
        rules = settings.rules()
        return [check_file(p, settings, rules) for p in paths]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_check_one, [(p, settings) for p in paths], chunksize=4))
