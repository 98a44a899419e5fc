"""Functions and classes as values: held in a dict, a list or a registry a decorator fills,
passed as an argument, returned, reached through `getattr`, bound by `functools.partial`,
written as a lambda or a nested function. Calling one analyses the real callee as a direct
call does; a callee that cannot be determined leaves the result unknown (silent)."""
import json
import textwrap

COO = "torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3))"


def findings(cli, tmp_path, files: dict) -> list:
    """(file, line, code) of what the CLI reports on main.py, with the other files beside it."""
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n").replace("COO", COO))
    r = cli("--output-format", "json", "--no-cache", "main.py", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    return sorted((d["path"], d["line"], d["code"]) for d in json.loads(r.stdout))


def test_a_function_in_a_dict_is_called_and_the_safe_entry_stays_silent(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": """
        import torch

        def make():
            return COO

        def make_safe():
            return COO.coalesce()

        builders = {"raw": make, "safe": make_safe}
        a = builders["raw"]()
        b = builders["safe"]()
        print(a.indices())
        print(b.indices())
    """}) == [("main.py", 12, "SPL001")]


def test_a_function_in_a_list_is_called_by_its_position(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": """
        import torch

        def make():
            return COO

        def make_safe():
            return COO.coalesce()

        builders = [make_safe, make]
        print(builders[0]().indices())
        print(builders[1]().indices())
    """}) == [("main.py", 11, "SPL001")]


REGISTRY = """
    import torch

    REGISTRY = {}

    def register(name):
        def add(fn):
            REGISTRY[name] = fn
            return fn
        return add

    @register("raw")
    def make():
        return COO

    @register("safe")
    def make_safe():
        return COO.coalesce()

"""


def test_a_registry_filled_by_a_decorator_holds_each_function_under_its_name(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": REGISTRY + """
    print(REGISTRY["safe"]().indices())
    print(REGISTRY["raw"]().indices())
    """}) == [("main.py", 21, "SPL001")]


def test_a_registry_entry_under_a_name_not_known_is_silent(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": REGISTRY + """
    import sys
    print(REGISTRY[sys.argv[1]]().indices())
    print(REGISTRY.get("raw", make_safe)().indices())
    """}) == [("main.py", 22, "SPL001")]


def test_a_function_passed_as_an_argument_is_called_with_what_the_callee_gives_it(cli, tmp_path):
    program = """
        import torch

        def first_row(adj):
            return adj.indices()[0]

        def apply(fn, x):
            return fn(x)

        apply(first_row, {value})
    """
    assert findings(cli, tmp_path, {"main.py": program.format(value="COO")}) == [("main.py", 4, "SPL001")]
    assert findings(cli, tmp_path, {"main.py": program.format(value="COO.coalesce()")}) == []


def test_a_function_passed_alone_is_called_for_what_it_returns(cli, tmp_path):
    program = """
        import torch

        def make():
            return {value}

        def call(fn):
            return fn()

        print(call(make).indices())
    """
    assert findings(cli, tmp_path, {"main.py": program.format(value="COO")}) == [("main.py", 9, "SPL001")]
    assert findings(cli, tmp_path, {"main.py": program.format(value="COO.coalesce()")}) == []


def test_a_returned_function_is_called(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": """
        import torch

        def make():
            return COO

        def pick():
            return make

        print(pick()().indices())
    """}) == [("main.py", 9, "SPL001")]


def test_getattr_of_a_project_module_gives_its_class(cli, tmp_path):
    model = """
        import torch.nn as nn

        class Tower(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4, sparse={flag})

            def forward(self, x):
                return self.emb(x)
    """
    main = """
        import torch
        import models

        model = getattr(models, "Tower")()
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
    """
    assert findings(cli, tmp_path, {"models.py": model.format(flag="True"), "main.py": main}) == [
        ("main.py", 5, "SPL401")]
    assert findings(cli, tmp_path, {"models.py": model.format(flag="False"), "main.py": main}) == []


def test_a_class_in_a_dict_of_another_module_is_constructed(cli, tmp_path):
    assert findings(cli, tmp_path, {
        "models.py": """
            import torch.nn as nn

            class Tower(nn.Module):
                def __init__(self, sparse):
                    super().__init__()
                    self.emb = nn.Embedding(10, 4, sparse=sparse)

            MODELS = {"tower": Tower}
        """,
        "main.py": """
            import torch
            from models import MODELS

            sparse = MODELS["tower"](True)
            dense = MODELS["tower"](False)
            opt = torch.optim.Adam(dense.parameters(), lr=0.1)
            opt = torch.optim.Adam(sparse.parameters(), lr=0.1)
        """}) == [("main.py", 7, "SPL401")]


PARTIAL = """
    import torch
    {imports}

    def first_row(adj, scale=1.0):
        return adj.indices()[0] * scale

    {body}
"""


def test_functools_partial_binds_its_arguments_first(cli, tmp_path):
    def run(imports, body):
        return findings(cli, tmp_path, {"main.py": PARTIAL.format(imports=imports, body=body.replace("\n", "\n    "))})

    assert run("import functools", "run = functools.partial(first_row, COO)\nrun(2.0)") == [("main.py", 5, "SPL001")]
    assert run("from functools import partial", "run = partial(first_row, adj=COO)\nrun()") == [("main.py", 5, "SPL001")]
    assert run("from functools import partial", "run = partial(first_row, COO.coalesce())\nrun(2.0)") == []
    # a keyword given at the call replaces the one the partial stored
    assert run("from functools import partial", "run = partial(first_row, adj=COO)\nrun(adj=COO.coalesce())") == []


def test_a_partial_of_a_factory_returns_what_the_factory_returns(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": """
        import functools
        import torch

        def make(scale):
            return COO

        build = functools.partial(make, 1.0)
        print(build().indices())
    """}) == [("main.py", 8, "SPL001")]


def test_calling_a_lambda_gives_its_body_with_the_parameters_bound(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": """
        import torch

        make = lambda: COO
        print(make().indices())
        first_row = lambda adj: adj.indices()[0]
        first_row(COO.coalesce())
        first_row(COO)
    """}) == [("main.py", 4, "SPL001"), ("main.py", 5, "SPL001")]


def test_a_lambda_sees_the_enclosing_names_bound_once(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": """
        import torch

        def outer():
            adj = COO
            return lambda: adj

        def rebound():
            adj = COO
            get = lambda: adj
            adj = adj.coalesce()
            return get

        print(outer()().indices())
        print(rebound()().indices())
    """}) == [("main.py", 13, "SPL001")]


def test_a_callee_that_cannot_be_determined_is_silent(cli, tmp_path):
    assert findings(cli, tmp_path, {"main.py": """
        import sys
        import torch

        def make():
            return COO.coalesce()

        def apply(fn):
            return fn()

        builders = {"safe": make}
        x = apply(builders[sys.argv[1]])
        print(x.indices())
        y = apply(getattr(sys, sys.argv[2]))
        print(y.indices())
        z = apply(make)
        print(z.indices())
    """}) == []


def test_a_registry_of_another_module_is_filled_by_the_modules_imported_for_it(cli, tmp_path):
    registry = """
        REGISTRY = {}

        def register(name):
            def add(fn):
                REGISTRY[name] = fn
                return fn
            return add
    """
    builders = """
        import torch.nn as nn
        from registry import register

        @register("sparse")
        def make():
            return nn.Embedding(10, 4, sparse=True)

        @register("dense")
        class Dense(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
    """
    main = """
        import torch
        import builders
        from registry import REGISTRY

        model = REGISTRY["{key}"]()
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
    """
    files = {"registry.py": registry, "builders.py": builders}
    assert findings(cli, tmp_path, {**files, "main.py": main.format(key="sparse")}) == [("main.py", 6, "SPL401")]
    assert findings(cli, tmp_path, {**files, "main.py": main.format(key="dense")}) == []
    # without the import that runs the decorators the registry holds nothing known
    assert findings(cli, tmp_path, {**files, "main.py": main.format(key="sparse").replace("import builders", "")}) == []
