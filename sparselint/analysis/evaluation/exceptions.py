"""Exception classes: which classes an exception is an instance of (what an `except`
clause matches), and whether its `args` are the arguments of the call that made it."""

from __future__ import annotations

import builtins
from typing import Optional

import libcst as cst

from ..cst.tree import statements

BUILTIN_EXCEPTIONS = {name: cls for name, cls in vars(builtins).items()
                      if isinstance(cls, type) and issubclass(cls, BaseException)}
_MAX_DEPTH = 8


class ExceptionClasses:
    """The exception classes a module can name: its own classes and Python's builtin ones
    (unless the module binds that name to something else)."""

    def __init__(self, module: cst.Module, classes: dict[str, cst.ClassDef]):
        self.classes = classes
        self._shadowed = _imported_names(module)
        self._ancestry: dict[str, Optional[frozenset]] = {}

    def builtin(self, name: str) -> bool:
        return name in BUILTIN_EXCEPTIONS and name not in self.classes and name not in self._shadowed

    def ancestry(self, name: str, depth: int = 0) -> Optional[frozenset]:
        """The names of the classes an instance of `name` is an instance of (itself and every
        base), when it is an exception class whose bases are all known; None otherwise."""
        if name not in self._ancestry:
            self._ancestry[name] = None  # a cycle of bases is not a class hierarchy
            self._ancestry[name] = self._compute(name, depth)
        return self._ancestry[name]

    def _compute(self, name: str, depth: int) -> Optional[frozenset]:
        if self.builtin(name):
            return frozenset(c.__name__ for c in BUILTIN_EXCEPTIONS[name].__mro__)
        klass = self.classes.get(name)
        if klass is None or depth > _MAX_DEPTH:
            return None
        out = {name}
        for base in klass.bases:
            if base.keyword is not None:
                return None  # a metaclass may make it anything
            if not isinstance(base.value, cst.Name):
                return None
            up = self.ancestry(base.value.value, depth + 1)
            if up is None:
                return None
            out |= up
        return frozenset(out) if "BaseException" in out else None

    def args_at_init(self, name: str) -> bool:
        """`__init__` starts with `args` holding the positional arguments of the call (what
        `BaseException.__new__` stores): no class of the file in its hierarchy defines
        `__new__`."""
        return self._defines(name, ("__new__",)) is False

    def keeps_call_args(self, name: str) -> bool:
        """Its `args` are the positional arguments of the call that made it: no class of the
        file in its hierarchy defines `__init__` or `__new__` (which may pass other values
        on)."""
        return self._defines(name, ("__init__", "__new__")) is False

    def _defines(self, name: str, methods: tuple) -> Optional[bool]:
        chain = self.ancestry(name)
        if chain is None:
            return None
        return any(any(isinstance(s, cst.FunctionDef) and s.name.value in methods for s in self.classes[cls].body.body)
                   for cls in chain if cls in self.classes)

    def base_init_is_builtin(self, klass: cst.ClassDef) -> bool:
        """`super().__init__(...)` in a method of this class reaches a builtin exception's
        `__init__` (which sets `args`), not one of the file's classes."""
        for base in klass.bases:
            if base.keyword is not None or not isinstance(base.value, cst.Name):
                return False
            name = base.value.value
            if self.builtin(name):
                return True
            if name not in self.classes or self._defines(name, ("__init__",)) is not False:
                return False
        return False


def _imported_names(module: cst.Module) -> frozenset:
    found = set()
    for n in statements(module):
        kind = type(n)  # exact types: a failed `isinstance` on a LibCST class is costly
        if kind is not cst.Import and kind is not cst.ImportFrom:
            continue
        if kind is cst.ImportFrom and isinstance(n.names, cst.ImportStar):
            found |= set(BUILTIN_EXCEPTIONS)  # any of them may be another class
        else:
            for alias in n.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                root = bound
                while isinstance(root, cst.Attribute):
                    root = root.value
                if isinstance(root, cst.Name):
                    found.add(root.value)
    return frozenset(found)
