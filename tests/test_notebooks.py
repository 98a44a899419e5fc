"""Notebooks: checked cell by cell, findings at (cell, line), fixes written back without
touching outputs or metadata."""
import json

NB = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Degree of a graph\n"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["setup"]},
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["ok\n"]}],
         "source": ["import torch\n", "edges = torch.tensor([[0, 1], [1, 0]])\n",
                    "adj = torch.sparse_coo_tensor(edges, torch.ones(2), (2, 2))"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
         "source": ["%matplotlib inline\n", "print(adj.values())"]},
        {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [],
         "source": ["degree = adj.values().sum()\n", "first = adj.indices()[0]  # noqa: SPL001"]},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def write(tmp_path):
    path = tmp_path / "degree.ipynb"
    path.write_text(json.dumps(NB, indent=1) + "\n")
    return path


def test_findings_point_at_cells(cli, tmp_path):
    path = write(tmp_path)
    r = cli("--no-cache", str(path))
    assert r.returncode == 1
    lines = [l for l in r.stdout.splitlines() if "SPL" in l]
    assert lines == [f"{path}:cell 4:1:10: SPL001 [*] `adj.values()` on an uncoalesced sparse tensor raises "
                     "`RuntimeError: Cannot get values on an uncoalesced tensor` at this line"]
    data = json.loads(cli("--no-cache", "--output-format", "json", str(path)).stdout)
    assert (data[0]["cell"], data[0]["line"], data[0]["column"]) == (4, 1, 10)


def test_fix_rewrites_only_the_code(cli, tmp_path):
    path = write(tmp_path)
    r = cli("--fix", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    fixed = json.loads(path.read_text())
    assert fixed["cells"][3]["source"] == ["degree = adj.coalesce().values().sum()\n",
                                           "first = adj.indices()[0]  # noqa: SPL001"]
    for before, after in zip(NB["cells"], fixed["cells"]):
        assert {k: v for k, v in before.items() if k != "source"} == {k: v for k, v in after.items() if k != "source"}
    assert fixed["cells"][:3] == NB["cells"][:3]
    assert fixed["metadata"] == NB["metadata"]


def test_a_broken_notebook_is_one_diagnostic(cli, tmp_path):
    (tmp_path / "broken.ipynb").write_text("{not json")
    r = cli("--no-cache", str(tmp_path))
    assert r.returncode == 1 and "SPL901" in r.stdout and "Traceback" not in r.stderr
