""".gitignore matching for discovery, the way ruff's walker applies it.

Each path that discovery meets beneath a named path is matched on its own (not through its
parent folders) against the .gitignore files of its repository, from the repository root
down to its folder, and `.git/info/exclude`; the last matching pattern wins. A path named on
the command line is never matched, so `sparselint scratch/exp` lints a folder that an
enclosing repository ignores. Each path is matched in its own repository. Outside a
repository, .gitignore files do not apply (as in git).
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Optional


def _translate(pattern: str) -> str:
    """The regular expression of one gitignore glob (already stripped of `!` and a trailing `/`)."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


class Rule:
    __slots__ = ("regex", "negate", "dir_only")

    def __init__(self, regex, negate: bool, dir_only: bool):
        self.regex, self.negate, self.dir_only = regex, negate, dir_only


def parse(text: str) -> list[Rule]:
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        # trailing spaces are dropped unless escaped
        while line.endswith(" ") and not line.endswith("\\ "):
            line = line[:-1]
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.S)
        rules.append(Rule(regex, negate, dir_only))
    return rules


@lru_cache(maxsize=None)
def _rules_in(path: str) -> tuple[Rule, ...]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return tuple(parse(fh.read()))
    except OSError:
        return ()


@lru_cache(maxsize=None)
def repository_root(directory: str) -> Optional[str]:
    """The nearest folder at or above `directory` that holds `.git` (a folder or a worktree file)."""
    here = directory
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _sources(directory: str, root: str) -> list[tuple[str, tuple[Rule, ...]]]:
    """(base folder, rules) from the repository root down to `directory`."""
    chain = []
    here = directory
    while True:
        chain.append(here)
        if here == root:
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    out = [(root, _rules_in(os.path.join(root, ".git", "info", "exclude")))]
    out += [(d, _rules_in(os.path.join(d, ".gitignore"))) for d in reversed(chain)]
    return out


def ignored(path: str, is_dir: bool) -> bool:
    """Whether the .gitignore files of its repository ignore `path` itself."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    root = repository_root(directory)
    if root is None:
        return False
    verdict = False
    for base, rules in _sources(directory, root):
        if not rules:
            continue
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        for rule in rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(rel):
                verdict = not rule.negate
    return verdict
