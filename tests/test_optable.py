"""The generated op tables: they load, `target-torch-version` picks among them, every
spelling of an op reaches its entry, and the checked-in table for the installed torch is what
the probe says today.

The staleness test re-runs tools/probe_torch.py under the installed torch for a deterministic
sample of the ops (each op whose name hash falls in bucket 0 of 8, plus the ops the rules'
examples name) and fails when any sampled entry, or the list of enumerated ops, differs
from the checked-in table. A full run takes two to three minutes on one core; the sample (about
one op in seven) keeps the test near twenty seconds. The whole table is regenerated, and was
checked to come out identical, with `python tools/probe_torch.py --out ...`.
"""
import json
import os
import re
import subprocess
import sys

import pytest

from sparselint.analysis.torchops import optable
from sparselint.config import Settings
from sparselint.engine import check_text

from conftest import ROOT

PROBE = os.path.join(ROOT, "tools", "probe_torch.py")
# The ops behind the examples of issue 11's "Why", always part of the sample.
NAMED = ("torch.nn.functional.softmax", "torch.softmax", "Tensor.softmax", "torch.nn.functional.dropout",
         "torch.add", "Tensor.add", "Tensor.__add__", "Tensor.__iadd__", "Tensor.t", "torch.cat",
         "Tensor.index_select", "Tensor.mul_", "Tensor.div_", "Tensor.__mul__", "torch.sparse.mm",
         "Tensor.to_sparse_coo", "Tensor._coalesced_", "Tensor.values", "Tensor.mean", "Tensor.clamp_")
SAMPLE_EVERY = 8


def test_a_table_per_supported_release_loads():
    versions = optable.available()
    assert {"2.13.0", "2.9.1"} <= set(versions)
    for version in versions:
        table = optable.load(version)
        assert table.version == version
        assert len(table.ops()) > 800, version
        with open(versions[version], encoding="utf-8") as fh:
            data = json.load(fh)
        assert data["generated"] and data["torch"] == version
        assert not data["timed_out"], f"{version}: regenerate on a quieter machine: {data['timed_out']}"
        assert len(data["crashed"]) < 10, data["crashed"]


def test_tables_are_written_deterministically():
    for path in optable.available().values():
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        data = json.loads(text)
        assert text == json.dumps(data, indent=1, sort_keys=True) + "\n"
        assert "0x" not in text.replace("0x?", ""), "an address leaked into an error message"


@pytest.mark.parametrize("target,chosen", [("", "2.13.0"), ("2.13", "2.13.0"), ("2.13.0", "2.13.0"),
                                           ("2.9", "2.9.1"), ("2.9.1", "2.9.1"), ("2.11", "2.9.1"),
                                           ("2.1", "2.9.1"), ("3.0", "2.13.0")])
def test_target_torch_version_picks_the_table(target, chosen):
    assert optable.choose(target) == chosen


def test_findings_name_the_release_of_the_table_they_come_from():
    source = ("import torch\nimport torch.nn.functional as F\n"
              "s = torch.sparse_coo_tensor(torch.tensor([[0], [1]]), torch.ones(1), (2, 2))\n"
              "a = F.softmax(s, dim=1)\n")
    for target, version in (("", "2.13.0"), ("2.9", "2.9.1")):
        diags, _, _ = check_text(source, "x.py", Settings(target_torch_version=target))
        assert [(d.line, d.code) for d in diags] == [(4, "SPL503")]
        assert f"probed on torch {version}" in diags[0].message


def test_a_call_with_a_keyword_that_can_skip_the_op_is_not_judged_from_other_forms():
    source = ("import torch\nimport torch.nn.functional as F\n"
              "s = torch.sparse_coo_tensor(torch.tensor([[0], [1]]), torch.ones(1), (2, 2))\n"
              "a = F.dropout(s, p=0.5, training=self.training)\nb = F.dropout(s)\n")
    diags, _, _ = check_text(source, "x.py", Settings())
    assert [(d.line, d.code) for d in diags] == [(5, "SPL503")]


@pytest.mark.torch
def test_checked_in_table_matches_the_installed_torch(tmp_path):
    version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__.split('+')[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    shipped = optable.available()
    assert version in shipped, f"no op table for torch {version}: run `python tools/probe_torch.py --out " \
                               f"sparselint/data/torch-{version}.json`"
    with open(shipped[version], encoding="utf-8") as fh:
        checked_in = json.load(fh)
    listed = subprocess.run([sys.executable, PROBE, "--list"], capture_output=True, text=True, check=True)
    names = listed.stdout.split()
    assert len(names) == checked_in["enumerated"], "torch's public ops changed: regenerate the table"
    assert set(checked_in["ops"]) <= set(names)

    out = tmp_path / "sample.json"
    run = subprocess.run([sys.executable, PROBE, "--sample", str(SAMPLE_EVERY), "--ops", *NAMED, "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    fresh = json.loads(out.read_text())
    sampled = set(NAMED) | {n for n in names if n in _sample(names)}
    assert len(sampled) > 100
    stale = []
    for name in sorted(sampled):
        now, then = fresh["ops"].get(name), checked_in["ops"].get(name)
        if now != then:
            stale.append(name)
        for form in (now or {}).values():
            for record in form.values():
                for token in re.findall(r"E[ :]([0-9a-f]{8})", record):
                    assert checked_in["errors"].get(token) == fresh["errors"][token]
    assert not stale, (f"the op table for torch {version} is stale for {stale[:10]} "
                       f"({len(stale)} ops): run `python tools/probe_torch.py --out {shipped[version]}`")


def _sample(names):
    sys.path.insert(0, os.path.dirname(PROBE))
    try:
        import probe_torch
        return set(probe_torch.sample(names, SAMPLE_EVERY))
    finally:
        sys.path.pop(0)
