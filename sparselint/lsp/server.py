"""The language server: documents in, diagnostics, code actions and hovers out.

Every check runs on one worker thread, in the order asked, so the engine's project index
(shared by every check in this process) is never touched by two checks at once; the event
loop stays free to take the next keystroke. Edits are debounced; opening and saving check at
once. A result is published only if the document still has the text it was computed from."""
from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Optional
from urllib.parse import unquote, urlsplit, urlunsplit

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from . import actions, overlay
from .convert import Placer, to_lsp
from .documents import Analysis, Source, analyse, buffer, notebook_source
from .settings import SettingsCache

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.15
PYTHON_SUFFIXES = (".py", ".pyi")
CELL_SCHEMES = ("vscode-notebook-cell",)


class SparselintServer(LanguageServer):
    def __init__(self):
        super().__init__(
            "sparselint", __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                notebook_selector=[lsp.NotebookDocumentFilterWithCells(
                    notebook="jupyter-notebook", cells=[lsp.NotebookCellLanguage(language="python")])],
                save=True),
        )
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sparselint-check")
        self.results: dict[str, Analysis] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Task] = set()
        self.settings = SettingsCache()
        self.debounce = DEBOUNCE_SECONDS
        self.shown_errors: set[str] = set()
        self.open_buffers: set[str] = set()  # Python buffers the client opened (not cells)
        # notebook uri -> its cells that a client without notebook sync opened as plain
        # documents, in the order opened
        self.loose_cells: dict[str, list[str]] = {}

    # -- documents ---------------------------------------------------------------------

    def is_python(self, uri: str, language: Optional[str] = None) -> bool:
        if uri.split(":", 1)[0] in CELL_SCHEMES:
            return False  # a notebook cell: checked with its notebook
        return language == "python" or uri.split("?", 1)[0].endswith(PYTHON_SUFFIXES)

    def document(self, uri: str):
        """An open text document by the uri the client sent. The workspace keeps documents
        under a normalised uri (percent-escapes decoded), which is not the one a notebook
        names its cells by (`vscode-notebook-cell:/nb.ipynb#W0sZmlsZQ%3D%3D`)."""
        docs = self.workspace.text_documents
        return docs.get(uri) or docs.get(unquote(uri))

    def source_of(self, key: str) -> Optional[Source]:
        """The current text of an open document or notebook, from the editor (never disk)."""
        ws = self.workspace
        nb = ws.get_notebook_document(notebook_uri=key)
        if nb is not None:
            cells = []
            for cell in nb.cells:
                doc = self.document(cell.document)
                cells.append((cell.document, cell.kind == lsp.NotebookCellKind.Code, doc.source if doc else ""))
            return notebook_source(key, path_of(key), cells, nb.version)
        if key in self.loose_cells:
            cells = [(uri, True, doc.source) for uri in self.loose_cells[key]
                     for doc in [self.document(uri)] if doc is not None]
            return notebook_source(key, path_of(key), cells, None) if cells else None
        doc = self.document(key)
        if doc is None or key not in self.open_buffers:
            return None
        return buffer(key, path_of(key), doc.source, doc.version)

    def key_of(self, uri: str) -> str:
        """The analysis a document belongs to: its notebook for a cell, itself otherwise."""
        nb = self.workspace.get_notebook_document(cell_uri=uri)
        if nb is not None:
            return nb.uri
        loose = notebook_of_cell(uri)
        return loose if loose in self.loose_cells and uri in self.loose_cells[loose] else uri

    def resolves_edits(self) -> bool:
        """Whether the client fills in a code action's edit on demand (codeAction/resolve)."""
        doc = self.client_capabilities.text_document
        action = doc.code_action if doc else None
        support = action.resolve_support if action else None
        return bool(support and "edit" in support.properties)

    # -- checking ----------------------------------------------------------------------

    def schedule(self, key: str, delay: float) -> None:
        old = self.pending.pop(key, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self.pending[key] = loop.call_later(delay, self._start, key)

    def _start(self, key: str) -> None:
        self.pending.pop(key, None)
        task = asyncio.ensure_future(self.check(key))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def in_pool(self, fn, *args):
        return asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def check(self, key: str) -> Optional[Analysis]:
        source = self.source_of(key)
        if source is None:
            return None
        try:
            analysis = await self.in_pool(self._analyse, source)
            if analysis is None:
                return None  # superseded before its turn came
        except Exception as exc:  # a bug of ours must not take the editor's server down
            log.exception("checking %s failed", key)
            self.window_log_message(lsp.LogMessageParams(
                type=lsp.MessageType.Error, message=f"sparselint: checking {key} failed: {type(exc).__name__}: {exc}"))
            return None
        current = self.source_of(key)
        if current is None or current.targets != source.targets:
            return analysis  # edited meanwhile: a newer check is on its way
        self.results[key] = analysis
        self.publish(analysis)
        error = analysis.resolved.error
        if error and error not in self.shown_errors:
            self.shown_errors.add(error)
            self.window_show_message(lsp.ShowMessageParams(
                type=lsp.MessageType.Error, message=f"sparselint: {error}; files under it are not checked"))
        return analysis

    def _analyse(self, source: Source) -> Optional[Analysis]:
        if source.joined is None:
            doc = self.document(source.key)
            if doc is None or doc.source != source.text:
                # Typed over while waiting behind another check: the check scheduled for
                # the newer text will run; this one would only be thrown away.
                return None
        if source.path and source.joined is None:
            overlay.set_text(source.path, source.text)
        resolved = self.settings.for_path(source.path)
        return analyse(source, resolved)

    async def fresh(self, key: str) -> Optional[Analysis]:
        """The analysis of the document as it is now: the stored one, or a new one at once."""
        source = self.source_of(key)
        if source is None:
            return None
        cached = self.results.get(key)
        if cached is not None and cached.source.targets == source.targets:
            return cached
        pending = self.pending.pop(key, None)
        if pending is not None:
            pending.cancel()
        return await self.check(key)

    def publish(self, analysis: Analysis) -> None:
        source = analysis.source
        placer = Placer(source, self.workspace.position_codec)
        by_uri: dict[str, list[lsp.Diagnostic]] = {uri: [] for uri in source.targets}
        for d in analysis.findings:
            placed = to_lsp(d, placer)
            if placed is not None:
                by_uri.setdefault(placed[0], []).append(placed[1])
        for uri, diagnostics in by_uri.items():
            version = source.version if source.joined is None else None
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def clear(self, key: str, uris) -> None:
        pending = self.pending.pop(key, None)
        if pending is not None:
            pending.cancel()
        self.results.pop(key, None)
        for uri in uris:
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def recheck_dependents(self, path: Optional[str], delay: float) -> None:
        """Re-check the open files whose last findings depended on this file."""
        if not path:
            return
        path = os.path.abspath(path)
        for key, analysis in list(self.results.items()):
            if path in analysis.dependencies:
                self.schedule(key, delay)

    def recheck_all(self) -> None:
        for key in list(self.results):
            self.schedule(key, 0)


WARM_UP = ("import torch\nemb = torch.nn.Embedding(5, 2, sparse=True)\nemb(torch.tensor([1])).sum().backward()\n"
           "emb.weight.grad.coalesce().values().clamp_(-1, 1)\n")


def warm_up() -> None:
    """Import every rule and prime the parser while the editor is still opening files, so
    the first file opened is not also the one that pays for it."""
    from ..config import Settings
    from ..engine import check_text
    check_text(WARM_UP, "<warm-up>", Settings())


_CELL_FRAGMENT = re.compile(r"[W-Za-f][0-6]+s(?P<scheme>[A-Za-z0-9+/=]+)")


def notebook_of_cell(uri: str) -> Optional[str]:
    """The uri of the notebook a VS Code cell uri belongs to: the cell's path under the
    notebook's scheme, which the fragment carries in base64 after the cell's handle
    (`vscode-notebook-cell:/a/nb.ipynb#W0sZmlsZQ%3D%3D` -> `file:///a/nb.ipynb`)."""
    parts = urlsplit(uri)
    if parts.scheme not in CELL_SCHEMES:
        return None
    scheme = "file"
    m = _CELL_FRAGMENT.fullmatch(unquote(parts.fragment))
    if m:
        try:
            scheme = base64.b64decode(m.group("scheme"), validate=True).decode("ascii") or scheme
        except (binascii.Error, UnicodeDecodeError):
            pass
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, ""))


def path_of(uri: str) -> Optional[str]:
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


def build() -> SparselintServer:
    server = SparselintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: SparselintServer, params: lsp.InitializeParams):
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        if isinstance(options.get("debounceMs"), (int, float)) and options["debounceMs"] >= 0:
            ls.debounce = options["debounceMs"] / 1000
        root = ls.workspace.root_path
        if root:
            ls.settings.fallback_root = root

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: SparselintServer, params: lsp.InitializedParams):
        ls.pool.submit(warm_up)
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched is not None and watched.dynamic_registration:
            # Model files changed outside the editor (a checkout, a generator) re-check
            # the open files that use them; a changed pyproject.toml re-checks everything.
            options = lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[
                lsp.FileSystemWatcher(glob_pattern="**/*.py"),
                lsp.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                lsp.FileSystemWatcher(glob_pattern="**/*.json")])  # run-time reports
            try:
                await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[
                    lsp.Registration(id="sparselint-watch", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                     register_options=options)]))
            except Exception as exc:  # a client that refuses still gets every other feature
                log.warning("file watching not registered: %s", exc)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SparselintServer, params: lsp.DidOpenTextDocumentParams):
        doc = params.text_document
        nb = notebook_of_cell(doc.uri)
        if nb is not None and doc.language_id == "python" and ls.workspace.get_notebook_document(cell_uri=doc.uri) is None:
            # A cell opened on its own by a client without notebook sync: checked with the
            # other cells of its notebook that are open.
            cells = ls.loose_cells.setdefault(nb, [])
            if doc.uri not in cells:
                cells.append(doc.uri)
            ls.schedule(nb, 0)
            return
        if not ls.is_python(doc.uri, doc.language_id):
            return
        ls.open_buffers.add(doc.uri)
        ls.schedule(doc.uri, 0)
        ls.recheck_dependents(path_of(doc.uri), 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SparselintServer, params: lsp.DidChangeTextDocumentParams):
        uri = params.text_document.uri
        if ls.key_of(uri) in ls.loose_cells:
            ls.schedule(ls.key_of(uri), ls.debounce)
            return
        if uri not in ls.open_buffers:
            return
        path = path_of(uri)
        if path:
            # The index must see the new text before any dependent is re-checked.
            ls.pool.submit(overlay.set_text, path, ls.workspace.get_text_document(uri).source)
        ls.schedule(uri, ls.debounce)
        ls.recheck_dependents(path, ls.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SparselintServer, params: lsp.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        if uri.endswith("pyproject.toml"):
            ls.pool.submit(ls.settings.clear)
            ls.recheck_all()
        if uri in ls.open_buffers:
            ls.schedule(uri, 0)
            ls.recheck_dependents(path_of(uri), 0)
        elif ls.key_of(uri) in ls.loose_cells:
            ls.schedule(ls.key_of(uri), 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SparselintServer, params: lsp.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        nb = ls.key_of(uri)
        if nb in ls.loose_cells:
            ls.loose_cells[nb].remove(uri)
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            if ls.loose_cells[nb]:
                ls.schedule(nb, 0)
            else:
                del ls.loose_cells[nb]
                ls.clear(nb, [])
            return
        if uri not in ls.open_buffers:
            return
        ls.open_buffers.discard(uri)
        ls.clear(uri, [uri])
        path = path_of(uri)
        if path:
            ls.pool.submit(overlay.drop_text, path)  # the file on disk is the truth again
            ls.recheck_dependents(path, 0)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def nb_open(ls: SparselintServer, params: lsp.DidOpenNotebookDocumentParams):
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def nb_change(ls: SparselintServer, params: lsp.DidChangeNotebookDocumentParams):
        ls.schedule(params.notebook_document.uri, ls.debounce)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def nb_save(ls: SparselintServer, params: lsp.DidSaveNotebookDocumentParams):
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def nb_close(ls: SparselintServer, params: lsp.DidCloseNotebookDocumentParams):
        ls.clear(params.notebook_document.uri, [c.uri for c in params.cell_text_documents])

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: SparselintServer, params: lsp.DidChangeWatchedFilesParams):
        for change in params.changes:
            if change.uri.endswith("pyproject.toml"):
                ls.pool.submit(ls.settings.clear)
                ls.recheck_all()
            elif change.uri.endswith(".json"):  # a run-time report: only the files it marks
                ls.recheck_dependents(path_of(change.uri), 0)
            elif change.uri not in ls.open_buffers:  # an open buffer's text wins over disk
                ls.pool.submit(overlay.changed_on_disk)
                ls.recheck_dependents(path_of(change.uri), 0)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, actions.FIX_ALL_KIND], resolve_provider=True))
    async def code_action(ls: SparselintServer, params: lsp.CodeActionParams):
        uri = params.text_document.uri
        analysis = await ls.fresh(ls.key_of(uri))
        if analysis is None:
            return None
        placer = Placer(analysis.source, ls.workspace.position_codec)
        only = params.context.only
        return await ls.in_pool(actions.code_actions, analysis, placer, uri, params.range, only,
                                ls.resolves_edits()) or None

    @server.feature(lsp.CODE_ACTION_RESOLVE)
    async def resolve(ls: SparselintServer, action: lsp.CodeAction):
        key = action.data.get("fixAll") if isinstance(action.data, dict) else None
        analysis = await ls.fresh(key) if isinstance(key, str) else None
        if analysis is not None:
            placer = Placer(analysis.source, ls.workspace.position_codec)
            action.edit = await ls.in_pool(actions.fix_all_edit, analysis, placer)
        return action

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SparselintServer, params: lsp.HoverParams):
        uri = params.text_document.uri
        analysis = await ls.fresh(ls.key_of(uri))
        if analysis is None:
            return None
        return actions.hover(analysis, Placer(analysis.source, ls.workspace.position_codec), uri, params.position)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: SparselintServer, params):
        for handle in ls.pending.values():
            handle.cancel()
        ls.pending.clear()
        ls.pool.shutdown(wait=False, cancel_futures=True)

    return server
