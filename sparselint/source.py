"""Reading and writing Python source without losing anything: encoding, BOM, newlines."""
from __future__ import annotations

import io
import os
import re
import tempfile
import tokenize
from dataclasses import dataclass


class DecodeError(Exception):
    pass


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str


def decode(data: bytes) -> Decoded:
    """Decode by the PEP 263 cookie or BOM (utf-8 otherwise), keeping newlines as they are."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise DecodeError(str(exc)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise DecodeError(f"cannot decode as {encoding}: {exc}") from None
    if "\x00" in text:
        raise DecodeError("file contains NUL bytes (binary?)")
    return Decoded(text, encoding)


def encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding)


NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines split the way Python's tokenizer and LibCST count them (not str.splitlines)."""
    return NEWLINE.split(text)


def line_starts(text: str) -> list[int]:
    starts = [0]
    for m in NEWLINE.finditer(text):
        starts.append(m.end())
    return starts


def offset(starts: list[int], line: int, column: int) -> int:
    """Offset of a 1-based (line, column) position."""
    return starts[line - 1] + column - 1


def write_atomic(path: str, data: bytes) -> None:
    """Replace a file's content, keeping its permission bits and what links to it.

    A symlink is written through: its target changes and the link stays (as in ruff). A
    file with other hard links is rewritten in place, since replacing it would leave the
    other names with the old content. Any other file is replaced through a temporary file
    in its directory, so that a reader never sees half a file."""
    target = os.path.realpath(path)
    st = os.stat(target)
    if st.st_nlink > 1:
        with open(target, "r+b") as fh:
            fh.write(data)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
        return
    directory = os.path.dirname(target)
    mode = st.st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=".sparselint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
