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


def test_the_exception_is_the_one_torch_raised(tmp_path):
    """Recording never changes the program: the very exception object torch raised comes out,
    with torch's message, and a program that catches it goes on as it would."""
    session, raised, path = run_under_session(tmp_path, """\
        import torch
        c = torch.eye(3).to_sparse()
        both = torch.cat([c, c])
        try:
            both.values()
        except RuntimeError as exc:
            caught = exc
        caught.marker = "seen by the program"
        raise caught
    """)
    assert getattr(raised, "marker", None) == "seen by the program"
    [d] = session.findings()
    assert (d.code, d.line) == ("SPL001", 5)


def test_optimizer_step_is_recorded_with_its_construction_and_the_embedding(tmp_path):
    """SPL401 is seen in the step pre-hook before torch raises: the finding is at `step()`,
    its evidence names the optimizer's construction and the `sparse=True` embedding."""
    session, raised, path = run_under_session(tmp_path, """\
        import torch
        import torch.nn as nn
        emb = nn.Embedding(10, 3, sparse=True)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """)
    assert str(raised).startswith("Adam does not support sparse gradients")
    [d] = session.findings()
    assert (d.code, d.line, d.when) == ("SPL401", 6, "step")
    assert sorted(e.line for e in d.evidence) == [3, 4]
    assert session.counts()[(d.code, d.path, d.line, d.column)] == (1, True)


def test_backward_failure_names_the_forward_op(tmp_path):
    session, raised, path = run_under_session(tmp_path, """\
        import torch
        i = torch.tensor([[0, 1], [1, 0]])
        s = torch.sparse_coo_tensor(i, torch.ones(2, requires_grad=True), (2, 2))
        t = torch.tanh(s)
        torch.sparse.sum(t).backward()
    """)
    assert isinstance(raised, NotImplementedError)
    [d] = session.findings()
    assert (d.code, d.line) == ("SPL502", 5)
    assert 4 in [e.line for e in d.evidence]


def test_silent_forced_flag_is_proven_on_the_indices(tmp_path):
    """`_coalesced_(True)` is a hazard only on unsorted or repeated indices; the check looks
    at them with torch calls of its own, which do not come back into the mode."""
    session, raised, path = run_under_session(tmp_path, """\
        import torch
        bad = torch.sparse_coo_tensor(torch.tensor([[2, 0, 0], [0, 1, 1]]), torch.ones(3), (3, 3))
        bad._coalesced_(True)
        good = torch.sparse_coo_tensor(torch.tensor([[0, 1, 2], [0, 1, 1]]), torch.ones(3), (3, 3))
        good._coalesced_(True)
    """)
    assert raised is None
    assert [(d.code, d.line) for d in session.findings()] == [("SPL005", 3)]
    assert session.counts()[("SPL005", path, 3, 1)] == (1, False)


def test_a_hazard_in_a_loop_is_one_finding_with_a_count(tmp_path):
    session, raised, path = run_under_session(tmp_path, """\
        import torch
        for _ in range(5):
            emb = torch.nn.Embedding(10, 3, sparse=True)
            emb(torch.tensor([1, 1])).sum().backward()
            emb.weight.grad.data.zero_()
    """)
    assert raised is None
    [d] = session.findings()
    assert (d.code, d.line) == ("SPL004", 5)
    assert session.counts()[(d.code, d.path, d.line, d.column)] == (5, False)


def test_dense_programs_record_nothing_and_torch_is_put_back(tmp_path):
    import torch.optim
    from torch.autograd.function import Function
    before = (torch.optim.Optimizer.__init__, torch.nn.Embedding.__init__, Function.__dict__["apply"])
    session, raised, _ = run_under_session(tmp_path, """\
        import torch
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.Adam(model.parameters(), weight_decay=0.1)
        for _ in range(3):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    """)
    assert raised is None and session.findings() == []
    after = (torch.optim.Optimizer.__init__, torch.nn.Embedding.__init__, Function.__dict__["apply"])
    assert after == before
    assert not torch.overrides._is_torch_function_mode_enabled()


def test_a_broken_check_does_not_change_the_program(tmp_path, monkeypatch, capfd):
    """A bug in a check is reported once on stderr; the program's result is the same."""
    from sparselint.runtime.checks import silent
    monkeypatch.setattr(silent, "_coalesced_indices", lambda t: 1 / 0)
    session, raised, _ = run_under_session(tmp_path, """\
        import torch
        s = torch.sparse_coo_tensor(torch.tensor([[1, 0]]), torch.ones(2), (3,))
        s._coalesced_(True)
        RESULT = s.to_dense().tolist()
    """)
    assert raised is None
    assert "sparselint runtime: check" in capfd.readouterr().err


def test_the_fixture_runner_saves_the_report_when_the_script_raises(tmp_path):
    from sparselint.runtime import report
    from sparselint.testing import run_script_under_checker
    script = tmp_path / "prog.py"
    script.write_text("import torch\nc = torch.eye(2).to_sparse()\nx = torch.cat([c, c])\nx.indices()\n")
    out = tmp_path / "run.json"
    run = run_script_under_checker(str(script), str(out))
    assert run.returncode == 1 and "Cannot get indices on an uncoalesced tensor" in run.stderr
    [d] = report.load(str(out))
    assert (d.code, d.line, d.path) == ("SPL001", 4, str(script))


def test_the_fresh_interpreter_runner_saves_the_report_too(tmp_path, monkeypatch):
    """Where fork is not used (SPARSELINT_FORK_RUNNER=0), the script runs in a new
    interpreter under the checker, and the report is the same."""
    from sparselint.runtime import report
    from sparselint.testing import run_script_under_checker
    monkeypatch.setenv("SPARSELINT_FORK_RUNNER", "0")
    script = tmp_path / "prog.py"
    script.write_text("import torch\nemb = torch.nn.Embedding(4, 2, sparse=True)\n"
                      "emb(torch.tensor([1, 1])).sum().backward()\nemb.weight.grad.clamp_(-1, 1)\n")
    out = tmp_path / "run.json"
    run = run_script_under_checker(str(script), str(out))
    assert run.returncode == 1 and "aten::clamp_" in run.stderr
    [d] = report.load(str(out))
    assert (d.code, d.line, [e.line for e in d.evidence]) == ("SPL302", 4, [2])


def test_an_error_in_a_closure_given_to_step_is_the_users(tmp_path):
    """Errors inside `optimizer.step()` belong to the step check, except in the closure the
    user gave it, which is the user's own code again."""
    session, raised, path = run_under_session(tmp_path, """\
        import torch
        w = torch.nn.Parameter(torch.ones(3))
        adj = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (3, 3))
        opt = torch.optim.SGD([w], lr=0.1)
        def closure():
            opt.zero_grad()
            loss = (adj + torch.eye(3)).sum() * w.sum()
            return loss
        opt.step(closure)
    """)
    assert str(raised).startswith("add(sparse, dense) is not supported")
    assert [(d.code, d.line) for d in session.findings()] == [("SPL501", 7)]


def test_a_check_that_fails_to_install_leaves_torch_as_it_was(monkeypatch):
    import torch.optim
    from sparselint.runtime.checks import silent
    before = (torch.optim.Optimizer.__init__, torch.nn.Embedding.__init__)

    def broken(session):
        raise RuntimeError("cannot install")
    monkeypatch.setattr(silent, "install", broken)
    with pytest.raises(RuntimeError, match="cannot install"):
        with Session():
            pass
    assert (torch.optim.Optimizer.__init__, torch.nn.Embedding.__init__) == before
    assert not torch.overrides._is_torch_function_mode_enabled()
