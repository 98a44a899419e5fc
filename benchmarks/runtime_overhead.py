"""What the run-time checker costs: two training programs, each run without and with it.

    python benchmarks/runtime_overhead.py [--scale 1.0] [--repeat 1] [--only gcn|recommender]

The programs are this file itself (`--workload NAME`), run as `python runtime_overhead.py
--workload NAME` and as `python -m sparselint.runtime runtime_overhead.py --workload NAME`, in
the same command one after the other:

- gcn: a two-layer graph convolutional network on a random graph (a normalised sparse COO
  adjacency, `torch.sparse.mm` forward and backward, Adam), full-batch epochs;
- recommender: a matrix-factorisation recommender with `nn.Embedding(sparse=True)` user and
  item tables and `torch.optim.SparseAdam`, mini-batches of 1024 interactions.

Each program times its own training loop (after the imports and the data are made), and the
table gives the loop's seconds without and with the checker and their ratio, in wall time and
in CPU time (the process's, all threads; steadier than wall time on a shared machine), then
the whole process's wall time (torch's import, the checker's set-up and its report at exit
included). With --repeat N the sides alternate N times and each measure keeps its least
disturbed (smallest) value. torch runs on one thread: on a shared machine, idle intra-op threads
spinning for work make both wall and CPU time vary by 3x between runs of the same program.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))


def gcn(scale: float) -> None:
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    torch.set_num_threads(1)  # see the module's doc
    n, e, feats, hidden, classes = 20000, 200000, 64, 64, 8
    src, dst = torch.randint(0, n, (e,)), torch.randint(0, n, (e,))
    loops = torch.arange(n)
    index = torch.stack([torch.cat([src, dst, loops]), torch.cat([dst, src, loops])])
    adj = torch.sparse_coo_tensor(index, torch.ones(index.size(1)), (n, n)).coalesce()
    deg = torch.sparse.sum(adj, 1).to_dense()
    norm = deg.pow(-0.5)
    row, col = adj.indices()
    adj = torch.sparse_coo_tensor(adj.indices(), norm[row] * adj.values() * norm[col], (n, n),
                                  is_coalesced=True)
    x, y = torch.randn(n, feats), torch.randint(0, classes, (n,))
    train = torch.rand(n) < 0.5

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2 = nn.Linear(feats, hidden), nn.Linear(hidden, classes)

        def forward(self, a, h):
            h = torch.relu(torch.sparse.mm(a, self.l1(h)))
            return torch.sparse.mm(a, self.l2(h))

    model = GCN()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    epochs = max(1, int(60 * scale))
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(epochs):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(adj, x)[train], y[train])
        loss.backward()
        opt.step()
    return time.perf_counter() - start, time.process_time() - cpu, epochs, float(loss.detach())


def recommender(scale: float) -> None:
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    torch.set_num_threads(1)  # see the module's doc
    users, items, dim, batch = 50000, 20000, 32, 1024
    u_all, i_all = torch.randint(0, users, (200000,)), torch.randint(0, items, (200000,))
    label_all = (torch.rand(200000) < 0.3).float()

    class MF(nn.Module):
        def __init__(self):
            super().__init__()
            self.user = nn.Embedding(users, dim, sparse=True)
            self.item = nn.Embedding(items, dim, sparse=True)

        def forward(self, u, i):
            return (self.user(u) * self.item(i)).sum(1)

    model = MF()
    opt = torch.optim.SparseAdam(model.parameters(), lr=0.01)
    steps = max(1, int(2000 * scale))
    start, cpu = time.perf_counter(), time.process_time()
    for step in range(steps):
        at = (step * batch) % (u_all.numel() - batch)
        u, i, label = u_all[at:at + batch], i_all[at:at + batch], label_all[at:at + batch]
        opt.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(model(u, i), label)
        loss.backward()
        opt.step()
    return time.perf_counter() - start, time.process_time() - cpu, steps, float(loss.detach())


WORKLOADS = {"gcn": gcn, "recommender": recommender}


def _run(name: str, scale: float, checked: bool) -> dict:
    prefix = [sys.executable, "-m", "sparselint.runtime"] if checked else [sys.executable]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    r = subprocess.run([*prefix, HERE, "--workload", name, "--scale", str(scale)], capture_output=True, text=True,
                       env=env)
    wall = time.perf_counter() - start
    if r.returncode not in (0, 1) or not r.stdout.strip():
        raise SystemExit(f"{name} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out.update(wall=wall, hazards="found" in r.stderr and "no hazards" not in r.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)
    ap.add_argument("--scale", type=float, default=1.0, help="epochs/steps relative to the default")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each side (the best is kept)")
    ap.add_argument("--only", choices=sorted(WORKLOADS), action="append")
    args = ap.parse_args()
    if args.workload:
        seconds, cpu, steps, loss = WORKLOADS[args.workload](args.scale)
        print(json.dumps({"loop": seconds, "cpu": cpu, "steps": steps, "loss": loss}))
        return
    rows = ["| program | loop without | loop with checker | ratio | loop CPU without | loop CPU with | CPU ratio "
            "| process without | process with |",
            "|---|---|---|---|---|---|---|---|---|"]
    for name in args.only or sorted(WORKLOADS):
        best = {}
        for _ in range(args.repeat):
            for checked in (False, True):  # side by side, alternating
                r = _run(name, args.scale, checked)
                if checked not in best:
                    best[checked] = r
                else:  # the least disturbed run of each measure
                    for k in ("loop", "cpu", "wall"):
                        best[checked][k] = min(best[checked][k], r[k])
        off, on = best[False], best[True]
        if abs(off["loss"] - on["loss"]) > 1e-4 * max(1.0, abs(off["loss"])):
            raise SystemExit(f"{name}: the checker changed the result ({off['loss']} != {on['loss']})")
        rows.append(f"| {name} ({off['steps']} steps) | {off['loop']:.2f} s | {on['loop']:.2f} s | "
                    f"{on['loop'] / off['loop']:.2f}x | {off['cpu']:.2f} s | {on['cpu']:.2f} s | "
                    f"{on['cpu'] / off['cpu']:.2f}x | {off['wall']:.2f} s | {on['wall']:.2f} s |")
        print(rows[-1], file=sys.stderr)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
