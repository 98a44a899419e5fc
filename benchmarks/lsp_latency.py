"""How long the editor waits for findings after an edit, measured through the real server.

    python benchmarks/lsp_latency.py [--file PATH] [--edits 40] [--debounce-ms 0]

Starts `sparselint server` over stdio with a real LSP client, opens a 500-line training
script full of sparse-tensor code (or --file), waits for its first diagnostics (cold), then
adds or removes a comment at the end of a line near the middle and times each edit until the diagnostics for that version
arrive (warm). With --debounce-ms 0 the numbers are the server's own work: decode, check,
convert and publish; an editor adds the debounce on top (150 ms unless configured).
Prints cold, median, p90 and max in milliseconds, and the machine's core count.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

BLOCK = '''

class Tower{n}(nn.Module):
    def __init__(self, users=1000, items=5000, dim=32):
        super().__init__()
        self.user = nn.Embedding(users, dim, sparse=True)
        self.item = nn.EmbeddingBag(items, dim, mode="sum", sparse=True)
        self.head = nn.Linear(dim, 1)

    def forward(self, u, i, offsets):
        return self.head(self.user(u) * self.item(i, offsets)).squeeze(1)


def step{n}(model, batch, lr=1e-3):
    opt = torch.optim.SparseAdam(list(model.user.parameters()) + list(model.item.parameters()), lr=lr)
    dense = torch.optim.Adam(model.head.parameters(), lr=lr)
    loss = model(*batch).pow(2).mean()
    loss.backward()
    grad = model.user.weight.grad.coalesce()
    grad.values().clamp_(-1.0, 1.0)
    model.user.weight.grad = grad
    adj = torch.sparse_coo_tensor(batch[0].unsqueeze(0).repeat(2, 1), torch.ones(len(batch[0])), (1000, 1000))
    norm = torch.sparse.sum(adj, dim=1).to_dense()
    opt.step()
    dense.step()
    return loss.item(), norm
'''


def script(lines: int) -> str:
    head = '"""A recommender trained with sparse embeddings (benchmark input)."""\nimport torch\nimport torch.nn as nn\n'
    body, n = head, 0
    while body.count("\n") < lines - 12:
        body += BLOCK.format(n=n)
        n += 1
    body += ("\n\nmodel = Tower0()\nemb = nn.Embedding(50, 4, sparse=True)\n"
             "emb(torch.tensor([7, 7, 9])).sum().backward()\n"
             "emb.weight.grad.coalesce().values().clamp_(-1.0, 1.0)\n")
    while body.count("\n") < lines:
        body += "# padding\n"
    return body


MARK = "  # edited"


def edit_line(lines: list[str]) -> int:
    """A line near the middle that is code, so the edit lands where people type."""
    middle = len(lines) // 2
    for i in sorted(range(len(lines)), key=lambda i: abs(i - middle)):
        stripped = lines[i].strip()
        if stripped and not stripped.startswith(("#", '"', "'", "@")) and stripped.endswith(")") and "#" not in lines[i]:
            return i
    return middle


async def measure(path: str, text: str, edits: int, debounce_ms: float) -> dict:
    client = LanguageClient("lsp-latency", "1")
    arrived: dict[int, float] = {}
    got = asyncio.Event()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diags(params: lsp.PublishDiagnosticsParams):
        arrived[params.version] = time.perf_counter()
        arrived.setdefault("findings", len(params.diagnostics))
        got.set()

    await client.start_io(sys.executable, "-m", "sparselint", "server")
    proc = client._server
    try:
        await asyncio.wait_for(client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=from_fs_path(os.path.dirname(path)),
            initialization_options={"debounceMs": debounce_ms})), 60)
        client.initialized(lsp.InitializedParams())
        uri = from_fs_path(path)

        async def until(version: int) -> float:
            while version not in arrived:
                got.clear()
                await asyncio.wait_for(got.wait(), 60)
            return arrived[version]

        start = time.perf_counter()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        cold = await until(1) - start
        lines = text.split("\n")
        target = edit_line(lines)
        warm = []
        for k in range(edits):
            version = k + 2
            old = lines[target]
            # One keystroke's worth of change: a comment appears or goes at the end of the line.
            new = old[:-len(MARK)] if old.endswith(MARK) else old + MARK
            lines[target] = new
            change = lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=lsp.Position(line=target, character=0),
                                end=lsp.Position(line=target, character=len(old.encode("utf-16-le")) // 2)),
                text=new)
            sent = time.perf_counter()
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change]))
            warm.append(await until(version) - sent)
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
        await asyncio.wait_for(proc.wait(), 30)
        return {"cold": cold, "warm": warm, "findings": arrived.get("findings")}
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", help="a Python file to edit instead of the generated 500-line script")
    ap.add_argument("--lines", type=int, default=500)
    ap.add_argument("--edits", type=int, default=40)
    ap.add_argument("--debounce-ms", type=float, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.file:
            path = os.path.abspath(args.file)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        else:
            path = os.path.join(tmp, "train.py")
            text = script(args.lines)
        r = asyncio.run(measure(path, text, args.edits, args.debounce_ms))
    warm = sorted(r["warm"])
    ms = lambda s: f"{s * 1000:.1f} ms"  # noqa: E731
    print(f"file: {args.file or 'generated'} ({text.count(chr(10))} lines, {r['findings']} findings), "
          f"cores: {os.cpu_count()}, debounce: {args.debounce_ms:g} ms")
    print(f"cold (open -> diagnostics, includes server start-up work): {ms(r['cold'])}")
    print(f"warm (edit -> diagnostics), {len(warm)} edits: median {ms(statistics.median(warm))}, "
          f"p90 {ms(warm[int(len(warm) * 0.9) - 1])}, max {ms(warm[-1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
