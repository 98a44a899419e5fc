"""Code outside the project: a class or function imported from an installed package (found
on the interpreter's `sys.path`, here through PYTHONPATH) is read from its source, and what
fails inside it is reported at the user's call. Real CLI runs on real files."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import run_cli

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = os.path.join(HERE, "..", "fixtures", "projects", "api_option_sparse_embeddings_bad", "reclib")

SCRIPT = """import torch
from reclib.model import Factorization

users = torch.randint(0, 20, (64,))
items = torch.randint(0, 30, (64,))
estimator = Factorization(sparse=True)
estimator.fit(users, items, torch.rand(64))
Factorization().fit(users, items, torch.rand(64))
"""


def _install(site):
    shutil.copytree(LIBRARY, site / "reclib")


def test_a_class_of_an_installed_package_is_followed_from_the_users_call(tmp_path):
    site, project = tmp_path / "site", tmp_path / "project"
    site.mkdir()
    project.mkdir()
    _install(site)
    (project / "train.py").write_text(SCRIPT)
    r = run_cli("--no-cache", "--output-format", "full", ".", cwd=project, env={"PYTHONPATH": str(site)})
    assert r.returncode == 1, r.stdout + r.stderr
    found = re.findall(r"^(\S+?):(\d+):\d+: (SPL\d+)", r.stdout, re.M)
    # at the user's call with the option turned on; the default estimator is dense
    assert found == [("train.py", "7", "SPL401")]
    model = os.path.join("site", "reclib", "model.py")
    assert re.search(rf"because: \S*{re.escape(model)}:\d+: inside the installed package, where it fails", r.stdout)
    # the package itself is not checked: nothing is reported in its files
    assert "reclib" + os.sep + "model.py:" not in r.stdout.split("because")[0]
    # the same script cannot follow a package the interpreter cannot find
    r = run_cli("--no-cache", "--output-format", "concise", ".", cwd=project)
    assert r.returncode == 0 and "All checks passed" in r.stdout


@pytest.mark.torch
def test_the_finding_is_the_real_error_under_torch(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _install(site)
    (tmp_path / "train.py").write_text(SCRIPT)
    r = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(site)}, timeout=300)
    assert r.returncode != 0 and "Adam does not support sparse gradients" in r.stderr


def test_a_project_module_shadows_an_installed_one(tmp_path):
    site, project = tmp_path / "site", tmp_path / "project"
    site.mkdir()
    project.mkdir()
    _install(site)
    # the project's own `reclib` (dense, SparseAdam only where sparse) is the one imported
    own = os.path.join(HERE, "..", "fixtures", "projects", "api_option_sparse_embeddings_good", "reclib")
    shutil.copytree(own, project / "reclib")
    (project / "train.py").write_text(SCRIPT)
    r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=project, env={"PYTHONPATH": str(site)})
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


def test_installing_a_package_changes_a_cached_result(tmp_path):
    site, project = tmp_path / "site", tmp_path / "project"
    site.mkdir()
    project.mkdir()
    (project / "train.py").write_text(SCRIPT)
    env = {"PYTHONPATH": str(site)}
    first = run_cli("--output-format", "concise", ".", cwd=project, env=env)
    assert first.returncode == 0, first.stdout
    _install(site)  # the search root gains an entry: what was cached no longer holds
    second = run_cli("--output-format", "concise", ".", cwd=project, env=env)
    assert second.returncode == 1 and "train.py:7:" in second.stdout, second.stdout


CONFIG_PACKAGE = '''
from dataclasses import dataclass

import torch


@dataclass
class Config:
    n: int = 2

    def __post_init__(self):
        self.adj = torch.sparse_coo_tensor(torch.tensor([[1, 0], [0, 1]]), torch.ones(2), (2, 2))
        self.weights = self.adj.values()
'''


def test_a_config_class_of_an_installed_package_as_an_annotation(tmp_path):
    site, project = tmp_path / "site", tmp_path / "project"
    (site / "cfgpkg").mkdir(parents=True)
    (site / "cfgpkg" / "__init__.py").write_text(CONFIG_PACKAGE)
    (project / "mypkg").mkdir(parents=True)
    (project / "mypkg" / "__init__.py").write_text("")
    (project / "mypkg" / "train.py").write_text(
        "from cfgpkg import Config\n\n\ndef train(cfg: Config, t, sparse=True):\n"
        "    if t.is_sparse:\n        return t.values()\n    return t\n")
    r = run_cli("--no-cache", "--output-format", "concise", ".", cwd=project, env={"PYTHONPATH": str(site)})
    assert "SPL903" not in r.stdout and r.returncode == 1, r.stdout
    assert re.findall(r"^(\S+?):(\d+):\d+: (SPL\d+)", r.stdout, re.M) == [(os.path.join("mypkg", "train.py"), "6", "SPL001")]


GRAPH_HELPER = '''import torch


def edge_weights(adj):
    """`adj`: a sparse COO adjacency matrix."""
    return adj.values()
'''

GRAPH_SCRIPT = '''import torch
from torch_graphkit.sparse import edge_weights

i = torch.tensor([[0, 1, 1], [1, 0, 0]])
adj = torch.sparse_coo_tensor(i, torch.tensor([1., 2., 3.]), (2, 2))
print(edge_weights(adj))
'''


def _graph_project(tmp_path, module="sparse.py", helper=GRAPH_HELPER, script=GRAPH_SCRIPT):
    """A package `torch_graphkit` installed in `site` (one module beside its `__init__`), and
    a project whose `train.py` calls it."""
    site, project = tmp_path / "site", tmp_path / "project"
    (site / "torch_graphkit").mkdir(parents=True)
    project.mkdir()
    (site / "torch_graphkit" / "__init__.py").write_text("")
    (site / "torch_graphkit" / module).write_text(helper)
    (project / "train.py").write_text(script)
    return site, project


def test_a_package_named_like_torch_is_read_like_any_other(tmp_path):
    """torch_geometric, torchrec, torch_sparse: only `torch` itself is known by its tables.
    A name test without the dot took every `torch*` package for torch, and a user's call
    into torch_geometric.utils.cat or set_sparse_value, which fail under torch, was never
    followed."""
    site, project = _graph_project(tmp_path)
    r = run_cli("--no-cache", "--output-format", "concise", ".", cwd=project, env={"PYTHONPATH": str(site)})
    found = re.findall(r"^(\S+?):(\d+):\d+: (SPL\d+)", r.stdout, re.M)
    assert found == [("train.py", "6", "SPL001")], r.stdout + r.stderr


@pytest.mark.torch
def test_the_call_into_the_torch_named_package_fails_under_torch(tmp_path):
    site, project = _graph_project(tmp_path)
    run = subprocess.run([sys.executable, "train.py"], cwd=project, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(site)}, timeout=300)
    assert run.returncode != 0 and "Cannot get values on an uncoalesced tensor" in run.stderr


MARKING_HELPER = '''import torch


def to_edge_index(adj):
    if adj.layout == torch.sparse_coo:
        adj = adj._coalesced_(True)
        return adj.indices(), adj.values()
    raise ValueError("COO only")
'''

MARKING_SCRIPT = '''import torch
from torch_graphkit.convert import to_edge_index

idx = torch.tensor([[1, 0, 1, 2], [0, 1, 0, 2]])
adj = torch.sparse_coo_tensor(idx, torch.tensor([1.0, 2.0, 3.0, 4.0]), (3, 3))
edge_index, weight = to_edge_index(adj)
assert adj.coalesce().values().tolist() == [2.0, 4.0, 4.0], adj.coalesce().values().tolist()
'''


def _marking_project(tmp_path):
    return _graph_project(tmp_path, "convert.py", MARKING_HELPER, MARKING_SCRIPT)


def test_a_package_marking_the_users_tensor_coalesced_is_reported_at_the_users_call(tmp_path):
    """The shape of torch_geometric's `to_edge_index` (reached from `remove_self_loops` and
    `GCNConv`): the package marks the caller's COO tensor coalesced. The user's file never
    says `_coalesced_`: the rule runs in the package's module because its source does. Its
    written-out indices repeat an entry, so the marked tensor coalesces to the wrong matrix."""
    site, project = _marking_project(tmp_path)
    r = run_cli("--no-cache", "--output-format", "full", ".", cwd=project, env={"PYTHONPATH": str(site)})
    found = re.findall(r"^(\S+?):(\d+):\d+: (SPL\d+)", r.stdout, re.M)
    assert found == [("train.py", "6", "SPL005")], r.stdout + r.stderr
    assert "its written-out index list repeats an entry" in r.stdout
    # coalesced first, or built on sorted entries: nothing to say
    for safe in (MARKING_SCRIPT.replace("(3, 3))\n", "(3, 3)).coalesce()\n"),
                 MARKING_SCRIPT.replace("[[1, 0, 1, 2], [0, 1, 0, 2]]", "[[0, 1, 2], [1, 0, 2]]")
                 .replace("[1.0, 2.0, 3.0, 4.0]", "[2.0, 4.0, 4.0]")):
        (project / "train.py").write_text(safe)
        r = run_cli("--no-cache", "--output-format", "concise", ".", cwd=project, env={"PYTHONPATH": str(site)})
        assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.torch
def test_the_marked_tensor_coalesces_to_the_wrong_matrix_under_torch(tmp_path):
    site, project = _marking_project(tmp_path)
    run = subprocess.run([sys.executable, "train.py"], cwd=project, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(site)}, timeout=300)
    assert run.returncode != 0 and "[1.0, 2.0, 3.0, 4.0]" in run.stderr, run.stderr
    safe = MARKING_SCRIPT.replace("(3, 3))\n", "(3, 3)).coalesce()\n")
    (project / "train.py").write_text(safe)
    run = subprocess.run([sys.executable, "train.py"], cwd=project, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(site)}, timeout=300)
    assert run.returncode == 0, run.stderr


def test_a_project_folder_on_the_path_is_the_projects_own(tmp_path):
    """`PYTHONPATH=src` (or a `src` layout installed in editable mode) puts a folder of the
    project on the path: its modules are found from any script, as the project's, and their
    findings are reported where they are. They were neither installed nor found upwards from
    `scripts/`, so the call was not followed."""
    (tmp_path / "src" / "graphkit").mkdir(parents=True)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "src" / "graphkit" / "__init__.py").write_text("")
    (tmp_path / "src" / "graphkit" / "ops.py").write_text("def edge_weights(adj):\n    return adj.values()\n")
    script = ("import torch\nfrom graphkit.ops import edge_weights\n\n"
              "index = torch.tensor([[0, 1, 1], [1, 0, 0]])\n"
              "adj = torch.sparse_coo_tensor(index, torch.ones(3), (2, 2))\nprint(edge_weights(adj))\n")
    (tmp_path / "scripts" / "train.py").write_text(script)
    r = run_cli("--no-cache", "--output-format", "concise", "scripts/train.py", cwd=tmp_path, env={"PYTHONPATH": "src"})
    found = re.findall(r"^(\S+?):(\d+):\d+: (SPL\d+)", r.stdout, re.M)
    assert found == [(os.path.join("src", "graphkit", "ops.py"), "2", "SPL001")], r.stdout + r.stderr
    assert "installed package" not in r.stdout
    # without the folder on the path, the module is not found: nothing followed
    r = run_cli("--no-cache", "--output-format", "concise", "scripts/train.py", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
