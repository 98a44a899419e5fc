"""Reading gradients:

- SPL201: `.grad` of a sparse non-leaf is None (torch keeps no gradient there unless
  `retain_grad()` was called); the run sees the read that returns None.
- SPL202: `.to_sparse()` of the gradient of a sparse tensor's values drops its zero entries,
  so its values no longer line up with the sparse tensor's indices; the run sees the
  conversion lose entries.
"""
from __future__ import annotations

import torch
from torch.utils.weak import WeakIdKeyDictionary

from .silent import _CONSTRUCTORS
from ..watch import is_sparse

_GRAD = torch.Tensor.grad.__get__


def install(session):
    value_leaves = WeakIdKeyDictionary()  # values given to a sparse constructor, that require grad
    value_grads = WeakIdKeyDictionary()   # a `.grad` read of those

    def grad_read(func, args, kwargs, result):
        t = args[0]
        if result is None and is_sparse(t) and t.grad_fn is not None and not t.retains_grad:
            session.record("SPL201", "`.grad` of a sparse non-leaf tensor is None",
                           when="line", suggestion="call `.retain_grad()` on it before backward, or read the "
                                                   "gradient of the leaf it was built from")
        if isinstance(result, torch.Tensor) and value_leaves and t in value_leaves:
            value_grads[result] = True

    def built(func, args, kwargs, result):
        position = _CONSTRUCTORS[func]
        values = kwargs.get("values", args[position] if len(args) > position else None)
        if isinstance(values, torch.Tensor) and values.requires_grad and values.is_leaf:
            value_leaves[values] = True

    def to_sparse(func, args, kwargs, result):
        g = args[0]
        if value_grads and isinstance(g, torch.Tensor) and g in value_grads and is_sparse(result) \
                and result.layout is torch.sparse_coo and result._nnz() < g.numel():
            session.record("SPL202", "`.to_sparse()` of the values' gradient drops its zero entries: its values "
                           "no longer line up with the sparse tensor's indices", when="line",
                           suggestion="use the gradient of the values as it is: it is already aligned with the "
                                      "indices")

    watch = session.watch
    watch.on_after([_GRAD], grad_read)
    watch.on_after(list(_CONSTRUCTORS), built)
    watch.on_after([torch.Tensor.to_sparse], to_sparse)
    return lambda: None
