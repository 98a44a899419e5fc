"""`pytest --sparselint`: the run-time checker around a whole test session.

Registered through the `pytest11` entry point, so it is loaded into every pytest run of an
environment where sparselint is installed: without `--sparselint` (or an option that implies
it) it adds its options and does nothing else, and never imports torch. With it, the checks are
installed from configuration to the session's end, collection included (module-level code of
test files runs then); the hazards seen are listed in the terminal summary. They do not fail
the session unless `--sparselint-strict` is given: a test suite that passes stays green by
default, as it is the static findings that gate a change. Under pytest-xdist each worker runs
its own checker and sends its findings to the controller, which lists them once."""
from __future__ import annotations

import os

import pytest

_WORKER_KEY = "sparselint_runtime"


def pytest_addoption(parser):
    group = parser.getgroup("sparselint", "sparselint run-time checker")
    group.addoption("--sparselint", action="store_true", default=False,
                    help="run the tests under sparselint's run-time checker; list the hazards seen at the end")
    group.addoption("--sparselint-report", metavar="FILE", default=None,
                    help="write what the run saw to FILE, for `sparselint check --runtime-report` "
                         "(implies --sparselint)")
    group.addoption("--sparselint-strict", action="store_true", default=False,
                    help="fail the session (exit 1) when a hazard was seen, even if every test passed "
                         "(implies --sparselint)")


def pytest_configure(config):
    opt = config.option
    if opt.sparselint or opt.sparselint_report or opt.sparselint_strict:
        config.pluginmanager.register(Checker(config), "sparselint-runtime-checker")


class Checker:
    def __init__(self, config):
        self.config = config
        self.session = None
        self.rows: list = []  # findings sent by xdist workers, as report rows
        self.unsaved = ""
        worker = hasattr(config, "workerinput")
        distributing = not worker and getattr(config.option, "dist", "no") not in (None, "no") \
            and getattr(config.option, "numprocesses", None)
        if not distributing:  # an xdist controller runs no test: its workers check
            from . import Session
            try:
                self.session = Session(root=str(config.rootpath))
                self.session.__enter__()
            except ImportError as exc:
                if (exc.name or "").split(".")[0] == "torch":
                    from .command import NO_TORCH
                    raise pytest.UsageError(f"--sparselint: {NO_TORCH}") from None
                raise
            _hide_checker_frames()
            if config.option.sparselint_report and not worker:
                # saved at each new finding too: a session that dies keeps what it saw
                self.session.on_new_finding = self._save
                self._pid = os.getpid()  # a forked child (a DataLoader worker) writes no report

    def _save(self) -> None:
        if os.getpid() != getattr(self, "_pid", os.getpid()):
            return
        from .command import _torch_version
        from .report import save
        path = os.path.join(str(self.config.invocation_params.dir), self.config.option.sparselint_report)
        findings, counts = self.findings()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        save(path, findings, counts, ["pytest", *self.config.invocation_params.args], _torch_version())

    def _stop(self):
        if self.session is not None and self.session._installed is not None:
            self.session.on_new_finding = None
            self.session.__exit__(None, None, None)

    def findings(self):
        """(findings, counts): this process's and its workers', a hazard seen by several once."""
        from .report import rows_of, merge_rows
        rows = rows_of(self.session.findings(), self.session.counts()) if self.session else []
        return merge_rows(rows + self.rows)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        self.rows.extend(getattr(node, "workeroutput", {}).get(_WORKER_KEY, []))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        self._stop()
        findings, counts = self.findings()
        if hasattr(self.config, "workerinput"):
            from .report import rows_of
            self.config.workeroutput[_WORKER_KEY] = rows_of(findings, counts)
            return
        path = self.config.option.sparselint_report
        if path:
            try:
                self._save()
            except OSError as exc:
                self.unsaved = f"cannot write {path}: {exc.strerror or exc}"
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        if self.config.option.sparselint_strict and findings and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        if hasattr(self.config, "workerinput"):
            return
        from . import printing
        findings, counts = self.findings()
        terminalreporter.write_sep("=", "sparselint run-time check")
        rendered = printing.render(findings, counts, "concise", start=str(self.config.invocation_params.dir))
        if rendered:
            terminalreporter.write_line(rendered)
        terminalreporter.write_line(printing.summary(findings, counts).replace("sparselint: run-time check: ", ""))
        if findings and self.config.option.sparselint_strict:
            terminalreporter.write_line("(--sparselint-strict: the session fails)")
        if self.unsaved:
            terminalreporter.write_line(f"sparselint: error: {self.unsaved}", red=True)

    def pytest_unconfigure(self, config):
        self._stop()


def _hide_checker_frames() -> None:
    """A test failing on a raising hazard shows its traceback as without the plugin: pytest
    leaves out the frames of modules whose globals say `__tracebackhide__` (the torch mode's
    `__torch_function__` sits between the test's call and torch's raise)."""
    import sys
    package = __name__.rsplit(".", 1)[0] + "."
    for name, module in list(sys.modules.items()):
        if name.startswith(package) and module is not None and name != __name__:
            module.__tracebackhide__ = True
