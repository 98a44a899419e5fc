"""The stat index in front of the result cache: a warm run answers from size and mtime,
and falls back to the content hash when they changed or are too recent to trust."""
import os
import time

import pytest

from sparselint.cache import Cache
from sparselint.config import Settings
from sparselint.parallel import check_files

BAD = "import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.values())\n"
# the same length as BAD, no hazard
CLEAN = "import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.shape   )\n"
assert len(BAD) == len(CLEAN)


def codes(path, cache_dir):
    cache = Cache(str(cache_dir), Settings().key())
    return [d.code for d in check_files([str(path)], Settings(), jobs=1, cache=cache)[0].diagnostics], cache


def age(path, seconds=100):
    t = time.time() - seconds
    os.utime(path, (t, t))


@pytest.fixture
def files(tmp_path):
    src = tmp_path / "a.py"
    src.write_text(BAD)
    age(src)
    return src, tmp_path / "cache"


def test_an_unchanged_file_is_answered_from_its_stat(files):
    src, cache_dir = files
    assert codes(src, cache_dir)[0] == ["SPL001"]
    stat = os.stat(src)
    # Same size, same mtime: the index trusts the stat and does not read the file, as
    # ruff's cache does. (Content changed behind its back stays unseen: that is the contract.)
    src.write_text(CLEAN)
    os.utime(src, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    found, cache = codes(src, cache_dir)
    assert found == ["SPL001"] and cache.hits == 1


def test_a_touched_file_with_the_same_bytes_is_a_hit_by_content(files):
    src, cache_dir = files
    codes(src, cache_dir)
    age(src, 50)  # mtime changed, bytes did not
    found, cache = codes(src, cache_dir)
    assert found == ["SPL001"] and cache.hits == 1


def test_a_changed_size_or_mtime_is_checked_again(files):
    src, cache_dir = files
    codes(src, cache_dir)
    src.write_text(CLEAN)
    age(src, 10)
    found, cache = codes(src, cache_dir)
    assert found == [] and cache.hits == 0


def test_a_file_changed_within_the_clock_resolution_is_not_trusted_on_stat(tmp_path):
    src, cache_dir = tmp_path / "a.py", tmp_path / "cache"
    src.write_text(BAD)  # mtime: now, as the run that records it starts
    codes(src, cache_dir)
    stat = os.stat(src)
    src.write_text(CLEAN)
    os.utime(src, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert codes(src, cache_dir)[0] == []


def test_a_file_without_tokens_is_indexed_with_the_modules_it_imports(tmp_path):
    """A file that the prefilter passes over is remembered too, keyed on the helper modules
    it imports: a helper that gains a hazard makes it a miss."""
    cache_dir = tmp_path / "cache"
    (tmp_path / "helpers.py").write_text("def norm(a):\n    return a\n")
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom helpers import norm\nadj = torch.ones(2)\nnorm(adj)\n")
    for p in (tmp_path / "helpers.py", train):
        age(p)
    assert codes(train, cache_dir)[0] == []
    assert codes(train, cache_dir)[1].hits == 1
    (tmp_path / "helpers.py").write_text("def norm(a):\n    return a.to_sparse().values()\n")
    found, cache = codes(train, cache_dir)
    assert cache.hits == 0
