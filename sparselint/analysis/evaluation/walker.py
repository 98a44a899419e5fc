"""One statement-ordered traversal of a module that drives inference and every rule.

Statements are visited in execution order: branches are analysed separately and joined, a
loop body is analysed twice (once silently, to learn what a previous iteration leaves
behind), functions are analysed after the module body with the module's stable bindings
visible. Before each statement's effects are applied, every rule hook for the node types
in that statement is called with a `Context` that answers questions at that point.
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager
from functools import reduce
from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from ..torchops import torchapi as api
from ..calls import Calls
from ..scopes import Scopes
from ..context import Context, Scope
from ...diagnostics import Evidence
from .facts import Callee, Const, Coroutine, Fact, Instance, Items, Module, Params, Scalar, Tensor, join, join_all
from .gradflags import NONE, UNKNOWN
from ..project.models import project_index
from ..entry import caller_key, entry_point
from .. import options, records
from ..options import acts as option_acts, configurations, literal_defaults
from .inference import Inference, State, join_states, literal
from .inference.containers import SEQUENCE_CONTAINERS, grown, layers_of
from ..cst.names import Names, dotted, is_torch
from .exceptions import ExceptionClasses
from ..cst.syntax import (assigned_names, backward_calls_in_block, parameter_loop_owner, parameters_of,
                          sparse_embedding_weights)
from ..cst.tree import children, walk

_NOT_ENTERED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_NOT_ENTERED_TYPES = frozenset(_NOT_ENTERED)
_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})
_NO_VALUE = object()  # a bare `return`
# Annotations that never name a model class of the project.
_NOT_MODELS = frozenset({"Tensor", "Optional", "Any", "List", "Dict", "Tuple", "Union", "Callable", "Sequence",
                         "Iterable", "Iterator", "Module", "Parameter", "Optimizer"})
# A module whose globals another module reads is run once per check when it is at most
# this long (a config, a registry); a longer one's globals stay unknown, to keep the cost low.
MAX_MODULE_FACTS_SOURCE = 20_000
# Deeper loops are analysed for their first iteration only, to keep the cost linear.
MAX_LOOP_DEPTH_TWICE = 3


class Walker:
    def __init__(self, module: cst.Module, ctx: Context, hooks: dict[str, list[Callable]]):
        self.module = module
        self.ctx = ctx
        self.hooks = hooks
        self.silent = 0
        self.summaries: dict[str, Optional[Fact]] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        self.classes: dict[str, cst.ClassDef] = {}
        self._summarising: set[str] = set()
        # (returned fact, state after the return) of each `return` of the function analysed
        self.returns: list[tuple[Optional[Fact], State]] = []
        # what each `yield` reached gives, in a generator function being analysed
        self.yields: Optional[list[Optional[Fact]]] = None
        self._generators: dict[cst.FunctionDef, Optional[bool]] = {}
        # the exceptions the `raise` statements of the `try` body being analysed raise
        # (None: one whose class is not known)
        self.raised: Optional[list[Optional[Instance]]] = None
        self._exceptions: Optional[ExceptionClasses] = None
        # the statement just analysed surely leaves the function, or the iteration of the
        # loop around it (`continue`, `break`)
        self.exited = False
        # per loop being walked, innermost last: the states at its `continue` and `break`
        # statements
        self._leaving: list[tuple[list[State], list[State]]] = []
        self.scopes = Scopes(module, ctx.source)
        self.calls = Calls(self)
        self.module_inference: Optional[Inference] = None
        self._module_names: Optional[tuple] = None
        self._scopes: dict[cst.FunctionDef, tuple[frozenset, list]] = {}
        # method -> (initial facts, outer facts) of each reported, non-entry run the class walk
        # gives it: a call on `self` starting it the same way reports nothing new
        self.method_starts: dict[cst.FunctionDef, list[tuple[dict, dict]]] = {}
        # what `_unrolled` reads of the syntax, once per loop and per iterated name: a
        # function is walked once per call site
        self._unroll_shapes: dict = {}
        self._unaliased_names: dict = {}
        self._dead_names: dict = {}
        # a per-element run of a loop is under way, and whether one of its tests was not
        # decided (see `_unrolled`)
        self._per_element = False
        self._undecided_at = 0
        self._undecided = False
        self._shared: dict = {}
        self._embedding_weights: dict[cst.CSTNode, dict] = {}
        # class -> the facts its body binds, and the module facts its body saw when it ran
        self._class_bodies: dict[cst.ClassDef, dict[str, Fact]] = {}
        # the module's stable top-level facts, for the modules that import from it
        self._module_facts: Optional[dict[str, Fact]] = None
        self._module_counts: Optional[dict[str, int]] = None
        self._class_outer: dict[cst.ClassDef, dict[str, Fact]] = {}
        # function -> its parameters' defaults, evaluated when its `def` ran
        self._defaults: dict[cst.FunctionDef, dict[str, Optional[Fact]]] = {}
        # class -> the inference and the final state of its body's run
        self._class_scopes: dict[cst.ClassDef, tuple] = {}
        # class -> its fields when it is a dataclass or a NamedTuple (sparselint.analysis.records)
        self.records: dict = {}

    @property
    def exceptions(self) -> ExceptionClasses:
        if self._exceptions is None:
            self._exceptions = ExceptionClasses(self.module, self.classes)
        return self._exceptions

    # -- scopes ------------------------------------------------------------------------

    def collect(self) -> None:
        """The functions and classes the module defines at its top level."""
        for st in self.module.body:
            if isinstance(st, cst.FunctionDef):
                self.functions[st.name.value] = st
            elif isinstance(st, cst.ClassDef):
                self.classes[st.name.value] = st

    def run(self) -> None:
        body = self.module.body
        self.collect()
        inference = self._inference(self.ctx.names, {}, frozenset())
        inference.sparse_weights = self._sparse_weights(self.module, body, inference.names)
        self.module_inference = inference
        scope = Scope(self.module, backward_calls_in_block(body))
        final = self.scope(body, State(), inference, scope)
        stable = self._stable_globals(body, final)
        for st in body:
            self.definitions(st, stable)

    def module_facts(self) -> dict[str, Fact]:
        """The facts the module body leaves in names bound once (what `from here import
        NAME` gives another module), found by running the body once, silently."""
        if self._module_facts is None:
            self._module_facts = {}  # an import cycle back here sees nothing
            if len(self.ctx.source) > MAX_MODULE_FACTS_SOURCE:
                return self._module_facts  # not worth running its body: its names stay unknown
            body = self.module.body
            if not self.functions and not self.classes:
                self.collect()
            inference = self._inference(self.ctx.names, {}, frozenset())
            inference.sparse_weights = self._sparse_weights(self.module, body, inference.names)
            if self.module_inference is None:
                self.module_inference = inference
            self.silent += 1
            try:
                final = self.scope(body, State(), inference, Scope(self.module, backward_calls_in_block(body)))
            finally:
                self.silent -= 1
            self._module_facts = self._stable_globals(body, final)
        return self._module_facts

    def module_changed(self, path: str, fact: Optional[Fact]) -> None:
        """A call from another module changed a global of this one (a registry filled)."""
        facts = self.module_facts()
        if path.split(".")[0] not in facts:
            return
        prefix = path + "."
        for key in [k for k in facts if k.startswith(prefix)]:
            del facts[key]
        if fact is None:
            facts.pop(path, None)
        else:
            facts[path] = fact

    def bound_once(self, name: str) -> bool:
        """The module binds the name in one place only (an import, a `def`, one assignment)."""
        return self.times_bound(name) == 1

    def times_bound(self, name: str) -> int:
        """In how many places the module binds the name."""
        if self._module_counts is None:
            self._module_counts = {}
            assigned_names(self.module.body, count=self._module_counts)
        return self._module_counts.get(name, 0)

    def _inference(self, names: Names, outer: dict, locals_: frozenset) -> Inference:
        # made for every run of every body: what it reads of the module is worked out once
        # (`collect` only ever adds the module's definitions, so their count tells a change)
        key = (len(self.functions), len(self.classes))
        if self._module_names is None or self._module_names[0] != key:
            self._module_names = (key, frozenset(self.functions) | frozenset(self.classes), ":=" in self.ctx.source,
                                  frozenset(_MUTATED.findall(self.ctx.source or "")))
        inf = Inference(names, self.summary, outer, locals_, models=self.model_of, calls=self.calls,
                        project_names=self._module_names[1])
        inf.walrus_possible = self._module_names[2]
        inf.mutated = self._module_names[3]
        inf.module_node = self.module
        return inf

    def definitions(self, st: cst.CSTNode, outer: dict[str, Fact]) -> None:
        """Analyse every function and class defined by a statement, at any nesting."""
        if isinstance(st, cst.FunctionDef):
            self.function(st, outer)
        elif isinstance(st, cst.ClassDef):
            self.klass(st, outer)
        elif isinstance(st, (cst.If, cst.Try, cst.With, cst.For, cst.While)):
            for child in _child_statements(st):
                self.definitions(child, outer)

    def klass(self, node: cst.ClassDef, outer: dict[str, Fact]) -> None:
        methods = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
        base: dict[str, Fact] = {}
        init = next((m for m in methods if m.name.value == "__init__"), None)
        # Inside its methods, an `nn.Module` of this file is the instance its defaults build.
        module = None
        if self.classes.get(node.name.value) is node and project_index().may_own_parameters(
                node.name.value, self.ctx.path, self.ctx.source):
            module = self.calls.default_instance(f"{os.path.abspath(self.ctx.path)}::{node.name.value}", node)
        if module is not None:
            base["self"] = module
        elif self.classes.get(node.name.value) is node:
            # an object of a plain class: `self.method(...)` can be followed
            base["self"] = Instance(cls=node.name.value)
        # the public methods of a public class of the module are entry points too, run in
        # each configuration its constructor's options admit
        api = self.classes.get(node.name.value) is node and not node.name.value.startswith("_")
        configs: list = [{}]  # first with nothing known of what the constructor is passed
        if api and init is not None and self.ctx.public_module:
            configs += configurations(init, node.name.value, node)
        for config in configs:
            self_facts = dict(base)
            if init is not None:
                final = self.function(init, outer, initial={**self_facts, **config})
                reassigned = set()
                # an entry point is called on an object fresh from its constructor (`Model(...).fit(data)`):
                # what other methods may assign later is not there yet
                for m in methods if not (api and self.ctx.public_module) else ():
                    if m is not init:
                        reassigned |= {p for p in assigned_names(m.body.body, attributes=True) if p.startswith("self.")}
                self_facts.update({k: v for k, v in final.env.items()
                                   if k.startswith("self.") and k.split(".")[1] not in {r.split(".")[1] for r in reassigned}
                                   and not _mutable(v)})
            if not self.silent:
                for m in methods:
                    if m is not init and not (api and self.ctx.public_module and entry_point(m, node.name.value)):
                        self.method_starts.setdefault(m, []).append((self_facts, outer))
            for m in methods:
                if m is not init:
                    self.function(m, outer, initial=self_facts, method=node.name.value if api else None)
        for st in node.body.body:
            if isinstance(st, cst.ClassDef):
                self.klass(st, outer)

    def function(self, node: cst.FunctionDef, outer: dict[str, Fact], silent: bool = False,
                 initial: Optional[dict[str, Fact]] = None, method: Optional[str] = None) -> State:
        entry = None
        if self.ctx.public_module and not silent and (
                method or (initial is None and self.functions.get(node.name.value) is node)):
            # a public function or method of a package: its callers are outside the check
            entry = entry_point(node, method)
        final, returned = self._body(node, outer, initial, silent, entry=entry)
        if entry is not None and self._has_options(node):
            # once more as a caller who passes nothing gets it: the literal defaults, and a
            # record-class config built from its own; then once per other value the code
            # admits for one option of its config, the rest at their defaults
            admitted: dict = {}
            token = options.collect(admitted)
            try:
                self._body(node, outer, initial, silent, entry=replace(entry, defaults=True))
            finally:
                options.stop(token)
            for turned in options.turns(admitted):
                before = len(self.ctx.diagnostics)
                self._body(node, outer, initial, silent, entry=replace(entry, defaults=True, turned=turned))
                self._name_option(before, turned[1])
        name = node.name.value
        # what an entry point's callers may pass is not what this module's calls pass: its
        # returns are no summary
        if name not in self.summaries and returned and entry is None:
            fact = returned[0]
            for r in returned[1:]:
                fact = join(fact, r)
            self.summaries[name] = fact
        if not silent:
            for st in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
                self.definitions(st, {})
        return final

    def callee(self, node: cst.FunctionDef, initial: dict[str, Fact], outer: dict[str, Fact],
               grad_enabled: bool = True, backward_after=False, saved_for_backward=None):
        """Analyse a function for one call site: the facts at its end (joined with those at
        each `return`) and the facts it returns. The caller's position is kept; a call made
        under `torch.no_grad()` runs its callee without grad."""
        ctx = self.ctx
        saved = (ctx.loops, ctx.statement, ctx.line_node, ctx.state, ctx.backward_after_call)
        ctx.loops = []
        ctx.backward_after_call = backward_after
        try:
            return self._body(node, outer, initial, False, grad_enabled, saved_for_backward)
        finally:
            ctx.loops, ctx.statement, ctx.line_node, ctx.state, ctx.backward_after_call = saved

    def _body(self, node: cst.FunctionDef, outer: dict[str, Fact], initial, silent: bool, grad_enabled: bool = True,
              saved=None, entry=None):
        locals_, backward = self._scope_summary(node)
        names = self.ctx.names.without(locals_)
        inference = self._inference(names, outer, locals_)
        inference.scope_node = node
        inference.entry = entry
        inference.sparse_weights = self._sparse_weights(node, node.body.body if isinstance(node.body, cst.IndentedBlock) else (), names)
        decorated = self._decorated_grad_mode(node, names)
        inference.grad_enabled = grad_enabled if decorated is None else decorated
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        scope = Scope(node, backward)
        saved_returns, self.returns = self.returns, []
        saved_exit, self.exited = self.exited, False
        generator = self._generator(node)
        saved_yields, self.yields = self.yields, ([] if generator else None)
        # a `try` of the caller does not see this body's raises as its own
        saved_raised, self.raised = self.raised, None
        # what the caller's forward ops saved, under the parameters' names
        state = State(dict(initial or {}), dict(saved or {}))
        written = self.scopes.writes(node, self.functions)
        if written:
            # a name it rebinds in an enclosing scope starts as that scope has it, and is then
            # followed as its own variable (it never falls back to a stale outer fact)
            for k, v in outer.items():
                if k.split(".")[0] in written and k not in state.env:
                    state.env[k] = v
        self._annotated_models(node, state)
        for param in entry.rebound if entry is not None else ():
            state.env[caller_key(param)] = Const(True)
        inference.enter(state)
        if entry is not None:
            state = inference.documented(node, state)
        if entry is not None and entry.defaults:
            self._entry_defaults(node, state, entry)
            self._default_configs(node, state, inference, entry)
        self.silent += silent
        filtered = _filter_generator(node) if generator and node.asynchronous is None else None
        at_entry = state.copy() if filtered is not None else None
        try:
            final = self.scope(body, state, inference, scope)
        finally:
            self.silent -= silent
        exits, yielded = self.returns, self.yields
        self.returns, self.yields, self.raised = saved_returns, saved_yields, saved_raised
        self.exited = saved_exit
        for _, at_return in exits:
            final = join_states(final, at_return)
        returned = [f for f, _ in exits if f is not _NO_VALUE]
        if generator is not None:
            # calling it runs nothing yet: it gives a generator of what its body yields
            every = join_all(yielded) if generator and node.asynchronous is None else None
            returned = [Items((every,), "generator", counted=False) if every is not None else None]
            if filtered is not None:
                # `for p in model.parameters(): if p.requires_grad: yield p` is the generator
                # expression it spells out: a model's parameters, filtered as that is
                with self.evaluating(inference):
                    made = inference.fact(filtered, at_entry)
                if isinstance(made, Params):
                    returned = [made]
        elif node.asynchronous is not None:
            # calling it gives a coroutine: awaiting it gives what the body returns (None
            # when it returns nothing)
            returned = [Coroutine(join_all(returned) if returned else Const(value=None))]
        return final, returned

    def _generator(self, node: cst.FunctionDef) -> Optional[bool]:
        """None for a function that does not yield; for a generator function, whether every
        `yield` sits in a simple statement (where the walker reads what it yields)."""
        if node not in self._generators:
            every = read = 0
            if "yield" in self.ctx.source:
                # one pass: each `yield`, and whether a simple statement holds it
                stack = [(node.body, False)]
                while stack:
                    n, simple = stack.pop()
                    t = type(n)
                    if t in _NOT_ENTERED_TYPES:
                        continue
                    if t is cst.Yield:
                        every += 1
                        read += simple
                    simple = simple or t is cst.SimpleStatementLine
                    stack.extend((c, simple) for c in children(n))
            self._generators[node] = (read == every) if every else None
        return self._generators[node]

    def _yielded(self, node: cst.Yield, state: State) -> list[Optional[Fact]]:
        """What a `yield` gives: its value, or the elements of what `yield from` iterates
        (what every one is, when how many there are is not known)."""
        inf = self.ctx.inference
        if node.value is None:
            return [Const(value=None)]
        if isinstance(node.value, cst.From):
            elements = inf.iterated(node.value.item, state)
            return list(elements) if elements is not None else [inf.every_element(node.value.item, state)]
        return [inf.fact(node.value, state)]

    def defaults_of(self, node: cst.FunctionDef) -> dict[str, Optional[Fact]]:
        """Parameter -> the fact of its default. A `def` the walk has not run (a method, a
        function of a module read for a call into it) has its defaults evaluated with no
        name known: literals and what torch builds from them."""
        found = self._defaults.get(node)
        if found is None:
            alone, state = self._inference(self.ctx.names, {}, frozenset()), State()
            saved, self.ctx.inference = self.ctx.inference, alone
            try:
                for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
                    made = param.default
                    if (type(made) is cst.Call and type(made.func) is cst.Name and self.calls is not None
                            and self.calls.is_record_class(made.func.value)):
                        # `cfg: OptimConfig = OptimConfig()`: the record its field defaults build
                        self.calls.prepare(made, state)
                found = self._defaults[node] = _evaluate_defaults(node, alone, state)
            finally:
                self.ctx.inference = saved
        return found

    def _scope_summary(self, node: cst.FunctionDef) -> tuple[frozenset, list]:
        """A function's locals and backward calls: computed once, however many call sites
        analyse it."""
        found = self._scopes.get(node)
        if found is None:
            body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
            locals_ = frozenset(parameters_of(node) | {p.split(".")[0] for p in self.scopes.assigned(node)}
                                | self.scopes.writes(node, self.functions))
            found = self._scopes[node] = (locals_, backward_calls_in_block(body))
        return found

    def _sparse_weights(self, node, body, names: Names) -> dict:
        """The tensors a scope gives sparse grads through `F.embedding(..., sparse=True)`,
        computed once per scope (and only in a file that mentions an embedding)."""
        if "embedding" not in self.ctx.source:
            return {}
        found = self._embedding_weights.get(node)
        if found is None:
            found = self._embedding_weights[node] = sparse_embedding_weights(list(body), names.qualify)
        return found

    def method(self, klass: cst.ClassDef, name: str, depth: int = 0) -> Optional[cst.FunctionDef]:
        """A method of a class of this file, inherited from a base of this file if need be."""
        for st in klass.body.body:
            if isinstance(st, cst.FunctionDef) and st.name.value == name:
                return st
        if depth < 8:
            for base in klass.bases:
                if isinstance(base.value, cst.Name) and base.value.value in self.classes:
                    found = self.method(self.classes[base.value.value], name, depth + 1)
                    if found is not None:
                        return found
        return None

    def class_attribute(self, klass: cst.ClassDef, name: str, depth: int = 0) -> Optional[Fact]:
        """The fact of an attribute the class body (or a base of this file) binds, read
        through the class or an instance (`C.ADJ`, `self.ADJ`)."""
        body = [s for s in klass.body.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        if name in assigned_names(body):
            return self._class_body(klass, body).get(name)
        if depth < 8:
            for base in klass.bases:
                if base.keyword is not None:
                    continue
                if not isinstance(base.value, cst.Name) or base.value.value not in self.classes:
                    return None  # a base whose attributes are not known comes first
                found = self.class_attribute(self.classes[base.value.value], name, depth + 1)
                if found is not None:
                    return found
        return None

    def _class_body(self, klass: cst.ClassDef, body: list) -> dict[str, Fact]:
        """The class body run once, silently, with the facts the enclosing scope had when the
        class was defined."""
        found = self._class_bodies.get(klass)
        if found is not None:
            return found
        self._class_bodies[klass] = {}
        locals_ = frozenset(p.split(".")[0] for p in assigned_names(body))
        inference = self._inference(self.ctx.names.without(locals_), self._class_outer.get(klass, {}), locals_)
        ctx = self.ctx
        saved = (ctx.loops, ctx.statement, ctx.line_node, ctx.state, ctx.backward_after_call)
        saved_returns, saved_exit, saved_raised = self.returns, self.exited, self.raised
        ctx.loops, self.returns, self.exited, self.raised = [], [], False, None
        self.silent += 1
        try:
            final = self.scope(body, State(), inference, Scope(klass, []))
        finally:
            self.silent -= 1
            self.returns, self.exited, self.raised = saved_returns, saved_exit, saved_raised
            ctx.loops, ctx.statement, ctx.line_node, ctx.state, ctx.backward_after_call = saved
        self._class_scopes[klass] = (inference, final)
        found = self._class_bodies[klass] = {k: v for k, v in final.env.items() if "." not in k and v is not None}
        return found

    def class_scope(self, klass: cst.ClassDef) -> tuple:
        """The inference of a class body and the facts at its end (the body is run once)."""
        if klass not in self._class_scopes:
            if klass in self._class_bodies:
                # its body is running now (a default that reads the class): nothing known yet
                return self.module_scope_inference(klass), State()
            body = [s for s in klass.body.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
            self._class_body(klass, body)
        return self._class_scopes[klass]

    def module_scope_inference(self, klass: cst.ClassDef) -> Inference:
        """An inference over the module's names as they were when the class was defined (what
        a function or lambda of its body sees)."""
        return self._inference(self.ctx.names, self._class_outer.get(klass, {}), frozenset())

    @contextmanager
    def evaluating(self, inference: Inference):
        """Evaluate with `inference` as the current scope's, so calls in what is evaluated are
        resolved in that scope."""
        saved = self.ctx.inference
        self.ctx.inference = inference
        try:
            yield
        finally:
            self.ctx.inference = saved

    def module_of_class(self, name: str, where: cst.CSTNode) -> Optional[Module]:
        """An instance of an `nn.Module` class of this file before its constructor runs (what
        it is made of is known once `__init__` has run: calls.py); None for other classes."""
        return self.module_shell(f"{os.path.abspath(self.ctx.path)}::{name}", where)

    def module_shell(self, qualname: str, where: cst.CSTNode) -> Optional[Module]:
        index = project_index()
        info = index.module_class(qualname, self.ctx.path, text=self.ctx.source)
        self.ctx.dependencies.update(index.missing)
        if info is None:
            return None
        self.ctx.dependencies.update(info.files)
        # (a class whose bases are all known is the torch layer it derives from, or only a module)
        layer = info.torch_base or ("torch.nn.Module" if info.bases_known else None)
        return Module(kind=info.name, flags=UNKNOWN, parts=None, cls=qualname, layers=(("", layer),) if layer else (),
                      evidence=(
            Evidence.at(where, f"an instance of `{info.name}` ({os.path.basename(info.path)}:{info.line})"),))

    def _annotated_models(self, node: cst.FunctionDef, state: State) -> None:
        """`def train(model: Recommender)`: the parameter is an instance of that model class,
        as its defaults build it."""
        for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            name = p.name.value
            if name in state.env or p.annotation is None or not isinstance(p.annotation.annotation, cst.Name):
                continue
            cls = p.annotation.annotation.value
            if cls in _NOT_MODELS or cls[:1].islower():
                continue
            index = project_index()
            qualname = index.resolve_name(cls, self.ctx.path, self.ctx.source)
            if qualname is None:
                continue
            module = self.calls.default_instance(qualname, p)
            if isinstance(module, Module) and module.flags.has_sparse is True:
                state.env[name] = replace(module, evidence=(Evidence.at(p, f"annotated as `{cls}`"), *module.evidence[1:]))

    def _has_options(self, node: cst.FunctionDef) -> bool:
        """Whether an entry point has keyword defaults or an annotated parameter, and code
        that can act on them (see `options.acts`)."""
        p = node.params
        if not any(x.default is not None or x.annotation is not None for x in (*p.posonly_params, *p.params, *p.kwonly_params)) \
                and not isinstance(p.star_kwarg, cst.Param):
            return False
        return option_acts(node)

    def _entry_defaults(self, node: cst.FunctionDef, state: State, entry) -> None:
        """An entry point called without a keyword gets its literal default: a caller of
        `fit(optimizer="Adam")` who passes nothing runs with Adam."""
        says = (lambda name, shown: f"the default `{name}={shown}` of `{entry.function}()`, what a caller who "
                                    "passes nothing gets")
        for name, fact in literal_defaults(node, says).items():
            state.env.setdefault(name, fact)
        kwargs = node.params.star_kwarg
        if isinstance(kwargs, cst.Param) and kwargs.name.value not in state.env:
            # `**overrides`: empty, or holding the one option a caller sets in this run
            name = kwargs.name.value
            given = ()
            if entry.turned is not None and entry.turned[0].param == name and not entry.turned[0].record:
                given = ((entry.turned[0].key, entry.turned[1]),)
            state.env[name] = Instance(cls="dict", attrs=given, keys=tuple(k for k, _ in given),
                                       caller=(name, entry.function),
                                       evidence=(Evidence.at(kwargs, f"`**{name}` of `{entry.function}()`"),))

    def _default_configs(self, node: cst.FunctionDef, state: State, inference, entry) -> None:
        """`def train(cfg: Config)` as an entry point: a user may pass `Config()`, so the
        parameter holds what a record class of the project builds from its defaults."""
        for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            name = p.name.value
            if name in state.env or p.annotation is None or not isinstance(p.annotation.annotation, cst.Name):
                continue
            cls = p.annotation.annotation.value
            if cls in _NOT_MODELS or cls[:1].islower():
                continue
            if self.calls.is_record_class(cls):
                # a run that turns one of its fields passes it, as the caller would: the
                # constructor's own code (`__post_init__`) sees it
                turned = entry.turned if entry.turned is not None and entry.turned[0].param == name else None
                given = [cst.Arg(keyword=cst.Name(turned[0].key), value=_spelled(turned[1].value))] if turned else []
                call = cst.Call(func=cst.Name(cls), args=given)
                saved, self.ctx.inference = self.ctx.inference, inference
                try:
                    self.calls.prepare(call, state)
                    made = inference.fact(call, state)
                finally:
                    self.ctx.inference = saved
            else:
                made = self._plain_config(cls, entry.turned if entry.turned is not None
                                          and entry.turned[0].param == name else None)
            if isinstance(made, Instance) and made.attrs:
                attrs = tuple((attr, replace(sub, evidence=(Evidence.at(p, f"`{name}.{attr}` is `{sub.value!r}` in "
                                                                           f"`{cls}()`, the defaults a caller may pass"),))
                               if isinstance(sub, (Const, Scalar)) else sub) for attr, sub in made.attrs)
                attrs = self._record_options(cls, name, attrs, entry)
                state.env[name] = replace(made, attrs=attrs, evidence=(Evidence.at(p, f"annotated as `{cls}`"),))
                for attr, sub in attrs:
                    state.env[f"{name}.{attr}"] = sub

    def _plain_config(self, cls: str, turned: Optional[tuple]) -> Optional[Instance]:
        """An object of a plain class of the project that only holds class-level literal
        defaults (`class TrainConfig: optimizer = "adam"`): what its attributes read, one
        of them set by the caller in a run that turns it."""
        index = project_index()
        qualname = index.resolve_name(cls, self.ctx.path, self.ctx.source)
        info = index._class(qualname, self.ctx.path, self.ctx.source) if qualname is not None else None
        defaults = records.class_defaults(info.node) if info is not None else None
        if not defaults:
            return None
        if turned is not None and turned[0].key in defaults:
            defaults = {**defaults, turned[0].key: turned[1].value}
        attrs = tuple((k, literal_fact_of(v)) for k, v in defaults.items())
        return Instance(cls=cls, attrs=tuple((k, f) for k, f in attrs if f is not None))

    def _record_options(self, cls: str, param: str, attrs: tuple, entry) -> tuple:
        """The fields of a record-class config a caller builds: each default an option of
        the entry point (a `Literal[...]` field admits its members); in a run that turns one
        option, that field holds the value turned to."""
        index = project_index()
        qualname = index.resolve_name(cls, self.ctx.path, self.ctx.source)
        info = index._class(qualname, self.ctx.path, self.ctx.source) if qualname is not None else None
        fields = records.field_annotations(info.node) if info is not None else {}
        # its file as this file's findings show other files: relative to where this one is
        here = self.ctx.path
        shown = os.path.normpath(os.path.join(os.path.dirname(here), os.path.relpath(
            info.path, os.path.dirname(os.path.abspath(here))))) if info is not None else ""
        out = []
        for attr, sub in attrs:
            option = options.Option(param, attr, entry.function, record=True)
            if entry.turned is not None and entry.turned[0] == option:
                # what the constructor made of the value passed, with why it was passed
                turned = entry.turned[1]
                out.append((attr, turned if isinstance(sub, Const) and sub.value == turned.value else sub))
                continue
            annotation, default, statement = fields.get(attr, (None, None, None))
            where = Evidence(default.lineno, default.col_offset + 1, "", path=shown) if default is not None else None
            sub = options.as_option(sub, option, where)
            for member in records.literal_members(annotation):
                options.admit(sub, member.value, Evidence(member.lineno, member.col_offset + 1, "", path=shown),
                              "a member of its `Literal` annotation")
            if statement is not None and isinstance(getattr(sub, "value", None), str):
                for value, line, column in records.documented_values(self._lines_of(info.path), statement):
                    options.admit(sub, value, Evidence(line, column, "", path=shown), "a value its comment names")
            out.append((attr, sub))
        return tuple(out)

    def _name_option(self, before: int, value: Fact) -> None:
        """A finding first made in a run that turns an option says which value it turned to,
        also where no fact carries it there (a branch the value decides)."""
        why = self.ctx._resolve(value.evidence)
        for i in range(before, len(self.ctx.diagnostics)):
            d = self.ctx.diagnostics[i]
            if not any(e.text == w.text for e in d.evidence for w in why):
                self.ctx.diagnostics[i] = replace(d, evidence=(*why, *d.evidence))

    def _lines_of(self, path: str) -> list:
        """The lines of a file of the project: this file's text as checked, others' on disk."""
        if os.path.abspath(path) == os.path.abspath(self.ctx.path):
            return self.ctx.source.splitlines()
        import linecache
        return linecache.getlines(path)

    def summary(self, name: str) -> Optional[Fact]:
        """What a module-level function of this file returns, whatever its arguments."""
        if name in self.summaries:
            return self.summaries[name]
        node = self.functions.get(name)
        if node is None or name in self._summarising:
            return None
        self._summarising.add(name)
        try:
            self.function(node, {}, silent=True)
        finally:
            self._summarising.discard(name)
        return self.summaries.setdefault(name, None)

    def model_of(self, call: cst.Call, inference=None, state=None) -> Optional[Module]:
        """An instance of a model class of this project, built by this call, when its
        constructor was not run (what it is made of is then not known)."""
        index = project_index()
        called = dotted(call.func)
        if called is None or not called.split(".")[-1][:1].isupper():
            return None  # a class by naming convention; functions are never models
        if isinstance(call.func, cst.Name):
            qualname = index.resolve_name(call.func.value, self.ctx.path, self.ctx.source)
        elif isinstance(call.func, cst.Attribute):
            # `import models.mf as m; m.MF(...)`
            head, _, rest = called.partition(".")
            qualname = index.resolve_name(head, self.ctx.path, self.ctx.source, attribute=rest)
        else:
            return None
        return self.module_shell(qualname, call) if qualname is not None else None

    def _decorated_grad_mode(self, node: cst.FunctionDef, names: Names) -> bool:
        for deco in node.decorators:
            expr = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
            q = names.qualify(expr)
            if q in api.GRAD_MODES:
                return api.GRAD_MODES[q]
        return None

    def _stable_globals(self, body, final: State) -> dict[str, Fact]:
        counts: dict[str, int] = {}
        for p in assigned_names(body, attributes=True, count=counts):
            pass
        out = {}
        rebound = self.scopes.module_writes()  # a function's `global` statement can rebind these
        for k, v in final.env.items():
            if counts.get(k.split(".")[0], 0) > 1 or _mutable(v) or k.split(".")[0] in rebound:
                continue
            # a module-level list of parameters may be changed in place by any function: only
            # what a display of them would say is kept, not its elements
            out[k] = replace(v, items=None) if isinstance(v, Params) and v.items is not None else v
        return out

    # -- statements --------------------------------------------------------------------

    def scope(self, body, state: State, inference: Inference, scope: Scope) -> State:
        outer_scope, outer_inf = self.ctx.scope, self.ctx.inference
        self.ctx.scope, self.ctx.inference = scope, inference
        try:
            return self.block(body, state)
        finally:
            self.ctx.scope, self.ctx.inference = outer_scope, outer_inf

    def block(self, stmts, state: State) -> State:
        """The statements in order, up to one that surely leaves the function (`return`,
        `raise`, or an `if` whose every branch taken does): what follows is not reached."""
        for st in stmts:
            state = self.statement(st, state)
            if self.exited:
                break
        return state

    def _branch(self, run) -> tuple[State, bool]:
        self.exited = False
        out = run()
        exited, self.exited = self.exited, False
        return out, exited

    def statement(self, node: cst.CSTNode, state: State) -> State:
        if type(node) in _GUARDS:
            # what runs inside may not run every time the statements around it do
            self.ctx.guards.append(node)
            try:
                return self._statement(node, state)
            finally:
                self.ctx.guards.pop()
        return self._statement(node, state)

    def _statement(self, node: cst.CSTNode, state: State) -> State:
        inf = self.ctx.inference
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.ctx.statement, self.ctx.line_node = small, node
                kind = type(small)  # exact types: `isinstance` of a LibCST class is slow
                importing = kind is cst.Import or kind is cst.ImportFrom
                if importing and inf is self.module_inference:
                    self.calls.run_imports(small)
                elif importing and not isinstance(small.names, cst.ImportStar):
                    # a name an import binds inside a function no longer holds what it held
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname is not None else alias.name
                        if isinstance(bound, cst.Name):
                            state.bind(bound.value, None)
                self.calls.prepare(small, state)
                self.dispatch(small, state)
                if self.yields is not None:
                    for y in _yields_in(small):
                        self.yields.extend(self._yielded(y, state))
                returned = inf.fact(small.value, state) if kind is cst.Return and small.value is not None else _NO_VALUE
                state = inf.apply(small, state)
                if kind is cst.Raise and self.raised is not None:
                    exc = inf.fact(small.exc, state) if small.exc is not None else None
                    self.raised.append(exc if isinstance(exc, Instance) else None)
                if kind is cst.Return:
                    self.returns.append((returned, state))
                if kind is cst.Return or kind is cst.Raise:
                    self.exited = True
                    break
                if (kind is cst.Continue or kind is cst.Break) and self._leaving:
                    # the rest of the body is not run on this path; the state goes on to
                    # the next iteration, or past the loop
                    self._leaving[-1][kind is cst.Break].append(state.copy())
                    self.exited = True
                    break
            return state
        if isinstance(node, cst.If):
            self.header(node, [node.test], state)
            state = inf.bind_walrus(node.test, state)
            # A test decided by literal facts (a flag passed to this call) runs one branch.
            decided = inf.truth(node.test, state)
            if decided is None and self._per_element and not self._undecided and self._undecided_part(
                    node.test, state, values_decide=not _skips_element(node)):
                self._undecided = True
                # (what the test itself raises is raised for this element, whichever way it goes)
                self._undecided_at = len(self.ctx.diagnostics)
            if decided is True:
                return self.block(node.body.body, inf.refine(node.test, state, True))
            if decided is False:
                otherwise = inf.refine(node.test, state, False)
                if node.orelse is None:
                    return otherwise
                if isinstance(node.orelse, cst.If):
                    return self.statement(node.orelse, otherwise)
                return self.block(node.orelse.body.body, otherwise)
            a, a_exits = self._branch(lambda: self.block(node.body.body, inf.refine(node.test, state, True)))
            otherwise = inf.refine(node.test, state, False)
            if node.orelse is None:
                b, b_exits = otherwise, False
            elif isinstance(node.orelse, cst.If):
                b, b_exits = self._branch(lambda: self.statement(node.orelse, otherwise))
            else:
                b, b_exits = self._branch(lambda: self.block(node.orelse.body.body, otherwise))
            # only a branch that does not leave the function continues after the `if`
            self.exited = a_exits and b_exits
            return b if a_exits and not b_exits else a if b_exits and not a_exits else join_states(a, b)
        if isinstance(node, cst.For):
            self.ctx.statement = self.ctx.line_node = node
            self.calls.prepare(node.iter, state)
            self.dispatch(node.iter, state)
            state = inf.bind_walrus(node.iter, state)
            if self._empty_default(node.iter) and inf.iterated(node.iter, state) == ():
                # over a parameter left at its default `()` (`extra=()`): the body never runs
                return self.block(node.orelse.body.body, state) if node.orelse is not None else state
            unrolled = self._unrolled(node, state)
            if unrolled is not None:
                return unrolled
            return self.loop(node, state, lambda s: inf.bind_loop_target(node.target, node.iter, s))
        if isinstance(node, cst.While):
            self.header(node, [node.test], state)
            state = inf.bind_walrus(node.test, state)
            return self.loop(node, state, lambda s: inf.bind_walrus(node.test, s).copy())
        if isinstance(node, cst.With):
            return self.with_block(node, state)
        if isinstance(node, (cst.Try, cst.TryStar)):
            return self.try_block(node, state)
        if isinstance(node, cst.Match):
            self.header(node, [node.subject], state)
            state = inf.bind_walrus(node.subject, state)
            out = None
            subject = inf.fact(node.subject, state)
            for case in node.cases:
                end = self._branch(lambda c=case: self.block(c.body.body, _bind_captures(c.pattern, subject, state.copy())))[0]
                out = end if out is None else join_states(out, end)
            return join_states(out, state) if out is not None else state
        if isinstance(node, cst.FunctionDef):
            # a `def` evaluates its defaults now, with the names bound so far
            self._defaults[node] = _evaluate_defaults(node, inf, state)
            return self.define(node, state)
        if isinstance(node, cst.ClassDef):
            if node not in self._class_outer:
                # its body runs now: class attributes see the names bound so far
                self._class_outer[node] = {**self.ctx.inference.outer, **state.env}
            return self.define(node, state)
        return state

    def try_block(self, node, state: State) -> State:
        """The body; each handler from any point of it, with `except E as e` bound to what
        the body's `raise` statements raise, when nothing else there can raise an `E`; the
        `else` after the body. Only the ends that do not leave the function go on."""
        outer_raised, self.raised = self.raised, []
        try:
            after_body, body_exits = self._branch(lambda: self.block(node.body.body, state.copy()))
            raised = self.raised
        finally:
            self.raised = outer_raised
        entry = join_states(state, after_body)
        ends = []
        if not body_exits:
            if node.orelse is not None:
                end, exits = self._branch(lambda: self.block(node.orelse.body.body, after_body))
                if not exits:
                    ends.append(end)
            else:
                ends.append(after_body)
        caught = self._caught(node, raised)
        for handler, exception in zip(node.handlers, caught):
            start = entry.copy()
            name = handler.name.name if handler.name is not None and isinstance(handler.name, cst.AsName) else None
            if name is not None:
                self.ctx.inference._bind(name, exception, start, None)
            end, exits = self._branch(lambda h=handler, s=start: self.block(h.body.body, s))
            if not exits:
                if name is not None and dotted(name):
                    end = end.copy()
                    end.bind(dotted(name), None)  # Python deletes it when the handler ends
                ends.append(end)
        if self.raised is not None:
            # what no handler surely catches goes on to an enclosing `try`
            self.raised.extend(e for e, c in zip(raised, self._matched(node, raised)) if not c)
        if not ends:
            out, self.exited = entry, True
        else:
            out = ends[0]
            for e in ends[1:]:
                out = join_states(out, e)
        if node.finalbody is not None:
            exited, self.exited = self.exited, False
            out = self.block(node.finalbody.body.body, out)
            self.exited = self.exited or exited
        return out

    def _handled(self, handler) -> Optional[frozenset]:
        """The class names an `except` clause names, or None when one is not known."""
        if handler.type is None:
            return frozenset({"BaseException"})
        types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
        out = set()
        for t in types:
            t = t.value if isinstance(t, cst.Element) else t
            if (not isinstance(t, cst.Name) or t.value in self.ctx.inference.locals
                    or self.exceptions.ancestry(t.value) is None):
                return None
            out.add(t.value)
        return frozenset(out)

    def _matched(self, node, raised: list) -> list[bool]:
        """Whether each raised exception is surely caught by one of the handlers."""
        handled = [self._handled(h) for h in node.handlers]
        out = []
        for exc in raised:
            chain = self.exceptions.ancestry(exc.cls) if exc is not None else None
            out.append(chain is not None and any(h is not None and h & chain for h in handled))
        return out

    def _caught(self, node, raised: list) -> list[Optional[Fact]]:
        """For each handler, the join of the exceptions the body raises that reach it, when
        they are all known and nothing else in the body can raise one it catches."""
        out = []
        left = list(raised)  # not caught by an earlier handler
        risky = None
        for handler in node.handlers:
            handled = self._handled(handler)
            if handled is None or any(e is None or self.exceptions.ancestry(e.cls) is None for e in left):
                out.append(None)
                left = [] if handled is None else left
                continue
            hit = [e for e in left if handled & self.exceptions.ancestry(e.cls)]
            left = [e for e in left if not handled & self.exceptions.ancestry(e.cls)]
            builtin = any(self.exceptions.builtin(n) for n in handled)
            if risky is None:
                risky = _may_raise(node.body, self.ctx.inference.names,
                                   lambda n: n not in self.ctx.inference.locals and self.exceptions.ancestry(n) is not None)
            if not hit or risky[1] or (builtin and risky[0]):
                out.append(None)
                continue
            out.append(join_all(hit))
        return out

    def define(self, node, state: State) -> State:
        """A `def` or `class` binds its name, then each decorator is called on it, innermost
        first (what they do runs now: a registry they fill holds the function). In a
        function a nested `def` is a value, with the enclosing facts it reads, or what the
        decorators return; at module level the name keeps meaning the function or class of
        this file (the decorators are taken to return it)."""
        inf = self.ctx.inference
        name = node.name.value
        nested = (isinstance(node, cst.FunctionDef) and self.ctx.scope is not None
                  and isinstance(self.ctx.scope.node, cst.FunctionDef))
        out = state.copy()
        out.bind(name, self.calls.function_value(node, inf, state) if nested else None)
        if not node.decorators:
            return out
        saved = (self.ctx.statement, self.ctx.line_node)
        self.ctx.statement = self.ctx.line_node = node
        try:
            for line in self.calls.decoration(node, name):
                expr = line.body[0]
                self.calls.prepare(expr, out)
                result = inf.fact(expr.value, out)
                out = inf.apply(expr, out)
                out.bind(name, result if nested else None)
        finally:
            self.ctx.statement, self.ctx.line_node = saved
        return out

    def header(self, node, exprs, state: State) -> None:
        self.ctx.statement = self.ctx.line_node = node
        for e in exprs:
            self.calls.prepare(e, state)
        self._call_hooks(node, state)
        for e in exprs:
            self.dispatch(e, state)

    def loop(self, node, state: State, bind) -> State:
        """Analyse the body for the first iteration, then again from the state the first
        iteration leaves behind (what the second iteration sees); findings of both count."""
        body = node.body.body
        self.ctx.loops.append(node)
        inf = self.ctx.inference
        outer_owners = inf.loop_owners
        inf.loop_owners = {**outer_owners, **parameter_loop_owner(node), **self._layer_loop_owner(node, state)}
        try:
            self.ctx.statement = self.ctx.line_node = node
            self._call_hooks(node, state)
            first = bind(state)
            dead = self._dead_at_entry(node)
            start = _live_part(first, dead) if dead is not None else None
            end, broken = self._iteration(body, first)
            if len(self.ctx.loops) <= MAX_LOOP_DEPTH_TWICE:
                again = bind(end)
                # an iteration that starts where the first did sees what the first saw
                if start is None or _live_part(again, dead) != start:
                    self.ctx.statement = self.ctx.line_node = node
                    self._call_hooks(node, end)
                    second, more = self._iteration(body, again)
                    end, broken = join_states(end, second, grown), broken + more
        finally:
            self.ctx.loops.pop()
            inf.loop_owners = outer_owners
        # A loop that surely runs and never breaks leaves what its iterations leave. One over
        # what the facts say is empty (which may be filled where it is not followed) is not
        # taken to have run, as one over what is not known is when it appends layers.
        empty = type(node) is cst.For and inf.iterated(node.iter, state) == ()
        out = end if _runs_through(node) else join_states(state, end, None if empty else grown)
        for at_break in broken:
            out = join_states(out, at_break)
        if node.orelse is not None:
            out = self.block(node.orelse.body.body, out)
        return out

    def _iteration(self, body, state: State) -> tuple[State, list[State]]:
        """One run of a loop's body: the state the next iteration starts from (where the
        body ends or `continue`s), and the states at its `break` statements."""
        self._leaving.append(([], []))
        try:
            end, exits = self._branch(lambda: self.block(body, state))
        finally:
            continued, broken = self._leaving.pop()
        ends = continued if exits else [end, *continued]
        if not ends:
            return end, broken  # every path leaves the loop or the function
        return reduce(join_states, ends), broken

    def _parameter_owners(self, node: cst.For, elements: tuple, state: State) -> dict:
        """For a loop over `X.parameters()` / `X.named_parameters()` of a model known by path:
        id of each element run -> {parameter variable: (X, the parameter names it stands
        for)}. An element stands for every parameter whose fact it is (one run per kind)."""
        it = node.iter
        if not (_parameters_call(it) and it.func.attr.value in ("parameters", "named_parameters")):
            return {}
        owner = dotted(it.func.value)
        source = self.ctx.inference.fact(it, state)
        if owner is None or not isinstance(source, Params) or source.parts is None:
            return {}
        from .inference.effects import elements_of
        every = elements_of(source)
        if every is None or len(every) != len(source.parts):
            return {}
        named = it.func.attr.value == "named_parameters"
        target = node.target
        if named:
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2
                    and isinstance(target.elements[1].value, cst.Name)):
                return {}
            variable = target.elements[1].value.value
        elif isinstance(target, cst.Name):
            variable = target.value
        else:
            return {}
        out = {}
        for element in elements:
            names = tuple(n for (n, _), e in zip(source.parts, every) if e == element)
            if names:
                out[id(element)] = {variable: (owner, names)}
        return out

    def _undecided_part(self, test: cst.BaseExpression, state: State, values_decide: bool = True) -> bool:
        """Whether a part of a test is not decided, `x is None` checks and the truth of a
        tensor aside: a gradient that may be missing, or one that may hold a NaN
        (`torch.isfinite(p.grad).all()`), is what every walk takes both ways; neither picks
        an element by what it is."""
        if isinstance(test, cst.BooleanOperation):
            return (self._undecided_part(test.left, state, values_decide)
                    or self._undecided_part(test.right, state, values_decide))
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._undecided_part(test.expression, state, values_decide)
        if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
                and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"):
            return False
        if self.ctx.inference.truth(test, state) is not None:
            return False
        return not (values_decide and self._tensor_valued(test, state))

    def _tensor_valued(self, expr: cst.BaseExpression, state: State) -> bool:
        """A tensor, torch's result, or a comparison or method of one (`torch.isfinite(g).all()`,
        `p.grad.norm() > 10`): a value the data decides."""
        inf = self.ctx.inference
        if isinstance(inf.fact(expr, state), Tensor):
            return True
        if type(expr) is cst.Comparison:
            # (`p in skip`, `p is head.weight` ask which parameter it is)
            return all(isinstance(c.operator, _ORDERING) for c in expr.comparisons) and any(
                self._tensor_valued(e, state) for e in (expr.left, *(c.comparator for c in expr.comparisons)))
        if type(expr) is cst.Call:
            q = inf.names.qualify(expr.func) or ""
            if is_torch(q):
                return q.split(".")[-1] in _DATA_READS
            return (type(expr.func) is cst.Attribute and expr.func.attr.value in _DATA_READS
                    and self._tensor_valued(expr.func.value, state))
        return False

    def _dead_at_entry(self, node) -> Optional[frozenset]:
        """The locals of a loop in a function that every iteration binds before anything
        reads them: what the previous iteration left in them cannot matter. None outside a
        function, where a call may read any global."""
        if node in self._dead_names:
            return self._dead_names[node]
        scope = self.ctx.scope.node if self.ctx.scope is not None else None
        found = None
        if isinstance(scope, cst.FunctionDef):
            shared = self._shared_names(scope)
            read = {n.value for part in _loop_header(node) for n in walk(part) if isinstance(n, cst.Name)}
            dead = set()
            for st in node.body.body:
                bound = _simply_bound(st)
                value = st.body[0].value if bound else st
                read |= {n.value for n in walk(value) if isinstance(n, cst.Name)}
                dead |= {name for name in bound or () if name not in read and name not in shared}
            found = frozenset(dead)
        self._dead_names[node] = found
        return found

    def _shared_names(self, function: cst.FunctionDef) -> frozenset:
        """Names a function's nested functions and lambdas read or its `global`/`nonlocal`
        statements declare: another scope sees them."""
        found = self._shared.get(function)
        if found is None:
            names = set()
            for n in walk(function.body):
                if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    names |= {m.value for m in walk(n) if isinstance(m, cst.Name)}
                elif isinstance(n, (cst.Global, cst.Nonlocal)):
                    names |= {item.name.value for item in n.names}
            found = self._shared[function] = frozenset(names)
        return found

    def _unrolled(self, node: cst.For, state: State) -> Optional[State]:
        """A `for` over a few known, different elements (`for opt in [adam, sparse_adam]:`)
        whose body branches on nothing: each iteration with its own element, in order. A
        join of the elements would lose what one of them is (the sparse group among the
        dense ones). A body that tests anything (`if opt is dense:`: which object an
        element is, is not modelled) or leaves early is left to `loop`."""
        if len(self.ctx.loops) >= MAX_LOOP_DEPTH_TWICE:
            return None
        shape = self._unroll_shapes.get(node)
        if shape is None:
            targets = {n.value for n in walk(node.target) if isinstance(n, cst.Name)}
            fits = (isinstance(node.target, (cst.Name, cst.Tuple)) and node.orelse is None
                    and self._calls_nothing_followed(node.body, targets, targets - _element_names(node)))
            shape = self._unroll_shapes[node] = (fits, fits and _straight(node.body), fits and _tests_of_each(node.body),
                                                 fits and _fills_lists(node.body))
        fits, straight, per_element, fills = shape
        inf = self.ctx.inference
        if not fits:
            layers = self._layers_of_kinds(node, state)
            # (a test the facts do not decide for a layer, `isinstance(layer, SelfLoop)` or one
            # a helper makes, may keep it from the lines below: the loop is walked joined then)
            return self._each_element(node, state, layers, False) if layers is not None else None
        # a model's parameters: their facts are what the engine tracked of the collection,
        # so they need no look at who else holds the list
        params = _parameters_call(node.iter) or isinstance(inf.fact(node.iter, state), Params)
        if not (straight or (params and per_element)):
            return None
        elements = inf.iterated(node.iter, state)
        held = inf.fact(node.iter, state) if params else None
        if isinstance(held, Params) and held.parts == () and held.flags == NONE and not held.items:
            # a module that holds no parameter of its own (`m.parameters(recurse=False)` of
            # the model, met first in a loop over `model.modules()`): the body never runs
            return state
        # (a model's one parameter, or one kind of them, is known better on its own than as
        # the join a plain loop takes of its collection)
        fewest = 1 if params else 2
        if params and not fills:
            # (a body that appends them to a list runs for each one: once per kind would
            # leave the list too short)
            if elements is not None:
                # many alike: the body runs once for each kind of them, in the order they
                # first come (the sparse embedding's before the dense layers')
                elements = tuple(e for i, e in enumerate(elements) if e not in elements[:i])
            elif straight or _name_unread(node):
                # not all known by name (a layer whose parameters are not modelled): once for
                # each kind it surely holds, the sparse one alone if need be; not where the
                # body reads the name, which is not known here (`if "emb" in name:`)
                elements, fewest = inf.parameter_kinds(node.iter, state), 1
        # a split of a model's parameters into lists (by name: the usual weight-decay groups),
        # or a body that tests their names, runs for each of them, as many as a model has
        most = MAX_PARAMETERS_FILED if params else MAX_UNROLLED
        if elements is None or not fewest <= len(elements) <= most \
                or (len(elements) > 1 and all(e == elements[0] for e in elements)):
            return None
        if not params and not self._unaliased(node.iter):  # last: it reads the whole scope
            layers = self._layers_of_kinds(node, state)  # (objects of different classes: one by one still)
            return self._each_element(node, state, layers, False) if layers is not None else None
        return self._each_element(node, state, elements, params)

    def _layer_loop_owner(self, node, state: State) -> dict:
        """{loop variable: X} for `for t in X` (or `enumerate(X)`) over a ModuleList or
        Sequential X: what a change to the loop variable's module changes."""
        if type(node) is not cst.For:
            return {}
        it, target = _enumerated(node)
        path = dotted(it) if type(it) in (cst.Name, cst.Attribute) else None
        if path is None or not isinstance(target, cst.Name):
            return {}
        held = self.ctx.inference.fact(it, state)
        return {target.value: path} if isinstance(held, Module) and held.layer_class() in SEQUENCE_CONTAINERS else {}

    def _empty_default(self, it: cst.BaseExpression) -> bool:
        """A parameter of this function whose default is the empty tuple, which nothing can
        fill (a list the analysis sees empty may be filled where it is not followed)."""
        scope = self.ctx.inference.scope_node
        if type(it) is not cst.Name or not isinstance(scope, cst.FunctionDef):
            return False
        return any(p.name.value == it.value and isinstance(p.default, cst.Tuple) and not p.default.elements
                   for p in (*scope.params.params, *scope.params.kwonly_params))

    def _layers_of_kinds(self, node: cst.For, state: State) -> Optional[tuple]:
        """The layers of a ModuleList of project layers of different classes (`for layer in
        self.layers: x = layer(x, adj)`), the objects of a list of them (`for cb in
        callbacks: cb.on_after_backward(model)`), or a list of different functions of the
        project (`for t in self.transforms: adj = t(adj)`), each run as its own: a join of
        them is none of them, whose code would not be followed. Also `enumerate` of one."""
        if not isinstance(node.target, (cst.Name, cst.Tuple)) or node.orelse is not None or any(
                isinstance(n, (cst.Break, cst.Return, cst.Yield, cst.Await, cst.Try, cst.TryStar)) for n in walk(node.body)):
            return None  # (a handler may catch what one layer raises)
        held = self.ctx.inference.fact(_enumerated(node)[0], state)
        if isinstance(held, Items) and held.counted and held.kind in ("list", "tuple"):
            layers = held.items  # `for cb in callbacks:` over objects of different classes
        elif isinstance(held, Module) and held.parts is not None and held.classes:
            layers = layers_of(held)
        else:
            return None
        kinds = [_kind_of(m) for m in layers] if layers is not None else []
        if not 2 <= len(kinds) <= MAX_OBJECTS_UNROLLED or None in kinds or len(set(kinds)) < 2:
            return None
        return self.ctx.inference.iterated(node.iter, state)

    def _each_element(self, node: cst.For, state: State, elements: tuple, params: bool) -> State:
        """The loop's body run once for each of these elements, in order."""
        inf = self.ctx.inference
        self.ctx.loops.append(node)
        start = state
        outer = self._per_element, self._undecided, self._undecided_at
        # a test the body makes that is not decided for an element (`if name in FROZEN:`,
        # `if p in skip:`, `isinstance(m, ProjectTable)`) could keep that element from the
        # lines below: then this run is not what the program does, and the loop is walked
        # as one joined element instead
        self._per_element, self._undecided = True, False
        owners = self._parameter_owners(node, elements, state) if params else {}
        outer_parts, outer_owners = dict(inf.element_parts), inf.loop_owners
        inf.loop_owners = {**outer_owners, **parameter_loop_owner(node), **self._layer_loop_owner(node, state)}
        try:
            for element in elements:
                self.ctx.statement = self.ctx.line_node = node
                self._call_hooks(node, state)
                bound = state.copy()
                inf._bind(node.target, element, bound, None)
                inf.element_parts = {**outer_parts, **owners.get(id(element), {})}
                state, _ = self._iteration(node.body.body, bound)
                if self._undecided:
                    break
            undecided, since = self._undecided, self._undecided_at
        finally:
            self.ctx.loops.pop()
            self._per_element, self._undecided, self._undecided_at = outer
            inf.element_parts, inf.loop_owners = outer_parts, outer_owners
        if undecided:
            self.ctx.withdraw(since)
            return self.loop(node, start, lambda s: inf.bind_loop_target(node.target, node.iter, s))
        return state

    def _calls_nothing_followed(self, body: cst.BaseSuite, targets: set, objects: set) -> bool:
        """Whether the calls of a loop body are torch's, a few builtins', methods of an
        element (`opt.step()`), or functions given none of the elements' objects (`objects`,
        the loop variables other than the names `named_parameters()` pairs them with): a
        function of the project followed with one element could test it where the body does
        not (`if opt is dense_opt:` inside a helper); one given only a parameter's name
        (`p.register_hook(make_hook(name))`) cannot."""
        qualify = self.ctx.inference.names.qualify
        for n in walk(body):
            if type(n) is not cst.Call:
                continue
            func = n.func
            if type(func) is cst.Name and func.value in _PLAIN_BUILTINS:
                continue
            if type(func) is cst.Attribute and func.attr.value in _LIST_METHODS and (type(func.value) is cst.Name or (
                    type(func.value) is cst.IfExp and type(func.value.body) is cst.Name
                    and type(func.value.orelse) is cst.Name) or (
                    type(func.value) is cst.Subscript and type(func.value.value) is cst.Name)):
                # `decay.append(p)`, `(no_decay if bias else decay).append(p)`,
                # `groups["decay"].append(p)`: lists filled per element
                continue
            if is_torch(qualify(func) or ""):
                continue
            root, of_torch = func, False
            while type(root) in (cst.Attribute, cst.Call, cst.Subscript):
                # (through calls too: the inner calls of `p.grad._values().clamp_()` are
                # checked on their own, and so is `torch.isfinite(p.grad)` of `.all()` on it)
                if type(root) is cst.Call and is_torch(qualify(root.func) or ""):
                    of_torch = True
                    break
                root = root.func if type(root) is cst.Call else root.value
            if type(func) is cst.Attribute and (of_torch or (type(root) is cst.Name and root.value in targets)):
                continue
            if type(func) is cst.Name and func.value not in targets and not any(
                    type(x) is cst.Name and x.value in objects for a in n.args for x in walk(a.value)):
                continue
            return False
        return True

    def _unaliased(self, iterable: cst.BaseExpression) -> bool:
        """A list written out in the loop header, or a name bound once in this scope to one
        and otherwise only iterated: no other name can have changed it in between
        (`config["optimizers"].remove(opt)` on the same list)."""
        if isinstance(iterable, (cst.List, cst.Tuple)) or _parameters_call(iterable):
            return True  # `model.parameters()` makes a new generator each time
        if type(iterable) is not cst.Name:
            return False
        name = iterable.value
        scope = self.ctx.scope.node if self.ctx.scope is not None else self.module
        key = (scope, name)
        if key not in self._unaliased_names:
            self._unaliased_names[key] = _only_bound_once_and_iterated(scope, name)
        return self._unaliased_names[key]

    def with_block(self, node: cst.With, state: State) -> State:
        inf = self.ctx.inference
        self.header(node, [item.item for item in node.items], state)
        previous = inf.grad_enabled
        for item in node.items:
            mode = self._grad_mode_of(item.item)
            if mode is not None:
                inf.grad_enabled = mode
        out = state.copy()
        for item in node.items:
            out = inf.bind_walrus(item.item, out)
        for item in node.items:
            if item.asname is not None:
                # what `__enter__` returns: `x` for `contextlib.nullcontext(x)`, the method's
                # result for an object of a class of this file; any other manager's is unknown
                inf._bind(item.asname.name, self._entered(item.item, state), out, None)
        try:
            end = self.block(node.body.body, out)
        finally:
            inf.grad_enabled = previous
        exited, self.exited = self.exited, False
        for item in reversed(node.items):
            self.calls.leave(item.item, end)
        self.exited = exited
        return end

    def _entered(self, expr: cst.BaseExpression, state: State) -> Optional[Fact]:
        inf = self.ctx.inference
        if not isinstance(expr, cst.Call) or inf.names.qualify(expr.func) != "contextlib.nullcontext":
            return self.calls.entered(expr, state)
        if not expr.args:
            return Const(value=None)
        if len(expr.args) != 1 or expr.args[0].star or (expr.args[0].keyword is not None
                                                        and expr.args[0].keyword.value != "enter_result"):
            return None
        return inf.fact(expr.args[0].value, state)

    def _grad_mode_of(self, expr: cst.BaseExpression) -> Optional[bool]:
        names = self.ctx.inference.names
        func = expr.func if isinstance(expr, cst.Call) else expr
        q = names.qualify(func)
        if q in api.GRAD_MODES:
            if q == "torch.inference_mode" and isinstance(expr, cst.Call) and expr.args:
                if literal(expr.args[0].value) is False:
                    return None
            return api.GRAD_MODES[q]
        if q == api.SET_GRAD_ENABLED and isinstance(expr, cst.Call) and expr.args:
            v = literal(expr.args[0].value)
            return v if isinstance(v, bool) else None
        return None

    # -- rule dispatch -----------------------------------------------------------------

    def dispatch(self, root: cst.CSTNode, state: State) -> None:
        if self.silent or not self.hooks:
            return
        self.ctx.state = state
        parents = self.ctx.parents

        refine = self.ctx.inference.refine
        truth = self.ctx.inference.truth
        bind = self.ctx.inference.bind_loop_target
        hooked = self.hooks

        def walk(node: cst.CSTNode, parent: Optional[cst.CSTNode], st: State) -> None:
            parents[node] = parent
            t = type(node)
            if t.__name__ in hooked:  # most nodes have no rule looking at them
                self._call_hooks(node, st)
            if t in _NOT_ENTERED_TYPES:
                return
            if t in _COMPREHENSIONS and node.for_in.inner_for_in is None:
                kinds = self._parameter_kinds_of(node.for_in, st)
                if kinds is not None:
                    # over a model's parameters: each kind of them on its own (the sparse
                    # embedding's beside the dense layers'), as a loop over them runs
                    comp = node.for_in
                    parents[comp] = node
                    self._call_hooks(comp, st)
                    walk(comp.iter, comp, st)
                    for inner in kinds:
                        walk(comp.target, comp, inner)
                        for c in comp.ifs:
                            walk(c, comp, inner)
                        if all(truth(c.test, inner) is not False for c in comp.ifs):
                            for part in ("elt", "key", "value"):
                                sub = getattr(node, part, None)
                                if sub is not None:
                                    walk(sub, node, inner)
                    return
            if t in _COMPREHENSIONS:
                # a comprehension's expression sees its targets bound to the iterated elements
                inner = st
                comp = node.for_in
                owner = node
                while comp is not None:
                    parents[comp] = owner
                    self._call_hooks(comp, inner)
                    walk(comp.iter, comp, inner)
                    inner = bind(comp.target, comp.iter, inner)
                    walk(comp.target, comp, inner)
                    for c in comp.ifs:
                        walk(c, comp, inner)
                    owner, comp = comp, comp.inner_for_in
                for part in ("elt", "key", "value"):
                    sub = getattr(node, part, None)
                    if sub is not None:
                        walk(sub, node, inner)
                return
            if t is cst.IfExp:
                # `a if x.layout == torch.sparse_csr else b`: each arm sees what the test says;
                # an arm the facts decide against does not run (`SparseAdam(p) if sparse else
                # Adam(p)` with `sparse` known)
                walk(node.test, node, st)
                decided = truth(node.test, st)
                if decided is not False:
                    walk(node.body, node, refine(node.test, st, True))
                if decided is not True:
                    walk(node.orelse, node, refine(node.test, st, False))
                return
            if t is cst.BooleanOperation:
                # `CLIP and clip_grad_norm_(...)` with `CLIP = 0`: the right side never runs
                walk(node.left, node, st)
                decided = truth(node.left, st)
                if decided is None or decided == (type(node.operator) is cst.And):
                    walk(node.right, node, st)
                return
            for child in children(node):
                walk(child, node, st)

        try:
            walk(root, parents.get(root, self.ctx.line_node if root is not self.ctx.line_node else None), state)
        except RecursionError:
            pass

    def _parameter_kinds_of(self, comp: cst.CompFor, state: State) -> Optional[list]:
        """The states a comprehension over a model's parameters sees, one per kind of them
        (the sparse one alone, when it is the one kind surely held), when its filters are
        decided for each (`if p.grad is not None` aside): None otherwise."""
        inf = self.ctx.inference
        if not (_parameters_call(comp.iter) or isinstance(inf.fact(comp.iter, state), Params)):
            return None
        elements = inf.iterated(comp.iter, state)
        if elements is None and type(comp.target) is cst.Name:
            # not all known by name (a ModuleList built from a generator): each kind it
            # surely holds, where no name is read
            elements = inf.parameter_kinds(comp.iter, state)
        if elements is None:
            return None
        elements = [e for i, e in enumerate(elements) if e not in elements[:i]]
        if not 1 <= len(elements) <= MAX_PARAMETERS_FILED:
            return None
        out = []
        for element in elements:
            bound = state.copy()
            inf._bind(comp.target, element, bound, None)
            if any(self._undecided_part(c.test, bound) for c in comp.ifs):
                return None  # a filter that may keep this kind out (`if p is not model.emb.weight`)
            out.append(bound)
        return out

    def _call_hooks(self, node: cst.CSTNode, state: State) -> None:
        if self.silent:
            return
        hooks = self.hooks.get(type(node).__name__)
        if hooks:
            self.ctx.state = state
            if self.ctx.node_memo:
                self.ctx.node_memo.clear()
            for hook in hooks:
                hook(node, self.ctx)


def _evaluate_defaults(node: cst.FunctionDef, inference: Inference, state: State) -> dict[str, Optional[Fact]]:
    """A list or dict default is one object every call shares and may change (`acc=[]`): its
    facts at the def do not hold for later calls, so it is not known."""
    p = node.params
    out = {}
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        if param.default is not None:
            fact = inference.fact(param.default, state)
            shared = _mutable(fact) or (isinstance(fact, Instance) and fact.cls == "dict") or (
                isinstance(fact, Params) and fact.items is not None)
            out[param.name.value] = None if shared else fact
    return out


def _mutable(fact) -> bool:
    """A list whose elements are known where it is built (another function may edit it in
    place), or a generator (consumed once)."""
    return isinstance(fact, Items) and fact.kind != "tuple"


# names whose container the module changes in place somewhere (`NO_DECAY.append("emb")`,
# `SKIP[0] = ...`): what they were first bound to is not what every reader sees
_MUTATED = re.compile(r"\b([A-Za-z_]\w*)\s*(?:\.\s*(?:append|extend|insert|remove|pop|clear|add|update|discard|"
                      r"setdefault|popitem)\s*\(|\[[^\]\n]*\]\s*=[^=]|\+=|\|=)")

# compound statements whose body may run otherwise than the statements around them
_GUARDS = frozenset({cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match})
# a body walked once per element: for a few elements only
MAX_UNROLLED = 4
# objects of different classes (layers, callbacks) a loop runs one by one
MAX_OBJECTS_UNROLLED = 8
MAX_PARAMETERS_FILED = 32


def _parameters_call(node: cst.BaseExpression) -> bool:
    """`x.parameters()`, `x.modules()` and their kin, without arguments."""
    return (type(node) is cst.Call and type(node.func) is cst.Attribute and not node.args
            and node.func.attr.value in _MODEL_PARTS)


_MODEL_PARTS = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children",
                          "named_children"})
# callees a loop body may call and still be run once per element
_PLAIN_BUILTINS = frozenset({"print", "len", "range", "enumerate", "zip", "list", "tuple", "sum", "min", "max",
                             "sorted", "isinstance", "float", "int", "str", "any", "all", "abs", "bool", "round"})
_BRANCHING = (cst.If, cst.IfExp, cst.While, cst.Try, cst.Assert, cst.BooleanOperation, cst.CompIf, cst.Break,
              cst.Continue, cst.Return, cst.Raise, cst.Yield, cst.Await, cst.Match, cst.With)


def _only_bound_once_and_iterated(scope: cst.CSTNode, name: str) -> bool:
    """Whether `name` is bound once in `scope`, to a list or tuple written out, or is a
    parameter never rebound, and is otherwise only the iterable of `for` loops."""
    nodes = list(walk(scope))
    allowed: set = set()
    bound = 0
    for n in nodes:
        t = type(n)
        if t is cst.For and type(n.iter) is cst.Name and n.iter.value == name:
            allowed.add(id(n.iter))
        elif t is cst.Param and n.name.value == name:
            allowed.add(id(n.name))
        elif t is cst.Assign and any(type(a.target) is cst.Name and a.target.value == name for a in n.targets):
            if len(n.targets) != 1 or not isinstance(n.value, (cst.List, cst.Tuple)):
                return False
            allowed.add(id(n.targets[0].target))
            bound += 1
    if bound == 0 and not (isinstance(scope, cst.FunctionDef) and name in parameters_of(scope)):
        return False  # (a parameter is bound by the call, with what the caller passed)
    if bound == 0 and any(type(n) is cst.Call and type(n.func) is cst.Name and n.func.value not in _PLAIN_BUILTINS | {"super"}
                          for n in nodes):
        return False  # (a function of the project may change the caller's list in place first)
    return bound <= 1 and all(id(n) in allowed for n in nodes if type(n) is cst.Name and n.value == name)


def _straight(body: cst.BaseSuite) -> bool:
    """A loop body that runs every statement for every element: no test, no early exit."""
    return not any(isinstance(n, _BRANCHING) for n in walk(body))


# what a parameter's loop body may test: what the element's own facts decide (`if p.grad is
# not None:`, `if "embed" in name: continue`), not which object it is (`if p is
# model.emb.weight:`); it may skip to the next element, not leave the loop
_LEAVING = (cst.While, cst.Try, cst.Break, cst.Continue, cst.Return, cst.Raise, cst.Yield, cst.Await, cst.Match,
            cst.With)


_LIST_METHODS = frozenset({"append", "extend", "insert"})


def _fills_lists(body: cst.BaseSuite) -> bool:
    return any(type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in _LIST_METHODS
               for n in walk(body))


def _name_unread(loop: cst.For) -> bool:
    """A loop over parameters whose body does not read a name it binds besides the
    parameter (`for name, p in model.named_parameters():` that never reads `name`)."""
    target = loop.target
    if type(target) is cst.Name:
        return True
    if type(target) is not cst.Tuple or len(target.elements) != 2 or type(target.elements[0].value) is not cst.Name:
        return False
    name = target.elements[0].value.value
    return not any(type(n) is cst.Name and n.value == name for n in walk(loop.body))


# what reads a tensor's values, not what kind of tensor it is (`dim`, `size`, `is_sparse`
# pick parameters by kind: a test of them is one the walk of each element must decide)
_DATA_READS = frozenset({"all", "any", "item", "sum", "max", "min", "amax", "amin", "mean", "norm", "vector_norm",
                         "abs", "isnan", "isinf", "isfinite", "eq", "ne", "gt", "ge", "lt", "le", "allclose", "equal",
                         "count_nonzero", "std", "var", "prod"})


def _skips_element(node: cst.If) -> bool:
    """A test whose branch skips the rest of the body for this element (`continue`): a test of
    values there may pick elements out (`if p.abs().sum() == 0: continue`)."""
    return any(type(n) is cst.Continue for n in walk(node))


_ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


def _tests_of_each(body: cst.BaseSuite) -> bool:
    for n in walk(body):
        if isinstance(n, _LEAVING) and type(n) is not cst.Continue:
            # (a `return` under a test may leave before the sparse kind is reached: which
            # parameter comes first, and whether its test takes the return, is not known)
            return False
        if type(n) is cst.ComparisonTarget and isinstance(n.operator, (cst.Is, cst.IsNot)) \
                and not (type(n.comparator) is cst.Name and n.comparator.value == "None"):
            return False
    return True


def _enumerated(loop: cst.For) -> tuple:
    """(what a loop iterates, the variable bound to each element): `for t in X` gives (X,
    t), `for i, t in enumerate(X)` gives (X, t) as well (None: not one name)."""
    it, target = loop.iter, loop.target
    if type(it) is cst.Call and isinstance(it.func, cst.Name) and it.func.value == "enumerate" and len(it.args) == 1:
        it = it.args[0].value
        target = target.elements[1].value if isinstance(target, cst.Tuple) and len(target.elements) == 2 else None
    return it, target


def _runs_through(loop) -> bool:
    """A `for` over `range(<positive literal>)` or a non-empty literal list, with no `break`
    or `return` that could leave it early."""
    if not isinstance(loop, cst.For):
        return False
    it = loop.iter
    if isinstance(it, (cst.List, cst.Tuple)):
        runs = bool(it.elements)
    elif isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range" and 1 <= len(it.args) <= 2:
        bounds = [literal(a.value) for a in it.args]
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            return False
        runs = (bounds[0] > 0) if len(bounds) == 1 else bounds[1] > bounds[0]
    else:
        return False
    if not runs:
        return False
    stack = list(loop.body.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Break, cst.Return, cst.Raise)):
            return False
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While)) and n is not loop:
            if isinstance(n, (cst.For, cst.While)):
                # a break there leaves only that inner loop; a return still leaves this one
                stack.extend(m for m in _statements_under(n) if isinstance(m, (cst.Return, cst.Raise)))
            continue
        stack.extend(children(n))
    return True


def _may_raise(body, names: Names, exception_class) -> tuple[bool, bool]:
    """Whether a `try` body may raise an exception of Python's other than by making one
    of its `raise` statements (an operation, a call), and whether it may raise one of this
    file's classes (a call into code other than torch's may, and so may a nested `try`,
    whose handlers can raise)."""
    builtin = False
    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Raise):
            # the exception's constructor is what is raised; its arguments are evaluated first
            exc = n.exc
            if isinstance(exc, cst.Call) and isinstance(exc.func, cst.Name) and exception_class(exc.func.value):
                stack.extend(a.value for a in exc.args)
            elif exc is not None:
                stack.append(exc)
            if n.cause is not None:
                stack.append(n.cause.item)
            continue
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(n, (cst.Pass, cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
            continue
        if isinstance(n, cst.Call):
            builtin = True
            q = names.qualify(n.func)
            if q is None or not is_torch(q):
                return True, True
        elif isinstance(n, (cst.With, cst.For, cst.While, cst.Await, cst.Yield, cst.Try, cst.TryStar, cst.Import,
                            cst.ImportFrom)):
            return True, True
        elif not isinstance(n, (cst.SimpleStatementLine, cst.IndentedBlock, cst.Assign, cst.AssignTarget, cst.Expr,
                                cst.Arg, cst.Comma, cst.Element, cst.Tuple, cst.List)):
            builtin = True
        stack.extend(children(n))
    return builtin, False


def _yields_in(node) -> list:
    """The `yield` expressions of a statement or expression, not entering nested scopes."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, _NOT_ENTERED):
            continue
        if isinstance(n, cst.Yield):
            out.append(n)
        stack.extend(children(n))
    return out


def _statements_under(node) -> list:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        if not isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(children(n))
    return out


def _child_statements(node) -> list[cst.CSTNode]:
    out = []
    for attr in ("body", "orelse", "finalbody"):
        part = getattr(node, attr, None)
        if part is None:
            continue
        if isinstance(part, cst.If):
            out.append(part)
            continue
        inner = getattr(part, "body", None)
        if isinstance(inner, (list, tuple)):
            out.extend(inner)
        elif inner is not None and hasattr(inner, "body"):
            out.extend(inner.body)
    for handler in getattr(node, "handlers", ()) or ():
        out.extend(handler.body.body)
    return out


def _bind_captures(pattern: cst.MatchPattern, subject, state: State) -> State:
    """The names a `case` pattern binds: the subject itself for `case x` and `case P as x`,
    an unknown for a capture inside a pattern (a part of the subject not followed)."""
    if isinstance(pattern, cst.MatchAs) and pattern.name is not None:
        state.bind(pattern.name.value, subject)
        if pattern.pattern is not None:
            _forget_captures(pattern.pattern, state)
        return state
    _forget_captures(pattern, state)
    return state


def _forget_captures(pattern: cst.CSTNode, state: State) -> None:
    for node in walk(pattern):
        name = getattr(node, "name", None) if isinstance(node, (cst.MatchAs, cst.MatchStar)) else \
            getattr(node, "rest", None) if isinstance(node, cst.MatchMapping) else None
        if isinstance(name, cst.Name):
            state.bind(name.value, None)


def _spelled(value) -> cst.BaseExpression:
    """A string or a flag written as Python source."""
    if isinstance(value, str):
        return cst.SimpleString(repr(value))
    return cst.Name(repr(value))


def literal_fact_of(value) -> Optional[Fact]:
    """The fact of a Python literal read from the source (a number, a string, a flag)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return Const(value=value) if not isinstance(value, str) or len(value) <= 80 else None
    if isinstance(value, (int, float)):
        return Scalar(value=value)
    return None


def _loop_header(node) -> tuple:
    return (node.target, node.iter) if isinstance(node, cst.For) else (node.test,)


def _simply_bound(st) -> Optional[tuple[str, ...]]:
    """The names a one-statement line `a = ...` / `a, b = ...` / `a: T = ...` binds, when
    it binds names only (None otherwise)."""
    if not isinstance(st, cst.SimpleStatementLine) or len(st.body) != 1:
        return None
    small = st.body[0]
    if isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        targets = [small.target]
    else:
        return None
    names = []
    for target in targets:
        parts = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        if not all(isinstance(p, cst.Name) for p in parts):
            return None
        names += [p.value for p in parts]
    return tuple(names)


def _live_part(state: State, dead: frozenset) -> tuple:
    """What of a state an iteration can read: all but the paths of names it binds first."""
    return ({k: v for k, v in state.env.items() if k.split(".")[0] not in dead},
            {k: v for k, v in state.saved.items() if k.split(".")[0] not in dead})


def _kind_of(element) -> Optional[str]:
    """What an element of a list run one by one is: its project class, or the project
    function it is (None: neither)."""
    if isinstance(element, (Module, Instance)):
        return element.cls or None
    if isinstance(element, Callee) and element.project and not element.args and not element.kwargs:
        return element.target
    return None


def _filter_generator(node: cst.FunctionDef) -> Optional[cst.GeneratorExp]:
    """The generator expression a generator function's body spells out, where it is one loop
    that yields one value for the elements passing its tests (`for p in ps: if t: yield p`,
    `if not t: continue` guards too); None for any other body."""
    body = [s for s in (node.body.body if isinstance(node.body, cst.IndentedBlock) else ())
            if not (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Expr)
                    and isinstance(s.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))]
    if len(body) != 1 or not isinstance(body[0], cst.For) or body[0].orelse is not None or body[0].asynchronous:
        return None
    loop = body[0]
    tests: list = []
    lines = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
    while len(lines) > 1 and _guard(lines[0]) is not None:
        tests.append(cst.UnaryOperation(operator=cst.Not(), expression=_guard(lines[0]).with_changes(
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()])))
        lines = lines[1:]
    if len(lines) != 1:
        return None
    line = lines[0]
    if isinstance(line, cst.If) and line.orelse is None and isinstance(line.body, cst.IndentedBlock) \
            and len(line.body.body) == 1:
        tests.append(line.test)
        line = line.body.body[0]
    value = _yield_value(line)
    if value is None:
        return None
    return cst.GeneratorExp(elt=value, for_in=cst.CompFor(target=loop.target, iter=loop.iter,
                                                          ifs=[cst.CompIf(test=t) for t in tests]))


def _guard(line) -> Optional[cst.BaseExpression]:
    """The test of `if test: continue`."""
    if (isinstance(line, cst.If) and line.orelse is None and isinstance(line.body, cst.IndentedBlock)
            and len(line.body.body) == 1 and isinstance(line.body.body[0], cst.SimpleStatementLine)
            and len(line.body.body[0].body) == 1 and isinstance(line.body.body[0].body[0], cst.Continue)):
        return line.test
    return None


def _yield_value(line) -> Optional[cst.BaseExpression]:
    """The value of a line that is `yield value` alone."""
    if (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Expr)
            and isinstance(line.body[0].value, cst.Yield) and isinstance(line.body[0].value.value, cst.BaseExpression)
            and not isinstance(line.body[0].value.value, cst.From)):
        return line.body[0].value.value
    return None


def _element_names(loop: cst.For) -> set:
    """The loop variable holding each element's name in `for name, p in
    model.named_parameters()` (and `named_modules()`, `named_children()`, `named_buffers()`)."""
    it = loop.iter
    if (isinstance(loop.target, cst.Tuple) and len(loop.target.elements) == 2
            and isinstance(loop.target.elements[0].value, cst.Name) and isinstance(it, cst.Call)
            and isinstance(it.func, cst.Attribute)
            and it.func.attr.value in ("named_parameters", "named_modules", "named_children", "named_buffers")):
        return {loop.target.elements[0].value.value}
    return set()
