"""The options of a public class are inputs: its constructor's keyword defaults are what a
user gets without being told otherwise, and a documented on/off option (`sparse=False`) is
one a user may turn.

A public function of a package that receives a config is checked the same way: a caller's
`**overrides` merged over a defaults dict (`{**DEFAULTS, **overrides}`, `dict(DEFAULTS,
**overrides)`, `config.update(overrides)`), or a record class built from its field defaults
(`cfg: TrainConfig`). Each key takes its default, then, one at a time, each other value the
code admits: the members of its `Literal[...]` annotation, the keys of a table it indexes
(`OPTIMIZERS[cfg["optimizer"]]`), a string it is compared with, the other truth value of a
bool. A value read at run time (a file, the environment) is not a default: it stays unknown.

A public class of a package is checked as before with nothing known of what its constructor
is passed, and, where the class's code can act on the choice (it builds an optimizer, clips
gradients or passes `sparse=`), also in the configurations its constructor admits: every
keyword at its literal default, then each `True`/`False` option flipped alone. Each value
carries where it comes from, so a finding names the option that leads to it.
"""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Optional

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
    ...)`) or names an optimizer class (`{"adam": torch.optim.Adam}`), clips gradients, or passes `sparse=` on: where a default or an option can decide
    a finding. Docstrings and comments do not count."""
    for n in walk(node):
        if type(n) is cst.Attribute and n.attr.value in _OPTIMIZERS and (dotted(n.value) or "").endswith("optim"):
            return True  # an optimizer class held, not called here (a table of them)
        if type(n) is not cst.Call:
            continue
        func = n.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        owner = dotted(func.value) if isinstance(func, cst.Attribute) else ""
        if name in _OPTIMIZERS or name.startswith("clip_grad_") or (owner or "").endswith("optim"):
            return True
        if name == "getattr" and n.args and (dotted(n.args[0].value) or "").endswith("optim"):
            return True
        if isinstance(func, cst.Subscript):
            return True  # a class picked from a table (`OPTIMIZERS[name](params)`)
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


@dataclass(frozen=True)
class Option:
    """A value the caller of an entry point may set: key `key` of what parameter `param`
    receives (`**overrides`, or a record-class config)."""
    param: str
    key: str
    function: str
    record: bool = False  # a field of a record class (`cfg.optimizer`), else a dict key

    def given(self, value) -> str:
        """How a caller writes it (`optimizer="sparse_adam"`, `"sparse": True`)."""
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        return f"{self.key}={shown}" if self.record else f'"{self.key}": {shown}'


# option -> {other value the code admits: where it is written}, while a default run of an
# entry point is analysed (None otherwise)
_ADMITTED: ContextVar[Optional[dict]] = ContextVar("admitted_option_values", default=None)
MAX_TURNS = 6


def collect(found: dict):
    return _ADMITTED.set(found)


def stop(token) -> None:
    _ADMITTED.reset(token)


def admit(fact, value, where: Optional[Evidence], how: str) -> None:
    """The code admits `value` for the option whose default `fact` holds (`how`: what
    admits it, `where`: where that value is written)."""
    found = _ADMITTED.get()
    if (found is None or not isinstance(fact, Const) or fact.option is None or value == fact.value
            or not isinstance(value, (str, bool))):
        return
    option = fact.option
    text = f"`{option.given(value)}`, {how} (an option of `{option.function}()`)"
    evidence = replace(where, text=text) if where is not None else None
    found.setdefault(option, {}).setdefault(value, evidence)


def as_option(fact, option: Option, where: Optional[Evidence]):
    """The default `fact` of `option`, which names it; a bool admits its other value."""
    if not isinstance(fact, Const) or not isinstance(fact.value, (str, bool)):
        return fact
    said = replace(where, text=f"`{option.given(fact.value)}`, the default (an option of `{option.function}()`)"
                   ) if where is not None else None
    tagged = replace(fact, option=option, evidence=(*fact.evidence, said) if said is not None else fact.evidence)
    if isinstance(fact.value, bool):
        admit(tagged, not fact.value, where, "the flag's other value, which a caller may pass")
    return tagged


def turns(found: dict) -> list:
    """(option, the fact of another admitted value) for each configuration to check, values
    the code names first, then the other truth value of each flag."""
    out = []
    for option, values in found.items():
        for value, evidence in values.items():
            out.append((isinstance(value, bool), option, Const(value=value, evidence=(evidence,) if evidence else ())))
    out.sort(key=lambda t: t[0])
    return [(option, fact) for _, option, fact in out[:MAX_TURNS]]
