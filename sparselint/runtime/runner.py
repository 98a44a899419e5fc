"""Running a program as `python script.py ARGS` or `python -m module ARGS` would, in this
interpreter, so that a Session installed around it sees every torch call it makes.

The program gets `sys.argv`, a fresh `__main__` and the script's folder (or, with `-m`, the
current one) first on `sys.path`, as a new interpreter would give it. Its end is turned into the
exit status python would give: `sys.exit(n)` is n, an exception prints its traceback (without
the runner's own frames) through `sys.excepthook` and is 1."""
from __future__ import annotations

import os
import runpy
import sys
from dataclasses import dataclass, field
from typing import Optional


class UsageError(Exception):
    """A command that names no program that can run (exit status 2, as a usage error)."""


@dataclass(frozen=True)
class Program:
    target: str  # a script's path, or a module's name with `module`
    args: tuple[str, ...] = ()
    module: bool = False

    @property
    def command(self) -> list[str]:
        return ["python", *(("-m", self.target) if self.module else (self.target,)), *self.args]


def parse_command(words: list[str], python_word: bool = True) -> Program:
    """`[python] script.py ARGS` or `[python] -m module ARGS` as a Program. With `python_word`,
    a first word naming a python interpreter is dropped: the program runs in this one."""
    words = list(words)
    if python_word and words and _is_python(words[0]):
        words = words[1:]
    if not words:
        raise UsageError("no program to run: give `script.py ARGS` or `-m module ARGS`")
    first = words[0]
    if first == "-m" or (first.startswith("-m") and len(first) > 2):
        name, rest = (words[1] if len(words) > 1 else "", words[2:]) if first == "-m" else (first[2:], words[1:])
        if not name:
            raise UsageError("-m needs a module name")
        return Program(name, tuple(rest), module=True)
    if first.startswith("-") and first != "-":
        raise UsageError(f"python option `{first}` is not supported here: give `script.py ARGS` or `-m module ARGS`")
    if first == "-" or not os.path.isfile(first):
        raise UsageError(f"can't open file {first!r}: no such file")
    return Program(first, tuple(words[1:]))


def _is_python(word: str) -> bool:
    name = os.path.basename(word).lower()
    if name.endswith(".exe"):
        name = name[:-4]
    return name.startswith("python") and all(c.isdigit() or c == "." for c in name[len("python"):])


@dataclass
class Ended:
    """How the program ended: its exit status and the exception that ended it, if any."""

    status: int
    exception: Optional[BaseException] = field(default=None, repr=False)


def run(program: Program) -> Ended:
    """Run `program` here and now; its exceptions are printed as python prints them, not raised."""
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    try:
        if program.module:
            sys.argv = [program.target, *program.args]  # runpy puts the module's file first
            _set_path0(os.getcwd())
            runpy.run_module(program.target, run_name="__main__", alter_sys=True)
        else:
            path = os.path.abspath(program.target)
            sys.argv = [program.target, *program.args]
            _set_path0(os.path.dirname(path))
            runpy.run_path(path, run_name="__main__")
        return Ended(0)
    except SystemExit as exc:
        return Ended(_exit_status(exc.code), exc if exc.code not in (None, 0) else None)
    except ImportError as exc:
        if program.module and _names_the_module(exc, program.target):
            raise UsageError(f"No module named {program.target}") from None
        _print_exception(exc)
        return Ended(1, exc)
    except KeyboardInterrupt as exc:
        _print_exception(exc)
        return Ended(130, exc)
    except BaseException as exc:  # the program's own failure: shown, then reported by status
        _print_exception(exc)
        return Ended(1, exc)
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            _set_path0(saved_path0)


def _set_path0(folder: str) -> None:
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.insert(0, folder)


def _exit_status(code) -> int:
    """What `sys.exit(code)` makes the interpreter's status: None is 0, a non-int is printed."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF  # as the shell sees it: sys.exit(-1) is 255
    print(code, file=sys.stderr)
    return 1


def _names_the_module(exc: ImportError, target: str) -> bool:
    """A failure to find the module named on the command line itself (runpy's own error), not
    an import inside it."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") not in ("runpy", __name__, "importlib._bootstrap"):
            return False
        tb = tb.tb_next
    return True


def _print_exception(exc: BaseException) -> None:
    """The traceback python would print for the program: its frames, not the runner's."""
    tb = _program_frames(exc.__traceback__)
    sys.stdout.flush()
    exc.__traceback__ = tb  # the default hook prints the exception's own traceback
    sys.excepthook(type(exc), exc, tb)
    sys.stderr.flush()


def _program_frames(tb):
    """The traceback without runpy's, the runner's and the checker's frames (a torch mode's
    `__torch_function__` sits between the program's call and torch's raise)."""
    kept = []
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__") or ""
        if name != "runpy" and not name.startswith(_PACKAGE):
            kept.append(tb)
        tb = tb.tb_next
    for before, after in zip(kept, kept[1:]):
        before.tb_next = after
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


_PACKAGE = __name__.rsplit(".", 1)[0] + "."  # sparselint.runtime.
