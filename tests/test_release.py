"""The version, the release tag and the snippets users copy stay in step: the pre-commit and
Action snippets of the README name the tag of the version this checkout carries, and that tag,
where the checkout has it, holds this version."""
import os
import re
import subprocess

import pytest

import sparselint
from conftest import ROOT

TAG = "v" + sparselint.__version__


def readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        return fh.read()


def test_the_version_is_a_release_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", sparselint.__version__)


def test_the_pre_commit_snippet_names_this_version():
    revs = re.findall(r"^\s*rev:\s*(\S+)", readme(), re.M)
    assert revs and set(revs) == {TAG}, revs


def test_the_action_snippets_name_this_version():
    refs = re.findall(r"uses:\s*\S*sparselint@(\S+)", readme())
    assert refs and set(refs) == {TAG}, refs


def test_the_installed_metadata_has_this_version():
    from importlib.metadata import version
    assert version("sparselint") == sparselint.__version__


def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def test_the_release_tag_holds_this_version_where_the_checkout_has_it():
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    tags = _git("tag", "--list", "v*").stdout.split()
    if TAG not in tags:
        # A clone made without tags; released tags must still not run ahead of this version.
        newer = [t for t in tags if tuple(map(int, re.findall(r"\d+", t))) > tuple(map(int, re.findall(r"\d+", TAG)))]
        assert not newer, f"tags newer than {TAG}: {newer}"
        pytest.skip(f"{TAG} is not among this checkout's tags")
    shown = _git("show", f"{TAG}:sparselint/__init__.py")
    assert shown.returncode == 0, shown.stderr
    assert f'__version__ = "{sparselint.__version__}"' in shown.stdout
