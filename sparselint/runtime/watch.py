"""The one torch function mode a Session pushes, and the table the checks fill in.

Every torch call of the program passes through `__torch_function__`; until the program
has a sparse tensor, a call pays a dict lookup, a `try` and a layout test of its result. Checks register, per torch function object, what to look at
before and after the call, and what to make of an exception coming out of any call. Torch
turns the mode off while `__torch_function__` runs, so torch calls a check makes do not
come back here. A check never changes a result nor swallows an exception: handlers run
inside `_quietly`, and an exception from the op is re-raised as the same object."""
from __future__ import annotations

import collections
import os
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils.weak import WeakIdKeyDictionary

from ..diagnostics import Evidence
from .session import _is_ours_or_torch, _position, user_frame


class Watch:
    def __init__(self, session):
        self.session = session
        self.before: dict = {}
        self.after: dict = {}
        self.failed: list = []      # handler(func, args, kwargs, exc) -> True when it recorded
        self.fallback: list = []    # tried after every `failed` handler declined
        # handler(func, args, kwargs, result) for each call with a sparse tensor in or out
        self.sparse_op: list = []
        # handler(func, args, kwargs, result) for every call, once a check asks for them (`any_op`
        # is empty for programs that never made what those checks follow)
        self.any_op: list = []
        self.any_before: list = []
        # handler(func, args, kwargs, result) for calls on a tracked `.values()` view
        self.view_inplace: list = []
        self.built = WeakIdKeyDictionary()  # sparse tensor -> (path, line, column) of the user line that made it
        # `.values()`/`._values()` result -> (weak reference to its sparse owner, accessor name)
        self.views = WeakIdKeyDictionary()
        self.grads = WeakIdKeyDictionary()  # a `.grad` read (sparse, or of a sparse parameter) -> its parameter
        self.grad_maker = WeakIdKeyDictionary()  # parameter -> (place, what gives it sparse gradients)
        self.dense_grad = WeakIdKeyDictionary()  # sparse leaf -> where an op gave it a dense gradient
        # (place, accessor) of the latest in-place edits of `.values()` (bounded: a training loop
        # edits every step)
        self.value_edits = collections.deque(maxlen=16)
        self.modules = WeakIdKeyDictionary()  # sparse-gradient embedding module -> where it was built
        self.follow = False  # set once something `any_op` handlers follow exists
        self.seen_sparse = False  # set at the first sparse tensor a call gives
        self.has_views = False  # set at the first `.values()` view kept in `views`
        self._raised: list = []

    def on_before(self, funcs, handler) -> None:
        for f in funcs:
            self.before.setdefault(f, []).append(handler)

    def on_after(self, funcs, handler) -> None:
        for f in funcs:
            self.after.setdefault(f, []).append(handler)

    def already_recorded(self, exc) -> bool:
        """Whether this exception object was recorded (it may cross several watched calls)."""
        return any(e is exc for e in self._raised)

    def mark_recorded(self, exc) -> None:
        self._raised = (self._raised + [exc])[-16:]

    def built_evidence(self, tensor, text: str) -> tuple:
        return evidence(self.built.get(tensor) if isinstance(tensor, torch.Tensor) else None, text)

    def dense_grad_evidence(self, param) -> tuple:
        return evidence(self.dense_grad.get(param) if isinstance(param, torch.Tensor) else None,
                        "this op's backward gives the sparse parameter a dense gradient")

    def maker_evidence(self, param) -> tuple:
        made = self.grad_maker.get(param) if isinstance(param, torch.Tensor) else None
        return () if made is None else evidence(*made)


def here():
    """(path, line, column) of the user's line running now, or None."""
    frame = user_frame()
    return None if frame is None else place(frame)


def construction_place(obj):
    """Where the user built `obj`: the first user frame that is not one of its own
    `__init__` methods (a subclass defined by the user builds through them)."""
    frame = sys._getframe(1)
    while frame is not None and (_is_ours_or_torch(frame.f_code.co_filename)
                                 or frame.f_locals.get("self") is obj):
        frame = frame.f_back
    return None if frame is None else place(frame)


def evidence(at, text: str) -> tuple:
    """The one link of evidence for a (path, line, column) the run kept, or none."""
    return () if at is None else (Evidence(at[1], at[2], text, path=at[0]),)


def place(frame) -> tuple[str, int, int]:
    path, line, column, _, _ = _position(frame)
    return path, line, column


def exception_frame(exc):
    """The innermost user frame the exception passed through (a hook or a custom backward
    that ran inside torch), else the user's frame running now."""
    tb, inner = exc.__traceback__, None
    while tb is not None:
        if not _is_ours_or_torch(tb.tb_frame.f_code.co_filename):
            inner = tb.tb_frame
        tb = tb.tb_next
    return inner or user_frame()


class _Mode(TorchFunctionMode):
    def __init__(self, watch: Watch):
        super().__init__()
        self.watch = watch

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        w = self.watch
        if w.follow:
            for h in w.any_before:
                _quietly(h, func, args, kwargs)
        handlers = w.before.get(func)
        if handlers:
            for h in handlers:
                _quietly(h, func, args, kwargs)
        try:
            result = func(*args, **kwargs)
        except Exception as exc:
            if w.failed and not w.already_recorded(exc):
                for h in w.failed + w.fallback:
                    if _quietly(h, func, args, kwargs, exc):
                        w.mark_recorded(exc)
                        break
            raise
        sparse_out = isinstance(result, torch.Tensor) and result.layout is not _STRIDED
        if sparse_out:
            w.seen_sparse = True
            _made_sparse(w, func, args, kwargs, result)
        # until the program has a sparse tensor (every one it makes or reads comes out of a
        # call seen here), no argument can be sparse: dense programs skip the scan
        if w.seen_sparse:
            if sparse_out or _sparse_in(args) or (kwargs and _sparse_in(kwargs.values())):
                for h in w.sparse_op:
                    _quietly(h, func, args, kwargs, result)
            if w.follow:
                for h in w.any_op:
                    _quietly(h, func, args, kwargs, result)
            if w.has_views and args and isinstance(args[0], torch.Tensor) and args[0] in w.views:
                for h in w.view_inplace:
                    _quietly(h, func, args, kwargs, result)
        handlers = w.after.get(func)
        if handlers:
            for h in handlers:
                _quietly(h, func, args, kwargs, result)
        return result


_STRIDED = torch.strided


def _sparse_in(args) -> bool:
    for a in args:
        if isinstance(a, torch.Tensor):
            if a.layout is not _STRIDED:
                return True
        elif a.__class__ is list or a.__class__ is tuple:
            for b in a:
                if isinstance(b, torch.Tensor) and b.layout is not _STRIDED:
                    return True
    return False


def is_sparse(t) -> bool:
    return isinstance(t, torch.Tensor) and t.layout is not torch.strided


def inside(*parts: str) -> bool:
    """Whether the call was made by torch's own files named by `parts` (e.g. "optim") on the
    user's behalf: a frame of theirs runs between the call and the user's innermost frame
    (a closure the user gave `step()` is the user's again). An exception there belongs to
    the check that watches that torch function."""
    frame = sys._getframe(1)
    needles = tuple(os.sep + "torch" + os.sep + p for p in parts)
    while frame is not None:
        name = frame.f_code.co_filename
        if any(n in name for n in needles):
            return True
        if not _is_ours_or_torch(name):
            return False
        frame = frame.f_back
    return False


def _made_sparse(w: Watch, func, args, kwargs, result) -> None:
    if result not in w.built:
        frame = user_frame()
        if frame is not None:
            w.built[result] = place(frame)


def _quietly(handler, *args):
    """A check's bug must never change the program: it is reported on stderr, once."""
    try:
        return handler(*args)
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("SPARSELINT_RUNTIME_DEBUG"):
            raise
        key = getattr(handler, "__qualname__", repr(handler))
        if key not in _broken:
            _broken.add(key)
            print(f"sparselint runtime: check {key} failed: {exc!r}", file=sys.stderr)
        return False


_broken: set = set()


def push(watch: Watch):
    mode = _Mode(watch)
    mode.__enter__()
    return lambda: mode.__exit__(None, None, None)
