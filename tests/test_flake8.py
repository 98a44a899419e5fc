"""`flake8 --select SPL` reports what the CLI reports, at the same lines and columns."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, run_cli

pytest.importorskip("flake8")

FILES = [os.path.join(FIXTURES, "SPL001", "gcn_degree_bad.py"), os.path.join(FIXTURES, "SPL401", "recommender_adam_bad.py"),
         os.path.join(FIXTURES, "SPL603", "oob_input_bad.py"), os.path.join(FIXTURES, "works", "values_data_write.py")]


def positions(text):
    return sorted(re.findall(r"^.*?:(\d+):(\d+): (SPL\d{3})", text, re.M))


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_flake8_matches_the_cli(path):
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "SPL", path], capture_output=True, text=True)
    cli = run_cli("--no-cache", path)
    assert positions(flake8.stdout) == positions(cli.stdout)
    assert flake8.returncode == (1 if positions(cli.stdout) else 0), flake8.stderr


def test_flake8_honours_noqa(tmp_path):
    src = "import torch\nadj = torch.sparse_coo_tensor(e, v, (2, 2))\nprint(adj.values())  # noqa: SPL001\n"
    (tmp_path / "m.py").write_text(src)
    r = subprocess.run([sys.executable, "-m", "flake8", "--select", "SPL", str(tmp_path / "m.py")], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == ""


def test_a_finding_in_a_called_module_is_reported_at_the_call(tmp_path):
    """graph_utils.py fails only with train.py's facts (flake8 on it alone is silent, as is
    the CLI), so flake8 on train.py reports it at a line of train.py that leads there, naming
    the line where it fails, as the CLI reports it at that line."""
    project = tmp_path / "gcn"
    shutil.copytree(os.path.join(FIXTURES, "projects", "gcn_split_bad"), project)
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "SPL", "."], cwd=project,
                            capture_output=True, text=True)
    assert flake8.returncode == 1, flake8.stderr
    cli = run_cli("--no-cache", ".", cwd=project)
    assert positions(cli.stdout) == [("11", "16", "SPL001")] and cli.stdout.startswith("graph_utils.py:11:16:")
    reported = re.findall(r"^(.*?):(\d+):(\d+): (SPL\d{3}) (.*)$", flake8.stdout, re.M)
    assert len(reported) == 1, flake8.stdout
    path, line, column, code, message = reported[0]
    train = (project / "train.py").read_text().splitlines()
    assert os.path.normpath(path) == "train.py" and code == "SPL001"
    assert "gcn_norm(adj" in train[int(line) - 1]
    assert message.startswith("in graph_utils.py:11:16: `adj.indices()`")
    alone = subprocess.run([sys.executable, "-m", "flake8", "--select", "SPL", "graph_utils.py"], cwd=project,
                           capture_output=True, text=True)
    assert alone.returncode == 0 and alone.stdout == ""


def test_flake8_noqa_at_the_call_silences_a_finding_reached_through_it(tmp_path):
    project = tmp_path / "gcn"
    shutil.copytree(os.path.join(FIXTURES, "projects", "gcn_split_bad"), project)
    train = project / "train.py"
    train.write_text(train.read_text().replace("adj = gcn_norm(adj, 4)", "adj = gcn_norm(adj, 4)  # noqa: SPL001"))
    r = subprocess.run([sys.executable, "-m", "flake8", "--select", "SPL", "."], cwd=project, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr


def test_a_finding_set_off_by_the_backward_after_the_call_is_reported_at_the_call(tmp_path):
    """No fact of train.py reaches helpers.py here: the call is in evidence, and flake8
    reports there."""
    (tmp_path / "helpers.py").write_text("import torch\n\n\ndef build(i):\n"
                                         "    p = torch.ones(3, requires_grad=True)\n    w = p * 2\n"
                                         "    adj = torch.sparse_coo_tensor(i, w, (3, 3))\n    w /= w.sum()\n"
                                         "    return torch.sparse.sum(adj)\n")
    (tmp_path / "train.py").write_text("import torch\nfrom helpers import build\n\n"
                                       "loss = build([[0, 1, 2], [0, 1, 2]])\nloss.backward()\n")
    cli = run_cli("--no-cache", "--output-format", "full", "train.py", cwd=tmp_path)
    assert cli.stdout.startswith("helpers.py:8:5: SPL109") and ("train.py:4: `build([[0, 1, 2], [0, 1, 2]])` reaches "
                                                                   "`loss.backward()`") in cli.stdout
    r = subprocess.run([sys.executable, "-m", "flake8", "--select", "SPL", "."], cwd=tmp_path, capture_output=True, text=True)
    assert re.findall(r"^\./train\.py:4:8: SPL109 in helpers\.py:8:5: ", r.stdout, re.M), r.stdout + r.stderr
    assert len(r.stdout.splitlines()) == 1
