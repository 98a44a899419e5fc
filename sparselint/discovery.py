"""Which files a run checks."""
from __future__ import annotations

import fnmatch
import os
import subprocess
from dataclasses import dataclass, field

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
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
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _excluded(path: str, patterns: tuple[str, ...], root: str) -> bool:
    if not patterns:
        return False
    rel = os.path.relpath(os.path.abspath(path), root)
    parts = rel.split(os.sep)
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(rel, pattern) or any(fnmatch.fnmatch(p, pattern) for p in parts):
            return True
    return False


def gitignored(paths: list[str]) -> set[str]:
    """The paths git ignores (every .gitignore level); none when git or a repository is absent."""
    if not paths:
        return set()
    absolute = {os.path.abspath(p): p for p in paths}
    cwd = os.path.dirname(next(iter(absolute)))
    try:
        proc = subprocess.run(["git", "check-ignore", "-z", "--stdin"],
                              input="\0".join(absolute).encode("utf-8", "surrogateescape"),
                              capture_output=True, cwd=cwd, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return set()
    if proc.returncode not in (0, 1):
        return set()
    out = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {absolute.get(os.path.abspath(os.path.join(cwd, p)), p) for p in out if p}


def discover(paths: list[str], exclude: tuple[str, ...] = (), root: str = "",
             force_exclude: bool = False, respect_gitignore: bool = True) -> Discovery:
    found = Discovery()
    seen: set[str] = set()
    root = root or os.getcwd()
    walked: list[str] = []

    def add(path: str, explicit: bool) -> None:
        key = os.path.normpath(path)
        if key in seen:
            return
        if (not explicit or force_exclude) and _excluded(key, exclude, root):
            return
        seen.add(key)
        found.files.append(key)
        if not explicit or force_exclude:
            walked.append(key)

    for path in paths:
        if os.path.isfile(path):
            add(path, explicit=True)  # a file named on the command line is checked unless forced
        elif os.path.isdir(path):
            for base, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDES and not d.endswith(".egg-info")
                                 and not _excluded(os.path.join(base, d), exclude, root))
                for name in sorted(files):
                    full = os.path.join(base, name)
                    if not name.endswith(SOURCE_SUFFIXES):
                        continue
                    if os.path.isfile(full):
                        add(full, explicit=False)
                    elif os.path.islink(full):
                        found.skipped.append((full, "broken or looping symbolic link"))
        elif os.path.islink(path):
            found.missing.append(path + " (broken or looping symbolic link)")
        else:
            found.missing.append(path)
    if respect_gitignore and walked:
        ignored = {os.path.normpath(p) for p in gitignored(walked)}
        found.files = [f for f in found.files if f not in ignored]
    return found
