"""Hazards that raise at the line (SPL102, SPL103, SPL106, SPL301-SPL303, SPL501, SPL503-SPL506,
SPL601, SPL602): an exception out of a torch call is told apart by its message and by what
the run knows of the call's tensors (a `.grad`, a `.values()` view, a sparse leaf, a
compressed layout). A message shared by several rules that the run cannot tell apart is
recorded under none; the last resort is a rule whose own `error` message the exception
starts with, when that message is the rule's alone."""
from __future__ import annotations

import functools
import re

import torch

from ..watch import exception_frame, inside, is_sparse

_COULD_NOT_RUN = re.compile(r"Could not run '(aten::[\w.]+)' with arguments from the '(Sparse\w*)' backend")
_WRONG_LAYOUT = re.compile(r"\w+ expected sparse [\w ]*layout but got (Sparse\w+)")
_NOT_FOR_SPARSE = re.compile(r"\w+ is not implemented for sparse tensors|is unsupported for Sparse tensors")
_ACCESSORS = {torch.Tensor.values, torch.Tensor.indices, torch.Tensor._values, torch.Tensor._indices,
              torch.Tensor.crow_indices, torch.Tensor.col_indices, torch.Tensor.ccol_indices,
              torch.Tensor.row_indices}
_CONSTRUCTORS = {torch.sparse_coo_tensor, torch.sparse_csr_tensor, torch.sparse_csc_tensor,
                 torch.sparse_compressed_tensor, torch.sparse_bsr_tensor, torch.sparse_bsc_tensor}
_AFTER_VALUES_EDIT = ("Sparse CSR tensors do not have strides",
                      "unsupported operation: more than one element of the written-to tensor")
_CLIP = ("nn" + "/" + "utils" + "/" + "clip_grad.py",)


def _tensors(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (b for b in a if isinstance(b, torch.Tensor))


def install(session):
    watch = session.watch

    def record(exc, code, message, suggestion="", evidence=()):
        session.record(code, message, frame=exception_frame(exc), when="line", raised=True,
                       evidence=tuple(evidence), suggestion=suggestion)
        return True

    def failed(func, args, kwargs, exc):
        if inside("optim") or inside("autograd"):
            return False  # the step pre-hook and the backward check see those
        text = str(exc)
        tensors = list(_tensors(args, kwargs))
        first = args[0] if args and isinstance(args[0], torch.Tensor) else None
        grads = [t for t in tensors if t in watch.grads]
        if inside(*_CLIP) and (_COULD_NOT_RUN.search(text)):
            params = [watch.grads[g] for g in grads]
            cause = next((e for p in params for e in watch.maker_evidence(p)), None)
            return record(exc, "SPL301", "gradient clipping over sparse gradients raises",
                          "clip the coalesced values of each sparse gradient instead",
                          () if cause is None else (cause,))
        if isinstance(exc, TypeError) and text.startswith("Cannot assign to a sparse tensor"):
            return record(exc, "SPL106", "item assignment on a sparse tensor raises",
                          "edit the coalesced values, or work on a dense copy")
        if isinstance(exc, ValueError) and text.startswith("max mode does not support sparse weights"):
            mod = next((m for m, at in watch.modules.items() if m.weight is (args[1] if len(args) > 1 else None)), None)
            from ..watch import evidence
            return record(exc, "SPL505", "`EmbeddingBag(mode='max', sparse=True)` raises at its first forward",
                          "use mode='sum' or 'mean' with sparse gradients",
                          evidence(watch.modules.get(mod) if mod is not None else None, "the bag is built here"))
        if func in _CONSTRUCTORS:
            for code, prefix in (("SPL601", "indices and values must have same nnz"),
                                 ("SPL602", "indices must be sparse_dim x nnz")):
                if text.startswith(prefix):
                    return record(exc, code, f"building the sparse tensor raises: {text.splitlines()[0]}")
            return False
        if first is not None and first in watch.views and text.startswith(_AFTER_VALUES_EDIT):
            return record(exc, "SPL101", "an in-place edit of the values of a sparse tensor in the graph raises",
                          "build a new sparse tensor from edited values instead")
        if text.startswith("a view of a leaf Variable that requires grad is being used in an in-place operation"):
            if first is not None and first in watch.views:
                return record(exc, "SPL102", "an in-place op on `.values()` of a sparse leaf that requires grad raises",
                              "edit the values under `torch.no_grad()`, or rebuild the sparse tensor")
            return False
        if text.startswith("a leaf Variable that requires grad is being used in an in-place operation"):
            if is_sparse(first):
                return record(exc, "SPL103", "an in-place op on a sparse leaf that requires grad raises",
                              "update it under `torch.no_grad()`")
            return False
        if text.startswith("values expected sparse tensor layout but got Strided") and first in watch.grads:
            param = watch.grads[first]
            if is_sparse(param):
                return record(exc, "SPL504", "the gradient of this sparse parameter is dense",
                              "use `torch.sparse.mm` with the sparse parameter, which keeps its gradient sparse",
                              watch.dense_grad_evidence(param))
            return False
        if text.startswith("add(sparse, dense) is not supported"):
            if first is not None and first in watch.grads:
                return record(exc, "SPL303", "adding a dense tensor into a sparse gradient raises",
                              "add only the touched rows, as a sparse tensor", watch.maker_evidence(watch.grads[first]))
            if is_sparse(first) and len(args) > 1 and isinstance(args[1], (int, float)) and not isinstance(args[1], bool):
                # a number has no sparse kernel either way round (`1.0 + s` raises too)
                return record(exc, "SPL503", "a number added to a sparse tensor raises",
                              "add it to the values, or to a dense copy")
            if is_sparse(first):
                return record(exc, "SPL501", "sparse + dense raises", "write it dense + sparse")
            return False
        could_not = _COULD_NOT_RUN.search(text)
        if could_not or _NOT_FOR_SPARSE.search(text):
            if grads:
                return record(exc, "SPL302", f"`{func.__name__}` is not implemented for a sparse gradient",
                              "work on the coalesced values of the gradient", watch.maker_evidence(watch.grads[grads[0]]))
            if func in _ACCESSORS and could_not and could_not.group(2) != "SparseCPU" and "Csr" in could_not.group(2):
                return record(exc, "SPL506", f"`.{func.__name__}()` does not exist for this compressed layout")
            if any(is_sparse(t) for t in tensors):
                return record(exc, "SPL503", f"`{func.__name__}` is not implemented for sparse tensors",
                              "apply it to the values, or to a dense copy")
            return False
        if _WRONG_LAYOUT.search(text) and any(t.layout not in (torch.strided, torch.sparse_coo) for t in tensors):
            return record(exc, "SPL506", f"`{func.__name__}` does not accept this compressed layout")
        return False

    watch.failed.append(failed)
    _install_fallback(session)
    return lambda: None


@functools.lru_cache(maxsize=None)
def _unique_messages() -> dict:
    """Rule code -> (exception type, message) for the rules that raise at the line with a
    message no other rule shares and that only sparse tensors give: an exception that starts
    with it can only be that rule. A message that names an op (`Could not run 'aten::clamp_'`)
    is the op's, whichever rule applies it to what; one that dense code gives too (`The size
    of tensor a`, a leaf in-place) tells nothing."""
    from ...rule import all_rules
    by_message: dict = {}
    for rule in all_rules():
        kind, sep, message = rule.error.partition(": ")
        sparse_only = any(w in message for w in ("sparse", "Sparse", "uncoalesced", "indices"))
        if sep and rule.when == "line" and kind.isidentifier() and sparse_only \
                and not message.startswith("Could not run"):
            by_message.setdefault((kind, message.rstrip(".")), []).append(rule.code)
    return {codes[0]: key for key, codes in by_message.items() if len(codes) == 1}


def preload() -> None:
    """The rules' messages, read once in a process that forks the runs."""
    _unique_messages()


def _install_fallback(session):
    table = _unique_messages()

    def fallback(func, args, kwargs, exc):
        if inside("optim") or inside("autograd"):
            return False
        text = str(exc)
        for code, (kind, message) in table.items():
            if type(exc).__name__ == kind and text.startswith(message):
                session.record(code, f"torch raises what {code} predicts: {text.splitlines()[0]}",
                               frame=exception_frame(exc), when="line", raised=True)
                return True
        return False

    session.watch.fallback.append(fallback)
