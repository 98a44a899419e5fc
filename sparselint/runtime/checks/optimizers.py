"""SPL401-SPL404, SPL504 at `optimizer.step()`: seen in torch's global step pre-hook, before
torch raises, with the optimizer's construction and what gives its parameters sparse
gradients as evidence; SPL404 also when the construction itself raises."""
from __future__ import annotations

import weakref

import torch
from torch.optim.optimizer import Optimizer, register_optimizer_step_pre_hook

from ...analysis.torchops.torchapi import (FUSED_REJECTS_SPARSE_GRADS, REJECTS_SPARSE_GRADS,
                                            SPARSE_PARAMETER_ERRORS, WEIGHT_DECAY_WITH_SPARSE)
from ..session import user_frame
from ..watch import construction_place, evidence, is_sparse


def _torch_class(opt) -> str:
    """The torch optimizer whose `step` runs (a user subclass steps as its torch base)."""
    for cls in type(opt).__mro__:
        if cls.__module__.startswith("torch.optim") and cls is not Optimizer:
            return cls.__name__
    return ""


def install(session):
    built = weakref.WeakKeyDictionary()
    original = Optimizer.__dict__["__init__"]

    def __init__(self, params, *args, **kwargs):
        original(self, params, *args, **kwargs)
        try:
            at = construction_place(self)
            if at is not None:
                built[self] = at
        except Exception:  # noqa: BLE001
            pass

    Optimizer.__init__ = __init__
    undo = [lambda: setattr(Optimizer, "__init__", original)]
    for name, (when, _) in SPARSE_PARAMETER_ERRORS.items():
        if when == "construct":
            undo.append(_wrap_construction(getattr(torch.optim, name), session))

    def pre_step(opt, args, kwargs):
        try:
            _check_step(session, opt, built.get(opt))
        except Exception:  # noqa: BLE001  (a check's bug never changes the program)
            pass

    handle = register_optimizer_step_pre_hook(pre_step)

    def uninstall():
        handle.remove()
        for u in reversed(undo):
            u()
    return uninstall


def _wrap_construction(cls, session):
    """`SparseAdam([sparse_p])` and `Adagrad([sparse_p])` raise while they are built (SPL404)."""
    original = cls.__dict__["__init__"]

    def __init__(self, params, *args, **kwargs):
        if not isinstance(params, torch.Tensor):
            params = list(params)  # seen before `__init__` consumes a generator of them
        try:
            original(self, params, *args, **kwargs)
        except (ValueError, RuntimeError) as exc:
            if any(is_sparse(p) for p in _flat(params)) and not session.watch.already_recorded(exc):
                session.record("SPL404", f"`{cls.__name__}` cannot take a sparse parameter tensor",
                               frame=user_frame(), when="construct", raised=True,
                               suggestion="keep the values as a dense `nn.Parameter` and build the sparse tensor "
                                          "from them in `forward`")
                session.watch.mark_recorded(exc)
            raise

    cls.__init__ = __init__
    return lambda: setattr(cls, "__init__", original)


def _flat(params):
    if isinstance(params, torch.Tensor):
        return [params]
    out = []
    for p in params or ():
        if isinstance(p, dict):
            ps = p.get("params", ())
            out.extend([ps] if isinstance(ps, torch.Tensor) else list(ps))
        else:
            out.append(p)
    return out


def _check_step(session, opt, at) -> None:
    watch = session.watch
    name = _torch_class(opt)
    if not name:
        return
    made = evidence(at, f"the `{name}` optimizer is built here")
    fused = bool(opt.defaults.get("fused"))
    for group in opt.param_groups:
        for p in group["params"]:
            g = p.grad
            if g is None:
                continue
            found = _hazard(name, fused, group, p, g)
            if found is None:
                continue
            code, message, suggestion = found
            cause = watch.maker_evidence(p) + watch.dense_grad_evidence(p)
            session.record(code, message, when="step", evidence=made + cause, raised=True, suggestion=suggestion)
            return  # torch raises at the first bad parameter


def _hazard(name, fused, group, p, g):
    sparse_grad, sparse_param = is_sparse(g), is_sparse(p)
    if sparse_param and not sparse_grad and name != "SparseAdam":
        return ("SPL504", f"`{name}.step()` adds a dense gradient into a sparse parameter: "
                "`add(sparse, dense)` is not supported",
                "use `torch.sparse.mm` with the sparse parameter, which keeps its gradient sparse")
    if not sparse_grad:
        if name == "SparseAdam":
            return ("SPL403", "`SparseAdam.step()` gets a dense gradient and raises",
                    "give SparseAdam only the parameters with sparse gradients, and Adam the rest")
        return None
    if name in REJECTS_SPARSE_GRADS or (fused and name in FUSED_REJECTS_SPARSE_GRADS):
        code = "SPL404" if sparse_param else "SPL401"
        return (code, f"`{name}.step()` rejects sparse gradients",
                "use `SparseAdam` for the parameters with sparse gradients (or SGD / Adagrad)")
    decay = group.get("weight_decay", 0)
    if name in WEIGHT_DECAY_WITH_SPARSE and isinstance(decay, (int, float)) and decay > 0 and not sparse_param:
        return ("SPL402", f"`{name}.step()` with `weight_decay={decay}` over a parameter with sparse gradients raises",
                "put the sparse parameters in a param group with `weight_decay=0`")
    return None
