"""Hazards that raise in `backward()` (SPL101, SPL104, SPL105, SPL107, SPL108, SPL203, SPL304,
SPL502, SPL507, SPL508). Torch's message names an autograd node, never the line; the run
remembers, on each node made by a call with a sparse tensor in or out, the user line of that
call (in the node's `metadata`), and a pre-hook keeps the nodes backward reaches in order:
the last is the one that failed, the one before it sent it the gradient. In-place edits of
sparse tensors and of their `.values()` are kept with their line, for the "modified by an
inplace operation" family."""
from __future__ import annotations

import collections

import torch

from ..session import _is_ours_or_torch
from ..watch import evidence, here, is_sparse
from .raising import _COULD_NOT_RUN, _NOT_FOR_SPARSE

_KEY = "sparselint"
_BACKWARD = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)
_INPLACE_DUNDERS = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__idiv__", "__setitem__", "__ipow__"}
_COMPRESSED = (torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc)


# what backward says after an in-place edit of `.values()` of a sparse tensor in the graph
_AFTER_VALUES_EDIT = ("Could not run 'aten::new_empty_strided'", "Sparse CSR tensors do not have strides",
                      "unsupported operation: more than one element of the written-to tensor")


def _inplace(func) -> bool:
    name = getattr(func, "__name__", "")
    return (name.endswith("_") and not name.endswith("__")) or name in _INPLACE_DUNDERS


def install(session):
    watch = session.watch
    # bounded, as a training loop adds to them at every step: only the latest ones can explain
    # a failure
    trail = collections.deque(maxlen=8)   # (place, compressed leaf in) of the sparse nodes backward reached
    edits = collections.deque(maxlen=16)  # (place, code) of in-place edits of sparse data
    cuts = collections.deque(maxlen=8)    # places of `._values()` of a sparse tensor that requires grad

    def sparse_op(func, args, kwargs, result):
        if _inplace(func) and is_sparse(args[0]) and func.__name__ != "_coalesced_":
            edits.append((here(), "SPL105" if args[0].grad_fn is not None else "SPL107"))
        if func is torch.Tensor._values and args[0].requires_grad:
            cuts.append(here())
        node = getattr(result, "grad_fn", None) if isinstance(result, torch.Tensor) else None
        if node is None or _KEY in node.metadata:
            return
        leaves = [a for a in args if isinstance(a, torch.Tensor) and is_sparse(a) and a.is_leaf and a.requires_grad]
        info = (here(), any(a.layout in _COMPRESSED for a in leaves))
        node.metadata[_KEY] = info
        node.register_prehook(lambda grad_outputs, info=info: trail.append(info))
        if leaves:
            _watch_leaf_grads(watch, node, leaves, info[0])

    def view_op(func, args, kwargs, result):
        ref, accessor = watch.views[args[0]]
        owner = ref()
        if owner is None:
            return
        if func is torch.Tensor.__getitem__ and isinstance(result, torch.Tensor):
            watch.views[result] = (ref, accessor)
        elif _inplace(func):
            edits.append((here(), "SPL104" if accessor == "_values" else "SPL107"))
            watch.value_edits.append((here(), accessor))

    def start(func, args, kwargs):
        trail.clear()

    def failed(func, args, kwargs, exc):
        if func not in _BACKWARD:
            return False
        inner = _inner_user_frame(exc)
        if inner is not None:
            found = _classify_inner(exc, inner)
            if found is None:
                return False
            code, message = found
            session.record(code, message, frame=inner, when="backward", raised=True)
            return True
        found = _classify(exc, trail, edits, cuts, watch)
        if found is None:
            return False
        code, message, links = found
        session.record(code, message, when="backward", raised=True, evidence=links)
        return True

    watch.sparse_op.append(sparse_op)
    watch.view_inplace.append(view_op)
    watch.on_before(_BACKWARD, start)
    watch.failed.insert(0, failed)
    return lambda: None


def _inner_user_frame(exc):
    """The user's code that autograd ran and that raised (a hook, a custom backward): torch
    turns the mode off during `backward()`, so its calls were not seen one by one."""
    tb, inner = exc.__traceback__, None
    while tb is not None:
        if not _is_ours_or_torch(tb.tb_frame.f_code.co_filename):
            inner = tb.tb_frame
        tb = tb.tb_next
    return inner


def _classify_inner(exc, frame):
    text = str(exc)
    if text.startswith(("Cannot get values on an uncoalesced tensor", "Cannot get indices on an uncoalesced tensor")):
        return "SPL001", f"`.{text.split()[2]}()` on an uncoalesced sparse tensor raises (in code autograd runs)"
    custom_backward = frame.f_code.co_name == "backward" and "ctx" in frame.f_locals
    if not custom_backward:
        if _COULD_NOT_RUN.search(text):
            return "SPL304", "a gradient hook applies an op that sparse gradients do not support"
        return None
    # a custom `autograd.Function`'s backward is the user's code at the line, run by autograd
    if text.startswith("add(sparse, dense) is not supported"):
        return "SPL501", "sparse + dense raises (in a custom backward)"
    if _COULD_NOT_RUN.search(text) or _NOT_FOR_SPARSE.search(text):
        return "SPL503", "an op not implemented for sparse tensors (in a custom backward)"
    return None


def _watch_leaf_grads(watch, node, leaves, at):
    """SPL504's root cause: the call whose backward hands a sparse leaf a dense gradient."""
    slots = []
    for i, (nxt, _) in enumerate(node.next_functions):
        var = getattr(nxt, "variable", None)
        if var is not None and any(var is l for l in leaves):
            slots.append((i, var))
    if not slots:
        return

    def post(grad_inputs, grad_outputs):
        for i, var in slots:
            g = grad_inputs[i] if i < len(grad_inputs) else None
            if isinstance(g, torch.Tensor) and g.layout is torch.strided and var not in watch.dense_grad:
                watch.dense_grad[var] = at
    node.register_hook(post)


def _trail_evidence(trail) -> tuple:
    out = ()
    if trail:
        out += evidence(trail[-1][0], "the sparse op whose backward fails was called here")
    if len(trail) > 1 and trail[-2][0] != trail[-1][0]:
        out += evidence(trail[-2][0], "this op's backward sends it the gradient it cannot take")
    return out


def _classify(exc, trail, edits, cuts, watch):
    text = str(exc)
    if text.startswith("one of the variables needed for gradient computation has been modified by an inplace"):
        if not edits:
            return None
        at, code = edits[-1]
        return code, "backward fails: a tensor it needs was edited in place", evidence(at, "the in-place edit")
    if text.startswith(_AFTER_VALUES_EDIT):
        value_edits = [e for e in watch.value_edits if e[1] == "values"]
        if value_edits:
            return "SPL101", "backward fails after an in-place edit of sparse values", \
                evidence(value_edits[-1][0], "the in-place edit of `.values()`")
    if text.startswith("embedding_backward: scale_grad_by_freq not supported with sparse gradients"):
        links = tuple(e for m, at in watch.modules.items() if getattr(m, "scale_grad_by_freq", False)
                      for e in evidence(at, "the embedding is built here"))
        return "SPL508", "`scale_grad_by_freq=True` with sparse gradients fails in backward", links
    if text.startswith("element 0 of tensors does not require grad") and cuts:
        return "SPL203", "backward finds no graph: `._values()` cut the gradient", \
            tuple(e for at in list(cuts)[-3:] for e in evidence(at, "`._values()` gives a tensor outside the graph"))
    if not trail or not isinstance(exc, (RuntimeError, NotImplementedError)):
        return None
    if text.startswith("Trying to backward through the graph a second time"):
        return "SPL108", "backward reaches a sparse graph built before the loop, freed by the last backward", \
            _trail_evidence(trail)
    if trail[-1][1]:
        return "SPL507", "backward of this op is not implemented for a compressed leaf", _trail_evidence(trail)
    return "SPL502", "backward of an op on a sparse tensor is not implemented", _trail_evidence(trail)
