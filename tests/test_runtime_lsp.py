"""The language server with `runtime-report` configured: findings the run saw are shown as
confirmed, what only the run saw is shown too; driven by a real LSP client."""
import os
import subprocess
import sys

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pygls", reason="needs the lsp extra: pip install -e '.[test,lsp]'")
pytest.importorskip("torch")

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
            # a folder whose configuration names no report: the static findings, unmarked
            other = s.open(str(tmp_path / "plain" / "prog.py"), PROGRAM)
            plain = await s.diagnostics(other, lambda d: bool(d))
            assert len(plain) == 2 and all("runtime" not in d.data for d in plain)

    run(scenario, timeout=120)
