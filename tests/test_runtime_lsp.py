"""The language server with `runtime-report` configured: findings the run saw are shown as
confirmed, what only the run saw is shown too; driven by a real LSP client."""
import json
import os
import subprocess
import sys

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pygls", reason="needs the lsp extra: pip install -e '.[test,lsp]'")
pytest.importorskip("torch")

from lsprotocol import types as lsp  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from lsp_session import run, server  # noqa: E402
from test_runtime_merge import CONFIRMED, NOT_SEEN, PROGRAM, RUN_ONLY  # noqa: E402

from conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.torch


def test_confirmed_findings_are_shown_as_such(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "reports").mkdir(exist_ok=True)
    r = subprocess.run([sys.executable, "-m", "sparselint.runtime", "--report", "reports/run.json", "prog.py"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 1 and (tmp_path / "reports" / "run.json").is_file(), r.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.sparselint]\nruntime-report = 'reports/run.json'\n")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "pyproject.toml").write_text("[tool.sparselint]\n")
    (tmp_path / "plain" / "prog.py").write_text(PROGRAM)

    async def scenario():
        async with server(str(tmp_path)) as s:
            uri = s.open(str(tmp_path / "prog.py"), PROGRAM)
            diags = await s.diagnostics(uri, lambda d: len(d) == 3)
            by_line = {d.range.start.line + 1: d for d in diags}
            assert sorted(by_line) == [CONFIRMED, RUN_ONLY, NOT_SEEN]
            assert by_line[CONFIRMED].message.splitlines()[0].endswith("[confirmed at run time]")
            assert by_line[CONFIRMED].data["runtime"] == "confirmed"
            assert by_line[RUN_ONLY].message.splitlines()[0].endswith("[seen at run time only]")
            assert by_line[RUN_ONLY].code == "SPL001" and by_line[RUN_ONLY].data["runtime"] == "run-only"
            assert by_line[NOT_SEEN].data["runtime"] == "not-seen" and "run time" not in by_line[NOT_SEEN].message
            # a new run saw nothing: the editor hears of the report's change and drops the marks
            report = tmp_path / "reports" / "run.json"
            data = json.loads(report.read_text())
            data["findings"] = []
            report.write_text(json.dumps(data))
            s.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
                lsp.FileEvent(uri=from_fs_path(str(report)), type=lsp.FileChangeType.Changed)]))
            again = await s.diagnostics(uri, lambda d: len(d) == 2)
            assert {d.data["runtime"] for d in again} == {"not-seen"}
            # a folder whose configuration names no report: the static findings, unmarked
            other = s.open(str(tmp_path / "plain" / "prog.py"), PROGRAM)
            plain = await s.diagnostics(other, lambda d: bool(d))
            assert len(plain) == 2 and all("runtime" not in d.data for d in plain)

    run(scenario, timeout=120)
