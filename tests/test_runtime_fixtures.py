"""The fixture contract at run time: every runnable fixture, run under the run-time checker,
reports each of its `# SPLnnn` marks and nothing else, or says in a `# runtime-unseen:` line
why the run cannot see a mark (sparselint/testing.py).

A finding matches a mark of its code when the mark's line is the finding's line or one of
its evidence lines: a static rule marks the root cause (the optimizer's construction for
SPL401, the embedding with `sparse=True`), the run sees the symptom (`step()`) and names the
root cause as evidence. The merge of static and run findings matches the same way.

Each fixture runs in a child forked from one server that imported torch once
(sparselint/scriptrunner.py); a project's entry scripts run one after the other and the
project's marks, in all its modules, are matched against what they saw together."""
import os
from collections import Counter

import pytest

from sparselint.runtime import report
from sparselint.testing import expected_findings, has_expectation, run_script_under_checker, runtime_contract_problems, \
    runtime_unseen

from conftest import FIXTURES, all_fixtures

pytestmark = pytest.mark.torch

_ALL = all_fixtures()


def _read(rel):
    with open(os.path.join(FIXTURES, rel), encoding="utf-8") as fh:
        return fh.read()


def _cases():
    """(id, entry scripts, files whose marks count): one case per fixture, one per project."""
    cases, projects = [], {}
    for rel in _ALL:
        parts = rel.split(os.sep)
        if parts[0] == "projects":
            projects.setdefault(parts[1], []).append(rel)
        elif has_expectation(_read(rel)):
            cases.append((rel, [rel], [rel]))
    for name, files in sorted(projects.items()):
        entries = [f for f in files if has_expectation(_read(f))]
        if entries:
            cases.append((os.path.join("projects", name), entries, files))
    return cases


CASES = _cases()


@pytest.mark.parametrize("entries,files", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_run_reports_the_marks(entries, files, tmp_path):
    findings, unseen = [], {}
    for i, rel in enumerate(entries):
        out = tmp_path / f"report{i}.json"
        run = run_script_under_checker(os.path.join(FIXTURES, rel), str(out))
        assert out.exists(), f"{rel}: no run-time report (rc={run.returncode}): {run.stderr[-800:]}"
        assert "sparselint runtime: check" not in run.stderr, run.stderr[-800:]
        findings += report.load(str(out))
        unseen.update(runtime_unseen(_read(rel)))
    marks = {os.path.join(FIXTURES, rel): expected_findings(_read(rel)) for rel in files}
    problems = runtime_contract_problems(marks, unseen, findings)
    assert not problems, "\n".join(problems)


def test_there_are_cases_of_every_kind():
    ids = [c[0] for c in CASES]
    assert any(i.startswith("projects") for i in ids) and any(i.endswith("_good.py") for i in ids)
    assert sum(1 for c in CASES for rel in c[2] if any(expected_findings(_read(rel)).values())) > 100


def _matrix_sample():
    """Every tenth cell of the conformance matrix, and every cell whose hazard runs in code
    autograd calls back (a custom Function, a hook): the shapes of the language the run must
    follow as the static pass does. The whole matrix (774 cells) takes about 25 minutes on two
    loaded cores; run once, every bad program was confirmed at its report line (the last one,
    an error in a custom backward, once those were told apart) and no twin reported anything."""
    from matrix.cells import all_cells
    cells = all_cells()
    return [c for i, c in enumerate(cells) if i % 10 == 0 or "autograd_function" in c.id or "hook" in c.id]


MATRIX = _matrix_sample()


def _write(program, folder):
    for name, text in program.files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return os.path.join(folder, "main.py")


@pytest.mark.parametrize("cell", MATRIX, ids=[c.id for c in MATRIX])
def test_matrix_cell_is_seen_and_its_twin_is_silent(cell, tmp_path):
    code = cell.id.split("-")[0]
    for side, program in (("bad", cell.bad), ("twin", cell.twin)):
        folder = tmp_path / side
        out = folder / "run.json"
        run_script_under_checker(_write(program, str(folder)), str(out))
        findings = report.load(str(out))
        marks = {}
        if side == "bad":
            marks = {str(folder / program.report_file): Counter({(program.report_line, code): 1})}
        problems = runtime_contract_problems(marks, {}, findings)
        assert not problems, f"{side}: " + "\n".join(problems)
