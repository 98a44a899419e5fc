"""The options of a public class are inputs: its constructor's keyword defaults are what a
user gets without being told otherwise, and a documented on/off option (`sparse=False`) is
one a user may turn.

A public class of a package is checked as before with nothing known of what its constructor
is passed, and, where the class's code can act on the choice (it builds an optimizer, clips
gradients or speaks of sparse), also in the configurations its constructor admits: every
keyword at its literal default, then each `True`/`False` option flipped alone. Each value
carries where it comes from, so a finding names the option that leads to it.
"""
from __future__ import annotations

import re
from typing import Callable

import libcst as cst

from ..diagnostics import Evidence
from .evaluation.facts import Const, Fact, Scalar

# what an option can lead to: an optimizer built, gradients clipped, sparse gradients
ACTS = re.compile(r"\b(optim|Adam\w*|SGD|RMSprop|Adagrad|Adadelta|LBFGS|Rprop|ASGD|NAdam|RAdam|SparseAdam|"
                  r"clip_grad_\w+|sparse)\b")
MAX_FLIPS = 4


def configurations(init: cst.FunctionDef, cls: str, code: Callable[[], str]) -> list[dict[str, Fact]]:
    """Parameter facts to run `init` with: the defaults, then each bool option flipped
    (`code` gives the class's source, read only when it has such options)."""
    from .calls import literal_fact
    p = init.params
    defaults: dict[str, Fact] = {}
    options: list[tuple[cst.Param, bool]] = []
    for param in (*p.params, *p.kwonly_params):
        if param.default is None:
            continue
        fact = literal_fact(param.default)
        if not isinstance(fact, (Const, Scalar)):
            continue
        name = param.name.value
        value = fact.value
        shown = repr(value) if isinstance(value, str) else value
        defaults[name] = type(fact)(value=value, evidence=(
            Evidence.at(param, f"the default `{name}={shown}` of `{cls}`"),))
        if isinstance(value, bool):
            options.append((param, value))
    if not defaults or not ACTS.search(code()):
        return []
    found = [defaults]
    if options:
        for param, value in options[:MAX_FLIPS]:
            name = param.name.value
            flipped = Const(value=not value, evidence=(
                Evidence.at(param, f"`{cls}({name}={not value})`, an option of its constructor"),))
            found.append({**defaults, name: flipped})
    return found

