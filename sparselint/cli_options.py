"""Command-line options that ruff users expect, parsed here so the command stays readable:
`--per-file-ignores GLOB:CODES`, `--extend-exclude`, `-o/--output-file`."""
from __future__ import annotations

import os
from typing import Optional

from .config import ConfigError, check_selectors, split_list


def per_file_ignores(values, option: str = "--per-file-ignores") -> Optional[dict[str, list[str]]]:
    """`GLOB:CODE[,CODE]` pairs (repeatable) as glob -> codes, the globs relative to the current
    directory; None when the option was not given."""
    if not values:
        return None
    out: dict[str, list[str]] = {}
    for value in values:
        glob, sep, codes = value.rpartition(":")
        if not sep or not glob or not codes.strip():
            raise ConfigError(f"{option}: `{value}` is not of the form GLOB:CODE[,CODE...] (such as `tests/*:SPL1`)")
        out.setdefault(glob, []).extend(check_selectors(split_list([codes]), option))
    return out


def relative_to(root: str, patterns: dict[str, list[str]]) -> dict[str, list[str]]:
    """Globs written relative to the current directory, made relative to a configuration's
    folder, which is what `Settings.ignored_for` matches them against."""
    prefix = os.path.relpath(os.getcwd(), root or os.getcwd())
    if prefix == os.curdir:
        return dict(patterns)
    return {os.path.normpath(os.path.join(prefix, glob)): codes for glob, codes in patterns.items()}


def open_output(path: Optional[str]):
    """The stream `-o/--output-file` names (its folder made if missing), or None."""
    if not path:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--output-file: cannot write {path}: {exc.strerror or exc}") from None
