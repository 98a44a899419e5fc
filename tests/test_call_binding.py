"""Calls bound by Python's rules (issue 18, point 3): positional and keyword arguments,
defaults evaluated at the `def`, keyword-only parameters, `*args`/`**kwargs` at the call site
and in the signature, torch constructors given `**kwargs`. What a `*`/`**` argument that cannot
be read may fill is unknown, never the default, so look-alikes stay silent.

Every program is checked by one run of the real command line (`--output-format json`)."""
import json
import re
import textwrap

import pytest

from conftest import run_cli

SPARSE = "torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3))"

# name -> program; `<S>` is an uncoalesced sparse tensor, `# SPLnnn` marks the line of each finding
REPORTED = {
    "star_args_from_a_name": """
        def use(scale, x):
            return x.values()  # SPL001


        parts = (1.0, <S>)
        use(*parts)
    """,
    "star_args_display_after_a_positional": """
        def use(scale, x, flag):
            return x.values()  # SPL001


        s = <S>
        use(1.0, *[s, True])
    """,
    "star_kwargs_from_a_dict_merge": """
        def use(scale, x):
            return x.values()  # SPL001


        base = {'x': <S>}
        options = dict(scale=2.0, **base)
        use(**options)
    """,
    "star_kwargs_from_a_display_merge": """
        def use(scale, x=None):
            return x.values()  # SPL001


        base = {'scale': 1.0}
        use(**{**base, 'x': <S>})
    """,
    "signature_star_args_iterated": """
        def use(*tensors):
            for t in tensors:
                t.values()  # SPL001


        use(<S>, <S>)
    """,
    "signature_star_args_indexed_after_positionals": """
        def use(scale, *rest):
            x = rest[1]
            return x.values()  # SPL001


        use(1.0, 2.0, <S>)
    """,
    "signature_star_kwargs_read_by_key": """
        def use(scale, **options):
            x = options['x']
            return x.values()  # SPL001


        use(1.0, x=<S>)
    """,
    "signature_star_kwargs_flag_read_by_key": """
        def build(n, **kw):
            return nn.Embedding(n, 4, sparse=kw['sparse'])


        emb = build(10, sparse=True)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # SPL401
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """,
    "signature_star_args_flag_indexed": """
        def build(*args):
            return nn.Embedding(args[0], 4, sparse=args[1])


        emb = build(10, True)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # SPL401
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """,
    "literal_indices_through_star_args": """
        def build(*parts):
            indices, values = parts
            return torch.sparse_coo_tensor(indices, values, (3, 3))  # SPL601


        build(torch.tensor([[0, 1], [1, 2]]), torch.tensor([1.0, 2.0, 3.0]))
    """,
    "default_tensor_evaluated_at_the_def": """
        def use(scale, x=<S>):
            return x.values()  # SPL001


        use(1.0)
    """,
    "keyword_only_default_flag": """
        def build(n, *, dim=4, sparse=True):
            return nn.Embedding(n, dim, sparse=sparse)


        emb = build(10)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # SPL401
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """,
    "default_flag_of_a_method": """
        class Factory:
            def build(self, n, sparse=True):
                return nn.Embedding(n, 4, sparse=sparse)


        emb = Factory().build(10)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # SPL401
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """,
    "torch_constructor_given_a_merged_dict": """
        base = {'padding_idx': 0}
        table_kwargs = dict(sparse=True, **base)
        emb = nn.Embedding(10, 4, **table_kwargs)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # SPL401
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """,
    "torch_constructor_given_every_argument_by_dict": """
        cfg = {'num_embeddings': 10, 'embedding_dim': 4, 'sparse': True}
        emb = nn.Embedding(**cfg)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # SPL401
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """,
    "sparse_constructor_flags_from_a_known_dict": """
        options = {'is_coalesced': False, 'requires_grad': False}
        s = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3), **options)
        s.values()  # SPL001
    """,
    "backward_whose_retain_graph_defaults_to_create_graph": """
        vals = torch.zeros(4, requires_grad=True)
        A = torch.sparse_coo_tensor(torch.tensor([[0, 1, 2, 0], [1, 2, 0, 0]]), vals, (3, 3))
        options = {'retain_graph': None, 'create_graph': False}
        for step in range(3):
            loss = torch.sparse.mm(A, torch.ones(3, 2)).sum()  # SPL108
            loss.backward(**options)
    """,
    "torch_constructor_flag_at_its_position": """
        emb = nn.Embedding(10, 4, None, None, 2.0, False, True)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # SPL401
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """,
    "model_class_merging_its_kwargs_into_the_table": """
        class Tower(nn.Module):
            def __init__(self, n, d, **extra):
                super().__init__()
                table_kwargs = dict(sparse=True, **extra)
                self.emb = nn.Embedding(n, d, **table_kwargs)


        model = Tower(10, 4, padding_idx=0)
        opt = torch.optim.Adam(model.parameters(), lr=0.1)  # SPL401
        model.emb(torch.tensor([1, 2])).sum().backward()
        opt.step()
    """,
}

SILENT = {
    "default_overridden_by_the_call": """
        def use(scale, x=<S>):
            return x.values()


        use(1.0, <S>.coalesce())
        use(1.0, x=<S>.coalesce())
    """,
    "signature_star_args_flag_false": """
        def build(*args):
            return nn.Embedding(args[0], 4, sparse=args[1])


        emb = build(10, False)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)
    """,
    "literal_indices_through_star_args_that_match": """
        def build(*parts):
            indices, values = parts
            return torch.sparse_coo_tensor(indices, values, (3, 3))


        build(torch.tensor([[0, 1, 2], [1, 2, 0]]), torch.tensor([1.0, 2.0, 3.0]))
    """,
    "backward_that_keeps_the_graph": """
        import json

        vals = torch.zeros(4, requires_grad=True)
        A = torch.sparse_coo_tensor(torch.tensor([[0, 1, 2, 0], [1, 2, 0, 0]]), vals, (3, 3))
        for step in range(3):
            torch.sparse.mm(A, torch.ones(3, 2)).sum().backward(create_graph=True)
        for step in range(3):
            torch.sparse.mm(A, torch.ones(3, 2)).sum().backward(None, True)
        for step in range(3):
            torch.sparse.mm(A, torch.ones(3, 2)).sum().backward(**json.load(open('options.json')))
        for step in range(3):
            torch.autograd.backward(torch.sparse.mm(A, torch.ones(3, 2)).sum(), None, True)
    """,
    "positions_after_a_star_argument_are_not_guessed": """
        first = [torch.tensor([[0, 1, 2], [1, 2, 0]])]
        s = torch.sparse_coo_tensor(*first, torch.tensor([1.0, 2.0, 3.0]), (3, 3), is_coalesced=True)
        s.values()
    """,
    "shared_mutable_default_changed_by_an_earlier_call": """
        def build(n, options={'padding_idx': 0}):
            emb = nn.Embedding(n, 4, **options)
            options['sparse'] = True
            return emb


        build(10)
        emb = build(10)
        opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    """,
    "default_flag_overridden_by_the_call": """
        def build(n, sparse=True):
            return nn.Embedding(n, 4, sparse=sparse)


        emb = build(10, sparse=False)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)
    """,
    "unknown_kwargs_may_hold_the_flag_at_a_torch_constructor": """
        import json

        table_kwargs = json.load(open('tables.json'))
        emb = nn.Embedding(10, 4, **table_kwargs)
        opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    """,
    "unknown_kwargs_may_mark_a_sparse_tensor_coalesced": """
        import json

        options = json.load(open('options.json'))
        s = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3), **options)
        s.values()
    """,
    "unknown_kwargs_merged_over_the_flag": """
        import json

        table_kwargs = {'sparse': True, **json.load(open('tables.json'))}
        emb = nn.Embedding(10, 4, **table_kwargs)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)
    """,
    "unknown_kwargs_passed_on_by_a_helper": """
        import json


        def build(n, d, **kw):
            return nn.Embedding(n, d, **kw)


        emb = build(10, 4, **json.load(open('tables.json')))
        opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    """,
    "unknown_star_args_fill_a_parameter_with_a_default": """
        import sys


        def build(n, sparse=False):
            return nn.Embedding(n, 4, sparse=sparse)


        emb = build(*sys.argv[1:])
        opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    """,
    "unknown_argument_to_a_model_class_with_a_default": """
        import sys


        class Tower(nn.Module):
            def __init__(self, sparse=False):
                super().__init__()
                self.emb = nn.Embedding(10, 4, sparse=sparse)


        model = Tower(sys.argv[1] == 'sparse')
        opt = torch.optim.SparseAdam(model.parameters(), lr=0.1)
    """,
    "unknown_kwargs_to_a_model_class_table": """
        class Tower(nn.Module):
            def __init__(self, n, d, table_kwargs):
                super().__init__()
                self.emb = nn.Embedding(n, d, **table_kwargs)


        def train(cfg):
            model = Tower(10, 4, cfg)
            return torch.optim.SparseAdam(model.parameters(), lr=0.1)
    """,
    "table_kwargs_changed_in_place": """
        class Tower(nn.Module):
            def __init__(self, n, d):
                super().__init__()
                table_kwargs = dict(sparse=False)
                table_kwargs['sparse'] = True
                self.emb = nn.Embedding(n, d, **table_kwargs)


        model = Tower(10, 4)
        opt = torch.optim.SparseAdam(model.parameters(), lr=0.1)
    """,
    "a_call_python_rejects_runs_nothing": """
        def use(scale, x):
            return x.values()


        use(1.0, <S>, 3)
        use(1.0, <S>, y=3)
    """,
}


def _program(text: str) -> str:
    body = textwrap.dedent(text).lstrip("\n").replace("<S>", SPARSE)
    return "import torch\nimport torch.nn as nn\n" + body


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    """`name -> ["line code", ...]` for every program, from one run of the command line."""
    folder = tmp_path_factory.mktemp("binding")
    for name, text in [*REPORTED.items(), *SILENT.items()]:
        (folder / f"{name}.py").write_text(_program(text))
    r = run_cli("--output-format", "json", str(folder))
    assert r.returncode in (0, 1), r.stderr
    out: dict[str, list[str]] = {}
    for d in json.loads(r.stdout):
        name = re.sub(r"\.py$", "", d["path"].replace("\\", "/").rsplit("/", 1)[-1])
        out.setdefault(name, []).append(f"{d['line']} {d['code']}")
    return out


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_each_binding_form_is_reported(findings, name):
    marked = [f"{number} {code}" for number, line in enumerate(_program(REPORTED[name]).splitlines(), 1)
              for code in re.findall(r"# (SPL\d{3})", line)]
    assert marked and sorted(findings.get(name, [])) == sorted(marked)


@pytest.mark.parametrize("name", sorted(SILENT))
def test_look_alikes_stay_silent(findings, name):
    assert findings.get(name, []) == []


# -- the binder against Python's own binding (`inspect.Signature.bind`) ------------------

SIGNATURES = ["(a, b)", "(a, b=2)", "(a, /, b, *, c, d=4)", "(*args)", "(a, *args, b=2, **kwargs)",
              "(a=1, b=2, *, c=3)", "(a, /, **kwargs)", "(self, x, *rest, flag=False, **extra)"]
CALLS = [((), {}), ((1,), {}), ((1, 2), {}), ((1, 2, 3), {}), ((1,), {"b": 5}), ((), {"a": 1, "b": 2}),
         ((1,), {"a": 1}), ((1, 2), {"c": 3}), ((1,), {"c": 3, "z": 9}), ((1, 2, 3, 4), {"flag": True}),
         ((), {"self": 0, "x": 1}), ((1,), {"x": 2, "extra": 3})]


def _python_binding(signature: str, args: tuple, kwargs: dict):
    import inspect
    namespace: dict = {}
    exec(f"def f{signature}: pass", namespace)
    try:
        bound = inspect.signature(namespace["f"]).bind(*args, **kwargs)
    except TypeError:
        return None
    return dict(bound.arguments)


def _binder(signature: str, pieces: list):
    import ast

    import libcst as cst

    from sparselint.analysis.binding import Signature, bind
    node = cst.parse_statement(f"def f{signature}: pass")
    tree = ast.parse(f"def f{signature}: pass").body[0]
    by_cst = bind(Signature.of_cst(node.params), pieces)
    by_ast = bind(Signature.of_ast(tree.args), pieces)
    assert (by_cst is None) == (by_ast is None) and (by_cst is None or by_cst.values == by_ast.values)
    return by_cst, Signature.of_cst(node.params)


@pytest.mark.parametrize("signature", SIGNATURES)
def test_the_binder_binds_as_python_does(signature):
    from sparselint.analysis.binding import Keyword, Positional
    for args, kwargs in CALLS:
        expected = _python_binding(signature, args, kwargs)
        got, sig = _binder(signature, [*map(Positional, args), *(Keyword(k, v) for k, v in kwargs.items())])
        assert (got is None) == (expected is None), (signature, args, kwargs)
        if got is None:
            continue
        seen = dict(got.values)
        if sig.star is not None:
            seen[sig.star] = got.star
        if sig.double_star is not None:
            seen[sig.double_star] = dict(got.double_star)
        assert {k: v for k, v in seen.items() if v not in ((), {})} == {
            k: v for k, v in expected.items() if v not in ((), {})}, (signature, args, kwargs)
        assert set(got.defaulted) == set(sig.defaults) - set(expected), (signature, args, kwargs)


@pytest.mark.parametrize("signature", SIGNATURES)
def test_what_an_unreadable_star_argument_may_fill_is_unknown(signature):
    """Whatever a `*seq` (0 to 4 elements) or a `**mapping` (any of the keys tried) of
    unknown content turns out to hold, when Python binds the call: a parameter the binder
    says is passed has that value, and one it gives its default is not filled."""
    from sparselint.analysis.binding import DoubleStar, Keyword, Positional, Star
    keys = ["a", "b", "c", "d", "x", "flag", "z"]
    for args, kwargs in CALLS:
        written = [Keyword(k, v) for k, v in kwargs.items()]
        for unknown, expansions in (
                (Star(None), [((*args, *range(100, 100 + n)), kwargs) for n in range(5)]),
                (DoubleStar(None), [(args, {**{k: 100 for k in chosen if k not in kwargs}, **kwargs})
                                    for chosen in ([], *([k] for k in keys), keys[:2], keys[2:4])])):
            pieces = [*map(Positional, args), unknown, *written]
            got, sig = _binder(signature, pieces)
            for more_args, more_kwargs in expansions:
                expected = _python_binding(signature, more_args, more_kwargs)
                if expected is None or got is None:
                    continue
                for name, value in got.values.items():
                    assert expected.get(name) == value, (signature, pieces, more_args, more_kwargs)
                for name in got.defaulted:
                    assert name not in expected, (signature, pieces, more_args, more_kwargs)


# -- the programs are real: torch raises on each reported one, the self-contained look-alikes run

RUN = ["default_overridden_by_the_call", "signature_star_args_flag_false",
       "literal_indices_through_star_args_that_match", "positions_after_a_star_argument_are_not_guessed",
       "shared_mutable_default_changed_by_an_earlier_call", "default_flag_overridden_by_the_call",
       "table_kwargs_changed_in_place", "unknown_kwargs_to_a_model_class_table"]


def _run(name: str, text: str):
    import contextlib
    import io
    import warnings
    pytest.importorskip("torch")
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(compile(_program(text), f"{name}.py", "exec"), {"__name__": "__main__"})


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(REPORTED))
def test_each_reported_program_raises_under_torch(name):
    with pytest.raises(RuntimeError):
        _run(name, REPORTED[name])


@pytest.mark.torch
@pytest.mark.parametrize("name", RUN)
def test_the_look_alikes_run_under_torch(name):
    _run(name, SILENT[name])
