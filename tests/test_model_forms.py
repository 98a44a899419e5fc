"""Model forms the engine follows, checked through the real command on small programs:
embedding subclasses, module containers, optimizer param groups, models and tensors handed
through helpers of other modules, custom autograd functions, and literal shapes."""
from __future__ import annotations

import re
import textwrap

import pytest

from conftest import run_cli


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def findings(root, files: dict[str, str], *extra: str) -> set[tuple[str, int, str]]:
    """(file, line, code) of what `sparselint` reports on a project written to `root`."""
    _write(root, files)
    r = run_cli("--no-cache", "--output-format", "pylint", *extra, ".", cwd=root)
    assert r.returncode in (0, 1), r.stderr
    out = set()
    for line in r.stdout.splitlines():
        m = re.match(r"(.+?):(\d+): \[(SPL\d+)\]", line)
        if m:
            out.add((m.group(1).replace("\\", "/"), int(m.group(2)), m.group(3)))
    return out


def line_of(program: str, text: str) -> int:
    """The line of a program written by `_write` that holds `text`."""
    lines = textwrap.dedent(program).lstrip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def full_output(root, files: dict[str, str]) -> str:
    _write(root, files)
    r = run_cli("--no-cache", "--output-format", "full", ".", cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout


CLIP_SUBCLASS = """
import torch
import torch.nn as nn


class SparseEmbedding(nn.Embedding):
    def __init__(self, n, dim):
        {init}


emb = SparseEmbedding(10, 4{args})
emb(torch.tensor([1, 2])).sum().backward()
torch.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
"""


@pytest.mark.parametrize("init, args", [
    ("super().__init__(n, dim, sparse=True)", ""),
    ("nn.Embedding.__init__(self, n, dim, sparse=True)", ""),
    ("super(SparseEmbedding, self).__init__(n, dim, None, None, 2.0, False, True)", ""),
    ("self.sparse = True\n        super().__init__(n, dim, sparse=self.sparse)", ""),
])
def test_an_embedding_subclass_built_sparse_gives_sparse_grads(tmp_path, init, args):
    program = CLIP_SUBCLASS.format(init=init, args=args)
    assert ("main.py", line_of(program, "clip_grad_norm_"), "SPL301") in findings(tmp_path, {"main.py": program})


def test_an_embedding_subclass_passes_its_own_parameter_on(tmp_path):
    program = CLIP_SUBCLASS.replace("def __init__(self, n, dim):", "def __init__(self, n, dim, sparse=False):")
    program = program.format(init="super().__init__(n, dim, sparse=sparse)", args="{args}")
    assert ("main.py", 12, "SPL301") in findings(tmp_path / "a", {"main.py": program.format(args=", sparse=True")})
    assert findings(tmp_path / "b", {"main.py": program.format(args="")}) == set()
    assert findings(tmp_path / "c", {"main.py": program.format(args=", sparse=False")}) == set()


@pytest.mark.parametrize("init", [
    "super().__init__(n, dim, sparse=False)",
    "super().__init__(n, dim)",
    "self.sparse = False\n        super().__init__(n, dim, sparse=self.sparse)",
])
def test_an_embedding_subclass_built_dense_is_silent(tmp_path, init):
    assert findings(tmp_path, {"main.py": CLIP_SUBCLASS.format(init=init, args="")}) == set()


def test_an_embedding_subclass_of_another_module(tmp_path):
    files = {
        "layers.py": """
            import torch.nn as nn


            class SparseBag(nn.EmbeddingBag):
                def __init__(self, n, dim):
                    super().__init__(n, dim, mode="sum", sparse=True)
        """,
        "main.py": """
            import torch
            from layers import SparseBag

            emb = SparseBag(10, 4)
            opt = torch.optim.Adam(emb.parameters(), lr=0.1)
            emb(torch.tensor([[1, 2]])).sum().backward()
            opt.step()
        """,
    }
    assert ("main.py", 5, "SPL401") in findings(tmp_path / "sparse", files)
    files["layers.py"] = files["layers.py"].replace("sparse=True", "sparse=False")
    assert findings(tmp_path / "dense", files) == set()


CONTAINER = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.towers = nn.ModuleList([nn.Embedding(10, 4, sparse=True), nn.Embedding(10, 4)])
        self.heads = nn.ModuleDict({{"user": nn.Embedding(10, 4, sparse=True), "item": nn.Linear(4, 4)}})
        self.stack = nn.Sequential(nn.Embedding(10, 4, sparse=True), nn.Linear(4, 1))


net = Net()
part = {part}
opt = torch.optim.Adam(part.parameters(), lr=0.1)
"""


@pytest.mark.parametrize("part, sparse", [
    ("net.towers[0]", True), ("net.towers[1]", False),
    ('net.heads["user"]', True), ('net.heads["item"]', False),
    ("net.stack[0]", True), ("net.stack[1]", False),
    ('nn.ModuleDict({"e": nn.Embedding(3, 2, sparse=True)})["e"]', True),
])
def test_indexing_a_module_container_gives_the_stored_module(tmp_path, part, sparse):
    found = findings(tmp_path, {"main.py": CONTAINER.format(part=part)})
    assert found == ({("main.py", 15, "SPL401")} if sparse else set())


@pytest.mark.parametrize("sparse", [True, False])
def test_param_groups_hold_the_optimizers_parameters(tmp_path, sparse):
    program = f"""
        import torch
        import torch.nn as nn

        emb = nn.Embedding(10, 4, sparse={sparse})
        lin = nn.Linear(4, 1)
        opt = torch.optim.SGD([{{"params": lin.parameters()}}, {{"params": emb.parameters()}}], lr=0.1)
        lin(emb(torch.tensor([1, 2]))).sum().backward()
        torch.nn.utils.clip_grad_norm_(opt.param_groups[1]["params"], 1.0)
        torch.nn.utils.clip_grad_norm_(opt.param_groups[0]["params"], 1.0)
        opt.step()
    """
    found = findings(tmp_path, {"main.py": program})
    assert found == ({("main.py", 8, "SPL301")} if sparse else set())


HANDED_ON = {
    "pkg/__init__.py": "from .steps import run\n",
    "pkg/steps.py": """
        from .ops import use


        def run(model):
            use(model)
    """,
    "pkg/ops.py": """
        import torch


        def use(model):
            opt = torch.optim.Adam(model.parameters(), lr=0.1)
            model(torch.tensor([1, 2])).sum().backward()
            opt.step()
    """,
    "main.py": """
        import torch.nn as nn
        from pkg import run

        run(nn.Embedding(10, 4, sparse={sparse}))
    """,
}


@pytest.mark.parametrize("sparse", [True, False])
def test_a_model_handed_through_two_calls_across_modules(tmp_path, sparse):
    files = dict(HANDED_ON, **{"main.py": HANDED_ON["main.py"].format(sparse=sparse)})
    found = findings(tmp_path, files)
    assert found == ({("pkg/ops.py", 5, "SPL401")} if sparse else set())


def test_a_model_handed_on_keeps_the_call_in_this_file_in_evidence(tmp_path):
    files = dict(HANDED_ON, **{"main.py": HANDED_ON["main.py"].format(sparse=True)})
    out = full_output(tmp_path, files)
    assert "SPL401" in out and "main.py:4" in out


INDICES = "torch.tensor([[0, 1], [1, 2]])"  # two entries


@pytest.mark.parametrize("values, bad", [("[1.0, 2.0, 3.0]", True), ("[1.0, 2.0]", False)])
def test_a_literal_shape_reaches_a_callee(tmp_path, values, bad):
    program = f"""
        import torch


        def build(indices, *, n=3):
            return torch.sparse_coo_tensor(indices, torch.tensor({values}), (n, n))


        build({INDICES})
    """
    assert findings(tmp_path, {"main.py": program}) == ({("main.py", 5, "SPL601")} if bad else set())


@pytest.mark.parametrize("values, bad", [("[1.0, 2.0, 3.0]", True), ("[1.0, 2.0]", False)])
def test_a_literal_shape_stored_by_a_constructor_without_tokens(tmp_path, values, bad):
    program = f"""
        import torch


        class Holder:
            def __init__(self):
                self._indices = {INDICES}

            @property
            def indices(self):
                return self._indices


        h = Holder()
        s = torch.sparse_coo_tensor(h.indices, torch.tensor({values}), (3, 3))
    """
    assert findings(tmp_path, {"main.py": program}) == ({("main.py", 14, "SPL601")} if bad else set())


@pytest.mark.parametrize("values, bad", [("[1.0, 2.0, 3.0]", True), ("[1.0, 2.0]", False)])
def test_a_literal_shape_returned_by_another_module(tmp_path, values, bad):
    files = {
        "data/__init__.py": "from .factory import make_indices\n",
        "data/factory.py": f"""
            import torch


            def make_indices():
                return {INDICES}
        """,
        "main.py": f"""
            import torch
            from data import make_indices as build

            s = torch.sparse_coo_tensor(build(), torch.tensor({values}), (3, 3))
        """,
    }
    assert findings(tmp_path, files) == ({("main.py", 4, "SPL601")} if bad else set())


@pytest.mark.parametrize("values, bad", [("[1.0, 2.0, 3.0]", True), ("[1.0, 2.0]", False)])
def test_a_literal_shape_handed_through_two_modules(tmp_path, values, bad):
    files = {
        "steps.py": """
            from ops import use


            def run(x):
                return use(x)
        """,
        "ops.py": f"""
            import torch


            def use(x):
                return torch.sparse_coo_tensor(x, torch.tensor({values}), (3, 3))
        """,
        "main.py": f"""
            import torch
            from steps import run

            run({INDICES})
        """,
    }
    assert findings(tmp_path, files) == ({("ops.py", 5, "SPL601")} if bad else set())


AUTOGRAD = """
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, adj):
        ctx.save_for_backward(adj)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        adj, = ctx.saved_tensors
        rows = adj.indices()[0]
        return grad * 2, None


adj = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3))
Scale.apply(torch.ones(2, requires_grad=True), adj{suffix}).sum().backward()
"""


@pytest.mark.parametrize("suffix, bad", [("", True), (".coalesce()", False)])
def test_what_forward_saves_reaches_backward(tmp_path, suffix, bad):
    found = findings(tmp_path, {"main.py": AUTOGRAD.format(suffix=suffix)})
    assert found == ({("main.py", 13, "SPL001")} if bad else set())


def test_a_shape_saved_for_backward_reaches_it(tmp_path):
    program = AUTOGRAD.format(suffix="").replace(
        "rows = adj.indices()[0]", "s = torch.sparse_coo_tensor(adj, torch.tensor([1.0, 2.0, 3.0]), (3, 3))")
    program = program.replace("adj = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), "
                              "torch.tensor([1.0, 2.0, 3.0]), (3, 3))", "adj = torch.tensor([[0, 1], [1, 2]])")
    assert findings(tmp_path, {"main.py": program}) == {("main.py", 13, "SPL601")}


MODEL = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.adj = torch.eye(3).to_sparse()
        self.w = nn.Parameter(torch.randn(3, 2))

    def forward(self, x):
        out = torch.sparse.mm(self.adj, self.w)
        {edit}
        return out + x
"""

TRAIN = """
import torch
from model import Net


def train(model, steps):
    for step in range(steps):
        loss = model(torch.randn(3, 2)).sum()
        {backward}


train(Net(), 3)
"""


def test_a_forward_hazard_of_another_module_found_from_the_training_loop(tmp_path):
    files = {"model.py": MODEL.format(edit="self.adj.mul_(2)"), "train.py": TRAIN.format(backward="loss.backward()")}
    out = full_output(tmp_path, files)
    assert "model.py:13:9: SPL107" in out
    assert "because: train.py:7: `model(torch.randn(3, 2))` reaches `loss.backward()`" in out


@pytest.mark.parametrize("edit, backward", [
    ("self.adj.mul_(2)", "print(loss)"),  # no backward: the forward alone runs fine
    ("self.adj.clone().mul_(2)", "loss.backward()"),  # a copy is changed, not the saved tensor
])
def test_a_forward_of_another_module_without_a_failing_backward_is_silent(tmp_path, edit, backward):
    files = {"model.py": MODEL.format(edit=edit), "train.py": TRAIN.format(backward=backward)}
    assert findings(tmp_path, files) == set()


RUNS = {
    "embedding subclass": ({"main.py": CLIP_SUBCLASS.format(init="super().__init__(n, dim, sparse=True)", args="")},
                           "main.py", "SparseCPU"),
    "embedding subclass, dense": ({"main.py": CLIP_SUBCLASS.format(init="super().__init__(n, dim)", args="")},
                                  "main.py", None),
    "container item": ({"main.py": CONTAINER.format(part='net.heads["user"]')
                        + "net.heads['user'](torch.tensor([1])).sum().backward()\nopt.step()\n"},
                       "main.py", "Adam does not support sparse gradients"),
    "autograd function": ({"main.py": AUTOGRAD.format(suffix="")}, "main.py", "uncoalesced"),
    "autograd function, coalesced": ({"main.py": AUTOGRAD.format(suffix=".coalesce()")}, "main.py", None),
    "model handed on": (dict(HANDED_ON, **{"main.py": HANDED_ON["main.py"].format(sparse=True)}), "main.py",
                        "Adam does not support sparse gradients"),
    "forward of another module": ({"model.py": MODEL.format(edit="self.adj.mul_(2)"),
                                   "train.py": TRAIN.format(backward="loss.backward()")}, "train.py",
                                  "modified by an inplace operation"),
    "forward of another module, a copy changed": ({"model.py": MODEL.format(edit="self.adj.clone().mul_(2)"),
                                                   "train.py": TRAIN.format(backward="loss.backward()")},
                                                  "train.py", None),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_programs_behave_as_the_findings_say(tmp_path, name):
    """The programs above, run under torch: those reported fail with the error the finding
    names, their twins run."""
    import subprocess
    import sys
    files, main, error = RUNS[name]
    _write(tmp_path, files)
    r = subprocess.run([sys.executable, main], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if error is None:
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode != 0 and error in r.stderr, r.stderr


def test_a_backward_that_never_runs_is_not_followed(tmp_path):
    program = AUTOGRAD.format(suffix="").replace(").sum().backward()", ").sum()")
    assert findings(tmp_path, {"main.py": program}) == set()


@pytest.mark.parametrize("passed, bad", [("sparse=False", False), ("sparse=True", True), ("", True)])
def test_a_subclass_of_an_embedding_subclass_passes_its_own_arguments(tmp_path, passed, bad):
    program = f"""
        import torch
        import torch.nn as nn


        class Base(nn.Embedding):
            def __init__(self, n, dim, sparse=True):
                super().__init__(n, dim, sparse=sparse)


        class Derived(Base):
            def __init__(self, n, dim):
                super().__init__(n, dim, {passed})


        emb = Derived(10, 4)
        emb(torch.tensor([1, 2])).sum().backward()
        torch.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
    """
    assert findings(tmp_path, {"main.py": program}) == ({("main.py", 17, "SPL301")} if bad else set())


def test_a_finding_in_a_models_constructor_is_shown_once_with_its_fix(tmp_path):
    """Building the model in the training file runs its `__init__` there too: the finding is
    listed once, and keeps the fix the model's own file offers."""
    files = {
        "model.py": MODEL.format(edit="").replace(
            "self.adj = torch.eye(3).to_sparse()",
            "self.adj = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.ones(3), (3, 3))\n"
            "        self.rows = self.adj.indices()[0]"),
        "train.py": TRAIN.format(backward="loss.backward()"),
    }
    _write(tmp_path, files)
    r = run_cli("--no-cache", ".", cwd=tmp_path)
    assert r.stdout.count("SPL001") == 1 and "model.py:9:21: SPL001" in r.stdout, r.stdout
    assert "1 hidden fix" in r.stdout, r.stdout


# -- models are made of what their constructor stores (the evaluator runs `__init__`) --

def test_an_embedding_subclass_of_another_module_without_a_constructor(tmp_path):
    files = {
        "layers.py": """
            import torch.nn as nn


            class Table(nn.Embedding):
                pass
        """,
        "train.py": """
            import torch
            from layers import Table

            sparse_table = Table(10, 4, sparse=True)
            dense_table = Table(10, 4)
            opt = torch.optim.Adam(sparse_table.parameters())
            ok = torch.optim.Adam(dense_table.parameters())
        """,
    }
    assert findings(tmp_path, files) == {("train.py", line_of(files["train.py"], "opt = "), "SPL401")}


def test_a_base_constructor_of_another_module_runs_on_the_subclass_instance(tmp_path):
    files = {
        "base.py": """
            import torch.nn as nn


            class Tower(nn.Module):
                def __init__(self, rows, sparse):
                    super().__init__()
                    self.emb = nn.Embedding(rows, 8, sparse=sparse)
        """,
        "train.py": """
            import torch
            import torch.nn as nn
            from base import Tower


            class Ranker(Tower):
                def __init__(self):
                    super().__init__(100, sparse=True)
                    self.head = nn.Linear(8, 1)


            class DenseRanker(Tower):
                def __init__(self):
                    super().__init__(100, sparse=False)


            adam = torch.optim.Adam(Ranker().parameters())
            sparse_adam = torch.optim.SparseAdam(Ranker().parameters())
            fine = torch.optim.Adam(DenseRanker().parameters())
        """,
    }
    train = files["train.py"]
    assert findings(tmp_path, files) == {("train.py", line_of(train, "adam = "), "SPL401"),
                                         ("train.py", line_of(train, "sparse_adam = "), "SPL403")}


def test_a_submodule_the_constructor_cannot_see_leaves_the_model_unknown(tmp_path):
    # `self.encoder` may hold anything: Adam over the model is not flagged, SparseAdam over
    # its known dense head still is
    files = {"train.py": """
        import importlib
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self, name):
                super().__init__()
                self.encoder = getattr(importlib.import_module("encoders"), name)()
                self.head = nn.Linear(8, 1)


        model = Model("bag")
        adam = torch.optim.Adam(model.parameters())
        sparse_adam = torch.optim.SparseAdam(model.head.parameters())
    """}
    assert findings(tmp_path, files) == {("train.py", line_of(files["train.py"], "sparse_adam = "), "SPL403")}


# -- layout guards written as helper functions --

GUARDED = """
    import torch
    from graphs.utils import {helper}


    def num_edges(adj):
        if {helper}(adj):
            return adj.{sparse_op}
        return adj.{dense_op}


    index = torch.tensor([[0, 1, 2], [1, 2, 0]])
    adj = torch.sparse_coo_tensor(index, torch.ones(3), (3, 3))
    num_edges(adj)
"""
GUARD_HELPERS = """
    import torch as th


    def is_coo(t):
        return t.layout == th.sparse_coo


    def is_dense(t):
        \"\"\"Strided, not sparse.\"\"\"
        return not t.is_sparse


    def is_sparse(t):
        print("checking", t.shape)
        return t.is_sparse


    def is_big(t):
        return t.numel() > 1000
"""


def test_a_layout_guard_in_a_helper_of_another_module_guards_the_caller(tmp_path):
    helpers = {"graphs/__init__.py": "", "graphs/utils.py": GUARD_HELPERS}
    guarded = GUARDED.format(helper="is_coo", sparse_op="_nnz()", dense_op="nonzero().size(0)")
    assert findings(tmp_path / "a", {**helpers, "train.py": guarded}) == set()
    swapped = GUARDED.format(helper="is_coo", sparse_op="nonzero().size(0)", dense_op="numel()")
    assert findings(tmp_path / "b", {**helpers, "train.py": swapped}) == {
        ("train.py", line_of(swapped, "nonzero"), "SPL503")}
    negated = GUARDED.format(helper="is_dense", sparse_op="nonzero().size(0)", dense_op="_nnz()")
    assert findings(tmp_path / "c", {**helpers, "train.py": negated}) == set()


def test_a_helper_guard_after_other_statements_and_a_test_that_is_not_a_layout(tmp_path):
    helpers = {"graphs/__init__.py": "", "graphs/utils.py": GUARD_HELPERS}
    guarded = GUARDED.format(helper="is_sparse", sparse_op="_nnz()", dense_op="nonzero().size(0)")
    assert findings(tmp_path / "a", {**helpers, "train.py": guarded}) == set()
    # a size test says nothing of the layout: a small sparse tensor reaches `.nonzero()`
    sized = GUARDED.format(helper="is_big", sparse_op="_nnz()", dense_op="nonzero().size(0)")
    assert findings(tmp_path / "b", {**helpers, "train.py": sized}) == {
        ("train.py", line_of(sized, "nonzero"), "SPL503")}


def test_an_annotated_model_re_exported_by_a_package_in_a_module_another_calls(tmp_path):
    # the class is named through the package's `__init__`, and the annotated function is
    # analysed from the module that calls it, whose own body never ran
    files = {
        "models/__init__.py": "from .net import Net\n",
        "models/net.py": """
            import torch.nn as nn


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.emb = nn.Embedding(10, 3, sparse=True)
        """,
        "helpers.py": """
            import torch
            from models import Net


            def train(model: Net):
                opt = torch.optim.Adam(model.parameters())
                return opt
        """,
        "main.py": """
            from helpers import train
            from models import Net

            train(Net())
        """,
    }
    _write(tmp_path, files)
    r = run_cli("--no-cache", "--output-format", "pylint", "main.py", cwd=tmp_path)
    assert "SPL903" not in r.stdout and r.returncode == 1, r.stdout
    assert findings(tmp_path, files) == {("helpers.py", line_of(files["helpers.py"], "opt = "), "SPL401")}
