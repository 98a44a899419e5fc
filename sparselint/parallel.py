"""Checking many files on several cores, with the result cache in front."""
from __future__ import annotations

import gc
import os
import signal
from typing import Callable, Optional

from .cache import Cache
from .config import Settings
from .diagnostics import FileResult
from .analysis.relevance.tokens import Tokens

# Below this many files per worker, starting workers costs more than it saves.
MIN_FILES_PER_WORKER = 8


def _check_batch(args: tuple[list[str], Settings]) -> list[tuple[FileResult, Optional[set]]]:
    """In a worker: prefilter and check each file of a batch. For a file the prefilter
    passes over, the project modules it imports come back with its (empty) result."""
    paths, settings = args
    return [_prefilter_and_check(path, settings) for path in paths]


def _prefilter_and_check(path: str, settings: Settings, rules=None) -> tuple[FileResult, Optional[set]]:
    from .engine import check_file, entry_tokens, prefilter_tokens
    deps: set = set()
    entries = entry_tokens(settings.rules()) if settings.api_entry_points else None
    if not settings.per_file_ignores and _cannot_match(path, prefilter_tokens(settings.rules()), deps, entries):
        return FileResult(path=path), deps
    # A file's check allocates its trees, facts and memos, which all live until its end: the
    # cyclic collector, run while they grow, finds next to nothing to free and scans them again
    # and again. It waits for the end of the file, where `collect_file_garbage` frees them
    # (before the collector is back on: the first allocation would otherwise start a scan of
    # everything the file allocated).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return check_file(path, settings, rules), None
    finally:
        collect_file_garbage()
        if enabled:
            gc.enable()


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


def _start_worker() -> None:
    # Ctrl-C reaches the whole process group: a worker that took it would report the
    # interruption as one batch's result and go on with the next. The parent alone stops
    # the run, terminating its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc_for_batch()


def _stop(pool) -> None:
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.terminate()
        except Exception:
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    # Python 3.11's exit hook wakes the pool's manager thread through a pipe that thread
    # closes once it sees its workers gone: a race that prints "Bad file descriptor".
    # Let the thread finish first; the workers are dead, so it does not take long.
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=3)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _cannot_match(path: str, tokens: Tokens, dependencies: set, entries: Optional[Tokens] = None) -> bool:
    """A clean UTF-8 file without any prefilter string (nor, in a package's module, any
    token of its entry points): nothing to parse, nothing to find. The project modules it
    imports are added to `dependencies`."""
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
    if entries and entries.tested_in(data):
        from .analysis.entry import in_package, package_marker
        from .engine import entry_rules
        dependencies.add(package_marker(path))  # becoming a package's module changes it
        if in_package(path) and entry_rules(entries, text, path, dependencies):
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
    todo = []
    for i in pending:
        # by content: a file touched (mtime changed) but not edited needs no check
        hit = cache.get(paths[i]) if cache is not None else None
        if hit is None:
            todo.append(i)
        else:
            results[i] = hit
            step(1)
    jobs = jobs or os.cpu_count() or 1
    jobs = min(jobs, max(1, len(todo) // MIN_FILES_PER_WORKER))
    fresh: dict[int, tuple[FileResult, Optional[set]]] = {}
    if jobs <= 1:
        rules = settings.rules()
        saved = gc.get_threshold()
        gc_for_batch()
        try:
            for i in todo:
                fresh[i] = _prefilter_and_check(paths[i], settings, rules)
                step(1)
        finally:
            gc.unfreeze()
            gc.set_threshold(*saved)
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        # The prefilter runs in the workers too (it reads every file). Largest first, one
        # at a time, small files in batches: a worker that draws a 30,000-line file late
        # does not hold up the end of the run, and small files cost one message per batch.
        batches = _batches(sorted(todo, key=lambda i: -_size(paths[i])), paths)
        pool = ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker)
        try:
            futures = {pool.submit(_check_batch, ([paths[i] for i in batch], settings)): batch for batch in batches}
            for future in as_completed(futures):
                for i, outcome in zip(futures[future], future.result()):
                    fresh[i] = outcome
                    step(1)
        except BaseException:
            # Ctrl-C (or a failure): leaving the pool normally would wait for every queued
            # file to be checked; stop the workers now instead.
            _stop(pool)
            raise
        pool.shutdown()
    for i in todo:
        result, clean_deps = fresh[i]
        results[i] = result
        if cache is None:
            continue
        if clean_deps is not None:
            cache.remember(paths[i], result, sorted(clean_deps))
        elif not any(d.code.startswith("SPL90") for d in result.diagnostics):
            cache.put(paths[i], result)


def _batches(order: list[int], paths: list[str], limit: int = 200_000) -> list[list[int]]:
    out: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i in order:
        current.append(i)
        size += _size(paths[i])
        if size >= limit or len(current) >= 32:
            out.append(current)
            current, size = [], 0
    if current:
        out.append(current)
    return out
