"""`sparselint server` driven over stdio by a real LSP client."""
from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("pygls")

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
            assert d.range.end.line == CLIP_LINE
            assert d.source == "sparselint"
            assert d.severity == lsp.DiagnosticSeverity.Warning  # a silent misbehaviour
            assert d.code_description.href.endswith("docs/rules/SPL002.md")
            assert os.path.isfile(d.code_description.href[len("file://"):])
            assert "coalesce" in d.message

            actions = await s.code_actions(uri, d.range, [d])
            fix = [a for a in actions if a.title.startswith("Fix SPL002")]
            assert len(fix) == 1 and fix[0].kind == lsp.CodeActionKind.QuickFix and fix[0].is_preferred
            assert "unsafe" not in fix[0].title
            s.edit(uri, fix[0].edit.changes[uri])
            assert "emb.weight.grad = emb.weight.grad.coalesce()" in s.texts[uri]
            assert codes(await s.diagnostics(uri, lambda d: not d)) == []
            s.close(uri)
            assert codes(await s.diagnostics(uri)) == []

    run(scenario)
