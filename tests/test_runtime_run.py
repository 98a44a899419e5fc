"""`python -m sparselint.runtime` and `sparselint run`: real programs run under the checker in
a real interpreter; what they print, the exit status, the report and the formats."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

# SPL001 twice: `.values()` caught by the program (line 9), `.indices()` uncaught (line 13)
HAZARD = """import sys
import torch

edges = torch.tensor([[0, 1], [1, 0]])
adj = torch.sparse_coo_tensor(edges, torch.ones(2), (2, 2))
print("degree", torch.sparse.sum(adj, 1).to_dense().tolist())
if "catch" in sys.argv:
    try:
        adj.values()
    except RuntimeError:
        print("caught")
else:
    print(adj.indices().max())
"""
SHOW = """import sys
import helper
print("argv", sys.argv[1:], "name", __name__, "path0", sys.path[0] == helper.HERE)
if "exit3" in sys.argv:
    sys.exit(3)
"""
HELPER = "import os\nHERE = os.path.dirname(os.path.abspath(__file__))\n"


def runtime(*args, cwd=None, env=None):
    full = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    return subprocess.run([sys.executable, "-m", "sparselint.runtime", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def programs(tmp_path):
    (tmp_path / "hazard.py").write_text(HAZARD)
    (tmp_path / "show.py").write_text(SHOW)
    (tmp_path / "helper.py").write_text(HELPER)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text("import sys\nprint('pkg main', sys.argv[1:], __name__)\n")
    return tmp_path


def test_script_runs_as_python_runs_it_and_its_stdout_stays_its_own(programs):
    r = runtime("../show.py", "a", "--flag", cwd=programs / "pkg")  # run from another folder
    # the script's folder is first on sys.path (helper imports), argv and __main__ as python's
    assert r.stdout == "argv ['a', '--flag'] name __main__ path0 True\n", r.stderr
    assert r.returncode == 0
    assert "no hazards seen" in r.stderr
    r = runtime(str(programs / "show.py"), "exit3")
    assert r.returncode == 3 and "argv ['exit3']" in r.stdout


def test_module_form_runs_the_package_main(programs):
    r = runtime("-m", "pkg", "x", "y", cwd=programs)
    assert r.stdout == "pkg main ['x', 'y'] __main__\n", r.stderr
    assert r.returncode == 0
    r = runtime("-m", "no_such_module", cwd=programs)
    assert r.returncode == 2 and "No module named no_such_module" in r.stderr


def test_raising_hazard_keeps_torchs_traceback_and_the_finding_follows(programs):
    r = runtime("--report", "out/run.json", "hazard.py", cwd=programs)  # its folder is made
    assert r.returncode == 1  # the program failed: python's status
    assert r.stdout == "degree [1.0, 1.0]\n"
    err = r.stderr
    tb = err.index("Traceback (most recent call last):")
    assert 'hazard.py", line 13, in <module>' in err
    assert "RuntimeError: Cannot get indices on an uncoalesced tensor" in err
    # neither runpy nor the checker in the program's traceback
    assert "runpy" not in err[tb:] and "sparselint" not in err[tb:err.index("RuntimeError: Cannot")]
    assert err.index("hazard.py:13:11: SPL001 `.indices()`") > tb
    report = json.loads((programs / "out" / "run.json").read_text())
    assert report["command"] == ["python", "hazard.py"]
    [row] = report["findings"]
    assert (row["code"], row["path"], row["line"], row["raised"]) == \
        ("SPL001", str(programs / "hazard.py"), 13, True)
    assert [e["line"] for e in row["evidence"]] == [5]


def test_a_run_that_dies_keeps_what_it_saw(programs):
    (programs / "dies.py").write_text(HAZARD.replace('print("caught")', 'print("caught", flush=True)')
                                      + "import os\nos._exit(7)\n")
    r = runtime("--report", "run.json", "dies.py", "catch", cwd=programs)
    assert r.returncode == 7 and "caught" in r.stdout
    assert [f["line"] for f in json.loads((programs / "run.json").read_text())["findings"]] == [9]


def test_a_program_that_changes_folder_keeps_the_report_and_paths_where_it_started(programs):
    (programs / "moves.py").write_text("import os\nos.chdir('pkg')\n" + HAZARD)
    r = runtime("--report", "run.json", "--output-format", "full", "moves.py", "catch", cwd=programs)
    assert r.returncode == 1 and (programs / "run.json").is_file()
    assert "moves.py:11:9: SPL001" in r.stderr and "  11 |         adj.values()" in r.stderr, r.stderr


def test_exit_status_for_findings_and_exit_zero(programs):
    r = runtime("hazard.py", "catch", cwd=programs)
    assert "caught" in r.stdout
    assert r.returncode == 1 and "hazard.py:9:9: SPL001" in r.stderr and "found 1 hazard" in r.stderr
    assert runtime("--exit-zero", "hazard.py", "catch", cwd=programs).returncode == 0
    # --exit-zero never hides the program's own failure
    assert runtime("--exit-zero", "hazard.py", cwd=programs).returncode == 1


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "full"])
def test_findings_in_the_linters_formats(programs, fmt):
    r = runtime("--output-format", fmt, "-o", "out.txt", "hazard.py", "catch", cwd=programs)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "sparselint: error" not in r.stderr, r.stderr
    text = (programs / "out.txt").read_text()
    if fmt == "json":
        [row] = json.loads(text)
        assert (row["code"], row["line"], row["count"], row["raised"]) == ("SPL001", 9, 1, True)
    elif fmt == "sarif":
        [res] = json.loads(text)["runs"][0]["results"]
        assert res["ruleId"] == "SPL001" and res["locations"][0]["physicalLocation"]["region"]["startLine"] == 9
    elif fmt == "github":
        assert text.startswith("::error title=sparselint (SPL001),file=hazard.py,line=9,col=9")
    else:
        assert "   9 |         adj.values()" in text and "= because: line 5: " in text


def test_format_comes_from_the_configuration_unless_given(programs):
    (programs / "pyproject.toml").write_text("[tool.sparselint]\noutput-format = 'json'\n")
    r = run_cli("run", "-o", "out.json", "--", "python", "hazard.py", "catch", cwd=programs)
    assert r.returncode == 1
    assert [row["line"] for row in json.loads((programs / "out.json").read_text())] == [9]
    r = runtime("--output-format", "concise", "hazard.py", "catch", cwd=programs)
    assert "hazard.py:9:9: SPL001" in r.stderr


def test_without_torch_the_error_names_the_extra(programs):
    code = ("import sys; sys.modules['torch'] = None\n"
            "from sparselint.runtime.__main__ import main\nsys.exit(main(['show.py']))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=programs, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2
    assert "pip install 'sparselint[runtime]'" in r.stderr and r.stdout == ""
    code = ("import sys; sys.modules['torch'] = None\nfrom sparselint.cli import main\n"
            "sys.argv = ['sparselint', 'run', '--', 'python', 'show.py']\nmain()\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=programs, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "sparselint: error: the run-time checker needs torch: pip install" in r.stderr


@pytest.mark.parametrize("words", [["python", "hazard.py", "catch"], ["hazard.py", "catch"],
                                   [os.path.basename(sys.executable), "-m", "hazard", "catch"]])
def test_sparselint_run_takes_the_command_as_typed(programs, words):
    r = run_cli("run", "--report", "r.json", "--", *words, cwd=programs)
    assert r.returncode == 1, r.stderr
    assert "caught" in r.stdout and "hazard.py:9:9: SPL001" in r.stderr
    report = json.loads((programs / "r.json").read_text())
    assert [f["line"] for f in report["findings"]] == [9]


def test_sparselint_run_usage_errors(programs):
    r = run_cli("run", "--", "python", "missing.py", cwd=programs)
    assert r.returncode == 2 and "can't open file 'missing.py'" in r.stderr
    r = run_cli("run", "--", "python", "-X", "dev", "show.py", cwd=programs)
    assert r.returncode == 2 and "`-X` is not supported" in r.stderr
    r = run_cli("run", "--exit-zero", "--", "show.py", "exit3", cwd=programs)
    assert r.returncode == 3


def test_torchs_own_warnings_are_shown_at_the_users_line(programs):
    # torch warns from C++ at the innermost Python frame, which under the checker is its torch
    # function mode: the warning is shown at the line of the program that made the call
    r = runtime("hazard.py", "catch", cwd=programs, env={"PYTHONWARNINGS": "default"})
    plain = subprocess.run([sys.executable, "hazard.py", "catch"], cwd=programs, capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, PYTHONWARNINGS="default"))
    assert "Sparse invariant checks" in plain.stderr
    shown = [l for l in r.stderr.splitlines() if "UserWarning" in l]
    assert shown and all(l.startswith(str(programs / "hazard.py") + ":5: UserWarning") for l in shown), r.stderr
    assert "watch.py" not in r.stderr and "result = func(" not in r.stderr, r.stderr
