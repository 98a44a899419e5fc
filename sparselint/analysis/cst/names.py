"""Import-alias resolution: which local names mean which torch objects.

`import torch as t`, `from torch import nn`, `from torch.nn import Embedding as E` all map a
local name to a dotted qualified name; `qualify()` turns an expression such as `t.nn.E` into
`torch.nn.Embedding`. A name that a scope binds itself (a parameter, an assignment) shadows the
import and is no longer torch.
"""
from __future__ import annotations

from typing import Iterable

import libcst as cst

from .tree import statements

# Re-exports that users reach by more than one path; map each onto one spelling.
CANONICAL = {
    "torch.nn.parameter.Parameter": "torch.nn.Parameter",
    "torch.nn.modules.sparse.Embedding": "torch.nn.Embedding",
    "torch.nn.modules.sparse.EmbeddingBag": "torch.nn.EmbeddingBag",
    "torch.autograd.grad_mode.no_grad": "torch.no_grad",
    "torch.autograd.no_grad": "torch.no_grad",
    "torch.autograd.grad_mode.enable_grad": "torch.enable_grad",
    "torch.autograd.grad_mode.inference_mode": "torch.inference_mode",
    "torch.autograd.grad_mode.set_grad_enabled": "torch.set_grad_enabled",
    "torch.autograd.set_grad_enabled": "torch.set_grad_enabled",
}


_ATTRIBUTE, _NAME = cst.Attribute, cst.Name


def is_torch(qualname: str) -> bool:
    """Whether a qualified name is torch's own (`torch`, `torch.nn.Linear`), not a package
    whose name merely starts so (`torch_geometric`, `torchrec`, `torch_sparse`): those are
    code to read like any other."""
    return qualname == "torch" or qualname.startswith("torch.")


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names and attributes, else None."""
    # exact type tests: both classes are concrete and final, and `isinstance` against a
    # LibCST class runs a Python-level `__instancecheck__` whenever it fails
    kind = type(node)
    if kind is _NAME:
        return node.value
    parts = []
    while kind is _ATTRIBUTE:
        parts.append(node.attr.value)
        node = node.value
        kind = type(node)
    if kind is not _NAME:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


# Packages whose names are resolved: torch, and the standard library modules whose callables
# the analysis models (partials, context managers, namespaces, named tuples, dataclasses).
_ROOTS = ("torch", "itertools", "functools", "contextlib", "types", "argparse", "collections", "typing", "dataclasses", "asyncio", "copy", "math")


class Names:
    """The alias table of one scope."""

    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases

    @classmethod
    def from_module(cls, module: cst.Module, roots: Iterable[str] = _ROOTS) -> "Names":
        collector = _ImportCollector(tuple(roots))
        for node in statements(module):
            kind = type(node)  # exact types: a failed `isinstance` on a LibCST class is costly
            if kind is cst.Import:
                collector.visit_Import(node)
            elif kind is cst.ImportFrom:
                collector.visit_ImportFrom(node)
        return cls(collector.aliases)

    def without(self, local_names: Iterable[str]) -> "Names":
        shadowed = set(local_names) & self.aliases.keys()
        if not shadowed:
            return self
        return Names({k: v for k, v in self.aliases.items() if k not in shadowed})

    def qualify(self, node: cst.BaseExpression) -> str | None:
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        full = f"{target}.{rest}" if rest else target
        return CANONICAL.get(full, full)

    def local_for(self, qualified: str) -> str | None:
        """The shortest local spelling of a qualified name (for writing fixes)."""
        best = None
        for local, target in self.aliases.items():
            if qualified == target:
                cand = local
            elif qualified.startswith(target + "."):
                cand = local + qualified[len(target):]
            else:
                continue
            if best is None or len(cand) < len(best):
                best = cand
        return best


class _ImportCollector:
    def __init__(self, roots: tuple[str, ...]):
        self.roots = roots
        self.aliases: dict[str, str] = {}

    def _wanted(self, name: str) -> bool:
        return any(name == r or name.startswith(r + ".") for r in self.roots)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if full is None or not self._wanted(full):
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.aliases[head] = head

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        base = dotted(node.module)
        if base is None or not self._wanted(base):
            return
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{base}.{alias.name.value}"
