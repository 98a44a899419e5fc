"""Run Python scripts the way `python script.py` does, in a child forked from one server
process that imported torch once.

The fixture contract runs hundreds of small torch programs; importing torch costs each of
them about 1.5 s of CPU, which is most of the test suite's time on two cores. The server
imports torch (and nothing of the program under test), then forks a child per script: the
child gets a fresh `__main__`, the script's folder first on `sys.path`, its own stdout and
stderr files and no stdin, exactly as a new interpreter would, and reports its exit status
(negative for a signal, as `subprocess` does). Where fork is unavailable, or with
SPARSELINT_FORK_RUNNER=0, scripts run in a fresh interpreter each.

With `runtime_report=PATH`, the script runs under the run-time checker (a
`sparselint.runtime.Session`) and the report of what it saw is written to PATH when the
script ends, however it ends: a hazard that raises is recorded before its traceback prints.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass


@dataclass
class RunResult:
    """What a run of `python path` left: its exit status (negative for a signal) and output."""

    returncode: int
    stdout: str
    stderr: str

    def final_exception(self) -> str:
        lines = [l for l in self.stderr.strip().splitlines() if l and not l.startswith((" ", "\t"))]
        return lines[-1] if lines else ""


def _fresh_interpreter(path: str, env: dict, timeout: float, runtime_report: str | None = None,
                       args: tuple = ()) -> RunResult:
    command = [sys.executable, path, *args]
    if runtime_report:
        command = [sys.executable, "-c", "import sys; from sparselint.scriptrunner import run_as_main; "
                   "sys.exit(run_as_main(sys.argv[1], sys.argv[2], tuple(sys.argv[3:])))", path, runtime_report,
                   *args]
    p = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout,
                       cwd=os.path.dirname(path), stdin=subprocess.DEVNULL)
    return RunResult(p.returncode, p.stdout, p.stderr)


class _Server:
    """The client side: one server per process that runs scripts, restarted if it dies. Each
    request carries its environment (pytest alone changes PYTEST_CURRENT_TEST per test), which
    the child takes before the script runs."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def _start(self, env: dict) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", "from sparselint.scriptrunner import serve; serve()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     bufsize=1)
        ready = self.proc.stdout.readline()
        if ready.strip() != "ready":
            self.proc.kill()
            self.proc = None
            raise RuntimeError(f"script server did not start: {ready!r}")

    def run(self, path: str, env: dict, timeout: float, runtime_report: str | None = None,
            args: tuple = ()) -> RunResult:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start(env)
            with tempfile.TemporaryDirectory() as out:
                request = {"path": path, "timeout": timeout, "out": out, "env": env, "runtime_report": runtime_report,
                           "args": list(args)}
                self.proc.stdin.write(json.dumps(request) + "\n")
                self.proc.stdin.flush()
                reply = self.proc.stdout.readline()
                if not reply:
                    self.proc = None
                    raise RuntimeError("script server died")
                status = json.loads(reply)
                if status.get("timeout"):
                    raise subprocess.TimeoutExpired([sys.executable, path], timeout)
                return RunResult(status["returncode"], _read(os.path.join(out, "stdout")),
                                 _read(os.path.join(out, "stderr")))

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        self.proc = None


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


_server = _Server()


def run_python(path: str, env: dict, timeout: float = 240, runtime_report: str | None = None,
               args: tuple = ()) -> RunResult:
    """Run `path` as `python path ARGS` would, with `env` as its environment; with
    `runtime_report`, under the run-time checker, whose report goes to that file."""
    path = os.path.abspath(path)
    if runtime_report:
        runtime_report = os.path.abspath(runtime_report)
    if env.get("SPARSELINT_FORK_RUNNER") == "0" or not hasattr(os, "fork"):
        return _fresh_interpreter(path, env, timeout, runtime_report, tuple(args))
    return _server.run(path, env, timeout, runtime_report, tuple(args))


def close_all() -> None:
    _server.close()


# --- the server side -------------------------------------------------------------------

def _child(path: str, out: str, env: dict, runtime_report: str | None = None, args: tuple = ()) -> None:
    """In the forked child: become `python path ARGS` and never return."""
    code = 1
    try:
        os.environ.clear()
        os.environ.update(env)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            target = os.open(os.path.join(out, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False, buffering=1)
        sys.stderr = open(2, "w", closefd=False, buffering=1)
        os.chdir(os.path.dirname(path))
        sys.path[0] = os.path.dirname(path)
        code = run_as_main(path, runtime_report, args)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_as_main(path: str, runtime_report: str | None = None, args: tuple = ()) -> int:
    """Run `path` as `__main__` with `args` on its command line in this process, as the
    run-time checker's runner does; its exit status. With `runtime_report`, under a run-time Session whose report is saved to
    that file at each new finding and at the end."""
    from .runtime.command import save_report
    from .runtime.runner import Program, run
    program = Program(path, tuple(args))
    if not runtime_report:
        return run(program).status
    from .runtime import Session
    command = [sys.executable, path, *args]
    session = Session(root=os.path.dirname(path)).__enter__()
    session.on_new_finding = lambda: save_report(runtime_report, session, command)
    try:
        return run(program).status
    finally:
        session.__exit__(None, None, None)
        save_report(runtime_report, session, command)


def _wait(pid: int, timeout: float) -> int | None:
    import time
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def serve() -> None:
    """Import torch once, then run one script per request line in a forked child."""
    import torch  # noqa: F401  (the point of the server: children inherit it imported)
    # Building any optimizer imports torch._dynamo (800 modules, about 3.5 s of CPU): done
    # here once, a training program's child costs what a tensor program's does.
    import torch._dynamo  # noqa: F401
    # What a run under the run-time checker imports (its checks, the rules' table of codes,
    # about 0.25 s of CPU): once here too, not in each child.
    from .runtime import hooks
    hooks.preload()
    reply = sys.stdout
    print("ready", file=reply, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(os.path.abspath(request["path"]), request["out"], request["env"], request.get("runtime_report"),
                   tuple(request.get("args", ())))
        code = _wait(pid, request["timeout"])
        status = {"timeout": True} if code is None else {"returncode": code}
        print(json.dumps(status), file=reply, flush=True)
