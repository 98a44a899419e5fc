"""Parameters that several modules share (`self.generator.weight = self.embed.weight`).

Assigning one module's parameter to another module's attribute makes one parameter that
both use. Its gradient is the sum of what each use gives: sparse only when every use gives a
sparse one. `parameters()` and `named_parameters()` yield it once, under the first name
`named_modules()` reaches it by.

A module records which of its parameter names are one parameter as groups of names relative
to itself. A name that lies outside the module (the tie was made by the module that holds
it and a sibling) climbs with one `^` per level: `("weight", "^embed.weight")` in the
generator of a model whose `embed` holds the other name. The model that assembles both
children resolves the `^` and sees both names inside itself.
"""
from __future__ import annotations

from typing import Iterable, Optional

from .gradflags import NONE, UNKNOWN, Flags

Groups = tuple[tuple[str, ...], ...]
# what the evidence of an assignment that makes one parameter of two says
SHARED = "one parameter that both modules use"


def shared_flags(a: Flags, b: Flags) -> Flags:
    """The gradient of one parameter two uses give a gradient to: a dense contribution makes
    the sum dense; two sparse ones stay sparse; anything else is not known."""
    if a == b:
        return a
    if NONE in (a, b):
        return UNKNOWN  # a frozen parameter's freezing was of the one it replaces
    if _dense(a) or _dense(b):
        return Flags(False, True, a.sparse_param if a.sparse_param == b.sparse_param else None)
    return UNKNOWN


def _dense(f: Flags) -> bool:
    return f.has_dense is True and f.has_sparse is False


def into_child(name: str, child: str) -> str:
    """A name relative to a module, seen from its child `child`."""
    prefix = child + "."
    return name[len(prefix):] if name.startswith(prefix) else "^" + name


def into_parent(name: str, child: str) -> str:
    """A name relative to the child `child`, seen from the module that holds it."""
    return name[1:] if name.startswith("^") else f"{child}.{name}"


def lift(groups: Optional[Groups], child: str) -> Optional[Groups]:
    """A child's groups, named from the module that holds it."""
    if groups is None:
        return None
    return tuple(tuple(into_parent(n, child) for n in g) for g in groups)


def narrow(groups: Optional[Groups], child: str) -> Optional[Groups]:
    """A module's groups that concern its child `child`, named from the child."""
    if groups is None:
        return None
    prefix = child + "."
    return tuple(tuple(into_child(n, child) for n in g) for g in groups if any(n.startswith(prefix) for n in g))


def merged(groups: Iterable[tuple[str, ...]]) -> Groups:
    """Groups that share a name are one parameter: one group."""
    out: list[set] = []
    for g in groups:
        names = set(g)
        for other in [o for o in out if o & names]:
            names |= other
            out.remove(other)
        out.append(names)
    return tuple(tuple(sorted(g)) for g in out if len(g) > 1)


def distinct(parts: Optional[tuple], groups: Optional[Groups]) -> Optional[tuple]:
    """The parameter names a module yields, each parameter once, under the name torch gives
    it: the first that `named_modules()` order reaches."""
    if parts is None or groups is None:
        return None
    if not groups:
        return parts
    names = [n for n, _ in parts]
    rank = {n: i for i, n in enumerate(torch_order(names))}
    dropped = set()
    for g in groups:
        inside = [n for n in g if n in rank]
        if len(inside) > 1:
            inside.sort(key=rank.__getitem__)
            dropped.update(inside[1:])
    return tuple((n, f) for n, f in parts if n not in dropped)


def torch_order(names: list[str]) -> list[str]:
    """Names in the order `named_parameters()` visits them: a module's own parameters, then
    each child's (in the order the children were first set), depth first."""
    own = [n for n in names if "." not in n]
    children: dict[str, list[str]] = {}
    for n in names:
        if "." in n:
            head, _, rest = n.partition(".")
            children.setdefault(head, []).append(rest)
    out = list(own)
    for head, rest in children.items():
        out.extend(f"{head}.{r}" for r in torch_order(rest))
    return out
