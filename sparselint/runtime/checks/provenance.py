"""What the other checks need to name a root cause: which `.grad` reads are gradients of which
parameter, which dense tensors are `.values()` views of which sparse tensor, and which
module or call gives a parameter sparse gradients (`nn.Embedding(sparse=True)`, built where)."""
from __future__ import annotations

import weakref

import torch
import torch.nn.functional as F

from ..watch import construction_place, here, is_sparse

_GRAD = torch.Tensor.grad.__get__
_VIEWS = {torch.Tensor.values: "values", torch.Tensor._values: "_values"}


def install(session):
    watch = session.watch

    def grad_read(func, args, kwargs, result):
        owner = args[0]
        if isinstance(result, torch.Tensor) and (is_sparse(result) or is_sparse(owner)):
            watch.grads[result] = owner

    def view(func, args, kwargs, result):
        if isinstance(result, torch.Tensor) and is_sparse(args[0]):
            watch.views[result] = (weakref.ref(args[0]), _VIEWS[func])
            watch.has_views = True

    def functional(func, args, kwargs, result):
        position = 6 if func is F.embedding else 7
        sparse = kwargs.get("sparse", args[position] if len(args) > position else False)
        weight = kwargs.get("weight", args[1] if len(args) > 1 else None)
        if sparse is True and isinstance(weight, torch.Tensor) and weight not in watch.grad_maker:
            at = here()
            if at is not None:
                watch.grad_maker[weight] = (at, f"`F.{func.__name__}(..., sparse=True)` gives this weight sparse gradients")

    watch.on_after([_GRAD], grad_read)
    watch.on_after(list(_VIEWS), view)
    watch.on_after([F.embedding, F.embedding_bag], functional)

    undo = []
    for cls in (torch.nn.Embedding, torch.nn.EmbeddingBag):
        undo.append(_wrap_init(cls, watch))

    def uninstall():
        for u in undo:
            u()
    return uninstall


def _wrap_init(cls, watch):
    original = cls.__dict__["__init__"]

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            if getattr(self, "sparse", False) and isinstance(getattr(self, "weight", None), torch.Tensor):
                at = construction_place(self)
                if at is not None:
                    watch.grad_maker[self.weight] = (at, f"`nn.{cls.__name__}(..., sparse=True)` built here gives "
                                                         "this weight sparse gradients")
                    watch.modules[self] = at
        except Exception:  # noqa: BLE001  (never let the check change construction)
            pass

    __init__.__wrapped__ = original
    cls.__init__ = __init__
    return lambda: setattr(cls, "__init__", original)
