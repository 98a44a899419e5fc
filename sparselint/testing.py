"""The fixture contract: expectations written inside executable scripts.

A fixture declares its run-time outcome in a header comment and its findings inline:

    # expect-error: RuntimeError: Cannot get values on an uncoalesced tensor
    ...
    row_norm = adj.values().norm()  # SPL001

`# expect-error: Type: prefix` - running it raises that exception with that message prefix;
`# expect-misbehaves` - it exits 0 and prints a line starting with MISBEHAVES (a silent
hazard that the script detects itself); `# expect-crash` - the process dies from a signal
(memory corruption); `# expect-ok` - it runs clean.
A program that reads its options from the command line says with what it runs, in a
second header line, `# argv: --optim sparseadam`: the words given after `python path`.
Each `# SPLnnn` code in a trailing comment is one expected finding on that line.

A bad fixture goes on after its hazard the way real code does (a GCN adjacency is normalised
through its `.indices()` and `.values()` after the self loops are added): the lines after
the hazard never run in the bad file, but they run once the fix is applied, so a fix that
trades the hazard for a new one (an uncoalesced sum, say) fails the fixed-code run.

A bad fixture (a `.py` script or an `.ipynb` notebook) beside a hand-corrected `_good` twin
may also say what its fixes compute, in two comment lines:

    # safe-fix: same        `--fix` changes it, and the result prints what the twin prints
    # unsafe-fix: differs   `--fix --unsafe-fixes` changes it, and the result prints
                            something else (or fails): a fix that must never be safe

each `same`, `differs`, or `none` (the file stays as it was).

Run under the run-time checker (`sparselint.runtime`), a fixture must report each of its
marks, with the mark's code, at the marked line (or with an evidence link at the marked
line: static SPL401 marks the optimizer's construction, the run sees its `step()` and names
the construction as evidence), and nothing that is not marked. A mark the run cannot see
says so in a comment line of the file, by convention its last lines, so that no marked
line moves:

    # runtime-unseen: SPL401: the optimizer never steps in this fixture

one line per code, covering the marks of that code the run does not report (at least one
must be unreported: a stale line fails). In a project, such a line in any entry script
covers the project's marks.
"""
from __future__ import annotations

import io
import subprocess
import sys
import os
import re
import shlex
import tokenize
from collections import Counter
from dataclasses import dataclass

from .config import Settings
from .engine import check_text
from .scriptrunner import RunResult, run_python

_HEADER = re.compile(r"^#\s*expect-(error|misbehaves|crash|ok)\b:?\s*(.*)$", re.M)
_CODE = re.compile(r"\bSPL\d{3}\b")
_RUNTIME_UNSEEN = re.compile(r"^#\s*runtime-unseen:\s*(SPL\d{3}):\s*(\S.*)$", re.M)
_ARGV = re.compile(r"^#\s*argv:[ \t]*(.*)$", re.M)
_FIX_OUTCOME = re.compile(r"^#\s*(safe-fix|unsafe-fix):\s*(same|differs|none)\s*$", re.M)


@dataclass(frozen=True)
class Expectation:
    outcome: str  # "error", "misbehaves", "ok"
    exception: str = ""
    message: str = ""


def has_expectation(source: str) -> bool:
    return _HEADER.search(source) is not None


def expectation(source: str) -> Expectation:
    m = _HEADER.search(source)
    if m is None:
        raise ValueError("fixture has no `# expect-...` header")
    kind, rest = m.group(1), m.group(2).strip()
    if kind != "error":
        return Expectation(kind)
    exc, _, msg = rest.partition(":")
    return Expectation("error", exc.strip(), msg.strip())


def expected_findings(source: str) -> Counter:
    """(line, code) pairs marked in trailing comments."""
    marks: Counter = Counter()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and not tok.line.lstrip().startswith("#"):
            for code in _CODE.findall(tok.string):
                marks[(tok.start[0], code)] += 1
    return marks


def actual_findings(source: str, path: str = "fixture.py", settings: Settings | None = None) -> Counter:
    """(line, code) of the findings in this file itself (not in the modules it calls)."""
    diagnostics, _, _ = check_text(source, path, settings or Settings())
    return Counter((d.line, d.code) for d in diagnostics if d.path == path)


def findings_elsewhere(source: str, path: str, settings: Settings | None = None) -> dict[str, Counter]:
    """Findings that checking this file reports inside other modules it calls, by file."""
    diagnostics, _, _ = check_text(source, path, settings or Settings())
    out: dict[str, Counter] = {}
    for d in diagnostics:
        if d.path != path:
            out.setdefault(os.path.normpath(d.path), Counter())[(d.line, d.code)] += 1
    return out


def command_line(path: str) -> tuple[str, ...]:
    """The words a fixture's `# argv:` line gives after `python path` (none without one)."""
    with open(path, encoding="utf-8") as fh:
        m = _ARGV.search(fh.read())
    return tuple(shlex.split(m.group(1))) if m else ()


def run_script(path: str, timeout: float = 240, fresh: bool = False) -> RunResult:
    """Run a script as `python path ARGS` would (ARGS from its `# argv:` line), in a child of
    an interpreter that imported torch once (sparselint/scriptrunner.py), or with `fresh` in a
    new interpreter."""
    env = _fixture_env()
    if fresh:
        env["SPARSELINT_FORK_RUNNER"] = "0"
    return run_python(path, env, timeout, args=command_line(path))


def _fixture_env() -> dict:
    return dict(os.environ, PYTHONWARNINGS="ignore", PYTHONHASHSEED="0")


def runtime_unseen(source: str) -> dict[str, str]:
    """The `# runtime-unseen: SPLnnn: why` lines of a fixture: code -> why the run cannot see it."""
    return dict(_RUNTIME_UNSEEN.findall(source))


def run_script_under_checker(path: str, report_path: str, timeout: float = 240) -> RunResult:
    """`run_script` under the run-time checker, its report saved to `report_path`."""
    return run_python(path, _fixture_env(), timeout, runtime_report=report_path, args=command_line(path))


def runtime_contract_problems(marks: dict[str, Counter], unseen: dict[str, str], findings) -> list[str]:
    """What breaks the run-time contract: `marks` maps each file to its (line, code) marks,
    `unseen` the codes the fixture says the run cannot see, `findings` the run's Diagnostics.
    A finding matches a mark of its code in its file at its line or at one of its evidence
    lines (evidence in another file counts in that file)."""
    problems = []
    marks = {os.path.normpath(k): v for k, v in marks.items()}
    spans = {path: _statement_ends(path) for path in marks}

    def places(d):
        yield os.path.normpath(d.path), d.line
        for e in d.evidence:
            yield os.path.normpath(e.path or d.path), e.line

    def marked(path, line, code):
        # a mark on the first line of a statement over several lines covers all of them: the
        # run places a method call on the line of its name, the static check where it starts
        if (line, code) in marks.get(path, ()):
            return line
        return next((first for (first, c) in marks.get(path, ())
                     if c == code and first < line <= spans[path].get(first, 0)), None)
    matched = set()
    for d in findings:
        hit = [(path, at) for path, line in places(d) if (at := marked(path, line, d.code)) is not None]
        if not hit:
            problems.append(f"unmarked run-time finding {d.code} at {d.path}:{d.line}: {d.message}")
        matched.update((path, line, d.code) for path, line in hit)
    missing = Counter()
    for path, found in marks.items():
        for (line, code) in found:
            if (path, line, code) not in matched:
                missing[code] += 1
                if code not in unseen:
                    problems.append(f"{code} marked at {path}:{line} not seen by the run")
    for code in unseen:
        if not missing[code]:
            problems.append(f"stale `# runtime-unseen: {code}`: the run sees every {code} mark")
    return problems


def _statement_ends(path: str) -> dict[int, int]:
    """The first line of each simple statement of a file that spans several, with its last."""
    import ast
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    compound = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
                ast.AsyncFunctionDef, ast.ClassDef, ast.Match, getattr(ast, "TryStar", ast.Try))
    return {n.lineno: n.end_lineno for n in ast.walk(tree)
            if isinstance(n, ast.stmt) and not isinstance(n, compound) and n.end_lineno and n.end_lineno > n.lineno}


def fix_outcomes(source: str) -> dict[str, str]:
    """The `# safe-fix:` / `# unsafe-fix:` lines of a fixture: what its fixed program computes."""
    return dict(_FIX_OUTCOME.findall(source))


_NOTEBOOK_RUNNER = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
with open(sys.argv[1], encoding="utf-8") as fh:
    cells = [c for c in json.load(fh)["cells"] if c.get("cell_type") == "code"]
for cell in cells:
    src = cell["source"]
    result = shell.run_cell("".join(src) if isinstance(src, list) else src)
    if not result.success:
        error = result.error_in_exec or result.error_before_exec
        sys.stderr.write(f"{type(error).__name__}: {error}\\n")
        sys.exit(1)
"""


def run_notebook(path: str, timeout: float = 240) -> RunResult:
    """Run a notebook's code cells in order in one IPython shell, as a kernel does: a cell's
    last expression is displayed (`Out[n]: ...` on stdout); the first error ends the run."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", PYTHONHASHSEED="0")
    path = os.path.abspath(path)
    p = subprocess.run([sys.executable, "-c", _NOTEBOOK_RUNNER, path], capture_output=True, text=True, env=env,
                       timeout=timeout, cwd=os.path.dirname(path))
    return RunResult(p.returncode, p.stdout, p.stderr)


def run_expecting(path: str, exp: Expectation, attempts: int = 5, fresh_attempts: int = 3) -> RunResult:
    """Run a fixture; one expected to crash runs again (up to `attempts` times) when it did
    not: an out-of-bounds write corrupts memory, and whether that kills the process at
    once depends on the allocator's state. A child of the script server inherits the heap of
    a server that has served hundreds of scripts, so the last `fresh_attempts` are new
    interpreters, as `python path` is (`writeups/A1_fixed.py` dies in about 9 of 10 of
    those, and once in a full suite got through three attempts alive)."""
    run = run_script(path)
    for attempt in range(1, attempts):
        if exp.outcome != "crash" or run.returncode < 0:
            break
        run = run_script(path, fresh=attempt >= attempts - fresh_attempts)
    return run


def outcome_problem(exp: Expectation, run: RunResult) -> str | None:
    """None when the run matches the expectation, else what went wrong."""
    if exp.outcome == "ok":
        if run.returncode != 0:
            return f"expected a clean run, got rc={run.returncode}: {run.final_exception()}"
        if "MISBEHAVES" in run.stdout:
            return "expected a clean run, but it printed MISBEHAVES"
        return None
    if exp.outcome == "crash":
        if run.returncode >= 0:
            return f"expected the process to die from a signal, got rc={run.returncode}: {run.final_exception()}"
        return None
    if exp.outcome == "misbehaves":
        if run.returncode != 0 or not re.search(r"^MISBEHAVES", run.stdout, re.M):
            return f"expected rc=0 and a MISBEHAVES line, got rc={run.returncode}: {run.final_exception()}"
        return None
    pattern = re.compile(r"^(?:[\w.]+\.)?" + re.escape(exp.exception) + r": " + re.escape(exp.message), re.M)
    if run.returncode == 0 or not pattern.search(run.stderr):
        return f"expected {exp.exception}: {exp.message!r}, got rc={run.returncode}: {run.final_exception()}"
    return None
