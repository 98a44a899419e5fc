"""The server's pieces in process: positions in the client's units, the editor's text in
the project index, settings resolution, minimal fix-all edits."""
from __future__ import annotations

import os
import shutil

import pytest

if not os.environ.get("CI"):  # CI installs the lsp extra: there a missing pygls must fail
    pytest.importorskip("pygls", reason="needs the lsp extra: pip install -e '.[test,lsp]'")

from lsprotocol import types as lsp  # noqa: E402
from pygls.workspace.position_codec import PositionCodec  # noqa: E402

from sparselint.lsp import overlay  # noqa: E402
from sparselint.lsp.actions import _replace  # noqa: E402
from sparselint.lsp.convert import Placer, to_lsp  # noqa: E402
from sparselint.lsp.documents import analyse, buffer  # noqa: E402
from sparselint.lsp.positions import Lines  # noqa: E402
from sparselint.lsp.settings import SettingsCache  # noqa: E402
from sparselint.analysis.project.models import project_index  # noqa: E402

UTF16 = PositionCodec(lsp.PositionEncodingKind.Utf16)
UTF32 = PositionCodec(lsp.PositionEncodingKind.Utf32)
HERE = os.path.dirname(os.path.abspath(__file__))


def test_columns_are_counted_in_the_clients_units():
    text = "a = '😋é'; b = 1\nsecond\r\nthird"
    lines = Lines.of(text, UTF16)
    assert lines.to_client(1, 13) == (0, 13)  # `b`: code point 12, UTF-16 unit 13 (the emoji is two)
    assert Lines.of(text, UTF32).to_client(1, 13) == (0, 12)
    assert lines.from_client(0, 13) == (1, 13)
    assert lines.to_client(3, 6) == (2, 5)  # CRLF counts as one line break
    assert lines.to_client(9, 1) == (2, 5)  # past the end: clamped


def test_syntax_error_is_placed_in_utf16_where_python_points():
    text = "import torch\nx = '😋'; y = torch.randn(3).to_sparse(\n"
    source = buffer("file:///t.py", "/tmp/t.py", text, 1)
    analysis = analyse(source, SettingsCache().for_path(None))
    (d,) = analysis.findings
    assert d.code == "SPL900" and "never closed" in d.message
    uri, diag = to_lsp(d, Placer(source, UTF16))
    # `(` is code point 37 of line 2; the emoji before it takes two UTF-16 units.
    assert (diag.range.start.line, diag.range.start.character) == (1, 38)
    assert text.split("\n")[1][37] == "("


def test_unsaved_model_text_reaches_the_files_that_use_it(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(os.path.join(HERE, "..", "fixtures", "projects", "recsys_bad"), project)
    model, train = str(project / "model.py"), str(project / "train.py")
    train_text = open(train).read()
    settings = SettingsCache().for_path(train)

    def codes():
        return [d.code for d in analyse(buffer("file://" + train, train, train_text, 1), settings).findings]

    assert codes() == ["SPL401"]
    dense = open(model).read().replace("sparse=True", "sparse=False")
    overlay.set_text(model, dense)
    try:
        assert codes() == []
    finally:
        overlay.drop_text(model)
    assert codes() == ["SPL401"]


def test_the_index_keeps_one_tree_per_open_buffer_however_long_the_session(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(os.path.join(HERE, "..", "fixtures", "projects", "recsys_bad"), project)
    train = str(project / "train.py")
    text = open(train).read()
    settings = SettingsCache().for_path(train)
    for n in range(30):
        edited = text + f"# keystroke {n}\n"
        overlay.set_text(train, edited)
        analyse(buffer("file://" + train, train, edited, n), settings)
    trees = [k for k in project_index()._files if k[0] == os.path.abspath(train)]
    assert len(trees) == 1
    overlay.drop_text(train)
    assert not [k for k in project_index()._files if k[0] == os.path.abspath(train) and len(k) == 2]


def test_settings_follow_the_nearest_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.sparselint]\nignore = ["SPL002"]\nextend-exclude = ["generated"]\n'
        '[tool.sparselint.per-file-ignores]\n"test_*.py" = ["SPL501"]\n')
    (tmp_path / "generated").mkdir()
    for name in ("a.py", "test_a.py", "generated/g.py"):
        (tmp_path / name).write_text("x = 1\n")
    cache = SettingsCache()
    plain = cache.for_path(str(tmp_path / "a.py"))
    assert plain.config == str(tmp_path / "pyproject.toml") and not plain.excluded
    assert "SPL002" not in {r.code for r in plain.settings.rules()}
    assert "SPL501" in {r.code for r in plain.settings.rules_for(str(tmp_path / "a.py"))}
    assert "SPL501" not in {r.code for r in plain.settings.rules_for(str(tmp_path / "test_a.py"))}
    assert cache.for_path(str(tmp_path / "generated" / "g.py")).excluded
    (tmp_path / "pyproject.toml").write_text('[tool.sparselint]\nselect = ["NOPE"]\n')
    assert "NOPE" in cache.for_path(str(tmp_path / "a.py")).error


@pytest.mark.parametrize("old,new", [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("x\r\ny = 1\r\nz\r\n", "x\r\ny = 1\r\nw = 2\r\nz\r\n"),
    ("same\n", "same\n"),
    ("", "new\n"),
])
def test_fix_all_edit_touches_only_what_changed(old, new):
    edit = _replace(old, new, Lines.of(old, UTF16))
    lines = old.splitlines(keepends=True) or [""]

    def offset(p):
        return sum(len(line) for line in lines[:p.line]) + p.character

    a, b = offset(edit.range.start), offset(edit.range.end)
    assert old[:a] + edit.new_text + old[b:] == new
    assert len(edit.new_text) <= abs(len(new) - len(old)) + 2


def test_every_subpackage_ships_in_a_regular_install():
    # An editable install finds any folder; a wheel has only the packages listed.
    import tomllib
    with open(os.path.join(HERE, "..", "pyproject.toml"), "rb") as fh:
        listed = set(tomllib.load(fh)["tool"]["setuptools"]["packages"])
    root = os.path.join(HERE, "..", "sparselint")
    found = {"sparselint"} | {f"sparselint.{d}" for d in os.listdir(root)
                              if os.path.isfile(os.path.join(root, d, "__init__.py"))}
    assert found <= listed


def test_a_vscode_cell_uri_names_its_notebook():
    from sparselint.lsp.server import notebook_of_cell, path_of
    assert notebook_of_cell("vscode-notebook-cell:/home/u/my%20nb/train.ipynb#W0sZmlsZQ%3D%3D") == \
        "file:///home/u/my%20nb/train.ipynb"
    assert path_of(notebook_of_cell("vscode-notebook-cell:/home/u/my%20nb/train.ipynb#X10sZmlsZQ%3D%3D")) == \
        "/home/u/my nb/train.ipynb"
    # a notebook that is not a file (the scheme in the fragment is `untitled`): no path
    untitled = notebook_of_cell("vscode-notebook-cell:Untitled-1.ipynb#W0sdW50aXRsZWQ%3D")
    assert untitled == "untitled:Untitled-1.ipynb" and path_of(untitled) is None
    assert notebook_of_cell("file:///home/u/train.py") is None
