"""Facts across calls: the callee analysed with its caller's facts, and what flows back."""
import textwrap

from sparselint.analysis import calls
from sparselint.config import Settings
from sparselint.engine import check_text


def check(src, path="t.py"):
    diags, _, _ = check_text(textwrap.dedent(src).lstrip("\n"), path, Settings())
    return diags


def codes(src):
    return [(d.line, d.code) for d in check(src)]


def test_a_finding_inside_a_helper_is_reported_once_at_its_line_with_every_call_site_in_evidence():
    diags = check("""
        import torch

        def degree(adj):
            return adj.values()

        a = torch.sparse_coo_tensor(i, v, (3, 3))
        degree(a)
        degree(a)
    """)
    assert [(d.line, d.code) for d in diags] == [(4, "SPL001")]
    texts = [e.text for e in diags[0].evidence]
    assert "`a` passed to `degree()` as `adj`" in texts
    assert [e.line for e in diags[0].evidence if "passed to" in e.text] == [7]


def test_the_same_helper_is_silent_for_a_coalesced_argument_and_when_nobody_calls_it():
    assert codes("""
        import torch

        def degree(adj):
            return adj.values()

        degree(torch.sparse_coo_tensor(i, v, (3, 3)).coalesce())
    """) == []
    assert codes("""
        import torch

        def degree(adj):
            return adj.values()
    """) == []


def test_returned_facts_are_those_of_the_arguments_passed():
    assert codes("""
        import torch

        def same(x):
            return x

        a = same(torch.sparse_coo_tensor(i, v, (3, 3)))
        b = same(torch.sparse_coo_tensor(i, v, (3, 3)).coalesce())
        a.values()
        b.values()
    """) == [(8, "SPL001")]


def test_effects_on_an_argument_flow_back_to_the_caller():
    assert codes("""
        import torch

        class Graph:
            def __init__(self, e):
                self.adj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))

            def prepare(self):
                self.adj = self.adj.coalesce()

        g = Graph(e)
        g.prepare()
        g.adj.values()
    """) == []


def test_a_rebound_parameter_has_no_effect_on_the_caller():
    assert codes("""
        import torch

        def local_copy(adj):
            adj = adj.coalesce()
            return adj.values()

        a = torch.sparse_coo_tensor(i, v, (3, 3))
        local_copy(a)
        a.values()
    """) == [(9, "SPL001")]


def test_recursion_and_deep_chains_end():
    src = """
        import torch

        def walk(adj, n):
            if n:
                return walk(adj, n - 1)
            return adj.values()

        def f1(a): return f2(a)
        def f2(a): return f3(a)
        def f3(a): return f4(a)
        def f4(a): return f5(a)
        def f5(a): return f6(a)
        def f6(a): return a.values()

        walk(torch.sparse_coo_tensor(i, v, (3, 3)), depth)
        f1(torch.sparse_coo_tensor(i, v, (3, 3)))
    """
    found = codes(src)
    assert (6, "SPL001") in found
    # f6 is five calls below the module: beyond the depth bound, so not reached
    assert (13, "SPL001") not in found
    assert calls.MAX_DEPTH < 6


def test_a_callee_is_analysed_once_per_distinct_facts(monkeypatch):
    seen = []
    original = calls.Calls._analyse

    def counting(self, node, bound, outer, *rest):
        seen.append(node.name.value)
        return original(self, node, bound, outer, *rest)

    monkeypatch.setattr(calls.Calls, "_analyse", counting)
    codes("""
        import torch

        def degree(adj):
            return torch.sparse.sum(adj)

        a = torch.sparse_coo_tensor(i, v, (3, 3))
        for _ in range(3):
            degree(a)
        degree(a)
    """)
    assert seen.count("degree") == 3  # each analysis of a call site asks (a loop body is analysed twice)...
    # ...but the callee's body is walked once per distinct facts: results are memoised
    monkeypatch.setattr(calls.Calls, "_analyse", original)
    walked = []
    from sparselint.analysis.evaluation import walker
    body = walker.Walker._body

    def counting_body(self, node, outer, initial, silent, *rest, **keywords):
        walked.append((node.name.value, silent))
        return body(self, node, outer, initial, silent, *rest, **keywords)

    monkeypatch.setattr(walker.Walker, "_body", counting_body)
    codes("""
        import torch

        def degree(adj):
            return torch.sparse.sum(adj)

        a = torch.sparse_coo_tensor(i, v, (3, 3))
        degree(a)
        degree(a)
        degree(a)
    """)
    # once for the call site's facts, once on its own (parameters unknown)
    assert walked.count(("degree", False)) == 2, walked


def test_a_dense_tensor_that_needs_no_grad_is_not_followed(monkeypatch):
    walked = []
    from sparselint.analysis.evaluation import walker
    body = walker.Walker._body

    def counting_body(self, node, outer, initial, silent, *rest, **keywords):
        if not silent:
            walked.append(node.name.value)
        return body(self, node, outer, initial, silent, *rest, **keywords)

    monkeypatch.setattr(walker.Walker, "_body", counting_body)
    codes("""
        import torch

        def scale(x):
            return x.to_sparse()

        scale(torch.ones(3))
        scale(torch.ones(3, requires_grad=True))
    """)
    # its own analysis, and one for the call that passes a tensor in a graph
    assert walked == ["scale", "scale"]


def test_a_call_into_another_module_reports_there_with_this_file_in_evidence(tmp_path):
    (tmp_path / "helpers.py").write_text("def norm(adj):\n    return adj.values()  # noqa: SPL001\n\n\n"
                                         "def degree(adj):\n    return adj.indices()\n")
    train = tmp_path / "train.py"
    src = ("import torch\nfrom helpers import norm, degree\n\n"
           "adj = torch.sparse_coo_tensor(i, v, (3, 3))\nnorm(adj)\ndegree(adj)\n")
    train.write_text(src)
    diags, fixed, _ = check_text(src, str(train), Settings(fix=True, unsafe_fixes=True))
    assert [(d.path, d.line, d.code) for d in diags] == [(str(tmp_path / "helpers.py"), 6, "SPL001")]
    assert diags[0].fix is None and fixed is None  # never an edit to another file
    places = [e.place for e in diags[0].evidence]
    assert f"{train}:6" in places


def test_a_helper_of_another_module_whose_default_builds_an_object_is_followed(tmp_path):
    """`def run(adj, cfg=Cfg())`: the default is built while the module's walk is being set
    up; the engine failed there with an internal error and the file was not checked."""
    (tmp_path / "lib.py").write_text("class Cfg:\n    scale = 2\n\n\ndef run(adj, cfg=Cfg()):\n    return adj.values()\n")
    main = tmp_path / "main.py"
    src = "import torch\nfrom lib import run\n\nadj = torch.sparse_coo_tensor(i, v, (3, 3))\nrun(adj)\n"
    main.write_text(src)
    diags, _, _ = check_text(src, str(main), Settings())
    assert [(d.path, d.line, d.code) for d in diags] == [(str(tmp_path / "lib.py"), 6, "SPL001")]


def test_a_script_calling_a_library_function_whose_helper_holds_the_hazard_is_checked(tmp_path):
    """`train(cfg)` holds no token; `build_optimizer`, a helper of its own module, does. The
    user script was passed over by the prefilter: the library's own call chain counts."""
    (tmp_path / "lib.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\n"
        "def build_optimizer(name, params):\n    if name == 'sparse_adam':\n"
        "        return torch.optim.SparseAdam(params)\n    return torch.optim.Adam(params)\n\n\n"
        "def train(cfg):\n    emb = nn.Embedding(10, 3, sparse=cfg.sparse)\n"
        "    opt = build_optimizer(cfg.optimizer, emb.parameters())\n    return emb, opt\n")
    main = tmp_path / "main.py"
    src = ("from lib import train\n\n\nclass Config:\n    sparse = True\n    optimizer = 'adam'\n\n\n"
           "train(Config())\n")
    main.write_text(src)
    diags, _, _ = check_text(src, str(main), Settings())
    assert [(d.path, d.line, d.code) for d in diags] == [(str(tmp_path / "lib.py"), 8, "SPL401")]


def test_a_layout_test_keeps_a_known_layout_out_of_the_other_branches():
    """The shape of torch.autograd.gradcheck._densify, which was flagged on the corpus."""
    assert codes("""
        import torch

        def densify(x):
            if x.layout is torch.sparse_coo:
                return x.coalesce().to_dense()
            elif x.layout == torch.sparse_csr:
                return x.crow_indices()
            return x.ccol_indices() if x.layout == torch.sparse_csc else x

        densify(torch.eye(3).to_sparse())
        densify(torch.eye(3).to_sparse_csr())
        densify(torch.eye(3).to_sparse_csc())
    """) == []


def test_what_a_forward_op_saved_flows_into_and_out_of_callees():
    """A helper that edits a tensor the caller's forward saved, a helper whose forward saves
    a tensor the caller then edits, and a helper that runs backward itself (nothing saved
    before it still waits). Checked under torch 2.13: the two flagged edits fail at
    `loss.backward()`, the others do not."""
    diags = check("""
        import torch

        def clip_(w):
            with torch.no_grad():
                w.values().clamp_(-1.0, 1.0)

        def forward(w, x):
            return torch.sparse.mm(w, x).sum()

        def step(w, x):
            forward(w, x).backward()

        w = torch.eye(3).to_sparse().requires_grad_()
        x = torch.randn(3, 4)
        step(w, x)
        clip_(w)
        loss = forward(w, x)
        with torch.no_grad():
            w.values().mul_(2)
        clip_(w)
        loss.backward()
        clip_(w)
    """)
    assert [(d.line, d.code) for d in diags] == [(5, "SPL107"), (19, "SPL107")]
    # the helper's edit is a finding only for the call between the forward and backward
    assert [e.line for e in diags[0].evidence if "passed to `clip_()`" in e.text] == [20]


# -- the object model: methods, properties, class attributes ------------------------------

_COO = "torch.sparse_coo_tensor(i, v, (3, 3))"


def test_a_method_result_flows_back_like_a_function_result_and_a_coalesced_one_stays_silent():
    src = """
        import torch

        class Factory:
            def build(self):
                return {value}

        x = Factory().build()
        x.values()
    """
    assert codes(src.format(value=_COO)) == [(8, "SPL001")]
    assert codes(src.format(value=_COO + ".coalesce()")) == []


def test_a_bound_method_stored_and_called_later_gives_its_result():
    src = """
        import torch

        class Factory:
            def build(self):
                return {value}

        build = Factory().build
        x = build()
        x.values()
    """
    assert codes(src.format(value=_COO)) == [(9, "SPL001")]
    assert codes(src.format(value=_COO + ".coalesce()")) == []


def test_class_and_static_methods_are_followed_on_the_class_and_on_an_instance():
    for deco, params in (("@classmethod", "cls"), ("@staticmethod", "")):
        src = f"""
            import torch

            class Factory:
                {deco}
                def build({params}):
                    return {{value}}

            Factory.build().values()
            Factory().build().values()
        """
        assert codes(src.format(value=_COO)) == [(8, "SPL001"), (9, "SPL001")], deco
        assert codes(src.format(value=_COO + ".coalesce()")) == [], deco


def test_inherited_and_super_methods_are_followed_and_an_override_wins():
    src = """
        import torch

        class Base:
            def build(self):
                return torch.sparse_coo_tensor(i, v, (3, 3))

        class Child(Base):
            def build(self):
                return {body}

        Child().build().values()
    """
    assert codes(src.format(body="super().build()")) == [(11, "SPL001")]
    # the subclass's own method is the one that runs
    assert codes(src.format(body="super().build().coalesce()")) == []
    assert codes("""
        import torch

        class Base:
            def build(self):
                return torch.sparse_coo_tensor(i, v, (3, 3))

        class Child(Base):
            pass

        Child().build().values()
    """) == [(10, "SPL001")]


def test_a_method_that_cannot_be_resolved_gives_nothing():
    # the base is not a class of the project: `build` may be anything
    assert codes("""
        import torch
        from somewhere import Base

        class Child(Base):
            def make(self):
                return torch.sparse_coo_tensor(i, v, (3, 3))

        Child().build().values()
        Child().__getattr__("make")().values()
    """) == []


def test_a_property_gives_its_getters_value_and_a_setter_is_not_a_getter():
    src = """
        import torch

        class Holder:
            def __init__(self):
                self._adj = torch.sparse_coo_tensor(i, v, (3, 3))

            @property
            def adj(self):
                return {body}

        h = Holder()
        h.adj.values()
    """
    assert codes(src.format(body="self._adj")) == [(12, "SPL001")]
    assert codes(src.format(body="self._adj.coalesce()")) == []


def test_a_class_attribute_is_read_through_the_class_and_self_unless_the_file_sets_it():
    src = """
        import torch

        class Graph:
            ADJ = torch.sparse_coo_tensor(i, v, (3, 3))

            def degrees(self):
                return self.ADJ.values()

        Graph.ADJ.values()
        Graph().degrees()
        {extra}
    """
    assert codes(src.format(extra="")) == [(7, "SPL001"), (9, "SPL001")]
    # another value may be stored there: what the class body bound is not known to hold
    assert codes(src.format(extra="Graph.ADJ = Graph.ADJ.coalesce()")) == []
    assert codes(src.format(extra="Graph().ADJ = None")) == []


def test_a_base_class_of_another_module_gives_its_methods_and_init_to_the_subclass(tmp_path):
    (tmp_path / "base.py").write_text(
        "import torch\n\n\nclass Base:\n    def __init__(self):\n        self.adj = torch.sparse_coo_tensor(i, v, (3, 3))\n\n"
        "    def build(self):\n        return torch.sparse_coo_tensor(i, v, (3, 3))\n\n"
        "    def clean(self):\n        return torch.sparse_coo_tensor(i, v, (3, 3)).coalesce()\n")
    main = tmp_path / "main.py"
    src = ("from base import Base\n\n\nclass Child(Base):\n    pass\n\n\n"
           "c = Child()\nc.adj.values()\nc.build().indices()\nc.clean().indices()\n")
    main.write_text(src)
    diags, _, _ = check_text(src, str(main), Settings())
    assert [(d.line, d.code) for d in diags] == [(9, "SPL001"), (10, "SPL001")]


def test_a_subclass_that_overrides_an_imported_base_method_runs_its_own(tmp_path):
    (tmp_path / "base.py").write_text(
        "import torch\n\n\nclass Base:\n    def build(self):\n        return torch.sparse_coo_tensor(i, v, (3, 3))\n")
    main = tmp_path / "main.py"
    src = ("import torch\nfrom base import Base\n\n\nclass Child(Base):\n    def build(self):\n"
           "        return torch.sparse_coo_tensor(i, v, (3, 3)).coalesce()\n\n\nChild().build().indices()\n")
    main.write_text(src)
    diags, _, _ = check_text(src, str(main), Settings())
    assert diags == []


def test_a_method_called_on_self_as_the_class_walk_starts_it_is_walked_loudly_once(monkeypatch):
    walked = []
    from sparselint.analysis.evaluation import walker
    body = walker.Walker._body

    def counting_body(self, node, outer, initial, silent, *rest, **keywords):
        if not silent and not self.silent:
            walked.append(node.name.value)
        return body(self, node, outer, initial, silent, *rest, **keywords)

    monkeypatch.setattr(walker.Walker, "_body", counting_body)
    found = codes("""
        import torch

        class Trainer:
            def __init__(self):
                self.steps = 0

            def fit(self):
                self._step()

            def _step(self):
                adj = torch.sparse_coo_tensor(i, v, (3, 3))
                return adj.values()
    """)
    # the call from `fit` starts `_step` as the class walk does: its run would report nothing
    # new, so only its own run reports (the call's outcome is still worked out, silently)
    assert found == [(12, "SPL001")]
    assert walked.count("_step") == 1, walked


_TRAINER = '''
from torch.nn.utils import clip_grad_norm_


class Trainer:
    def __init__(self, params, max_norm):
        self.params = list(params)
        self.max_norm = max_norm

    @classmethod
    def from_model(cls, model, max_norm=5.0):
        return cls(model.parameters(), max_norm)

    @staticmethod
    def make(model):
        return Trainer(model.parameters(), 1.0)

    def clip(self):
        clip_grad_norm_(self.params, self.max_norm)
'''


def test_a_class_method_of_a_class_imported_from_another_module_runs_there(tmp_path):
    """`Trainer.from_model(model)` (a classmethod: `cls` is that module's class) and
    `Trainer.make(model)` (a staticmethod) build a Trainer there; its methods, called here on
    what they return, are that module's."""
    import re
    from conftest import run_cli
    (tmp_path / "trainer.py").write_text(_TRAINER.lstrip())
    clip = next(i for i, line in enumerate(_TRAINER.lstrip().splitlines(), 1) if "clip_grad_norm_(" in line)
    for made in ("Trainer.from_model(model)", "Trainer.make(model)"):
        for sparse, expected in (("True", [("trainer.py", str(clip), "SPL301")]), ("False", [])):
            (tmp_path / "train.py").write_text(textwrap.dedent(f'''
                import torch
                import torch.nn as nn
                from trainer import Trainer

                model = nn.Embedding(10, 3, sparse={sparse})
                trainer = {made}
                model(torch.tensor([1, 2])).sum().backward()
                trainer.clip()
            ''').lstrip())
            r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=tmp_path)
            found = re.findall(r"^([\w.]+):(\d+):\d+: (SPL\d+)", r.stdout, re.M)
            assert found == expected, (made, sparse, r.stdout + r.stderr)


def test_an_arm_of_a_conditional_expression_the_facts_decide_against_does_not_run():
    """`weights(adj) if RAW else adj.coalesce().values()` with `RAW = False`: the helper is
    not called there, so its read of an uncoalesced tensor is no finding, and nor is a
    rule's look at the arm itself; nor in `RAW and weights(adj)`. Where the flag is not
    known, both arms may run."""
    src = """
        import sys
        import torch

        RAW = False


        def weights(adj):
            return adj.values()


        adj = torch.sparse_coo_tensor(torch.tensor([[1, 0], [0, 1]]), torch.ones(2), (2, 2))
        w = weights(adj) if RAW else adj.coalesce().values()
        v = adj.values() if RAW else None
        t = RAW and weights(adj)
        u = weights(adj) if len(sys.argv) > 5 else None
    """
    assert codes(src) == [(8, "SPL001")]
    assert [d.evidence[-1].line for d in check(src)] == [15]  # reached from the undecided call only
