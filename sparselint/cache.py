"""The result cache: findings of a file, keyed on what can change them.

A key is the hash of sparselint's own code, the resolved settings, the path shown in
findings and the file's bytes. An entry also lists the other project files whose model
classes the findings used, with their content hashes; a changed dependency is a miss.
Entries are written atomically (temporary file + rename), so runs sharing the cache never
read half an entry; an unreadable entry is a miss.

In front of the entries, an index per settings maps each path to its size and mtime when
it was checked, its result and its dependencies' sizes and mtimes: a warm run answers from
`stat` alone, without reading or hashing any file. A file (or dependency) whose mtime is
within a second of the run that recorded it is not trusted on `stat` (it may have changed
again within the clock's resolution); it goes through the content hash, as does any file
whose size or mtime changed.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
import time
from functools import lru_cache
from typing import Optional

from . import __version__
from .diagnostics import FileResult

CACHE_DIR_NAME = ".sparselint_cache"


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """sparselint's version and the state of its own source files and op tables."""
    import sparselint
    import sparselint.rules as rules
    h = hashlib.sha256(__version__.encode())
    # Every subpackage counts: the analysis lives in sparselint/analysis/*, and an edit there
    # changes findings as much as one at the top.
    for top in sorted({os.path.dirname(sparselint.__file__), os.path.dirname(rules.__file__)}):
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".json")):
                    path = os.path.join(root, name)
                    st = os.stat(path)
                    h.update(f"{os.path.relpath(path, top)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def default_directory(project_root: Optional[str] = None) -> str:
    """`$SPARSELINT_CACHE_DIR`, else `.sparselint_cache` in the project root: the folder of
    the configuration in force for the current directory, else the current directory, as
    ruff places `.ruff_cache` (never the root of a repository the run merely sits in)."""
    env = os.environ.get("SPARSELINT_CACHE_DIR")
    if env:
        return env
    return os.path.join(os.path.abspath(project_root or os.getcwd()), CACHE_DIR_NAME)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as fh:
            return _digest(fh.read())
    except OSError:
        return None


_RACY_NS = 1_000_000_000


def _stat(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)  # absent: creating it is a change
    return (st.st_size, st.st_mtime_ns)


class Cache:
    def __init__(self, directory: str, settings_key: str):
        self.root = os.path.join(directory, code_fingerprint())
        self.settings_key = settings_key
        self.hits = 0
        self._prepared = False
        self._started = time.time_ns()
        self._index: Optional[dict] = None
        self._index_changed = False

    # -- the stat index ------------------------------------------------------------------

    def _index_path(self) -> str:
        return os.path.join(self.root, "index-" + hashlib.sha256(self.settings_key.encode()).hexdigest()[:16])

    def _load_index(self) -> dict:
        if self._index is None:
            try:
                with open(self._index_path(), "rb") as fh:
                    self._index = pickle.load(fh)
                if not isinstance(self._index, dict):
                    self._index = {}
            except Exception:
                self._index = {}
        return self._index

    def lookup(self, path: str) -> Optional[FileResult]:
        """The result of an unchanged file, known from `stat` alone; None: look closer."""
        record = self._load_index().get(path)
        if record is None:
            return None
        stat, checked_at, result, deps = record
        if stat[1] + _RACY_NS > checked_at or _stat(path) != stat:
            return None
        for dep, dep_stat in deps:
            if dep_stat[1] + _RACY_NS > checked_at or _stat(dep) != dep_stat:
                return None
        self.hits += 1
        return result

    def remember(self, path: str, result: FileResult, dependencies=()) -> None:
        """Record a result in the index, with the stat of the file and its dependencies."""
        self._load_index()[path] = (_stat(path), self._started, result,
                                    tuple((dep, _stat(dep)) for dep in dependencies))
        self._index_changed = True

    def flush(self) -> None:
        """Write the index back (atomically) if this run changed it."""
        if not self._index_changed:
            return
        try:
            self._prepare()
            os.makedirs(self.root, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(self._index, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self._index_path())
            self._index_changed = False
        except OSError:
            pass  # a cache that cannot be written only costs time

    # -- entries by content --------------------------------------------------------------

    def _key(self, path: str, data: bytes) -> str:
        h = hashlib.sha256(self.settings_key.encode())
        h.update(b"\0" + path.encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.hexdigest()

    def _entry(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key)

    def get(self, path: str) -> Optional[FileResult]:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            with open(self._entry(self._key(path, data)), "rb") as fh:
                result, deps = pickle.load(fh)
        except Exception:
            return None
        if any(file_digest(dep) != digest for dep, digest in deps):
            return None
        self.hits += 1
        self.remember(path, result, [dep for dep, _ in deps])
        return result

    def put(self, path: str, result: FileResult) -> None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            deps = [(dep, file_digest(dep)) for dep in result.dependencies]
            entry = self._entry(self._key(path, data))
            self._prepare()
            os.makedirs(os.path.dirname(entry), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(entry), prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((result, deps), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, entry)
        except OSError:
            pass  # a cache that cannot be written only costs time
        self.remember(path, result, result.dependencies)

    def _prepare(self) -> None:
        if self._prepared:
            return
        self._prepared = True
        top = os.path.dirname(self.root)
        os.makedirs(top, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"),
                           (".gitignore", "*\n")):
            target = os.path.join(top, name)
            if not os.path.exists(target):
                with open(target, "w") as fh:
                    fh.write(text)
