"""Which files a run checks."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

SOURCE_SUFFIXES = (".py", ".pyi")
# Folders no one wants linted, as in ruff's defaults.
DEFAULT_EXCLUDES = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".mypy_cache", ".nox", ".pants.d",
    ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", "__pypackages__", "_build", "buck-out",
    "build", "dist", "node_modules", "venv", "__pycache__", ".sparselint_cache",
})


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def discover(paths: list[str]) -> Discovery:
    found = Discovery()
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.normpath(path)
        if key not in seen:
            seen.add(key)
            found.files.append(key)

    for path in paths:
        if os.path.isfile(path):
            add(path)  # a file named on the command line is always checked
        elif os.path.isdir(path):
            for root, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDES and not d.endswith(".egg-info"))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if name.endswith(SOURCE_SUFFIXES) and os.path.isfile(full):
                        add(full)
        else:
            found.missing.append(path)
    return found
