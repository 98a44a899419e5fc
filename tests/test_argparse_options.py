"""Command-line options are inputs: a program reading its optimizer or clipping from argparse
is checked with each value its options admit, and each finding names the option. The
programs run under torch with the same options. Real CLI runs on real files."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import run_cli

TRAIN = '''
import argparse

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n, sparse):
        super().__init__()
        self.emb = nn.Embedding(n, 8, sparse=sparse)
        self.out = nn.Linear(8, 1)

    def forward(self, ids):
        return self.out(self.emb(ids)).sum()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--optim", default="adam", choices=["adam", "sgd", "sparseadam"])
    parser.add_argument("--clip", type=float, default=5.0)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args({explicit})
    model = Model(100, sparse=args.optim == "sparseadam")
    if args.optim == "sparseadam":
        opt = torch.optim.SparseAdam(list(model.emb.parameters()), lr=args.lr)
        dense = torch.optim.Adam(list(model.out.parameters()), lr=args.lr)
    elif args.optim == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=args.lr)
        dense = None
    else:
        opt = torch.optim.Adam(model.parameters(), lr=args.lr)
        dense = None
    for _ in range(3):
        opt.zero_grad()
        loss = model(torch.randint(0, 100, (16,)))
        loss.backward()
        if args.clip > 0:
            torch.nn.utils.clip_grad_norm_({clipped}, args.clip)
        opt.step()
        if dense is not None:
            dense.step()


if __name__ == "__main__":
    main()
'''


def _program(tmp_path, name="train.py", explicit="", clipped="model.parameters()"):
    text = textwrap.dedent(TRAIN).lstrip().replace("{explicit}", explicit).replace("{clipped}", clipped)
    (tmp_path / name).write_text(text)
    return text


def _run(tmp_path, *argv):
    return subprocess.run([sys.executable, "train.py", *argv], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"}, timeout=300)


def test_a_choice_of_an_option_that_makes_gradients_sparse_is_checked(tmp_path):
    text = _program(tmp_path)
    r = run_cli("--no-cache", "--output-format", "full", "train.py", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    clip = next(i for i, line in enumerate(text.splitlines(), 1) if "clip_grad_norm_" in line)
    option = next(i for i, line in enumerate(text.splitlines(), 1) if '"--optim"' in line)
    assert re.findall(r"^train.py:(\d+):\d+: (SPL\d+)", r.stdout, re.M) == [(str(clip), "SPL301")]
    assert f"because: line {option}: `--optim sparseadam`, a value the option admits" in r.stdout
    # the option setting is the entry-point setting
    off = run_cli("--no-cache", "--config", "api-entry-points = false", "train.py", cwd=tmp_path)
    assert off.returncode == 0, off.stdout


@pytest.mark.torch
def test_the_finding_is_what_the_program_does_with_that_option(tmp_path):
    _program(tmp_path)
    assert _run(tmp_path).returncode == 0  # the defaults run clean
    bad = _run(tmp_path, "--optim", "sparseadam")
    assert bad.returncode != 0 and "Could not run 'aten::linalg_vector_norm'" in bad.stderr
    _program(tmp_path, clipped="model.out.parameters()")  # the silent twin runs clean with it
    assert _run(tmp_path, "--optim", "sparseadam").returncode == 0


def test_clipping_only_the_dense_parameters_and_an_explicit_argument_list_stay_silent(tmp_path):
    _program(tmp_path, clipped="model.out.parameters()")
    r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout
    # `parse_args([...])` parses that list, not the command line: its values are not assumed
    _program(tmp_path, explicit='["--clip", "0"]')
    r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


LISTS = [
    ('["--optim", "sparseadam"]', True),  # the default `--clip 5.0` clips the sparse table
    ('["--optim", "sparseadam", "--clip", "0"]', False),
    ('["--clip=0", "--optim=sparseadam"]', False),
    ('["--optim", "sgd"]', False),
    ('["--optim", "adagrad"]', False),  # not among the choices: argparse exits
    ('["--optim", "sparseadam", "--epochs", "3"]', False),  # an option not declared: not read
]


@pytest.mark.parametrize("explicit, reported", LISTS)
def test_a_literal_argument_list_is_parsed_with_the_declared_options(tmp_path, explicit, reported):
    _program(tmp_path, explicit=explicit)
    r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=tmp_path)
    assert r.returncode == (1 if reported else 0), r.stdout + r.stderr
    assert ("SPL301" in r.stdout) is reported, r.stdout


@pytest.mark.torch
@pytest.mark.parametrize("explicit, reported", [lst for lst in LISTS if "adagrad" not in lst[0] and "epochs" not in lst[0]])
def test_a_literal_argument_list_fails_under_torch_where_it_is_reported(tmp_path, explicit, reported):
    _program(tmp_path, explicit=explicit)
    r = _run(tmp_path)
    assert (r.returncode != 0) is reported, r.stderr
    if reported:
        assert "Could not run 'aten::linalg_vector_norm'" in r.stderr


PICKED = '''
import argparse

import torch
import torch.nn as nn


def train_parser():
    p = argparse.ArgumentParser("train")
    p.add_argument("--optimizer", {train})
    p.add_argument("--lr", type=float, default=0.1){more}
    return p


def tune_parser():
    p = argparse.ArgumentParser("tune")
    p.add_argument("--optimizer", choices=["adam", "adagrad"], default="{tune}")
    return p


args = train_parser().parse_args({argv})
emb = nn.Embedding(100, 8, sparse=True)
opt = (torch.optim.Adagrad(emb.parameters(), lr=args.lr) if args.optimizer == "adagrad"
       else torch.optim.Adam(emb.parameters(), lr=args.lr))
emb(torch.randint(0, 100, (16,))).sum().backward()
opt.step()
'''
# (how the train parser declares --optimizer, what else it does, the tune parser's default,
# the list parsed, whether Adam runs)
PICKED_CASES = [
    ('choices=["adam", "adagrad"], default="adagrad"', "", "adam", "[]", False),  # another parser's default
    ('choices=["adam", "adagrad"], default="adam"', "", "adagrad", "[]", True),
    ('choices=["adam", "adagrad"], default="adam"', '\n    p.set_defaults(optimizer="adagrad")', "adam", "[]", False),
    ('type=str.lower, choices=["adam", "adagrad"], default="adam"', "", "adam", '["--optimizer", "ADAGRAD"]', False),
    ('type=str.lower, choices=["adam", "adagrad"], default="adagrad"', "", "adam", '["--optimizer", "Adam"]', True),
    ('choices=["adam", "adagrad"], default="adam"', "", "adam", '["--optim", "adagrad"]', False),  # a prefix
    ('"-o", choices=["adam", "adagrad"], default="adam"', "", "adam", '["-o", "adagrad"]', False),  # a short alias
]


def _picked(tmp_path, train, more, tune, argv):
    text = textwrap.dedent(PICKED).lstrip().format(train=train, more=more, tune=tune, argv=argv)
    (tmp_path / "pick.py").write_text(text)


@pytest.mark.parametrize("train, more, tune, argv, adam", PICKED_CASES)
def test_a_literal_list_is_parsed_with_its_parsers_options(tmp_path, train, more, tune, argv, adam):
    _picked(tmp_path, train, more, tune, argv)
    r = run_cli("--no-cache", "--output-format", "concise", "pick.py", cwd=tmp_path)
    assert ("SPL401" in r.stdout) is adam, r.stdout + r.stderr


@pytest.mark.torch
@pytest.mark.parametrize("train, more, tune, argv, adam", PICKED_CASES)
def test_the_arm_a_literal_list_picks_is_what_torch_runs(tmp_path, train, more, tune, argv, adam):
    _picked(tmp_path, train, more, tune, argv)
    r = subprocess.run([sys.executable, "pick.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert (r.returncode != 0) is adam, r.stderr
    if adam:
        assert "Adam does not support sparse gradients" in r.stderr


def test_a_store_true_flag_defaulting_to_true_stays_true(tmp_path):
    (tmp_path / "flag.py").write_text(textwrap.dedent('''
        import argparse

        import torch
        import torch.nn as nn

        p = argparse.ArgumentParser()
        p.add_argument("--sparse", action="store_true", default=True)
        args = p.parse_args([])
        emb = nn.Embedding(100, 8, sparse=args.sparse)
        opt = torch.optim.Adam(emb.parameters(), lr=0.1)
        emb(torch.randint(0, 100, (16,))).sum().backward()
        opt.step()
    ''').lstrip())
    r = run_cli("--no-cache", "--output-format", "concise", "flag.py", cwd=tmp_path)
    assert r.returncode == 1 and "SPL401" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("explicit, call, reported", [
    ("argv", "main()", True),  # `def main(argv=None)` called without one: the command line
    ("sys.argv[1:]", "main()", True),
    ("argv", 'main(["--clip", "0"])', False),  # the list the caller passes is what it parses
    ("argv", 'main(["--optim", "sparseadam"])', True),
    ("argv", "main(sys.argv[1:])", True),  # the command line, passed on
    ("argv", "main(sys.argv[2:])", False),  # a subcommand's arguments: not known
])
def test_parse_args_given_the_command_line_through_a_parameter(tmp_path, explicit, call, reported):
    text = _program(tmp_path, explicit=explicit).replace("def main():", "def main(argv=None):")
    text = text.replace("import argparse", "import argparse\nimport sys").replace("    main()", f"    {call}")
    (tmp_path / "train.py").write_text(text)
    r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=tmp_path)
    assert r.returncode == (1 if reported else 0), r.stdout + r.stderr
    assert ("SPL301" in r.stdout) is reported, r.stdout


def test_a_required_option_has_no_default_and_an_unread_option_changes_nothing(tmp_path):
    (tmp_path / "req.py").write_text(textwrap.dedent('''
        import argparse
        import torch
        import torch.nn as nn

        p = argparse.ArgumentParser()
        p.add_argument("--optim", required=True, choices=["adam", "sparse_adam"])
        p.add_argument("--unused", choices=["a", "b", "c"], default="a")
        args = p.parse_args()
        emb = nn.Embedding(10, 3, sparse=args.optim != "adam")
        if args.optim == "sparse_adam":
            opt = torch.optim.SparseAdam(emb.parameters())
        else:
            opt = torch.optim.Adam(emb.parameters())
        emb(torch.tensor([1])).sum().backward()
        opt.step()
    ''').lstrip())
    r = run_cli("--no-cache", "--output-format", "concise", "req.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


# -- options another module's function adds (issue 19) ------------------------------------

from conftest import FIXTURES  # noqa: E402

OPTION_PROJECT = os.path.join(FIXTURES, "projects", "option_module_clip_{}")


def _copy_project(tmp_path, side="bad"):
    import shutil
    shutil.copytree(OPTION_PROJECT.format(side), tmp_path / side)
    return tmp_path / side


def _line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_options_a_helper_of_another_module_adds_are_the_programs_options(tmp_path):
    """opts.py adds `--optim` to an argument group inside `_add_optimization_opts(parser)`,
    reached through `opts.train_opts(parser)`; the options travel through build_model(opt)
    and Optimizer.from_opt(model, opt); the clipping in optimizers.py is reported with the
    option's line in opts.py."""
    project = _copy_project(tmp_path)
    r = run_cli("--no-cache", "--output-format", "full", "train.py", cwd=project)
    assert r.returncode == 1, r.stdout + r.stderr
    clip = _line_of(project / "optimizers.py", "clip_grad_norm_(self._params")
    option = _line_of(project / "opts.py", '"--optim"')
    assert re.findall(r"^([\w.]+):(\d+):\d+: (SPL\d+)", r.stdout, re.M) == [("optimizers.py", str(clip), "SPL301")]
    assert f"because: opts.py:{option}: `--optim sparseadam`, a value the option admits" in r.stdout
    # the twin clips only the dense parameters
    twin = _copy_project(tmp_path, "good")
    r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=twin)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


def test_a_parser_not_handed_to_the_helper_gets_none_of_its_options(tmp_path):
    project = _copy_project(tmp_path)
    train = project / "train.py"
    # the helper fills a parser of its own (to print its help, say), not the one parsed,
    # whose `--optim` admits only its default
    train.write_text(train.read_text().replace("    opts.train_opts(parser)\n", """\
    shown = argparse.ArgumentParser()
    opts.train_opts(shown)
    shown.format_help()
    parser.add_argument("--optim", default="sgd")
    parser.add_argument("--max_grad_norm", type=float, default=5)
    parser.add_argument("--learning_rate", type=float, default=0.1)
    parser.add_argument("--train_steps", type=int, default=3)
"""))
    r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=project)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


def test_options_added_from_a_table_the_engine_cannot_read_stay_unknown(tmp_path):
    project = _copy_project(tmp_path)
    (project / "opts.json").write_text('{"--optim": {"default": "sgd", "choices": ["sgd", "sparseadam"]}}')
    opts = project / "opts.py"
    opts.write_text(opts.read_text().replace(
        '''    group.add_argument("--optim", default="sgd", choices=["sgd", "adagrad", "adam", "sparseadam"],
                       help="Optimization method.")
''', '''    import json
    with open("opts.json") as fh:
        for name, spec in json.load(fh).items():
            group.add_argument(name, **spec)
'''))
    assert "json.load" in opts.read_text()
    r = run_cli("--no-cache", "--output-format", "concise", "train.py", cwd=project)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


def test_configargparse_groups_add_and_a_helper_handing_the_parser_on(tmp_path):
    """`group.add(...)` (configargparse's name for add_argument) inside a helper that another
    helper of this module hands the parser to; the finding names that module's line."""
    (tmp_path / "options.py").write_text(textwrap.dedent('''
        def _optimization(parser):
            group = parser.add_argument_group("Optimization")
            group.add("--optim", "-optim", default="sgd", choices=["sgd", "sparseadam"])


        def train_opts(parser):
            _optimization(parser)
    ''').lstrip())
    (tmp_path / "train.py").write_text(textwrap.dedent('''
        import configargparse
        import torch
        import torch.nn as nn
        from options import train_opts


        def add_options(p):
            train_opts(p)


        parser = configargparse.ArgumentParser()
        add_options(parser)
        opt = parser.parse_args()
        emb = nn.Embedding(10, 3, sparse=opt.optim == "sparseadam")
        emb(torch.tensor([1, 2])).sum().backward()
        torch.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
    ''').lstrip())
    r = run_cli("--no-cache", "--output-format", "full", "train.py", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    clip = _line_of(tmp_path / "train.py", "clip_grad_norm_")
    option = _line_of(tmp_path / "options.py", '"--optim"')
    assert re.findall(r"^([\w.]+):(\d+):\d+: (SPL\d+)", r.stdout, re.M) == [("train.py", str(clip), "SPL301")]
    assert f"because: options.py:{option}: `--optim sparseadam`, a value the option admits" in r.stdout


@pytest.mark.torch
def test_the_option_project_fails_with_the_option_and_runs_clean_without_it(tmp_path):
    project = _copy_project(tmp_path)
    plain = subprocess.run([sys.executable, "train.py"], cwd=project, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr[-500:]
    given = subprocess.run([sys.executable, "train.py", "--optim", "sparseadam"], cwd=project, capture_output=True,
                           text=True, timeout=300)
    assert given.returncode != 0 and "Could not run 'aten::linalg_vector_norm'" in given.stderr
    clip = _line_of(project / "optimizers.py", "clip_grad_norm_(self._params")
    assert f'optimizers.py", line {clip}, in step' in given.stderr


def test_values_tested_where_the_program_builds_come_first_under_the_cap(tmp_path):
    """Seven values of `--dtype` come before `--optim`; the cap on runs leaves room for six:
    `sparseadam`, which the program tests on its `sparse=` line, is among the values run."""
    (tmp_path / "train.py").write_text(textwrap.dedent('''
        import argparse
        import torch
        import torch.nn as nn

        DTYPES = {"fp32": torch.float32, "fp64": torch.float64, "fp16": torch.float16, "bf16": torch.bfloat16,
                  "half": torch.half, "double": torch.double, "float": torch.float}
        parser = argparse.ArgumentParser()
        parser.add_argument("--dtype", default="fp32", choices=["fp64", "fp16", "bf16", "half", "double", "float"])
        parser.add_argument("--optim", default="sgd", choices=["sgd", "sparseadam"])
        args = parser.parse_args()
        emb = nn.Embedding(10, 3, sparse=args.optim == "sparseadam")
        emb = emb.to(DTYPES[args.dtype])
        optimizer = torch.optim.SGD(emb.parameters(), lr=0.1)
        emb(torch.tensor([1, 2])).sum().backward()
        torch.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
        optimizer.step()
    ''').lstrip())
    r = run_cli("--no-cache", "--output-format", "full", "train.py", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    clip = _line_of(tmp_path / "train.py", "clip_grad_norm_")
    assert re.findall(r"^([\w.]+):(\d+):\d+: (SPL\d+)", r.stdout, re.M) == [("train.py", str(clip), "SPL301")]
    assert "`--optim sparseadam`, a value the option admits" in r.stdout


def test_a_cached_result_follows_the_options_module(tmp_path):
    """The check of train.py depends on opts.py: once `sparseadam` is no longer a choice
    there, the cached finding is not reused."""
    project = _copy_project(tmp_path)
    cache = tmp_path / "cache"
    assert run_cli("--cache-dir", str(cache), "train.py", cwd=project).returncode == 1
    opts = project / "opts.py"
    opts.write_text(opts.read_text().replace('"adam", "sparseadam"]', '"adam"]'))
    r = run_cli("--cache-dir", str(cache), "--output-format", "concise", "train.py", cwd=project)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout
