"""`sparselint server` driven over stdio by a real LSP client."""
from __future__ import annotations

import asyncio
import os
import shutil
import time

import pytest

if not os.environ.get("CI"):  # CI installs the lsp extra: there a missing pygls must fail
    pytest.importorskip("pygls", reason="needs the lsp extra: pip install -e '.[test,lsp]'")

from lsprotocol import types as lsp  # noqa: E402

from lsp_session import apply_edits, run, server  # noqa: E402

CLIP = """import torch
import torch.nn as nn

emb = nn.Embedding(50, 4, sparse=True)
emb(torch.tensor([7, 7, 9])).sum().backward()
emb.weight.grad.coalesce().values().clamp_(-1.0, 1.0)
print(emb.weight.grad)
"""
CLIP_LINE = 5  # 0-based line of the finding


def codes(diags):
    return [d.code for d in diags]


def test_open_fix_and_clean(tmp_path):
    path = tmp_path / "clip.py"
    path.write_text("print('the disk copy is never read')\n")

    async def scenario():
        async with server(str(tmp_path)) as s:
            uri = s.open(str(path), CLIP)
            diags = await s.diagnostics(uri, lambda d: bool(d))
            assert codes(diags) == ["SPL002"]
            d = diags[0]
            assert (d.range.start.line, d.range.start.character) == (CLIP_LINE, 0)
            assert (d.range.end.line, d.range.end.character) == (CLIP_LINE, 26)
            assert d.source == "sparselint"
            assert d.severity == lsp.DiagnosticSeverity.Warning  # a silent misbehaviour
            assert d.code_description.href.endswith("docs/rules/SPL002.md")
            assert os.path.isfile(d.code_description.href[len("file://"):])
            assert "coalesce" in d.message

            actions = await s.code_actions(uri, d.range, [d])
            fix = [a for a in actions if a.title.startswith("Fix SPL002")]
            # (rebinding a gradient is an unsafe fix: a hook or a list may hold the old one)
            assert len(fix) == 1 and fix[0].kind == lsp.CodeActionKind.QuickFix and not fix[0].is_preferred
            assert "(unsafe, may change behaviour)" in fix[0].title
            s.edit(uri, fix[0].edit.changes[uri])
            assert "emb.weight.grad = emb.weight.grad.coalesce()" in s.texts[uri]
            assert codes(await s.diagnostics(uri, lambda d: not d)) == []
            s.close(uri)
            assert codes(await s.diagnostics(uri)) == []

    run(scenario)


TWO_CLIPS_AND_ADD = CLIP + """emb.weight.grad.coalesce().values().mul_(0.5)
s = torch.randn(3, 3).to_sparse()
y = s + torch.randn(3, 3)
"""
# two findings with safe fixes (`.data` dropped from a gradient edit) and one with an unsafe one
TWO_ZEROS_AND_ADD = """import torch
import torch.nn as nn

emb = nn.Embedding(50, 4, sparse=True)
emb(torch.tensor([7, 7, 9])).sum().backward()
emb.weight.grad.data.mul_(0.5)
emb.weight.grad.data.zero_()
s = torch.randn(3, 3).to_sparse()
y = s + torch.randn(3, 3)
"""


def test_untitled_buffer_is_checked_from_its_text(tmp_path):
    async def scenario():
        async with server(str(tmp_path)) as s:
            # Not Python: never checked. Checks run in order, so had it been checked, its
            # diagnostics would arrive before those of the buffer opened after it.
            other = s.open(str(tmp_path / "notes.md"), CLIP, language="markdown")
            uri = "untitled:Untitled-1"
            s.versions[uri], s.texts[uri] = 1, CLIP
            s.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=CLIP)))
            assert codes(await s.diagnostics(uri, lambda d: bool(d))) == ["SPL002"]
            assert other not in s.published

    run(scenario)


def test_hover_shows_why_the_rule_exists(tmp_path):
    from sparselint.rule import doc_sections, rule_by_code
    why = doc_sections(rule_by_code("SPL002").doc())["Why is this bad?"]

    async def scenario():
        async with server(str(tmp_path)) as s:
            uri = s.open(str(tmp_path / "clip.py"), CLIP)
            await s.diagnostics(uri, lambda d: bool(d))
            hover = await s.hover(uri, CLIP_LINE, 20)
            assert hover.contents.kind == lsp.MarkupKind.Markdown
            text = hover.contents.value
            assert "SPL002" in text and "### Why is this bad?" in text
            assert why.splitlines()[0] in text
            assert hover.range.start.line == CLIP_LINE
            assert await s.hover(uri, 0, 3) is None  # `import torch`: no finding there

    run(scenario)


def test_noqa_action_silences_the_finding(tmp_path):
    async def scenario():
        async with server(str(tmp_path)) as s:
            uri = s.open(str(tmp_path / "clip.py"), CLIP)
            (d,) = await s.diagnostics(uri, lambda d: bool(d))
            actions = await s.code_actions(uri, d.range, [d])
            noqa = [a for a in actions if "noqa" in a.title]
            assert [a.title for a in noqa] == ["Add `# noqa: SPL002` to this line"]
            s.edit(uri, noqa[0].edit.changes[uri])
            line = s.texts[uri].splitlines()[CLIP_LINE]
            assert line == "emb.weight.grad.coalesce().values().clamp_(-1.0, 1.0)  # noqa: SPL002"
            assert codes(await s.diagnostics(uri, lambda d: not d)) == []

    run(scenario)


def test_fix_all_applies_only_safe_fixes_and_labels_unsafe_ones(tmp_path):
    async def scenario():
        async with server(str(tmp_path)) as s:
            uri = s.open(str(tmp_path / "train.py"), TWO_ZEROS_AND_ADD)
            diags = await s.diagnostics(uri, lambda d: len(d) == 3)
            assert codes(diags) == ["SPL004", "SPL004", "SPL501"]
            add = diags[2]
            actions = await s.code_actions(uri, add.range, [add])
            unsafe = [a for a in actions if a.title.startswith("Fix SPL501")]
            assert len(unsafe) == 1 and "(unsafe, may change behaviour)" in unsafe[0].title
            assert not unsafe[0].is_preferred
            fix_all = [a for a in actions if a.kind == "source.fixAll.sparselint"]
            assert [a.title for a in fix_all] == ["Fix all safe sparselint findings in this file"]
            # Asked for by kind, as an editor does on save.
            only = await s.code_actions(uri, lsp.Range(start=lsp.Position(line=0, character=0),
                                                       end=lsp.Position(line=0, character=0)),
                                        only=["source.fixAll"])
            assert [a.title for a in only] == [fix_all[0].title]
            s.edit(uri, only[0].edit.changes[uri])
            assert "emb.weight.grad.mul_(0.5)\nemb.weight.grad.zero_()" in s.texts[uri]
            assert "y = s + torch.randn(3, 3)" in s.texts[uri]  # the unsafe fix is left alone
            assert codes(await s.diagnostics(uri, lambda d: len(d) == 1)) == ["SPL501"]

    run(scenario)


def test_unparsable_buffer_gives_spl900_and_the_server_lives_on(tmp_path):
    broken = "import torch\nx = torch.randn(3).to_sparse()\nif x\n    y = x.values()\n"

    async def scenario():
        async with server(str(tmp_path)) as s:
            uri = s.open(str(tmp_path / "broken.py"), broken)
            (d,) = await s.diagnostics(uri, lambda d: bool(d))
            assert d.code == "SPL900" and d.severity == lsp.DiagnosticSeverity.Error
            assert (d.range.start.line, d.range.start.character) == (2, 4)  # after `if x`
            assert "expected ':'" in d.message
            s.replace_all(uri, CLIP)
            assert codes(await s.diagnostics(uri, lambda d: d and d[0].code != "SPL900")) == ["SPL002"]
            assert await s.hover(uri, CLIP_LINE, 3) is not None
        assert s.returncode == 0  # shut down cleanly when asked, not crashed

    run(scenario)


def test_edits_are_debounced_and_unsaved_text_is_what_counts(tmp_path):
    path = tmp_path / "clip.py"
    path.write_text(CLIP)  # the disk copy has the hazard; the buffer will not

    async def scenario():
        async with server(str(tmp_path), options={"debounceMs": 300}) as s:
            uri = s.open(str(path), CLIP)
            await s.diagnostics(uri, lambda d: bool(d))
            before = len(s.published[uri])
            clean = CLIP.replace("emb.weight.grad.coalesce().values().clamp_(-1.0, 1.0)", "print(0)")
            for n in range(5):  # five keystrokes inside the debounce window
                s.replace_all(uri, clean + "#" * n + "\n")
            sent = time.monotonic()
            assert codes(await s.diagnostics(uri)) == []
            assert time.monotonic() - sent >= 0.3  # checked only once the typing paused
            await asyncio.sleep(0.5)
            pubs = s.published[uri][before:]
            assert len(pubs) == 1 and pubs[0].version == 6  # one check, of the last text

    run(scenario)


def test_model_change_rechecks_the_files_that_use_it(tmp_path):
    project = tmp_path / "proj"
    shutil.copytree(os.path.join(os.path.dirname(__file__), "..", "fixtures", "projects", "recsys_bad"), project)
    model_path, train_path = project / "model.py", project / "train.py"
    model_text = model_path.read_text()

    async def scenario():
        async with server(str(project)) as s:
            train = s.open(str(train_path), train_path.read_text())
            (d,) = await s.diagnostics(train, lambda d: bool(d))
            assert d.code == "SPL401" and (d.range.start.line, d.range.start.character) == (6, 12)
            related = d.related_information
            assert related and related[0].location.uri == train
            assert related[0].location.range.start.line == 5  # `model = Recommender()`
            assert "Recommender" in related[0].message and "sparse=True" in related[0].message

            model = s.open(str(model_path), model_text)
            await s.diagnostics(model)
            # An unsaved edit to the model makes its embeddings dense: train.py is clean.
            s.replace_all(model, model_text.replace("sparse=True", "sparse=False"))
            assert codes(await s.diagnostics(train, lambda d: not d)) == []
            assert model_path.read_text() == model_text  # nothing was written
            # Closing the model without saving: the disk copy counts again.
            s.close(model)
            assert codes(await s.diagnostics(train, lambda d: bool(d))) == ["SPL401"]

    run(scenario)


def test_a_finding_in_a_called_module_is_shown_at_the_call_and_linked_to_its_line(tmp_path):
    """graph_utils.py:11 fails with train.py's tensor: train.py shows it on a line of its own
    (not at line 11 of train.py, which has 10), with the module's line as related information."""
    project = tmp_path / "proj"
    shutil.copytree(os.path.join(os.path.dirname(__file__), "..", "fixtures", "projects", "gcn_split_bad"), project)
    train_path = project / "train.py"
    text = train_path.read_text()

    async def scenario():
        async with server(str(project)) as s:
            train = s.open(str(train_path), text)
            (d,) = await s.diagnostics(train, lambda d: bool(d))
            assert d.code == "SPL001" and d.range.start.line == 8  # `adj = gcn_norm(adj, 4)`
            assert text.splitlines()[8][d.range.start.character:].startswith("adj, 4)")
            assert d.message.startswith("in graph_utils.py:11:16: `adj.indices()`")
            there = [(r.location.uri, r.location.range.start.line, r.location.range.start.character)
                     for r in d.related_information]
            helper = (project / "graph_utils.py").as_uri()
            assert there[0] == (helper, 10, 15) and (helper, 6, 11) in there and (train, 8, 15) in there
            actions = await s.code_actions(train, d.range, [d])
            assert not any("noqa" in a.title for a in actions)  # it is suppressed in graph_utils.py

    run(scenario)


def test_settings_come_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.sparselint]\nignore = ["SPL002"]\n')
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "pyproject.toml").write_text('[tool.sparselint]\nselect = ["SPL999"]\n')

    async def scenario():
        async with server(str(tmp_path)) as s:
            uri = s.open(str(tmp_path / "train.py"), TWO_CLIPS_AND_ADD)
            assert codes(await s.diagnostics(uri)) == ["SPL501"]
            broken = s.open(str(bad / "train.py"), TWO_CLIPS_AND_ADD)
            assert codes(await s.diagnostics(broken)) == []
            for _ in range(100):
                if s.messages:
                    break
                await asyncio.sleep(0.05)
            assert s.messages and s.messages[0].type == lsp.MessageType.Error
            assert "SPL999" in s.messages[0].message and "not checked" in s.messages[0].message

    run(scenario)


def test_notebook_findings_land_in_their_cell(tmp_path):
    nb_uri = (tmp_path / "train.ipynb").as_uri()
    cells = ["import torch\nimport torch.nn as nn\n", "# a note", CLIP.split("\n", 2)[2]]
    kinds = [lsp.NotebookCellKind.Code, lsp.NotebookCellKind.Markup, lsp.NotebookCellKind.Code]
    cell_uris = [f"{nb_uri}-cell{i}" for i in range(3)]

    caps = lsp.ClientCapabilities(notebook_document=lsp.NotebookDocumentClientCapabilities(
        synchronization=lsp.NotebookDocumentSyncClientCapabilities()))

    async def scenario():
        async with server(str(tmp_path), capabilities=caps) as s:
            sync = s.initialized.capabilities.notebook_document_sync
            assert sync.notebook_selector[0].notebook == "jupyter-notebook"
            assert [c.language for c in sync.notebook_selector[0].cells] == ["python"]
            s.client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
                notebook_document=lsp.NotebookDocument(
                    uri=nb_uri, notebook_type="jupyter-notebook", version=1,
                    cells=[lsp.NotebookCell(kind=k, document=u) for k, u in zip(kinds, cell_uris)]),
                cell_text_documents=[lsp.TextDocumentItem(uri=u, language_id="python" if k == 1 else "markdown",
                                                          version=1, text=t)
                                     for u, k, t in zip(cell_uris, kinds, cells)]))
            (d,) = await s.diagnostics(cell_uris[2], lambda d: bool(d))
            assert d.code == "SPL002" and d.range.start.line == CLIP_LINE - 2
            actions = await s.code_actions(cell_uris[2], d.range, [d])
            fix = next(a for a in actions if a.title.startswith("Fix SPL002"))
            assert list(fix.edit.changes) == [cell_uris[2]]
            fixed = apply_edits(cells[2], fix.edit.changes[cell_uris[2]])
            assert "emb.weight.grad = emb.weight.grad.coalesce()\n" in fixed
            s.client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
                notebook_document=lsp.NotebookDocumentIdentifier(uri=nb_uri),
                cell_text_documents=[lsp.TextDocumentIdentifier(uri=u) for u in cell_uris]))
            assert codes(await s.diagnostics(cell_uris[2])) == []

    run(scenario)


def vscode_cell_uri(notebook_path, handle: int) -> str:
    """A cell's URI as VS Code sends it (CellUri.generate): the notebook's path under the
    `vscode-notebook-cell` scheme, and a fragment of the cell's handle in base 7 and the
    notebook's scheme in base64, percent-encoded (`#W0sZmlsZQ%3D%3D` for the first cell)."""
    import base64
    from urllib.parse import quote
    digits = ""
    n = handle
    while True:
        digits = "0123456"[n % 7] + digits
        n //= 7
        if not n:
            break
    fragment = "WXYZabcdef"[len(digits) - 1] + digits + "s" + base64.b64encode(b"file").decode()
    return f"vscode-notebook-cell:{quote(str(notebook_path))}#{quote(fragment, safe='')}"


def test_vscode_cell_uris_get_their_diagnostics_through_notebook_sync(tmp_path):
    folder = tmp_path / "my notebooks"
    folder.mkdir()
    nb_uri = (folder / "train.ipynb").as_uri()
    cells = ["import torch\nimport torch.nn as nn\n", "# a note", CLIP.split("\n", 2)[2]]
    kinds = [lsp.NotebookCellKind.Code, lsp.NotebookCellKind.Markup, lsp.NotebookCellKind.Code]
    cell_uris = [vscode_cell_uri(folder / "train.ipynb", i) for i in range(3)]
    assert cell_uris[0].endswith("/my%20notebooks/train.ipynb#W0sZmlsZQ%3D%3D")
    caps = lsp.ClientCapabilities(notebook_document=lsp.NotebookDocumentClientCapabilities(
        synchronization=lsp.NotebookDocumentSyncClientCapabilities()))

    async def scenario():
        async with server(str(tmp_path), capabilities=caps) as s:
            s.client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
                notebook_document=lsp.NotebookDocument(
                    uri=nb_uri, notebook_type="jupyter-notebook", version=1,
                    cells=[lsp.NotebookCell(kind=k, document=u) for k, u in zip(kinds, cell_uris)]),
                cell_text_documents=[lsp.TextDocumentItem(uri=u, language_id="python" if k == 1 else "markdown",
                                                          version=1, text=t)
                                     for u, k, t in zip(cell_uris, kinds, cells)]))
            (d,) = await s.diagnostics(cell_uris[2], lambda d: bool(d))
            assert d.code == "SPL002" and d.range.start.line == CLIP_LINE - 2
            assert set(s.published) == set(cell_uris)  # every publication under a URI as sent
            actions = await s.code_actions(cell_uris[2], d.range, [d])
            fix = next(a for a in actions if a.title.startswith("Fix SPL002"))
            assert list(fix.edit.changes) == [cell_uris[2]]
            fixed = apply_edits(cells[2], fix.edit.changes[cell_uris[2]])
            s.client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
                notebook_document=lsp.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
                change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[
                    lsp.NotebookDocumentCellContentChanges(
                        document=lsp.VersionedTextDocumentIdentifier(uri=cell_uris[2], version=2),
                        changes=[lsp.TextDocumentContentChangeWholeDocument(text=fixed)])]))))
            assert codes(await s.diagnostics(cell_uris[2], lambda d: not d)) == []

    run(scenario)


def test_vscode_cell_uris_opened_as_plain_documents_are_checked_as_one_notebook(tmp_path):
    """A client without notebook sync opens each code cell with textDocument/didOpen; the
    cells of one notebook are checked together, in the order they were opened, as
    `sparselint check` joins an .ipynb (the second cell alone does not know `nn`)."""
    notebook_path = tmp_path / "train.ipynb"
    cells = ["import torch\nimport torch.nn as nn\n", CLIP.split("\n", 2)[2]]
    cell_uris = [vscode_cell_uri(notebook_path, i) for i in (0, 2)]

    async def scenario():
        async with server(str(tmp_path)) as s:
            for uri, text in zip(cell_uris, cells):
                s.versions[uri] = 1
                s.texts[uri] = text
                s.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
                    text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
            (d,) = await s.diagnostics(cell_uris[1], lambda d: bool(d))
            assert d.code == "SPL002" and d.range.start.line == CLIP_LINE - 2
            assert set(s.published) == set(cell_uris)
            actions = await s.code_actions(cell_uris[1], d.range, [d])
            fix = next(a for a in actions if a.title.startswith("Fix SPL002"))
            s.edit(cell_uris[1], fix.edit.changes[cell_uris[1]])
            assert codes(await s.diagnostics(cell_uris[1], lambda d: not d)) == []
            s.replace_all(cell_uris[1], cells[1])
            assert codes(await s.diagnostics(cell_uris[1], lambda d: bool(d))) == ["SPL002"]
            s.close(cell_uris[1])
            assert codes(await s.diagnostics(cell_uris[1])) == []

    run(scenario)


def test_model_changed_on_disk_rechecks_through_file_watching(tmp_path):
    project = tmp_path / "proj"
    shutil.copytree(os.path.join(os.path.dirname(__file__), "..", "fixtures", "projects", "recsys_bad"), project)
    model_path, train_path = project / "model.py", project / "train.py"
    caps = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))

    async def scenario():
        async with server(str(project), capabilities=caps) as s:
            train = s.open(str(train_path), train_path.read_text())
            assert codes(await s.diagnostics(train, lambda d: bool(d))) == ["SPL401"]
            (reg,) = [r for p in s.registrations for r in p.registrations]
            assert reg.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
            globs = {w["globPattern"] for w in reg.register_options["watchers"]}
            assert globs == {"**/*.py", "**/pyproject.toml", "**/*.json"}
            # A checkout rewrites model.py on disk; the editor does not have it open.
            model_path.write_text(model_path.read_text().replace("sparse=True", "sparse=False"))
            s.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
                lsp.FileEvent(uri=model_path.as_uri(), type=lsp.FileChangeType.Changed)]))
            assert codes(await s.diagnostics(train, lambda d: not d)) == []

    run(scenario)


def test_server_without_the_extra_says_how_to_get_it():
    import subprocess
    import sys
    code = ("import sys; sys.modules['pygls'] = None; sys.argv = ['sparselint', 'server'];"
            "from sparselint.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "pip install 'sparselint[lsp]'" in proc.stderr
    assert proc.stdout == ""


def test_fix_all_is_resolved_on_demand_when_the_client_can(tmp_path):
    caps = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(
        code_action=lsp.CodeActionClientCapabilities(
            resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"]))))

    async def scenario():
        async with server(str(tmp_path), capabilities=caps) as s:
            assert s.initialized.capabilities.code_action_provider.resolve_provider
            uri = s.open(str(tmp_path / "train.py"), TWO_ZEROS_AND_ADD)
            await s.diagnostics(uri, lambda d: len(d) == 3)
            (action,) = await s.code_actions(uri, lsp.Range(start=lsp.Position(line=0, character=0),
                                                            end=lsp.Position(line=0, character=0)),
                                             only=["source.fixAll"])
            assert action.edit is None  # not computed until chosen
            resolved = await s.request(s.client.code_action_resolve_async(action))
            s.edit(uri, resolved.edit.changes[uri])
            assert "emb.weight.grad.mul_(0.5)\nemb.weight.grad.zero_()" in s.texts[uri]
            assert codes(await s.diagnostics(uri, lambda d: len(d) == 1)) == ["SPL501"]

    run(scenario)


def test_configuration_changes_and_saves_recheck(tmp_path):
    path = tmp_path / "clip.py"
    path.write_text(CLIP)
    config = tmp_path / "pyproject.toml"

    async def scenario():
        async with server(str(tmp_path)) as s:
            uri = s.open(str(path), CLIP)
            assert codes(await s.diagnostics(uri, lambda d: bool(d))) == ["SPL002"]
            # A pyproject.toml appears: every open file is checked again under it.
            config.write_text('[tool.sparselint]\nignore = ["SPL002"]\n')
            s.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
                lsp.FileEvent(uri=config.as_uri(), type=lsp.FileChangeType.Created)]))
            assert codes(await s.diagnostics(uri, lambda d: not d)) == []
            # The configuration is edited again; saving the file checks it under the new one.
            config.write_text('[tool.sparselint]\nselect = ["SPL0"]\n')
            s.client.text_document_did_save(lsp.DidSaveTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri)))
            assert codes(await s.diagnostics(uri, lambda d: bool(d))) == ["SPL002"]

    run(scenario)
