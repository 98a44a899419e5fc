"""Calls into the functions and classes of the file being checked, analysed at each call site.

When a call passes facts the engine knows (an uncoalesced adjacency, a model with sparse
embeddings, a trainer object), the callee's body is analysed with those facts bound to its
parameters, so a hazard inside a helper is found at the helper's line, with the call site in
its evidence. What the callee does flows back: the facts it returns for these arguments,
and its effects on them (a tensor coalesced or stepped, `self.x` set by a method).

Analyses are memoised on (callee, argument facts), so a helper called from many places with
the same facts costs one analysis; call chains deeper than `MAX_DEPTH` and recursion are cut.
Calls are prepared statement by statement, before rules look at the statement, so every
rule and the inference read one outcome per call node.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Optional

import libcst as cst

from ..diagnostics import Evidence
from .evaluation.facts import Callee, Const, Fact, Instance, Items, Module, Optimizer, Params, Scalar, Tensor, with_evidence
from .cst.names import dotted
from .cst.syntax import assigned_names, parameters_of
from .cst.tree import walk

MAX_DEPTH = 4
_GLOBAL = "<global>"
# The chain of callees being analysed, across files, so mutual recursion between modules ends.
_ACTIVE: list[cst.FunctionDef] = []
# Modules of the project parsed for calls into them, once per process: (path, hash of text)
# -> (module, text, import aliases), or None when the text cannot be parsed.
_PARSED: dict[tuple, Optional[tuple]] = {}


@dataclass
class Outcome:
    returned: Optional[Fact] = None
    # caller access path -> the fact after the call (None: no longer known)
    effects: dict[str, Optional[Fact]] = field(default_factory=dict)
    # caller access paths the callee's forward ops saved for backward
    saved: dict[str, Evidence] = field(default_factory=dict)
    # the callee runs backward: nothing saved before the call is still waiting for one
    backward: bool = False


@dataclass
class _Result:
    """A callee's analysis, in the callee's own names."""

    returned: Optional[Fact]
    effects: dict[str, Optional[Fact]]  # parameter-rooted path -> fact after the call
    # it sets `.grad`, `.data` or `requires_grad` through names the analysis cannot map back
    # (`for p in model.parameters(): p.grad = p.grad.coalesce()`)
    untracked: bool = False
    saved: dict[str, Evidence] = field(default_factory=dict)  # parameter-rooted path -> why saved
    backward: bool = False


@dataclass
class _Target:
    node: cst.FunctionDef
    name: str
    # the first parameter's fact for a method (the receiver), and the caller's path to it
    receiver: Optional[Fact] = None
    receiver_path: Optional[str] = None
    klass: Optional[cst.ClassDef] = None
    makes: Optional[str] = None  # "instance" or "module" for a constructor call
    # the walker of the module that defines the callee, when it is another file
    walker: Optional[object] = None
    # a method of this file: with nothing known at the call, it is still analysed (silently,
    # as a function's summary is) for what it returns
    summary: bool = False
    # `forward` of a custom autograd function: its `backward`, run with the context forward
    # filled in
    backward: Optional[cst.FunctionDef] = None


def literal_fact(node: Optional[cst.BaseExpression]) -> Optional[Fact]:
    """The fact of a literal default value (`sparse=True`, `lr=0.1`, `mode="sum"`)."""
    from .evaluation.inference import _UNKNOWN, literal
    if node is None:
        return None
    v = literal(node)
    if v is _UNKNOWN:
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return Scalar(value=v)
    return Const(value=v)


class Calls:
    def __init__(self, walker):
        self.walker = walker
        self.outcomes: dict[cst.Call, Outcome] = {}
        self._memo: dict[tuple, _Result] = {}
        self._rebound: dict[cst.FunctionDef, set[str]] = {}
        self._calls_in: dict[cst.CSTNode, list] = {}
        self._passed: dict[cst.FunctionDef, tuple[set[str], set[str]]] = {}
        self._free: dict[cst.FunctionDef, set[str]] = {}
        self._untracked: dict[cst.FunctionDef, bool] = {}
        self._init_tokens: dict[str, bool] = {}
        self._foreign: dict[str, Optional[object]] = {}
        self._literal_sources: dict[tuple, bool] = {}
        # a model class of another module -> (that module's walker, the class, ...)
        self._models: dict[str, Optional[tuple]] = {}
        self._stores: Optional[frozenset] = None
        # (class, name) -> the method, or the class attribute's value (not when the file
        # stores that attribute name anywhere: an instance's own value or a changed one)
        self._members: dict[tuple, object] = {}

    # -- what a call reaches -----------------------------------------------------------

    def outcome(self, call: cst.Call) -> Optional[Outcome]:
        return self.outcomes.get(call)

    def calls_in(self, node: cst.CSTNode) -> list:
        """The calls of a statement in evaluation order, found once per statement."""
        found = self._calls_in.get(node)
        if found is None:
            from .evaluation.inference import _calls_in
            found = self._calls_in[node] = _calls_in(node)
        return found

    def prepare(self, node: cst.CSTNode, state) -> None:
        """Analyse the project calls of a statement (inner calls first) with the facts
        that hold before it."""
        for call in self.calls_in(node):
            if not isinstance(call, cst.Call):
                continue
            self.outcomes.pop(call, None)
            target = self._target(call, state)
            if target is None:
                continue
            outcome = self._invoke(target, call, state)
            if outcome is not None:
                self.outcomes[call] = outcome

    def _target(self, call: cst.Call, state) -> Optional[_Target]:
        w = self.walker
        inf = w.ctx.inference
        func = call.func
        if inf.names.qualify(func) is not None:
            return None  # torch's own functions are the op tables' business
        if isinstance(func, cst.Name):
            name = func.value
            fact = inf.fact(func, state)
            if isinstance(fact, Callee) and fact.local and "." in fact.target:
                # a method held as a value: `build = Factory().build; build()`
                cls, _, method = fact.target.partition(".")
                return self._method(cls, method, fact.receiver, None, bound=fact.receiver is not None)
            if isinstance(fact, Callee) and fact.local:
                name = fact.target
            elif fact is not None or name in inf.locals:
                return self._forward(func, fact, call, state)
            if name in w.functions:
                return _Target(w.functions[name], name)
            if name not in w.classes:
                return self._imported(call, state, name, "") or self._foreign_constructor(call, state)
            if name in w.classes:
                klass = w.classes[name]
                init = w.method(klass, "__init__")
                module = w.module_of_class(name, call, inf, state)
                there = None
                if init is None and module is None:
                    # `__init__` inherited from a base class of another module
                    init, there = self._inherited(klass, "__init__") or (None, None)
                if init is None and module is None:
                    return _Target(None, name, klass=klass, makes="instance")
                receiver = module if module is not None else Instance(cls=name)
                # with nothing known at the call, `__init__` still runs (silently, as a
                # function's summary does): what it stores on the instance is a fact
                return _Target(init, name, receiver=receiver, klass=klass,
                               makes="module" if module is not None else "instance", walker=there, summary=True)
            return None
        if isinstance(func, cst.Attribute):
            if _is_super(func.value):
                return self._super(func.attr.value, state)
            if (isinstance(func.value, cst.Name) and func.value.value not in inf.locals
                    and inf.names.qualify(func.value) is None and inf.lookup(func.value.value, state) is None):
                found = self._imported(call, state, func.value.value, func.attr.value)
                if found is not None:
                    return found
            called = self._forward(func, inf.fact(func, state), call, state)
            if called is not None:
                return called  # `self.layer(x)`: a submodule of a class of this file
            recv = inf.fact(func.value, state)
            if isinstance(recv, Callee):
                # `Factory.build()`: a class or static method called on a class of this file
                if recv.local and recv.receiver is None and recv.target in w.classes:
                    if func.attr.value == "apply":
                        applied = self._autograd_apply(recv.target)
                        if applied is not None:
                            return applied
                    return self._method(recv.target, func.attr.value, None, None, bound=False)
                return None
            cls = recv.cls if isinstance(recv, Instance) else _local_class(recv, w.ctx.path)
            return self._method(cls, func.attr.value, recv, dotted(func.value), bound=True)
        return None

    def _method(self, cls: Optional[str], name: str, recv, recv_path: Optional[str], bound: bool) -> Optional[_Target]:
        """The method `name` of a class of this file (inherited from a base of this file if
        need be) called on `recv`, an instance when `bound`, else through the class."""
        w = self.walker
        if cls is None or cls not in w.classes:
            return None
        method, there = w.method(w.classes[cls], name), None
        if method is None:
            method, there = self._inherited(w.classes[cls], name) or (None, None)
        if method is None or _is_property(method):
            return None
        target = self._method_target(method, cls, f"{cls}.{name}", recv if bound else None, recv_path if bound else None)
        target.walker = there
        return target

    def _autograd_apply(self, cls: str) -> Optional[_Target]:
        """`Fn.apply(...)` of a `torch.autograd.Function` of this file: its `forward` with a
        fresh context object first, and its `backward` afterwards with that context."""
        from .torchops.torchapi import AUTOGRAD_CTX
        w = self.walker
        klass = w.classes[cls]
        if w.method(klass, "apply") is not None or not self._derives_autograd_function(klass):
            return None
        forward, backward = w.method(klass, "forward"), w.method(klass, "backward")
        if forward is None or _method_kind(forward) != "staticmethod":
            return None
        target = _Target(forward, f"{cls}.forward", receiver=Instance(cls=AUTOGRAD_CTX), summary=True)
        if backward is not None and _method_kind(backward) == "staticmethod":
            target.backward = backward
        return target

    def _derives_autograd_function(self, klass: cst.ClassDef, depth: int = 0) -> bool:
        from .torchops.torchapi import AUTOGRAD_FUNCTIONS
        w = self.walker
        for base in klass.bases:
            if base.keyword is not None:
                continue
            if w.ctx.names.qualify(base.value) in AUTOGRAD_FUNCTIONS:
                return True
            if (isinstance(base.value, cst.Name) and base.value.value in w.classes and depth < 8
                    and self._derives_autograd_function(w.classes[base.value.value], depth + 1)):
                return True
        return False

    def _inherited(self, klass: cst.ClassDef, name: str, depth: int = 0) -> Optional[tuple]:
        """(method, walker of its module) of a method a class of this file inherits from a
        base class imported from another module of the project; None when a base whose
        methods are not known (a library's) could hold it."""
        from .project.models import project_index
        w = self.walker
        ctx = w.ctx
        index = project_index()
        for base in klass.bases:
            if base.keyword is not None:
                continue
            if not isinstance(base.value, cst.Name):
                return None
            if base.value.value in w.classes:
                found = self._inherited(w.classes[base.value.value], name, depth + 1) if depth < 8 else None
                if found is not None:
                    return found
                continue
            qualname = index.resolve_name(base.value.value, ctx.path, ctx.source)
            ctx.dependencies.update(index.missing)
            info = index._class(qualname, ctx.path, ctx.source) if qualname is not None else None
            if info is None:
                return None
            file = os.path.abspath(info.path)
            there = self._walker_for(file)
            if there is None or info.name not in there.classes:
                return None
            ctx.dependencies.add(file)
            foreign = there.classes[info.name]
            method = there.method(foreign, name)
            if method is not None:
                return method, there
            if any(b.keyword is None and not (isinstance(b.value, cst.Name) and b.value.value in there.classes)
                   for b in foreign.bases):
                return None  # its own bases are not all known
        return None

    @staticmethod
    def _method_target(method: cst.FunctionDef, cls: str, label: str, recv, recv_path) -> _Target:
        kind = _method_kind(method)
        if kind == "staticmethod":
            return _Target(method, label, summary=True)
        if kind == "classmethod":
            return _Target(method, label, receiver=Callee(target=cls, local=True), summary=True)
        # through the class (`Factory.build(obj)`) the instance is an explicit argument
        return _Target(method, label, receiver=recv, receiver_path=recv_path, summary=True)

    def _super(self, name: str, state) -> Optional[_Target]:
        """`super().name(...)` inside a method of a class of this file: the method of its
        first base that has it, when the bases before it are classes of this file too."""
        w = self.walker
        inf = w.ctx.inference
        scope = w.ctx.scope.node if w.ctx.scope is not None else None
        if not isinstance(scope, cst.FunctionDef):
            return None
        klass = next((k for k in w.classes.values()
                      if isinstance(k.body, cst.IndentedBlock) and any(s is scope for s in k.body.body)), None)
        if klass is None:
            return None
        method = None
        for base in klass.bases:
            if base.keyword is not None:
                continue
            if not isinstance(base.value, cst.Name) or base.value.value not in w.classes:
                return None  # a base whose methods are not known comes first
            method = w.method(w.classes[base.value.value], name)
            if method is not None:
                break
        if method is None or _is_property(method):
            return None
        cls = klass.name.value
        params = [*scope.params.posonly_params, *scope.params.params]
        recv = inf.lookup(params[0].name.value, state) if params and _method_kind(scope) is None else None
        if recv is None and _method_kind(method) is None:
            return None  # the instance is not known: nothing is bound to `self`
        return self._method_target(method, cls, f"{cls}.{name}", recv, params[0].name.value if recv is not None else None)

    def member(self, node: cst.Attribute, base, state) -> Optional[Fact]:
        """`obj.name` where the object does not hold `name` itself: the value of a property,
        a method bound to the object, or a class attribute, for a class of this file."""
        w = self.walker
        if isinstance(base, Callee):
            if not base.local or base.receiver is not None or base.target not in w.classes:
                return None
            cls, instance = base.target, False
        else:
            cls = base.cls if isinstance(base, Instance) else _local_class(base, w.ctx.path)
            instance = True
        if cls is None or cls not in w.classes:
            return None
        klass = w.classes[cls]
        name = node.attr.value
        key = (klass, name)
        if key not in self._members:
            # what the class gives the name, looked up once: classes can be long
            if w.method(klass, "__getattribute__") is not None:
                found = None  # every read goes through it
            else:
                found = w.method(klass, name)
                if found is None:
                    found = None if name in self._stored_attributes() else _ClassValue(w.class_attribute(klass, name))
            self._members[key] = found
        method = self._members[key]
        if isinstance(method, _ClassValue):
            return method.fact
        if method is not None:
            if _is_property(method):
                getter = instance and any(isinstance(d.decorator, (cst.Name, cst.Attribute))
                                          and _decorator_name(d) in ("property", "cached_property")
                                          for d in method.decorators)
                return self._property(method, f"{cls}.{name}", base, node, state) if getter else None
            kind = _method_kind(method)
            receiver = (Callee(target=cls, local=True) if kind == "classmethod"
                        else base if instance and kind is None else None)
            return Callee(target=f"{cls}.{name}", local=True, receiver=receiver)
        return None

    def _property(self, getter: cst.FunctionDef, label: str, base, node: cst.Attribute, state) -> Optional[Fact]:
        target = _Target(getter, label, receiver=base, receiver_path=dotted(node.value), summary=True)
        outcome = self._invoke(target, cst.Call(func=node), state, site=node)
        return outcome.returned if outcome is not None else None

    def _stored_attributes(self) -> frozenset:
        """Attribute names the file assigns or deletes anywhere (`x.name = ...`), or every
        name when it calls `setattr` with a name that is not a literal."""
        if self._stores is None:
            found = set()
            for n in walk(self.walker.module):
                targets = ()
                if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
                    targets = (n.target,)
                elif isinstance(n, cst.Del):
                    targets = (n.target,)
                elif (isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
                      and n.func.value in ("setattr", "delattr") and len(n.args) >= 2):
                    key = n.args[1].value
                    if isinstance(key, cst.SimpleString):
                        found.add(key.evaluated_value)
                    else:
                        found.add(_EVERY)
                for t in targets:
                    stack = [t]
                    while stack:
                        x = stack.pop()
                        if isinstance(x, (cst.Tuple, cst.List)):
                            stack.extend(e.value for e in x.elements)
                        elif isinstance(x, cst.StarredElement):
                            stack.append(x.value)
                        elif isinstance(x, cst.Attribute):
                            found.add(x.attr.value)
            self._stores = frozenset(found)
        if _EVERY in self._stores:
            return _ALL_NAMES
        return self._stores

    def _forward(self, func: cst.BaseExpression, fact, call: cst.Call, state) -> Optional[_Target]:
        """Calling a model of a class of this file runs its `forward`; of a class of another
        module of the project, that module's `forward` when its source can hold a hazard."""
        w = self.walker
        cls = _local_class(fact, w.ctx.path)
        if cls is None and isinstance(fact, Module) and fact.cls:
            return self._foreign_forward(func, fact, call, state)
        if cls is None or cls not in w.classes:
            return None
        method = w.method(w.classes[cls], "forward")
        if method is None or _is_static(method):
            return None
        return _Target(method, f"{cls}.forward", receiver=fact, receiver_path=dotted(func))

    def _foreign_model(self, qualname: str) -> Optional[tuple]:
        """(walker of its module, class node, file, name, whether its source holds a token)
        of a model class of another module of the project, looked up once."""
        from .project.models import project_index
        ctx = self.walker.ctx
        if qualname not in self._models:
            found = None
            index = project_index()
            info = index._class(qualname, ctx.path, ctx.source)
            ctx.dependencies.update(index.missing)
            if info is not None and os.path.abspath(info.path) != os.path.abspath(ctx.path):
                file = os.path.abspath(info.path)
                there = self._walker_for(file)
                klass = there.classes.get(info.name) if there is not None else None
                if klass is not None:
                    methods = index._methods_of(file, info.name)
                    tokens = bool(ctx.tokens) and any(ctx.tokens.search(c) for _, c in methods)
                    found = (there, klass, file, info.name, tokens)
            self._models[qualname] = found
        return self._models[qualname]

    def _foreign_forward(self, func: cst.BaseExpression, fact: Module, call: cst.Call, state) -> Optional[_Target]:
        """`model(x)` of a model class of another module: its `forward`, when the class's
        source holds a token or the call passes a fact a hazard can hang on."""
        found = self._foreign_model(fact.cls)
        if found is None:
            return None
        there, klass, file, name, tokens = found
        method = there.method(klass, "forward")
        if method is None or _is_static(method):
            return None
        inf = self.walker.ctx.inference
        if not tokens and not _relevant(fact) and not any(
                not a.star and _relevant(inf.fact(a.value, state)) for a in call.args):
            return None
        self.walker.ctx.dependencies.add(file)
        # in that module the instance is one of its own classes: its methods are followed there
        return _Target(method, f"{name}.forward", receiver=replace(fact, cls=f"{file}::{name}"),
                       receiver_path=dotted(func), walker=there)

    def _foreign_constructor(self, call: cst.Call, state) -> Optional[_Target]:
        """`Model(...)` of a model class of another module whose source holds a token: its
        `__init__`, run there, for what it stores on the instance (`self.adj = ...`)."""
        inf = self.walker.ctx.inference
        module = inf.models(call, inf, state) if inf.models is not None else None
        if not isinstance(module, Module) or not module.cls:
            return None
        found = self._foreign_model(module.cls)
        if found is None or not found[4]:
            return None
        there, klass, file, name, _ = found
        init = there.method(klass, "__init__")
        if init is None:
            return None
        self.walker.ctx.dependencies.add(file)
        return _Target(init, name, receiver=replace(module, cls=f"{file}::{name}"), klass=klass, makes="module",
                       walker=there, summary=True)

    def _imported(self, call: cst.Call, state, local: str, attribute: str) -> Optional[_Target]:
        """A function of another module of the project whose source can hold a hazard (the
        engine's prefilter found a token in it), or that the call passes a fact that can."""
        wanted = (f"{local}.{attribute}" if attribute else local) in self.walker.ctx.imported
        if not wanted:
            inf = self.walker.ctx.inference
            wanted = any(not a.star and _relevant(inf.fact(a.value, state)) and not isinstance(inf.fact(a.value, state), Callee)
                         for a in call.args)
        from .project.models import project_index
        index = project_index()
        ctx = self.walker.ctx
        found = index.resolve_function(local, ctx.path, ctx.source, attribute)
        ctx.dependencies.update(index.missing)
        if found is None:
            return None
        file, name = found
        if not wanted and not self._builds_literal_shape(file, name):
            return None
        walker = self._walker_for(file)
        if walker is None or name not in walker.functions:
            return None
        ctx.dependencies.add(file)
        return _Target(walker.functions[name], name, walker=walker)

    def _builds_literal_shape(self, file: str, name: str) -> bool:
        """Whether a function of another module can return a tensor whose shape is written
        out in its source (`return torch.tensor([[0, 1], [1, 2]])`), read by a regex."""
        key = (file, name)
        if key not in self._literal_sources:
            from .project.models import project_index
            from .torchops.torchapi import LITERAL_SHAPE_SOURCE
            code = project_index()._definition_text(file, name, set())
            self._literal_sources[key] = any(LITERAL_SHAPE_SOURCE.search(c) for c in code)
        return self._literal_sources[key]

    def _walker_for(self, file: str):
        """A walker over another module of the project, whose findings are this file's too."""
        if file not in self._foreign:
            parsed = _parse(file)
            walker = None
            if parsed is not None:
                from .context import Context
                from .cst.names import Names
                module, text, aliases = parsed
                here = self.walker.ctx
                shown = os.path.normpath(os.path.join(os.path.dirname(here.path),
                                                      os.path.relpath(file, os.path.dirname(os.path.abspath(here.path)))))
                ctx = Context(shown, text, Names(dict(aliases)), module)
                walker = type(self.walker)(module, ctx, self.walker.hooks)
                walker.collect()
            self._foreign[file] = walker
        return self._foreign[file]

    # -- analysing a callee --------------------------------------------------------------

    def _invoke(self, target: _Target, call: cst.Call, state, site: Optional[cst.CSTNode] = None) -> Optional[Outcome]:
        site = site if site is not None else call
        if target.node is None:
            attrs = self._fields(target.klass, call, state)
            return Outcome(returned=Instance(cls=target.name, attrs=attrs, fields=_tuple_fields(target.klass),
                                             evidence=(Evidence.at(call, f"an instance of `{target.name}`"),)))
        bound, paths, known = self._bind(target, call, state)
        # A function of another module is analysed even when nothing it is passed is known:
        # what it returns whatever its arguments (a fresh sparse tensor) is still a fact, as
        # the summary of a function of this file is.
        if bound is None:
            return None
        silent = not (known or target.walker is not None)
        if silent and not target.summary:
            return None
        if len(_ACTIVE) >= MAX_DEPTH or target.node in _ACTIVE:
            return None
        inf = self.walker.ctx.inference
        if target.walker is not None:
            # Another file: evidence is resolved to positions now, with its file, and the
            # callee's findings join this file's results.
            here = self.walker.ctx
            if isinstance(target.receiver, Instance):
                # `self` there is an object of a subclass it does not know: its methods are
                # not looked up among that module's classes
                bound = {k: replace(v, cls=f"{here.path}::{v.cls}") if v is target.receiver else v
                         for k, v in bound.items()}
            bound = {k: _portable(v, here, here.path) for k, v in bound.items()}
            there = target.walker
            before = len(there.ctx.diagnostics)
            saved = {k: _portable_evidence(e, here, here.path) for k, e in _saved_into(state.saved, paths).items()}
            result = there.calls._analyse(target.node, bound, {}, inf.grad_enabled, here.backward_follows(site), saved)
            if result is not None:
                result = _Result(_portable(result.returned, there.ctx, there.ctx.path),
                                 {k: _portable(v, there.ctx, there.ctx.path) for k, v in result.effects.items()},
                                 saved={k: _portable_evidence(e, there.ctx, there.ctx.path)
                                        for k, e in result.saved.items()},
                                 backward=result.backward)
            after = here.backward_after(site)
            for d in there.ctx.diagnostics[before:]:
                evidence = _with_call_site(d.evidence, here, site, target.name, after)
                here.diagnostics.append(replace(d, fix=None, evidence=evidence))
            here.dependencies.update(there.ctx.dependencies)
        else:
            # a call from module code sees the module's facts as they are now; a call from a
            # function sees the module's stable ones, as that function does
            outer = state.env if inf is self.walker.module_inference else inf.outer
            self.walker.silent += silent
            try:
                result = self._analyse(target.node, bound, outer, inf.grad_enabled, self.walker.ctx.backward_follows(site),
                                       _saved_into(state.saved, paths))
            finally:
                self.walker.silent -= silent
        if result is None:
            return None
        if target.backward is not None and self.walker.ctx.backward_follows(site):
            # autograd runs it only when a backward comes after the call
            self._run_backward(target, result, state)
        outcome = Outcome()
        if result.untracked:
            # whatever the call was given may have changed in ways not followed: forget it
            for arg in call.args:
                for path in _paths_in(arg.value):
                    outcome.effects[path] = None
        for key, fact in result.effects.items():
            if key.startswith(_GLOBAL):
                if target.walker is None:
                    outcome.effects[key[len(_GLOBAL):]] = fact
                continue
            root, _, rest = key.partition(".")
            caller = paths.get(root)
            if caller:
                outcome.effects[caller + ("." + rest if rest else "")] = fact
        outcome.backward = result.backward
        for key, evidence in result.saved.items():
            root, _, rest = key.partition(".")
            caller = paths.get(root)
            if caller:
                outcome.saved[caller + ("." + rest if rest else "")] = evidence
        if target.makes is not None:
            attrs = tuple((k[len("self."):], v) for k, v in result.effects.items()
                          if k.startswith("self.") and v is not None)
            receiver = target.receiver
            if target.makes == "module":
                attrs = tuple((k, v) for k, v in attrs if not isinstance(v, Module))
            outcome.returned = replace(receiver, attrs=attrs)
            outcome.effects = {k: v for k, v in outcome.effects.items() if not k.startswith("self")}
        elif isinstance(result.returned, Tensor):
            outcome.returned = result.returned.why(site, f"returned by `{target.name}()`")
        else:
            outcome.returned = result.returned
        return outcome

    def _run_backward(self, target: _Target, forward: _Result, state) -> None:
        """The `backward` of a custom autograd function, with its context holding what
        `forward` stored on it (`ctx.save_for_backward(t)` read back as `ctx.saved_tensors`,
        `ctx.scale = ...`). Autograd runs it without grad, as `loss.backward()` does."""
        from .torchops.torchapi import AUTOGRAD_CTX
        first = [*target.node.params.posonly_params, *target.node.params.params][0].name.value
        prefix = first + "."
        attrs = tuple((k[len(prefix):], v) for k, v in forward.effects.items()
                      if k.startswith(prefix) and "." not in k[len(prefix):] and v is not None)
        ctx_fact = Instance(cls=AUTOGRAD_CTX, attrs=attrs)
        params = [*target.backward.params.posonly_params, *target.backward.params.params]
        if not params or not _relevant(ctx_fact) or target.backward in _ACTIVE or len(_ACTIVE) >= MAX_DEPTH:
            return
        inf = self.walker.ctx.inference
        outer = state.env if inf is self.walker.module_inference else inf.outer
        self._analyse(target.backward, {params[0].name.value: ctx_fact}, outer, grad=False)

    def _fields(self, klass: cst.ClassDef, call: cst.Call, state) -> tuple:
        """Attributes of an object of a class without `__init__`: its class-level literal
        values, and for a dataclass the fields the call sets (`Config(sparse=True)`)."""
        inf = self.walker.ctx.inference
        fields: dict[str, Optional[Fact]] = {}
        order: list[str] = []
        for line in klass.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    order.append(small.target.value)
                    fields[small.target.value] = literal_fact(small.value)
                elif (isinstance(small, cst.Assign) and len(small.targets) == 1
                      and isinstance(small.targets[0].target, cst.Name)):
                    fields[small.targets[0].target.value] = literal_fact(small.value)
        if any(_decorator_name(d) == "dataclass" for d in klass.decorators) or _tuple_fields(klass) is not None:
            positional = [a for a in call.args if a.keyword is None]
            if any(a.star for a in call.args) or len(positional) > len(order):
                return ()
            for name, a in zip(order, positional):
                fields[name] = inf.fact(a.value, state)
            for a in call.args:
                if a.keyword is not None:
                    fields[a.keyword.value] = inf.fact(a.value, state)
        elif call.args:
            return ()
        return tuple((k, v) for k, v in fields.items() if v is not None)

    def _bind(self, target: _Target, call: cst.Call, state):
        """Parameter name -> fact at entry, parameter -> the caller's path for effects, and
        whether any fact the caller passed is known."""
        inf = self.walker.ctx.inference
        node = target.node
        p = node.params
        positional = [*p.posonly_params, *p.params]
        bound: dict[str, Fact] = {}
        paths: dict[str, str] = {}
        known = False
        if target.receiver is not None:
            if not positional:
                return None, paths, False
            first = positional[0].name.value
            bound[first] = target.receiver
            if target.receiver_path:
                paths[first] = target.receiver_path
                # what the caller knows of the receiver's attributes (`self.adj` set in __init__)
                prefix = target.receiver_path + "."
                for key, fact in state.env.items():
                    if key.startswith(prefix):
                        bound[first + key[len(prefix) - 1:]] = fact
            elif target.makes is not None:
                paths[first] = "self"
            positional = positional[1:]
            # a constructor always runs: what __init__ builds is what later method calls see
            known = any(_relevant(f) for f in bound.values()) or (
                target.makes is not None and self._init_holds_token(target.klass))
        by_name = {a.name.value: a for a in (*positional, *p.kwonly_params)}
        given: dict[str, cst.BaseExpression] = {}
        args = [a for a in call.args]
        if any(a.star for a in args):
            return None, paths, False
        # extra arguments are fine where the callee takes *args / **kwargs (not followed)
        takes_more = isinstance(p.star_arg, cst.Param)
        takes_keywords = isinstance(p.star_kwarg, cst.Param)
        for i, a in enumerate(a for a in args if a.keyword is None):
            if i >= len(positional):
                if takes_more:
                    continue
                return None, paths, False
            given[positional[i].name.value] = a
        for a in args:
            if a.keyword is not None:
                if a.keyword.value not in by_name:
                    if takes_keywords:
                        continue
                    return None, paths, False
                given[a.keyword.value] = a
        for name, param in by_name.items():
            if name in given:
                a = given[name]
                fact = inf.fact(a.value, state)
                if fact is None:
                    continue
                if _plain_value(fact):
                    # a number or a flag is bound (it decides branches), but makes a call worth
                    # following only when the callee passes it on
                    bound[name] = fact
                    keywords, anywhere = self._passed_on(node)
                    known = known or name in (keywords if isinstance(fact, Scalar) else anywhere)
                else:
                    code = self.walker.ctx.code(a.value)
                    bound[name] = with_evidence(fact, Evidence.at(a.value, f"`{code}` passed to `{target.name}()` as `{name}`"))
                    known = known or _relevant(fact)
                path = dotted(a.value)
                if path and name not in self._rebound_in(node):
                    paths[name] = path
            else:
                default = literal_fact(param.default)
                if default is not None:
                    bound[name] = default
        if not known and target.walker is None:
            # a function of this file that works on module-level state that matters (an
            # optimizer over sparse parameters) is worth following whatever it is passed
            outer = state.env if inf is self.walker.module_inference else inf.outer
            known = any(_relevant(outer.get(n)) for n in self._globals_read(node))
        return bound, paths, known

    def _passed_on(self, node: cst.FunctionDef) -> tuple[set[str], set[str]]:
        """Parameters a function passes on as a keyword argument (`sparse=sparse`,
        `sparse=cfg["sparse"]`), and as any call argument (`Model(cfg.sparse)`, `f(flag)`)."""
        if node not in self._passed:
            keywords, anywhere = set(), set()
            for n in walk(node.body):
                if isinstance(n, cst.Arg):
                    root = n.value
                    while isinstance(root, (cst.Attribute, cst.Subscript)):
                        root = root.value
                    if isinstance(root, cst.Name):
                        anywhere.add(root.value)
                        if n.keyword is not None:
                            keywords.add(root.value)
            self._passed[node] = (keywords, anywhere)
        return self._passed[node]

    def _writes_untracked(self, node: cst.FunctionDef, local: set[str]) -> bool:
        """It sets `.grad`, `.data` or `requires_grad` of something other than a parameter
        path or `self` (a loop variable, an element of a list)."""
        if node not in self._untracked:
            params = parameters_of(node)
            found = False
            for n in walk(node.body):
                target = None
                if isinstance(n, (cst.AssignTarget, cst.AugAssign)):
                    target = n.target
                elif (isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                      and n.func.attr.value in ("requires_grad_", "_coalesced_")):
                    target = cst.Attribute(value=n.func.value, attr=cst.Name("requires_grad"))
                if isinstance(target, cst.Attribute) and target.attr.value in ("grad", "data", "requires_grad"):
                    root = (dotted(target) or "").split(".")[0]
                    if root not in params:
                        found = True
                        break
            self._untracked[node] = found
        return self._untracked[node]

    def _globals_read(self, node: cst.FunctionDef) -> set[str]:
        """Names a function reads that it does not bind: the module's, or builtins."""
        if node not in self._free:
            params = parameters_of(node)
            local = params | self._rebound_in(node)
            self._free[node] = {n.value for n in walk(node.body) if isinstance(n, cst.Name)} - local
        return self._free[node]

    def _init_holds_token(self, klass: cst.ClassDef) -> bool:
        """Whether a class's `__init__` can build a fact itself (its source holds one of the
        rules' tokens), so that constructing it is worth following with nothing known."""
        name = klass.name.value
        if name not in self._init_tokens:
            import ast
            from .project.models import project_index
            ctx = self.walker.ctx
            loaded = project_index()._load(ctx.path, ctx.source)
            found = False
            if loaded is not None:
                lines = ctx.source.splitlines()
                for node in loaded[0].body:
                    if isinstance(node, ast.ClassDef) and node.name == name:
                        for item in node.body:
                            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                                code = "\n".join(lines[item.lineno - 1:item.end_lineno])
                                found = bool(ctx.tokens) and ctx.tokens.search(code)
                        break
            self._init_tokens[name] = found
        return self._init_tokens[name]

    def _rebound_in(self, node: cst.FunctionDef) -> set[str]:
        if node not in self._rebound:
            self._rebound[node] = assigned_names(node.body.body) if isinstance(node.body, cst.IndentedBlock) else set()
        return self._rebound[node]

    def _analyse(self, node: cst.FunctionDef, bound: dict[str, Fact], outer: dict[str, Fact],
                 grad: bool = True, backward_after: bool = False,
                 saved: Optional[dict[str, Evidence]] = None) -> Optional[_Result]:
        w = self.walker
        saved = saved or {}
        try:
            key = (node, tuple(sorted(bound.items(), key=lambda kv: kv[0])), bool(w.silent), grad, backward_after,
                   tuple(sorted(saved.items())))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._memo:
            return self._memo[key]
        initial: dict[str, Fact] = {}
        for name, fact in bound.items():
            initial[name] = fact
            for attr, sub in getattr(fact, "attrs", ()) or ():
                initial[f"{name}.{attr}"] = sub
        _ACTIVE.append(node)
        try:
            final, returns = w.callee(node, initial, outer, grad, backward_after, saved)
        finally:
            _ACTIVE.pop()
        returned = None
        if returns:
            returned = returns[0]
            from .evaluation.facts import join
            for r in returns[1:]:
                returned = join(returned, r)
        effects: dict[str, Optional[Fact]] = {}
        for name in bound:
            if name in self._rebound_in(node):
                continue
            prefix = name + "."
            keys = {k for k in final.env if k == name or k.startswith(prefix)}
            keys |= {k for k in initial if k == name or k.startswith(prefix)}
            for k in keys:
                before, after = initial.get(k), final.env.get(k)
                if after != before or (after is not None and before is None):
                    effects[k] = after
        # module globals the callee changed in place (an optimizer over them stepped)
        params = parameters_of(node)
        local = params | self._rebound_in(node)
        for k, fact in final.env.items():
            root = k.split(".")[0]
            if root not in local and root not in bound and k in outer and fact != outer[k]:
                effects[_GLOBAL + k] = fact
        result = _Result(returned, effects, self._writes_untracked(node, local))
        result.backward = bool(w._scope_summary(node)[1])
        for k, evidence in final.saved.items():
            root = k.split(".")[0]
            if root in bound and root not in self._rebound_in(node) and saved.get(k) != evidence:
                result.saved[k] = evidence
        if key is not None:
            self._memo[key] = result
        return result


def _saved_into(saved: dict[str, Evidence], paths: dict[str, str]) -> dict[str, Evidence]:
    """The caller's saved-for-backward paths, in the names of the callee's parameters."""
    out = {}
    for name, caller in paths.items():
        for key, evidence in saved.items():
            if key == caller or key.startswith(caller + "."):
                out[name + key[len(caller):]] = evidence
    return out


def _tuple_fields(klass: cst.ClassDef) -> Optional[tuple]:
    """The fields of a `typing.NamedTuple` class in order (what unpacking an instance binds)."""
    if not any(dotted(b.value) in ("NamedTuple", "typing.NamedTuple") for b in klass.bases):
        return None
    return tuple(small.target.value for line in klass.body.body if isinstance(line, cst.SimpleStatementLine)
                 for small in line.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name))


def _relevant(fact, depth: int = 0) -> bool:
    """A fact a hazard can hang on: something sparse, in a graph, with sparse gradients, or
    an object that leads to one. Calls that pass only other facts (a dense
    tensor that needs no grad, a dense model) are not worth a second analysis."""
    if isinstance(fact, Tensor):
        # data written out (`torch.tensor([[0, 1], [1, 2]])`) decides the construction checks
        # (indices and values that disagree) wherever it is used; a shape factory's result
        # (`torch.ones(3)`) is too common a dense argument to follow every call for
        return (fact.is_sparse or fact.grad in ("leaf", "nonleaf") or fact.grad_layout is not None
                or fact.values_of_sparse or fact.needs_sparse_grad or fact.literal is not None)
    if isinstance(fact, (Module, Params)):
        if fact.flags.has_sparse is True or fact.flags.sparse_param is True:
            return True
        return depth < 3 and any(_relevant(v, depth + 1) for _, v in getattr(fact, "attrs", ()))
    if isinstance(fact, Optimizer):
        return fact.params is not None and _relevant(fact.params, depth + 1)
    if isinstance(fact, Instance):
        return depth < 3 and any(_relevant(v, depth + 1) for _, v in fact.attrs)
    if isinstance(fact, Items):
        return depth < 3 and any(_relevant(v, depth + 1) for v in fact.items)
    # a function passed as a value is followed with the other facts of its call, not alone
    return False


def _parse(file: str) -> Optional[tuple]:
    from .project.models import project_index
    text = project_index()._text(file)
    if text is None:
        return None
    key = (file, hash(text))
    if key not in _PARSED:
        if len(_PARSED) > 64:
            _PARSED.clear()  # a long-lived process keeps a bounded number of module trees
        try:
            module = cst.parse_module(text)
            from .cst.names import Names
            _PARSED[key] = (module, text, tuple(Names.from_module(module).aliases.items()))
        except (cst.ParserSyntaxError, RecursionError):
            _PARSED[key] = None
    return _PARSED[key]


def _portable(fact, ctx, path: str):
    """The fact with its evidence resolved to positions in `ctx`'s file (named by `path`
    when that is not the file of the finding), so it can travel to another file."""
    if fact is None or not hasattr(fact, "evidence"):
        return fact
    resolved = tuple(e if e.path else replace(e, path=path) for e in ctx._resolve(fact.evidence))
    out = replace(fact, evidence=resolved)
    if getattr(fact, "values_of", None) is not None:
        out = replace(out, values_of=_portable(fact.values_of, ctx, path))
    if getattr(fact, "attrs", ()):
        out = replace(out, attrs=tuple((k, _portable(v, ctx, path)) for k, v in fact.attrs))
    if isinstance(fact, Items):
        out = replace(out, items=tuple(_portable(v, ctx, path) for v in fact.items))
    return out


# a call longer than this is shown as `f(...)` in evidence
_SHORT = 60


def _with_call_site(evidence: tuple, here, call: cst.Call, name: str, backward=None) -> tuple:
    """A finding in another module keeps a place in the calling file: the call, when no
    fact of this file already led there (what the finding hangs on may be the callee's own
    code, set off by this call's grad mode or the backward after it), and the backward of
    this file that runs after it."""
    line, column = here.position(call)
    if not line:
        return evidence
    if isinstance(backward, cst.Call) and not any(e.path == here.path and e.line == line and "reaches" in e.text
                                                   for e in evidence):
        spelled = here.code(call)
        if len(spelled) > _SHORT or "\n" in spelled:
            spelled = f"{here.code(call.func)}(...)" if isinstance(call, cst.Call) else name
        text = f"`{spelled}` reaches `{here.code(backward)}`"
        return (*evidence, Evidence(line, column, text, path=here.path))
    if any(e.path == here.path for e in evidence):
        return evidence
    return (*evidence, Evidence(line, column, f"`{name}()` called here", path=here.path))


def _portable_evidence(evidence: Evidence, ctx, path: str) -> Evidence:
    (resolved,) = ctx._resolve((evidence,))
    return resolved if resolved.path else replace(resolved, path=path)


def _paths_in(expr: cst.BaseExpression) -> set[str]:
    """The names and attribute chains an argument expression mentions (`[weight]`, `model`)."""
    found = set()
    for n in walk(expr):
        path = dotted(n) if isinstance(n, (cst.Name, cst.Attribute)) else None
        if path:
            found.add(path)
    return found


def _plain_value(fact, depth: int = 0) -> bool:
    """A literal, or a config (dict, dataclass, plain object) holding only literals."""
    if isinstance(fact, (Const, Scalar)):
        return True
    return (isinstance(fact, Instance) and depth < 3 and bool(fact.attrs)
            and all(_plain_value(v, depth + 1) for _, v in fact.attrs))


def _local_class(fact, path: str) -> Optional[str]:
    """The name of a class of this file that made a module fact."""
    import os
    if not isinstance(fact, Module) or not fact.cls:
        return None
    file, _, name = fact.cls.partition("::")
    return name if os.path.abspath(file) == os.path.abspath(path) else None


def _decorator_name(d: cst.Decorator) -> str:
    expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
    return expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""


_EVERY = object()


@dataclass(frozen=True)
class _ClassValue:
    fact: Optional[Fact]


class _AllNames(frozenset):
    def __contains__(self, item) -> bool:
        return True


_ALL_NAMES = _AllNames()


def _is_super(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"
            and not expr.args)


def _method_kind(node: cst.FunctionDef) -> Optional[str]:
    """"staticmethod", "classmethod", or None for a method bound to an instance."""
    for d in node.decorators:
        if isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod"):
            return d.decorator.value
    return None


def _is_property(node: cst.FunctionDef) -> bool:
    """A getter (`@property`, `@functools.cached_property`) or a setter/deleter of one."""
    for d in node.decorators:
        expr = d.decorator
        if isinstance(expr, cst.Name) and expr.value in ("property", "cached_property"):
            return True
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("setter", "deleter", "getter", "cached_property"):
            return True
    return False


def _is_static(node: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
               for d in node.decorators)
