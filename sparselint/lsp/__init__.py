"""`sparselint server`: findings, fixes and rule docs in the editor over the Language Server
Protocol. It needs the optional `lsp` extra (pygls); nothing else in sparselint imports it."""
from __future__ import annotations


class MissingExtra(Exception):
    """pygls is not installed."""


def serve() -> None:
    """Run the server on stdin/stdout until the client says `exit`."""
    try:
        from .server import build
    except ImportError as exc:
        if getattr(exc, "name", "") and exc.name.split(".")[0] in ("pygls", "lsprotocol", "cattrs"):
            raise MissingExtra("the language server needs pygls: pip install 'sparselint[lsp]'") from None
        raise
    import sys
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print anywhere must not corrupt the protocol stream
    build().start_io(stdin, stdout)
