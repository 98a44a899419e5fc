"""What a Session installs into torch (imports torch). Each check is a module of
`sparselint.runtime.checks` that installs itself and returns how to undo it; most only fill
in the table of the one torch function mode (`watch.py`), pushed after they all have."""
from __future__ import annotations

import importlib
import pkgutil


class Installed:
    def __init__(self, undo):
        self._undo = undo

    def uninstall(self) -> None:
        for undo in reversed(self._undo):
            undo()


def _check_modules():
    from . import checks
    for info in sorted(pkgutil.iter_modules(checks.__path__), key=lambda i: i.name):
        yield importlib.import_module(f"{checks.__name__}.{info.name}")


def preload() -> None:
    """Import the checks and the rules' table, for a process that forks the runs (the
    fixture runner's server): nothing is installed."""
    from ..rule import rule_index
    rule_index()
    for module in _check_modules():
        if hasattr(module, "preload"):
            module.preload()


def install(session) -> Installed:
    from . import warning_place
    from .watch import Watch, push
    session.watch = Watch(session)
    undo = []
    try:
        undo.append(warning_place.install(session))
        for module in _check_modules():
            undo.append(module.install(session))
        undo.append(push(session.watch))
    except BaseException:
        Installed(undo).uninstall()  # torch as it was, whatever failed
        raise
    return Installed(undo)
