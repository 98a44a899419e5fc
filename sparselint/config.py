"""Settings: which rules run, and how a selector (`SPL1`, `SPL001`, `ALL`) is resolved."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

from .rule import Rule, all_rules, rule_index


class ConfigError(Exception):
    """A user mistake in flags or configuration: reported with exit code 2."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    fix: bool = False
    unsafe_fixes: bool = False
    # (glob, codes) pairs and the folder the globs are relative to
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str = ""
    target_torch_version: str = ""
    # public functions of a package analysed as entry points (`api-entry-points`)
    api_entry_points: bool = True
    file_timeout: float = 60.0

    def rules(self) -> tuple[type[Rule], ...]:
        return resolve(self.select, self.ignore, self.extend_select)

    def rules_for(self, path: str) -> tuple[type[Rule], ...]:
        extra = self.ignored_for(path)
        if not extra:
            return self.rules()
        return resolve(self.select, (*self.ignore, *extra), self.extend_select)

    def ignored_for(self, path: str) -> tuple[str, ...]:
        if not self.per_file_ignores:
            return ()
        import fnmatch
        import os
        rel = os.path.relpath(os.path.abspath(path), self.root or os.getcwd())
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            # as with exclude: `./src/gen.py` and `src/gen.py` name the same file
            if fnmatch.fnmatch(rel, os.path.normpath(pattern)) or fnmatch.fnmatch(os.path.basename(path), pattern):
                out.extend(codes)
        return tuple(out)

    def codes(self) -> tuple[str, ...]:
        """The codes of `rules()`, without importing any rule."""
        return resolve_codes(self.select, self.ignore, self.extend_select)

    def key(self) -> str:
        """A stable description of everything that changes results, for the cache."""
        from .analysis.project import installed
        return repr((sorted(self.codes()), self.fix, self.unsafe_fixes, self.select, self.extend_select,
                     self.per_file_ignores, self.root if self.per_file_ignores else "",
                     self.target_torch_version, self.api_entry_points, installed.fingerprint()))


def _matches(selector: str, rule) -> bool:
    """`rule`: a rule class, or a (code, name) pair of `rule_index()`."""
    code, name = rule if isinstance(rule, tuple) else (rule.code, rule.name)
    if selector == "ALL":
        return True
    return code.startswith(selector) or name == selector


def check_selectors(selectors: Iterable[str], option: str) -> list[str]:
    out = []
    for raw in selectors:
        sel = raw.strip()
        if not sel:
            continue
        upper = sel.upper()
        from .diagnostics import UNUSED_NOQA
        if upper == UNUSED_NOQA[0]:
            out.append(upper)
            continue
        if upper == "ALL" or any(_matches(upper, r) or _matches(sel, r) for r in rule_index()):
            out.append(upper if upper.startswith("SPL") or upper == "ALL" else sel)
            continue
        raise ConfigError(f"{option}: unknown rule selector `{raw}` (see `sparselint rule --all`)")
    return out


def _chosen(rule, select, ignore, extend_select) -> bool:
    selected = any(_matches(s, rule) for s in (*select, *extend_select))
    # A more specific selector wins, as in ruff: `--select SPL001 --ignore SPL` keeps
    # nothing, `--ignore SPL0 --select SPL001` keeps SPL001.
    best_sel = max((len(s) for s in (*select, *extend_select) if _matches(s, rule)), default=-1)
    best_ign = max((len(s) for s in ignore if _matches(s, rule)), default=-1)
    return selected and best_sel > best_ign


def resolve(select, ignore, extend_select) -> tuple[type[Rule], ...]:
    # asked for every file of a run (2,300 in torch's tree), with the same selectors
    return _resolved(tuple(select), tuple(ignore), tuple(extend_select))


@lru_cache(maxsize=64)
def _resolved(select: tuple, ignore: tuple, extend_select: tuple) -> tuple[type[Rule], ...]:
    return tuple(r for r in all_rules() if _chosen(r, select, ignore, extend_select))


def resolve_codes(select, ignore, extend_select) -> tuple[str, ...]:
    return tuple(code for code, name in rule_index() if _chosen((code, name), select, ignore, extend_select))


def split_list(values: Iterable[str]) -> list[str]:
    out: list[str] = []
    for v in values:
        out.extend(p for p in v.replace(" ", ",").split(",") if p)
    return out


@dataclass
class RunOptions:
    settings: Settings = field(default_factory=Settings)
    output_format: str = "concise"
    diff: bool = False
    statistics: bool = False
    exit_zero: bool = False
