"""The fact engine, seen through the findings it enables."""
import textwrap

from sparselint.config import Settings
from sparselint.engine import check_text
from sparselint.rule import Rule


def codes(src, select=("ALL",)):
    diags, _, _ = check_text(textwrap.dedent(src).lstrip("\n"), "t.py", Settings(select=select))
    return [(d.line, d.code) for d in diags]


def test_import_aliases_resolve():
    assert codes("""
        import torch as t
        s = t.sparse_coo_tensor(i, v, (3, 3))
        s.values()
    """) == [(3, "SPL001")]
    assert codes("""
        from torch import sparse_coo_tensor as sct
        s = sct(i, v, (3, 3))
        s.values()
    """) == [(3, "SPL001")]


def test_a_local_named_torch_is_not_torch():
    assert codes("""
        import torch
        def f(torch):
            s = torch.sparse_coo_tensor(i, v, (3, 3))
            s.values()
    """) == []


def test_branches_join_conservatively():
    assert codes("""
        import torch
        s = torch.sparse_coo_tensor(i, v, (3, 3))
        if flag:
            s = s.coalesce()
        s.values()
    """) == []
    assert codes("""
        import torch
        s = torch.sparse_coo_tensor(i, v, (3, 3))
        if flag:
            s = s.coalesce()
        else:
            s = torch.sparse_coo_tensor(i, v, (3, 3))
        s.values()
    """) == []


def test_loop_carries_facts_to_the_next_iteration():
    assert codes("""
        import torch
        import torch.nn as nn
        p = nn.Parameter(torch.eye(3).to_sparse())
        opt = torch.optim.SGD([p], lr=0.1)
        for _ in range(3):
            print(p.values())
            torch.sparse.mm(p, torch.ones(3, 1)).sum().backward()
            opt.step()
    """) == [(6, "SPL001")]
    # without a backward the parameter has no gradient, and SGD's step leaves it as it was
    assert codes("""
        import torch
        import torch.nn as nn
        p = nn.Parameter(torch.eye(3).to_sparse())
        opt = torch.optim.SGD([p], lr=0.1)
        for _ in range(3):
            print(p.values())
            opt.step()
    """) == []


def test_no_grad_contexts_and_decorators():
    src = """
        import torch
        s = torch.eye(3).to_sparse().requires_grad_()
        {}
    """
    assert codes(src.format("s.values().mul_(2)")) == [(3, "SPL102")]
    assert codes(src.format("with torch.no_grad():\n            s.values().mul_(2)")) == []
    assert codes(src.format("with torch.inference_mode():\n            s.values().mul_(2)")) == []
    assert codes(src.format("with torch.set_grad_enabled(False):\n            s.values().mul_(2)")) == []
    assert codes("""
        import torch
        @torch.no_grad()
        def update(s):
            s = s.to_sparse().requires_grad_()
            s.values().mul_(2)
    """) == []


def test_function_return_values_carry_facts():
    assert codes("""
        import torch
        def build(e, w, n):
            return torch.sparse_coo_tensor(e, w, (n, n))
        adj = build(e, w, 3)
        adj.indices()
    """) == [(5, "SPL001")]


def test_self_attributes_set_in_init_reach_other_methods():
    assert codes("""
        import torch
        import torch.nn as nn
        class Layer(nn.Module):
            def __init__(self, e, n):
                super().__init__()
                self.adj = torch.sparse_coo_tensor(e, torch.ones(e.size(1)), (n, n))
            def forward(self, x):
                return self.adj.values()
    """) == [(8, "SPL001")]
    assert codes("""
        import torch
        import torch.nn as nn
        class Layer(nn.Module):
            def __init__(self, e, n):
                super().__init__()
                self.adj = torch.sparse_coo_tensor(e, torch.ones(e.size(1)), (n, n))
            def prepare(self):
                self.adj = self.adj.coalesce()
            def forward(self, x):
                return self.adj.values()
    """) == []


def test_unknown_is_silent():
    assert codes("""
        def f(adj):
            adj.values()[0] = 1
            adj[0, 1] = 2
            adj.coalesce().values().mul_(2)
    """) == []


def test_prefilter_skips_files_without_sparse():
    diags, _, _ = check_text("def broken(:\n", "t.py", Settings())
    assert diags == []
    diags, _, _ = check_text("x = y.to_sparse()\ndef broken(:\n", "t.py", Settings())
    assert [d.code for d in diags] == ["SPL900"]


class _BrokenFixRule(Rule):
    code, name, error, when = "SPL999", "broken-fix", "none", "line"
    fix_title = "break the file"
    prefilter = ("sparse",)

    def visit_Name(self, node, ctx):
        if node.value == "sparse":
            ctx.report(self, node, "test", fix=ctx.make_fix(self, [ctx.replace_text(node, "(((")], safe=True))


def test_fix_never_writes_code_that_does_not_parse():
    src = "sparse = 1\n"
    diags, fixed, applied = check_text(src, "t.py", Settings(fix=True), rules=[_BrokenFixRule])
    assert fixed is None and applied == 0 and [d.code for d in diags] == ["SPL999"]


class _CrashingRule(Rule):
    code, name, error, when = "SPL998", "crashing-rule", "none", "line"
    prefilter = ("sparse",)

    def visit_Name(self, node, ctx):
        raise ValueError("boom")


def test_an_internal_error_is_one_diagnostic():
    diags, _, _ = check_text("sparse = 1\n", "t.py", Settings(), rules=[_CrashingRule])
    assert [d.code for d in diags] == ["SPL903"] and "boom" in diags[0].message


def test_evidence_of_a_backward_made_gradient_reads_as_english():
    src = textwrap.dedent("""\
        import torch
        attn = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2), requires_grad=True)
        x = torch.ones(2, 3)
        torch.sparse.mm(attn, x).sum().backward()
        print(attn.grad.values())
    """)
    diags, _, _ = check_text(src, "model.py", Settings())
    texts = [e.text for d in diags for e in d.evidence]
    assert "the backward of `mm` gives it an uncoalesced sparse grad" in texts, texts


def test_a_nodes_children_are_read_once_per_check_and_forgotten_after(monkeypatch):
    import libcst as cst
    from sparselint.analysis.cst import tree
    read = []
    original = tree._read_children

    def counting(node):
        read.append(node)
        return original(node)

    monkeypatch.setattr(tree, "_read_children", counting)
    module = cst.parse_module("def f(adj):\n    return adj.values() + g(adj)\n")
    first = list(tree.walk(module))
    assert list(tree.walk(module)) == first  # the same nodes, in the same order...
    assert len(read) == len(first)  # ...each read once
    tree.forget_children()
    read.clear()
    src = "import torch\n\ndef f():\n    adj = torch.sparse_coo_tensor(i, v, (3, 3))\n    return adj.values()\n"
    assert [d.code for d in check_text(src, "t.py", Settings())[0]] == ["SPL001"]
    assert read and not tree._CHILDREN  # a check's trees are not kept after it
