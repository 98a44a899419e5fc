"""How long the editor waits for findings after an edit, measured through the real server.

    python benchmarks/lsp_latency.py [--file PATH ...] [--edits 40] [--debounce-ms 0]

Starts `sparselint server` over stdio with a real LSP client for each input: two generated
500-line scripts (a typical training program with a sparse-embedding model, and a worst
case where every statement is sparse-tensor code) and any --file. It opens the file, waits
for its first diagnostics (cold), then types a new statement line near the middle (and
takes it out again) and times each edit until the diagnostics for that version arrive
(warm). With --debounce-ms 0 the numbers are the server's own work: decode, check,
convert and publish; an editor adds the debounce on top (150 ms unless configured).
Prints a Markdown table: cold, and warm median, p90 and max, in milliseconds, and the
server's CPU time per edit, which is what the wall time shrinks to on an idle machine.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import os
import statistics
import sys
import tempfile
import time

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

TYPICAL_HEAD = '''"""Train a two-tower recommender with sparse embedding gradients (benchmark input)."""
import argparse
import logging
import math
import os
import random
import time
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train")


@dataclass
class Config:
    users: int = 100_000
    items: int = 50_000
    dim: int = 64
    hidden: list = field(default_factory=lambda: [256, 128])
    batch_size: int = 1024
    epochs: int = 5
    lr_sparse: float = 1e-2
    lr_dense: float = 1e-3
    weight_decay: float = 0.0
    clip: float = 5.0
    seed: int = 0
    checkpoint: str = "checkpoints"


class Interactions(torch.utils.data.Dataset):
    def __init__(self, users, items, labels):
        self.users, self.items, self.labels = users, items, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.users[i], self.items[i], self.labels[i]


def synthetic(cfg, n):
    g = torch.Generator().manual_seed(cfg.seed)
    users = torch.randint(0, cfg.users, (n,), generator=g)
    items = torch.randint(0, cfg.items, (n,), generator=g)
    labels = (torch.rand(n, generator=g) > 0.5).float()
    return Interactions(users, items, labels)


class Tower(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        layers, width = [], dim
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(0.1)]
            width = h
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(width, dim)

    def forward(self, x):
        return self.out(self.mlp(x))


class TwoTower(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.user_emb = nn.Embedding(cfg.users, cfg.dim, sparse=True)
        self.item_emb = nn.Embedding(cfg.items, cfg.dim, sparse=True)
        self.user_tower = Tower(cfg.dim, cfg.hidden)
        self.item_tower = Tower(cfg.dim, cfg.hidden)

    def forward(self, users, items):
        u = self.user_tower(self.user_emb(users))
        v = self.item_tower(self.item_emb(items))
        return (u * v).sum(-1)


def optimizers(model, cfg):
    sparse = list(model.user_emb.parameters()) + list(model.item_emb.parameters())
    dense = [p for n, p in model.named_parameters() if "emb" not in n]
    return (torch.optim.SparseAdam(sparse, lr=cfg.lr_sparse),
            torch.optim.AdamW(dense, lr=cfg.lr_dense, weight_decay=cfg.weight_decay))


def train_epoch(model, loader, opts, cfg, epoch):
    model.train()
    total, seen = 0.0, 0
    for step, (users, items, labels) in enumerate(loader):
        for opt in opts:
            opt.zero_grad()
        logits = model(users, items)
        loss = F.binary_cross_entropy_with_logits(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        for opt in opts:
            opt.step()
        total += loss.item() * len(labels)
        seen += len(labels)
        if step % 100 == 0:
            log.info("epoch %d step %d loss %.4f", epoch, step, total / max(seen, 1))
    return total / max(seen, 1)
'''

UTILITY = '''

def auc_{n}(scores, labels):
    order = torch.argsort(scores, descending=True)
    ranked = labels[order]
    positives = ranked.sum().item()
    negatives = len(ranked) - positives
    if positives == 0 or negatives == 0:
        return float("nan")
    cum = torch.cumsum(1 - ranked, dim=0)
    return 1.0 - (cum * ranked).sum().item() / (positives * negatives)


def recall_at_k_{n}(scores, labels, k=10):
    top = torch.topk(scores, min(k, len(scores))).indices
    hits = labels[top].sum().item()
    return hits / max(labels.sum().item(), 1)


@torch.no_grad()
def evaluate_{n}(model, loader):
    model.eval()
    scores, labels = [], []
    for users, items, y in loader:
        scores.append(torch.sigmoid(model(users, items)))
        labels.append(y)
    scores, labels = torch.cat(scores), torch.cat(labels)
    return {{"auc": auc_{n}(scores, labels), "recall@10": recall_at_k_{n}(scores, labels)}}


def save_{n}(model, opts, path, epoch):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    torch.save({{"model": model.state_dict(), "opts": [o.state_dict() for o in opts], "epoch": epoch}}, path)
'''

TYPICAL_TAIL = '''

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=Config.epochs)
    p.add_argument("--batch-size", type=int, default=Config.batch_size)
    p.add_argument("--seed", type=int, default=Config.seed)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    cfg = Config(epochs=args.epochs, batch_size=args.batch_size, seed=args.seed)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    train = torch.utils.data.DataLoader(synthetic(cfg, 100_000), batch_size=cfg.batch_size, shuffle=True)
    valid = torch.utils.data.DataLoader(synthetic(cfg, 10_000), batch_size=cfg.batch_size)
    model = TwoTower(cfg)
    opts = [torch.optim.Adam(model.parameters(), lr=cfg.lr_dense)]
    for epoch in range(cfg.epochs):
        start = time.time()
        loss = train_epoch(model, train, opts, cfg, epoch)
        metrics = evaluate_0(model, valid)
        log.info("epoch %d loss %.4f auc %.4f (%.1fs)", epoch, loss, metrics["auc"], time.time() - start)
        save_0(model, opts, os.path.join(cfg.checkpoint, f"epoch{{epoch}}.pt"), epoch)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
'''


DENSE_BLOCK = '''

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


def typical(lines: int) -> str:
    """A training program as people write them: a sparse-embedding model, its optimizers and
    training loop, and around them the metrics, evaluation and checkpointing code."""
    body, n = TYPICAL_HEAD, 0
    tail = TYPICAL_TAIL.format()
    while body.count("\n") + tail.count("\n") + UTILITY.count("\n") < lines:
        body += UTILITY.format(n=n)
        n += 1
    body += tail
    while body.count("\n") < lines:
        body += "# padding\n"
    return body


def dense(lines: int) -> str:
    """The worst case: every statement is sparse-tensor code the engine must follow."""
    head = '"""A recommender trained with sparse embeddings (benchmark input)."""\nimport torch\nimport torch.nn as nn\n'
    body, n = head, 0
    while body.count("\n") < lines - 12:
        body += DENSE_BLOCK.format(n=n)
        n += 1
    body += ("\n\nmodel = Tower0()\nemb = nn.Embedding(50, 4, sparse=True)\n"
             "emb(torch.tensor([7, 7, 9])).sum().backward()\n"
             "emb.weight.grad.coalesce().values().clamp_(-1.0, 1.0)\n")
    while body.count("\n") < lines:
        body += "# padding\n"
    return body


def edit_line(text: str) -> tuple[int, str]:
    """A one-line statement near the middle, and its indentation: the edit types a new
    statement after it, as someone adding a line of code would."""
    tree = ast.parse(text)
    middle = text.count("\n") // 2
    simple = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and not isinstance(n, COMPOUND)
              and n.lineno == n.end_lineno]
    if not simple:
        raise SystemExit("no one-line statement to edit after")
    best = min(simple, key=lambda n: abs(n.lineno - middle))
    return best.lineno, " " * best.col_offset  # 0-based line of the line after it


COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.While, ast.With,
            ast.Try, ast.AsyncFor, ast.AsyncWith)


def cpu_seconds(pid: int):
    """User + system CPU time of a process so far (Linux), or None elsewhere. Unlike wall
    time it does not grow when other work competes for the cores."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


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
        at, indent = edit_line(text)
        warm = []
        cpu_before = cpu_seconds(proc.pid)
        for k in range(edits):
            version = k + 2
            if k % 2 == 0:  # type a new statement line, then take it out again
                change = lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(start=lsp.Position(line=at, character=0), end=lsp.Position(line=at, character=0)),
                    text=f"{indent}edited_{k} = {k}\n")
            else:
                change = lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(start=lsp.Position(line=at, character=0), end=lsp.Position(line=at + 1, character=0)),
                    text="")
            sent = time.perf_counter()
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change]))
            warm.append(await until(version) - sent)
        cpu = (cpu_seconds(proc.pid) - cpu_before) / edits if cpu_before is not None else None
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
        await asyncio.wait_for(proc.wait(), 30)
        return {"cold": cold, "warm": warm, "findings": arrived.get("findings"), "cpu": cpu}
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", action="append", default=[], help="also measure this Python file (repeatable)")
    ap.add_argument("--lines", type=int, default=500, help="length of the generated scripts")
    ap.add_argument("--edits", type=int, default=40)
    ap.add_argument("--debounce-ms", type=float, default=0)
    args = ap.parse_args()
    ms = lambda s: f"{s * 1000:.0f}"  # noqa: E731
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}, debounce: {args.debounce_ms:g} ms, "
          f"{args.edits} edits per file")
    print("| input | lines | findings | cold (ms) | warm median (ms) | warm p90 (ms) | warm max (ms) "
          "| server CPU per edit (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [("generated: typical training script", os.path.join(tmp, "train.py"), typical(args.lines)),
                  ("generated: every statement sparse code", os.path.join(tmp, "dense.py"), dense(args.lines))]
        for f in args.file:
            with open(f, encoding="utf-8") as fh:
                inputs.append((f"`{os.path.basename(f)}`", os.path.abspath(f), fh.read()))
        for label, path, text in inputs:
            r = asyncio.run(measure(path, text, args.edits, args.debounce_ms))
            warm = sorted(r["warm"])
            p90 = warm[max(int(len(warm) * 0.9) - 1, 0)]
            print(f"| {label} | {text.count(chr(10))} | {r['findings']} | {ms(r['cold'])} | "
                  f"{ms(statistics.median(warm))} | {ms(p90)} | {ms(warm[-1])} | "
                  f"{ms(r['cpu']) if r['cpu'] is not None else 'n/a'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
