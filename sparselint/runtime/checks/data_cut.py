"""SPL205: a sparse tensor built from, or an op on a sparse tensor run through, the `.data`
of a tensor that requires grad, while the gradient is on: `.data` is outside the graph, so
the values it carries never train. Proven when the next `backward()` leaves the trainable
tensor behind that `.data` (the leaves behind it, for a non-leaf) without a gradient: it
reached the loss no other way.

`.data` read with the gradient on is followed into the ops computed from it alone (their
results do not require grad), e.g. `values().data * 0.5`. A `.data` read under
`torch.no_grad()` (a manual update, a snapshot) is not followed, and a use after which a
backward gives the tensor a gradient anyway (a straight-through estimator) is not one.

What it does not see: a use whose next backward is of another graph that leaves the tensor
without a gradient too (nothing tells the two apart); `torch.autograd.grad`, which fills no
`.grad`; a use after the program's last backward."""
from __future__ import annotations

import weakref

import torch
from torch.utils.weak import WeakIdKeyDictionary

from ..watch import evidence, here, is_sparse
from .silent import _CONSTRUCTORS, _DATA

_BACKWARD_FILLS = (torch.Tensor.backward, torch.autograd.backward)
_MAX_NODES = 256  # a bounded walk to the leaves behind a non-leaf


def _leaves(t) -> list:
    """Weak references to the leaves that require grad behind `t` (itself, for a leaf)."""
    if t.grad_fn is None:
        return [weakref.ref(t)] if t.requires_grad else []
    out, seen, todo = [], set(), [t.grad_fn]
    while todo and len(seen) < _MAX_NODES:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if isinstance(var, torch.Tensor):
            out.append(weakref.ref(var))
        todo.extend(n for n, _ in node.next_functions)
    return [] if todo else out  # an unfinished walk proves nothing


def install(session):
    watch = session.watch
    cut = WeakIdKeyDictionary()  # tensor computed from `.data` alone -> (leaves, place of the read)
    pending: dict = {}           # place of the use -> (leaves, place of the read)

    def data_read(func, args, kwargs, result):
        source = args[0]
        if not (isinstance(result, torch.Tensor) and source.requires_grad and torch.is_grad_enabled()):
            return
        leaves = _leaves(source)
        if leaves:
            cut[result] = (leaves, here())
            if watch.seen_sparse:
                watch.follow = True  # the values of a sparse tensor may be computed from it

    def cut_in(values):
        return [cut[a] for a in values if isinstance(a, torch.Tensor) and a in cut]

    def use(found, what):
        at = here()
        if at is not None and torch.is_grad_enabled():
            pending.setdefault(at, found[0] + (what,))

    def built(func, args, kwargs, result):
        position = _CONSTRUCTORS[func]
        values = kwargs.get("values", args[position] if len(args) > position else None)
        found = cut_in([values]) if isinstance(values, torch.Tensor) and not values.requires_grad else []
        if found and is_sparse(result):
            use(found, "a sparse tensor is built from `.data` of values that require grad")

    def sparse_op(func, args, kwargs, result):
        if cut and func is not _DATA and func not in _CONSTRUCTORS:
            found = cut_in(a for a in args if is_sparse(a))
            if found:
                use(found, "a sparse op runs on `.data` of a sparse tensor that requires grad")

    def carried(func, args, kwargs, result):
        # a dense tensor computed from a cut tensor, with nothing that requires grad, is cut too
        # (a sparse one is a use, judged at its own line)
        if cut and isinstance(result, torch.Tensor) and result.layout is torch.strided and not result.requires_grad \
                and func is not _DATA:
            found = cut_in(args)
            if found and result not in cut:
                cut[result] = found[0]

    def after_backward(func, args, kwargs, result):
        judged = list(pending.items())
        pending.clear()
        for at, (leaves, read_at, what) in judged:
            alive = [r() for r in leaves]
            alive = [t for t in alive if t is not None]
            if alive and all(t.grad is None for t in alive):
                session.record("SPL205", f"{what}: `.data` is outside the graph, and the next backward gave "
                               "the tensor behind it no gradient",
                               when="silent", at=at,
                               evidence=evidence(read_at, "`.data` is read here") if read_at[:2] != at[:2] else (),
                               suggestion="use the tensor itself, not its `.data`")

    watch.on_after([_DATA], data_read)
    watch.on_after(list(_CONSTRUCTORS), built)
    watch.sparse_op.append(sparse_op)
    watch.any_op.append(carried)
    watch.on_after(_BACKWARD_FILLS, after_backward)
    return lambda: None
