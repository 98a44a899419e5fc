"""Public functions of a package checked as entry points (`api-entry-points`): a layout test
that narrows a parameter to sparse COO admits the uncoalesced tensors callers outside the
package pass, unless the function says otherwise. Real CLI runs on real files."""
import re
import textwrap

from conftest import run_cli

HELPERS = '''
import torch


def is_sparse_tensor(t):
    return t.layout == torch.sparse_coo


def degree(adj):
    if adj.is_sparse:
        return torch.bincount(adj.indices()[0])
    return (adj != 0).sum(dim=1)


def weights(adj):
    if is_sparse_tensor(adj):
        return adj.values()
    return adj.flatten()


def stated(adj):
    """`adj`: a coalesced sparse COO adjacency."""
    if adj.is_sparse:
        return adj.values()
    return adj


def asserted(adj):
    assert adj.is_coalesced()
    if adj.is_sparse:
        return adj.values()
    return adj


def tested(adj):
    if adj.is_sparse and adj.is_coalesced():
        return adj.indices()
    return None


def coalescing(adj):
    if adj.is_sparse:
        adj = adj.coalesce()
        return adj.indices()
    return None


def _private(adj):
    if adj.is_sparse:
        return adj.indices()
    return None


def rebound_first(adj):
    adj = adj.coalesce() if adj.is_sparse else adj
    if adj.is_sparse:
        return adj.indices()
    return None


def rebound_in_one_branch(adj, merge):
    if merge:
        adj = adj.coalesce()
    if adj.is_sparse:
        return adj.values()
    return None
'''


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def _findings(root, *args):
    r = run_cli("--no-cache", "--output-format", "concise", *args, ".", cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout


def _lines(out):
    return sorted((m.group(1), int(m.group(2)), m.group(3)) for m in re.finditer(r"^(\S+?):(\d+):\d+: (SPL\d+)", out, re.M))


def _line(text, needle):
    return next(i for i, line in enumerate(textwrap.dedent(text).lstrip("\n").splitlines(), 1) if needle in line)


def test_a_layout_test_of_a_public_function_admits_uncoalesced_tensors(tmp_path):
    _write(tmp_path, {"graphs/__init__.py": "", "graphs/ops.py": HELPERS})
    out = _findings(tmp_path)
    assert _lines(out) == [("graphs/ops.py", _line(HELPERS, "bincount(adj.indices()"), "SPL001"),
                           ("graphs/ops.py", _line(HELPERS, "return adj.values()"), "SPL001")]
    test_line = _line(HELPERS, "if adj.is_sparse:")
    assert (f"`degree(adj)` raises `RuntimeError: Cannot get indices on an uncoalesced tensor` at this line for "
            f"an uncoalesced COO `adj` (any tensor straight from `torch.sparse_coo_tensor`), which the layout test "
            f"at line {test_line} admits") in out
    assert "`weights(adj)` raises" in out  # the layout test written as a helper function


def test_a_script_outside_a_package_and_the_setting_turned_off_are_not_entry_points(tmp_path):
    _write(tmp_path / "script", {"ops.py": HELPERS})
    assert _lines(_findings(tmp_path / "script")) == []
    _write(tmp_path / "off", {"graphs/__init__.py": "", "graphs/ops.py": HELPERS,
                              "pyproject.toml": "[tool.sparselint]\napi-entry-points = false\n"})
    assert _lines(_findings(tmp_path / "off")) == []
    assert len(_lines(_findings(tmp_path / "off", "--config", "api-entry-points = true"))) == 2
    r = run_cli("config", "api-entry-points")
    assert r.returncode == 0 and "entry point" in r.stdout and "Default value: true" in r.stdout
    _write(tmp_path / "bad", {"pyproject.toml": "[tool.sparselint]\napi-entry-points = \"yes\"\n", "a.py": ""})
    r = run_cli("--no-cache", ".", cwd=tmp_path / "bad")
    assert r.returncode == 2 and "api-entry-points" in r.stderr


def test_making_the_folder_a_package_changes_a_cached_result(tmp_path):
    _write(tmp_path, {"graphs/ops.py": HELPERS})
    first = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert _lines(first.stdout) == []
    (tmp_path / "graphs" / "__init__.py").write_text("")
    second = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert len(_lines(second.stdout)) == 2


CLASSES = '''
import torch


class Propagate(torch.nn.Module):
    def forward(self, x, adj):
        if adj.is_sparse:
            return adj.values()
        return x

    def _hidden(self, adj):
        if adj.is_sparse:
            return adj.values()
        return adj

    @staticmethod
    def edges(adj):
        if adj.is_sparse:
            return adj.indices()
        return adj.nonzero().t()


class _Private:
    def forward(self, adj):
        if adj.is_sparse:
            return adj.values()
        return adj
'''


def test_the_public_methods_of_a_public_class_are_entry_points(tmp_path):
    _write(tmp_path, {"graphs/__init__.py": "", "graphs/layers.py": CLASSES})
    out = _findings(tmp_path)
    assert _lines(out) == [("graphs/layers.py", _line(CLASSES, "return adj.values()"), "SPL001"),
                           ("graphs/layers.py", _line(CLASSES, "return adj.indices()"), "SPL001")]
    assert "`Propagate.forward(adj)` raises" in out and "`Propagate.edges(adj)` raises" in out


FLAGS = '''
import torch


def to_csr(adj):
    return adj._coalesced_(True).to_sparse_csr()


def sorted_to_csr(adj):
    """`adj` must be coalesced already: its flag is only restated."""
    return adj._coalesced_(True).to_sparse_csr()


def rebuilt(adj):
    adj = adj.coalesce()
    return adj._coalesced_(True)


def to_edges(adj):
    if adj.layout == torch.sparse_coo:
        adj = adj._coalesced_(True)
        return adj.indices()
    return adj.to_sparse_coo().indices()


def to_edges_sorted(adj):
    if adj.layout == torch.sparse_coo:
        adj = adj.coalesce()._coalesced_(True)
        return adj.indices()
    return adj.to_sparse_coo().indices()


def _internal(adj):
    return adj._coalesced_(True)
'''


def test_a_public_function_that_forces_the_coalesced_flag_of_its_argument(tmp_path):
    _write(tmp_path, {"graphs/__init__.py": "", "graphs/convert.py": FLAGS})
    out = _findings(tmp_path)
    assert _lines(out) == [("graphs/convert.py", _line(FLAGS, "return adj._coalesced_(True).to_sparse_csr()"), "SPL005"),
                           ("graphs/convert.py", _line(FLAGS, "adj = adj._coalesced_(True)"), "SPL005")]
    assert "`to_csr(adj)` marks the caller's COO `adj` coalesced without sorting or merging its entries" in out
    # a parameter rebound after its layout test still held the caller's tensor there
    assert "`to_edges(adj)` marks the caller's COO `adj` coalesced" in out


def test_a_private_module_or_a_module_of_a_private_package_has_no_entry_points(tmp_path):
    _write(tmp_path, {"graphs/__init__.py": "", "graphs/_ops.py": HELPERS,
                      "graphs/_impl/__init__.py": "", "graphs/_impl/ops.py": HELPERS,
                      "graphs/public/__init__.py": "", "graphs/public/ops.py": HELPERS})
    assert {f for f, _, _ in _lines(_findings(tmp_path))} == {"graphs/public/ops.py"}


OPTIONS = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n, sparse=False):
        super().__init__()
        self.emb = nn.Embedding(n, 8, sparse=sparse)

    def forward(self, ids):
        return self.emb(ids).sum()


class Estimator:
    """`sparse`: use sparse gradients for the embeddings."""

    def __init__(self, n=10, optimizer_func=None, sparse=False):
        self.net = Net(n, sparse=sparse)
        if optimizer_func is None:
            self.opt = torch.optim.Adam(self.net.parameters())
        else:
            self.opt = optimizer_func(self.net.parameters())

    def fit(self, ids):
        self.opt.zero_grad()
        self.net(ids).backward()
        self.opt.step()


class SparseByDefault:
    def __init__(self, n=10, sparse=True):
        self.net = Net(n, sparse=sparse)
        self.opt = torch.optim.SparseAdam(self.net.parameters())

    def fit(self, ids):
        self.opt.zero_grad()
        self.net(ids).backward()
        self.opt.step()


class Chooses:
    def __init__(self, n=10, sparse=False):
        self.net = Net(n, sparse=sparse)
        make = torch.optim.SparseAdam if sparse else torch.optim.Adam
        self.opt = make(self.net.parameters())

    def fit(self, ids):
        self.opt.zero_grad()
        self.net(ids).backward()
        self.opt.step()


class _Internal(Estimator):
    pass
'''


def test_a_public_class_is_checked_with_each_option_of_its_constructor_turned(tmp_path):
    _write(tmp_path, {"recs/__init__.py": "", "recs/models.py": OPTIONS})
    r = run_cli("--no-cache", "--output-format", "full", ".", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert _lines(r.stdout) == [("recs/models.py", _line(OPTIONS, "self.opt = torch.optim.Adam("), "SPL401"),
                                ("recs/models.py", _line(OPTIONS, "self.opt = torch.optim.SparseAdam("), "SPL403")]
    option = _line(OPTIONS, "def __init__(self, n=10, optimizer_func=None, sparse=False):")
    assert f"because: line {option}: `Estimator(sparse=True)`, an option of its constructor" in r.stdout
    assert "`SparseByDefault(sparse=False)`, an option of its constructor" in r.stdout
    # the same classes in a script, not a package: nothing calls them, nothing is known
    _write(tmp_path / "script", {"models.py": OPTIONS})
    assert _lines(_findings(tmp_path / "script")) == []
    _write(tmp_path / "off", {"recs/__init__.py": "", "recs/models.py": OPTIONS})
    assert _lines(_findings(tmp_path / "off", "--config", "api-entry-points = false")) == []


FLAG_HELPERS = '''
import torch
from torch import Tensor


def is_torch_sparse_tensor(src):
    """Whether `src` is a sparse tensor of any layout."""
    if isinstance(src, Tensor):
        if src.layout == torch.sparse_coo:
            return True
        if src.layout == torch.sparse_csr:
            return True
    return False


def is_compressed(src):
    if src.layout == torch.sparse_csr:
        return True
    if src.layout == torch.sparse_csc:
        return True
    return False


def edge_weights(adj):
    if is_torch_sparse_tensor(adj):
        return adj.values()
    return adj[adj != 0]


def degree(adj):
    if adj.layout == torch.sparse_coo or adj.layout == torch.sparse_csr:
        return adj.values().sum()
    return adj.sum()


def compressed_weights(adj):
    if is_compressed(adj):
        return adj.values()
    return None
'''


def test_a_helper_testing_layout_after_layout_and_an_or_of_layout_tests_admit_coo(tmp_path):
    _write(tmp_path, {"graphs/__init__.py": "", "graphs/ops.py": FLAG_HELPERS})
    out = _findings(tmp_path)
    # a COO tensor passes the helper's first test, and the first operand of `or`; a helper
    # testing only compressed layouts admits no COO tensor
    weights = _line(FLAG_HELPERS, "if is_torch_sparse_tensor(adj):") + 1
    assert _lines(out) == [("graphs/ops.py", weights, "SPL001"),
                           ("graphs/ops.py", _line(FLAG_HELPERS, "return adj.values().sum()"), "SPL001")]
    assert "`edge_weights(adj)` raises" in out


OPTIONAL = '''
import torch


def weights(adj=None):
    if adj is not None and adj.is_sparse:
        return adj.values()
    return None


def rebound_by_import(adj):
    from somewhere import adj
    if adj.is_sparse:
        return adj.values()
    return None


def fit(ids, sparse=True, optimizer="Adam"):
    emb = torch.nn.Embedding(10, 4, sparse=sparse)
    opt = getattr(torch.optim, optimizer)(emb.parameters())
    emb(ids).sum().backward()
    opt.step()
'''


def test_defaults_are_one_more_run_not_the_only_value(tmp_path):
    _write(tmp_path, {"graphs/__init__.py": "", "graphs/ops.py": OPTIONAL})
    r = run_cli("--no-cache", "--output-format", "full", ".", cwd=tmp_path)
    # `adj=None` does not hide what a caller passing a tensor gets; a parameter an import
    # rebinds is no longer the caller's; the defaults of `fit` build Adam over sparse rows
    assert _lines(r.stdout) == [("graphs/ops.py", _line(OPTIONAL, "        return adj.values()"), "SPL001"),
                                ("graphs/ops.py", _line(OPTIONAL, "opt = getattr(torch.optim"), "SPL401")]
    assert "the default `sparse=True` of `fit()`, what a caller who passes nothing gets" in r.stdout


def test_an_entry_point_followed_into_another_module_of_its_package_names_its_test_there(tmp_path):
    """`degree(adj)` tests the layout in api.py and reads the indices through a private helper
    of ops.py: the finding is at the helper's line, and names the test by its file and line
    (it said `line 0`, a place in no file)."""
    _write(tmp_path, {"graphs/__init__.py": "",
                      "graphs/ops.py": "import torch\n\n\ndef _degree(adj):\n    return torch.bincount(adj.indices()[0])\n",
                      "graphs/api.py": "from graphs.ops import _degree\n\n\ndef degree(adj):\n    if adj.is_sparse:\n"
                                       "        return _degree(adj)\n    return (adj != 0).sum(dim=1)\n"})
    out = _findings(tmp_path)
    assert _lines(out) == [("graphs/ops.py", 5, "SPL001")], out
    assert "which the layout test at graphs/api.py:5 admits" in out, out
