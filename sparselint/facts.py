"""The facts the engine infers about values, and how facts from two paths join.

A fact is immutable. Every field may be unknown (None); a rule fires only on known fields.
Joining two facts (after an `if`, around a loop) keeps what both agree on.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Optional, Union

from .diagnostics import Evidence

SPARSE_LAYOUTS = frozenset({"coo", "csr", "csc", "bsr", "bsc", "sparse"})
COMPRESSED_LAYOUTS = frozenset({"csr", "csc", "bsr", "bsc"})

# Grad states of a tensor.
LEAF = "leaf"  # a leaf that requires grad (requires_grad=True, requires_grad_(), Parameter)
NONLEAF = "nonleaf"  # computed from something that requires grad: part of a graph
NOGRAD = "none"  # does not require grad

# Boolean fields that make a rule fire join with AND; those that silence one join with OR.
_SILENCING = frozenset({"retains_grad"})


@dataclass(frozen=True)
class Tensor:
    layout: Optional[str] = None
    coalesced: Optional[bool] = None
    grad: Optional[str] = None
    parameter: bool = False
    # Layout the tensor's future `.grad` will have ("coo", "strided", "mixed") and whether
    # that grad is coalesced.
    grad_layout: Optional[str] = None
    grad_coalesced: Optional[bool] = None
    origin: Optional[str] = None
    values_of_sparse: bool = False
    retains_grad: bool = False
    is_grad: bool = False
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)

    @property
    def is_sparse(self) -> bool:
        return self.layout in SPARSE_LAYOUTS

    @property
    def is_coo(self) -> bool:
        return self.layout == "coo"

    @property
    def is_compressed(self) -> bool:
        return self.layout in COMPRESSED_LAYOUTS

    @property
    def requires_grad(self) -> Optional[bool]:
        if self.grad is None:
            return None
        return self.grad in (LEAF, NONLEAF)

    def why(self, where, text: str) -> "Tensor":
        return replace(self, evidence=self.evidence + (Evidence.at(where, text),))


@dataclass(frozen=True)
class Module:
    """An `nn.Module` instance, and whether the gradients of its parameters are sparse."""

    kind: str
    sparse_grads: Optional[str] = None  # "all", "some", "none"
    mode: Optional[str] = None
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Params:
    """An iterable of parameters (`model.parameters()`, `[p, q]`)."""

    sparse_grads: Optional[str] = None
    paths: tuple[str, ...] = ()
    named: bool = False
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Optimizer:
    kind: str
    params: Optional[Params] = None
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)


Fact = Union[Tensor, Module, Params, Optimizer]


def join(a: Optional[Fact], b: Optional[Fact]) -> Optional[Fact]:
    if a is None or b is None or type(a) is not type(b):
        return None
    if a == b:
        return a if len(a.evidence) <= len(b.evidence) else b
    changes = {}
    for f in fields(a):
        if f.name == "evidence":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if x == y:
            continue
        if f.type == "bool":
            changes[f.name] = (x or y) if f.name in _SILENCING else (x and y)
        else:
            changes[f.name] = None if f.type != "tuple[str, ...]" else ()
    return replace(a, **changes)


def element_of(params: Params, where) -> Tensor:
    """The fact for one parameter drawn from a parameter collection."""
    if params.sparse_grads == "all":
        grad_layout, text = "coo", "its parameters get sparse gradients"
    elif params.sparse_grads == "some":
        grad_layout, text = "mixed", "some of its parameters get sparse gradients"
    else:
        grad_layout, text = None, ""
    t = Tensor(
        layout="strided" if params.sparse_grads else None,
        grad=LEAF,
        parameter=True,
        grad_layout=grad_layout,
        grad_coalesced=False if grad_layout == "coo" else None,
        evidence=params.evidence,
    )
    return t.why(where, f"iterates over a parameter collection: {text}") if text else t
