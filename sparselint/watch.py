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


def _paths(args: list[str]) -> list[str]:
    """The paths among the arguments (a rough reading: what does not look like an option or
    an option's value); the current directory when none."""
    found = [a for a in args if not a.startswith("-") and os.path.exists(a)]
    return found or ["."]


def watch(argv: list[str], max_runs: int = 0) -> None:
    args = [a for a in argv if a not in WATCH_FLAGS]
    command = [sys.executable, "-m", "sparselint", *args]
    paths = _paths([a for a in args if a != "check"])
    runs = 0
    print("Starting sparselint in watch mode...", flush=True)
    try:
        while True:
            before = _snapshot(paths)
            subprocess.run(command)
            runs += 1
            if max_runs and runs >= max_runs:
                return
            print("Watching for file changes.", flush=True)
            while _snapshot(paths) == before:
                time.sleep(INTERVAL)
            print("File change detected...", flush=True)
    except KeyboardInterrupt:
        return
