"""The pre-commit hooks, run by the real pre-commit against a temporary repository."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

BAD = ("import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.indices().max())\n")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})


def try_repo(repo, hook, home):
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", ROOT, hook, "--color", "never"],
                          cwd=repo, capture_output=True, text=True, env=env, timeout=900)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    pytest.importorskip("pre_commit")
    return tmp_path_factory.mktemp("pre-commit-home")


def staged_repo(tmp_path, name, text):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / name).write_text(text)
    git(repo, "add", name)
    return repo


def test_check_hook_fails_on_a_staged_hazard_and_passes_once_fixed(tmp_path, pre_commit_home):
    repo = staged_repo(tmp_path, "model.py", BAD)
    r = try_repo(repo, "sparselint", pre_commit_home)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "model.py:3:7: SPL001" in r.stdout
    (repo / "model.py").write_text(BAD.replace("adj.indices()", "adj.coalesce().indices()"))
    git(repo, "add", "model.py")
    r = try_repo(repo, "sparselint", pre_commit_home)
    assert r.returncode == 0, r.stdout + r.stderr


def test_fix_hook_rewrites_the_file(tmp_path, pre_commit_home):
    repo = staged_repo(tmp_path, "model.py", BAD)
    r = try_repo(repo, "sparselint-fix", pre_commit_home)
    assert r.returncode == 1  # pre-commit fails a hook that changed files
    assert (repo / "model.py").read_text() == BAD.replace("adj.indices()", "adj.coalesce().indices()")


def test_no_staged_python_files_is_a_pass(tmp_path, pre_commit_home):
    repo = staged_repo(tmp_path, "README.md", "hello\n")
    r = try_repo(repo, "sparselint", pre_commit_home)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(no files to check)Skipped" in r.stdout.replace(".", "").replace(" ", "") or "Skipped" in r.stdout
