"""A program run under the checker, start to end: the session around it, then the report
file and the findings. Shared by `python -m sparselint.runtime` and `sparselint run`.

Exit status: the program's own when it failed (an exception is 1, `sys.exit(n)` is n);
otherwise 1 when the run saw a hazard and 0 when it saw none (`exit_zero`: 0 either way),
as `sparselint check` exits for findings. A command that cannot start is a `UsageError` (2)."""
from __future__ import annotations

import os
import sys
from typing import Optional

from . import printing, report, runner
from .runner import Program, UsageError

NO_TORCH = "the run-time checker needs torch: pip install 'sparselint[runtime]'"


def execute(program: Program, *, report_path: Optional[str] = None, output_format: Optional[str] = None,
            exit_zero: bool = False, output_file: Optional[str] = None) -> int:
    """`output_format`: None for the current folder's `output-format` setting, else concise."""
    from . import Session
    output_format = output_format or _configured_format()
    # the program may change folders: the report goes, and paths are shown, from where it started
    start = os.getcwd()
    shown_report = report_path
    report_path = os.path.abspath(report_path) if report_path else None
    if report_path:  # its folder is made now, as `-o` makes one: the run's result must not be lost at the end
        folder = os.path.dirname(os.path.abspath(report_path))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write {shown_report}: {exc.strerror or exc}") from None
    session = Session()
    if report_path:
        # saved again at each new finding: a run that dies (os._exit, a crash in torch's C++)
        # keeps what it saw up to then
        # (not by a forked child, a DataLoader worker: the report is this process's)
        pid = os.getpid()
        session.on_new_finding = lambda: os.getpid() == pid and save_report(report_path, session, program.command)
    try:
        session.__enter__()
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == "torch":
            raise UsageError(NO_TORCH) from None
        raise
    try:
        # opened before the program runs: a path that cannot be written is known at once
        out = _open_output(output_file)
        ended = runner.run(program)
    finally:
        session.__exit__(None, None, None)
    findings, counts = session.findings(), session.counts()
    unsaved = ""
    if report_path:
        session.on_new_finding = None
        unsaved = save_report(report_path, session, program.command)
    stream = out or sys.stderr
    color = out is None and _color(stream)
    rendered = printing.render(findings, counts, output_format, color=color, start=start)
    if rendered:
        print(rendered, file=stream)
    if output_format not in _machine():
        print(printing.summary(findings, counts), file=stream)
    if out is not None:
        out.close()
    else:
        stream.flush()
    if unsaved:
        print(unsaved, file=sys.stderr)
        return ended.status or 2
    if ended.status != 0 or exit_zero:
        return ended.status
    return 1 if findings else 0


def _open_output(path: Optional[str]):
    """The `-o` stream, its folder made if missing, as `check -o` makes it."""
    from ..cli_options import open_output
    from ..config import ConfigError
    try:
        return open_output(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def save_report(path: str, session, command: list[str]) -> str:
    """Write the report; the error to print if it cannot be written."""
    try:
        report.save(path, session.findings(), session.counts(), command, _torch_version())
    except OSError as exc:
        return f"sparselint: error: cannot write {path}: {exc.strerror or exc}"
    return ""


def _configured_format() -> str:
    """The `output-format` of the current folder's configuration, as `sparselint check` reads it."""
    from ..config import ConfigError
    from ..pyproject import Resolver
    try:
        return Resolver().for_dir(os.getcwd()).output_format or "concise"
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _torch_version() -> str:
    torch = sys.modules.get("torch")
    return str(getattr(torch, "__version__", "")) if torch else ""


def _machine() -> tuple:
    from ..output import MACHINE_FORMATS
    return MACHINE_FORMATS


def _color(stream) -> bool:
    from ..output import use_color
    return use_color(stream)
