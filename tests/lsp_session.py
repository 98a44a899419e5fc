"""A real LSP client driving `sparselint server` as a subprocess over stdio.

Every wait has a timeout, and the server process is killed whatever happens, so a broken
server fails a test in seconds instead of hanging the suite."""
from __future__ import annotations

import asyncio
import os
import sys
from contextlib import asynccontextmanager

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

WAIT = 20.0  # seconds for any single answer; a healthy server needs well under one


class Session:
    def __init__(self, client: LanguageClient):
        self.client = client
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.messages: list[lsp.ShowMessageParams] = []
        self.logs: list[lsp.LogMessageParams] = []
        self.registrations: list[lsp.RegistrationParams] = []
        self.stderr = bytearray()
        self._changed = asyncio.Event()
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    # -- notifications from the server ---------------------------------------------------

    def _on_diagnostics(self, params: lsp.PublishDiagnosticsParams) -> None:
        self.published.setdefault(params.uri, []).append(params)
        self._changed.set()

    async def diagnostics(self, uri: str, until=lambda diags: True, timeout: float = WAIT) -> list[lsp.Diagnostic]:
        """Wait for the next publication for `uri` that satisfies `until`, and return it."""
        seen = len(self.published.get(uri, []))

        async def wait():
            nonlocal seen
            while True:
                pubs = self.published.get(uri, [])
                while seen < len(pubs):
                    seen += 1
                    if until(pubs[seen - 1].diagnostics):
                        return pubs[seen - 1].diagnostics
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            last = [[d.code for d in p.diagnostics] for p in self.published.get(uri, [])]
            raise AssertionError(f"no matching diagnostics for {uri} within {timeout}s; published: {last}; "
                                 f"server stderr: {self.stderr.decode(errors='replace')[-2000:]}") from None

    # -- documents -----------------------------------------------------------------------

    def open(self, path: str, text: str, language: str = "python") -> str:
        uri = from_fs_path(path)
        self.versions[uri] = 1
        self.texts[uri] = text
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
        return uri

    def replace_all(self, uri: str, text: str) -> None:
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))

    def edit(self, uri: str, edits) -> None:
        """Send text edits as incremental changes, and keep our copy in step."""
        for e in back_to_front(edits):
            self.texts[uri] = apply_edits(self.texts[uri], [e])
            self.versions[uri] += 1
            self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[lsp.TextDocumentContentChangePartial(range=e.range, text=e.new_text)]))

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    async def request(self, coro, timeout: float = WAIT):
        return await asyncio.wait_for(coro, timeout)

    async def code_actions(self, uri: str, rng: lsp.Range, diagnostics=(), only=None):
        return await self.request(self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), range=rng,
            context=lsp.CodeActionContext(diagnostics=list(diagnostics), only=only)))) or []

    async def hover(self, uri: str, line: int, character: int):
        return await self.request(self.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=character))))


def _offset(text: str, pos: lsp.Position) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(l) for l in lines[:pos.line]) + pos.character  # the test texts are ASCII


def back_to_front(edits):
    """Edits in an order in which each range is still valid when it is applied; of two at
    one position, the later goes first, so the text of the earlier ends up in front."""
    order = sorted(enumerate(edits), key=lambda p: (p[1].range.start.line, p[1].range.start.character, p[0]),
                   reverse=True)
    return [e for _, e in order]


def apply_edits(text: str, edits) -> str:
    for e in back_to_front(edits):
        a, b = _offset(text, e.range.start), _offset(text, e.range.end)
        text = text[:a] + e.new_text + text[b:]
    return text


@asynccontextmanager
async def server(cwd: str, capabilities: lsp.ClientCapabilities | None = None, options=None):
    """A started, initialized server; shut down and killed on the way out."""
    client = LanguageClient("sparselint-tests", "1")
    session = Session(client)
    client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(lambda *a: session._on_diagnostics(a[-1]))
    client.feature(lsp.WINDOW_SHOW_MESSAGE)(lambda *a: session.messages.append(a[-1]))
    client.feature(lsp.WINDOW_LOG_MESSAGE)(lambda *a: session.logs.append(a[-1]))

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(*a):
        session.registrations.append(a[-1])
        return None

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    await client.start_io(sys.executable, "-m", "sparselint", "server", cwd=cwd, env=env)
    proc = client._server

    async def drain():
        while True:
            chunk = await proc.stderr.read(4096)
            if not chunk:
                return
            session.stderr.extend(chunk)

    drainer = asyncio.ensure_future(drain())
    try:
        session.initialized = await asyncio.wait_for(client.initialize_async(lsp.InitializeParams(
            process_id=os.getpid(), root_uri=from_fs_path(cwd),
            capabilities=capabilities or lsp.ClientCapabilities(),
            initialization_options=options if options is not None else {"debounceMs": 50})), WAIT)
        client.initialized(lsp.InitializedParams())
        yield session
        await asyncio.wait_for(client.shutdown_async(None), WAIT)
        client.exit(None)
        await asyncio.wait_for(proc.wait(), WAIT)
        session.returncode = proc.returncode
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        drainer.cancel()
        try:
            await asyncio.wait_for(client.stop(), 5)
        except (asyncio.TimeoutError, Exception):
            pass


def run(scenario, timeout: float = 60.0):
    """Run one async scenario to its end, or fail it after `timeout` seconds."""
    return asyncio.run(asyncio.wait_for(scenario(), timeout))
