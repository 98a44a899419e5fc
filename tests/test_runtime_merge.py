"""`sparselint check --runtime-report`: a real run's report laid over the static findings, in
every format, from the flag and from `[tool.sparselint]`, through the cache, without torch."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli

# SPL001 at line 7 (the static pass sees it: confirmed), at line 12 on a tensor built through
# `eval` (only the run sees it), and at line 16 (the static pass sees it; the run never gets there)
PROGRAM = """import sys
import torch

edges = torch.tensor([[0, 1], [1, 0]])
adj = torch.sparse_coo_tensor(edges, torch.ones(2), (2, 2))
try:
    adj.values()
except RuntimeError:
    print("caught")
hidden = eval("torch.sparse_coo_tensor")(edges, torch.ones(2), (2, 2))
try:
    hidden.values()
except RuntimeError:
    print("caught hidden")
if len(sys.argv) > 5:
    adj.indices()
"""
CONFIRMED, RUN_ONLY, NOT_SEEN = 7, 12, 16


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """A folder with the program and the report of a real run of it (torch runs once here)."""
    pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("merge")
    (folder / "prog.py").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-m", "sparselint.runtime", "--report", "run.json", "prog.py"], cwd=folder,
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 1 and "caught hidden" in r.stdout, r.stderr
    return folder


@pytest.fixture
def project(ran, tmp_path):
    shutil.copy(ran / "prog.py", tmp_path / "prog.py")
    shutil.copy(ran / "run.json", tmp_path / "run.json")
    # the report names the run's files by absolute path: point it at this copy
    data = json.loads((tmp_path / "run.json").read_text())
    for f in data["findings"]:
        f["path"] = str(tmp_path / "prog.py")
    (tmp_path / "run.json").write_text(json.dumps(data))
    return tmp_path


def check(project, *args):
    return run_cli("check", "--no-cache", *args, "prog.py", cwd=project)


pytestmark = pytest.mark.torch


def test_concise_marks_confirmed_and_lists_what_only_the_run_saw(project):
    r = check(project, "--runtime-report", "run.json")
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    by_line = {int(l.split(":")[1]): l for l in lines if l.startswith("prog.py:")}
    assert sorted(by_line) == [CONFIRMED, RUN_ONLY, NOT_SEEN]
    assert by_line[CONFIRMED].endswith("[confirmed at run time]")
    assert by_line[RUN_ONLY].endswith("[seen at run time only]") and " SPL001 " in by_line[RUN_ONLY]
    assert "run time" not in by_line[NOT_SEEN]
    assert "Found 3 findings." in r.stdout
    assert "Run-time report run.json: 1 of 2 findings confirmed at run time, 1 seen at run time only." in r.stdout
    # without the report, the static findings alone, unmarked
    plain = check(project)
    assert "run time" not in plain.stdout and "Found 2 findings." in plain.stdout


def test_machine_formats_carry_the_mark(project):
    rows = json.loads(check(project, "--runtime-report", "run.json", "--output-format", "json").stdout)
    assert {r["line"]: r["runtime"] for r in rows} == {CONFIRMED: "confirmed", RUN_ONLY: "run-only",
                                                        NOT_SEEN: "not-seen"}
    assert all("runtime" not in r for r in json.loads(check(project, "--output-format", "json").stdout))
    sarif = json.loads(check(project, "--runtime-report", "run.json", "--output-format", "sarif").stdout)
    results = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in sarif["runs"][0]["results"]}
    assert results[CONFIRMED]["properties"] == {"runtime": "confirmed"}
    assert results[CONFIRMED]["message"]["text"].endswith("[confirmed at run time]")
    assert results[RUN_ONLY]["properties"] == {"runtime": "run-only"}
    github = check(project, "--runtime-report", "run.json", "--output-format", "github").stdout.splitlines()
    assert [l.endswith("[confirmed at run time]") for l in github] == [True, False, False]
    assert any("line=12," in l and l.endswith("[seen at run time only]") for l in github)


def test_run_only_findings_follow_selection_and_noqa(project):
    r = check(project, "--runtime-report", "run.json", "--per-file-ignores", "prog.py:SPL001")
    assert r.returncode == 0 and "[seen at run time only]" not in r.stdout, r.stdout
    text = (project / "prog.py").read_text().replace("    hidden.values()\n", "    hidden.values()  # noqa: SPL001\n")
    (project / "prog.py").write_text(text)
    r = check(project, "--runtime-report", "run.json")
    assert "[seen at run time only]" not in r.stdout and "[confirmed at run time]" in r.stdout
    # a file not checked never gets the run's findings
    (project / "other.py").write_text("x = 1\n")
    r = run_cli("check", "--no-cache", "--runtime-report", "run.json", "other.py", cwd=project)
    assert r.returncode == 0 and "All checks passed!" in r.stdout


def test_setting_in_pyproject_is_relative_to_its_folder(project):
    (project / "reports").mkdir()
    shutil.move(project / "run.json", project / "reports" / "run.json")
    (project / "pyproject.toml").write_text("[tool.sparselint]\nruntime-report = 'reports/run.json'\n")
    (project / "sub").mkdir()
    r = run_cli("check", "--no-cache", "../prog.py", cwd=project / "sub")
    assert "[confirmed at run time]" in r.stdout, r.stdout + r.stderr
    r = run_cli("config", "runtime-report")
    assert r.returncode == 0 and "sparselint run --report" in r.stdout


def test_a_file_edited_after_the_run_is_warned_of(project):
    r = check(project, "--runtime-report", "run.json")
    assert "changed after the run-time report" not in r.stderr
    later = os.stat(project / "run.json").st_mtime + 10
    os.utime(project / "prog.py", (later, later))
    r = check(project, "--runtime-report", "run.json")
    assert "sparselint: warning: prog.py changed after the run-time report run.json was written" in r.stderr


def test_a_report_of_another_checkout_is_warned_of(project):
    data = json.loads((project / "run.json").read_text())
    for f in data["findings"]:
        f["path"] = "/elsewhere/checkout/prog.py"
    (project / "other.json").write_text(json.dumps(data))
    r = check(project, "--runtime-report", "other.json")
    assert "none of the 1 files the run-time report other.json names exists here" in r.stderr
    assert "[confirmed at run time]" not in r.stdout
    assert "names exists here" not in check(project, "--runtime-report", "run.json").stderr


def test_missing_or_invalid_report_is_a_usage_error(project):
    r = check(project, "--runtime-report", "nothere.json")
    assert r.returncode == 2 and "cannot read run-time report nothere.json" in r.stderr
    (project / "bad.json").write_text("[1, 2]")
    r = check(project, "--runtime-report", "bad.json")
    assert r.returncode == 2 and "bad.json is not a run-time report" in r.stderr
    (project / "broken.json").write_text("{")
    r = check(project, "--runtime-report", "broken.json")
    assert r.returncode == 2 and "not JSON" in r.stderr


def test_cache_never_serves_stale_marks(project):
    cache = str(project / "cache")
    first = run_cli("check", "--cache-dir", cache, "--runtime-report", "run.json", "prog.py", cwd=project)
    assert "[confirmed at run time]" in first.stdout
    data = json.loads((project / "run.json").read_text())
    data["findings"] = []  # a later run that saw nothing
    (project / "run.json").write_text(json.dumps(data))
    again = run_cli("check", "--cache-dir", cache, "--runtime-report", "run.json", "prog.py", cwd=project)
    assert "[confirmed at run time]" not in again.stdout
    assert "0 of 2 findings confirmed at run time, 0 seen at run time only" in again.stdout


def test_check_with_a_report_never_imports_torch(project):
    code = ("import sys; sys.modules['torch'] = None\nfrom sparselint.cli import main\n"
            "sys.argv = ['sparselint', 'check', '--no-cache', '--runtime-report', 'run.json', 'prog.py']\nmain()\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 1 and "[confirmed at run time]" in r.stdout, r.stderr


SPREAD = """import torch

edges = torch.tensor([[0, 1, 0], [1, 0, 1]])
adj = torch.sparse_coo_tensor(edges, torch.ones(3), (2, 2))
try:
    (adj  # the adjacency
        .values())
except RuntimeError:
    print("caught")
"""


def test_a_call_spread_over_lines_is_confirmed_where_the_run_places_it(tmp_path):
    """The run places `.values()` on the line of its name (7), the static finding where the call
    starts (6): one finding, confirmed, none seen at run time only."""
    (tmp_path / "prog.py").write_text(SPREAD)
    r = subprocess.run([sys.executable, "-m", "sparselint.runtime", "--report", "run.json", "prog.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert "caught" in r.stdout, r.stderr
    assert [f["line"] for f in json.loads((tmp_path / "run.json").read_text())["findings"]] == [7]
    merged = check(tmp_path, "--runtime-report", "run.json")
    lines = [l for l in merged.stdout.splitlines() if l.startswith("prog.py:")]
    assert len(lines) == 1 and lines[0].startswith("prog.py:6:") and lines[0].endswith("[confirmed at run time]"), \
        merged.stdout
