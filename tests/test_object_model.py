"""One object model: dataclass fields bound from the call or from their defaults and
`default_factory`, frozen dataclasses and `dataclasses.replace`, `typing.NamedTuple` and
`collections.namedtuple`, `SimpleNamespace` / `argparse.Namespace` objects, and attribute
chains through plain objects, in one file and across modules.

Each program marks the lines where a finding belongs with `# SPLnnn`; every other line must
stay silent, the look-alikes among them: a coalesced default, a field the caller overrides
with the safe value, a `sparse=False` default, a value that is not known. The programs are
checked by the CLI."""
import json
import os
import re
import textwrap

from conftest import run_cli

MARK = re.compile(r"#\s*(SPL\d{3})\b")

MAKE_ADJ = '''
import torch
import torch.nn as nn


def make_adj():
    return torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3))
'''


def check(tmp_path, files: dict, *targets: str):
    """(what the CLI reports, what the marks say), each a set of (file, line, code)."""
    expected = set()
    for name, text in files.items():
        text = textwrap.dedent(text).lstrip("\n")
        (tmp_path / name).write_text(text)
        for number, line in enumerate(text.splitlines(), 1):
            for code in MARK.findall(line):
                expected.add((name, number, code))
    run = run_cli("check", "--no-cache", "--output-format", "json", *(targets or list(files)), cwd=str(tmp_path))
    assert run.returncode in (0, 1), run.stdout + run.stderr
    reported = set()
    for d in json.loads(run.stdout):
        path = os.path.relpath(os.path.join(str(tmp_path), d["path"]), str(tmp_path)).replace(os.sep, "/")
        reported.add((path, d["line"], d["code"]))
    return reported, expected


def test_dataclass_fields_take_class_defaults_and_default_factories(tmp_path):
    reported, expected = check(tmp_path, {"main.py": MAKE_ADJ + '''
from dataclasses import dataclass, field


@dataclass
class Cfg:
    sparse: bool = True
    dim: int = 4
    adj: torch.Tensor = field(default_factory=make_adj)
    clean: torch.Tensor = field(default_factory=lambda: make_adj().coalesce())


cfg = Cfg()
rows = cfg.adj.indices()  # SPL001
ok = cfg.clean.indices()
model = nn.Embedding(10, cfg.dim, sparse=cfg.sparse)
opt = torch.optim.Adam(model.parameters(), lr=0.1)  # SPL401
dense = Cfg(False)
m2 = nn.Embedding(10, dense.dim, sparse=dense.sparse)
opt2 = torch.optim.Adam(m2.parameters(), lr=0.1)
given = Cfg(sparse=False, adj=make_adj().coalesce())
m3 = nn.Embedding(10, 4, sparse=given.sparse)
opt3 = torch.optim.Adam(m3.parameters(), lr=0.1)
r2 = given.adj.indices()
'''})
    assert reported == expected


def test_dataclass_inheritance_post_init_and_unknown_arguments(tmp_path):
    reported, expected = check(tmp_path, {"main.py": MAKE_ADJ + '''
import sys
from dataclasses import dataclass, field


@dataclass
class Base:
    dim: int = 4
    sparse: bool = True


@dataclass
class Child(Base):
    adj: torch.Tensor = field(default_factory=make_adj)


class Plain:
    def __init__(self):
        self.sparse = False


@dataclass
class Generated(Plain):
    sparse: bool = True


@dataclass
class Checked:
    sparse: bool = True
    adj: torch.Tensor = None

    def __post_init__(self):
        self.sparse = False
        self.adj = make_adj()


c = Child(8)
m = nn.Embedding(10, c.dim, sparse=c.sparse)
opt = torch.optim.Adam(m.parameters(), lr=0.1)  # SPL401
r = c.adj.indices()  # SPL001
k = Checked()
m2 = nn.Embedding(10, 4, sparse=k.sparse)
opt2 = torch.optim.Adam(m2.parameters(), lr=0.1)
r2 = k.adj.indices()  # SPL001
g = Generated()
m4 = nn.Embedding(10, 4, sparse=g.sparse)
opt4 = torch.optim.Adam(m4.parameters(), lr=0.1)  # SPL401
u = Child(sparse=len(sys.argv) > 3)
m3 = nn.Embedding(10, 4, sparse=u.sparse)
opt3 = torch.optim.Adam(m3.parameters(), lr=0.1)
'''})
    assert reported == expected


def test_frozen_dataclass_and_dataclasses_replace(tmp_path):
    reported, expected = check(tmp_path, {"main.py": '''
import dataclasses
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass(frozen=True)
class ModelCfg:
    sparse: bool = False
    dim: int = 4


base = ModelCfg()
m0 = nn.Embedding(10, base.dim, sparse=base.sparse)
opt0 = torch.optim.Adam(m0.parameters(), lr=0.1)
sparse_cfg = dataclasses.replace(base, sparse=True)
m1 = nn.Embedding(10, sparse_cfg.dim, sparse=sparse_cfg.sparse)
opt1 = torch.optim.Adam(m1.parameters(), lr=0.1)  # SPL401
dense_cfg = dataclasses.replace(sparse_cfg, sparse=False)
m2 = nn.Embedding(10, 4, sparse=dense_cfg.sparse)
opt2 = torch.optim.Adam(m2.parameters(), lr=0.1)
'''})
    assert reported == expected


def test_named_tuples_bind_fields_by_position_name_and_default(tmp_path):
    reported, expected = check(tmp_path, {"main.py": MAKE_ADJ + '''
from collections import namedtuple
from typing import NamedTuple


class Graph(NamedTuple):
    adj: torch.Tensor
    scale: float = 1.0


Pair = namedtuple("Pair", ["adj", "scale"], defaults=[1.0])
Triple = namedtuple("Triple", "adj scale flag")

g = Graph(make_adj())
a = g.adj.indices()  # SPL001
g2 = Graph(scale=2.0, adj=make_adj().coalesce())
b = g2.adj.indices()
p = Pair(make_adj())
c = p.adj.indices()  # SPL001
q = Pair(adj=make_adj().coalesce(), scale=3.0)
d = q.adj.indices()
t = Triple(make_adj().coalesce(), 1.0, True)
e = t.adj.indices()
fixed = p._replace(adj=p.adj.coalesce())
f = fixed.adj.indices()
first, scale = p
h = first.indices()  # SPL001
'''})
    assert reported == expected


def test_namespaces_bind_keywords_and_later_stores(tmp_path):
    reported, expected = check(tmp_path, {"main.py": MAKE_ADJ + '''
import argparse
from types import SimpleNamespace

args = argparse.Namespace(sparse=True, dim=4)
emb = nn.Embedding(10, args.dim, sparse=args.sparse)
opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # SPL401
state = SimpleNamespace(adj=make_adj(), lr=0.1)
rows = state.adj.indices()  # SPL001
state.adj = state.adj.coalesce()
rows2 = state.adj.indices()
later = SimpleNamespace()
later.adj = make_adj()
rows3 = later.adj.indices()  # SPL001
setattr(later, "adj", make_adj().coalesce())
rows4 = later.adj.indices()
off = argparse.Namespace(sparse=False)
emb2 = nn.Embedding(10, 4, sparse=off.sparse)
opt2 = torch.optim.Adam(emb2.parameters(), lr=0.1)
changed = argparse.Namespace(sparse=True)
vars(changed).update({"sparse": False})
emb3 = nn.Embedding(10, 4, sparse=changed.sparse)
opt3 = torch.optim.Adam(emb3.parameters(), lr=0.1)


def train(ns):
    return ns.adj.indices()  # SPL001


ns2 = SimpleNamespace()
ns2.adj = make_adj()
train(ns2)
'''})
    assert reported == expected


def test_attribute_chains_through_plain_objects(tmp_path):
    reported, expected = check(tmp_path, {"main.py": MAKE_ADJ + '''

class ModelCfg:
    def __init__(self):
        self.adj = make_adj()
        self.clean = make_adj().coalesce()


class Cfg:
    def __init__(self):
        self.model = ModelCfg()


class State:
    def __init__(self):
        self.tables = {"emb": make_adj(), "ok": make_adj().coalesce()}


class Trainer:
    def __init__(self):
        self.cfg = Cfg()
        self.state = State()

    def step(self):
        a = self.state.tables["emb"].indices()  # SPL001
        b = self.state.tables["ok"].indices()
        return a, b


trainer = Trainer()
rows = trainer.cfg.model.adj.indices()  # SPL001
fine = trainer.cfg.model.clean.indices()
trainer.step()
'''})
    assert reported == expected


def test_config_dataclass_of_another_module_reaches_the_model_of_a_third(tmp_path):
    reported, expected = check(tmp_path, {
        "config.py": MAKE_ADJ + '''
from dataclasses import dataclass, field


@dataclass
class Config:
    dim: int = 4
    sparse: bool = True
    adj: torch.Tensor = field(default_factory=make_adj)
    clean: torch.Tensor = field(default_factory=lambda: make_adj().coalesce())


@dataclass
class DenseConfig:
    dim: int = 4
    sparse: bool = False
''',
        "model.py": '''
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(10, cfg.dim, sparse=cfg.sparse)

    def forward(self, x):
        return self.emb(x)
''',
        "main.py": '''
import torch

from config import Config, DenseConfig
from model import Tower

cfg = Config()
model = Tower(cfg)
opt = torch.optim.Adam(model.parameters(), lr=0.1)  # SPL401
rows = cfg.adj.indices()  # SPL001
fine = cfg.clean.indices()
dense = Tower(Config(sparse=False))
opt2 = torch.optim.Adam(dense.parameters(), lr=0.1)
also_dense = Tower(DenseConfig())
opt3 = torch.optim.Adam(also_dense.parameters(), lr=0.1)
given = Config(adj=cfg.adj.coalesce())
ok = given.adj.indices()
'''}, "main.py")
    assert reported == expected


def test_nested_config_dataclass_reaches_a_model_reading_cfg_model_sparse(tmp_path):
    reported, expected = check(tmp_path, {
        "config.py": '''
from dataclasses import dataclass, field


@dataclass
class ModelCfg:
    sparse: bool = True
    dim: int = 4


@dataclass
class Cfg:
    model: ModelCfg = field(default_factory=ModelCfg)
    lr: float = 0.1
''',
        "model.py": '''
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(10, cfg.model.dim, sparse=cfg.model.sparse)

    def forward(self, x):
        return self.emb(x)
''',
        "main.py": '''
import torch

from config import Cfg, ModelCfg
from model import Tower

cfg = Cfg()
model = Tower(cfg)
opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)  # SPL401
dense = Tower(Cfg(model=ModelCfg(sparse=False)))
opt2 = torch.optim.Adam(dense.parameters(), lr=0.1)
'''}, "main.py")
    assert reported == expected


def test_attribute_chain_through_a_plain_class_of_another_module(tmp_path):
    reported, expected = check(tmp_path, {
        "state.py": MAKE_ADJ + '''

class ModelState:
    def __init__(self):
        self.adj = make_adj()
        self.clean = make_adj().coalesce()


class Holder:
    def __init__(self, value):
        self.value = value
''',
        "main.py": '''
from state import Holder, ModelState


class Trainer:
    def __init__(self):
        self.state = ModelState()


trainer = Trainer()
rows = trainer.state.adj.indices()  # SPL001
fine = trainer.state.clean.indices()
h = Holder(trainer.state.adj)
again = h.value.indices()  # SPL001
ok = Holder(trainer.state.clean).value.indices()
'''}, "main.py")
    assert reported == expected
