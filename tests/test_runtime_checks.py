"""The run-time checks, in-process: a small program runs under `Session()` and the finding
must carry the static rule's code, the program's own file and line, and the root cause."""
import os
import textwrap

import pytest

torch = pytest.importorskip("torch")

from sparselint.runtime import Session

pytestmark = pytest.mark.torch


def run_under_session(tmp_path, source, name="prog.py"):
    """Run `source` as a file of its own under a Session; the exception it raises (if any)
    comes back with the session, unchanged."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    code = compile(path.read_text(), str(path), "exec")
    raised = None
    with Session(root=str(tmp_path)) as session:
        try:
            exec(code, {"__name__": "__main__", "__file__": str(path)})
        except Exception as exc:  # noqa: BLE001
            raised = exc
    return session, raised, str(path)


def line_of(path, text):
    with open(path) as fh:
        return next(i for i, l in enumerate(fh, 1) if text in l)


def test_values_of_uncoalesced_is_recorded_at_the_user_line_and_reraised(tmp_path):
    session, raised, path = run_under_session(tmp_path, """\
        import torch
        c = torch.eye(3).to_sparse()
        both = torch.cat([c, c])
        print(both.values())
    """)
    assert isinstance(raised, RuntimeError)
    assert str(raised).startswith("Cannot get values on an uncoalesced tensor")
    [d] = session.findings()
    assert (d.code, d.path, d.line) == ("SPL001", os.path.abspath(path), 4)
    assert [e.line for e in d.evidence] == [3]  # where the uncoalesced tensor was built
    assert session.counts()[(d.code, d.path, d.line, d.column)] == (1, True)


def test_values_of_coalesced_tensor_records_nothing(tmp_path):
    session, raised, _ = run_under_session(tmp_path, """\
        import torch
        c = torch.eye(3).to_sparse()
        print(torch.cat([c, c]).coalesce().values())
    """)
    assert raised is None
    assert session.findings() == []
