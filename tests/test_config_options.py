"""Configs are inputs: a public function of a package that merges a caller's keywords over a
defaults dict, or receives a record-class config, is checked with each value its code admits
for one option at a time (a key of the table the value indexes, a member of a `Literal`
annotation, the other truth value of a flag); each finding names the option and where its
value is written. The programs run under torch with the same values. Real CLI runs on real
files."""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import FIXTURES, run_cli

TABLE_PROJECT = os.path.join(FIXTURES, "projects", "api_config_dict_option_bad")
LITERAL_PROJECT = os.path.join(FIXTURES, "projects", "api_config_literal_bad")


def _findings(stdout: str) -> list:
    return re.findall(r"^(\S+\.py):(\d+):\d+: (SPL\d+)", stdout, re.M)


def _package(tmp_path, files: dict) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())


def _python(tmp_path, code: str):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"}, timeout=300)


def test_a_key_of_the_optimizer_table_a_defaults_dict_option_indexes_is_checked(tmp_path):
    shutil.copytree(TABLE_PROJECT, tmp_path / "p")
    r = run_cli("--no-cache", "--output-format", "full", os.path.join("reclib", "train.py"), cwd=tmp_path / "p")
    assert r.returncode == 1, r.stdout + r.stderr
    assert _findings(r.stdout) == [(os.path.join("reclib", "train.py"), "11", "SPL401")]
    # the option and where the value that fails is written, and the default it meets
    config = os.path.join("reclib", "config.py")
    assert (f'because: {config}:15: `"optimizer": "adam"`, a key of the table it indexes '
            "(an option of `train()`)") in r.stdout
    assert f'because: {config}:7: `"sparse": True`, the default (an option of `train()`)' in r.stdout
    off = run_cli("--no-cache", "--config", "api-entry-points = false", os.path.join("reclib", "train.py"),
                  cwd=tmp_path / "p")
    assert off.returncode == 0, off.stdout


def test_a_member_of_a_literal_field_of_a_config_dataclass_is_checked(tmp_path):
    shutil.copytree(LITERAL_PROJECT, tmp_path / "p")
    r = run_cli("--no-cache", "--output-format", "full", os.path.join("rec", "train.py"), cwd=tmp_path / "p")
    assert _findings(r.stdout) == [(os.path.join("rec", "train.py"), "11", "SPL403")], r.stdout + r.stderr
    assert (f'because: {os.path.join("rec", "config.py")}:9: `optimizer="sparse_adam"`, a member of its `Literal` '
            "annotation (an option of `train()`)") in r.stdout


FLAG_CONFIG = '''
    DEFAULTS = {"num_items": 100, "sparse": False, "clip": 1.0}
'''

FLAG_TRAIN = '''
    import torch
    import torch.nn as nn

    from .config import DEFAULTS


    def train(batches, **kwargs):
        config = dict(DEFAULTS, **kwargs)
        emb = nn.Embedding(config["num_items"], 8, sparse=config["sparse"])
        opt = torch.optim.SGD(emb.parameters(), lr=0.1)
        for ids in batches:
            opt.zero_grad()
            emb(ids).sum().backward()
            if config["clip"]{guard}:
                torch.nn.utils.clip_grad_norm_(emb.parameters(), config["clip"])
            opt.step()
        return emb
'''


def test_a_flag_of_a_defaults_dict_turned_meets_the_default_clip_norm(tmp_path):
    _package(tmp_path, {"lib/config.py": FLAG_CONFIG, "lib/train.py": FLAG_TRAIN.replace("{guard}", "")})
    r = run_cli("--no-cache", "--output-format", "full", "lib/train.py", cwd=tmp_path)
    assert _findings(r.stdout) == [("lib/train.py", "15", "SPL301")], r.stdout + r.stderr
    assert ("because: lib/config.py:1: `\"sparse\": True`, the flag's other value, which a caller may pass "
            "(an option of `train()`)") in r.stdout
    # the twin clips only dense gradients: silent with the flag either way
    _package_twin = FLAG_TRAIN.replace("{guard}", ' and not config["sparse"]')
    (tmp_path / "lib" / "train.py").write_text(textwrap.dedent(_package_twin).lstrip())
    r = run_cli("--no-cache", "--output-format", "concise", "lib/train.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


@pytest.mark.torch
def test_the_flag_turned_fails_under_torch_and_the_twin_runs(tmp_path):
    _package(tmp_path, {"lib/config.py": FLAG_CONFIG, "lib/train.py": FLAG_TRAIN.replace("{guard}", "")})
    call = "import torch\nfrom lib.train import train\ntrain([torch.tensor([1, 2, 3])]{given})\n"
    assert _python(tmp_path, call.format(given="")).returncode == 0  # the defaults run clean
    bad = _python(tmp_path, call.format(given=", sparse=True"))
    assert bad.returncode != 0 and "Could not run 'aten::linalg_vector_norm'" in bad.stderr, bad.stderr
    twin = FLAG_TRAIN.replace("{guard}", ' and not config["sparse"]')
    (tmp_path / "lib" / "train.py").write_text(textwrap.dedent(twin).lstrip())
    assert _python(tmp_path, call.format(given=", sparse=True")).returncode == 0


@pytest.mark.torch
def test_the_admitted_values_fail_under_torch(tmp_path):
    shutil.copytree(TABLE_PROJECT, tmp_path / "t")
    run = "import torch\nfrom reclib.train import train\ntrain([torch.tensor([1, 2])]{given})\n"
    assert _python(tmp_path / "t", run.format(given="")).returncode == 0
    bad = _python(tmp_path / "t", run.format(given=', optimizer="adam"'))
    assert "Adam does not support sparse gradients" in bad.stderr, bad.stderr
    shutil.copytree(LITERAL_PROJECT, tmp_path / "l")
    run = ("import torch\nfrom rec.config import TrainConfig\nfrom rec.train import train\n"
           "train(TrainConfig({given}), [torch.tensor([1, 2])])\n")
    assert _python(tmp_path / "l", run.format(given="")).returncode == 0
    bad = _python(tmp_path / "l", run.format(given='optimizer="sparse_adam"'))
    assert "SparseAdam does not support dense gradients" in bad.stderr, bad.stderr


LOOKALIKES = '''
    import json

    import torch
    import torch.nn as nn

    DEFAULTS = {"optimizer": "sgd", "sparse": True}
    OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


    def train_from_file(batches, path, **kwargs):
        """A value read at run time is not a default: unknown."""
        with open(path) as fh:
            config = {**DEFAULTS, **json.load(fh)}
        emb = nn.Embedding(100, 8, sparse=config["sparse"])
        opt = OPTIMIZERS[config["optimizer"]](emb.parameters(), lr=0.1)
        for ids in batches:
            emb(ids).sum().backward()
            opt.step()


    def train_fixed(batches):
        """No caller chooses: the table's other keys are never picked."""
        config = dict(DEFAULTS)
        emb = nn.Embedding(100, 8, sparse=config["sparse"])
        opt = OPTIMIZERS[config["optimizer"]](emb.parameters(), lr=0.1)
        for ids in batches:
            emb(ids).sum().backward()
            opt.step()
'''


def test_a_config_read_at_run_time_or_that_no_caller_sets_stays_silent(tmp_path):
    _package(tmp_path, {"lib/train.py": LOOKALIKES})
    r = run_cli("--no-cache", "--output-format", "concise", "lib/train.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


COMMENTED_CONFIG = '''
    from dataclasses import dataclass


    @dataclass
    class TrainConfig:
        num_items: int = 1000
        # the class of torch.optim: "Adam", or "SparseAdam" for a large table
        optimizer: str = "Adam"
        lr: float = 0.01
'''

COMMENTED_TRAIN = '''
    import torch
    import torch.nn as nn

    from .config import TrainConfig


    def train(batches, cfg: TrainConfig = TrainConfig()):
        emb = nn.Embedding(cfg.num_items, 8{sparse})
        opt = getattr(torch.optim, cfg.optimizer)(emb.parameters(), lr=cfg.lr)
        for ids in batches:
            opt.zero_grad()
            emb(ids).sum().backward()
            opt.step()
        return emb
'''


def test_a_value_the_comment_of_a_config_field_names_is_checked(tmp_path):
    _package(tmp_path, {"lib/config.py": COMMENTED_CONFIG, "lib/train.py": COMMENTED_TRAIN.replace("{sparse}", "")})
    r = run_cli("--no-cache", "--output-format", "full", "lib/train.py", cwd=tmp_path)
    assert _findings(r.stdout) == [("lib/train.py", "9", "SPL403")], r.stdout + r.stderr
    assert ('because: lib/config.py:7: `optimizer="SparseAdam"`, a value its comment names (an option of `train()`)'
            in r.stdout)
    twin = COMMENTED_TRAIN.replace("{sparse}", ', sparse=cfg.optimizer == "SparseAdam"')
    (tmp_path / "lib" / "train.py").write_text(textwrap.dedent(twin).lstrip())
    r = run_cli("--no-cache", "--output-format", "concise", "lib/train.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


@pytest.mark.torch
def test_the_value_the_comment_names_fails_under_torch(tmp_path):
    _package(tmp_path, {"lib/config.py": COMMENTED_CONFIG, "lib/train.py": COMMENTED_TRAIN.replace("{sparse}", "")})
    run = ("import torch\nfrom lib.config import TrainConfig\nfrom lib.train import train\n"
           "train([torch.tensor([1, 2])]{given})\n")
    assert _python(tmp_path, run.format(given="")).returncode == 0
    bad = _python(tmp_path, run.format(given=', TrainConfig(optimizer="SparseAdam")'))
    assert "SparseAdam does not support dense gradients" in bad.stderr, bad.stderr
    twin = COMMENTED_TRAIN.replace("{sparse}", ', sparse=cfg.optimizer == "SparseAdam"')
    (tmp_path / "lib" / "train.py").write_text(textwrap.dedent(twin).lstrip())
    assert _python(tmp_path, run.format(given=', TrainConfig(optimizer="SparseAdam")')).returncode == 0


PLAIN_CONFIG = '''
    class TrainConfig:
        """Class-level defaults; set an attribute to change one."""
        num_items = 1000
        sparse = False
        optimizer = "adam"
        lr = 0.01
'''

PLAIN_TRAIN = '''
    import torch
    import torch.nn as nn

    from .config import TrainConfig

    OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}


    def train(batches, cfg: TrainConfig):
        emb = nn.Embedding(cfg.num_items, 8, sparse=cfg.sparse)
        opt = OPTIMIZERS[{choice}](emb.parameters(), lr=cfg.lr)
        for ids in batches:
            opt.zero_grad()
            emb(ids).sum().backward()
            opt.step()
        return emb
'''


def test_a_plain_config_class_and_a_table_of_the_module_are_read_as_options(tmp_path):
    _package(tmp_path, {"lib/config.py": PLAIN_CONFIG, "lib/train.py": PLAIN_TRAIN.replace("{choice}", "cfg.optimizer")})
    r = run_cli("--no-cache", "--output-format", "full", "lib/train.py", cwd=tmp_path)
    assert _findings(r.stdout) == [("lib/train.py", "11", "SPL401")], r.stdout + r.stderr
    assert ("because: lib/config.py:4: `sparse=True`, the flag's other value, which a caller may pass "
            "(an option of `train()`)") in r.stdout
    # SGD whenever the embeddings are sparse: silent with the flag either way
    twin = PLAIN_TRAIN.replace("{choice}", '"sgd" if cfg.sparse else cfg.optimizer')
    (tmp_path / "lib" / "train.py").write_text(textwrap.dedent(twin).lstrip())
    r = run_cli("--no-cache", "--output-format", "concise", "lib/train.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


@pytest.mark.torch
def test_the_plain_config_turned_fails_under_torch(tmp_path):
    _package(tmp_path, {"lib/config.py": PLAIN_CONFIG, "lib/train.py": PLAIN_TRAIN.replace("{choice}", "cfg.optimizer")})
    run = ("import torch\nfrom lib.config import TrainConfig\nfrom lib.train import train\n"
           "cfg = TrainConfig()\n{given}\ntrain([torch.tensor([1, 2])], cfg)\n")
    assert _python(tmp_path, run.format(given="")).returncode == 0
    bad = _python(tmp_path, run.format(given="cfg.sparse = True"))
    assert "Adam does not support sparse gradients" in bad.stderr, bad.stderr
    twin = PLAIN_TRAIN.replace("{choice}", '"sgd" if cfg.sparse else cfg.optimizer')
    (tmp_path / "lib" / "train.py").write_text(textwrap.dedent(twin).lstrip())
    assert _python(tmp_path, run.format(given="cfg.sparse = True")).returncode == 0


KWARGS_GET = '''
    import torch
    import torch.nn as nn

    OPTIMIZERS = {"sgd": torch.optim.SGD, "{other}": torch.optim.{Other}}


    def train(batches, **kwargs):
        emb = nn.Embedding(100, 8, sparse=kwargs.get("sparse", True))
        opt = OPTIMIZERS[kwargs.get("optimizer", "sgd")](emb.parameters(), lr=0.1)
        for ids in batches:
            opt.zero_grad()
            emb(ids).sum().backward()
            opt.step()
'''


def test_a_keyword_read_with_its_default_from_the_callers_kwargs_is_an_option(tmp_path):
    _package(tmp_path, {"lib/train.py": KWARGS_GET.replace("{other}", "adam").replace("{Other}", "Adam")})
    r = run_cli("--no-cache", "--output-format", "full", "lib/train.py", cwd=tmp_path)
    assert _findings(r.stdout) == [("lib/train.py", "9", "SPL401")], r.stdout + r.stderr
    assert 'because: line 4: `"optimizer": "adam"`, a key of the table it indexes (an option of `train()`)' in r.stdout
    twin = KWARGS_GET.replace("{other}", "adagrad").replace("{Other}", "Adagrad")
    (tmp_path / "lib" / "train.py").write_text(textwrap.dedent(twin).lstrip())
    r = run_cli("--no-cache", "--output-format", "concise", "lib/train.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


@pytest.mark.torch
def test_the_keyword_read_from_kwargs_fails_under_torch(tmp_path):
    _package(tmp_path, {"lib/train.py": KWARGS_GET.replace("{other}", "adam").replace("{Other}", "Adam")})
    run = "import torch\nfrom lib.train import train\ntrain([torch.tensor([1, 2])]{given})\n"
    assert _python(tmp_path, run.format(given="")).returncode == 0
    bad = _python(tmp_path, run.format(given=', optimizer="adam"'))
    assert "Adam does not support sparse gradients" in bad.stderr, bad.stderr
    twin = KWARGS_GET.replace("{other}", "adagrad").replace("{Other}", "Adagrad")
    (tmp_path / "lib" / "train.py").write_text(textwrap.dedent(twin).lstrip())
    assert _python(tmp_path, run.format(given=', optimizer="adagrad"')).returncode == 0
    assert _python(tmp_path, run.format(given=', sparse=False')).returncode == 0


DERIVED_CONFIG = '''
    from dataclasses import dataclass, field
    from typing import Literal


    @dataclass
    class TrainConfig:
        num_items: int = 1000
        optimizer: Literal["adam", "sparse_adam"] = "adam"
        sparse: bool = field(init=False)

        def __post_init__(self):
            self.sparse = self.optimizer == "sparse_adam"
'''

DERIVED_TRAIN = '''
    import torch
    import torch.nn as nn

    from .config import TrainConfig

    OPTIMIZERS = {"adam": torch.optim.Adam, "sparse_adam": torch.optim.SparseAdam}


    def train(batches, cfg: TrainConfig):
        emb = nn.Embedding(cfg.num_items, 8, sparse=cfg.sparse)
        opt = OPTIMIZERS[cfg.optimizer](emb.parameters(), lr=0.1)
        for ids in batches:
            opt.zero_grad()
            emb(ids).sum().backward()
            opt.step()
'''


def test_a_field_turned_is_passed_to_the_constructor_whose_own_code_derives_the_rest(tmp_path):
    """`__post_init__` makes the embeddings sparse exactly for SparseAdam: each member of the
    Literal runs clean, so the turned run must build the config as a caller would."""
    _package(tmp_path, {"lib/config.py": DERIVED_CONFIG, "lib/train.py": DERIVED_TRAIN})
    r = run_cli("--no-cache", "--output-format", "concise", "lib/train.py", cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


@pytest.mark.torch
def test_the_derived_config_runs_clean_with_each_member(tmp_path):
    _package(tmp_path, {"lib/config.py": DERIVED_CONFIG, "lib/train.py": DERIVED_TRAIN})
    run = ("import torch\nfrom lib.config import TrainConfig\nfrom lib.train import train\n"
           "train([torch.tensor([1, 2])], TrainConfig({given}))\n")
    for given in ("", 'optimizer="adam"', 'optimizer="sparse_adam"'):
        r = _python(tmp_path, run.format(given=given))
        assert r.returncode == 0, r.stderr


AGENT_PROJECT = os.path.join(FIXTURES, "projects", "api_optimizer_table_key_bad")


def test_a_table_offering_an_optimizer_for_a_key_the_caller_chooses_is_checked(tmp_path):
    shutil.copytree(AGENT_PROJECT, tmp_path / "p")
    star = os.path.join("agentlib", "star.py")
    r = run_cli("--no-cache", "--output-format", "full", "agentlib", cwd=tmp_path / "p")
    assert r.returncode == 1, r.stdout + r.stderr
    assert _findings(r.stdout) == [(star, "40", "SPL401")], r.stdout
    assert "`Adam` (the table's `'adam'`, a key the caller may choose)" in r.stdout
    assert "because: line 39: `self.opt[\"optimizer\"]`, which the caller chooses, picks the class" in r.stdout
    assert "because: line 21: the table offers `'adam'`: `Adam`" in r.stdout
    off = run_cli("--no-cache", "--config", "api-entry-points = false", "agentlib", cwd=tmp_path / "p")
    assert off.returncode == 0, off.stdout


@pytest.mark.parametrize("pick", [
    # a key this code computes, not one the caller passes
    "name = input()\nopt = OPTIMIZERS[name](emb.parameters(), lr=0.1)",
    # each key the loop names is known
    "for name in ('sgd', 'adagrad'):\n    opt = OPTIMIZERS[name](emb.parameters(), lr=0.1)",
    # the table holds something other than torch optimizer classes
    "opt = MIXED[name](emb.parameters(), lr=0.1)",
])
def test_a_table_lookup_is_not_taken_for_the_callers_choice_without_that_evidence(tmp_path, pick):
    pick = pick.replace("\n", "\n" + " " * 12)
    _package(tmp_path, {"lib/train.py": f"""
        import torch
        import torch.nn as nn

        OPTIMIZERS = {{"sgd": torch.optim.SGD, "adagrad": torch.optim.Adagrad, "adam": torch.optim.Adam}}
        MIXED = {{"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "custom": make_optimizer}}


        def train(name, ids):
            emb = nn.Embedding(10, 3, sparse=True)
            {pick}
            emb(ids).sum().backward()
            opt.step()
        """})
    r = run_cli("--no-cache", os.path.join("lib", "train.py"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("guard, reported", [
    ("", True),
    ('if opt.get("optimizer", "sgd") not in ("sgd", "adagrad"):\n                raise ValueError("sparse tables")', False),
])
def test_a_config_dicts_get_picks_any_class_of_the_table(tmp_path, guard, reported):
    _package(tmp_path, {"lib/train.py": """
        import torch
        import torch.nn as nn

        OPTIMIZERS = {"sgd": torch.optim.SGD, "adagrad": torch.optim.Adagrad, "adam": torch.optim.Adam}


        def train(opt, ids):
            GUARD
            emb = nn.Embedding(10, 3, sparse=True)
            optimizer = OPTIMIZERS[opt.get("optimizer", "sgd")](emb.parameters(), lr=0.1)
            emb(ids).sum().backward()
            optimizer.step()
        """.replace("GUARD", guard)})
    r = run_cli("--no-cache", os.path.join("lib", "train.py"), cwd=tmp_path)
    assert r.returncode == (1 if reported else 0), r.stdout + r.stderr
    assert ("SPL401 `Adam` (the table's `'adam'`" in r.stdout) is reported, r.stdout
