"""The facts that hold at one point of a scope, and how two paths join."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ....diagnostics import Evidence
from ..facts import Fact, join


@dataclass
class State:
    env: dict[str, Fact] = field(default_factory=dict)
    # sparse tensors (by access path) that a forward op saved for backward
    saved: dict[str, Evidence] = field(default_factory=dict)

    def copy(self) -> "State":
        return State(dict(self.env), dict(self.saved))

    def bind(self, path: str, fact: Optional[Fact]) -> None:
        prefix = path + "."
        for key in [k for k in self.env if k.startswith(prefix)]:
            del self.env[key]
        self.saved.pop(path, None)
        # a rebound entry-point parameter no longer holds what the caller passed
        self.env.pop("\0" + path, None)
        if fact is None:
            self.env.pop(path, None)
        else:
            self.env[path] = fact


def join_states(a: State, b: State, grown: Optional[Callable] = None) -> State:
    """The facts true on both paths. `grown(x, y)`: how a loop joins the two facts of one
    name that differ (a list it appends to), tried first."""
    env = {}
    for key in a.env.keys() & b.env.keys():
        x, y = a.env[key], b.env[key]
        fact = (grown(x, y) if grown is not None and x != y else None) or join(x, y)
        if fact is not None:
            env[key] = fact
    saved = dict(b.saved)
    saved.update(a.saved)
    return State(env, saved)

