#!/usr/bin/env bash
# Lay out a real-world corpus of PyTorch code that no one on this project wrote, for
# false-positive checks and benchmarks. The corpus itself is never committed.
#   usage: benchmarks/fetch_corpus.sh [DEST]   (default: $HOME/.cache/sparselint-corpus)
# DEST/torch_geometric, DEST/torchrec: pure-Python sources of two sparse-heavy libraries
# DEST/torch: the Python sources of the installed torch (2,000+ files, 1.2M lines)
set -euo pipefail
dest=${1:-$HOME/.cache/sparselint-corpus}
mkdir -p "$dest/dl"
for spec in torch_geometric==2.8.1 torchrec==1.9.2; do
  name=${spec%%==*}
  [ -d "$dest/$name" ] && continue
  pip download --no-deps -q -d "$dest/dl" "$spec" 2>&1 | grep -v "^WARNING: Location" || true
  whl=$(ls "$dest"/dl/${name}-*.whl | head -n 1)
  mkdir -p "$dest/$name.tmp" && (cd "$dest/$name.tmp" && python3 -m zipfile -e "$whl" .)
  mv "$dest/$name.tmp/$name" "$dest/$name" && rm -rf "$dest/$name.tmp"
done
if [ ! -d "$dest/torch" ]; then
  src=$(python3 -c 'import importlib.util as u, os; s=u.find_spec("torch"); print(os.path.dirname(s.origin) if s else "")')
  if [ -n "$src" ]; then
    python3 - "$src" "$dest/torch" <<'PY'
import pathlib, shutil, sys
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for f in src.rglob("*.py"):
    t = out / f.relative_to(src)
    t.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(f, t)
PY
  else
    echo "torch is not installed here: skipped $dest/torch" >&2
  fi
fi
for d in "$dest"/*/; do
  [ "$(basename "$d")" = dl ] && continue
  printf '%-18s %6d .py files\n' "$(basename "$d")" "$(find "$d" -name '*.py' | wc -l)"
done
