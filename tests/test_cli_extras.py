"""What users of ruff expect beyond the basics: --show-fixes, --add-noqa, unused noqa,
colour only on a terminal, and a progress line for long runs."""
import os
import pty
import subprocess
import sys

BAD = ("import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.indices().max())\n"
       "s = torch.eye(3).to_sparse().requires_grad_()\ns.values().mul_(2)\n")


def test_show_fixes(cli, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(BAD)
    r = cli("--fix", "--show-fixes", str(path))
    assert f"  {path}: 1 x SPL001" in r.stdout
    assert r.returncode == 1  # SPL102 has only an unsafe fix and remains


def test_add_noqa_adopts_a_codebase(cli, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(BAD.replace("print(adj.indices().max())", "print(adj.indices().max())  # noqa: E501"))
    r = cli("--add-noqa", str(path))
    assert r.returncode == 0 and "Added 2 noqa directives." in r.stdout
    text = path.read_text()
    assert "print(adj.indices().max())  # noqa: E501, SPL001\n" in text
    assert "s.values().mul_(2)  # noqa: SPL102\n" in text
    assert cli("--no-cache", str(path)).returncode == 0


def test_unused_noqa_is_opt_in(cli, tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\nx = torch.ones(2).to_sparse()  # noqa: SPL001\ny = 1  # noqa: E501\n")
    assert cli("--no-cache", str(path)).returncode == 0
    r = cli("--no-cache", "--extend-select", "SPL904", str(path))
    assert r.returncode == 1
    assert [l.split(": ", 1)[1] for l in r.stdout.splitlines() if "SPL904" in l] == [
        "SPL904 unused `# noqa` directive (SPL001)"]


def test_colour_only_when_asked_or_on_a_terminal(cli, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(BAD)
    assert "\x1b[" not in cli("--no-cache", str(path)).stdout
    assert "\x1b[1;31mSPL001\x1b[0m" in cli("--no-cache", str(path), env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in cli("--no-cache", str(path), env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


def test_progress_on_a_terminal(tmp_path):
    for i in range(210):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, "-m", "sparselint", "--no-cache", "-j", "1", str(tmp_path)])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    assert b"sparselint: checked 210/210 files" in out
    piped = subprocess.run([sys.executable, "-m", "sparselint", "--no-cache", str(tmp_path)], capture_output=True)
    assert b"checked" not in piped.stderr


def test_add_noqa_never_writes_into_a_multiline_string(cli, tmp_path):
    text = ("import torch\n"
            "adj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\n"
            "report = f\"\"\"\n"
            "total: {adj.values().sum()}\n"
            "\"\"\"\n"
            "query = (adj.indices(),\n"
            "         1)\n")
    path = tmp_path / "m.py"
    path.write_text(text)
    r = cli("--add-noqa", str(path))
    assert r.returncode == 0 and "Added 2 noqa directives." in r.stdout, r.stdout + r.stderr
    new = path.read_text()
    assert new == text.replace('total: {adj.values().sum()}\n"""\n', 'total: {adj.values().sum()}\n"""  # noqa: SPL001\n') \
                      .replace("query = (adj.indices(),\n", "query = (adj.indices(),  # noqa: SPL001\n")
    r = cli("--no-cache", "--extend-select", "SPL904", str(path))
    assert r.returncode == 0, r.stdout  # suppressed, and the directive counts as used


def test_unsafe_fixes_hint_and_diff_wording(cli, tmp_path):
    only_unsafe = "import torch\ns = torch.eye(3).to_sparse().requires_grad_()\ns.values().mul_(2)\n"
    path = tmp_path / "m.py"
    path.write_text(only_unsafe)
    r = cli("--no-cache", str(path))
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in r.stdout
    path.write_text(BAD)
    r = cli("--no-cache", str(path))
    assert ("[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
            in r.stdout)
    r = cli("--diff", str(path))
    assert "Would fix 1 finding." in r.stderr and "Fixed" not in r.stderr + r.stdout
    assert "1 more fix would be applied with the `--unsafe-fixes` option." in r.stderr
    assert path.read_text() == BAD


def test_short_version_and_top_level_help(cli):
    r = cli("-V")
    assert r.returncode == 0 and r.stdout.startswith("sparselint, version ")
    r = cli("--help")
    assert r.returncode == 0 and "`sparselint PATH...` is short for `sparselint check PATH...`" in " ".join(r.stdout.split())


def test_readme_documents_every_option_and_engine_code(cli):
    import re
    from conftest import ROOT
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    help_lines = [l.strip() for l in cli("check", "--help").stdout.splitlines() if l.strip().startswith("-")]
    options = {o for l in help_lines for o in re.findall(r"(--[a-z][a-z-]+|-[a-zA-Z])\b", l.split("  ")[0])}
    assert {"-q", "--file-timeout", "--stdin-filename"} <= options
    missing = sorted(o for o in options - {"-h", "--help"} if f"`{o}" not in readme and f"/{o}`" not in readme
                     and f"{o}`" not in readme)
    assert not missing, missing
    for code in ("SPL900", "SPL901", "SPL902", "SPL903", "SPL904", "SPL905"):
        assert f"`{code}`" in readme or code in readme, code
    assert "`-V`" in readme or "sparselint -V" in readme


HELPERS = ('"""Graph helpers."""\nimport torch\n\n\n'
           "def build(edges, n):\n"
           "    return torch.sparse_coo_tensor(edges, torch.ones(edges.size(1)), (n, n))\n\n\n"
           "def norm(adj):\n"
           "    row, col = adj.indices()\n"
           "    return row + col\n")
CALLER = ('"""Training.\n\nThe adjacency is built\nand normalised\nby helpers.\n"""\n'
          "import torch\n\nfrom helpers import build, norm\n\n"
          "adj = build(torch.tensor([[0, 1], [1, 0]]), 2)\n"
          "print(norm(adj))\n")


def test_add_noqa_writes_a_finding_of_a_called_module_into_that_module(cli, tmp_path):
    """The finding lives in helpers.py:10 (train.py and evaluate.py both lead there); its
    directive goes there, once, and nothing else changes."""
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "train.py").write_text(CALLER)
    (tmp_path / "evaluate.py").write_text(CALLER.replace("Training", "Evaluation"))
    before = cli(".", cwd=tmp_path)
    assert before.returncode == 1 and before.stdout.startswith("helpers.py:10:16: SPL001"), before.stdout
    r = cli("--add-noqa", ".", cwd=tmp_path)
    assert r.returncode == 0 and "Added 1 noqa directive." in r.stdout, r.stdout + r.stderr
    assert (tmp_path / "helpers.py").read_text() == HELPERS.replace(
        "row, col = adj.indices()\n", "row, col = adj.indices()  # noqa: SPL001\n")
    assert (tmp_path / "train.py").read_text() == CALLER
    after = cli(".", cwd=tmp_path)
    assert after.returncode == 0 and "All checks passed!" in after.stdout, after.stdout
    assert cli("--no-cache", "train.py", cwd=tmp_path).returncode == 0
    again = cli("--add-noqa", ".", cwd=tmp_path)
    assert again.returncode == 0 and "Added 0 noqa directives." in again.stdout
    # the directive is used: train.py's check needed it (helpers.py alone cannot tell)
    for args in (("--no-cache",), ()):
        r = cli(*args, "--extend-select", "SPL904", ".", cwd=tmp_path)
        assert r.returncode == 0, r.stdout


def test_unused_noqa_in_a_caller_is_not_taken_for_the_called_modules_finding(cli, tmp_path):
    """helpers.py's finding is at its line 10; a directive at train.py's line 10 suppresses
    nothing, whatever the line numbers say."""
    (tmp_path / "helpers.py").write_text(HELPERS)
    caller = CALLER.replace("import build, norm\n\n", "import build, norm\nscale = 1  # noqa: SPL001\n")
    assert caller.splitlines()[9].endswith("# noqa: SPL001")
    (tmp_path / "train.py").write_text(caller)
    r = cli("--no-cache", "--extend-select", "SPL904", "train.py", cwd=tmp_path)
    assert "train.py:10:1: SPL904 unused `# noqa` directive (SPL001)" in r.stdout, r.stdout
    assert "helpers.py:10:16: SPL001" in r.stdout


def test_add_noqa_ends_a_backslash_continued_statement(cli, tmp_path):
    text = ("import torch\n"
            "adj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\n"
            "total = adj.values().sum() + \\\n"
            "    1\n"
            "other = 2\n")
    path = tmp_path / "m.py"
    path.write_text(text)
    r = cli("--add-noqa", str(path))
    assert r.returncode == 0 and "Added 1 noqa directive." in r.stdout, r.stdout + r.stderr
    assert path.read_text() == text.replace("    1\n", "    1  # noqa: SPL001\n")
    r = cli("--no-cache", "--extend-select", "SPL904", str(path))
    assert r.returncode == 0, r.stdout  # suppressed, and the directive counts as used
