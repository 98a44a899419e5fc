"""SPL204: a custom `autograd.Function` whose backward returns no gradient for a sparse input
that requires grad: its values never train, and torch says nothing. `Function.apply` does
not pass through the torch function mode, so it is wrapped; a post-hook on the node it made
sees what its backward returned."""
from __future__ import annotations

import torch
from torch.autograd.function import Function

from ..watch import here, is_sparse


def install(session):
    original = Function.__dict__["apply"]

    def apply(cls, *args, **kwargs):
        out = original.__func__(cls, *args, **kwargs)
        try:
            _watch(session, cls, args, out)
        except Exception:  # noqa: BLE001  (a check's bug never changes the program)
            pass
        return out

    Function.apply = classmethod(apply)
    return lambda: setattr(Function, "apply", original)


def _watch(session, cls, args, out) -> None:
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    slots = [i for i, t in enumerate(tensors) if is_sparse(t) and t.requires_grad]
    if not slots:
        return
    first = out[0] if isinstance(out, (tuple, list)) and out else out
    node = getattr(first, "grad_fn", None)
    if node is None:
        return
    at = here()

    def post(grad_inputs, grad_outputs):
        if at is not None and any(i < len(grad_inputs) and grad_inputs[i] is None for i in slots):
            session.record("SPL204", f"`{cls.__name__}.backward` returns no gradient for a sparse input that "
                           "requires grad: its values never train", when="silent", at=at,
                           suggestion="return the gradient of the sparse input's values (a sparse tensor with "
                                      "its indices)")
    node.register_hook(post)
