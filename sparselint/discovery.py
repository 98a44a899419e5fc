"""Which files a run checks."""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import gitignore

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
# Folders no one wants linted: ruff's default excludes (not `build`: a package may be named
# so), and caches.
DEFAULT_EXCLUDES = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vscode", "__pypackages__", "_build", "buck-out", "dist", "node_modules", "site-packages",
    "venv", "__pycache__", ".sparselint_cache",
})


@dataclass(frozen=True)
class Scope:
    """The exclusion settings that apply in one folder (from its nearest configuration)."""
    exclude: tuple[str, ...] = ()
    root: str = ""
    respect_gitignore: bool = True


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _default_excluded(name: str) -> bool:
    return name in DEFAULT_EXCLUDES or name.endswith(".egg-info")


def _excluded(path: str, scope: Scope) -> bool:
    """A user pattern matches the path relative to the configuration's folder (or one of its
    parent folders there), or any part of it. A pattern with a separator is a path from the
    configuration's folder, as in ruff: `./src/gen.py` and `src/gen.py` are the same."""
    if not scope.exclude:
        return False
    root = scope.root or os.getcwd()
    rel = os.path.relpath(os.path.abspath(path), root)
    parts = rel.split(os.sep)
    prefixes = [os.sep.join(parts[:i + 1]) for i in range(len(parts))]
    for pattern in scope.exclude:
        pattern = pattern.rstrip("/")
        if os.sep in pattern or "/" in pattern:
            pattern = _relative_pattern(pattern, root)
            # `**/` also matches no folder at all, as in a glob
            alternatives = (pattern, pattern[3:]) if pattern.startswith("**" + os.sep) else (pattern,)
            if any(fnmatch.fnmatch(p, a) for p in prefixes for a in alternatives):
                return True
        elif any(fnmatch.fnmatch(p, pattern) for p in parts):
            return True
    return False


def _relative_pattern(pattern: str, root: str) -> str:
    pattern = os.path.normpath(pattern.replace("/", os.sep))
    return os.path.relpath(pattern, root) if os.path.isabs(pattern) else pattern


def force_excluded(path: str, scope: Scope) -> bool:
    """For a path named on the command line (or --stdin-filename) under --force-exclude: the
    user's patterns, and the built-in folders among its parts below the project folder (or as
    written, outside it)."""
    if _excluded(path, scope):
        return True
    absolute = os.path.abspath(path)
    root = os.path.abspath(scope.root or os.getcwd())
    rel = os.path.relpath(absolute, root)
    if rel.startswith(os.pardir):
        rel = os.path.normpath(path)
    return any(_default_excluded(p) for p in rel.split(os.sep) if p not in (os.curdir, os.pardir))


def discover(paths: list[str], scope_for: Optional[Callable[[str], Scope]] = None,
             force_exclude: bool = False, *, exclude: tuple[str, ...] = (), root: str = "",
             respect_gitignore: bool = True) -> Discovery:
    """Files under the named paths. `scope_for(folder)` gives the exclusions of a folder
    (without it, `exclude`, `root` and `respect_gitignore` apply everywhere).

    A file named on the command line is checked unless --force-exclude excludes it; .gitignore
    applies to what is found beneath a named folder, never to the named path itself."""
    if scope_for is None:
        fixed = Scope(tuple(exclude), root, respect_gitignore)
        scope_for = lambda folder: fixed  # noqa: E731
    found = Discovery()
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.normpath(path)
        if key not in seen:
            seen.add(key)
            found.files.append(key)

    for path in paths:
        if os.path.isfile(path):
            if force_exclude and force_excluded(path, scope_for(os.path.dirname(os.path.abspath(path)))):
                continue
            add(path)
        elif os.path.isdir(path):
            if force_exclude and force_excluded(path, scope_for(os.path.abspath(path))):
                continue
            for base, dirs, files in os.walk(path, followlinks=False):
                scope = scope_for(os.path.abspath(base))
                kept = []
                for d in sorted(dirs):
                    full = os.path.join(base, d)
                    if _default_excluded(d) or _excluded(full, scope):
                        continue
                    if scope.respect_gitignore and gitignore.ignored(full, is_dir=True):
                        continue
                    kept.append(d)
                dirs[:] = kept
                for name in sorted(files):
                    if not name.endswith(SOURCE_SUFFIXES):
                        continue
                    full = os.path.join(base, name)
                    if _excluded(full, scope) or (scope.respect_gitignore and gitignore.ignored(full, is_dir=False)):
                        continue
                    if os.path.isfile(full):
                        add(full)
                    elif os.path.islink(full):
                        found.skipped.append((full, "broken or looping symbolic link"))
        elif os.path.islink(path):
            found.missing.append(path + " (broken or looping symbolic link)")
        else:
            found.missing.append(path)
    return found
