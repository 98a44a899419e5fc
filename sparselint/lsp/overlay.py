"""Editor buffers in the project index.

The engine's project index (sparselint.models) reads a model or helper module from disk
unless it has been given the text of that file; the server gives it every open buffer, so a
module edited but not saved is what the files that use it are checked against, and takes it
back on close so the disk wins again. The index drops what it derived from other versions
of a buffer, so a server that lives for hours does not keep them."""
from __future__ import annotations

from ..analysis.project.models import project_index


def set_text(path: str, text: str) -> None:
    project_index().set_text(path, text)


def drop_text(path: str) -> None:
    project_index().set_text(path, None)


def changed_on_disk() -> None:
    project_index().forget_derived()
