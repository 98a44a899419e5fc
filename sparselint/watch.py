"""`--watch`: check again whenever a checked file or a configuration file changes.

Polling (twice a second, by size and modification time) needs no dependency and works on
every platform and file system; each check runs as its own process, with the same arguments
less `--watch`, so its output, exit code and cache are those of a plain run."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from .discovery import SOURCE_SUFFIXES

INTERVAL = 0.5
WATCH_FLAGS = ("-w", "--watch")


def _snapshot(paths: list[str]) -> dict[str, tuple[int, int]]:
    state: dict[str, tuple[int, int]] = {}

    def note(path: str) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        state[path] = (st.st_mtime_ns, st.st_size)

    for top in paths:
        if os.path.isfile(top):
            note(top)
            continue
        for base, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            for name in files:
                if name.endswith(SOURCE_SUFFIXES) or name == "pyproject.toml":
                    note(os.path.join(base, name))
    return state


def watch(argv: list[str], paths: list[str], max_runs: int = 0) -> None:
    """Run `sparselint` with `argv` less `--watch`, and again whenever a source file or a
    pyproject.toml under `paths` changes."""
    args = [a for a in argv if a not in WATCH_FLAGS]
    command = [sys.executable, "-m", "sparselint", *args]
    # a run never watches in turn, however `--watch` was spelled (`-qw`)
    env = dict(os.environ, _SPARSELINT_WATCHED="1")
    runs = 0
    print("Starting sparselint in watch mode...", flush=True)
    try:
        while True:
            before = _snapshot(paths)
            subprocess.run(command, env=env)
            runs += 1
            if max_runs and runs >= max_runs:
                return
            print("Watching for file changes.", flush=True)
            while _snapshot(paths) == before:
                time.sleep(INTERVAL)
            print("File change detected...", flush=True)
    except KeyboardInterrupt:
        return
