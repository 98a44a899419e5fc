"""Settings for a file in the editor: the nearest `pyproject.toml` with `[tool.sparselint]`,
resolved as `sparselint check FILE` resolves it, with no command-line flags. Fixes are
never applied on their own: the editor asks for them through code actions."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from .. import pyproject
from ..config import ConfigError, Settings
from ..discovery import DEFAULT_EXCLUDES, discover


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    config: Optional[str]  # the pyproject.toml used, if any
    excluded: bool = False
    error: str = ""  # a broken configuration: reported, and the file is not checked
    runtime_report: Optional[str] = None  # `runtime-report`: the run's marks are laid on the findings


def from_file_config(cfg: pyproject.FileConfig) -> Settings:
    # The same fields `sparselint check` fills from the file when no flag overrides them.
    return Settings(
        select=tuple(cfg.select or ["ALL"]),
        ignore=tuple(cfg.ignore),
        extend_select=tuple(cfg.extend_select),
        fix=False,
        unsafe_fixes=cfg.unsafe_fixes,
        per_file_ignores=tuple((k, tuple(v)) for k, v in sorted(cfg.per_file_ignores.items())),
        root=cfg.root,
        target_torch_version=cfg.target_torch_version or "",
    )


class SettingsCache:
    """Resolved settings per folder, reloaded when a pyproject.toml changes."""

    def __init__(self, fallback_root: str = ""):
        self.fallback_root = fallback_root or os.getcwd()
        self._found: dict[str, Optional[str]] = {}
        self._loaded: dict[str, tuple[tuple, object]] = {}

    def clear(self) -> None:
        self._found.clear()
        self._loaded.clear()

    def for_path(self, path: Optional[str]) -> Resolved:
        """Settings for a file (None: an unsaved buffer with no file yet)."""
        folder = os.path.dirname(os.path.abspath(path)) if path else self.fallback_root
        if folder not in self._found:
            try:
                self._found[folder] = pyproject.find(folder)
            except ConfigError as exc:  # a pyproject.toml that does not parse is shown, not a crash
                return Resolved(Settings(), None, error=str(exc))
        config = self._found[folder]
        if config is None:
            return Resolved(Settings(root=self.fallback_root), None)
        try:
            st = os.stat(config)
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        cached = self._loaded.get(config)
        if cached is None or cached[0] != stamp:
            try:
                cfg = pyproject.load(config)
                cached = (stamp, cfg)
            except ConfigError as exc:
                cached = (stamp, str(exc))
            self._loaded[config] = cached
        cfg = cached[1]
        if isinstance(cfg, str):
            return Resolved(Settings(), config, error=cfg)
        settings = from_file_config(cfg)
        return Resolved(settings, config, excluded=bool(path) and _excluded(path, cfg),
                        runtime_report=cfg.runtime_report)


def _excluded(path: str, cfg: pyproject.FileConfig) -> bool:
    """Excluded by the configuration, as `--force-exclude` decides for a named file."""
    patterns = tuple((cfg.exclude or []) + cfg.extend_exclude)
    parts = os.path.relpath(os.path.abspath(path), cfg.root).split(os.sep)
    if any(p in DEFAULT_EXCLUDES for p in parts[:-1]):
        return True
    if not patterns or not os.path.isfile(path):
        return False
    return not discover([path], exclude=patterns, root=cfg.root, force_exclude=True,
                        respect_gitignore=False).files
