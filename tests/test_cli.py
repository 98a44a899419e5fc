"""The command-line contract, exercised by running the real command on real files."""
import json
import os
import stat

import pytest

from conftest import FIXTURES

BAD = (
    "import torch\n"
    "edges = torch.tensor([[0, 1], [1, 0]])\n"
    "adj = torch.sparse_coo_tensor(edges, torch.ones(2), (2, 2))\n"
    "print(adj.indices().max())\n"
)
CLEAN = "import torch\nx = torch.ones(3)\nprint(x.sum())\n"


def write(path, text, **kw):
    path.write_text(text, **kw)
    return str(path)


def no_traceback(result):
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


def test_exit_codes_and_default_command(cli, tmp_path):
    clean = write(tmp_path / "clean.py", CLEAN)
    bad = write(tmp_path / "bad.py", BAD)
    assert cli(clean).returncode == 0
    r = cli(bad)
    assert r.returncode == 1 and "SPL001" in r.stdout
    assert cli("check", bad).stdout == r.stdout
    r = cli(str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "missing.py" in r.stderr
    no_traceback(r)


def test_exit_zero(cli, tmp_path):
    assert cli("--exit-zero", write(tmp_path / "bad.py", BAD)).returncode == 0


def test_concise_format_is_sorted_and_one_based(cli, tmp_path):
    (tmp_path / "pkg").mkdir()
    write(tmp_path / "pkg" / "b.py", BAD)
    write(tmp_path / "pkg" / "a.py", "\n" + BAD)
    r = cli("pkg", cwd=tmp_path)
    lines = [l for l in r.stdout.splitlines() if "SPL" in l]
    assert lines[0].startswith(os.path.join("pkg", "a.py") + ":5:7: SPL001 [*] ")
    assert lines[1].startswith(os.path.join("pkg", "b.py") + ":4:7: SPL001 [*] ")
    assert "Found 2 findings." in r.stdout


def test_full_format_shows_frame_evidence_help_and_fix(cli, tmp_path):
    r = cli("--output-format", "full", write(tmp_path / "bad.py", BAD))
    out = r.stdout
    assert "4 | print(adj.indices().max())" in out
    assert "^^^^^^^^^^^^^ SPL001" in out
    assert "= when: at this line" in out
    assert "= because: line 3: built by `torch.sparse_coo_tensor` without `is_coalesced=True`" in out
    assert "= help:" in out
    assert "+print(adj.coalesce().indices().max())" in out


def test_json_format(cli, tmp_path):
    path = write(tmp_path / "bad.py", BAD)
    r = cli("--output-format", "json", path)
    data = json.loads(r.stdout)
    assert r.returncode == 1 and len(data) == 1
    d = data[0]
    assert {k: d[k] for k in ("code", "name", "path", "line", "column", "end_line", "end_column")} == {
        "code": "SPL001", "name": "values-on-uncoalesced", "path": path,
        "line": 4, "column": 7, "end_line": 4, "end_column": 20}
    assert d["fix"]["applicability"] == "safe"
    assert d["fix"]["edits"][0]["content"] == "adj.coalesce().indices()"
    assert d["evidence"][0]["line"] == 3 and "uncoalesced" in d["evidence"][0]["message"]
    assert json.loads(cli("--output-format", "json", write(tmp_path / "c.py", CLEAN)).stdout) == []


def test_github_format(cli, tmp_path):
    r = cli("--output-format", "github", write(tmp_path / "bad.py", BAD))
    assert r.stdout.startswith("::error title=sparselint (SPL001),file=")
    assert ",line=4,col=7,endLine=4,endColumn=20::SPL001 " in r.stdout


def test_select_and_ignore(cli, tmp_path):
    path = write(tmp_path / "bad.py", BAD)
    assert cli("--select", "SPL1", path).returncode == 0
    assert cli("--select", "SPL0", path).returncode == 1
    assert cli("--select", "ALL", "--ignore", "SPL001", path).returncode == 0
    assert cli("--ignore", "SPL0", "--extend-select", "SPL001", path).returncode == 1
    assert cli("--select", "values-on-uncoalesced", path).returncode == 1
    r = cli("--select", "SPL999", path)
    assert r.returncode == 2 and "SPL999" in r.stderr
    no_traceback(r)


def test_noqa(cli, tmp_path):
    lines = BAD.splitlines()
    specific = "\n".join(lines[:-1] + [lines[-1] + "  # noqa: SPL001"]) + "\n"
    bare = "\n".join(lines[:-1] + [lines[-1] + "  # noqa"]) + "\n"
    other = "\n".join(lines[:-1] + [lines[-1] + "  # noqa: SPL002"]) + "\n"
    whole_file = "# sparselint: noqa\n" + BAD
    assert cli(write(tmp_path / "a.py", specific)).returncode == 0
    assert cli(write(tmp_path / "b.py", bare)).returncode == 0
    assert cli(write(tmp_path / "c.py", other)).returncode == 1
    assert cli(write(tmp_path / "d.py", whole_file)).returncode == 0


def test_noqa_is_honoured_by_fix(cli, tmp_path):
    lines = BAD.splitlines()
    text = "\n".join(lines[:-1] + [lines[-1] + "  # noqa: SPL001"]) + "\n"
    path = write(tmp_path / "a.py", text)
    assert cli("--fix", path).returncode == 0
    assert (tmp_path / "a.py").read_text() == text


def test_fix_writes_and_diff_does_not(cli, tmp_path):
    path = write(tmp_path / "bad.py", BAD)
    r = cli("--diff", path)
    assert r.returncode == 1
    assert "-print(adj.indices().max())" in r.stdout and "+print(adj.coalesce().indices().max())" in r.stdout
    assert (tmp_path / "bad.py").read_text() == BAD
    r = cli("--fix", path)
    assert r.returncode == 0 and "Found 1 finding (1 fixed, 0 remaining)." in r.stdout
    assert (tmp_path / "bad.py").read_text() == BAD.replace("adj.indices()", "adj.coalesce().indices()")
    assert cli("--diff", path).returncode == 0


def test_unsafe_fixes_only_on_request(cli, tmp_path):
    src = ("import torch\n"
           "s = torch.eye(3).to_sparse().requires_grad_()\n"
           "s.values().mul_(2)\n")
    path = write(tmp_path / "leaf.py", src)
    assert cli("--fix", path).returncode == 1
    assert (tmp_path / "leaf.py").read_text() == src
    assert cli("--fix", "--unsafe-fixes", path).returncode == 0
    assert (tmp_path / "leaf.py").read_text().endswith("with torch.no_grad():\n    s.values().mul_(2)\n")


def test_a_fix_on_a_line_that_runs_in_several_contexts_is_as_safe_as_the_least_safe(cli, tmp_path):
    """`w.coalesce()` in a function called with a plain sparse tensor gets the (unsafe) fix
    `w = w.coalesce()`; a second call with a leaf that requires grad makes that rebinding wrong
    (the name would no longer be the leaf), and the one edit serves both calls: none is made."""
    one_call = ("import torch\n\n\ndef total(w):\n    w.coalesce()\n    return torch.sparse.sum(w)\n\n\n"
                "i = torch.tensor([[0, 1, 0], [1, 0, 1]])\n"
                "total(torch.sparse_coo_tensor(i, torch.ones(3), (2, 2)))\n")
    both = one_call + "total(torch.sparse_coo_tensor(i, torch.ones(3), (2, 2), requires_grad=True))\n"
    fixes = {}
    for name, src in (("one.py", one_call), ("both.py", both)):
        found = json.loads(cli("--no-cache", "--select", "SPL002", "--output-format", "json",
                               write(tmp_path / name, src)).stdout)
        assert [d["line"] for d in found] == [5], name
        fixes[name] = found[0]["fix"] and found[0]["fix"]["applicability"]
    assert fixes == {"one.py": "unsafe", "both.py": None}
    assert cli("--fix", "--unsafe-fixes", str(tmp_path / "both.py")).returncode == 1
    assert (tmp_path / "both.py").read_text() == both


def test_fix_keeps_crlf_encoding_bom_and_permissions(cli, tmp_path):
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(BAD.replace("\n", "\r\n").encode())
    os.chmod(crlf, 0o751)
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# café\n" + BAD).encode("latin-1"))
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    r = cli("--fix", str(crlf), str(latin), str(bom))
    assert r.returncode == 0, r.stdout + r.stderr
    assert crlf.read_bytes() == BAD.replace("adj.indices()", "adj.coalesce().indices()").replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(crlf).st_mode) == 0o751
    assert latin.read_bytes().decode("latin-1").startswith("# -*- coding: latin-1 -*-\n# café\n")
    assert b"adj.coalesce().indices()" in latin.read_bytes()
    assert bom.read_bytes().startswith(b"\xef\xbb\xbfimport torch")
    assert [f for f in os.listdir(tmp_path) if f.startswith(".sparselint-")] == []


def test_fix_writes_through_a_symlink_and_keeps_it(cli, tmp_path):
    """As ruff does: the link stays a link and the file it points to is fixed."""
    (tmp_path / "real").mkdir()
    (tmp_path / "work").mkdir()
    target = tmp_path / "real" / "bad.py"
    target.write_text(BAD)
    os.chmod(target, 0o640)
    link = tmp_path / "work" / "bad.py"
    link.symlink_to(os.path.join("..", "real", "bad.py"))
    r = cli("--fix", str(link))
    assert r.returncode == 0, r.stdout + r.stderr
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "real", "bad.py")
    assert target.read_text() == BAD.replace("adj.indices()", "adj.coalesce().indices()")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert os.listdir(tmp_path / "work") == ["bad.py"] and os.listdir(tmp_path / "real") == ["bad.py"]


def test_fix_keeps_hard_links_together(cli, tmp_path):
    first = tmp_path / "bad.py"
    first.write_bytes(BAD.replace("\n", "\r\n").encode())
    second = tmp_path / "other_name.txt"
    os.link(first, second)
    inode = os.stat(first).st_ino
    r = cli("--fix", str(first))
    assert r.returncode == 0, r.stdout + r.stderr
    fixed = BAD.replace("adj.indices()", "adj.coalesce().indices()").replace("\n", "\r\n").encode()
    assert first.read_bytes() == fixed and second.read_bytes() == fixed
    assert os.stat(first).st_ino == inode and os.stat(first).st_nlink == 2


def test_fix_refuses_read_only_file(cli, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can write read-only files")
    path = write(tmp_path / "ro.py", BAD)
    os.chmod(path, 0o444)
    r = cli("--fix", path)
    assert r.returncode == 2 and "not writable" in r.stderr
    assert (tmp_path / "ro.py").read_text() == BAD


def test_unparsable_and_undecodable_files_are_one_diagnostic_each(cli, tmp_path):
    write(tmp_path / "broken.py", "import torch\nsparse = torch.sparse_coo_tensor(\n")
    (tmp_path / "binary.py").write_bytes(b"\xff\xfe\x00sparse\x00\x81")
    write(tmp_path / "bad.py", BAD)
    r = cli(str(tmp_path))
    no_traceback(r)
    assert r.returncode == 1
    codes = [l.split()[1] for l in r.stdout.splitlines() if ": SPL" in l]
    assert sorted(codes) == ["SPL001", "SPL900", "SPL901"]


def test_empty_input_is_clean(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    r = cli(str(tmp_path / "empty"))
    assert r.returncode == 0


def test_stdin(cli, tmp_path):
    r = cli("-", "--stdin-filename", "model.py", input=BAD)
    assert r.returncode == 1 and r.stdout.startswith("model.py:4:7: SPL001")
    r = cli("-", "--fix", "--stdin-filename", "model.py", input=BAD)
    assert r.stdout == BAD.replace("adj.indices()", "adj.coalesce().indices()")


def test_stdin_filename_wins_over_paths_with_a_warning(cli, tmp_path):
    # as in ruff: the source comes from stdin, the paths are named as ignored
    other = write(tmp_path / "other.py", CLEAN)
    r = cli("--no-cache", "--stdin-filename", "model.py", other, input=BAD)
    assert r.returncode == 1 and r.stdout.startswith("model.py:4:7: SPL001"), r.stdout
    assert f"Ignoring file {other} in favor of standard input." in r.stderr


def test_force_exclude_applies_to_the_stdin_filename(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.sparselint]\nextend-exclude = ['generated']\n")
    name = os.path.join("generated", "model.py")
    r = cli("--no-cache", "--force-exclude", "--stdin-filename", name, cwd=tmp_path, input=BAD)
    assert r.returncode == 0 and "SPL001" not in r.stdout and "All checks passed!" in r.stdout, r.stdout
    # --fix passes the excluded source through unchanged, as ruff does
    r = cli("--no-cache", "--fix", "--force-exclude", "--stdin-filename", name, cwd=tmp_path, input=BAD)
    assert r.returncode == 0 and r.stdout == BAD
    # a built-in exclude too; without --force-exclude the name is checked
    r = cli("--no-cache", "--force-exclude", "--stdin-filename", os.path.join(".venv", "m.py"), cwd=tmp_path, input=BAD)
    assert r.returncode == 0 and "SPL001" not in r.stdout
    assert cli("--no-cache", "--stdin-filename", name, cwd=tmp_path, input=BAD).returncode == 1


def test_statistics(cli, tmp_path):
    r = cli("--statistics", write(tmp_path / "bad.py", BAD))
    assert "    1  SPL001  [*] values-on-uncoalesced" in r.stdout


def test_rule_command_and_version(cli):
    r = cli("rule", "SPL001")
    assert r.returncode == 0
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
        assert heading in r.stdout
    assert cli("rule", "values-on-uncoalesced").stdout == r.stdout
    listing = cli("rule", "--all").stdout
    assert "SPL001  values-on-uncoalesced" in listing and "SPL203" in listing
    r = cli("rule", "SPL999")
    assert r.returncode == 2 and "SPL999" in r.stderr
    v = cli("--version")
    assert v.returncode == 0 and v.stdout.startswith("sparselint, version ")


def test_fix_with_diff_shows_without_writing(cli, tmp_path):
    """As in ruff, `--fix --diff` is `--diff`: the diff on stdout, "Would fix" on stderr, the file untouched."""
    path = write(tmp_path / "bad.py", BAD)
    r = cli("--fix", "--diff", path)
    assert r.returncode == 1, r.stderr
    assert "+print(adj.coalesce().indices().max())" in r.stdout
    assert "Would fix 1 finding." in r.stderr and "Fixed" not in r.stderr
    assert (tmp_path / "bad.py").read_text() == BAD


def test_fixtures_folder_as_a_whole(cli):
    r = cli(os.path.join(FIXTURES, "works"))
    assert r.returncode == 0, r.stdout
