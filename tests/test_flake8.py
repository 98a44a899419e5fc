"""`flake8 --select SPL` reports what the CLI reports, at the same lines and columns."""
import os
import re
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
