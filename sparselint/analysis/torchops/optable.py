"""What torch does with each op on sparse inputs, as probed by tools/probe_torch.py.

One generated table per torch release lives in sparselint/data/torch-<release>.json. An
entry is keyed by the op's probed spelling (`torch.add`, `Tensor.add`, `Tensor.__iadd__`,
`torch.nn.functional.softmax`), the argument form of the call (`x,dense`: a sparse subject
and a dense second operand) and the input kind (`coo`, `coo_unc`, `csr`, `csc`, each also
`+grad` for a leaf that requires grad and `+graph` for a tensor built from values that
require grad; `dense` for the reference call). The engine and the rules ask this module,
never torch.
"""
from __future__ import annotations

import contextvars
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data")
_FILE = re.compile(r"^torch-(\d+)\.(\d+)\.(\d+)\.json$")

# Python operators and the Tensor dunder each spelling reaches.
BINARY_DUNDERS = {
    "Add": "add", "Subtract": "sub", "Multiply": "mul", "Divide": "truediv", "FloorDivide": "floordiv",
    "Modulo": "mod", "Power": "pow", "MatrixMultiply": "matmul", "BitAnd": "and", "BitOr": "or",
    "BitXor": "xor", "LeftShift": "lshift", "RightShift": "rshift",
}
AUGMENTED_DUNDERS = {f"{k}Assign": v for k, v in BINARY_DUNDERS.items()}
COMPARISON_DUNDERS = {"GreaterThan": "gt", "LessThan": "lt", "GreaterThanEqual": "ge", "LessThanEqual": "le",
                      "Equal": "eq", "NotEqual": "ne"}


@dataclass(frozen=True)
class Outcome:
    """One probed call. `error` is set when the forward raised; otherwise `layout` is the
    result's layout ("" for a non-tensor result), `coalesced` is known for a COO result,
    `backward` is "ok", "-" (nothing requires grad) or the error, and `grad` the layout
    of the leaf's grad after backward ("coo c", "coo u", "strided")."""

    error: Optional[str] = None
    layout: str = ""
    coalesced: Optional[bool] = None
    backward: Optional[str] = None
    grad: Optional[str] = None
    # for a sparse result whose backward depends on how it is reduced: way -> "ok" or error
    # (ways: "sparse.sum" for `torch.sparse.sum(r)`, "sum" for `r.sum()`, "to_dense")
    backward_by: Optional[tuple[tuple[str, str], ...]] = None

    @property
    def works(self) -> bool:
        return self.error is None

    @property
    def backward_error(self) -> Optional[str]:
        return self.backward if self.backward not in (None, "ok", "-", "mixed") else None

    def backward_error_for(self, consumer: Optional[str]) -> Optional[str]:
        """The backward's error when the result is consumed this way; when that depends on
        the way and the way is unknown (None), no error is claimed."""
        if self.backward_by is None:
            return self.backward_error
        if consumer == "sparse.mm":
            # `torch.sparse.mm(result, dense)` hands a sparse COO result a sparse gradient, as
            # `torch.sparse.sum` does (checked under torch 2.13: `index_select`, `cat`); a
            # compressed result takes another path
            consumer = "sparse.sum" if self.layout == "coo" else None
        error = dict(self.backward_by).get(consumer or "")
        return error if error not in (None, "ok") else None


def _parse(record: str, errors: dict) -> Outcome:
    parts = [p.strip() for p in record.split(";")]
    head = parts[0].split()
    if head[0] == "E":
        return Outcome(error=errors.get(head[1], head[1]))
    layout = head[1] if len(head) > 1 else ""
    coalesced = {"c": True, "u": False}.get(head[2]) if len(head) > 2 else None
    backward = grad = by = None
    if len(parts) > 1:
        b = parts[1].split()
        if b[0] == "by":
            backward = "mixed"
            by = tuple((way, "ok" if o == "ok" else errors.get(o[2:], o[2:]))
                       for way, _, o in (item.partition("=") for item in b[1:]))
        else:
            backward = errors.get(b[1], b[1]) if b[0] == "E" else b[0]
    if len(parts) > 2 and parts[2].startswith("grad "):
        grad = parts[2][len("grad "):]
    return Outcome(layout=layout, coalesced=coalesced, backward=backward, grad=grad, backward_by=by)


class OpTable:
    def __init__(self, data: dict):
        self.version: str = data["torch"]
        self.generated: str = data.get("generated", "")
        self._errors = data["errors"]
        self._ops = data["ops"]

    def __contains__(self, op: str) -> bool:
        return op in self._ops

    def forms(self, op: str) -> tuple[str, ...]:
        return tuple(self._ops.get(op, ()))

    def outcome(self, op: str, form: str, kind: str) -> Optional[Outcome]:
        records = self._ops.get(op, {}).get(form, {})
        record = records.get(kind)
        if record is None and "+" in kind:
            # the probe leaves out an autograd record whose forward fails as the plain one does
            plain = records.get(kind.split("+")[0])
            record = plain if plain is not None and plain.startswith("E") else None
        return None if record is None else _parse(record, self._errors)

    def ops(self) -> tuple[str, ...]:
        return tuple(self._ops)

    def failing_everywhere(self, op: str, kind: str) -> Optional[Outcome]:
        """The op's outcome for `kind` when it fails in every probed form where the dense call
        works (no kernel for that input at all), else None."""
        first = None
        for form in self._ops.get(op, {}):
            dense = self.outcome(op, form, "dense")
            if dense is None or not dense.works:
                continue
            o = self.outcome(op, form, kind)
            if o is None or o.works:
                return None
            first = first or o
        return first


def available() -> dict[str, str]:
    """Release -> path of every table shipped."""
    out = {}
    for name in os.listdir(DATA) if os.path.isdir(DATA) else ():
        m = _FILE.match(name)
        if m:
            out[".".join(m.groups())] = os.path.join(DATA, name)
    return dict(sorted(out.items(), key=lambda kv: _key(kv[0])))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.+]", version)[:3])


def choose(target: str = "") -> str:
    """The release whose table answers for `target-torch-version`: the newest by default;
    else the newest shipped release with the target's prefix (`2.9` -> 2.9.1), else the
    newest one older than the target, else the oldest."""
    versions = list(available())
    if not versions:
        raise FileNotFoundError(f"no op tables in {DATA}")
    target = (target or "").strip()
    if not target:
        return versions[-1]
    same = [v for v in versions if v == target or v.startswith(target + ".")]
    if same:
        return same[-1]
    older = [v for v in versions if _key(v) <= _key(target)]
    return older[-1] if older else versions[0]


def missing_table(target: str) -> Optional[str]:
    """Why `target-torch-version` has no table of its own (its release, or a patch release
    of its minor one), naming the table used instead and those shipped; None when it has."""
    versions = list(available())
    target = (target or "").strip()
    if not target or not versions:
        return None
    minor = target.split(".")[:2]
    if any(v == target or v.startswith(target + ".") or v.split(".")[:2] == minor for v in versions):
        return None
    return (f"no op table for torch {target}; its checks use torch {choose(target)}'s "
            f"(tables shipped: {', '.join(versions)})")


@lru_cache(maxsize=None)
def load(version: str) -> OpTable:
    with open(available()[version], encoding="utf-8") as fh:
        return OpTable(json.load(fh))


_ACTIVE: contextvars.ContextVar[str] = contextvars.ContextVar("sparselint_torch_version", default="")


def use(target: str):
    """Make the table for `target-torch-version` the active one; returns a token for `reset`."""
    return _ACTIVE.set(choose(target))


def reset(token) -> None:
    _ACTIVE.reset(token)


def active() -> OpTable:
    return load(_ACTIVE.get() or choose(""))


# -- from a call site to an entry ----------------------------------------------------------

def kind_of(t, mode: str = "") -> tuple[str, ...]:
    """The probed input kinds a tensor fact may be: one kind when its layout (and, for COO,
    its coalescing) is known, both COO kinds when coalescing is unknown; () otherwise.
    mode "auto" picks `+grad` for a leaf, `+graph` for a tensor in a graph."""
    if t is None:
        return ()
    if t.layout == "coo":
        base = ("coo",) if t.coalesced is True else ("coo_unc",) if t.coalesced is False else ("coo", "coo_unc")
    elif t.layout in ("csr", "csc"):
        base = (t.layout,)
    else:
        return ()
    if mode == "auto":
        mode = {"leaf": "grad", "nonleaf": "graph"}.get(t.grad or "", "")
    return tuple(b + ("+" + mode if mode else "") for b in base)


def agreed(table: OpTable, op: str, forms, kinds) -> Optional[Outcome]:
    """The outcome shared by every form in `forms` (one or several) and every kind in
    `kinds` (the fact's possible states), or None when they differ or one is unprobed."""
    forms = (forms,) if isinstance(forms, str) else tuple(forms)
    outs = [table.outcome(op, f, k) for f in forms for k in kinds]
    if not outs or any(o is None for o in outs):
        return None
    first = outs[0]
    if all(o.works == first.works for o in outs):
        if not first.works:
            return first
        coalesced = first.coalesced if all(o.coalesced == first.coalesced for o in outs) else None
        same = all(o.backward == first.backward and o.backward_by == first.backward_by for o in outs)
        layout = first.layout if all(o.layout == first.layout for o in outs) else ""
        return Outcome(layout=layout, coalesced=coalesced, backward=first.backward if same else None,
                       backward_by=first.backward_by if same else None)
    return None
