"""Assigning a module's parameter to another module's attribute: one parameter, two uses.

`self.generator.weight = self.embed.weight` (in a constructor, or `model.gen.weight =
model.emb.weight` after it) leaves one parameter that the embedding and the linear layer
both use. Every module fact on the way to either name learns that its names are one
parameter (see `evaluation/ties.py`) and what gradient the sum of both uses gives it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from ....diagnostics import Evidence
from ...cst.names import dotted
from ...torchops import torchapi as api
from .. import ties
from ..facts import Module, Tensor, union_flags
from ..gradflags import NONE as NO_GRADS, UNKNOWN, Flags
from .state import State


class Sharing:
    """Methods of `Inference` (sparselint.inference.expressions)."""

    def share(self, target: cst.Attribute, value, fact, state: State) -> tuple[bool, object]:
        """Model `target = value` where `target` names a parameter of a module: (True when it
        is done and the assignment binds nothing else, the fact the assignment binds)."""
        tpath = dotted(target)
        owner = self._param_owner(tpath, state) if tpath else None
        if owner is None:
            return False, fact
        opath, module, rel = owner
        names = {n for n, _ in module.parts or ()}
        target_known = rel in names
        vpath = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        source = self._param_owner(vpath, state) if vpath and "." in vpath else None
        source_known = source is not None and source[2] in {n for n, _ in source[1].parts or ()}
        if isinstance(value, cst.Call) and self.names.qualify(value.func) == api.PARAMETER:
            # a new parameter only this module uses: what it shared before is shared no more
            if target_known:
                self._regroup(tpath, set(), _flag(module, rel), state)
            return False, fact
        if not target_known and not source_known:
            return False, fact
        f_target = _flag(module, rel) if target_known else UNKNOWN
        f_source = _flag(source[1], source[2]) if source_known else UNKNOWN
        group = {tpath}
        if source_known:
            group |= {vpath} | _group_of(vpath, source, state)
        flags = ties.shared_flags(f_target, f_source)
        if source_known and vpath.split(".")[0] != tpath.split(".")[0] and f_target != f_source:
            # a module of another object: whether its use ever gives a gradient is not known
            flags = UNKNOWN
        if not target_known:
            # a module whose parameters are not known uses it too: its gradient is not known
            self._regroup(vpath, group - {tpath}, flags, state)
            if isinstance(fact, Tensor) and fact.parameter:
                fact = replace(fact, grad_layout=None, grad_coalesced=None)
            return False, fact
        why = None
        if source_known and _kind(flags) and (flags != f_target or flags != f_source):
            why = Evidence.at(target, f"`{tpath} = {vpath}`: {ties.SHARED}, so it gets a {_kind(flags)} gradient")
        self._regroup(tpath, group, flags, state, why)
        for path in group:
            state.bind(path, None)  # read through the modules that hold it from now on
        return True, fact

    def freeze_shared(self, path: str, state: State) -> None:
        """`path` no longer requires grad: nor do the other names of the same parameter."""
        owner = self._param_owner(path, state)
        group = _group_of(path, owner, state) if owner is not None else set()
        if group:
            self._regroup(path, group | {path}, NO_GRADS, state)

    def _param_owner(self, path: str, state: State) -> Optional[tuple[str, Module, str]]:
        """(path, fact, name inside it) of the nearest module a parameter path lies in."""
        return self._enclosing_module(path, state, nearest=True)

    def _regroup(self, tpath: str, group: set, flags: Flags, state: State, why: Optional[Evidence] = None) -> None:
        """`tpath` is now one parameter with the paths of `group` (empty: with none), whose
        gradient `flags` says; those it was one parameter with before lose a use."""
        owner = self._param_owner(tpath, state)
        before = _group_of(tpath, owner, state) if owner is not None else set()
        if not group and before:
            flags = UNKNOWN  # its own use was summed with theirs: what it alone gives is not known
        left = before - group - {tpath}
        owners: dict[str, Module] = {}
        for path in group | left | {tpath}:
            parts = path.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                opath = ".".join(parts[:cut])
                if opath in owners:
                    continue
                fact = state.env.get(opath) or self.lookup(opath, state)
                if isinstance(fact, Module) and fact.parts is not None:
                    owners[opath] = fact
        for opath, module in owners.items():
            now = _relative(opath, group | {tpath})
            lost = _relative(opath, left)
            parts = tuple((n, flags if n in now else UNKNOWN if n in lost else f) for n, f in module.parts)
            groups = module.ties
            if groups is not None:
                kept = [g for g in groups if not (now | lost) & set(g)]
                groups = ties.merged(kept + [tuple(now) if group else (), tuple(lost)])
            if parts != module.parts or groups != module.ties:
                evidence = module.evidence + ((why,) if why is not None and now & {n for n, _ in parts} else ())
                state.env[opath] = replace(module, parts=parts, flags=union_flags(f for _, f in parts), ties=groups,
                                           evidence=evidence)


def _kind(f: Flags) -> str:
    if f.has_dense is True and f.has_sparse is False:
        return "dense"
    if f.has_sparse is True and f.has_dense is False:
        return "sparse"
    return ""


def _flag(module: Module, name: str) -> Flags:
    for n, f in module.parts or ():
        if n == name:
            return f
    return UNKNOWN


def _group_of(path: str, owner: tuple, state: State) -> set:
    """The paths that are one parameter with `path`, as its nearest module records them."""
    opath, module, rel = owner
    for g in module.ties or ():
        if rel in g:
            out = {_absolute(opath, n) for n in g}
            return {p for p in out if p is not None} - {path}
    return set()


def _absolute(opath: str, name: str) -> Optional[str]:
    ups = len(name) - len(name.lstrip("^"))
    parts = opath.split(".")
    if ups >= len(parts):
        return None
    return ".".join(parts[:len(parts) - ups] + [name[ups:]])


def _relative(opath: str, paths: set) -> set:
    """Paths named from the module at `opath` (`^` for each level up); those of another
    root variable are left out."""
    own = opath.split(".")
    out = set()
    for path in paths:
        parts = path.split(".")
        common = 0
        while common < min(len(own), len(parts) - 1) and own[common] == parts[common]:
            common += 1
        if common == 0:
            continue
        out.add("^" * (len(own) - common) + ".".join(parts[common:]))
    return out
