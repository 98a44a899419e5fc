"""The reduction (what is parsed and walked) is an optimisation: it must never change a
finding. Every fixture, example and hazard is linted twice, reduced and whole, and the
findings compared; unit tests pin what counts as a token and what the reduction keeps."""
import json
import os
from collections import Counter

import pytest
from conftest import FIXTURES, HAZARDS, ROOT, all_fixtures

from sparselint.config import Settings
from sparselint.engine import prefilter_tokens
from sparselint.analysis.relevance.reduce import reduce_source
from sparselint.testing import actual_findings, expected_findings
from sparselint.analysis.relevance.tokens import Tokens

TOKENS = prefilter_tokens(Settings().rules())


def findings(cli, paths, whole: bool):
    env = {"SPARSELINT_NO_REDUCTION": "1"} if whole else {"SPARSELINT_NO_REDUCTION": ""}
    r = cli("--no-cache", "--exit-zero", "--output-format", "json", *paths, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    return sorted((f["path"], f["line"], f["column"], f["code"], f["message"]) for f in json.loads(r.stdout))


def marked_findings():
    """(path, line, code) of every finding marked inline in the fixtures: what this checkout
    itself promises, with nothing beside it."""
    marks = Counter()
    for rel in all_fixtures():
        path = os.path.join(FIXTURES, rel)
        with open(path, encoding="utf-8") as fh:
            for (line, code), n in expected_findings(fh.read()).items():
                marks[(os.path.normpath(path), line, code)] += n
    return marks


def test_reduction_never_changes_a_finding(cli):
    paths = [FIXTURES, os.path.join(ROOT, "examples")]
    reduced = findings(cli, paths, whole=False)
    # The fixtures were there and were checked: reduced, the scripts give exactly their marks
    # (notebook fixtures' marks are cell lines; the fix contract checks those).
    in_fixtures = Counter((os.path.normpath(p), line, code) for p, line, _, code, _ in reduced
                          if os.path.normpath(p).startswith(FIXTURES + os.sep) and p.endswith(".py"))
    assert in_fixtures == marked_findings()
    assert reduced == findings(cli, paths, whole=True)


@pytest.mark.reference
@pytest.mark.skipif(not os.path.isdir(HAZARDS), reason="reference check: ../shared/hazards is not beside this checkout")
def test_reduction_never_changes_a_finding_on_the_reference_hazards(cli):
    reduced = findings(cli, [HAZARDS], whole=False)
    assert len(reduced) >= 53  # every bad hazard is flagged at least once
    assert reduced == findings(cli, [HAZARDS], whole=True)


def kept(source: str, names=()) -> list[str]:
    """The non-blank lines that survive the reduction (None: nothing is parsed)."""
    text = reduce_source(source, TOKENS, names).text
    return None if text is None else [line.strip() for line in text.splitlines() if line.strip()]


def test_tokens_count_only_as_code():
    assert not TOKENS.search("x.supports_sparse=True\ny = _to_sparse(x)\n")
    assert TOKENS.search("emb = nn.Embedding(3, 2, sparse = True)\n")
    # the raw-text test is a superset: strings and comments pass it, the syntax tree does not
    assert kept('"""build it with torch.sparse_coo_tensor(i, v)"""\nimport torch\n# x.to_sparse()\n') is None
    # a lambda's body is code: calling the lambda runs it, and the engine follows that call
    assert kept("import torch\nf = lambda x: x.to_sparse()\nitems = [f]\n") == [
        "import torch", "f = lambda x: x.to_sparse()", "items = [f]"]
    # a reference in a table is not a call
    assert kept("import torch\nTABLE = {torch.Tensor.to_sparse_csr: 1}\n") is None
    assert kept("import torch\nadj = x.to_sparse_csr()\n") == ["import torch", "adj = x.to_sparse_csr()"]


def test_a_name_imported_from_a_token_is_a_token():
    src = "from torch import sparse_coo_tensor as make\nimport os\nadj = make(i, v)\nn = os.sep\n"
    assert TOKENS.search(src)
    assert kept(src) == ["from torch import sparse_coo_tensor as make", "import os", "adj = make(i, v)"]


def test_token_forms():
    t = Tokens(["sparse_coo_tensor()", "to_sparse*()", "optim", "grad.coalesce()", "scale_grad_by_freq=True"])
    assert t.search(b"torch.sparse_coo_tensor\n  (i, v)") and not t.search(b"torch.sparse_coo_tensor_x(")
    assert t.search("torch.optim.SGD") and not t.search("torch.optimize()")
    assert t.search("p.grad . coalesce()") and not t.search("p.grad.coalesce_()")
    assert t.search("Embedding(3, 2, scale_grad_by_freq=True)") and not t.search("e.scale_grad_by_freq = True")
    assert t.matches_word("to_sparse_csr") and not t.matches_word("to_sparse_csr", callee=False)
    assert t.matches_word("optim", callee=False)


def test_what_builds_no_optimizer_is_no_optimizer_token():
    """`optim` counts where an optimizer can be built or picked, not in the base class of an
    `isinstance` test, a submodule, or an optimizer's own members: in torch's sources those
    made 4,000-line classes matter (`isinstance(value, torch.optim.Optimizer)`)."""
    for src in ("import torch\nok = isinstance(o, torch.optim.Optimizer)\n",
                "import torch\nroot = torch.optim.__file__\n",
                "from torch.optim.lr_scheduler import StepLR\nsched = StepLR(o, 3)\n",
                "def step(self):\n    self.optim.step()\n    self.optim.zero_grad()\n"):
        assert not TOKENS.search(src), src
        assert kept(src) is None, src
    for src in ("import torch\nopt = torch.optim.Adam(ps)\n",
                "import torch\nopt = getattr(torch.optim, name)(ps)\n",
                "import torch\nopt = torch.optim.__dict__[name](ps)\n",
                "from torch.optim import Adam\nopt = Adam(ps)\n",
                "import torch\nok = isinstance(o, torch.optim.Optimizer)\nopt = torch.optim.SGD(ps)\n"):
        assert TOKENS.search(src), src
        assert kept(src) is not None and src.splitlines()[-1] in kept(src), src


def test_a_class_touching_another_objects_parameters_owns_none():
    """A test case that reads `model.parameters()` of a model it builds is no model: kept
    whole, its hundreds of unrelated tests were walked whenever one of them mattered."""
    import ast

    from sparselint.analysis.project.models import class_may_own_parameters

    def owner(src):
        return class_may_own_parameters(ast.parse(src).body[0])

    assert not owner("class T(Case):\n    def test(self):\n        m = Net()\n        n = len(list(m.parameters()))\n")
    assert not owner("class V(Tracker):\n    def call(self, fn):\n        return inspect.signature(fn).parameters\n")
    assert owner("class M(Base):\n    def opt(self):\n        return SGD(self.parameters())\n")
    assert owner("class M(Base):\n    def opt(self):\n        return SGD(self.head.parameters())\n")
    assert owner("class M(Base):\n    def opt(self):\n        return super().named_parameters()\n")
    assert owner("class M(Base):\n    def __init__(self):\n        self.e = nn.Embedding(3, 2)\n")


def test_an_augmented_assignment_reads_its_target():
    """`adj += d` reads `adj`: with a literal size nothing else ties it to the constructor,
    and an earlier reduction blanked it, and lost the SPL501 finding."""
    src = "import torch\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\nadj += torch.eye(3)\n"
    assert kept(src) == ["import torch", "adj = torch.sparse_coo_tensor(i, v, (3, 3))", "adj += torch.eye(3)"]
    assert actual_findings(src) == {(3, "SPL501"): 1}


HELPER_CALLED_WITH_SPARSE = '''\
import torch


def first_values(a):
    return a.values()  # SPL001


def train():
    i = torch.tensor([[0, 1], [1, 0]])
    adj = torch.sparse_coo_tensor(i, torch.ones(2))
    first_values(adj)
'''


def test_a_helper_without_tokens_called_with_a_sparse_tensor_is_kept():
    """A helper holding no token is where the hazard is when the caller passes it a sparse
    tensor; an earlier reduction blanked it, and lost the finding."""
    assert "def first_values(a):" in kept(HELPER_CALLED_WITH_SPARSE)
    assert actual_findings(HELPER_CALLED_WITH_SPARSE) == {(5, "SPL001"): 1}


TEST_CLASS = '''\
import torch
import unittest


class TestOps(unittest.TestCase):
    limit = 3

    def _first(self, a):
        return a.values()  # SPL001

    def test_values(self):
        adj = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2))
        self._first(adj)

    def test_dense(self):
        print(torch.ones(3).sum())

    def test_more_dense(self):
        print(torch.zeros(3).sum())
'''


def test_a_class_nothing_instantiates_keeps_only_the_methods_that_matter():
    lines = kept(TEST_CLASS)
    assert "def _first(self, a):" in lines and "def test_values(self):" in lines
    assert "def test_dense(self):" not in lines and "def test_more_dense(self):" not in lines
    assert "limit = 3" in lines  # class-level statements stay with their class
    assert actual_findings(TEST_CLASS) == {(9, "SPL001"): 1}


def test_a_class_instantiated_by_code_that_matters_is_kept_whole():
    src = TEST_CLASS + "\n\ncase = TestOps()\ncase.adj = torch.eye(3).to_sparse()\n"
    lines = kept(src)
    assert "def test_dense(self):" in lines and "case = TestOps()" in lines


@pytest.mark.parametrize("name", ["gcn_helpers", "trainer_class", "lightning_style"])
def test_program_fixtures_lose_nothing_to_the_reduction(name, monkeypatch):
    path = os.path.join(FIXTURES, "programs", f"{name}_bad.py")
    source = open(path).read()
    reduced = actual_findings(source, path)
    monkeypatch.setenv("SPARSELINT_NO_REDUCTION", "1")
    assert reduced and reduced == actual_findings(source, path)


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "reduction")


@pytest.mark.parametrize("name, expected", [
    # a global constant read only by a function that matters
    ("global_constant_read_by_factory.py", [(10, "SPL402")]),
    # a global flag that turns clipping off: lost, it was a false alarm
    ("global_flag_guards_clipping.py", []),
    # `self.weight_decay` read by a method that matters, set in `__init__`
    ("module_never_instantiated_here.py", [(18, "SPL402")]),
    # `self.max_grad_norm = None` in `__init__` guards the clipping
    ("attribute_set_in_init_guards_clipping.py", []),
    # `def __init__(self, ..., sparse=True)`: a default is a keyword too
    ("sparse_default_in_subclass.py", [(10, "SPL401")]),
    # `self.model` built in `__init__` from a model class of another module
    (os.path.join("project", "trainer.py"), [(13, "SPL401")]),
    # a model subclass: every method sees the embedding its base builds
    ("subclass_of_a_model_base.py", [(14, "SPL401"), (17, "SPL001")]),
])
def test_shapes_a_review_found_the_reduction_changed(cli, name, expected):
    path = os.path.join(DATA, name)
    reduced = findings(cli, [path], whole=False)
    assert [(line, code) for _, line, _, code, _ in reduced] == expected
    assert reduced == findings(cli, [path], whole=True)


def _table(entries: list[str]) -> str:
    """A module-level list of more than `MAX_CONTEXT_LINES` lines."""
    return "OPS = [\n" + "".join(f"    {e},\n" for e in entries) + "]\n"


def test_a_table_holding_a_token_only_in_its_lambdas_is_not_parsed():
    src = ("import torch\n\n\ndef plain(x):\n    return x + 1\n\n\n"
           + _table(["dict(op=lambda x: x.to_sparse(), sample=plain)"] + [f"dict(op=None, n={i})" for i in range(60)]))
    assert kept(src) is None or not any(line.startswith("OPS") for line in kept(src))


def test_a_table_holding_functions_that_matter_as_values_keeps_them_only():
    src = ("import torch\n\n\ndef make(n):\n    return torch.sparse_coo_tensor(torch.tensor([[0], [1]]), torch.ones(1))"
           "\n\n\ndef plain(x):\n    return x + 1\n\n\n"
           + _table(["dict(sample=make, other=plain)"] + [f"dict(sample=plain, n={i})" for i in range(60)]))
    lines = kept(src)
    assert "def make(n):" in lines
    assert "OPS = [" not in lines and "def plain(x):" not in lines
    # a short table is still code that may call what it holds
    short = src.split("OPS = [")[0] + "OPS = [dict(sample=make, other=plain)]\n"
    assert "OPS = [dict(sample=make, other=plain)]" in kept(short)


def test_a_table_whose_own_code_holds_a_token_is_kept():
    src = "import torch\n\n\n" + _table(["torch.eye(3).to_sparse()"] + [f"torch.ones({i})" for i in range(60)])
    assert "OPS = [" in kept(src)


DECORATED = '''\
import torch

REGISTRY = {}


def register(fn):
    REGISTRY[fn.__name__] = fn
    return fn


@register
def build():
    return torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2))


@register
def dense_one():
    return torch.ones(3)


@register
def dense_two():
    return torch.zeros(3)


adj = build()
print(adj.indices())  # SPL001
'''


def test_a_decorator_given_a_function_that_matters_does_not_keep_its_other_functions():
    """`register` is given `build`: it is kept; `dense_one` and `dense_two` get nothing from
    `build` by being registered too (a registry that code kept reads would keep them all)."""
    lines = kept(DECORATED)
    assert "def register(fn):" in lines and "def build():" in lines and "adj = build()" in lines
    assert "def dense_one():" not in lines and "def dense_two():" not in lines
    assert actual_findings(DECORATED) == {(27, "SPL001"): 1}


HELD_BY_A_LIBRARY = '''\
import torch
import unittest


class Suite(unittest.TestCase):
    def test_values(self):
        adj = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2))
        adj.values().add_(1)

    def test_dense(self):
        print(torch.ones(3).sum())


unittest.TestLoader().loadTestsFromTestCase(Suite)
'''


def test_a_class_a_library_call_holds_as_a_value_is_not_made_whole():
    lines = kept(HELD_BY_A_LIBRARY)
    assert "def test_values(self):" in lines and "def test_dense(self):" not in lines


def test_a_class_called_through_keeps_what_the_call_runs():
    """`Fn.apply(x)` calls the class: its `forward` and `backward` run there."""
    src = '''\
import torch


class Carry(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, saved):
        ctx.save_for_backward(saved)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        x = ctx.saved_tensors[0]
        s = torch.sparse_coo_tensor(x, torch.tensor([1.0, 2.0, 3.0]), (3, 3))  # SPL601
        return grad * 2, None


Carry.apply(torch.ones(2, requires_grad=True), torch.tensor([[0, 1], [1, 2]])).sum().backward()
'''
    assert "def forward(ctx, x, saved):" in kept(src)
    assert actual_findings(src) == {(13, "SPL601"): 1}


TESTS_READING_A_CLASS = '''\
import torch
import unittest


def build():
    return torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2))


class Helpers:
    limit = 3

    @staticmethod
    def first(a):
        return a.values()  # SPL001

    @staticmethod
    def unrelated(a):
        return a.sum()


class Common(unittest.TestCase):
    def test_values(self):
        Helpers.first(build())


class Suite(Common):
    def test_dense(self):
        print(torch.ones(3).sum())

    def test_more_dense(self):
        print(torch.zeros(3).sum())
'''


def test_a_class_read_only_through_its_attributes_keeps_the_members_read():
    """`Helpers.first(...)` runs `first`, not `unrelated`: a class nothing builds is not kept
    whole for a member read through it (in torch's RPC tests, `RpcTest._slow_add` kept a
    2,900-line class)."""
    lines = kept(TESTS_READING_A_CLASS)
    assert "def first(a):" in lines and "limit = 3" in lines
    assert "def unrelated(a):" not in lines
    assert actual_findings(TESTS_READING_A_CLASS) == {(14, "SPL001"): 1}


def test_a_subclass_of_a_class_that_matters_keeps_its_header_only():
    """`Suite(Common)` inherits `test_values`; its own tests get nothing from `Common`."""
    lines = kept(TESTS_READING_A_CLASS)
    assert "class Suite(Common):" in lines
    assert "def test_dense(self):" not in lines and "def test_more_dense(self):" not in lines


def test_a_member_inherited_from_a_library_keeps_the_class_whole():
    src = TESTS_READING_A_CLASS.replace("class Helpers:", "class Helpers(Base):").replace(
        "Helpers.first(build())", "Helpers.first(build())\n        Helpers.inherited(build())")
    assert "def unrelated(a):" in kept(src)


def test_an_isinstance_test_and_a_layer_named_but_not_built_make_nothing_matter():
    """`isinstance(v, Helpers)` runs none of `Helpers`' code, and `ty is nn.Parameter` builds
    no parameter: torch's tracing code kept classes whole for both."""
    import ast

    from sparselint.analysis.project.models import class_may_own_parameters

    src = TESTS_READING_A_CLASS.replace("Helpers.first(build())", "Helpers.first(build())\n        ok = isinstance(self, Suite)")
    lines = kept(src)
    assert "class Suite(Common):" in lines and "def test_dense(self):" not in lines

    def owner(text):
        return class_may_own_parameters(ast.parse(text).body[0])

    assert not owner("class V(Tracker):\n    def f(self, ty):\n        return ty is torch.nn.parameter.Parameter\n")
    assert not owner("class V(Tracker):\n    def f(self, v):\n        return isinstance(v, nn.Parameter)\n")
    assert owner("class M(Base):\n    def __init__(self):\n        self.e = nn.Embedding.from_pretrained(w, sparse=True)\n")
    assert owner("class M(nn.Embedding):\n    pass\n")
    assert owner("class M(Base):\n    def __init__(self):\n        self.w = Parameter(torch.zeros(3))\n")


LAYOUT_TESTS = '''
import torch


def is_coo(t):
    return t.layout == torch.sparse_coo


def degree(adj):
    if adj.is_sparse:
        return torch.bincount(count(adj))
    return adj.sum(dim=1)


def count(adj):
    return adj.indices()[0]


def weights(adj):
    if is_coo(adj):
        return adj.values()
    return adj


def report(adj):
    return {"degree": degree(adj).tolist()}


def _init_group(group):
    for p in group["params"]:
        if p.grad.is_sparse:
            raise RuntimeError("no sparse gradients")
    return group.values()
'''


def test_a_layout_test_keeps_its_function_and_helpers_not_its_callers():
    """An entry point's layout test is analysed where it is, with what it admits; the
    function calling it passes what nobody knows (torch's tracer was kept whole for one
    `is_sparse` in a helper). A layout predicate marks the functions that call it. A private
    function is no entry point (torch's optimizers test `p.grad.is_sparse` in one)."""
    from sparselint.engine import entry_tokens

    words = entry_tokens(tuple(Settings().rules())).words
    lines = reduce_source(LAYOUT_TESTS, TOKENS, (), None, words).text
    assert "def degree(adj):" in lines and "def count(adj):" in lines
    assert "def weights(adj):" in lines and "def is_coo(t):" in lines
    assert "def report(adj):" not in lines and "def _init_group(group):" not in lines


def test_a_token_in_a_comment_of_an_imported_helper_makes_nothing_matter(tmp_path):
    """A comment naming `torch/optim/lr_scheduler.py` in a helper of torch's compiler made
    every module importing it matter."""
    from sparselint.analysis.project.models import project_index

    (tmp_path / "helpers.py").write_text(
        "def call_function(fn):\n    # patched from torch/optim/lr_scheduler.py\n    return fn()\n\n\n"
        "def build(params):\n    return torch.optim.SGD(params)\n")
    main = tmp_path / "main.py"
    src = "from helpers import call_function, build\n\ncall_function(print)\nbuild([])\n"
    main.write_text(src)
    names, _, _ = project_index().imported_code(src, str(main), TOKENS)
    assert names == ["build"]


def test_a_function_building_a_table_whose_lambdas_alone_hold_tokens_is_a_table():
    """torch's `get_new_module_tests()` returns 1,600 lines of test cases, one of whose
    constructors is `lambda: nn.EmbeddingBag(4, 3, sparse=True)`: nothing runs the lambda
    there. A short function, one whose own code holds a token, or one the module calls is
    read as before."""
    case = "    dict(module_name='L{n}', constructor=lambda: nn.Linear({n}, 2)),\n"
    table = ("import torch.nn as nn\n\n\ndef get_tests():\n    return [\n"
             + "".join(case.format(n=n) for n in range(60))
             + "    dict(module_name='E', constructor=lambda: nn.EmbeddingBag(4, 3, sparse=True)),\n    ]\n")
    assert kept(table) is None
    short = table.replace("".join(case.format(n=n) for n in range(60)), "")
    assert "def get_tests():" in kept(short)
    run = table.replace("    return [\n", "    opt = torch.optim.SparseAdam(nn.EmbeddingBag(4, 3, sparse=True).parameters())\n    return [\n")
    assert "def get_tests():" in kept(run)
    # called here, its body runs here: its effects count (a long setup that freezes a weight)
    called = table + "\n\ntests = get_tests()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    assert "def get_tests():" in kept(called)
