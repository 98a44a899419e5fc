"""[tool.sparselint] in pyproject.toml, exclusions and .gitignore, through the real CLI."""
import subprocess

BAD = ("import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.values())\n")


def project(tmp_path, table):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.sparselint]\n" + table)
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "model.py").write_text(BAD)
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_model.py").write_text(BAD)
    return tmp_path


def run(cli, tmp_path, *args):
    return cli("--no-cache", *args, cwd=tmp_path)


def test_select_and_per_file_ignores(cli, tmp_path):
    project(tmp_path, 'ignore = ["SPL1"]\n[tool.sparselint.per-file-ignores]\n"tests/*" = ["SPL001"]\n')
    r = run(cli, tmp_path, ".")
    assert r.returncode == 1
    assert "model.py" in r.stdout and "test_model.py" not in r.stdout


def test_nearest_pyproject_wins_and_config_flag_overrides(cli, tmp_path):
    project(tmp_path, 'select = ["SPL1"]\n')
    assert run(cli, tmp_path, "pkg").returncode == 0
    other = tmp_path / "other.toml"
    other.write_text("[tool.sparselint]\nselect = ['SPL001']\n")
    assert run(cli, tmp_path, "--config", str(other), "pkg").returncode == 1


def test_exclude_and_force_exclude(cli, tmp_path):
    project(tmp_path, 'extend-exclude = ["tests"]\n')
    r = run(cli, tmp_path, ".")
    assert "test_model.py" not in r.stdout and "model.py" in r.stdout
    assert "test_model.py" in run(cli, tmp_path, "tests/test_model.py").stdout
    assert run(cli, tmp_path, "--force-exclude", "tests/test_model.py").returncode == 0


def test_gitignore_is_respected_by_default(cli, tmp_path):
    project(tmp_path, "")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "tests" / ".gitignore").write_text("test_*.py\n")
    r = run(cli, tmp_path, ".")
    assert "test_model.py" not in r.stdout and "model.py" in r.stdout
    assert "test_model.py" in run(cli, tmp_path, "--no-respect-gitignore", ".").stdout


def test_bad_configuration_is_exit_2_naming_the_key(cli, tmp_path):
    for table, needle in (('colour = "red"\n', "colour"), ('select = "SPL001"\n', "select"),
                          ('select = ["XYZ9"]\n', "XYZ9"), ('respect-gitignore = "yes"\n', "respect-gitignore"),
                          ('target-torch-version = 2\n', "target-torch-version")):
        project(tmp_path, table)
        r = run(cli, tmp_path, "pkg")
        assert r.returncode == 2 and needle in r.stderr, (table, r.stderr)
        assert "Traceback" not in r.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.sparselint\nselect = [")
    r = run(cli, tmp_path, "--config", "pyproject.toml", "pkg")
    assert r.returncode == 2 and "not valid TOML" in r.stderr


def test_show_settings(cli, tmp_path):
    project(tmp_path, 'ignore = ["SPL2"]\n')
    r = run(cli, tmp_path, "--show-settings", "pkg")
    assert r.returncode == 0
    assert "config file: " + str(tmp_path / "pyproject.toml") in r.stdout
    assert "SPL201" not in r.stdout.split("rules: ")[1].splitlines()[0]


def test_an_empty_select_selects_no_rule(cli, tmp_path):
    project(tmp_path, "select = []\n")
    r = run(cli, tmp_path, ".")
    assert r.returncode == 0 and ": SPL" not in r.stdout, r.stdout
    assert "rules: \n" in run(cli, tmp_path, "--show-settings", "pkg").stdout
    # a rule named on the command line or added with extend-select still runs
    assert run(cli, tmp_path, "--select", "SPL001", ".").returncode == 1
    project(tmp_path, 'select = []\nextend-select = ["SPL001"]\n')
    assert run(cli, tmp_path, ".").returncode == 1


def test_a_target_torch_version_without_a_table_is_a_warning_naming_the_tables(cli, tmp_path):
    from sparselint.analysis.torchops.optable import available
    shipped = list(available())
    project(tmp_path, 'target-torch-version = "1.13"\n')
    r = run(cli, tmp_path, "pkg")
    assert r.returncode == 1 and "SPL001" in r.stdout  # a warning, not a refusal
    warning = [line for line in r.stderr.splitlines() if "target-torch-version" in line]
    assert len(warning) == 1 and "1.13" in warning[0] and "warning" in warning[0], r.stderr
    assert all(v in warning[0] for v in shipped)
    # a release with a table, or a patch release of one, is silent
    for version in (shipped[0], shipped[-1].rsplit(".", 1)[0], shipped[-1].rsplit(".", 1)[0] + ".9"):
        project(tmp_path, f'target-torch-version = "{version}"\n')
        assert "target-torch-version" not in run(cli, tmp_path, "pkg").stderr, version


def test_a_per_file_ignore_written_from_the_project_folder_matches(cli, tmp_path):
    """As with exclude: `./pkg/model.py` names the same file as `pkg/model.py`, whatever folder
    the run starts in."""
    project(tmp_path, '[tool.sparselint.per-file-ignores]\n"./pkg/model.py" = ["SPL001"]\n')
    r = run(cli, tmp_path, ".")
    assert "test_model.py" in r.stdout and "pkg/model.py" not in r.stdout, r.stdout
    r = cli("--no-cache", "model.py", cwd=tmp_path / "pkg")
    assert r.returncode == 0, r.stdout
