"""Which files a run checks, and with which settings: .gitignore beneath the named paths only,
each path in its own repository, the built-in excludes under --force-exclude, each file's own
pyproject.toml, and a loud failure for what would otherwise check nothing or the wrong thing.
Every test runs the real command."""
import os
import subprocess

BAD = "import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.values())\n"


def repo(path):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


def flagged(result):
    return sorted(line.split(":")[0] for line in result.stdout.splitlines() if ": SPL" in line)


def test_a_named_path_that_a_parent_gitignore_ignores_is_checked(cli, tmp_path):
    top = repo(tmp_path / "top")
    (top / ".gitignore").write_text("scratch/\n*.tmp.py\n")
    exp = top / "scratch" / "exp"
    exp.mkdir(parents=True)
    (exp / "train.py").write_text(BAD)
    (exp / "cache.tmp.py").write_text(BAD)  # beneath the named path: still ignored
    r = cli("--no-cache", os.path.join("scratch", "exp"), cwd=top)
    assert r.returncode == 1, r.stdout + r.stderr
    assert flagged(r) == [os.path.join("scratch", "exp", "train.py")]
    assert "All checks passed" not in r.stdout
    r = cli("--no-cache", cwd=exp)  # `cd scratch/exp && sparselint`
    assert r.returncode == 1 and flagged(r) == ["train.py"], r.stdout
    # from the top, the ignored folder stays out
    r = cli("--no-cache", ".", cwd=top)
    assert r.returncode == 0 and flagged(r) == [], r.stdout


def test_gitignore_is_resolved_in_each_paths_own_repository(cli, tmp_path):
    a = repo(tmp_path / "a")
    (a / ".gitignore").write_text("gen_*.py\n")
    (a / "gen_a.py").write_text(BAD)
    b = tmp_path / "other"  # not a repository: a's rules do not reach it
    b.mkdir()
    (b / "gen_b.py").write_text(BAD)
    r = cli("--no-cache", "a", "other", cwd=tmp_path)
    assert flagged(r) == [os.path.join("other", "gen_b.py")], r.stdout
    c = repo(tmp_path / "c")
    (c / ".gitignore").write_text("keep.py\n")
    (c / "gen_c.py").write_text(BAD)
    (c / "keep.py").write_text(BAD)
    r = cli("--no-cache", "c", "a", cwd=tmp_path)
    assert flagged(r) == [os.path.join("c", "gen_c.py")], r.stdout


def test_nothing_to_check_is_said_on_stderr(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("not python\n")
    for target in ("empty", "docs"):
        r = cli("--no-cache", target, cwd=tmp_path)
        assert r.returncode == 0
        assert "No Python files found under the given path(s)" in r.stderr, (target, r.stderr)
    r = cli("--no-cache", "--output-format", "json", "empty", cwd=tmp_path)
    assert r.stdout.strip() == "[]" and "No Python files found" in r.stderr
    (tmp_path / "docs" / "m.py").write_text("x = 1\n")
    assert "No Python files" not in cli("--no-cache", "docs", cwd=tmp_path).stderr


def test_an_invalid_pyproject_is_exit_2_naming_it(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.sparselint]\nignore = ['SPL0']\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[project\nname = 'x'\n")
    (sub / "m.py").write_text(BAD)
    r = cli("--no-cache", "m.py", cwd=sub)
    assert r.returncode == 2, r.stdout + r.stderr
    assert str(sub / "pyproject.toml") in r.stderr and "not valid TOML" in r.stderr
    assert "line 1" in r.stderr  # the parse error itself
    assert "Traceback" not in r.stderr
    (sub / "pyproject.toml").write_text("[tool.sparselint]\nselect = 'SPL001'\n")
    r = cli("--no-cache", "m.py", cwd=sub)
    assert r.returncode == 2 and str(sub / "pyproject.toml") in r.stderr and "select" in r.stderr, r.stderr


def test_each_file_gets_its_own_nearest_configuration(cli, tmp_path):
    for name, table in (("a", 'ignore = ["SPL001"]\n'), ("b", 'select = ["SPL0"]\n')):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text("[tool.sparselint]\n" + table)
        (tmp_path / name / "m.py").write_text(BAD)
    (tmp_path / "c").mkdir()  # no configuration anywhere: the defaults
    (tmp_path / "c" / "m.py").write_text(BAD)
    expected = [os.path.join("b", "m.py"), os.path.join("c", "m.py")]
    for order in (("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")):
        r = cli("--no-cache", *order, cwd=tmp_path)
        assert flagged(r) == expected, (order, r.stdout)
        files = [os.path.join(d, "m.py") for d in order]
        assert flagged(cli("--no-cache", *files, cwd=tmp_path)) == expected, order
    # --config overrides every file's own
    (tmp_path / "all.toml").write_text("[tool.sparselint]\nignore = ['SPL0']\n")
    r = cli("--no-cache", "--config", "all.toml", "a", "b", "c", cwd=tmp_path)
    assert r.returncode == 0 and flagged(r) == []


def test_a_nested_configuration_applies_beneath_it(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.sparselint]\nextend-exclude = ['legacy']\n")
    (tmp_path / "pkg" / "legacy").mkdir(parents=True)
    (tmp_path / "pkg" / "legacy" / "old.py").write_text(BAD)
    (tmp_path / "pkg" / "vendored").mkdir()
    (tmp_path / "pkg" / "vendored" / "pyproject.toml").write_text("[tool.sparselint]\nignore = ['SPL001']\n")
    (tmp_path / "pkg" / "vendored" / "v.py").write_text(BAD)
    (tmp_path / "pkg" / "m.py").write_text(BAD)
    r = cli("--no-cache", ".", cwd=tmp_path)
    assert flagged(r) == [os.path.join("pkg", "m.py")], r.stdout


def test_force_exclude_applies_the_built_in_excludes_to_named_files(cli, tmp_path):
    for folder in ("dist", ".ipynb_checkpoints", os.path.join("venv2", "lib", "site-packages"), "pkg"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "gen.py").write_text(BAD)
    named = [os.path.join(f, "gen.py") for f in ("dist", ".ipynb_checkpoints",
                                               os.path.join("venv2", "lib", "site-packages"), "pkg")]
    # as `sparselint .` would: only pkg/gen.py
    assert flagged(cli("--no-cache", ".", cwd=tmp_path)) == [os.path.join("pkg", "gen.py")]
    r = cli("--no-cache", "--force-exclude", *named, cwd=tmp_path)
    assert flagged(r) == [os.path.join("pkg", "gen.py")], r.stdout
    # named without --force-exclude: what is asked is checked, as in ruff
    assert len(flagged(cli("--no-cache", *named, cwd=tmp_path))) == 4


def test_a_folder_named_build_is_checked_as_ruff_does(cli, tmp_path):
    # `build` is not among ruff's default excludes: a package may well be named so
    (tmp_path / "pkg" / "build").mkdir(parents=True)
    (tmp_path / "pkg" / "build" / "graph.py").write_text(BAD)
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "gen.py").write_text(BAD)
    r = cli("--no-cache", ".", cwd=tmp_path)
    assert flagged(r) == [os.path.join("pkg", "build", "graph.py")], r.stdout


def test_an_exclude_path_is_relative_to_its_configuration(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.sparselint]\nextend-exclude = ['./src/gen.py', 'src/old/', '**/vendored.py']\n")
    for name in ("gen.py", "keep.py", os.path.join("old", "o.py"), "vendored.py", os.path.join("sub", "gen.py")):
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text(BAD)
    (tmp_path / "vendored.py").write_text(BAD)
    expected = [os.path.join("src", "keep.py"), os.path.join("src", "sub", "gen.py")]
    assert flagged(cli("--no-cache", ".", cwd=tmp_path)) == expected
    # from a sub-folder, the patterns still start at the configuration's folder
    r = cli("--no-cache", ".", cwd=tmp_path / "src")
    assert flagged(r) == ["keep.py", os.path.join("sub", "gen.py")], r.stdout
    r = cli("--no-cache", "--force-exclude", "gen.py", os.path.join("old", "o.py"), "keep.py", cwd=tmp_path / "src")
    assert flagged(r) == ["keep.py"], r.stdout
