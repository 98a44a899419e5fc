"""SPL001: `.values()`/`.indices()` of an uncoalesced COO tensor raises; the finding names
the line that built the tensor, which torch's message does not."""
from __future__ import annotations

import torch

from ..watch import exception_frame

_ACCESSORS = (torch.Tensor.values, torch.Tensor.indices)


def install(session):
    watch = session.watch

    def failed(func, args, kwargs, exc):
        if func not in _ACCESSORS or not isinstance(exc, RuntimeError):
            return False
        t = args[0] if args else None
        if not isinstance(t, torch.Tensor) or t.layout is not torch.sparse_coo or t.is_coalesced():
            return False
        name = func.__name__
        evidence = watch.built_evidence(t, "the uncoalesced sparse tensor is built here")
        session.record("SPL001", f"`.{name}()` on an uncoalesced sparse COO tensor raises",
                       frame=exception_frame(exc), when="line", evidence=evidence, raised=True,
                       suggestion=f"call `.coalesce()` before `.{name}()`")
        return True

    watch.failed.append(failed)
    return lambda: watch.failed.remove(failed)
