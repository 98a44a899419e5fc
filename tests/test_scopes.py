"""Python's scopes, through the CLI: closures see their enclosing function's facts,
`global`/`nonlocal` writes reach the caller, and module-level values of another project
module reach importers unless a function there may change them. Each hazard has a look-alike
that must stay silent."""
from __future__ import annotations

import re
import textwrap

from conftest import run_cli

SPARSE = "torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3))"


def findings(folder, files: dict[str, str], entry: str = "main.py") -> list[tuple[str, int, str]]:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text).replace("SPARSE", SPARSE))
    r = run_cli("--no-cache", entry, cwd=folder)
    assert r.returncode in (0, 1), r.stderr
    return [(f, int(line), code) for f, line, code in re.findall(r"^(\S+?):(\d+):\d+: (SPL\d{3})", r.stdout, re.M)]


def line_of(folder, name: str, text: str) -> int:
    return next(i for i, line in enumerate((folder / name).read_text().splitlines(), 1) if text in line)


# -- closures -----------------------------------------------------------------------------

def test_closure_called_by_its_enclosing_function_sees_its_facts(tmp_path):
    found = findings(tmp_path, {"main.py": """
        import torch
        def train():
            adj = SPARSE
            def degree():
                return adj.indices()[0]
            return degree()
        train()
        """})
    assert found == [("main.py", line_of(tmp_path, "main.py", "adj.indices()"), "SPL001")]


def test_closure_sees_the_enclosing_name_as_it_is_when_called(tmp_path):
    # rebound to a coalesced tensor before the call: the closure reads the new value
    assert findings(tmp_path, {"main.py": """
        import torch
        def train():
            adj = SPARSE
            def degree():
                return adj.indices()[0]
            adj = adj.coalesce()
            return degree()
        train()
        """}) == []


def test_returned_closure_keeps_what_the_factory_held(tmp_path):
    found = findings(tmp_path, {"main.py": """
        import torch
        def make_lookup(adj):
            def lookup():
                return adj.indices()
            return lookup
        lookup = make_lookup(SPARSE)
        rows = lookup()
        """})
    assert found == [("main.py", line_of(tmp_path, "main.py", "adj.indices()"), "SPL001")]


def test_returned_closure_sees_the_value_at_return(tmp_path):
    assert findings(tmp_path, {"main.py": """
        import torch
        def make_lookup():
            adj = SPARSE
            def lookup():
                return adj.indices()
            adj = adj.coalesce()
            return lookup
        rows = make_lookup()()
        """}) == []


def test_closure_over_a_sparse_embedding_runs_its_optimizer_hazard(tmp_path):
    found = findings(tmp_path, {"main.py": """
        import torch
        import torch.nn as nn
        def build(sparse):
            emb = nn.Embedding(10, 4, sparse=sparse)
            def step():
                opt = torch.optim.Adam(emb.parameters(), lr=0.1)
                emb(torch.tensor([1, 2])).sum().backward()
                opt.step()
            return step
        build(True)()
        build(False)()
        """})
    # one finding, from the closure made with sparse=True only
    assert found == [("main.py", line_of(tmp_path, "main.py", "torch.optim.Adam"), "SPL401")]


# -- global and nonlocal ------------------------------------------------------------------

def test_global_written_by_a_called_function(tmp_path):
    found = findings(tmp_path, {"main.py": """
        import torch
        ADJ = None
        def setup():
            global ADJ
            ADJ = SPARSE
        setup()
        print(ADJ.indices())
        """})
    assert found == [("main.py", line_of(tmp_path, "main.py", "ADJ.indices()"), "SPL001")]


def test_global_written_by_a_function_called_from_a_function(tmp_path):
    found = findings(tmp_path, {"main.py": """
        import torch
        ADJ = None
        def setup():
            global ADJ
            ADJ = SPARSE
        def main():
            setup()
            return ADJ.indices()
        main()
        """})
    assert found == [("main.py", line_of(tmp_path, "main.py", "ADJ.indices()"), "SPL001")]


def test_global_rebound_to_a_coalesced_tensor_is_silent(tmp_path):
    assert findings(tmp_path, {"main.py": """
        import torch
        ADJ = SPARSE
        def fix():
            global ADJ
            ADJ = ADJ.coalesce()
        fix()
        print(ADJ.indices())
        """}) == []


def test_global_written_by_a_call_not_followed_becomes_unknown(tmp_path):
    # a call with `*args` is not analysed: what it may rebind is no longer known
    assert findings(tmp_path, {"main.py": """
        import torch
        ADJ = SPARSE
        def fix(*unused):
            global ADJ
            ADJ = ADJ.coalesce()
        fix(*[])
        print(ADJ.indices())
        """}) == []


def test_function_reading_a_rebound_global_does_not_trust_its_first_value(tmp_path):
    # `use` alone would see ADJ uncoalesced; `fix` may have run before it
    assert findings(tmp_path, {"main.py": """
        import torch
        ADJ = SPARSE
        def fix():
            global ADJ
            ADJ = ADJ.coalesce()
        def use():
            return ADJ.indices()
        """}) == []


def test_nonlocal_written_by_a_nested_function(tmp_path):
    found = findings(tmp_path, {"main.py": """
        import torch
        def run():
            adj = None
            def load():
                nonlocal adj
                adj = SPARSE
            load()
            return adj.indices()
        run()
        """})
    assert found == [("main.py", line_of(tmp_path, "main.py", "adj.indices()"), "SPL001")]


def test_nonlocal_rebound_to_a_coalesced_tensor_is_silent(tmp_path):
    assert findings(tmp_path, {"main.py": """
        import torch
        def run():
            adj = SPARSE
            def fix():
                nonlocal adj
                adj = adj.coalesce()
            fix()
            return adj.indices()
        run()
        """}) == []


# -- module-level values of another module ------------------------------------------------

def test_dict_of_modules_imported_from_a_config_module(tmp_path):
    found = findings(tmp_path, {"config.py": """
        import torch.nn as nn
        TABLES = {"user": nn.Embedding(10, 4, sparse=True), "lr": 0.1}
        """, "main.py": """
        import torch
        from config import TABLES
        TABLES["user"](torch.tensor([1, 2])).sum().backward()
        torch.nn.utils.clip_grad_norm_(TABLES["user"].parameters(), 1.0)
        """})
    assert found == [("main.py", 5, "SPL301")]


def test_coalesced_value_of_a_config_module_is_silent(tmp_path):
    assert findings(tmp_path, {"config.py": """
        import torch
        ADJ = SPARSE.coalesce()
        TABLES = {"adj": SPARSE.coalesce()}
        """, "main.py": """
        from config import ADJ, TABLES
        rows = ADJ.indices()
        cols = TABLES["adj"].indices()
        """}) == []


def test_module_value_a_function_there_rebinds_is_not_carried(tmp_path):
    assert findings(tmp_path, {"config.py": """
        import torch
        ADJ = SPARSE
        def refresh():
            global ADJ
            ADJ = ADJ.coalesce()
        """, "main.py": """
        import config
        config.refresh()
        rows = config.ADJ.indices()
        """}) == []


def test_returned_closure_rebinding_nonlocal_leaves_the_module_name_alone(tmp_path):
    # `load` rebinds `make`'s variable, not the module's `adj` of the same name
    assert findings(tmp_path, {"main.py": """
        import torch
        adj = SPARSE.coalesce()
        def make():
            adj = None
            def load():
                nonlocal adj
                adj = SPARSE
            return load
        make()()
        print(adj.indices())
        """}) == []


def test_closure_made_in_a_loop_and_called_later_is_silent(tmp_path):
    # closures read a loop variable when they run: both see the last (coalesced) tensor
    assert findings(tmp_path, {"main.py": """
        import torch
        def run(callbacks):
            for cb in callbacks:
                cb()
        def build():
            made = []
            for adj in (SPARSE, SPARSE.coalesce()):
                def degree():
                    return adj.indices()
                made.append(degree)
            run(made)
        build()
        """}) == []


def test_local_variable_shadowing_a_global_is_not_rebound_by_the_callee(tmp_path):
    assert findings(tmp_path, {"main.py": """
        import torch
        ADJ = None
        def setup():
            global ADJ
            ADJ = SPARSE
        def main():
            ADJ = SPARSE.coalesce()
            setup()
            return ADJ.indices()
        main()
        """}) == []


def test_closure_passed_on_sees_a_parameter_rebound_after_its_def(tmp_path):
    # `adj` is a parameter rebound after the `def`: `run` calls the closure after that
    assert findings(tmp_path, {"main.py": """
        import torch
        def run(fn, other):
            return fn()
        def train(adj):
            def degree():
                return adj.indices()
            adj = adj.coalesce()
            return run(degree, adj)
        train(SPARSE)
        """}) == []


def test_closure_passed_to_a_helper_reads_the_running_function(tmp_path):
    found = findings(tmp_path, {"main.py": """
        import torch
        def run(fn, other):
            return fn()
        def train(adj):
            def degree():
                return adj.indices()
            return run(degree, adj)
        train(SPARSE)
        """})
    assert found == [("main.py", line_of(tmp_path, "main.py", "adj.indices()"), "SPL001")]


def test_function_called_after_a_global_fix_reads_the_fixed_value(tmp_path):
    # `main` rebinds ADJ through `fix`: `check`, called next, reads the coalesced tensor
    assert findings(tmp_path, {"main.py": """
        import torch
        ADJ = SPARSE
        def fix():
            global ADJ
            ADJ = ADJ.coalesce()
        def check():
            return ADJ.indices()
        def main():
            fix()
            return check()
        main()
        """}) == []


def test_function_called_after_a_global_setup_reads_the_new_value(tmp_path):
    found = findings(tmp_path, {"main.py": """
        import torch
        ADJ = None
        def setup():
            global ADJ
            ADJ = SPARSE
        def check():
            return ADJ.indices()
        def main():
            setup()
            return check()
        main()
        """})
    assert found == [("main.py", line_of(tmp_path, "main.py", "ADJ.indices()"), "SPL001")]


def test_global_written_by_a_function_passed_to_a_helper(tmp_path):
    # `run` calls `setup` it is passed: the caller reads the tensor `setup` left in ADJ
    found = findings(tmp_path, {"main.py": """
        import torch
        ADJ = None
        def setup():
            global ADJ
            ADJ = SPARSE
        def run(fn):
            fn()
        run(setup)
        print(ADJ.indices())
        """})
    assert found == [("main.py", line_of(tmp_path, "main.py", "ADJ.indices()"), "SPL001")]


def test_global_fixed_by_a_function_passed_to_a_helper_is_silent(tmp_path):
    assert findings(tmp_path, {"main.py": """
        import torch
        ADJ = SPARSE
        def fix():
            global ADJ
            ADJ = ADJ.coalesce()
        def run(fn):
            fn()
        run(fix)
        print(ADJ.indices())
        """}) == []


def test_global_fixed_by_a_function_passed_to_an_unknown_call_is_silent(tmp_path):
    # `apply` is not the project's: it may run `fix`, so ADJ is no longer known
    assert findings(tmp_path, {"main.py": """
        import torch
        from somewhere import apply
        ADJ = SPARSE
        def fix():
            global ADJ
            ADJ = ADJ.coalesce()
        apply(fix)
        print(ADJ.indices())
        """}) == []


def test_nonlocal_fixed_by_a_closure_passed_to_a_helper_is_silent(tmp_path):
    assert findings(tmp_path, {"main.py": """
        import torch
        def run(fn):
            fn()
        def train():
            adj = SPARSE
            def fix():
                nonlocal adj
                adj = adj.coalesce()
            run(fix)
            return adj.indices()
        train()
        """}) == []


def test_module_value_a_function_there_changes_in_place_is_not_carried(tmp_path):
    # `fix()` holds no rule token and is passed nothing; it changes what `config` holds, so
    # it is followed and the importer does not keep the uncoalesced item
    assert findings(tmp_path, {"config.py": """
        import torch
        TABLES = {"adj": SPARSE}
        def fix():
            TABLES["adj"] = TABLES["adj"].coalesce()
        """, "main.py": """
        from config import TABLES, fix
        fix()
        rows = TABLES["adj"].indices()
        """}) == []


def test_cached_result_follows_a_change_of_the_imported_module(tmp_path):
    config = tmp_path / "config.py"
    config.write_text(f"import torch\nADJ = {SPARSE}\n")
    (tmp_path / "main.py").write_text("from config import ADJ\nrows = ADJ.indices()\n")
    first = run_cli("main.py", cwd=tmp_path)
    assert re.findall(r"^main\.py:2:\d+: SPL001", first.stdout, re.M), first.stdout + first.stderr
    config.write_text(f"import torch\nADJ = {SPARSE}.coalesce()\n")
    second = run_cli("main.py", cwd=tmp_path)
    assert second.returncode == 0 and "SPL001" not in second.stdout, second.stdout
