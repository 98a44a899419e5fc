"""What a shape is, and the registry the shape modules fill."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from .hazards import Hazard, Variant

ENTRY = "main.py"


@dataclass(frozen=True)
class Shape:
    name: str
    form: str  # the language form it exercises, as docs/coverage.md names it
    point: str  # the point of issue 18 it covers: "1" expressions, "2" bindings, "3" objects, "4" calls
    build: Callable[[Variant], dict]  # file name -> text; ENTRY is the script that runs
    kinds: Optional[frozenset] = None  # hazard kinds it applies to (None: every hazard)
    codes: Optional[frozenset] = None  # hazard codes it applies to (None: every code of its kinds)
    out_of_reach: str = ""  # why no static analysis can report it, when that is so

    def applies_to(self, hazard: Hazard) -> bool:
        return ((self.kinds is None or hazard.kind in self.kinds)
                and (self.codes is None or hazard.code in self.codes))


SHAPES: list[Shape] = []


def shape(form: str, point: str, kinds=None, codes=None, out_of_reach: str = ""):
    """Register a template: a function from a Variant to the files of its program."""
    def register(fn):
        # a shape's name is its cells' id: two of one name would hide one of them
        assert all(s.name != fn.__name__ for s in SHAPES), f"two shapes named {fn.__name__}"
        SHAPES.append(Shape(fn.__name__, form, point, fn, frozenset(kinds) if kinds else None,
                            frozenset(codes) if codes else None, out_of_reach))
        return fn
    return register


def one(text: str) -> dict:
    return {ENTRY: text}
