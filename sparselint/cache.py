"""The result cache: findings of a file, keyed on what can change them.

A key is the hash of sparselint's own code, the resolved settings, the path shown in
findings and the file's bytes. An entry also lists the other project files whose model
classes the findings used, with their content hashes; a changed dependency is a miss.
Entries are written atomically (temporary file + rename), so runs sharing the cache never
read half an entry; an unreadable entry is a miss.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
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
    data = os.path.join(os.path.dirname(sparselint.__file__), "data")
    for root in sorted({os.path.dirname(sparselint.__file__), os.path.dirname(rules.__file__), data}):
        for name in sorted(os.listdir(root)) if os.path.isdir(root) else ():
            if name.endswith((".py", ".json")):
                st = os.stat(os.path.join(root, name))
                h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def default_directory(start: Optional[str] = None) -> str:
    env = os.environ.get("SPARSELINT_CACHE_DIR")
    if env:
        return env
    here = os.path.abspath(start or os.getcwd())
    probe = here
    while True:
        if any(os.path.exists(os.path.join(probe, marker)) for marker in ("pyproject.toml", ".git")):
            return os.path.join(probe, CACHE_DIR_NAME)
        parent = os.path.dirname(probe)
        if parent == probe:
            return os.path.join(here, CACHE_DIR_NAME)
        probe = parent


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as fh:
            return _digest(fh.read())
    except OSError:
        return None


class Cache:
    def __init__(self, directory: str, settings_key: str):
        self.root = os.path.join(directory, code_fingerprint())
        self.settings_key = settings_key
        self.hits = 0
        self._prepared = False

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
