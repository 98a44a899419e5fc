"""Editor buffers in the project index.

The engine's project index (sparselint.models) reads a model class from disk unless it has
been given the text of that file; the server gives it every open buffer, so a model edited
but not saved is what the files that use it are checked against, and takes it back on close
so the disk wins again. The index keeps one parsed tree per distinct text it saw; a server
that lives for hours must drop the trees of the versions a buffer has left behind.

This is the one place the server reaches into the index; when the index grows a public way
to do this, only this module changes (tests/test_lsp_units.py pins the behaviour)."""
from __future__ import annotations

import os

from ..models import project_index


def set_text(path: str, text: str) -> None:
    index = project_index()
    path = os.path.abspath(path)
    texts = getattr(index, "_texts", None)
    if isinstance(texts, dict):
        texts[path] = text
    forget_other_versions(path, text)


def drop_text(path: str) -> None:
    index = project_index()
    path = os.path.abspath(path)
    texts = getattr(index, "_texts", None)
    if isinstance(texts, dict):
        texts.pop(path, None)
    forget_other_versions(path, None)


def forget_other_versions(path: str, keep: "str | None") -> None:
    """Drop the index's parsed trees of texts of `path` other than `keep`."""
    files = getattr(project_index(), "_files", None)
    if not isinstance(files, dict):
        return
    path = os.path.abspath(path)
    keep_key = (path, hash(keep)) if keep is not None else None
    for key in [k for k in files if isinstance(k, tuple) and len(k) == 2 and k[0] == path and k != keep_key]:
        files.pop(key, None)
