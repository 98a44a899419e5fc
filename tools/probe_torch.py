"""Ask the installed torch which public ops work on sparse tensors, and write the answer as
the op table sparselint reads (sparselint/data/torch-<release>.json).

    python tools/probe_torch.py --out sparselint/data/torch-2.13.0.json

Every public callable of `torch`, `torch.nn.functional`, `torch.sparse` and `torch.Tensor`
(in-place variants and operator dunders included) is called in a set of argument forms on
small 3x3 inputs: sparse COO (coalesced, and uncoalesced with a duplicate entry), CSR and CSC,
each without autograd, as a leaf that requires grad (kind `coo+grad`), and built from values
that require grad (kind `coo+graph`); and on the same matrix dense, as a reference. A form
is kept when the dense call or some sparse call works, so a failure recorded for a sparse
input is about the input, not about the argument form. Each record says whether the call
works, the first line of the error otherwise, the layout of the result and, for a COO result,
whether it is coalesced. With autograd the result is reduced to a scalar and backpropagated
(a sparse result by `torch.sparse.sum`, `.sum()` and `.to_dense().sum()`, each recorded
when they disagree), and the record adds the backward's outcome and, for a leaf, the layout of
its `.grad`.

Each op runs in a forked child, so an op that changes global state, hangs or crashes the
process cannot disturb the others. The output is deterministic: keys are sorted, errors are
reduced to their first sentence with addresses removed, and only the `generated` date and
the `build` string change between runs on the same release. A `+grad` or `+graph` record is
left out when its forward fails exactly as the record without autograd does.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import inspect
import json
import os
import re
import signal
import sys
import time
import warnings

KINDS = ("coo", "coo_unc", "csr", "csc")
MODES = ("", "grad", "graph")
FORMS = ("x", "x,int", "x,0", "x,2", "x,-1", "x,bool", "x,int,int", "x,float", "x,2.0", "x,dim", "x,dim,keepdim", "x,dense", "dense,x", "x,x",
         "x,0,index", "[x,x]", "x,dense,dense", "dense,x,dense")
# Operator dunders of Tensor: every Python spelling of an operator reaches one of these.
DUNDERS = tuple(f"__{n}__" for n in (
    "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv", "rtruediv", "itruediv",
    "floordiv", "rfloordiv", "ifloordiv", "mod", "rmod", "imod", "pow", "rpow", "ipow", "matmul", "rmatmul",
    "imatmul", "neg", "pos", "abs", "invert", "and", "rand", "iand", "or", "ror", "ior", "xor", "rxor", "ixor",
    "lshift", "rlshift", "ilshift", "rshift", "rrshift", "irshift", "lt", "le", "gt", "ge", "eq", "ne",
    "getitem", "setitem", "bool", "float", "int", "len", "contains"))
# Private Tensor methods that libraries call on sparse tensors.
PRIVATE_METHODS = ("_values", "_indices", "_nnz", "_coalesced_", "_dimI", "_dimV", "_to_dense")
# Calls that do not run an op on their arguments, or that take seconds each (compilers,
# tracers, file and process machinery): probing them says nothing about sparse support.
SKIP = frozenset({
    "torch.compile", "torch.export", "torch.load", "torch.save", "torch.from_file", "torch.vmap",
    "torch.cond", "torch.while_loop", "torch.jit", "torch.set_default_device", "torch.use_deterministic_algorithms",
    "torch.set_default_dtype", "torch.set_default_tensor_type", "torch.manual_seed", "torch.seed",
    "torch.set_num_threads", "torch.set_num_interop_threads", "torch.set_printoptions", "torch.autocast",
    "torch.set_float32_matmul_precision", "torch.set_warn_always", "torch.set_flush_denormal",
    "torch.compiled_with_cxx11_abi", "torch.nn.functional.handle_torch_function",
    "torch.nn.functional.has_torch_function", "torch.nn.functional.has_torch_function_unary",
    "torch.nn.functional.has_torch_function_variadic", "torch.nn.functional.boolean_dispatch",
    "torch.nn.functional.assert_int_or_pair",
    "Tensor.share_memory_", "Tensor.pin_memory", "Tensor.register_hook", "Tensor.register_post_accumulate_grad_hook",
    "Tensor.backward", "Tensor.module_load", "Tensor.__reduce_ex__", "Tensor.storage", "Tensor.untyped_storage",
    "Tensor._typed_storage",
})
TIMEOUT = 20  # seconds per op


def enumerate_ops():
    """Qualified name -> callable, for every public op the probe covers."""
    import torch
    import torch.nn.functional as F

    ops = {}

    def add_module(prefix, module):
        for name in dir(module):
            if name.startswith("_"):
                continue
            obj = getattr(module, name, None)
            if obj is None or inspect.isclass(obj) or inspect.ismodule(obj) or not callable(obj):
                continue
            if not (inspect.isbuiltin(obj) or inspect.isfunction(obj) or type(obj).__name__ in (
                    "builtin_function_or_method", "_VariableFunctionsClass", "method_descriptor")):
                continue
            mod = getattr(obj, "__module__", None) or ""
            if inspect.isfunction(obj) and not mod.startswith("torch"):
                continue  # typing helpers and the like re-exported by accident
            ops[f"{prefix}.{name}"] = obj

    add_module("torch", torch)
    add_module("torch.nn.functional", F)
    add_module("torch.sparse", torch.sparse)
    for name in sorted(set(dir(torch.Tensor))):
        if name.startswith("_") and name not in DUNDERS and name not in PRIVATE_METHODS:
            continue
        obj = getattr(torch.Tensor, name, None)
        if obj is None or not callable(obj) or inspect.isclass(obj):
            continue
        ops[f"Tensor.{name}"] = obj
    return {k: v for k, v in sorted(ops.items()) if k not in SKIP}


# -- inputs ------------------------------------------------------------------------------

def make_inputs(kind: str, mode: str):
    """(subject, second operand of the same kind, dense operand, index) for one call.

    mode "": no autograd; "grad": the subject is a leaf that requires grad
    (`requires_grad_()`); "graph": the subject is built from a values tensor that requires
    grad, as `torch.sparse_coo_tensor(i, w, size)` is in a model."""
    import torch
    dense_values = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [3.0, 0.0, 0.0]])
    other = torch.tensor([[0.5, 0.0, 0.0], [0.0, 1.5, 0.0], [0.0, 0.0, 2.5]])

    def build(kind, graph=False):
        if graph:
            if kind == "dense":
                return dense_values.clone().requires_grad_(True) * 1
            if kind == "coo":
                v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
                return torch.sparse_coo_tensor(torch.tensor([[0, 1, 2], [1, 2, 0]]), v, (3, 3)).coalesce()
            if kind == "coo_unc":
                v = torch.tensor([1.0, 1.0, 1.0, 3.0], requires_grad=True)
                return torch.sparse_coo_tensor(torch.tensor([[1, 0, 1, 2], [2, 1, 2, 0]]), v, (3, 3))
            if kind == "csr":
                v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
                return torch.sparse_csr_tensor(torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 0]), v, (3, 3))
            if kind == "csc":
                v = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
                return torch.sparse_csc_tensor(torch.tensor([0, 1, 2, 3]), torch.tensor([2, 0, 1]), v, (3, 3))
        if kind == "dense":
            return dense_values.clone()
        if kind == "coo":
            return dense_values.to_sparse()
        if kind == "coo_unc":
            # the same matrix, with its entries out of order and (1, 2) stored twice
            i = torch.tensor([[1, 0, 1, 2], [2, 1, 2, 0]])
            v = torch.tensor([1.0, 1.0, 1.0, 3.0])
            return torch.sparse_coo_tensor(i, v, (3, 3))
        if kind == "csr":
            return dense_values.to_sparse_csr()
        if kind == "csc":
            return dense_values.to_sparse_csc()
        raise ValueError(kind)

    x = build(kind, graph=mode == "graph")
    y = build(kind)
    if mode == "grad":
        x.requires_grad_(True)
    return x, y, other.clone(), torch.tensor([0, 2])


def form_args(form: str, x, y, d, index):
    return {
        "x": ((x,), {}),
        "x,int": ((x, 1), {}),
        "x,0": ((x, 0), {}),
        "x,2": ((x, 2), {}),
        "x,-1": ((x, -1), {}),
        "x,bool": ((x, True), {}),
        "x,int,int": ((x, 0, 1), {}),
        "x,float": ((x, 0.5), {}),
        "x,2.0": ((x, 2.0), {}),
        "x,dim": ((x,), {"dim": 1}),
        "x,dim,keepdim": ((x,), {"dim": 1, "keepdim": True}),
        "x,dense": ((x, d), {}),
        "dense,x": ((d, x), {}),
        "x,x": ((x, y), {}),
        "x,0,index": ((x, 0, index), {}),
        "[x,x]": (([x, y],), {}),
        "x,dense,dense": ((x, d, d.clone()), {}),
        "dense,x,dense": ((d, x, d.clone()), {}),
    }[form]


# -- outcomes ----------------------------------------------------------------------------

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(/[^\s'\"]+)+/(site-packages|dist-packages)/")


def first_line(exc: BaseException) -> str:
    """The error's first sentence: what a reader needs, and stable between runs."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = text.split(" This could be because the operator doesn't exist")[0]
    text = _ADDRESS.sub("0x?", text)
    text = _PATH.sub("", text)
    if len(text) > 240:
        text = text[:237] + "..."
    return f"{type(exc).__name__}: {text}"


def first_tensor(result):
    import torch
    if isinstance(result, torch.Tensor):
        return result
    if isinstance(result, (tuple, list)):
        for r in result:
            if isinstance(r, torch.Tensor):
                return r
    return None


def layout_of(t) -> str:
    import torch
    return {torch.strided: "strided", torch.sparse_coo: "coo", torch.sparse_csr: "csr", torch.sparse_csc: "csc",
            torch.sparse_bsr: "bsr", torch.sparse_bsc: "bsc"}.get(t.layout, str(t.layout))


def describe(t) -> str:
    """"strided", "coo c" (coalesced), "coo u" (uncoalesced), "csr", ..."""
    name = layout_of(t)
    if name == "coo":
        try:
            return "coo c" if t.is_coalesced() else "coo u"
        except Exception:
            return "coo"
    return name


def _sparse_sum(t):
    import torch
    return torch.sparse.sum(t)


# The ways code reduces a result to a scalar before `.backward()`: for a dense result, and
# for a sparse one (`torch.sparse.sum(r)`, `r.sum()`, `r.to_dense().sum()`). When they
# disagree the record keeps each (`by sparse.sum=E:<id> sum=ok to_dense=E:<id>`): whether the
# backward fails then depends on how the code consumes the result.
REDUCTIONS = {
    False: (("sum", lambda t: t.sum() if t.dim() else t),),
    True: (("sparse.sum", _sparse_sum), ("sum", lambda t: t.sum()), ("to_dense", lambda t: t.to_dense().sum())),
}


def call(fn, form: str, kind: str, mode: str, errors: dict) -> str:
    """One probe: "ok <layout>", "E <id>"; with autograd, then " ; <backward>" and, for a
    leaf, the layout of its grad."""
    import torch
    x, y, d, index = make_inputs(kind, mode)
    args, kwargs = form_args(form, x, y, d, index)
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:
        return "E " + _error_id(exc, errors)
    if result is NotImplemented:  # an operator dunder declining its operands
        return "E " + _error_id(TypeError("unsupported operand types (NotImplemented)"), errors)
    t = first_tensor(result)
    out = "ok" if t is None else f"ok {describe(t)}"
    if not mode:
        return out
    if t is None or not t.requires_grad:
        return out + " ; -"
    outcomes, grad = [], None
    for n, (name, reduce) in enumerate(REDUCTIONS[t.layout != torch.strided]):
        if n:  # a fresh graph for each way of reducing
            x, y, d, index = make_inputs(kind, mode)
            args, kwargs = form_args(form, x, y, d, index)
            t = first_tensor(fn(*args, **kwargs))
        try:
            reduce(t).backward()
            outcomes.append((name, "ok"))
            if grad is None and mode == "grad" and x.grad is not None:
                grad = describe(x.grad)
        except Exception as exc:
            outcomes.append((name, "E:" + _error_id(exc, errors)))
    if len({o for _, o in outcomes}) == 1:
        backward = outcomes[0][1].replace("E:", "E ")
    else:  # how the result is consumed decides: record each way
        backward = "by " + " ".join(f"{name}={o}" for name, o in outcomes)
    return out + " ; " + backward + ("" if grad is None else f" ; grad {grad}")


def _error_id(exc, errors: dict) -> str:
    message = first_line(exc)
    key = hashlib.sha1(message.encode()).hexdigest()[:8]
    errors[key] = message
    return key


def probe_op(fn) -> tuple[dict, dict]:
    """{form: {kind: record}} for one op, and the errors it saw."""
    import torch
    errors: dict = {}
    out = {}
    for form in FORMS:
        records = {}
        for mode in MODES:
            suffix = "+" + mode if mode else ""
            dense = call(fn, form, "dense", mode, errors)
            sparse = {k + suffix: call(fn, form, k, mode, errors) for k in KINDS}
            if not dense.startswith("ok") and not any(v.startswith("ok") for v in sparse.values()):
                continue  # the form does not fit this op's signature
            records["dense" + suffix] = dense
            for kind, record in sparse.items():
                # with autograd, a forward that fails as it does without is left implied
                if mode and record.startswith("E") and record == records.get(kind.split("+")[0]):
                    continue
                records[kind] = record
        if records:
            out[form] = records
    used = {e for recs in out.values() for r in recs.values() for e in re.findall(r"E[ :](\w+)", r)}
    return out, {k: v for k, v in errors.items() if k in used}


# -- isolation ---------------------------------------------------------------------------

def run_isolated(name, fn):
    """probe_op(fn) in a forked child; "crash" when the child died (an op that corrupts
    memory), "timeout" when it ran out of time."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            signal.alarm(TIMEOUT)
            import torch
            torch.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                data = json.dumps(probe_op(fn)).encode()
            with os.fdopen(w, "wb") as fh:
                fh.write(data)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM:
        return "timeout"
    if not os.WIFEXITED(status) or not data:
        return "crash"
    return json.loads(data)


def probe(names=None, progress=False):
    import torch
    torch.set_num_threads(1)  # no thread pool to inherit across fork
    ops = enumerate_ops()
    chosen = sorted(ops) if names is None else sorted(n for n in ops if n in names)
    table, errors, crashed, timed_out = {}, {}, [], []
    for n, name in enumerate(chosen):
        if progress and n % 200 == 0:
            print(f"{n}/{len(chosen)} {name}", file=sys.stderr)
        got = run_isolated(name, ops[name])
        if got in ("crash", "timeout"):
            (crashed if got == "crash" else timed_out).append(name)
            continue
        entry, errs = got
        if entry:
            table[name] = entry
            errors.update(errs)
    return {
        "torch": torch.__version__.split("+")[0],
        "build": torch.__version__,
        "generated": datetime.date.today().isoformat(),
        "kinds": list(KINDS),
        "modes": [m for m in MODES if m],
        "forms": list(FORMS),
        "enumerated": len(ops),
        "crashed": sorted(crashed),
        "timed_out": sorted(timed_out),
        "errors": dict(sorted(errors.items())),
        "ops": table,
    }


def sample(names, every: int) -> list[str]:
    """A deterministic subset: each name whose hash falls in bucket 0 of `every`."""
    return [n for n in names if int(hashlib.sha1(n.encode()).hexdigest(), 16) % every == 0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="where to write the table (default: stdout)")
    ap.add_argument("--ops", nargs="*", help="probe only these ops (qualified names)")
    ap.add_argument("--sample", type=int, default=0, help="probe one op in N, chosen by name hash")
    ap.add_argument("--list", action="store_true", help="print the enumerated op names and stop")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(enumerate_ops()))
        return 0
    names = set(args.ops) if args.ops else None
    if args.sample:
        names = (names or set()) | set(sample(enumerate_ops(), args.sample))
    start = time.time()
    table = probe(names, progress=args.progress)
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    print(f"probed {len(table['ops'])} ops of {table['enumerated']} in {time.time() - start:.0f}s "
          f"({len(table['crashed'])} crashed, {len(table['timed_out'])} timed out)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
