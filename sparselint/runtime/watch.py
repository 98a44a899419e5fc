"""The one torch function mode a Session pushes, and the table the checks fill in.

Every torch call of the program passes through `__torch_function__`; a dense op pays one
dict lookup and a `try`. Checks register, per torch function object, what to look at
before and after the call, and what to make of an exception coming out of any call. Torch
turns the mode off while `__torch_function__` runs, so torch calls a check makes do not
come back here. A check never changes a result nor swallows an exception: handlers run
inside `_quietly`, and an exception from the op is re-raised as the same object."""
from __future__ import annotations

import os
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils.weak import WeakIdKeyDictionary

from .session import _is_ours_or_torch, user_frame


class Watch:
    def __init__(self, session):
        self.session = session
        self.before: dict = {}
        self.after: dict = {}
        self.failed: list = []      # handler(func, args, kwargs, exc) -> True when it recorded
        self.fallback: list = []    # tried after every `failed` handler declined
        self.sparse_made: list = []  # handler(func, args, kwargs, result) for each new sparse result
        self.built = WeakIdKeyDictionary()  # sparse tensor -> (path, line, column) of the user line that made it
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

    def where_built(self, tensor):
        return self.built.get(tensor)


def place(frame) -> tuple[str, int, int]:
    from .session import _position
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
        if result.__class__ is torch.Tensor or isinstance(result, torch.Tensor):
            if result.layout is not torch.strided:
                _made_sparse(w, func, args, kwargs, result)
        handlers = w.after.get(func)
        if handlers:
            for h in handlers:
                _quietly(h, func, args, kwargs, result)
        return result


def _made_sparse(w: Watch, func, args, kwargs, result) -> None:
    if result not in w.built:
        frame = user_frame()
        if frame is not None:
            w.built[result] = place(frame)
    for h in w.sparse_made:
        _quietly(h, func, args, kwargs, result)


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
