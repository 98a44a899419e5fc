"""`[tool.sparselint]` in pyproject.toml: finding it, reading it, and refusing what is wrong."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Optional

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from .config import ConfigError, check_selectors

KNOWN_KEYS = {
    "select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude",
    "respect-gitignore", "target-torch-version", "fix", "unsafe-fixes", "output-format", "api-entry-points",
    "runtime-report",
}


@dataclass
class FileConfig:
    path: Optional[str] = None  # the pyproject.toml it came from
    select: Optional[list[str]] = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: Optional[list[str]] = None
    extend_exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    target_torch_version: Optional[str] = None
    api_entry_points: bool = True
    fix: bool = False
    unsafe_fixes: bool = False
    output_format: Optional[str] = None
    runtime_report: Optional[str] = None  # absolute: a relative path is the configuration folder's

    @property
    def root(self) -> str:
        return os.path.dirname(self.path) if self.path else os.getcwd()


def _has_table(path: str) -> bool:
    """Whether a pyproject.toml has a [tool.sparselint] table. One that cannot be read or parsed
    is an error: skipping it would fall back to other settings and hide findings."""
    tool = _read(path).get("tool", {})
    return isinstance(tool, dict) and "sparselint" in tool


def find(start: str) -> Optional[str]:
    """The nearest pyproject.toml with a [tool.sparselint] table, from `start` upwards."""
    here = os.path.abspath(start)
    if os.path.isfile(here):
        here = os.path.dirname(here)
    while True:
        cand = os.path.join(here, "pyproject.toml")
        if os.path.isfile(cand) and _has_table(cand):
            return cand
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


class Resolver:
    """The configuration of each folder: the nearest pyproject.toml with a [tool.sparselint]
    table, or the one given with --config for every folder. Each file is read once."""

    def __init__(self, override: Optional[str] = None, settings: Optional[dict] = None, isolated: bool = False):
        """`settings`: a [tool.sparselint] table given on the command line (`--config "KEY =
        VALUE"`), laid over every configuration; `isolated`: read no configuration file."""
        self._settings = settings or {}
        self._override = load(override) if override is not None else None
        if isolated and self._override is None:
            self._override = FileConfig()
        if self._override is not None and self._settings:
            self._override = overlay(self._override, self._settings)
        self._by_dir: dict[str, FileConfig] = {}
        self._by_file: dict[Optional[str], FileConfig] = {}

    def for_dir(self, directory: str) -> FileConfig:
        if self._override is not None:
            return self._override
        directory = os.path.abspath(directory)
        cfg = self._by_dir.get(directory)
        if cfg is None:
            path = find(directory)
            cfg = self._by_file.get(path)
            if cfg is None:
                cfg = load(path) if path else FileConfig()
                if self._settings:
                    cfg = overlay(cfg, self._settings)
                self._by_file[path] = cfg
            self._by_dir[directory] = cfg
        return cfg

    def for_file(self, path: str) -> FileConfig:
        return self.for_dir(os.path.dirname(os.path.abspath(path)))


def _strings(key: str, value) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[tool.sparselint] `{key}` must be a list of strings")
    return value


def _bool(key: str, value) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"[tool.sparselint] `{key}` must be true or false")
    return value


def load(path: str) -> FileConfig:
    try:
        return _load(path)
    except ConfigError as exc:
        message = str(exc)
        if path not in message and os.path.abspath(path) not in message:
            message = f"{path}: {message}"
        raise ConfigError(message) from None


def _read(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def _load(path: str) -> FileConfig:
    data = _read(path)
    table = data.get("tool", {}).get("sparselint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.sparselint] must be a table")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key `{unknown[0]}` in [tool.sparselint]")
    return _apply(FileConfig(path=os.path.abspath(path)), table)


def overlay(cfg: FileConfig, table: dict) -> FileConfig:
    """`cfg` with the keys of `table` (command-line `--config` settings) set over it."""
    import copy
    return _apply(copy.deepcopy(cfg), table)


def _apply(cfg: FileConfig, table: dict) -> FileConfig:
    """Set on `cfg` the keys present in a [tool.sparselint] table, checking each value."""
    if "select" in table:
        cfg.select = check_selectors(_strings("select", table["select"]), "select")
    if "ignore" in table:
        cfg.ignore = check_selectors(_strings("ignore", table["ignore"]), "ignore")
    if "extend-select" in table:
        cfg.extend_select = check_selectors(_strings("extend-select", table["extend-select"]), "extend-select")
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError("[tool.sparselint] `per-file-ignores` must be a table of glob = [codes]")
        cfg.per_file_ignores = {k: check_selectors(_strings(f"per-file-ignores.{k}", v), f"per-file-ignores.{k}")
                                for k, v in pfi.items()}
    if "exclude" in table:
        cfg.exclude = _strings("exclude", table["exclude"])
    if "extend-exclude" in table:
        cfg.extend_exclude = _strings("extend-exclude", table["extend-exclude"])
    if "respect-gitignore" in table:
        cfg.respect_gitignore = _bool("respect-gitignore", table["respect-gitignore"])
    if "api-entry-points" in table:
        cfg.api_entry_points = _bool("api-entry-points", table["api-entry-points"])
    if "fix" in table:
        cfg.fix = _bool("fix", table["fix"])
    if "unsafe-fixes" in table:
        cfg.unsafe_fixes = _bool("unsafe-fixes", table["unsafe-fixes"])
    version = table.get("target-torch-version")
    if version is not None:
        if not isinstance(version, str) or not all(p.isdigit() for p in version.split(".")[:2]):
            raise ConfigError("[tool.sparselint] `target-torch-version` must be a version string such as \"2.13\"")
        cfg.target_torch_version = version
        from .analysis.torchops.optable import missing_table
        why = missing_table(version)
        if why:
            # a typo or an old release must not pass silently: the findings answer for another torch
            where = cfg.path or "--config"
            print(f"sparselint: warning: {where}: `target-torch-version`: {why}", file=sys.stderr)
    fmt = table.get("output-format")
    if fmt is not None:
        from .output import FORMATS
        if fmt not in FORMATS:
            raise ConfigError(f"[tool.sparselint] `output-format` must be one of {', '.join(FORMATS)}")
        cfg.output_format = fmt
    report = table.get("runtime-report")
    if report is not None:
        if not isinstance(report, str) or not report:
            raise ConfigError("[tool.sparselint] `runtime-report` must be the path of a run-time report")
        cfg.runtime_report = os.path.join(cfg.root, report)
    return cfg


def inline(value: str) -> Optional[dict]:
    """A `--config` value written as TOML `KEY = VALUE` (ruff's inline override), as a
    [tool.sparselint] table; None when the value is not TOML."""
    try:
        table = tomllib.loads(value)
    except tomllib.TOMLDecodeError:
        return None
    # `tool.sparselint.select = [...]` and `select = [...]` both name a setting
    table = table.get("tool", {}).get("sparselint", table) if "tool" in table else table
    if not table:
        return None
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"--config: unknown setting `{unknown[0]}` (see `sparselint config`)")
    return table


def config_arguments(values) -> tuple[Optional[str], dict]:
    """Split the `--config` values into one configuration file and the inline settings, in
    the order given (a later setting wins), as ruff does."""
    path: Optional[str] = None
    settings: dict = {}
    for value in values:
        if os.path.isfile(value):
            if path is not None:
                raise ConfigError("--config: only one configuration file can be given")
            path = value
            continue
        table = inline(value) if "=" in value else None
        if table is None:
            raise ConfigError(f"--config: `{value}` is neither a file nor a TOML `KEY = VALUE` setting "
                              f"(such as --config \"select = ['SPL0']\")")
        if isinstance(table.get("runtime-report"), str) and table["runtime-report"]:
            # a path given on the command line is the current folder's, whatever file it overlays
            table["runtime-report"] = os.path.abspath(table["runtime-report"])
        try:
            _apply(FileConfig(), table)  # refuse a bad value here, naming --config
        except ConfigError as exc:
            raise ConfigError(f"--config `{value}`: {exc}") from None
        settings.update(table)
    return path, settings
