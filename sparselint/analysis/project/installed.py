"""Modules of installed packages, found where Python's import system looks for them (the
running interpreter's `sys.path`: site-packages, PYTHONPATH), without importing anything.

A user's script hands its tensors to a library installed beside it: what the library's
public function or class does with them is read from the library's source, as a module of
the project would be. The standard library holds no tensor code and is not searched.
"""
from __future__ import annotations

import os
import sys
import sysconfig
from functools import lru_cache
from typing import Optional


@lru_cache(maxsize=1)
def _search_path() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The folders of `sys.path` holding installed packages, and those inside the working
    folder that hold the project's own modules (`PYTHONPATH=src`, a `src` layout installed in
    editable mode), not its `.venv`."""
    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(p) for p in (paths.get("stdlib"), paths.get("platstdlib")) if p}
    here = os.path.realpath(os.getcwd())
    found, own = [], []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue  # the current folder ('') is the project's; zip archives hold no source to read
        real = os.path.realpath(entry)
        if real in stdlib or os.path.basename(real) == "lib-dynload":
            continue
        if (real == here or real.startswith(here + os.sep)) and not _site_folder(real):
            if real != here:  # the working folder itself (`python -m`) is searched upwards from each file
                own.append(real)
        else:
            found.append(real)
    return tuple(dict.fromkeys(found)), tuple(dict.fromkeys(own))


def _roots() -> tuple[str, ...]:
    return _search_path()[0]


def project_roots() -> tuple[str, ...]:
    """Folders of the project on `sys.path`: a module found there is the project's."""
    return _search_path()[1]


# torch is known by its API tables, never by its source; the others hold no tensor code
# worth reading and are large
_NOT_READ = frozenset({"torch", "torchvision", "torchaudio", "functorch", "triton", "numpy", "scipy", "pandas",
                       "sklearn", "pytest", "_pytest", "setuptools", "pip", "libcst", "sparselint"})


@lru_cache(maxsize=4096)
def installed_file(module: str) -> Optional[str]:
    """The source file of an absolute module name in an installed package, or None."""
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top in _NOT_READ:
        return None
    rel = module.replace(".", os.sep)
    for root in _roots():
        for cand in (os.path.join(root, rel + ".py"), os.path.join(root, rel, "__init__.py")):
            if os.path.isfile(cand):
                return cand
    return None


def installed(path: str) -> bool:
    """Whether a file lies in an installed package (under a search root of `sys.path`)."""
    if not path:
        return False
    real = os.path.realpath(path)
    return any(real.startswith(root + os.sep) for root in _roots())


def fingerprint() -> tuple:
    """What results depend on beyond the files read: the search roots, and when each last
    gained or lost an entry (a package installed or removed), and the project's folders on
    the path."""
    out = []
    for root in _roots():
        try:
            out.append((root, os.stat(root).st_mtime_ns))
        except OSError:
            out.append((root, 0))
    # the project's own folders on the path: which modules are found depends on them
    return (*out, *(("project", root) for root in project_roots()))


def _site_folder(path: str) -> bool:
    return os.path.basename(path) in ("site-packages", "dist-packages")
