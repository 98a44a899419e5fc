"""`pytest --sparselint`: real pytest sessions of real test files, under the plugin."""
import json
import os
import subprocess
import sys
from importlib import metadata

import pytest

from conftest import ROOT

# the plugin loaded by module, whether or not this environment's metadata has the entry point
PLUGIN = ["-p", "no:sparselint", "-p", "sparselint.runtime.pytest_plugin"]

TESTS = """import torch


def build():
    edges = torch.tensor([[0, 1], [1, 0]])
    return torch.sparse_coo_tensor(edges, torch.ones(2), (2, 2))


def test_degree():
    adj = build()
    try:
        adj.values()
    except RuntimeError:
        pass


def test_dense():
    assert torch.ones(2).sum() == 2
"""
NO_TORCH = "import sys\n\n\ndef test_torch_is_not_imported():\n    assert 'torch' not in sys.modules\n"


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # its own rootdir, not this project's
    (tmp_path / "test_graph.py").write_text(TESTS)
    (tmp_path / "test_plain.py").write_text(NO_TORCH)
    return tmp_path


def pytest_run(folder, *args, plugin=PLUGIN):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-W", "ignore::UserWarning",
                           *plugin, *args], cwd=folder, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def test_without_the_option_the_plugin_is_inert_and_never_imports_torch(suite):
    r = pytest_run(suite, "test_plain.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "sparselint" not in r.stdout
    assert "--sparselint" in pytest_run(suite, "--help").stdout
    # the same test, under the checker, sees torch: the check above can fail
    pytest.importorskip("torch")
    assert pytest_run(suite, "--sparselint", "test_plain.py").returncode == 1


@pytest.mark.torch
def test_findings_are_summarised_and_saved_without_failing_the_session(suite):
    pytest.importorskip("torch")
    r = pytest_run(suite, "--sparselint-report", "run.json", "test_graph.py")
    assert r.returncode == 0, r.stdout + r.stderr
    summary = r.stdout[r.stdout.index("sparselint run-time check"):]
    assert "test_graph.py:12:9: SPL001 `.values()` on an uncoalesced sparse COO tensor raises" in summary
    assert "found 1 hazard (1 raised)." in summary
    report = json.loads((suite / "run.json").read_text())
    assert report["command"][0] == "pytest"
    [row] = report["findings"]
    assert (row["code"], row["path"], row["line"]) == ("SPL001", str(suite / "test_graph.py"), 12)
    assert [e["line"] for e in row["evidence"]] == [6]  # built in the helper
    # the report confirms the static finding
    r = subprocess.run([sys.executable, "-m", "sparselint", "check", "--no-cache", "--runtime-report", "run.json",
                        "test_graph.py"], cwd=suite, capture_output=True, text=True, timeout=300)
    assert "test_graph.py:12:9: SPL001" in r.stdout and "[confirmed at run time]" in r.stdout, r.stdout


@pytest.mark.torch
def test_strict_fails_a_passing_session_with_findings(suite):
    pytest.importorskip("torch")
    r = pytest_run(suite, "--sparselint-strict", "test_graph.py")
    assert r.returncode == 1 and "2 passed" in r.stdout
    assert "--sparselint-strict: the session fails" in r.stdout
    r = pytest_run(suite, "--sparselint-strict", "test_graph.py::test_dense")
    assert r.returncode == 0 and "no hazards seen" in r.stdout


FAILING = """import torch


def test_values():
    edges = torch.tensor([[0, 1], [1, 0]])
    adj = torch.sparse_coo_tensor(edges, torch.ones(2), (2, 2))
    adj.values()
"""


@pytest.mark.torch
def test_a_test_that_hits_a_raising_hazard_fails_as_without_the_plugin(suite):
    pytest.importorskip("torch")
    (suite / "test_fail.py").write_text(FAILING)
    r = pytest_run(suite, "--sparselint", "test_fail.py")
    assert r.returncode == 1 and "1 failed" in r.stdout
    failure = r.stdout[:r.stdout.index("sparselint run-time check")]
    assert "test_fail.py:7: RuntimeError" in failure
    assert "sparselint" not in failure  # the checker's frames are not the test's traceback
    assert "test_fail.py:7:5: SPL001" in r.stdout


@pytest.mark.torch
def test_xdist_workers_send_their_findings_to_the_controller(suite):
    pytest.importorskip("torch")
    pytest.importorskip("xdist")
    r = pytest_run(suite, "-n", "2", "--sparselint-report", "out/run.json", "test_graph.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("test_graph.py:12:9: SPL001") == 1
    assert [f["line"] for f in json.loads((suite / "out" / "run.json").read_text())["findings"]] == [12]


def test_entry_point_is_declared_and_loads_the_plugin(suite):
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        declared = tomllib.load(f)["project"]["entry-points"]["pytest11"]
    assert declared == {"sparselint": "sparselint.runtime.pytest_plugin"}
    installed = [ep for ep in metadata.entry_points(group="pytest11") if ep.name == "sparselint"]
    if not installed:
        pytest.skip("this environment's sparselint metadata predates the entry point (pip install -e .)")
    pytest.importorskip("torch")
    r = pytest_run(suite, "--sparselint", "test_plain.py", plugin=[])
    assert r.returncode == 1 and "sparselint run-time check" in r.stdout
