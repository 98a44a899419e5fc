"""The options of a public class are inputs: its constructor's keyword defaults are what a
user gets without being told otherwise, and a documented on/off option (`sparse=False`) is
one a user may turn.

A public class of a package is checked as before with nothing known of what its constructor
is passed, and, where the class's code can act on the choice (it builds an optimizer, clips
gradients or passes `sparse=`), also in the configurations its constructor admits: every
keyword at its literal default, then each `True`/`False` option flipped alone. Each value
carries where it comes from, so a finding names the option that leads to it.
"""
from __future__ import annotations


import libcst as cst

from ..diagnostics import Evidence
from .cst.names import dotted
from .cst.tree import walk
from .torchops import torchapi as api
from .evaluation.facts import Const, Fact, Scalar

# what an option can lead to: an optimizer built (those the rules' tables know), gradients
# clipped, a `sparse=` choice
_OPTIMIZERS = frozenset({*api.REJECTS_SPARSE_GRADS, *api.FUSED_REJECTS_SPARSE_GRADS, *api.WEIGHT_DECAY_WITH_SPARSE,
                         *api.SPARSE_PARAMETER_ERRORS})


def acts(node: cst.CSTNode) -> bool:
    """Whether code builds an optimizer (`torch.optim.X(...)`, `optim.X(...)`, `getattr(torch.optim,
    ...)`), clips gradients, or passes `sparse=` on: where a default or an option can decide
    a finding. Docstrings and comments do not count."""
    for n in walk(node):
        if type(n) is not cst.Call:
            continue
        func = n.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        owner = dotted(func.value) if isinstance(func, cst.Attribute) else ""
        if name in _OPTIMIZERS or name.startswith("clip_grad_") or (owner or "").endswith("optim"):
            return True
        if name == "getattr" and n.args and (dotted(n.args[0].value) or "").endswith("optim"):
            return True
        if any(a.keyword is not None and a.keyword.value == "sparse" for a in n.args):
            return True
    return False


MAX_FLIPS = 4


def literal_defaults(func: cst.FunctionDef, says) -> dict[str, Fact]:
    """Parameter name -> the fact of its literal default (`sparse=True`, `lr=0.01`), each with
    evidence `says(name, shown value)` at the parameter."""
    from .calls import literal_fact
    p = func.params
    found: dict[str, Fact] = {}
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        fact = literal_fact(param.default) if param.default is not None else None
        if isinstance(fact, (Const, Scalar)):
            name = param.name.value
            found[name] = type(fact)(value=fact.value, evidence=(Evidence.at(param, says(name, repr(fact.value))),))
    return found


def configurations(init: cst.FunctionDef, cls: str, klass: cst.ClassDef) -> list[dict[str, Fact]]:
    """Parameter facts to run `init` with: the defaults, then each bool option flipped,
    where the class acts on options (see `acts`)."""
    defaults = literal_defaults(init, lambda name, shown: f"the default `{name}={shown}` of `{cls}`")
    params = {x.name.value: x for x in (*init.params.posonly_params, *init.params.params, *init.params.kwonly_params)}
    options = [(params[name], fact.value) for name, fact in defaults.items() if isinstance(fact.value, bool)]
    if not defaults or not acts(klass):
        return []
    found = [defaults]
    if options:
        for param, value in options[:MAX_FLIPS]:
            name = param.name.value
            flipped = Const(value=not value, evidence=(
                Evidence.at(param, f"`{cls}({name}={not value})`, an option of its constructor"),))
            found.append({**defaults, name: flipped})
    return found

