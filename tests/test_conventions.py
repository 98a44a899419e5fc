"""What ruff users expect of a linter's command line: its messages, subcommands, options and
output formats, and notebook fixes shown and written per cell. Each test runs the real command."""
import json
import os
import re
import subprocess
import sys
import threading
import time
from xml.etree import ElementTree as ET

import pytest

from conftest import ROOT

# two findings with a safe fix (SPL001), two with only an unsafe one
SAFE = (
    "import torch\n"
    "edges = torch.tensor([[0, 1], [1, 0]])\n"
    "adj = torch.sparse_coo_tensor(edges, torch.ones(2), (2, 2))\n"
    "print(adj.indices().max())\n"
    "print(adj.indices().min())\n"
)
UNSAFE = (
    "import torch\n"
    "s = torch.eye(3).to_sparse().requires_grad_()\n"
    "s.values().mul_(2)\n"
    "t = torch.eye(3).to_sparse().requires_grad_()\n"
    "t.values().mul_(2)\n"
)
CLEAN = "import torch\nx = torch.ones(3)\nprint(x.sum())\n"


def write(path, text):
    path.write_text(text)
    return str(path)


# --- 19: messages and commands --------------------------------------------------------------

def test_summary_counts_every_finding_and_pluralises_fixes(cli, tmp_path):
    safe, unsafe = write(tmp_path / "safe.py", SAFE), write(tmp_path / "unsafe.py", UNSAFE)
    r = cli("--no-cache", safe, unsafe)
    assert "Found 4 findings." in r.stdout
    assert "[*] 2 fixable with the `--fix` option (2 hidden fixes can be enabled with the `--unsafe-fixes` option)." \
        in r.stdout, r.stdout
    assert "fixs" not in r.stdout
    r = cli("--no-cache", "--fix", safe, unsafe)
    # as ruff: `Found` counts the fixed findings too
    assert "Found 4 findings (2 fixed, 2 remaining)." in r.stdout, r.stdout
    assert "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option)." in r.stdout
    assert r.returncode == 1


def test_config_takes_an_inline_setting_as_ruff_does(cli, tmp_path):
    bad = write(tmp_path / "bad.py", SAFE)
    r = cli("--no-cache", "--config", "select = ['SPL2']", bad)
    assert r.returncode == 0 and "All checks passed!" in r.stdout, r.stdout + r.stderr
    r = cli("--no-cache", "--config", "select = ['SPL0']", bad)
    assert r.returncode == 1 and "SPL001" in r.stdout
    # a later setting wins; a file and settings combine
    (tmp_path / "cfg.toml").write_text("[tool.sparselint]\nselect = ['SPL2']\n")
    assert cli("--no-cache", "--config", str(tmp_path / "cfg.toml"), bad).returncode == 0
    r = cli("--no-cache", "--config", str(tmp_path / "cfg.toml"), "--config", "select = ['SPL0']", bad)
    assert r.returncode == 1
    r = cli("--no-cache", "--config", "selekt = ['SPL0']", bad)
    assert r.returncode == 2 and "unknown setting `selekt`" in r.stderr
    r = cli("--no-cache", "--config", "no-such-file.toml", bad)
    assert r.returncode == 2 and "neither a file nor a TOML `KEY = VALUE` setting" in r.stderr
    r = cli("--no-cache", "--config", "select = 1", bad)
    assert r.returncode == 2 and "must be a list of strings" in r.stderr


def test_version_config_and_clean_are_commands_not_paths(cli, tmp_path):
    r = cli("version", cwd=tmp_path)
    assert r.returncode == 0 and re.fullmatch(r"sparselint \d+\.\d+\.\d+\S*\n", r.stdout), r.stdout + r.stderr
    r = cli("config", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.split() == [
        "select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude",
        "respect-gitignore", "target-torch-version", "api-entry-points", "fix", "unsafe-fixes", "output-format",
        "runtime-report"]
    from sparselint.pyproject import KNOWN_KEYS
    assert set(r.stdout.split()) == KNOWN_KEYS
    r = cli("config", "select", cwd=tmp_path)
    assert r.returncode == 0 and "Default value: [\"ALL\"]" in r.stdout and "Type: list[str]" in r.stdout
    assert cli("config", "nope", cwd=tmp_path).returncode == 2
    # clean: every .sparselint_cache beneath the current directory goes, nothing else
    write(tmp_path / "a.py", SAFE)
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "b.py", SAFE)
    (tmp_path / "pyproject.toml").write_text("")
    assert cli("a.py", "sub", cwd=tmp_path).returncode == 1
    assert (tmp_path / ".sparselint_cache").is_dir()
    (tmp_path / "sub" / ".sparselint_cache").mkdir()
    r = cli("clean", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.count("Removing cache at: ") == 2, r.stdout + r.stderr
    assert not (tmp_path / ".sparselint_cache").exists() and not (tmp_path / "sub" / ".sparselint_cache").exists()
    assert (tmp_path / "a.py").read_text() == SAFE and (tmp_path / "sub" / "b.py").exists()


def test_dev_null_and_a_fifo_are_read_as_files(cli, tmp_path):
    r = cli("--no-cache", "/dev/null")
    assert r.returncode == 0 and "All checks passed!" in r.stdout, r.stdout + r.stderr
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as fh:
            fh.write(SAFE)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    r = cli(str(fifo))
    writer.join(timeout=10)
    assert r.returncode == 1 and f"{fifo}:4:7: SPL001" in r.stdout, r.stdout + r.stderr
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    r = cli("--fix", str(fifo))
    writer.join(timeout=10)
    # a fix is never written over a pipe
    assert r.returncode == 2 and "not a regular file, fixes not written" in r.stderr
    assert fifo.is_fifo()


@pytest.mark.parametrize("code", ["SPL900", "SPL901", "SPL902", "SPL903", "SPL904", "SPL905"])
def test_rule_explains_every_engine_code(cli, code):
    r = cli("rule", code)
    assert r.returncode == 0, r.stderr
    assert "## What it does" in r.stdout and "## Why is this bad?" in r.stdout
    assert os.path.isfile(os.path.join(ROOT, "docs", "rules", f"{code}.md"))
    assert code in cli("rule", "--all").stdout


# --- 20: notebooks ---------------------------------------------------------------------------

NB = {
    "metadata": {"kernelspec": {"name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Caf\u00e9\n"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["h\u00e9llo\n"]}],
         "source": ["import torch\n", "edges = torch.tensor([[0, 1], [1, 0]])\n",
                    "adj = torch.sparse_coo_tensor(edges, torch.ones(2), (2, 2))\n"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
         "source": ["x = 1\n", "print(adj.indices().max())\n", "y = 2"]},
    ],
}


def test_notebook_diff_is_per_cell_and_fix_keeps_every_other_byte(cli, tmp_path):
    # the file's own layout: key order, indent 2, \u escapes, no trailing newline
    text = json.dumps(NB, indent=2)
    path = tmp_path / "nb.ipynb"
    path.write_text(text)
    r = cli("--no-cache", "--diff", str(path))
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        f"--- {path}:cell 3", f"+++ {path}:cell 3", "@@ -1,3 +1,3 @@",
        " x = 1", "-print(adj.indices().max())", "+print(adj.coalesce().indices().max())", " y = 2"], r.stdout
    assert path.read_text() == text
    r = cli("--no-cache", "--fix", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert path.read_bytes() == text.replace('"print(adj.indices().max())\\n"',
                                             '"print(adj.coalesce().indices().max())\\n"').encode()


# --- 21: what ruff users reach for ---------------------------------------------------------

def test_output_formats_of_ruff(cli, tmp_path):
    bad = write(tmp_path / "bad.py", SAFE)
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps(NB))
    args = ("--no-cache", bad, str(nb))
    r = cli(*args, "--output-format", "json-lines")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 1 and [(d["code"], d["line"], d["cell"]) for d in rows] == [
        ("SPL001", 4, None), ("SPL001", 5, None), ("SPL001", 2, 3)]
    r = cli(*args, "--output-format", "junit")
    root = ET.fromstring(r.stdout)
    assert root.tag == "testsuites" and root.get("failures") == "3"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [bad, str(nb)]
    case = suites[0].find("testcase")
    assert case.get("name") == "org.sparselint.SPL001" and case.get("line") == "4" and case.find("failure") is not None
    assert "cell 3, line 2" in suites[1].find("testcase/failure").text
    clean = write(tmp_path / "clean.py", CLEAN)
    root = ET.fromstring(cli("--no-cache", clean, "--output-format", "junit").stdout)
    assert root.get("failures") == "0" and root.find("testsuite/testcase").get("name") == "No findings"
    r = cli(*args, "--output-format", "pylint")
    assert r.stdout.splitlines()[0].startswith(f"{bad}:4: [SPL001] `adj.indices()`")
    assert r.stdout.splitlines()[2].startswith(f"{nb}:cell 3:2: [SPL001]")
    assert "Found" not in r.stdout and len(r.stdout.splitlines()) == 3
    r = cli(*args, "--output-format", "grouped")
    lines = r.stdout.splitlines()
    assert lines[:4] == [f"{bad}:", f"  4:7 SPL001 [*] {rows[0]['message']}", f"  5:7 SPL001 [*] {rows[1]['message']}", ""]
    assert lines[4:6] == [f"{nb}:", f"  cell 3:2:7 SPL001 [*] {rows[2]['message']}"] and "Found 3 findings." in r.stdout
    r = cli(*args, "--output-format", "azure")
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"##vso[task.logissue type=error;sourcepath={bad};linenumber=4;columnnumber=7;code=SPL001;]")
    assert "linenumber" not in r.stdout.splitlines()[2] and "]cell 3, line 2: " in r.stdout.splitlines()[2]
    r = cli(*args, "--output-format", "rdjson")
    doc = json.loads(r.stdout)
    assert doc["source"]["name"] == "sparselint" and len(doc["diagnostics"]) == 3
    d = doc["diagnostics"][0]
    assert d["code"]["value"] == "SPL001" and d["location"]["path"] == bad
    assert d["location"]["range"] == {"start": {"line": 4, "column": 7}, "end": {"line": 4, "column": 20}}
    assert d["suggestions"][0]["text"] == "adj.coalesce().indices()"
    assert "range" not in doc["diagnostics"][2]["location"]


def test_output_file_and_show_files(cli, tmp_path):
    bad = write(tmp_path / "bad.py", SAFE)
    write(tmp_path / "clean.py", CLEAN)
    (tmp_path / "notes.txt").write_text("")
    r = cli("--no-cache", "-o", str(tmp_path / "out" / "report.txt"), str(tmp_path))
    assert r.returncode == 1 and r.stdout == ""
    report = (tmp_path / "out" / "report.txt").read_text()
    assert f"{bad}:4:7: SPL001" in report and "Found 2 findings." in report
    r = cli("--output-file", str(tmp_path / "r.json"), "--output-format", "json", bad)
    assert len(json.loads((tmp_path / "r.json").read_text())) == 2
    r = cli("--show-files", str(tmp_path))
    assert r.returncode == 0
    assert r.stdout.splitlines() == [str(tmp_path / "bad.py"), str(tmp_path / "clean.py")]


def test_fix_only_and_exit_non_zero_on_fix(cli, tmp_path):
    safe, unsafe = write(tmp_path / "safe.py", SAFE), write(tmp_path / "unsafe.py", UNSAFE)
    r = cli("--no-cache", "--fix-only", safe, unsafe)
    # what remains is neither listed nor counted against the exit code
    assert r.returncode == 0 and r.stdout == "Fixed 2 findings.\n", r.stdout
    assert "coalesce()" in (tmp_path / "safe.py").read_text()
    write(tmp_path / "safe.py", SAFE)
    r = cli("--no-cache", "--fix-only", "--exit-non-zero-on-fix", safe)
    assert r.returncode == 1 and "Fixed 2 findings." in r.stdout
    r = cli("--no-cache", "--fix-only", unsafe)
    assert r.returncode == 0 and "No findings fixed (2 hidden fixes can be enabled" in r.stdout
    write(tmp_path / "safe.py", SAFE)
    r = cli("--no-cache", "--fix", "--exit-non-zero-on-fix", safe)
    assert r.returncode == 1 and "Found 2 findings (2 fixed, 0 remaining)." in r.stdout
    assert cli("--no-cache", "--fix", safe).returncode == 0
    write(tmp_path / "safe.py", SAFE)
    assert cli("--no-cache", "--fix", "--exit-non-zero-on-fix", "--exit-zero", safe).returncode == 0


def test_no_fix_no_unsafe_fixes_and_isolated_override_the_configuration(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.sparselint]\nfix = true\nunsafe-fixes = true\nselect = ['SPL2']\n")
    write(tmp_path / "safe.py", SAFE)
    write(tmp_path / "unsafe.py", UNSAFE)
    r = cli("--no-cache", "safe.py", cwd=tmp_path)
    assert r.returncode == 0  # SPL2 only: nothing to find
    r = cli("--no-cache", "--isolated", "--no-fix", "safe.py", cwd=tmp_path)
    assert r.returncode == 1 and "SPL001" in r.stdout
    assert (tmp_path / "safe.py").read_text() == SAFE
    r = cli("--no-cache", "--isolated", "--config", "fix = true", "--no-unsafe-fixes", "--select", "ALL",
            "unsafe.py", cwd=tmp_path)
    assert (tmp_path / "unsafe.py").read_text() == UNSAFE and r.returncode == 1
    # the configuration's fix = true and unsafe-fixes = true, without --isolated
    r = cli("--no-cache", "--select", "ALL", "--no-unsafe-fixes", "unsafe.py", "safe.py", cwd=tmp_path)
    assert (tmp_path / "unsafe.py").read_text() == UNSAFE and "coalesce()" in (tmp_path / "safe.py").read_text()
    r = cli("--no-cache", "--isolated", "--config", str(tmp_path / "pyproject.toml"), "safe.py", cwd=tmp_path)
    assert r.returncode == 2 and "--isolated cannot be combined" in r.stderr


def test_extend_exclude_and_per_file_ignores_on_the_command_line(cli, tmp_path):
    (tmp_path / "gen").mkdir()
    (tmp_path / "tests").mkdir()
    write(tmp_path / "gen" / "a.py", SAFE)
    write(tmp_path / "tests" / "t.py", SAFE)
    write(tmp_path / "main.py", SAFE)
    r = cli("--no-cache", "--extend-exclude", "gen", "--per-file-ignores", "tests/*:SPL001", ".", cwd=tmp_path)
    assert r.returncode == 1
    assert "main.py" in r.stdout and "gen" not in r.stdout and "tests" not in r.stdout, r.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.sparselint.per-file-ignores]\n\"main.py\" = [\"SPL001\"]\n")
    r = cli("--no-cache", "--extend-per-file-ignores", "tests/*:SPL0", ".", cwd=tmp_path)
    assert "main.py" not in r.stdout and "tests" not in r.stdout and "gen" in r.stdout, r.stdout
    # --per-file-ignores replaces the configured ones
    r = cli("--no-cache", "--per-file-ignores", "gen/*:SPL0", ".", cwd=tmp_path)
    assert "main.py" in r.stdout and "gen" not in r.stdout, r.stdout
    r = cli("--no-cache", "--per-file-ignores", "tests", ".", cwd=tmp_path)
    assert r.returncode == 2 and "GLOB:CODE" in r.stderr


def test_file_level_noqa_comment(cli, tmp_path):
    # present before this round (suppression.py); pinned here as the file-level exemption ruff users know
    path = write(tmp_path / "a.py", "# sparselint: noqa\n" + SAFE)
    assert cli("--no-cache", path).returncode == 0
    path = write(tmp_path / "b.py", "# sparselint: noqa: SPL001\n" + SAFE + UNSAFE.split("\n", 1)[1])
    r = cli("--no-cache", path)
    assert "SPL001" not in r.stdout and r.stdout.count("SPL102") == 2, r.stdout
    path = write(tmp_path / "c.py", "# sparselint: noqa: SPL999\n" + SAFE)
    assert "SPL001" in cli("--no-cache", path).stdout


def test_watch_checks_again_when_a_file_changes(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(SAFE)
    # `-qw`: the short flags combined, so the runs it starts must not watch in turn
    proc = subprocess.Popen([sys.executable, "-m", "sparselint", "--no-cache", "-qw", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()

    def wait_for(text: str, times: int = 1, timeout: float = 120) -> None:
        end = time.time() + timeout
        while time.time() < end:
            if sum(text in line for line in lines) >= times:
                return
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} in {lines}")

    try:
        wait_for("Watching for file changes.")
        assert sum("SPL001" in line for line in lines) == 2
        path.write_text(CLEAN)
        wait_for("File change detected")
        wait_for("Watching for file changes.", 2)
        time.sleep(1)
        assert sum("SPL001" in line for line in lines) == 2 and lines.count("Watching for file changes.\n") == 2
        assert lines.count("Starting sparselint in watch mode...\n") == 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)
