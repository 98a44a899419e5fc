"""Side-by-side timing of sparselint and peer linters on the same files, in one command.

    python benchmarks/bench.py TREE [--subfolder nn] [--tools-dir DIR] [--timeout 900]

Reports wall time, files/s, peak memory (RSS of the process tree) and the ratio to ruff's
default rule set for: sparselint cold (--no-cache) and warm (second run on a primed cache),
ruff, and, on a subfolder where they would take minutes on the whole tree, TorchFix and
Fixit when installed. Then sparselint cold on a quarter, half and all of the tree, to show
how time and memory grow. Peers are found on PATH or in --tools-dir.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def python_files(root: str) -> list[str]:
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "__pycache__")
        out.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(".py"))
    return out


def measure(cmd: list[str], timeout: float) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB, and a note ("timeout" or the exit status)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            return time.perf_counter() - start, usage.ru_maxrss / 1024, "timeout"
        time.sleep(0.02)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, f"exit {code}"


def tool(name: str, tools_dir: str | None) -> str | None:
    if tools_dir:
        cand = os.path.join(tools_dir, name)
        if os.access(cand, os.X_OK):
            return cand
    return shutil.which(name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree")
    ap.add_argument("--subfolder", default="nn", help="folder under TREE for the slow peers (default: nn)")
    ap.add_argument("--tools-dir", default=None)
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()

    tree = os.path.abspath(args.tree)
    sub = os.path.join(tree, args.subfolder)
    sparselint = [sys.executable, "-m", "sparselint"]
    ruff = tool("ruff", args.tools_dir)
    torchfix = tool("torchfix", args.tools_dir)
    fixit = tool("fixit", args.tools_dir)
    rows = []

    def run(label, cmd, target, nfiles):
        wall, rss, note = measure(cmd + [target], args.timeout)
        rows.append((label, os.path.relpath(target, os.path.dirname(tree)), nfiles, wall, rss, note))
        print(f"  {label}: {wall:.2f} s", file=sys.stderr)

    all_files = python_files(tree)
    sub_files = python_files(sub) if os.path.isdir(sub) else []
    cache = tempfile.mkdtemp(prefix="sparselint-bench-")
    try:
        for target, files in ((tree, all_files), (sub, sub_files)):
            if not files:
                continue
            run("sparselint cold", sparselint + ["--no-cache", "--exit-zero", "-q"], target, len(files))
            measure(sparselint + ["--cache-dir", cache, "--exit-zero", "-q", target], args.timeout)
            run("sparselint warm", sparselint + ["--cache-dir", cache, "--exit-zero", "-q"], target, len(files))
            if ruff:
                run("ruff (default rules)", [ruff, "check", "--no-cache", "--isolated", "--exit-zero", "-q"], target, len(files))
        if sub_files:
            if torchfix:
                run("TorchFix", [torchfix], sub, len(sub_files))
            if fixit:
                run("Fixit", [fixit, "lint"], sub, len(sub_files))
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    ruff_time = {r[1]: r[3] for r in rows if r[0].startswith("ruff")}
    print("| tool | files | wall (s) | files/s | peak RSS (MiB) | x ruff | note |")
    print("|---|---|---|---|---|---|---|")
    for label, target, n, wall, rss, note in rows:
        ratio = f"{wall / ruff_time[target]:.1f}" if target in ruff_time else "-"
        print(f"| {label} on `{target}` | {n} | {wall:.2f} | {n / wall:.0f} | {rss:.0f} | {ratio} | {note} |")

    print("\nsparselint cold against tree size:")
    print("| share | files | wall (s) | files/s | peak RSS (MiB) |")
    print("|---|---|---|---|---|")
    for share in (4, 2, 1):
        part = all_files[: len(all_files) // share]
        wall, rss, _ = measure_files(sparselint + ["--no-cache", "--exit-zero", "-q"], part)
        print(f"| 1/{share} | {len(part)} | {wall:.2f} | {len(part) / wall:.0f} | {rss:.0f} |")
    return 0


def measure_files(cmd: list[str], files: list[str]):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd + files, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
