"""sparselint beside ruff on the same trees, cold and warm, in one command.

    python benchmarks/bench.py [--corpus DIR] [--runs 5] [--baseline SRC] [--readme README.md]

Trees (from `benchmarks/fetch_corpus.sh`, default `$SPARSELINT_CORPUS` or
~/.cache/sparselint-corpus): torch sources, torch_geometric, torch_geometric/nn/conv, and
one small file (`benchmarks/data/one_file.py`). For each: sparselint cold (`--no-cache`),
sparselint warm (a cache primed by one run), ruff's default rules cold (`--no-cache`) and
warm; wall time min / median / max over `--runs` runs, and the median run's peak RSS (the
largest process of the run, workers included); the commands of a tree run round by round
(one run of each per round), so a machine whose speed drifts weighs on all of them alike.
`--baseline SRC` adds another sparselint
source tree (a checkout of an earlier commit) run the same way, for before/after numbers.
`--readme` rewrites the table between the benchmark markers of that file.

Runs use the interpreter directly (no shims) with bytecode caching on, as an installed
sparselint runs; one unmeasured run first writes the bytecode.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NEUTRAL = tempfile.mkdtemp(prefix="sparselint-bench-cwd-")
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def importable_copy(src: str) -> str:
    """A folder to put on PYTHONPATH that imports the sparselint of checkout `src`, rules included.

    A checkout keeps its rules in `rules/`, mapped to `sparselint.rules` only by an install; on
    PYTHONPATH alone, `sparselint.rules` would fall through to the installed package's rules."""
    out = tempfile.mkdtemp(prefix="sparselint-baseline-")
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(os.path.join(src, "sparselint"), os.path.join(out, "sparselint"), ignore=skip)
    if not os.path.exists(os.path.join(out, "sparselint", "rules")):
        shutil.copytree(os.path.join(src, "rules"), os.path.join(out, "sparselint", "rules"), ignore=skip)
    return out


def python_files(root: str) -> int:
    if os.path.isfile(root):
        return 1
    return sum(1 for _, _, files in os.walk(root) for f in files if f.endswith(".py"))


def measure(cmd: list[str], env: dict, timeout: float) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MiB (the largest process, waited-for children included),
    exit status."""
    start = time.perf_counter()
    # from a neutral folder: `-m` puts the working folder first on sys.path, and its
    # configuration would apply
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=NEUTRAL)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            raise SystemExit(f"timeout: {' '.join(cmd)}")
        time.sleep(0.002)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        err.seek(0)
        raise SystemExit(f"exit {code}: {' '.join(cmd)}\n{err.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024, code


def summary(out: list) -> tuple:
    walls = [w for w, _, _ in out]
    median_run = sorted(out)[len(out) // 2]
    return min(walls), statistics.median(walls), max(walls), median_run[1]


def interleaved(specs: dict, runs: int, timeout: float) -> dict:
    """Run each command `runs` times, round by round (one run of each per round): a machine
    whose speed drifts over minutes weighs on every command alike, not on the one measured
    while it was slow. `specs`: key -> (command, environment, priming command or None)."""
    for cmd, env, prime in specs.values():
        if prime:
            measure(prime, env, timeout)
    out: dict = {key: [] for key in specs}
    for _ in range(runs):
        for key, (cmd, env, _) in specs.items():
            out[key].append(measure(cmd, env, timeout))
    return {key: summary(found) for key, found in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=os.environ.get("SPARSELINT_CORPUS",
                                                       os.path.expanduser("~/.cache/sparselint-corpus")))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", default=None, help="source tree of another sparselint to run beside this one")
    ap.add_argument("--ruff", default=shutil.which("ruff"))
    ap.add_argument("--readme", default=None)
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()

    trees = [("torch sources", os.path.join(args.corpus, "torch")),
             ("torch_geometric", os.path.join(args.corpus, "torch_geometric")),
             ("torch_geometric/nn/conv", os.path.join(args.corpus, "torch_geometric", "nn", "conv")),
             ("one small file", os.path.join(HERE, "data", "one_file.py"))]
    missing = [p for _, p in trees if not os.path.exists(p)]
    if missing:
        raise SystemExit(f"not found: {', '.join(missing)} (run benchmarks/fetch_corpus.sh)")
    python = os.path.realpath(sys.executable)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tools = [("sparselint", [python, "-m", "sparselint", "-q", "--exit-zero"], env)]
    if args.baseline:
        base_env = dict(env, PYTHONPATH=importable_copy(args.baseline))
        tools.append(("baseline", [python, "-m", "sparselint", "-q", "--exit-zero"], base_env))
    rows = []
    cache = tempfile.mkdtemp(prefix="sparselint-bench-")
    try:
        for label, path in trees:
            n = python_files(path)
            row = {"tree": label, "files": n}
            cold, warm = {}, {}
            for name, cmd, tool_env in tools:
                c = os.path.join(cache, name + label.replace("/", "_"))
                cold[f"{name} cold"] = (cmd + ["--no-cache", path], tool_env, cmd + ["--no-cache", path])
                warm[f"{name} warm"] = (cmd + ["--cache-dir", c, path], tool_env, cmd + ["--cache-dir", c, path])
            if args.ruff:
                ruff = [args.ruff, "check", "--isolated", "--exit-zero", "-q"]
                rc = os.path.join(cache, "ruff" + label.replace("/", "_"))
                cold["ruff cold"] = (ruff + ["--no-cache", path], env, None)
                warm["ruff warm"] = (ruff + ["--cache-dir", rc, path], env, ruff + ["--cache-dir", rc, path])
            row.update(interleaved(cold, args.runs, args.timeout))
            row.update(interleaved(warm, args.runs, args.timeout))
            print(f"  {label}: done", file=sys.stderr)
            rows.append(row)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    table = render(rows, [name for name, _, _ in tools], bool(args.ruff), args.runs)
    print(table)
    if args.readme:
        text = open(args.readme).read()
        if START not in text or END not in text:
            raise SystemExit(f"{args.readme}: no {START} ... {END} markers")
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        with open(args.readme, "w") as fh:
            fh.write(head + START + "\n" + table + "\n" + END + tail)
    return 0


def render(rows, names, with_ruff, runs) -> str:
    def cell(t):
        lo, med, hi, _ = t
        return f"{med:.2f} ({lo:.2f}-{hi:.2f})"

    cols = [f"{n} {m}" for n in names for m in ("cold", "warm")]
    head = ["tree", "files"]
    if with_ruff:
        head += ["ruff cold", "ruff warm"]
    head += [f"{c}, s" for c in cols] + [f"{n} cold peak MiB" for n in names]
    if with_ruff:
        head += ["cold x ruff", "warm x ruff"]
    lines = [f"Wall seconds, median (min-max) of {runs} runs; peak RSS of the median cold run.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["tree"], str(r["files"])]
        if with_ruff:
            cells += [cell(r["ruff cold"]), cell(r["ruff warm"])]
        cells += [cell(r[c]) for c in cols] + [f"{r[f'{n} cold'][3]:.0f}" for n in names]
        if with_ruff:
            cells += [f"{r['sparselint cold'][1] / r['ruff cold'][1]:.1f}x",
                      f"{r['sparselint warm'][1] / r['ruff warm'][1]:.1f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
