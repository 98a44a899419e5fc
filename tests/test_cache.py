"""The result cache, through the real CLI."""
import os
import subprocess
import sys

from conftest import FIXTURES

BAD = ("import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.values())\n")


def entries(cache_dir):
    return [f for _, _, files in os.walk(cache_dir) for f in files if f not in ("CACHEDIR.TAG", ".gitignore")]


def test_warm_run_matches_cold_and_content_changes_miss(cli, tmp_path):
    cache = tmp_path / "cache"
    src = tmp_path / "a.py"
    src.write_text(BAD)
    cold = cli("--cache-dir", str(cache), str(src))
    assert entries(cache), "the cold run stored its result"
    warm = cli("--cache-dir", str(cache), str(src))
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout) and cold.returncode == 1
    src.write_text(BAD.replace("print(adj.values())", "print(adj.coalesce().values())"))
    assert cli("--cache-dir", str(cache), str(src)).returncode == 0


def test_no_cache_writes_nothing(cli, tmp_path):
    src = tmp_path / "a.py"
    src.write_text(BAD)
    cli("--no-cache", "--cache-dir", str(tmp_path / "cache"), str(src))
    assert not (tmp_path / "cache").exists()


def test_a_changed_model_module_invalidates_the_training_file(cli, tmp_path):
    for name in ("model.py", "train.py"):
        text = open(os.path.join(FIXTURES, "projects", "recsys_bad", name)).read()
        (tmp_path / name).write_text(text)
    cache = tmp_path / "cache"
    train = str(tmp_path / "train.py")
    assert cli("--cache-dir", str(cache), train).returncode == 1
    model = tmp_path / "model.py"
    model.write_text(model.read_text().replace("sparse=True", "sparse=False"))
    assert cli("--cache-dir", str(cache), train).returncode == 0


def test_two_runs_sharing_a_cache(tmp_path):
    cache = tmp_path / "cache"
    for i in range(30):
        (tmp_path / f"m{i}.py").write_text(BAD if i % 2 else "import torch\nx = torch.ones(2).to_sparse()\n")
    cmd = [sys.executable, "-m", "sparselint", "--cache-dir", str(cache), str(tmp_path)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 1 for p in procs), [o[1] for o in outs]
    assert len({o[0] for o in outs}) == 1
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.stdout == outs[0][0]


def test_a_module_created_after_the_cached_run_invalidates_its_importer(cli, tmp_path):
    """train.py imports a helper module that does not exist yet: adding it must be seen."""
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom graph_utils import gcn_norm\n\n"
                     "adj = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2))\n"
                     "out = gcn_norm(adj)\n")
    cache = tmp_path / "cache"
    first = cli("--cache-dir", str(cache), str(train))
    assert first.returncode == 0, first.stdout
    (tmp_path / "graph_utils.py").write_text("def gcn_norm(adj):\n    return adj.values().sum()\n")
    second = cli("--cache-dir", str(cache), str(train))
    assert second.returncode == 1, second.stdout
    assert "graph_utils.py:2:12: SPL001" in second.stdout


def test_a_changed_helper_module_invalidates_its_caller(cli, tmp_path):
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom graph_utils import gcn_norm\n\n"
                     "adj = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2))\n"
                     "out = gcn_norm(adj)\n")
    helper = tmp_path / "graph_utils.py"
    helper.write_text("import torch\n\ndef gcn_norm(adj):\n    return torch.sparse.sum(adj)\n")
    cache = tmp_path / "cache"
    assert cli("--cache-dir", str(cache), str(train)).returncode == 0
    helper.write_text("import torch\n\ndef gcn_norm(adj):\n    return adj.values().sum()\n")
    again = cli("--cache-dir", str(cache), str(train))
    assert again.returncode == 1 and "graph_utils.py:4:12: SPL001" in again.stdout, again.stdout


def test_the_cache_lives_in_the_project_root_as_ruff_places_it(cli, tmp_path):
    # a repository whose root has a pyproject.toml without [tool.sparselint]
    repo = tmp_path / "repo"
    (repo / "notes" / "scratch").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'other'\n")
    (repo / "notes" / "scratch" / "a.py").write_text(BAD)
    env = {"SPARSELINT_CACHE_DIR": ""}
    assert cli(".", cwd=repo / "notes", env=env).returncode == 1
    # no configuration of ours in force: the current directory, not the repository's root
    assert entries(repo / "notes" / ".sparselint_cache")
    assert not (repo / ".sparselint_cache").exists()
    # a configuration in force: its folder, from whichever sub-folder the run starts
    (repo / "notes" / "pyproject.toml").write_text("[tool.sparselint]\n")
    (repo / "notes" / "scratch" / "b.py").write_text(BAD)
    before = len(entries(repo / "notes" / ".sparselint_cache"))
    assert cli(".", cwd=repo / "notes" / "scratch", env=env).returncode == 1
    assert not (repo / "notes" / "scratch" / ".sparselint_cache").exists()
    assert len(entries(repo / "notes" / ".sparselint_cache")) > before
    assert not (repo / ".sparselint_cache").exists()


def test_an_edit_anywhere_in_the_analysis_changes_the_cache_key(tmp_path):
    """The key covers every module of sparselint, subpackages included: cached findings made by
    older analysis code must not be served after it changes."""
    import shutil
    import sparselint
    import sparselint.rules
    copy = tmp_path / "sparselint"
    shutil.copytree(os.path.dirname(sparselint.__file__), copy,
                    ignore=shutil.ignore_patterns("__pycache__", "rules"))
    shutil.copytree(os.path.dirname(sparselint.rules.__file__), copy / "rules",
                    ignore=shutil.ignore_patterns("__pycache__"))
    probe = ("import sparselint, sparselint.rules; from sparselint.cache import code_fingerprint; "
             "print(sparselint.__file__, sparselint.rules.__file__, code_fingerprint())")

    def key():
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONPATH": str(tmp_path)}, cwd=tmp_path).stdout.split()
        assert out[0].startswith(str(copy)) and out[1].startswith(str(copy)), out
        return out[2]

    before = key()
    assert key() == before
    deep = copy / "analysis" / "evaluation" / "inference" / "effects.py"
    deep.write_text(deep.read_text() + "\n# edited\n")
    after_deep = key()
    assert after_deep != before
    rule = next((copy / "rules").glob("spl001_*.py"))
    rule.write_text(rule.read_text() + "\n# edited\n")
    assert key() != after_deep
