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
from .evaluation.facts import Const, Fact, Scalar

# what an option can lead to: an optimizer built, gradients clipped, a `sparse=` choice
_OPTIMIZERS = frozenset({"Adam", "AdamW", "Adamax", "SparseAdam", "SGD", "RMSprop", "Adagrad", "Adadelta", "NAdam",
                         "RAdam", "ASGD", "Rprop", "LBFGS"})


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


def configurations(init: cst.FunctionDef, cls: str, klass: cst.ClassDef) -> list[dict[str, Fact]]:
    """Parameter facts to run `init` with: the defaults, then each bool option flipped,
    where the class acts on options (see `acts`)."""
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

