"""Checking many files on several cores, with the result cache in front."""
from __future__ import annotations

import gc
import os
from typing import Callable, Optional

from .cache import Cache
from .config import Settings
from .diagnostics import FileResult
from .tokens import Tokens

# Below this many files per worker, starting workers costs more than it saves.
MIN_FILES_PER_WORKER = 8


def _check_one(args: tuple[str, Settings]) -> FileResult:
    from .engine import check_file
    path, settings = args
    try:
        return check_file(path, settings)
    finally:
        collect_file_garbage()


def collect_file_garbage() -> None:
    """A file's trees hold reference cycles (parents, walker and calls): free them before
    the next file, then freeze what survives (project index caches) so that the next
    collection only scans what the next file allocates."""
    gc.collect()
    gc.freeze()


def gc_for_batch() -> None:
    """A batch run allocates millions of short-lived nodes: the cyclic collector ran a
    sixth of the time scanning the imported modules again and again. Freeze what is alive
    (modules, tables) out of its sight and collect young objects less often."""
    gc.freeze()
    gc.set_threshold(50_000, 50, 1000)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _cannot_match(path: str, tokens: Tokens, dependencies: set) -> bool:
    """A clean UTF-8 file without any prefilter string: nothing to parse, nothing to find.
    The project modules it imports are added to `dependencies`."""
    from .engine import imported_code
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    if path.endswith(".ipynb") or b"\0" in data or tokens.search(data):
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    # a helper it imports from the project may hold what this file's facts set off
    return not imported_code(text, path, tokens, dependencies)[0]


def check_files(paths: list[str], settings: Settings, jobs: Optional[int] = None,
                cache: Optional[Cache] = None, progress: Optional[Callable[[int], None]] = None) -> list[FileResult]:
    step = progress or (lambda n: None)
    results: list[Optional[FileResult]] = [None] * len(paths)
    pending = []
    for i, path in enumerate(paths):
        hit = cache.lookup(path) if cache is not None else None
        if hit is None:
            pending.append(i)
        else:
            results[i] = hit
            step(1)
    if pending:
        _check_pending(paths, pending, results, settings, jobs, cache, step)
    if cache is not None:
        cache.flush()
    return results


def _check_pending(paths, pending, results, settings, jobs, cache, step) -> None:
    from .engine import check_file, prefilter_tokens
    # The prefilter runs here, before any worker starts: most files of a large tree end here.
    tokens = prefilter_tokens(settings.rules())
    todo = []
    for i in pending:
        path = paths[i]
        deps: set = set()
        if not settings.per_file_ignores and _cannot_match(path, tokens, deps):
            results[i] = FileResult(path=path)
            if cache is not None:
                cache.remember(path, results[i], sorted(deps))
            step(1)
            continue
        hit = cache.get(path) if cache is not None else None
        if hit is None:
            todo.append(i)
        else:
            results[i] = hit
            step(1)
    jobs = jobs or os.cpu_count() or 1
    jobs = min(jobs, max(1, len(todo) // MIN_FILES_PER_WORKER))
    fresh = []
    if jobs <= 1:
        rules = settings.rules()
        saved = gc.get_threshold()
        gc_for_batch()
        try:
            for i in todo:
                fresh.append(check_file(paths[i], settings, rules))
                collect_file_garbage()
                step(1)
        finally:
            gc.unfreeze()
            gc.set_threshold(*saved)
    else:
        # Largest first, one at a time: a worker that draws a 30,000-line file early does
        # not hold up the end of the run.
        from concurrent.futures import ProcessPoolExecutor
        order = sorted(todo, key=lambda i: -_size(paths[i]))
        with ProcessPoolExecutor(max_workers=jobs, initializer=gc_for_batch) as pool:
            done = {}
            for i, result in zip(order, pool.map(_check_one, [(paths[i], settings) for i in order], chunksize=1)):
                done[i] = result
                step(1)
        fresh = [done[i] for i in todo]
    for i, result in zip(todo, fresh):
        results[i] = result
        if cache is not None and not any(d.code.startswith("SPL90") for d in result.diagnostics):
            cache.put(paths[i], result)
