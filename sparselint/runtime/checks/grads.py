"""SPL201: `.grad` of a sparse non-leaf is None (torch keeps no gradient there unless
`retain_grad()` was called); the run sees the read that returns None."""
from __future__ import annotations

import torch

from ..watch import is_sparse

_GRAD = torch.Tensor.grad.__get__


def install(session):
    def grad_read(func, args, kwargs, result):
        t = args[0]
        if result is None and is_sparse(t) and t.grad_fn is not None and not t.retains_grad:
            session.record("SPL201", "`.grad` of a sparse non-leaf tensor is None",
                           when="line", suggestion="call `.retain_grad()` on it before backward, or read the "
                                                   "gradient of the leaf it was built from")

    session.watch.on_after([_GRAD], grad_read)
    return lambda: None
