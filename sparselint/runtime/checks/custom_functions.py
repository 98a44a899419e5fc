"""Custom `autograd.Function`s with a sparse input that requires grad. `Function.apply` does
not pass through the torch function mode, so it is wrapped; hooks on the node it made see
what its backward returned, all at the `apply` call's line with the backward's return as
evidence:

- SPL204: no gradient for the sparse input: its values never train, and torch says nothing;
- SPL206: a gradient whose shape the sparse input cannot take: torch raises in backward
  ("returned an invalid gradient at index N"), naming the node, never the line; a pre-hook
  keeps the custom nodes backward reached, and the failure is matched by node name and
  input index;
- SPL207: for an uncoalesced input with repeated indices, a sparse gradient on those same
  indices (the same tensor, or equal columns): each copy of a repeated entry carries the
  position's full gradient, summed again when the gradient reaches the values.

What it does not see: a custom Function whose sparse input is coalesced or has no repeated
index (SPL207 only misbehaves then); a gradient with repeated indices other than the
input's own (judged only when they are the input's)."""
from __future__ import annotations

import collections
import dis
import re
import weakref

import torch
from torch.autograd.function import Function

from ..watch import evidence, here, is_sparse
from .backward import _BACKWARD

_INVALID = re.compile(r"Function (\w+) returned an invalid gradient at index (\d+) - got (\[[^\]]*\]) "
                      r"but expected shape compatible with (\[[^\]]*\])")


def install(session):
    original = Function.__dict__["apply"]
    # (node name, place of `apply`, sparse input slots, backward's return place) of the custom
    # nodes backward reached last (bounded: a training loop adds one per step)
    reached = collections.deque(maxlen=8)

    def apply(cls, *args, **kwargs):
        out = original.__func__(cls, *args, **kwargs)
        try:
            _watch(session, cls, args, out, reached)
        except Exception:  # noqa: BLE001  (a check's bug never changes the program)
            pass
        return out

    def failed(func, args, kwargs, exc):
        if func not in _BACKWARD:
            return False
        m = _INVALID.search(str(exc))
        if m is None:
            return False
        name, index = m.group(1), int(m.group(2))
        for node_name, at, slots, returns in reversed(reached):
            if node_name == name and index in slots:
                session.record("SPL206", f"`{name[:-len('Backward')] or name}.backward` returns for sparse input "
                               f"{index} a gradient of shape {m.group(3)}; the input is {m.group(4)}",
                               when="backward", raised=True, at=at,
                               evidence=evidence(returns, "the backward returns the gradients here"),
                               suggestion="return, at the sparse input's position, a gradient of its shape")
                return True
        return False

    Function.apply = classmethod(apply)
    session.watch.failed.insert(0, failed)
    return lambda: setattr(Function, "apply", original)


def _return_place(cls):
    """(path, line, column) of the last `return` of the Function's backward."""
    code = getattr(getattr(cls, "backward", None), "__code__", None)
    if code is None:
        return None
    lines = [i.positions.lineno for i in dis.get_instructions(code)
             if i.opname in ("RETURN_VALUE", "RETURN_CONST") and i.positions and i.positions.lineno]
    return (code.co_filename, max(lines), 1) if lines else None


def _duplicated(t) -> bool:
    return t.layout is torch.sparse_coo and not t.is_coalesced() and t.coalesce()._nnz() < t._nnz()


def _same_indices(g, t) -> bool:
    gi, ti = g._indices(), t._indices()
    if gi.shape != ti.shape:
        return False
    return gi.data_ptr() == ti.data_ptr() or torch.equal(gi, ti)


def _watch(session, cls, args, out, reached) -> None:
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    slots = {i: t for i, t in enumerate(tensors) if is_sparse(t) and t.requires_grad}
    if not slots:
        return
    first = out[0] if isinstance(out, (tuple, list)) and out else out
    node = getattr(first, "grad_fn", None)
    if node is None:
        return
    at = here()
    if at is None:
        return
    returns = _return_place(cls)
    info = (node.name(), at, frozenset(slots), returns)
    node.register_prehook(lambda grad_outputs: reached.append(info))
    # the inputs are judged when backward runs (the mode is off then); weakly, as the node
    # must not keep them alive
    inputs = {i: weakref.ref(t) for i, t in slots.items()}

    def post(grad_inputs, grad_outputs):
        if any(i < len(grad_inputs) and grad_inputs[i] is None for i in slots):
            session.record("SPL204", f"`{cls.__name__}.backward` returns no gradient for a sparse input that "
                           "requires grad: its values never train", when="silent", at=at,
                           suggestion="return the gradient of the sparse input's values (a sparse tensor with "
                                      "its indices)")
        for i, ref in inputs.items():
            t = ref()
            g = grad_inputs[i] if i < len(grad_inputs) else None
            if t is None or not isinstance(g, torch.Tensor) or g.layout is not torch.sparse_coo:
                continue
            with torch.no_grad():
                shared = _duplicated(t) and _same_indices(g, t) and _duplicated(g)
            if shared:
                session.record("SPL207", f"`{cls.__name__}.backward` builds the gradient of an uncoalesced sparse "
                               "input on its repeated indices: each copy of a repeated entry gets the whole "
                               "gradient of its position, counted again when the copies are summed",
                               when="silent", at=at,
                               evidence=evidence(returns, "the backward returns the gradient on the input's indices"),
                               suggestion="coalesce the input in backward and build the gradient on the "
                                          "coalesced indices")
    node.register_hook(post)

