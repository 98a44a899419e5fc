"""The small subcommands, as in ruff: `clean` (remove caches), `config` (the settings one can
write in `[tool.sparselint]`)."""
from __future__ import annotations

import os
import shutil
from typing import Optional

from .cache import CACHE_DIR_NAME

# Every key of `[tool.sparselint]`: (TOML type, default, what it does). `sparselint config`
# lists them; a test keeps this table and the keys the configuration reader accepts equal.
SETTINGS = {
    "select": ("list[str]", '["ALL"]', "Rule codes, prefixes (`SPL1`) or names to enable; `ALL` for every rule."),
    "ignore": ("list[str]", "[]", "Rule codes, prefixes or names to disable; the more specific selector wins."),
    "extend-select": ("list[str]", "[]", "Rules to enable on top of `select` (`SPL904` is only reached this way)."),
    "per-file-ignores": ("dict[str, list[str]]", "{}",
                         "Glob (relative to the configuration's folder, or a file name) -> codes ignored in "
                         "the files it matches."),
    "exclude": ("list[str]", "[]", "Glob patterns of paths not to check, on top of the built-in excludes."),
    "extend-exclude": ("list[str]", "[]", "Glob patterns of paths not to check, on top of `exclude`."),
    "respect-gitignore": ("bool", "true", "Skip what `.gitignore` ignores beneath the named paths."),
    "target-torch-version": ("str", "\"\"", "The torch version the code runs on (\"2.13\"): it picks the table of "
                             "what each op supports; the newest by default."),
    "api-entry-points": ("bool", "true", "Check each public function of a package as an entry point: what its "
                         "own layout tests admit for a parameter (any sparse COO tensor, the uncoalesced ones "
                         "included) is what callers outside the package may pass. Options are inputs too: a "
                         "public class runs with its constructor's defaults and each on/off option turned, and "
                         "a program with argparse options with each value they admit."),
    "fix": ("bool", "false", "Apply safe fixes in place, as `--fix` does."),
    "unsafe-fixes": ("bool", "false", "Also apply fixes that may change behaviour."),
    "output-format": ("str", '"concise"', "How findings are printed (see `--output-format`)."),
    "runtime-report": ("str", '""', "A report written by `sparselint run --report FILE` (relative to this file's "
                       "folder): findings the run saw are marked confirmed, and what it alone saw in the checked "
                       "files is listed, as `--runtime-report` does; the language server marks them too."),
}


def describe(key: Optional[str]) -> str:
    """`sparselint config`: every key, one per line; `sparselint config KEY`: that key."""
    if key is None:
        return "\n".join(SETTINGS)
    entry = SETTINGS.get(key) or SETTINGS.get(key.replace("_", "-"))
    if entry is None:
        from .config import ConfigError
        raise ConfigError(f"unknown setting `{key}` (see `sparselint config`)")
    kind, default, what = entry
    return f"{what}\n\nDefault value: {default}\nType: {kind}\nExample usage:\n```toml\n[tool.sparselint]\n" \
           f"{key.replace('_', '-')} = {default}\n```"


def clean(start: str, extra: Optional[str] = None) -> list[str]:
    """Remove every sparselint cache folder beneath `start` (and `extra`, a cache folder named by
    SPARSELINT_CACHE_DIR or --cache-dir, when it is one of ours); the folders removed."""
    removed = []
    for base, dirs, _ in os.walk(start):
        if CACHE_DIR_NAME in dirs:
            target = os.path.join(base, CACHE_DIR_NAME)
            if not os.path.islink(target):
                shutil.rmtree(target)
                removed.append(target)
        # never descend into what is being removed, nor into version control
        dirs[:] = [d for d in dirs if d not in (CACHE_DIR_NAME, ".git", ".hg", ".svn")]
    # a cache folder elsewhere is removed only when it carries our CACHEDIR.TAG
    if extra and os.path.isdir(extra) and os.path.isfile(os.path.join(extra, "CACHEDIR.TAG")) \
            and os.path.abspath(extra) not in map(os.path.abspath, removed):
        shutil.rmtree(extra)
        removed.append(extra)
    return removed
