"""Run Python scripts the way `python script.py` does, in a child forked from one server
process that imported torch once.

The fixture contract runs hundreds of small torch programs; importing torch costs each of
them about 1.5 s of CPU, which is most of the test suite's time on two cores. The server
imports torch (and nothing of the program under test), then forks a child per script: the
child gets a fresh `__main__`, the script's folder first on `sys.path`, its own stdout and
stderr files and no stdin, exactly as a new interpreter would, and reports its exit status
(negative for a signal, as `subprocess` does). Where fork is unavailable, or with
SPARSELINT_FORK_RUNNER=0, scripts run in a fresh interpreter each.
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


def _fresh_interpreter(path: str, env: dict, timeout: float) -> RunResult:
    p = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env, timeout=timeout,
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

    def run(self, path: str, env: dict, timeout: float) -> RunResult:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start(env)
            with tempfile.TemporaryDirectory() as out:
                request = {"path": path, "timeout": timeout, "out": out, "env": env}
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


def run_python(path: str, env: dict, timeout: float = 240) -> RunResult:
    """Run `path` as `python path` would, with `env` as its environment."""
    path = os.path.abspath(path)
    if env.get("SPARSELINT_FORK_RUNNER") == "0" or not hasattr(os, "fork"):
        return _fresh_interpreter(path, env, timeout)
    return _server.run(path, env, timeout)


def close_all() -> None:
    _server.close()


# --- the server side -------------------------------------------------------------------

def _child(path: str, out: str, env: dict) -> None:
    """In the forked child: become `python path` and never return."""
    import runpy
    import traceback
    code = 0
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
        sys.argv = [path]
        sys.path[0] = os.path.dirname(path)
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            # The report `python script.py` prints for an uncaught exception.
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


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
    reply = sys.stdout
    print("ready", file=reply, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(os.path.abspath(request["path"]), request["out"], request["env"])
        code = _wait(pid, request["timeout"])
        status = {"timeout": True} if code is None else {"returncode": code}
        print(json.dumps(status), file=reply, flush=True)
