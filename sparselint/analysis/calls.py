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

import ast
import os
import re
from dataclasses import dataclass, field, replace
from typing import Optional

import libcst as cst

from ..diagnostics import Evidence
from .evaluation.facts import (COMMAND_LINE, Callee, Const, Fact, Instance, Items, Literal, Module, Optimizer, Params, Scalar,
                               Tensor, attr_of, froze, with_evidence, NOGRAD)
from .argparse_options import declares_options
from .binding import DoubleStar, Keyword, Positional, Signature, Star, bind
from .cst.names import dotted
from .cst.syntax import assigned_names, parameter_loop_owner, parameters_of
from .cst.tree import statements, walk
from .decorators import keeps_call
from . import records
from .project import installed

MAX_DEPTH = 4
# a model built of models built of layers: constructors are followed deeper than other calls
MAX_MODEL_DEPTH = 8
_GLOBAL = "<global>"
# the statements that store through their target (`x.name = ...`, `del x.name`)
_STORING = frozenset({cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del})
# The name a decorator's argument is held under while the decorator is called.
_DECORATED = "__decorated_function"
# The chain of callees being analysed, across files, so mutual recursion between modules ends.
_ACTIVE: list[cst.FunctionDef] = []
# the function a module's own top-level code called (`main()` under `if __name__ ==
# "__main__":`): its call costs no depth, so what it calls is followed as deep as when the
# function is checked on its own
_ENTRY: list[cst.FunctionDef] = []


def _depth() -> int:
    return len(_ACTIVE) - (1 if _ENTRY and _ACTIVE and _ACTIVE[0] is _ENTRY[-1] else 0)


# Modules of the project parsed for calls into them, once per process: (path, hash of text)
# -> (module, text, import aliases), or None when the text cannot be parsed.
_PARSED: dict[tuple, Optional[tuple]] = {}


@dataclass
class Outcome:
    returned: Optional[Fact] = None
    # False for a call that was not analysed, whose outcome only forgets what it may rebind
    followed: bool = True
    # caller access path -> the fact after the call (None: no longer known)
    effects: dict[str, Optional[Fact]] = field(default_factory=dict)
    # caller access paths the callee's forward ops saved for backward
    saved: dict[str, Evidence] = field(default_factory=dict)
    # the callee runs backward: nothing saved before the call is still waiting for one
    backward: bool = False
    # `Fn.apply(...)` of a custom autograd function: what its `backward` returns, one
    # gradient per input, run with this call's context and incoming gradient
    gradients: Optional[Fact] = None
    # the callee froze parameters no known module holds by name: any may hold them
    unplaced: bool = False


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
    unplaced: bool = False  # see `Outcome.unplaced`


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
    # a nested function's or a lambda's enclosing names it reads, bound at entry
    closure: tuple = ()
    # `forward` of a custom autograd function: its `backward`, run with the context forward
    # filled in
    backward: Optional[cst.FunctionDef] = None
    # the receiver is an object of a class of the callee's own module, named there locally
    own_class: bool = False
    # its body runs as written, its decorators aside (the function a decorator wraps)
    bare: bool = False


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


# the object a torch layer's constructor runs on, for a subclass without its own: a dunder
# name that user code does not use
_MADE = "__constructed__"


class Calls:
    def __init__(self, walker):
        self.walker = walker
        self.outcomes: dict[cst.Call, Outcome] = {}
        # set when the analysis running now froze parameters no known module holds by name
        self.unplaced = False
        # call -> the caller's names a function of this file passed to it may rebind
        self.escaped: dict[cst.Call, tuple] = {}
        self._memo: dict[tuple, _Result] = {}
        # memo key -> the reports its walk made that a later change of a model may revoke
        self._memo_reports: dict[tuple, list] = {}
        self._rebound: dict[cst.FunctionDef, set[str]] = {}
        self._calls_in: dict[cst.CSTNode, list] = {}
        self._passed: dict[cst.FunctionDef, tuple[set[str], set[str]]] = {}
        self._free: dict[cst.FunctionDef, set[str]] = {}
        self._untracked: dict[cst.FunctionDef, bool] = {}
        self._freezers: dict[cst.FunctionDef, bool] = {}
        self._param_stores: dict[cst.FunctionDef, bool] = {}
        self._method_tokens: dict[tuple, bool] = {}
        self._tokens_in: dict[cst.FunctionDef, bool] = {}
        self._foreign: dict[str, Optional[object]] = {}
        self._root = self  # the calls of the file being checked (for a walker of another module, that file's)
        self._class_values: dict[tuple, Optional[Fact]] = {}  # (class, name) -> a literal its class body binds
        self._literal_sources: dict[tuple, bool] = {}
        self._module_writes: dict[tuple, bool] = {}
        # a function -> the test its body ends by returning, when that is all it decides
        self._tests: dict[cst.FunctionDef, Optional[cst.BaseExpression]] = {}
        # a model class of another module -> (that module's walker, the class, ...)
        self._models: dict[str, Optional[tuple]] = {}
        self._stores: Optional[frozenset] = None
        # (class, name) -> the method, or the class attribute's value (not when the file
        # stores that attribute name anywhere: an instance's own value or a changed one)
        self._members: dict[tuple, object] = {}
        self._keeps: dict[cst.FunctionDef, bool] = {}
        # a context manager function -> the code it runs where its `with` block ends
        self._exits: dict[cst.FunctionDef, Optional[cst.FunctionDef]] = {}
        # a function -> the names its subscripts and `if` tests read
        self._picking: dict[cst.FunctionDef, frozenset] = {}
        # a lambda as the function it stands for (`def _(params): return body`), made once
        self._lambdas: dict[cst.Lambda, cst.FunctionDef] = {}
        self._once: dict[cst.FunctionDef, frozenset] = {}
        self._free_in: dict[cst.CSTNode, frozenset] = {}
        self._makers: dict[cst.FunctionDef, bool] = {}
        self._decorations: dict[tuple, cst.SimpleStatementLine] = {}
        self._imported_values: dict[tuple, Optional[tuple]] = {}
        self._arms: dict = {}  # statement -> its conditional expressions' (test, body calls, orelse calls)
        # statement -> its comprehensions that run, each with the calls of its element that
        # read what it binds
        self._per_element: dict = {}
        self._inherited_memo: dict = {}
        self._read: Optional[frozenset] = None
        self._values: Optional[frozenset] = None

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

    def live_calls(self, node: cst.CSTNode, state) -> list:
        """The calls of a statement that run: not those of an arm of a conditional
        expression whose test the facts decide against (`SparseAdam(p) if sparse else
        Adam(p)` with `sparse` known)."""
        found = self.calls_in(node)
        arms = self._arms.get(node)
        if arms is None:
            from .evaluation.inference import _conditional_arms
            arms = self._arms[node] = _conditional_arms(node)
        if not arms:
            return found
        truth = self.walker.ctx.inference.truth
        dead: set = set()
        for test, body, orelse in arms:
            decided = truth(test, state)
            if decided is not None:
                dead.update(orelse if decided else body)
        return [c for c in found if c not in dead] if dead else found

    def prepare(self, node: cst.CSTNode, state) -> None:
        """Analyse the project calls of a statement (inner calls first) with the facts
        that hold before it."""
        live = self.live_calls(node, state)
        for call in live:
            if not isinstance(call, cst.Call):
                continue
            self.outcomes.pop(call, None)
            self.escaped.pop(call, None)
            outcome = self._analysed(call, state)
            if self.walker.scopes.declares:
                self._escapes(call, state, outcome)
        for comp, calls, consumer in self._comprehensions(node):
            if all(c in live for c in calls):
                self._each_element(comp, calls, consumer, state)

    def _analysed(self, call: cst.Call, state) -> Optional[Outcome]:
        """A call's outcome, analysed with the facts of `state` and kept for the call."""
        target = self._target(call, state)
        outcome = None
        if isinstance(target, Callee):
            outcome = self.call_value(target, call, state)
        elif isinstance(target, Outcome):
            outcome = target  # what a torch base class's constructor stores
        elif target is not None:
            outcome = self._invoke(target, call, state)
            made = outcome.returned if outcome is not None else None
            if getattr(target, "makes", None) == "module" and isinstance(made, Module) and made.training is None:
                # a model this code builds: torch builds every module in training mode
                outcome.returned = replace(made, training=True)
        if outcome is None and target is not None:
            # a call not followed still may rebind names of the caller's scopes: they are
            # no longer known
            written = self._rebound_by(self._local_node(target))
            if written:
                outcome = Outcome(effects={name: None for name in written}, followed=False)
        if outcome is not None:
            self.outcomes[call] = outcome
        return outcome

    def _may_store(self, call: cst.Call, state) -> bool:
        """The function a call runs may store through what it is given (or is not known)."""
        target = self._target(call, state)
        if isinstance(target, Callee):
            target = self._value_target(target, call, state)
        if not isinstance(target, _Target):
            return target is not None
        if target.node is None:
            return True  # (a class without a constructor of its own, a callable not read)
        return (target.walker or self.walker).calls._stores_on_parameters(target.node)

    def _comprehensions(self, node: cst.CSTNode) -> list:
        """The comprehensions of a statement whose element runs for each element (a list,
        set or dict display, or a generator a builtin consumes at once: `all(cb(model) for
        cb in callbacks)`), with the calls of the element that read what the comprehension
        binds, and the builtin that consumes a generator."""
        found = self._per_element.get(node)
        if found is None:
            found = []
            consumers = {id(n.args[0].value): n.func.value for n in walk(node) if type(n) is cst.Call
                         and type(n.func) is cst.Name and n.func.value in _CONSUMERS and len(n.args) == 1
                         and not n.args[0].star and n.args[0].keyword is None}
            for n in walk(node):
                kind = type(n)
                if kind not in _COMPREHENSIONS or (kind is cst.GeneratorExp and id(n) not in consumers):
                    continue
                bound = _comprehension_names(n)
                parts = (n.key, n.value) if kind is cst.DictComp else (n.elt,)
                # only calls that run whenever the element is evaluated: not under a
                # conditional expression, `and`/`or`, a lambda or an inner comprehension
                guarded = {id(x) for part in parts for g in walk(part) if type(g) in _GUARDING
                           for x in walk(g)}
                calls = [c for part in parts for c in self.calls_in(part) if isinstance(c, cst.Call)
                         and id(c) not in guarded and any(type(x) is cst.Name and x.value in bound for x in walk(c))]
                if calls:
                    found.append((n, calls, consumers.get(id(n))))
            self._per_element[node] = found
        return found

    def _each_element(self, comp, calls: list, consumer: Optional[str], state) -> None:
        """Run the calls of a comprehension's element once for each element, the names it
        binds holding that element's facts. What the statement's own analysis found for
        these calls stays their outcome; what the element runs did to the elements (held by
        the names the comprehension reads) is forgotten."""
        inf = self.walker.ctx.inference
        if consumer is not None and not inf.builtin(consumer, state):
            return
        found = inf.comprehension_states(comp, state)
        if found is None or len(found[0]) > _MAX_ELEMENT_RUNS:
            return
        kept = {c: self.outcomes.get(c) for c in calls}
        changed = False
        try:
            for each in found[0]:
                for call in calls:
                    self.outcomes.pop(call, None)
                    outcome = self._analysed(call, each)
                    changed = changed or bool(outcome is not None and (outcome.effects or outcome.unplaced)) \
                        or self._may_store(call, each)
                if changed:
                    break  # what it changed is what the next element's run would see: not followed
                if consumer in ("all", "any"):
                    # they stop at the first element that decides them
                    truth = inf.truth(comp.elt, each)
                    if truth is None or truth != (consumer == "all"):
                        break
        finally:
            for call, outcome in kept.items():
                self.outcomes.pop(call, None)
                if outcome is not None:
                    self.outcomes[call] = outcome
        if changed:
            forgotten = {p: None for c in _iterables(comp) for p in _paths_in(c)}
            first = calls[0]
            before = self.outcomes.get(first)
            self.outcomes[first] = replace(before, effects={**before.effects, **forgotten}) if before is not None \
                else Outcome(effects=forgotten, followed=False)

    def _escapes(self, call: cst.Call, state, outcome: Optional[Outcome]) -> None:
        """A function of this file passed to a call (`run(fix)`, `t.register_hook(fix)`) may
        run there or later: the caller's names it rebinds (`global`, `nonlocal`) are no
        longer known after the call, unless the call's analysis handed their facts back."""
        inf = self.walker.ctx.inference
        names: set[str] = set()
        for a in call.args:
            if not isinstance(a.value, (cst.Name, cst.Attribute)):
                continue  # a function is passed by name (a partial of it: where it is made)
            fact = inf.fact(a.value, state)
            if isinstance(fact, Callee):
                names.update(self._rebound_by(self._local_node(fact)))
        if outcome is not None and outcome.followed:
            names -= set(outcome.effects)
        if names:
            self.escaped[call] = tuple(sorted(names))

    def _local_node(self, target) -> Optional[cst.FunctionDef]:
        """The function of this file a call target runs, if it is one."""
        w = self.walker
        if isinstance(target, _Target):
            return target.node if target.walker is None else None
        if target.file and target.file != os.path.abspath(w.ctx.path):
            return None
        if isinstance(target.node, cst.FunctionDef):
            return target.node
        if target.node is None and target.local and target.target in w.functions:
            return w.functions[target.target]
        return None

    def _rebound_by(self, node: Optional[cst.FunctionDef]) -> list:
        """The caller's names a call of this function of the file rebinds (`global`,
        `nonlocal`, directly or through the functions it calls)."""
        if node is None:
            return []
        kinds = self.walker.scopes.kinds(node, self.walker.functions)
        return sorted(n for n in kinds[0] | kinds[1] | kinds[2] if self._rebinds_here(node, n))

    def _view(self, state, node: cst.FunctionDef) -> dict:
        """The names outside a function of this file called here, as the caller sees them
        now: from module code, the module's facts now; from a function, the module's stable
        facts (those it sees), less the names this function rebinds there (`global`), which
        it follows itself, and with its own variables the callee rebinds (`nonlocal`)."""
        w = self.walker
        inf = w.ctx.inference
        if inf is w.module_inference:
            return state.env
        scope = w.ctx.scope.node if w.ctx.scope is not None else None
        live = set(w.scopes.writes(scope, w.functions)) if isinstance(scope, cst.FunctionDef) else set()
        live |= {n for n in w.scopes.kinds(node, w.functions)[1] if self._rebinds_here(node, n)}
        outer = self._with_module_values(inf.outer, node)
        if not live:
            return outer
        view = {k: v for k, v in outer.items() if k.split(".")[0] not in live}
        view.update((k, v) for k, v in state.env.items() if k.split(".")[0] in live)
        return view

    def _rebinds_here(self, node: cst.FunctionDef, root: str) -> Optional[bool]:
        """Whether a name a function declares `global`/`nonlocal` (or reaches through the
        functions it calls) is, at this call, the caller's name of that spelling: a module
        name unless the caller has a variable of its own so named; an enclosing function's
        name only in that function (the callee nested in it) or in a function that rebinds
        it too. None for other names (changed in place, not rebound)."""
        w = self.walker
        globals_, nonlocals, lost = w.scopes.kinds(node, w.functions)
        inf = w.ctx.inference
        scope = w.ctx.scope.node if w.ctx.scope is not None else None
        here = w.scopes.kinds(scope, w.functions) if isinstance(scope, cst.FunctionDef) else None
        if root in globals_ or root in lost:
            return inf is w.module_inference or root not in inf.locals or (here is not None and root in here[0])
        if root in nonlocals:
            return (here is not None and root in inf.locals and root not in here[0]
                    and (w.scopes.inside(node, scope) or root in here[1]))
        return None

    def _target(self, call: cst.Call, state):
        """What a call runs: a `_Target`, or a callable value (`Callee`) that `call_value`
        dispatches; None when it is not a callable of the project or is not known."""
        w = self.walker
        inf = w.ctx.inference
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and call.args:
            # `nn.Embedding.__init__(self, n, d, sparse=True)` in a subclass's constructor
            base = inf.names.qualify(func.value)
            if base is not None:
                return self._torch_base_init(base, call.args[0].value, call.with_changes(args=call.args[1:]), state, call)
        if inf.names.qualify(func) is not None:
            return None  # torch's own functions are the op tables' business
        spelled = inf.spelled_getattr(func, state)
        if spelled is not None and isinstance(inf.fact(spelled.value, state), (Instance, Module)):
            # `getattr(cb, hook)(trainer)`, the callbacks' dispatch by event name: the method
            # the name picks, as `cb.on_after_backward(trainer)` runs it
            func = spelled
        if isinstance(func, cst.Name):
            name = func.value
            fact = inf.fact(func, state)
            if isinstance(fact, Callee) and fact.file and inf.lookup(name, state) is None:
                # the imported function itself, or a model class of that module
                return self._imported(call, state, name, "") or self._foreign_constructor(call, state)
            if (isinstance(fact, Callee) and fact.local and fact.receiver is None and fact.node is None
                    and fact.target.endswith(".apply") and fact.target[:-len(".apply")] in w.classes):
                # `spmm = SpMM.apply; spmm(adj, x)`: a custom autograd function's usual alias
                applied = self._autograd_apply(fact.target[:-len(".apply")])
                if applied is not None:
                    return applied
            if isinstance(fact, Callee) and fact.project and (
                    fact.node is not None or fact.file or fact.args or fact.kwargs or fact.target != name):
                return fact  # a function held by another name (`fn()` with `fn=make`), a lambda, a partial
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
                return self._class_target(name, call, state)
            return None
        if isinstance(func, cst.Attribute):
            if _is_super(func.value):
                return self._super(func.attr.value, state, call)
            if (isinstance(func.value, cst.Name) and func.value.value not in inf.locals
                    and inf.names.qualify(func.value) is None and inf.lookup(func.value.value, state) is None):
                found = self._imported(call, state, func.value.value, func.attr.value) or (
                    self._foreign_constructor(call, state) if func.attr.value[:1].isupper() else None)
                if found is not None:
                    return found  # `pkg.Model(...)`, a model class the package re-exports, too
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
                if recv.file and recv.node is None and recv.receiver is None and not recv.local:
                    # `Optimizer.from_opt(model, opt)`: one on a class imported from another module
                    return self._foreign_class_method(recv, func.attr.value, call, state)
                return None
            cls = _own_class(recv.cls, w.ctx.path) if isinstance(recv, Instance) else _local_class(recv, w.ctx.path)
            found = self._method(cls, func.attr.value, recv, dotted(func.value), bound=True)
            if found is None:
                found = self._foreign_method(recv, func.attr.value, dotted(func.value), call, state)
            if found is not None:
                return found
            # a function an object holds itself (`self.fn = make`): called as it is; one its
            # class holds would be bound to the object first, and is not followed
            path = dotted(func)
            fact = inf.lookup(path, state) if path else None
            if fact is None and isinstance(recv, (Instance, Module)):
                fact = attr_of(recv.attrs, func.attr.value)
        else:
            # any other expression that gives a callable: `builders["main"]()`, `REGISTRY[name]()`,
            # `getattr(module, "make")()`, `make_fn()()`; or a model (`self.layers[0](x)`,
            # `Net()(x)`)
            fact = inf.fact(func, state)
            if isinstance(fact, (Module, Instance)):
                return self._forward(func, fact, call, state)
        return fact if isinstance(fact, Callee) and fact.project else None

    def _class_target(self, name: str, call: cst.Call, state) -> _Target:
        """A call of a class of this file: its `__init__` run on a new instance (the generated
        one of a record)."""
        w = self.walker
        klass = w.classes[name]
        init = w.method(klass, "__init__")
        module = w.module_of_class(name, call)
        if module is None and records.record_kind(klass) is not None and not _defines(klass, "__init__"):
            # the generated `__init__` of a record, not one a base defines
            return _Target(None, name, klass=klass, makes="instance")
        there = None
        if init is None:
            # `__init__` inherited from a base class of another module
            init, there = self._inherited(klass, "__init__") or (None, None)
        if init is None and module is None:
            return _Target(None, name, klass=klass, makes="instance")
        if init is None:
            # a model class whose constructor is `nn.Module`'s or a torch layer's
            return _Target(None, name, receiver=module, klass=klass, makes="module")
        receiver = module if module is not None else Instance(cls=name, attrs=self._new_args(name, call, state))
        # with nothing known at the call, `__init__` still runs (silently, as a function's
        # summary does): what it stores on the instance or the module is a fact
        return _Target(init, name, receiver=receiver, klass=klass,
                       makes="module" if module is not None else "instance", walker=there, summary=True)

    # -- callables held as values --------------------------------------------------------

    def call_value(self, fact: Callee, call: cst.Call, state, site: Optional[cst.CSTNode] = None) -> Optional[Outcome]:
        """Calling a callable held as a value runs what a direct call of it runs, with the
        arguments a `functools.partial` stored bound first; anything that cannot be
        determined gives no outcome (the result and effects are unknown)."""
        site = site if site is not None else call
        placeholders = ()
        if fact.args or fact.kwargs:
            call, state, placeholders = self._with_stored(fact, call, state)
            fact = replace(fact, args=(), kwargs=())
            if call is None:
                return None
        target = self._value_target(fact, call, state)
        if not isinstance(target, _Target):
            return target
        outcome = self._invoke(target, call, state, site=site)
        if outcome is not None and placeholders:
            # the stored arguments have no name in the caller: nothing there changes
            outcome.effects = {k: v for k, v in outcome.effects.items() if k.split(".")[0] not in placeholders}
            outcome.saved = {k: v for k, v in outcome.saved.items() if k.split(".")[0] not in placeholders}
        return outcome

    def _with_stored(self, fact: Callee, call: cst.Call, state):
        """The call a partial makes (`f(*stored, *given, **{**stored_kw, **given_kw})`),
        spelled out with names for the stored facts, and a state that binds them."""
        out = state.copy()
        names = []

        def holder(value) -> cst.Name:
            name = f"__partial_argument_{len(names)}"
            names.append(name)
            if value is not None:
                out.env[name] = value
            return cst.Name(name)

        given = {a.keyword.value for a in call.args if a.keyword is not None}
        if any(a.star == "**" for a in call.args) and fact.kwargs:
            return None, state, ()  # which stored keyword the mapping overrides is not known
        args = [cst.Arg(holder(v)) for v in fact.args]
        args += [a for a in call.args if a.keyword is None and a.star != "**"]
        args += [cst.Arg(holder(v), keyword=cst.Name(k)) for k, v in fact.kwargs if k not in given]
        args += [a for a in call.args if a.keyword is not None or a.star == "**"]
        return cst.Call(func=call.func, args=args), out, frozenset(names)

    def _value_target(self, fact: Callee, call: cst.Call, state):
        """What calling a callable value runs: a `_Target` (analysed like a direct call of
        it, and for what it returns even when nothing passed to it is known), an `Outcome`
        (a model class of another module, built by the project index), or None."""
        w = self.walker
        here = os.path.abspath(w.ctx.path)
        there = None
        if fact.file and fact.file != here and fact.node is None:
            from .project.models import project_index
            if project_index().binding_kind(fact.file, fact.target) == "class":
                return self._foreign_model(fact, call, state)  # built by the project index, no parse
        if fact.file and fact.file != here:
            there = self._walker_for(fact.file)
            if there is None:
                return None
            w.ctx.dependencies.add(fact.file)
        owner = there if there is not None else w
        if fact.node is not None:
            node = fact.node if isinstance(fact.node, cst.FunctionDef) else owner.calls._lambda_def(fact.node)
            return _Target(node, fact.target, walker=there, summary=True, closure=fact.closure, bare=fact.bare)
        if there is not None:
            if fact.target in there.functions:
                return _Target(there.functions[fact.target], fact.target, walker=there, summary=True)
            if fact.target in there.classes:
                return self._foreign_model(fact, call, state)
            return None
        if not fact.local:
            return None
        if "." in fact.target:
            cls, _, method = fact.target.partition(".")
            return self._method(cls, method, fact.receiver, None, bound=fact.receiver is not None)
        if fact.target in w.functions:
            return _Target(w.functions[fact.target], fact.target, summary=True, bare=fact.bare)
        if fact.target in w.classes:
            return self._class_target(fact.target, call, state)
        return None

    def imported_value(self, local: str, attribute: str = "") -> Optional[Fact]:
        """What a name imported from another module of the project holds (`from models import
        MODELS`, `helpers.make` after `import helpers`): a function or class there as a
        callable value, or the fact its module body leaves in a name it binds once. A dict
        is known only for the keys it holds there: another module may add keys to it."""
        w = self.walker
        if not attribute and not w.bound_once(local):
            return None  # rebound here: not only what the import gives
        from .project.models import project_index
        key = (local, attribute)
        if key not in self._imported_values:
            self._imported_values[key] = None  # a cycle of imports gives nothing
            index = project_index()
            ctx = w.ctx
            found = index.resolve_binding(local, ctx.path, ctx.source, attribute)
            ctx.dependencies.update(index.missing)
            if found is not None and os.path.abspath(found[0]) != os.path.abspath(ctx.path):
                self._imported_values[key] = found
                ctx.dependencies.add(found[0])
        found = self._imported_values[key]
        if found is None:
            return None
        file, name = found
        index = project_index()
        if index.binding_kind(file, name) in ("function", "class"):
            # a callable: its module is parsed only if it is called
            return Callee(target=name, file=os.path.abspath(file))
        tokens = w.ctx.tokens
        if tokens is not None and not index.value_may_matter(file, name, tokens):
            return None  # nothing sparse-related builds it: unknown, without running its module
        if self._body_not_run(file):
            return None
        there = self._walker_for(file)
        if there is None or not there.bound_once(name):
            return None
        # read now: what its module holds after the imports run so far (a registry filled)
        value = _portable(there.module_facts().get(name), there.ctx, there.ctx.path)
        if isinstance(value, Instance) and value.cls == "dict":
            return replace(value, keys=None)
        if isinstance(value, (Items, Params)):
            return None  # a list another module may change in place
        return value

    def run_imports(self, node) -> None:
        """`import builders` whose name the file never reads is there for what the module's
        body does (decorators filling a registry of another module): its body runs now."""
        from .project.models import project_index
        if isinstance(node, cst.Import):
            modules = [(dotted(a.name), (dotted(a.asname.name) if a.asname else dotted(a.name).split(".")[0]))
                       for a in node.names]
        elif isinstance(node, cst.ImportFrom) and node.module is None and not isinstance(node.names, cst.ImportStar):
            dots = "." * len(node.relative)
            modules = [(dots + a.name.value, dotted(a.asname.name) if a.asname else a.name.value)
                       for a in node.names if isinstance(a.name, cst.Name)]
        else:
            return
        index = project_index()
        for module, local in modules:
            # a module of the project first: the names a module reads take a walk of its tree
            file = index._import_file(module, self.walker.ctx.path) if module else None
            if file is None or local in self._names_read() or self._body_not_run(file):
                continue
            there = self._walker_for(file)
            if there is not None:
                self.walker.ctx.dependencies.add(file)
                there.module_facts()

    def _body_not_run(self, file: str) -> bool:
        """A module too large for its body to be run for its facts (`module_facts`): not
        worth a parse for them alone, unless a walker over it is already at hand."""
        from .evaluation.walker import MAX_MODULE_FACTS_SOURCE
        from .project.models import project_index
        if file in self._foreign:
            return False
        return len(project_index()._text(file) or "") > MAX_MODULE_FACTS_SOURCE

    def _names_read(self) -> frozenset:
        if self._read is None:
            from .project.models import project_index
            ctx = self.walker.ctx
            self._read = project_index().names_read(ctx.path, ctx.source)
        return self._read

    def _with_module_values(self, outer: dict, node: cst.FunctionDef) -> dict:
        """The caller's view of the module, with the module's values the callee reads and the
        caller does not: a caller's view is worked out for the names it reads itself
        (`fit()` of a package, entered from a user script, reads no table; the
        `make_optimizer()` it calls reads `OPTIMIZERS`)."""
        module = self.module_outer(node)
        if not module or all(k.split(".")[0] in outer for k in module):
            return outer
        return {**module, **outer}

    def module_outer(self, node: cst.FunctionDef) -> dict:
        """The module facts a function of this module sees: its module's globals, worked out
        (by running the module body) only when it reads a name the module body assigns."""
        if self._values is None:
            body = [s for s in self.walker.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef)) and not (
                isinstance(s, cst.SimpleStatementLine) and any(isinstance(x, (cst.Import, cst.ImportFrom)) for x in s.body))]
            self._values = frozenset(assigned_names(body)) - set(self.walker.functions) - set(self.walker.classes)
        if self._values.isdisjoint(self._globals_read(node)):
            return {}
        return self.walker.module_facts()

    def _foreign_model(self, fact: Callee, call: cst.Call, state) -> Optional[Outcome]:
        """A model class of another module called through a value (`MODELS["tower"]()`): the
        module its constructor builds, as a direct call gives it."""
        w = self.walker
        module = w.module_shell(f"{fact.file}::{fact.target}", call)
        found = self._foreign_class(module.cls) if module is not None else None
        if found is None:
            return Outcome(returned=module) if module is not None else None
        there, klass, file, name, _ = found
        return self._invoke(self._constructor_there(module, there, klass, name, file), call, state)

    def function_value(self, node, inference, state) -> Callee:
        """A `def` that is not at module level, or a `lambda`, as a value: it reads the
        enclosing names bound once (the facts they hold now are those it sees when called)."""
        name = node.name.value if isinstance(node, cst.FunctionDef) else "<lambda>"
        return Callee(target=name, node=node, closure=self._closure(node, inference, state),
                      evidence=(Evidence.at(node, f"`{name}` defined here"),))

    def _closure(self, node, inference, state) -> tuple:
        scope = getattr(inference, "scope_node", None)
        if not inference.locals or not isinstance(scope, cst.FunctionDef):
            return ()  # at module level, names are the module's, read at the call
        once = self._bound_once(scope)
        free = self._free_names(node) & once & inference.locals
        if not free:
            return ()
        return tuple(sorted((k, v) for k, v in state.env.items() if k.split(".")[0] in free))

    def _bound_once(self, scope: cst.FunctionDef) -> frozenset:
        """Names of a function bound exactly once (a parameter or one assignment), not in a
        loop and not written by a nested function: what a closure reads of them is the value
        they hold when it is made."""
        if scope not in self._once:
            from .cst.syntax import declared_names
            counts: dict[str, int] = {}
            body = scope.body.body if isinstance(scope.body, cst.IndentedBlock) else ()
            assigned_names(body, count=counts)
            for p in parameters_of(scope):
                counts[p] = counts.get(p, 0) + 1
            unstable = set()
            for n in walk(scope.body):
                kind = type(n)
                if kind is cst.For or kind is cst.While:
                    unstable |= assigned_names([n])
                elif (kind is cst.FunctionDef or kind is cst.Lambda) and isinstance(getattr(n, "body", None), cst.IndentedBlock):
                    unstable |= declared_names(n.body.body)
            self._once[scope] = frozenset(k for k, c in counts.items() if c == 1 and k not in unstable)
        return self._once[scope]

    def _free_names(self, node) -> frozenset:
        """Names a nested function or a lambda reads that it does not bind itself."""
        if node not in self._free_in:
            if isinstance(node, cst.Lambda):
                params = {p.name.value for p in (*node.params.posonly_params, *node.params.params,
                                                  *node.params.kwonly_params)}
                params |= {s.name.value for s in (node.params.star_arg, node.params.star_kwarg) if isinstance(s, cst.Param)}
                local = params
            else:
                local = parameters_of(node) | self._rebound_in(node)
            self._free_in[node] = frozenset(n.value for n in walk(node.body) if type(n) is cst.Name) - local
        return self._free_in[node]

    def _lambda_def(self, node: cst.Lambda) -> cst.FunctionDef:
        """The function a lambda stands for: its parameters, returning its body."""
        found = self._lambdas.get(node)
        if found is None:
            body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(value=node.body)])])
            found = self._lambdas[node] = cst.FunctionDef(name=cst.Name("_lambda_"), params=node.params, body=body)
        return found

    def decoration(self, node: cst.FunctionDef, name: str) -> list:
        """The calls a definition's decorators make, innermost first, each spelled as a
        statement `decorator(name)`: run, they fill what the decorator fills (a registry)."""
        out = []
        for d in reversed(node.decorators):
            key = (d, name)
            if key not in self._decorations:
                call = cst.Call(func=d.decorator, args=[cst.Arg(cst.Name(name))])
                self._decorations[key] = cst.SimpleStatementLine(body=[cst.Expr(value=call)])
            out.append(self._decorations[key])
        return out

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
        methods are not known (a library's) could hold it. Found once per class and name in
        a check: every attribute read on `self` asks."""
        key = (klass, name)
        if key not in self._inherited_memo:
            self._inherited_memo[key] = self._inherited_now(klass, name, depth)
        return self._inherited_memo[key]

    def _imported_base(self, local: str) -> Optional[tuple]:
        """(walker of its module, class node) of the class another module of the project
        defines and this file names `local` (a base class imported by name), recorded as a
        dependency; None when it cannot be read."""
        from .project.models import project_index
        index = project_index()
        ctx = self.walker.ctx
        qualname = index.resolve_name(local, ctx.path, ctx.source)
        ctx.dependencies.update(index.missing)
        info = index._class(qualname, ctx.path, ctx.source) if qualname is not None else None
        if info is None:
            return None
        file = os.path.abspath(info.path)
        there = self._walker_for(file)
        if there is None or info.name not in there.classes:
            return None
        ctx.dependencies.add(file)
        return there, there.classes[info.name]

    def _inherited_now(self, klass: cst.ClassDef, name: str, depth: int) -> Optional[tuple]:
        w = self.walker
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
            found = self._imported_base(base.value.value)
            if found is None:
                return None
            there, foreign = found
            method = there.method(foreign, name)
            if method is not None:
                return method, there
            if depth < 8:
                # a base of a base, in a third module (`SparseTrainer -> AdamTrainer -> BaseTrainer`)
                found = there.calls._inherited(foreign, name, depth + 1)
                if found is not None:
                    return found
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

    def _super(self, name: str, state, call: Optional[cst.Call] = None):
        """`super().name(...)` inside a method of a class of this file: the method of its
        first base that has it, when the bases before it are classes of this file too; for
        `super().__init__(...)` of a model class, also a base of another module or torch's
        own layer (an `Outcome`: what that layer's constructor stores)."""
        w = self.walker
        inf = w.ctx.inference
        scope = w.ctx.scope.node if w.ctx.scope is not None else None
        if not isinstance(scope, cst.FunctionDef):
            return None
        klass = next((k for k in w.classes.values()
                      if isinstance(k.body, cst.IndentedBlock) and any(s is scope for s in k.body.body)), None)
        if klass is None:
            return None
        held = call.func.value if call is not None and isinstance(call.func, cst.Attribute) else None
        if isinstance(held, cst.Call) and held.args and held.args[0].value.value != klass.name.value:
            return None  # `super(Base, self)`: the search starts past a base
        method = None
        for base in klass.bases:
            if base.keyword is not None:
                continue
            if not isinstance(base.value, cst.Name) or base.value.value not in w.classes:
                if name == "__init__" and call is not None and method is None:
                    return self._base_init_outside(klass, base.value, scope, call, state)
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

    def _base_init_outside(self, klass: cst.ClassDef, base: cst.BaseExpression, scope: cst.FunctionDef,
                           call: cst.Call, state):
        """`super().__init__(...)` in the constructor of a model class whose first base is not
        a class of this file: torch's layer (what it stores on `self`), `nn.Module` (nothing),
        or a model class of another module (its `__init__`, run there on the same object)."""
        w = self.walker
        inf = w.ctx.inference
        params = [*scope.params.posonly_params, *scope.params.params]
        if not params or _method_kind(scope) is not None:
            return None
        me = params[0].name.value
        recv = inf.lookup(me, state)
        if not isinstance(recv, (Module, Instance)) or (isinstance(recv, Instance) and recv.cls in _BUILTIN_INSTANCES):
            return None  # not an object being built: its base's constructor is not followed
        q = inf.names.qualify(base)
        if q is not None:
            return self._torch_base_init(q, cst.Name(me), call, state) if isinstance(recv, Module) else None
        found = self._inherited(klass, "__init__")
        if found is None:
            return None
        method, there = found
        return _Target(method, f"{klass.name.value}.__init__", receiver=recv, receiver_path=me, walker=there,
                       summary=True)

    def _torch_base_init(self, base: str, receiver: cst.BaseExpression, call: cst.Call, state,
                         where: Optional[cst.Call] = None) -> Optional[Outcome]:
        """The constructor of torch's `nn.Module` or of one of its layers run on an object of a
        subclass (`super().__init__(n, d, sparse=True)`): the parameters it stores there."""
        from .modules import base_parameters
        from .torchops.torchapi import CONTAINERS
        inf = self.walker.ctx.inference
        where = where if where is not None else call
        me = dotted(receiver)
        if me is None or not isinstance(inf.lookup(me, state), Module):
            return None
        if base in ("torch.nn.Module", "torch.nn.modules.module.Module"):
            return Outcome()
        if not (base.startswith("torch.nn.") and base.count(".") == 2 and base.split(".")[-1][:1].isupper()) \
                or base in CONTAINERS:
            return None
        layer = inf._torch_call(base, call, state, where)
        if not isinstance(layer, Module) or layer.parts is None:
            return None
        return Outcome(effects={f"{me}.{name}": t for name, t in base_parameters(layer).items()})

    def defines(self, base, name: str) -> bool:
        """Whether the class of this file an object is an instance of has a method `name`
        (its own or inherited within the file): what `hasattr(model, "no_weight_decay")` asks."""
        w = self.walker
        cls = _own_class(base.cls, w.ctx.path) if isinstance(base, Instance) else _local_class(base, w.ctx.path)
        return cls is not None and cls in w.classes and w.method(w.classes[cls], name) is not None

    def member(self, node: cst.Attribute, base, state) -> Optional[Fact]:
        """`obj.name` where the object does not hold `name` itself: the value of a property,
        a method bound to the object, or a class attribute, for a class of this file."""
        w = self.walker
        if isinstance(base, Callee):
            if not base.local or base.receiver is not None or base.target not in w.classes:
                return None
            cls, instance = base.target, False
        else:
            cls = _own_class(base.cls, w.ctx.path) if isinstance(base, Instance) else _local_class(base, w.ctx.path)
            instance = True
        if cls is None or cls not in w.classes:
            if instance:
                getter = self._foreign_method(base, node.attr.value, dotted(node.value), None, state, getter=True)
                if getter is not None:
                    outcome = self._invoke(getter, cst.Call(func=node), state, site=node)
                    return outcome.returned if outcome is not None else None
                return self._foreign_class_attribute(base, node.attr.value)
            return None
        klass = w.classes[cls]
        name = node.attr.value
        if name == "apply" and not instance and self._derives_autograd_function(klass):
            return Callee(target=f"{cls}.apply", local=True)  # `spmm = SpMM.apply`
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

    def _foreign_class_attribute(self, base, name: str) -> Optional[Fact]:
        """`self.sparse_embeddings` in a base's constructor, for an object of a class of
        another module: a literal value its class body, or a base's, binds (`sparse_embeddings
        = True`), when no code of those modules stores the name on an object."""
        found = self._class_of_object(base)
        if found is None:
            return None
        there, klass, file, _, _ = found
        self.walker.ctx.dependencies.add(file)
        return there.calls._class_value(klass, name, 0)

    def _class_value(self, klass: cst.ClassDef, name: str, depth: int) -> Optional[Fact]:
        """A literal value of a class of this module's body or of its bases' (those of other
        modules of the project included), read through an object; looked up once per class
        and name (every attribute read on `self` of a subclass's object asks)."""
        key = (klass, name)
        if key not in self._class_values:
            self._class_values[key] = None  # (a cycle of bases ends here)
            self._class_values[key] = self._class_value_now(klass, name, depth)
        return self._class_values[key]

    def _class_value_now(self, klass: cst.ClassDef, name: str, depth: int) -> Optional[Fact]:
        w = self.walker
        if (name in self._stored_attributes() or name in self._root._stored_attributes()
                or w.method(klass, name) is not None or depth > 8):
            return None  # (a store anywhere, `TopicClassifier.sparse_embeddings = False` in the script)
        body = [st for st in klass.body.body if not isinstance(st, (cst.FunctionDef, cst.ClassDef))]
        if name in assigned_names(body):
            fact = w.class_attribute(klass, name)
            return fact if isinstance(fact, (Const, Scalar)) else None  # (a computed value: not known)
        bases = [b.value for b in klass.bases if b.keyword is None]
        if len(bases) != 1 or not isinstance(bases[0], cst.Name):
            return None  # (which base answers first is Python's method resolution order, not followed)
        if bases[0].value in w.classes:
            return self._class_value(w.classes[bases[0].value], name, depth + 1)
        found = self._imported_base(bases[0].value)
        return found[0].calls._class_value(found[1], name, depth + 1) if found is not None else None

    def computed_on_read(self, node: cst.Attribute, state) -> bool:
        """Whether `obj.name` runs a `@property` getter of the object's class (of this file)
        on every read: what it gives is made anew each time, not a value the object holds
        (a `cached_property` is made once, and is held)."""
        base = self.walker.ctx.inference.fact(node.value, state)
        cls = _own_class(base.cls, self.walker.ctx.path) if isinstance(base, Instance) else _local_class(base, self.walker.ctx.path)
        klass = self.walker.classes.get(cls) if cls is not None else None
        method = self.walker.method(klass, node.attr.value) if klass is not None else None
        if method is None or not any(isinstance(d.decorator, (cst.Name, cst.Attribute)) and _decorator_name(d) == "property"
                                     for d in method.decorators):
            return False
        # (a getter returning what the object holds, `return self._adj`, cached or not, or a
        # method's result on it, `return self._adj.coalesce()`, gives a tensor of the same
        # graph on every read)
        return not any(type(n) is cst.Return and n.value is not None and _held_by_object(n.value)
                       for n in walk(method.body))

    def entered(self, expr: cst.BaseExpression, state) -> Optional[Fact]:
        """What `with expr as x` binds when `expr` is an object of a class of this file: the
        result of its `__enter__` (often `self`), analysed as a call of that method."""
        recv = self.walker.ctx.inference.fact(expr, state)
        cls = recv.cls if isinstance(recv, Instance) else _local_class(recv, self.walker.ctx.path)
        target = self._method(cls, "__enter__", recv, dotted(expr), bound=True)
        if target is None:
            return None
        outcome = self._invoke(target, cst.Call(func=cst.Attribute(value=expr, attr=cst.Name("__enter__"))), state,
                               site=expr)
        return outcome.returned if outcome is not None else None

    def leave(self, expr: cst.BaseExpression, state) -> None:
        """Where a `with` block ends: the code after the `yield` of a
        `@contextlib.contextmanager` function of this file runs then, with the block's facts
        (`yield` then `for p in model.parameters(): ...`). Its findings count; what it changes
        is not followed."""
        if not isinstance(expr, cst.Call) or "contextmanager" not in (self.walker.ctx.source or ""):
            return
        target = self._target(expr, state)
        if not isinstance(target, _Target) or target.node is None or target.walker is not None:
            return
        qualify = self.walker.ctx.names.qualify
        if not any(qualify(d.decorator) == "contextlib.contextmanager" for d in target.node.decorators):
            return
        if target.node not in self._exits:
            tail = _after_yield(target.node.body.body) if isinstance(target.node.body, cst.IndentedBlock) else None
            self._exits[target.node] = (None if not tail else target.node.with_changes(
                decorators=(), body=target.node.body.with_changes(body=tuple(tail))))
        exit_code = self._exits[target.node]
        if exit_code is not None:
            self._invoke(replace(target, node=exit_code), expr, state)

    def _property(self, getter: cst.FunctionDef, label: str, base, node: cst.Attribute, state) -> Optional[Fact]:
        target = _Target(getter, label, receiver=base, receiver_path=dotted(node.value), summary=True)
        outcome = self._invoke(target, cst.Call(func=node), state, site=node)
        return outcome.returned if outcome is not None else None

    def _stored_attributes(self) -> frozenset:
        """Attribute names the file assigns or deletes anywhere (`x.name = ...`), or every
        name when it calls `setattr` with a name that is not a literal."""
        if self._stores is None:
            found = set()
            source = self.walker.ctx.source or ""
            # attributes are stored by statements only, but `setattr(...)` is an expression
            scan = walk if "setattr" in source or "delattr" in source else statements
            for n in scan(self.walker.module):
                targets = ()
                kind = type(n)  # exact types: a failed `isinstance` on a LibCST class is costly
                if kind in _STORING:
                    targets = (n.target,)
                elif (kind is cst.Call and isinstance(n.func, cst.Name)
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
        module of the project, that module's `forward` when its source can hold a hazard.
        Calling any other object of a class of the project runs its `__call__`."""
        w = self.walker
        if isinstance(fact, Instance) and fact.cls not in ("dict", "list", "tuple"):
            # an object of a class with `__call__` (a noise adder, a clipping policy)
            found = self._method(fact.cls, "__call__", fact, dotted(func), bound=True)
            return found if found is not None else self._foreign_method(fact, "__call__", dotted(func), call, state)
        cls = _local_class(fact, w.ctx.path)
        if cls is None and isinstance(fact, Module) and fact.cls:
            return self._foreign_forward(func, fact, call, state)
        if cls is None or cls not in w.classes:
            return None
        method = w.method(w.classes[cls], "forward")
        if method is None or _is_static(method):
            return None
        return _Target(method, f"{cls}.forward", receiver=fact, receiver_path=dotted(func))

    def _foreign_class(self, qualname: str) -> Optional[tuple]:
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

    def _class_of_object(self, obj) -> Optional[tuple]:
        """`_foreign_class` of the class an object or model is an instance of, when that is a
        class of another module."""
        qualname = obj.cls if isinstance(obj, (Instance, Module)) else None
        if not qualname or ("::" not in qualname and "." not in qualname):
            return None
        return self._foreign_class(qualname)

    def _foreign_class_method(self, cls: Callee, name: str, call: cst.Call, state) -> Optional[_Target]:
        """`Class.method(...)` of a class or static method of a class of another module, run
        there (`cls` is that class there), when the class's source holds a token or the call
        passes a fact a hazard can hang on."""
        if os.path.abspath(cls.file) == os.path.abspath(self.walker.ctx.path):
            return None
        found = self._foreign_class(f"{cls.file}::{cls.target}")
        if found is None:
            return None
        there, klass, file, cname, tokens = found
        method = there.method(klass, name)
        kind = _method_kind(method) if method is not None else None
        if kind is None:
            return None  # an instance method through the class, or inherited: not followed
        inf = self.walker.ctx.inference
        if not tokens and not any(not a.star and _relevant(inf.fact(a.value, state)) for a in call.args):
            return None
        self.walker.ctx.dependencies.add(file)
        # `cls` is a class of that module: it travels with its file, as a callable value does
        receiver = Callee(target=cname, local=True, file=file) if kind == "classmethod" else None
        return _Target(method, f"{cname}.{name}", receiver=receiver, walker=there, summary=True)

    def _foreign_method(self, recv, name: str, recv_path: Optional[str], call: Optional[cst.Call], state,
                        getter: bool = False) -> Optional[_Target]:
        """`obj.method(...)` (or, with `getter`, the property `obj.name`) on an object of a
        class of another module: the method run in that module, the object one of its own
        classes there, when the class's source holds a token or the call passes a fact a
        hazard can hang on."""
        found = self._class_of_object(recv)
        if found is None:
            return None
        there, klass, file, cname, tokens = found
        method, owner = there.method(klass, name), there
        if method is None:
            # inherited from a base class of a third module (`class MFTrainer(BaseTrainer)`)
            method, owner = there.calls._inherited(klass, name) or (None, None)
        if method is None or _method_kind(method) is not None or _is_property(method) != getter:
            return None
        if getter and not any(_decorator_name(d) in ("property", "cached_property") for d in method.decorators):
            return None  # a setter or deleter
        inf = self.walker.ctx.inference
        if not tokens and not _relevant(recv) and not (call is not None and any(
                not a.star and _relevant(inf.fact(a.value, state)) for a in call.args)):
            return None
        self.walker.ctx.dependencies.add(file)
        if owner is there:
            receiver = replace(recv, cls=cname) if isinstance(recv, Instance) else replace(recv, cls=f"{file}::{cname}")
        else:
            # there the object is of a subclass that module does not know
            receiver = replace(recv, cls=f"{file}::{cname}")
        return _Target(method, f"{cname}.{name}", receiver=receiver, receiver_path=recv_path, walker=owner,
                       summary=True, own_class=owner is there and isinstance(recv, Instance))

    def _foreign_forward(self, func: cst.BaseExpression, fact: Module, call: cst.Call, state) -> Optional[_Target]:
        """`model(x)` of a model class of another module: its `forward`, when the class's
        source holds a token or the call passes a fact a hazard can hang on."""
        found = self._foreign_class(fact.cls)
        if found is None:
            return None
        there, klass, file, name, tokens = found
        method, owner = there.method(klass, "forward"), there
        if method is None:
            # a template `forward` of a base class of a third module (`h = self.encode(x)`)
            method, owner = there.calls._inherited(klass, "forward") or (None, None)
        if method is None or _is_static(method):
            return None
        inf = self.walker.ctx.inference
        if not tokens and not _relevant(fact) and not any(
                not a.star and _relevant(inf.fact(a.value, state)) for a in call.args):
            return None
        self.walker.ctx.dependencies.add(file)
        # in that module the instance is one of its own classes: its methods are followed there
        # (in a base's module, an object of a subclass that module does not know)
        return _Target(method, f"{name}.forward", receiver=replace(fact, cls=f"{file}::{name}"),
                       receiver_path=dotted(func), walker=owner)

    def _foreign_constructor(self, call: cst.Call, state) -> Optional[_Target]:
        """`Model(...)` of a model class of another module: its `__init__`, run there, for what
        it stores on the instance (`self.adj = ...`, a sparse table a mixin's method made)."""
        inf = self.walker.ctx.inference
        module = inf.models(call, inf, state) if inf.models is not None else None
        if not isinstance(module, Module) or not module.cls:
            return None
        found = self._foreign_class(module.cls)
        if found is None:
            return None
        there, klass, file, name, _ = found
        return self._constructor_there(module, there, klass, name, file)

    def _constructor_there(self, module: Module, there, klass: cst.ClassDef, name: str, file: str) -> _Target:
        """The constructor of a model class of another module, run there on a new instance."""
        self.walker.ctx.dependencies.add(file)
        receiver = replace(module, cls=f"{file}::{name}")
        init = there.method(klass, "__init__")
        if init is None:
            found = there.calls._inherited(klass, "__init__")
            if found is not None:
                init, there = found
        if init is None:
            return _Target(None, name, receiver=receiver, klass=klass, makes="module", walker=there)
        return _Target(init, name, receiver=receiver, klass=klass, makes="module", walker=there, summary=True)

    def _imported(self, call: cst.Call, state, local: str, attribute: str) -> Optional[_Target]:
        """A function of another module of the project whose source can hold a hazard (the
        engine's prefilter found a token in it), or that the call passes a fact that can; or
        a dataclass or NamedTuple class of another module (`from config import Config`)."""
        if (attribute or local)[:1].isupper():
            made = self._imported_class(call, state, local, attribute)
            if made is not None:
                return made
        wanted = (f"{local}.{attribute}" if attribute else local) in self._imported_names()
        if not wanted:
            inf = self.walker.ctx.inference
            wanted = any(_relevant(inf.fact(a.value, state)) and not isinstance(inf.fact(a.value, state), Callee)
                         for a in call.args) or self._imported_maker(local, attribute)
        found = self._resolved_function(local, attribute)
        if found is None:
            return None
        file, name = found
        if not wanted and not self._builds_literal_shape(file, name) and not self._writes_module_state(file, name):
            return None
        there = self._function_there(file, name)
        return _Target(there.functions[name], name, walker=there) if there is not None else None

    def _imported_names(self) -> frozenset:
        """The names this module imports from modules of the project whose code holds a
        token (for another module than the one checked, read on first use)."""
        ctx = self.walker.ctx
        pending = ctx.imported_pending
        if pending is not None:
            ctx.imported_pending = None
            text, file, here = pending
            from .project.models import project_index
            index = project_index()
            index.missing = set()
            names, _, files = index.imported_code(text, file, ctx.tokens)
            ctx.imported = frozenset(names)
            here.dependencies.update(files | index.missing)
        return ctx.imported

    def _resolved_function(self, local: str, attribute: str) -> Optional[tuple[str, str]]:
        """(file, name) of the function of another module of the project that `local` (or
        `local.attribute`) names in this file."""
        from .project.models import project_index
        index = project_index()
        ctx = self.walker.ctx
        found = index.resolve_function(local, ctx.path, ctx.source, attribute)
        ctx.dependencies.update(index.missing)
        return found

    def _function_there(self, file: str, name: str):
        """The walker of another module that defines the function `name`, recorded as a
        dependency of this file; None when it cannot be read."""
        walker = self._walker_for(file)
        if walker is None or name not in walker.functions:
            return None
        self.walker.ctx.dependencies.add(file)
        return walker

    def keeps_call(self, node: cst.FunctionDef) -> bool:
        """Whether a call of this file's function `node` runs its body as written, despite
        its decorators (decorators.py), decided once per function."""
        found = self._keeps.get(node)
        if found is None:
            found = self._keeps[node] = keeps_call(node, self.walker.ctx.names.qualify, self._decorator_function)
        return found

    def _decorator_function(self, expr: cst.BaseExpression) -> Optional[cst.FunctionDef]:
        """The project function a decorator names: one of this file, or one it imports."""
        w = self.walker
        if isinstance(expr, cst.Name):
            if expr.value in w.functions:
                return w.functions[expr.value]
            local, attribute = expr.value, ""
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            local, attribute = expr.value.value, expr.attr.value
        else:
            return None
        found = self._resolved_function(local, attribute)
        there = self._function_there(*found) if found is not None else None
        return there.functions[found[1]] if there is not None else None

    def is_record_class(self, local: str) -> bool:
        """Whether a name of this file means a dataclass or NamedTuple, of this file or
        imported from another module of the project."""
        from .project.models import project_index
        w = self.walker
        if local in w.classes:
            return records.record_kind(w.classes[local]) is not None
        index = project_index()
        qualname = index.resolve_name(local, w.ctx.path, w.ctx.source)
        info = index._class(qualname, w.ctx.path, w.ctx.source) if qualname is not None else None
        return info is not None and bool(records.declares_record(info.node))

    def _imported_class(self, call: cst.Call, state, local: str, attribute: str) -> Optional[_Target]:
        """The constructor of a class that the file imports from another module of the
        project: a record class (a dataclass or NamedTuple without its own `__init__`), or a
        plain class (no bases) whose `__init__` can build a fact (its source holds a token)
        or is passed one, or whose instances are called."""
        from .project.models import project_index
        index = project_index()
        ctx = self.walker.ctx
        qualname = index.resolve_name(local, ctx.path, ctx.source, attribute)
        ctx.dependencies.update(index.missing)
        info = index._class(qualname, ctx.path, ctx.source) if qualname is not None else None
        if info is None:
            return None
        record = records.declares_record(info.node)
        if not record:
            bases = [b for b in info.node.bases if not (isinstance(b, ast.Name) and b.id == "object")]
            if info.node.keywords or (bases and (len(index._project_bases(info.path, info.name)) != len(bases)
                                                 or index.module_class(qualname, ctx.path, text=ctx.source) is not None)):
                return None  # a model, or a class with a base from outside the project (`torch.Tensor`)
            inf = ctx.inference
            passed = any(not a.star and _relevant(inf.fact(a.value, state)) for a in call.args)
            # an instance that is called later (`noise(params)`) gets its facts then
            if not passed and (f"{local}.{attribute}" if attribute else local) not in self._imported_names() \
                    and not any(name == "__call__" for name, _ in index._methods_of(info.path, info.name)):
                return None
        file = os.path.abspath(info.path)
        if file == os.path.abspath(ctx.path):
            return None
        there = self._walker_for(file)
        if there is None or info.name not in there.classes:
            return None
        klass = there.classes[info.name]
        init = there.method(klass, "__init__")
        owner = there
        if init is None and not record:
            # a subclass that runs the constructor it inherits from a base of another module
            inherited = there.calls._inherited(klass, "__init__")
            if inherited is not None:
                init, owner = inherited[0], inherited[1] or there
        if (init is None) != record:
            return None  # a record with its own `__init__`, or a plain class without one
        ctx.dependencies.add(file)
        if record:
            return _Target(None, info.name, klass=klass, makes="instance", walker=there)
        return _Target(init, info.name, receiver=Instance(cls=f"{there.ctx.path}::{info.name}"), klass=klass,
                       makes="instance", walker=owner, summary=True)

    def _imported_maker(self, local: str, attribute: str) -> bool:
        """A function of another module that defines nested functions (a decorator factory):
        what it returns may keep what it is passed."""
        from .project.models import project_index
        ctx = self.walker.ctx
        index = project_index()
        found = index.resolve_function(local, ctx.path, ctx.source, attribute)
        return found is not None and index.makes_functions(*found)

    def _writes_module_state(self, file: str, name: str) -> bool:
        """Whether a function of another module may change what its module holds (`global x`,
        `TABLES["adj"] = ...`, `TABLES.update(...)`), read by a regex: followed, so what this
        file imported from there is not kept stale."""
        key = (file, name)
        if key not in self._module_writes:
            from .project.models import project_index
            index = project_index()
            code = index._definition_text(file, name, set())
            found = False
            if any(_MODULE_WRITE.search(c) for c in code):
                # only a write to a name the module binds at its top level
                held = set(_MODULE_NAME.findall(index._text(file) or ""))
                found = any((m.group(1) or m.group(2) or m.group(3)) in held | {None}
                            for c in code for m in _MODULE_WRITE.finditer(c))
            self._module_writes[key] = found
        return self._module_writes[key]

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
                module, text, aliases, positions = parsed
                here = self.walker.ctx
                shown = os.path.normpath(os.path.join(os.path.dirname(here.path),
                                                      os.path.relpath(file, os.path.dirname(os.path.abspath(here.path)))))
                ctx = Context(shown, text, Names(dict(aliases)), module)
                ctx.positions_kept = positions
                # the same rules run there: a method of that module holds a token as one here does,
                # and a function it imports whose code holds one is followed as from here
                ctx.tokens = here.tokens
                # (worked out when a call there first asks: most modules followed make none)
                ctx.imported_pending = (text, file, here) if here.tokens else None
                hooks_for = getattr(here, "hooks_for", None)
                ctx.hooks_for = hooks_for
                walker = type(self.walker)(module, ctx, hooks_for(text) if hooks_for is not None else self.walker.hooks)
                # one walker per module for the whole check: a module's globals are one
                # state, which a call from any module may change
                walker.calls._foreign = self._foreign
                walker.calls._root = self._root
                walker.collect()
            self._foreign[file] = walker
        return self._foreign[file]

    # -- analysing a callee --------------------------------------------------------------

    def exception(self, call: cst.Call, state) -> Optional[Instance]:
        """`ValueError(adj)`, or `Carrier(adj)` of an exception class of this file that keeps
        what it is given: an exception whose `args` are the facts of the call's arguments."""
        func = call.func
        if not isinstance(func, cst.Name) or any(a.star or a.keyword is not None for a in call.args):
            return None
        w = self.walker
        inf = w.ctx.inference
        if inf is None:
            return None  # a module's defaults, read before its walk: no exception is made there
        name = func.value
        if name in inf.locals or inf.lookup(name, state) is not None:
            return None
        if not (w.exceptions.builtin(name) or (name in w.classes and w.exceptions.keeps_call_args(name))):
            return None
        args = Items(tuple(inf.fact(a.value, state) for a in call.args))
        return Instance(cls=name, attrs=(("args", args),), evidence=(Evidence.at(call, f"an instance of `{name}`"),))

    def _new_args(self, name: str, call: cst.Call, state) -> tuple:
        """The `args` an exception of a class of this file holds when its `__init__` starts:
        the call's positional arguments."""
        w = self.walker
        if any(a.star for a in call.args) or not w.exceptions.args_at_init(name):
            return ()
        inf = w.ctx.inference
        return (("args", Items(tuple(inf.fact(a.value, state) for a in call.args if a.keyword is None))),)

    def base_init(self, call: cst.Call, state) -> Optional[tuple[str, Optional[Fact]]]:
        """`super().__init__(...)` in `__init__` of an exception class of this file whose
        base is a builtin exception: it sets `self.args` to what it is given (the path and
        its fact, unknown when the arguments are not all positional)."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "__init__" or not _is_super(func.value):
            return None
        w = self.walker
        scope = w.ctx.scope.node if w.ctx.scope is not None else None
        if not isinstance(scope, cst.FunctionDef) or _method_kind(scope) is not None:
            return None
        klass = next((k for k in w.classes.values()
                      if isinstance(k.body, cst.IndentedBlock) and any(s is scope for s in k.body.body)), None)
        params = [*scope.params.posonly_params, *scope.params.params]
        if klass is None or not params or w.exceptions.ancestry(klass.name.value) is None:
            return None
        path = params[0].name.value + ".args"
        if not w.exceptions.base_init_is_builtin(klass) or any(a.star or a.keyword is not None for a in call.args):
            return path, None
        inf = w.ctx.inference
        return path, Items(tuple(inf.fact(a.value, state) for a in call.args))

    def _default_decides(self, node: cst.FunctionDef, defaulted: set, bound: dict) -> bool:
        """Whether a literal default the call leaves in place picks what the function does
        (`PENALTIES[penalty](adj)`, `if name == "adam":`): the function's own analysis knows
        no value for the parameter, so this call reports what it runs."""
        if not defaulted or self.walker.silent:
            return False
        picks = self._picking.get(node)
        if picks is None:
            picks = set()
            for n in walk(node.body):
                if isinstance(n, cst.SubscriptElement) or isinstance(n, cst.If):
                    part = n.slice if isinstance(n, cst.SubscriptElement) else n.test
                    picks |= {m.value for m in walk(part) if isinstance(m, cst.Name)}
            self._picking[node] = picks = frozenset(picks)
        return any(name in picks and isinstance(bound.get(name), Const) for name in defaulted)

    def _backward_adds_to(self, target: _Target, site: cst.CSTNode) -> bool:
        """A method of a model of this file (`model(x)`, its `forward`) called where a
        backward pass follows: the run the class walk gives it has none after it, so what
        the backward raises over the graph it builds (an in-place edit of a sparse tensor it
        saved) is found only in this run."""
        model = target.receiver
        if not (isinstance(model, Module) and not self.walker.silent and not _constructor(target)
                and self.walker.ctx.inference.grad_enabled and self.walker.ctx.backward_follows(site)):
            return False
        if model.flags.has_sparse is False and model.flags.has_dense is False:
            return False  # a frozen model (a teacher): the backward does not go through it
        # (`encoder(x).detach()`: nor through what is cut from the graph at once)
        statement = self.walker.ctx.statement
        return statement is None or not any(type(n) is cst.Attribute and n.value is site and n.attr.value in ("detach", "detach_")
                                            for n in walk(statement))

    def _call_adds_to(self, target: _Target, bound: dict, state, paths: dict, site: cst.CSTNode) -> bool:
        """Whether a call of a method of this file on `self` starts the method otherwise than
        a reported run the class walk gives it (from the object its constructor leaves, with
        the same outer facts, grad on, no backward after, nothing saved for backward). One
        that starts it the same way would report what that run reports, at the cost of
        another walk of the method and of every method it calls on `self`; its outcome is
        still worked out, silently."""
        starts = self.walker.method_starts.get(target.node)
        if not starts or target.closure:
            return True
        ctx = self.walker.ctx
        if not ctx.inference.grad_enabled or ctx.backward_follows(site) or _saved_into(state.saved, paths):
            return True
        initial: dict[str, Fact] = {}
        for name, fact in bound.items():
            initial[name] = fact
            for attr, sub in getattr(fact, "attrs", ()) or ():
                initial[f"{name}.{attr}"] = sub
        outer = self._view(state, target.node)
        return not any(initial == first and (outer is around or outer == around) for first, around in starts)

    def _invoke(self, target: _Target, call: cst.Call, state, site: Optional[cst.CSTNode] = None) -> Optional[Outcome]:
        site = site if site is not None else call
        if target.node is not None and target.node.decorators and not target.bare:
            wrapped = self._through_decorators(target, call, state, site)
            if wrapped is not None:
                return wrapped
            if not (target.walker or self.walker).calls.keeps_call(target.node):
                return None  # a decorator that hides the body: the call is unknown
        if target.node is None and target.makes == "module":
            return self._module_without_init(target, call, state)
        if target.node is None:
            made = self.exception(call, state) if target.makes == "instance" else None
            if made is not None:
                return Outcome(returned=made)
            return self._construct(target, call, state)
        bound, paths, known, defaulted, containers = self._bind(target, call, state)
        if bound is not None and target.closure:
            bound = {**dict(target.closure), **bound}
            known = known or any(_relevant(f) for _, f in target.closure)
        # A function of another module is analysed even when nothing it is passed is known:
        # what it returns whatever its arguments (a fresh sparse tensor) is still a fact, as
        # the summary of a function of this file is.
        if bound is None:
            return None
        # a method called on the object a reported run is about (`self._initialize()` inside
        # `fit()`) reports as that run does: the object's state at the call is what it sees
        silent = not (known or target.walker is not None or (
            target.receiver_path == "self" and not self.walker.silent and target.receiver is not None
            and self._call_adds_to(target, bound, state, paths, site))
            or self._default_decides(target.node, defaulted, bound)
            or self._backward_adds_to(target, site))
        owner_calls = (target.walker or self.walker).calls
        freezes = silent and owner_calls._freezes(target.node)
        if silent and (freezes or owner_calls._stores_on_parameters(target.node)) and any(
                isinstance(v, Module) for v in bound.values()):
            # it may freeze or replace a submodule a model holds: followed for that
            silent = False
        if silent and not (target.summary or self._makes_functions(target.node)):
            inf = self.walker.ctx.inference
            if freezes and any(a.star or inf.fact(a.value, state) is None for a in call.args):
                # it freezes parameters of what it is given, which is not known here: any
                # model may hold them
                return Outcome(followed=False, unplaced=True)
            return None
        if _depth() >= (MAX_MODEL_DEPTH if _constructor(target) else MAX_DEPTH) or target.node in _ACTIVE:
            return None
        inf = self.walker.ctx.inference
        if target.walker is not None:
            # Another file: evidence is resolved to positions now, with its file, and the
            # callee's findings join this file's results.
            here = self.walker.ctx
            if isinstance(target.receiver, Instance) and "::" not in target.receiver.cls and not target.own_class:
                # `self` there is an object of a subclass it does not know: its methods are
                # not looked up among that module's classes
                bound = {k: replace(v, cls=f"{here.path}::{v.cls}") if v is target.receiver else v
                         for k, v in bound.items()}
            bound = {k: v if k in defaulted else _portable(v, here, here.path) for k, v in bound.items()}
            there = target.walker
            before = len(there.ctx.diagnostics)
            saved = {k: _portable_evidence(e, here, here.path) for k, e in _saved_into(state.saved, paths).items()}
            result = there.calls._analyse(target.node, bound, there.calls.module_outer(target.node), inf.grad_enabled,
                                          here.backward_at_call(site), saved)
            if result is not None:
                result = _Result(_portable(_named_by_module(result.returned, there), there.ctx, there.ctx.path),
                                 {k: _portable(v, there.ctx, there.ctx.path) for k, v in result.effects.items()},
                                 saved={k: _portable_evidence(e, there.ctx, there.ctx.path)
                                        for k, e in result.saved.items()},
                                 backward=result.backward)
            after = here.backward_after(site)
            for d in there.ctx.findings(before):
                evidence = _with_call_site(d.evidence, here, site, target.name, after)
                if installed.installed(d.path) and not installed.installed(here.path):
                    anchored = _at_call_site(d, evidence, here, site)
                    if anchored is not None:
                        here.diagnostics.append(anchored)
                else:
                    here.diagnostics.append(replace(d, fix=None, evidence=evidence))
            here.dependencies.update(there.ctx.dependencies)
        else:
            # a call from module code sees the module's facts as they are now; a call from a
            # function sees the module's stable ones, as that function does
            outer = self._view(state, target.node)
            self.walker.silent += silent
            reported = self.walker.ctx.dependents()
            try:
                result = self._analyse(target.node, bound, outer, inf.grad_enabled, self.walker.ctx.backward_at_call(site),
                                       _saved_into(state.saved, paths))
            finally:
                self.walker.silent -= silent
            # a finding about a model the caller passed (`opt = make_opt(model)`) is revoked
            # when the caller changes that model afterwards
            self.walker.ctx.rehome(reported, inf, paths, target.node)
        if result is None:
            return None
        gradients = None
        if target.backward is not None and (self.walker.ctx.backward_follows(site) or inf.entry is not None):
            # autograd runs it only when a backward comes after the call; a public function
            # of a library applying it is called by training code that does
            gradients = self._run_backward(target, result, call, state)
        outcome = Outcome(gradients=gradients, unplaced=result.unplaced)
        if result.untracked:
            # whatever the call was given may have changed in ways not followed: forget it
            for arg in call.args:
                for path in _paths_in(arg.value):
                    outcome.effects[path] = None
        for key, fact in result.effects.items():
            if key.startswith(_GLOBAL):
                path = key[len(_GLOBAL):]
                if target.walker is None:
                    if self._rebinds_here(target.node, path.split(".")[0]) is not False:
                        outcome.effects[path] = fact
                else:
                    target.walker.module_changed(path, fact)
                continue
            root, _, rest = key.partition(".")
            caller = paths.get(root)
            if caller:
                outcome.effects[caller + ("." + rest if rest else "")] = fact
            elif root in containers:
                outcome.effects[containers[root]] = None
            elif not rest and froze(bound.get(root), fact):
                outcome.unplaced = True  # a submodule frozen that the caller holds by no name
        outcome.backward = result.backward
        for key, evidence in result.saved.items():
            root, _, rest = key.partition(".")
            caller = paths.get(root)
            if caller:
                outcome.saved[caller + ("." + rest if rest else "")] = evidence
        if target.makes is not None:
            receiver = target.receiver
            # the attributes it had (a dataclass's fields before `__post_init__`), as the
            # constructor left them
            attrs = dict(receiver.attrs)
            for k, v in result.effects.items():
                if k.startswith("self."):
                    attrs.pop(k[len("self."):], None)
                    if v is not None:
                        attrs[k[len("self."):]] = v
            if target.makes == "module":
                receiver = self._made_module(target, receiver, result)
                if receiver.parts is not None:
                    # its submodules are reached through the parameter names (`model.head`)
                    attrs = {k: v for k, v in attrs.items() if not isinstance(v, Module)}
            outcome.returned = replace(receiver, attrs=tuple(attrs.items()))
            outcome.effects = {k: v for k, v in outcome.effects.items() if not k.startswith("self")}
        elif isinstance(result.returned, Tensor):
            outcome.returned = result.returned.why(site, f"returned by `{target.name}()`")
        else:
            outcome.returned = result.returned
        return outcome

    def _through_decorators(self, target: _Target, call: cst.Call, state, site) -> Optional[Outcome]:
        """A function of this file decorated by functions of this file runs what they make
        of it: each decorator (or what a decorator factory returns) is called with the
        function so far, and the call runs the last wrapper, whose body calls the function
        as written where it does. None where any step is not known."""
        node = target.node
        if target.walker is not None or target.receiver is not None or target.makes is not None:
            return None
        if _depth() >= MAX_DEPTH:
            return None
        value: Optional[Fact] = Callee(target=target.name, node=node if target.closure else None,
                                       local=not target.closure, closure=target.closure, bare=True)
        for decorator in reversed(node.decorators):
            expr = decorator.decorator
            if self._decorator_function(expr.func if isinstance(expr, cst.Call) else expr) is None:
                return None  # torch's, the standard library's, an unknown one: not run here
            if any(type(n) is cst.Name and self.walker.times_bound(n.value) > 1 for n in walk(expr)):
                # Python applies it once, at the `def`: what a name rebound since held
                # there is not what the facts hold now
                return None
            made = self._value_of_call(expr, state) if isinstance(expr, cst.Call) else Callee(target=expr.value, local=True) \
                if isinstance(expr, cst.Name) else None
            if not isinstance(made, Callee):
                return None
            value = self._call_with(made, value, expr, state, site)
            if not isinstance(value, Callee):
                return None
        return self.call_value(value, call, state, site=site)

    def _value_of_call(self, call: cst.Call, state) -> Optional[Fact]:
        """What a call returns (a decorator factory's decorator), analysed now."""
        target = self._target(call, state)
        if isinstance(target, Callee):
            outcome = self.call_value(target, call, state)
        elif isinstance(target, _Target):
            outcome = self._invoke(target, call, state)
        else:
            return None
        return outcome.returned if outcome is not None else None

    def _call_with(self, fact: Callee, argument: Fact, func: cst.BaseExpression, state, site) -> Optional[Fact]:
        """What calling a callable value with one value returns (a decorator given the
        function it decorates)."""
        held = state.copy()
        held.env[_DECORATED] = argument
        outcome = self.call_value(fact, cst.Call(func=func, args=[cst.Arg(cst.Name(_DECORATED))]), held, site=site)
        return outcome.returned if outcome is not None else None

    def _made_module(self, target: _Target, receiver: Module, result: _Result) -> Module:
        """What a model class's instance is made of, from what its constructor stored."""
        from . import modules
        defining = target.walker or self.walker
        init = target.node if target.node is not None and target.node.name.value == "__init__" else None
        qualify = defining.ctx.names.qualify
        functional = modules.functional_sparse(target.klass, qualify) if target.klass is not None else {}
        dense = modules.densely_read(target.klass, qualify) if target.klass is not None else frozenset()
        return modules.from_run(receiver, result.effects, result.untracked, modules.stored_calls(init), functional,
                                modules.assignment_order(init), dense)

    def _module_without_init(self, target: _Target, call: cst.Call, state) -> Optional[Outcome]:
        """A model class without a constructor of the project: `nn.Module`'s (no parameters
        but those its methods use functionally) or a torch layer's, given the call's arguments."""
        from .project.models import project_index
        from .evaluation.inference import State
        receiver = target.receiver
        info = project_index().module_class(receiver.cls, self.walker.ctx.path, text=self.walker.ctx.source)
        effects = {}
        if info is not None and info.torch_base is not None:
            # the call's arguments mean what they mean at the call (`sparse=sparse`)
            made = self._torch_base_init(info.torch_base, cst.Name(_MADE), call,
                                         State(env={**state.env, _MADE: receiver}))
            if made is None:
                return Outcome(returned=receiver)
            effects = {"self" + k[len(_MADE):]: v for k, v in made.effects.items()}
        result = _Result(None, effects)
        return Outcome(returned=self._made_module(target, receiver, result))

    def default_instance(self, qualname: str, where: cst.CSTNode) -> Optional[Module]:
        """The instance of a model class its defaults build (`Model()`, a required argument
        not known): what its own methods, or a parameter annotated with it, see."""
        from .project.models import project_index
        w = self.walker
        here = os.path.abspath(w.ctx.path)
        info = project_index().module_class(qualname, w.ctx.path, text=w.ctx.source)
        if info is None:
            return None
        # a class re-exported by a package, or named by its dotted path: where it is defined
        file, name = info.path, info.name
        qualname = f"{file}::{name}"
        shell = w.module_shell(qualname, where)
        if shell is None:
            return None
        if file == here and name in w.classes:
            klass, there = w.classes[name], None
        else:
            found = self._foreign_class(qualname)
            if found is None:
                return shell
            there, klass = found[0], found[1]
        init = (there or w).method(klass, "__init__")
        from .evaluation.inference import State
        call = cst.Call(func=cst.Name(name), args=_unknown_arguments(init))
        state = State()
        saved = w.ctx.inference
        # a module another one called into has no run of its own body: names as imported
        w.ctx.inference = w.module_inference or saved or w._inference(w.ctx.names, {}, frozenset())
        try:
            if there is None:
                target = self._class_target(name, call, state)
            else:
                target = self._constructor_there(shell, there, klass, name, os.path.abspath(there.ctx.path))
            outcome = self._invoke(target, call, state, site=where) if isinstance(target, _Target) else None
        finally:
            w.ctx.inference = saved
        made = outcome.returned if outcome is not None else None
        return made if isinstance(made, Module) else shell

    def helper_test(self, call: cst.Call, state) -> Optional[tuple]:
        """`is_sparse_tensor(x)` as a branch test: a function of the project whose body ends
        in its only `return <test>` (what comes before rebinds no parameter) -> (that test,
        its parameters -> the expressions the call passes, how its module names things), so
        the test is read as if written at the call. None for anything else."""
        if any(a.star for a in call.args):
            return None
        target = self._target(call, state)
        if not isinstance(target, _Target) or target.node is None or target.receiver is not None:
            return None
        node = target.node
        if node not in self._tests:
            self._tests[node] = _returned_test(node)
        returned = self._tests[node]
        if returned is None:
            return None
        positional = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        given: dict[str, cst.BaseExpression] = {}
        for i, a in enumerate(call.args):
            name = a.keyword.value if a.keyword is not None else (positional[i] if i < len(positional) else None)
            if name is None:
                return None
            given[name] = a.value
        # a layout is named through the imports of the helper's module
        return returned, given, (target.walker or self.walker).ctx.names.qualify

    def autograd_function(self, call: cst.Call, state) -> Optional[tuple[cst.FunctionDef, cst.FunctionDef]]:
        """(forward, backward) of the custom autograd function `Fn.apply(...)` runs, when both
        are known static methods."""
        target = self._target(call, state)
        if not isinstance(target, _Target) or target.backward is None:
            return None
        return target.node, target.backward

    def gradients(self, call: cst.Call) -> Optional[Fact]:
        """What the `backward` of the custom autograd function `Fn.apply(...)` returns for
        this call (one gradient per input), when it was run."""
        outcome = self.outcomes.get(call)
        return outcome.gradients if outcome is not None else None

    def _run_backward(self, target: _Target, forward: _Result, call: cst.Call, state) -> Optional[Fact]:
        """The `backward` of a custom autograd function, with its context holding what
        `forward` stored on it (`ctx.save_for_backward(t)` read back as `ctx.saved_tensors`,
        `ctx.scale = ...`) and which inputs need a gradient (`ctx.needs_input_grad`), and the
        incoming gradient of a single dense output shaped like that output. Autograd runs it
        without grad, as `loss.backward()` does. What it returns."""
        from .torchops.torchapi import AUTOGRAD_CTX
        first = [*target.node.params.posonly_params, *target.node.params.params][0].name.value
        prefix = first + "."
        attrs = tuple((k[len(prefix):], v) for k, v in forward.effects.items()
                      if k.startswith(prefix) and "." not in k[len(prefix):] and v is not None)
        needs = self._needs_input_grad(call, state)
        if needs is not None:
            attrs += (("needs_input_grad", needs),)
        ctx_fact = Instance(cls=AUTOGRAD_CTX, attrs=attrs)
        params = [*target.backward.params.posonly_params, *target.backward.params.params]
        if not params or not _relevant(ctx_fact) or target.backward in _ACTIVE or _depth() >= MAX_DEPTH:
            return None
        bound: dict[str, Fact] = {params[0].name.value: ctx_fact}
        out = forward.returned
        if len(params) == 2 and isinstance(out, Tensor) and out.layout == "strided" and out.shape is not None:
            bound[params[1].name.value] = Tensor(layout="strided", grad=NOGRAD, shape=out.shape, origin="grad-output",
                                                 evidence=(Evidence.at(call, f"the gradient of its output, shaped "
                                                                             f"{list(out.shape)} like it"),))
        inf = self.walker.ctx.inference
        outer = state.env if inf is self.walker.module_inference else inf.outer
        result = self._analyse(target.backward, bound, outer, grad=False)
        return result.returned if result is not None else None

    def _needs_input_grad(self, call: cst.Call, state) -> Optional[Items]:
        """`ctx.needs_input_grad` of `Fn.apply(...)`: whether each input requires grad, where
        the call's argument says (a literal or a tensor whose grad is known)."""
        if any(a.star or a.keyword is not None for a in call.args):
            return None
        inf = self.walker.ctx.inference
        needs = []
        for a in call.args:
            fact = inf.fact(a.value, state)
            need = fact.requires_grad if isinstance(fact, Tensor) else (False if isinstance(fact, Const) else None)
            needs.append(Const(need) if need is not None else None)
        return Items(tuple(needs), "tuple") if any(n is not None for n in needs) else None

    def _construct(self, target: _Target, call: cst.Call, state) -> Optional[Outcome]:
        """An object of a class without `__init__`: a dataclass or NamedTuple binds its fields
        from the call and its defaults (then runs `__post_init__`); another class holds its
        class-level literal values."""
        defining = target.walker or self.walker
        klass = target.klass
        cls = target.name if target.walker is None else f"{defining.ctx.path}::{target.name}"
        evidence = (Evidence.at(call, f"an instance of `{target.name}`"),)
        record = records.record_of(defining, klass)
        if record is None:
            if target.walker is not None:
                return None
            if records.record_kind(klass) is not None:
                # a record whose fields are not all known (a base of another module)
                return Outcome(returned=Instance(cls=cls, evidence=evidence))
            return Outcome(returned=Instance(cls=cls, attrs=self._fields(klass, call), evidence=evidence))
        if any(a.star for a in call.args):
            # which fields the unpacked arguments set is not known
            return Outcome(returned=Instance(cls=cls, evidence=evidence))
        inf = self.walker.ctx.inference
        given = records.bind(record, [a.value for a in call.args if a.keyword is None],
                             {a.keyword.value: a.value for a in call.args if a.keyword is not None})
        if given is None:
            return None  # the call raises
        facts: dict[str, Optional[Fact]] = {}
        for name, source in given.items():
            if isinstance(source, records.Field):
                default = source.default
                if target.walker is not None:
                    default = _qualified(_portable(default, defining.ctx, defining.ctx.path), defining.ctx.path)
                facts[name] = default
            else:
                facts[name] = inf.fact(source, state)
        instance = records.instance_from(record, cls, facts, evidence)
        post_init = defining.method(klass, "__post_init__")
        if post_init is None:
            return Outcome(returned=instance)
        if "__setattr__" in defining.ctx.code(post_init):
            # `object.__setattr__(self, ...)` in a frozen dataclass: its writes are not followed
            return Outcome(returned=Instance(cls=cls, evidence=evidence))
        after = _Target(post_init, f"{target.name}.__post_init__", receiver=instance, klass=klass,
                        makes="instance", walker=target.walker, summary=True)
        return self._invoke(after, cst.Call(func=cst.Name("__post_init__")), state, site=call)

    @staticmethod
    def _fields(klass: cst.ClassDef, call: cst.Call) -> tuple:
        """The class-level literal values of a plain class without `__init__` (none are
        recorded when the call passes arguments: a base of another module takes them)."""
        if call.args:
            return ()
        fields: dict[str, Optional[Fact]] = {}
        for line in klass.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    fields[small.target.value] = literal_fact(small.value)
                elif (isinstance(small, cst.Assign) and len(small.targets) == 1
                      and isinstance(small.targets[0].target, cst.Name)):
                    fields[small.targets[0].target.value] = literal_fact(small.value)
        return tuple((k, v) for k, v in fields.items() if v is not None)

    def _bind(self, target: _Target, call: cst.Call, state):
        """Parameter name -> fact at entry, parameter -> the caller's path for effects,
        whether any fact the caller passed is known, the parameters bound to their default
        (facts of the callee's module), and parameter -> the caller's container (`*parts`)
        an element was unpacked from."""
        node = target.node
        p = node.params
        positional = [*p.posonly_params, *p.params]
        bound: dict[str, Fact] = {}
        paths: dict[str, str] = {}
        known = False
        defaulted: set[str] = set()  # parameters bound to their default
        containers: dict[str, str] = {}  # parameter -> the caller's container it was unpacked from
        if target.receiver is not None:
            if not positional:
                return None, paths, False, defaulted, containers
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
            # a constructor always runs: what __init__ builds is what later method calls see;
            # a method of an object whose class can build a fact itself (a property that
            # makes the sparse adjacency from the object's edges) reports what it finds
            known = any(_relevant(f) for f in bound.values()) or (
                target.makes is not None and self._method_holds_token(target.klass, "__init__")) or (
                target.makes is None and target.walker is None and target.receiver_path != "self"
                and self._class_holds_token(target.receiver))
        binding = bind(Signature.of_cst(p, skip=1 if target.receiver is not None else 0), self._pieces(call, state))
        if binding is None:
            return None, paths, False, defaulted, containers  # Python raises a TypeError: the callee never runs
        defaults = self.walker.defaults_of(node) if target.walker is None else target.walker.defaults_of(node)
        values = dict(binding.values)
        for name in binding.defaulted:
            values[name] = _Default(defaults.get(name))
        if binding.star is not None:
            values[p.star_arg.name.value] = _Packed("tuple", binding.star)
        if binding.double_star is not None:
            values[p.star_kwarg.name.value] = _Packed("dict", binding.double_star)
        for name, given in values.items():
            fact = self._fact_of(given, state)
            if fact is None:
                continue
            if isinstance(given, _Default):
                defaulted.add(name)  # evaluated at the def: its evidence is the callee's module's
            if _plain_value(fact):
                # a number or a flag is bound (it decides branches), but makes a call worth
                # following only when the callee passes it on
                bound[name] = fact
                keywords, anywhere = self._passed_on(node)
                known = known or name in (keywords if isinstance(fact, Scalar) else anywhere)
                continue
            if isinstance(given, cst.BaseExpression):
                code = self.walker.ctx.code(given)
                fact = with_evidence(fact, Evidence.at(given, f"`{code}` passed to `{target.name}()` as `{name}`"))
            elif isinstance(given, _Unpacked):
                code = self.walker.ctx.code(given.origin)
                fact = with_evidence(fact, Evidence.at(
                    given.origin, f"unpacked from `{code}` into `{name}` of `{target.name}()`"))
            elif isinstance(given, _Default) and target.walker is None:
                fact = with_evidence(fact, Evidence.at(call, f"`{target.name}()` called without `{name}`: its default"))
            bound[name] = fact
            # a tensor of literal data (indices written out) matters where the callee can
            # build a sparse tensor from it, whose shapes it decides; a model of a class whose
            # `forward` can build a fact (a sparse adjacency from what it is given) matters
            # where the callee runs it
            known = known or _relevant(fact) or (_holds_literal_data(fact) and self._holds_token(node)) or (
                isinstance(fact, Module) and self._forward_holds_token(fact))
        for name, given in binding.values.items():
            if name in self._rebound_in(node):
                continue
            path = dotted(given) if isinstance(given, cst.BaseExpression) else None
            if path:
                paths[name] = path
            elif isinstance(bound.get(name), Module) and isinstance(given, cst.BaseExpression):
                # a submodule picked by index (`freeze(model.layers[0])`) is the parameters
                # named under it; one reached otherwise is forgotten with what holds it
                picked = _module_index_path(given)
                if picked:
                    paths[name] = picked
                elif _root_name(given):
                    containers[name] = _root_name(given)
            elif isinstance(given, _Unpacked) and given.container:
                # an element of a container held by a name: what the callee does to it cannot
                # be followed back to the name that holds it, so the container is forgotten
                containers[name] = given.container
        if not known and target.walker is None:
            # a function of this file that works on module-level state that matters (an
            # optimizer over sparse parameters) is worth following whatever it is passed; so
            # is one that rebinds a name outside it
            outer = self._view(state, node)
            known = (any(_relevant(outer.get(n)) for n in self._globals_read(node))
                     or any(self.walker.scopes.kinds(node, self.walker.functions)))
        return bound, paths, known, defaulted, containers

    def _pieces(self, call: cst.Call, state) -> list:
        """The arguments of a call as the binder reads them: written ones as their syntax,
        elements unpacked from a display as theirs, elements of a held container as facts."""
        from .evaluation.inference.containers import sequence_items
        inf = self.walker.ctx.inference
        out = []
        for a in call.args:
            value = a.value
            if a.star == "*":
                if isinstance(value, (cst.List, cst.Tuple)) and not any(
                        isinstance(e, cst.StarredElement) for e in value.elements):
                    out.append(Star(tuple(e.value for e in value.elements)))
                    continue
                items = sequence_items(inf.fact(value, state))
                out.append(Star(None if items is None else tuple(_Unpacked(f, value, dotted(value)) for f in items)))
            elif a.star == "**":
                if isinstance(value, cst.Dict) and all(
                        isinstance(e, cst.DictElement) and _string_key(e.key) is not None for e in value.elements):
                    out.append(DoubleStar(tuple((_string_key(e.key), e.value) for e in value.elements)))
                    continue
                mapping = inf.fact(value, state)
                if not isinstance(mapping, Instance) or mapping.cls != "dict":
                    out.append(DoubleStar(None))
                    continue
                keys = mapping.keys if mapping.keys is not None else tuple(k for k, _ in mapping.attrs)
                held = tuple((k, _Unpacked(attr_of(mapping.attrs, k), value, dotted(value))) for k in keys)
                out.append(DoubleStar(held, complete=mapping.keys is not None))
            elif a.keyword is not None:
                out.append(Keyword(a.keyword.value, value))
            else:
                out.append(Positional(value))
        return out

    def _fact_of(self, given, state) -> Optional[Fact]:
        """The fact of what a parameter is bound to."""
        if isinstance(given, cst.BaseExpression):
            return self.walker.ctx.inference.fact(given, state)
        if isinstance(given, (_Unpacked, _Default)):
            return given.fact
        if isinstance(given, _Packed) and given.kind == "tuple":
            from .evaluation.inference.containers import sequence_of
            return sequence_of("tuple", tuple(self._fact_of(g, state) for g in given.items))
        if isinstance(given, _Packed):
            facts = [(k, self._fact_of(g, state)) for k, g in given.items]
            return Instance(cls="dict", attrs=tuple((k, f) for k, f in facts if f is not None),
                            keys=tuple(k for k, _ in facts))
        return None

    def _makes_functions(self, node: cst.FunctionDef) -> bool:
        """It returns a nested function or a lambda, which may keep what it is passed (a
        decorator factory, a closure): worth following whatever it is passed."""
        if node not in self._makers:
            body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
            nested = {s.name.value for s in body if isinstance(s, cst.FunctionDef)}
            self._makers[node] = bool(nested or any(isinstance(n, cst.Lambda) for n in walk(node.body))) and any(
                isinstance(n, cst.Return) and (isinstance(n.value, cst.Lambda)
                                               or (isinstance(n.value, cst.Name) and n.value.value in nested))
                for n in walk(node.body))
        return self._makers[node]

    def _passed_on(self, node: cst.FunctionDef) -> tuple[set[str], set[str]]:
        """Parameters a function passes on as a keyword argument (`sparse=sparse`,
        `sparse=cfg["sparse"]`), and as any call argument (`Model(cfg.sparse)`, `f(flag)`)."""
        if node not in self._passed:
            keywords, anywhere = set(), set()
            for n in walk(node.body):
                if type(n) is cst.Arg:
                    root = n.value
                    while type(root) is cst.Attribute or type(root) is cst.Subscript:
                        root = root.value
                    if type(root) is cst.Name:
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
            # a freeze written on a loop variable over a parameter's `parameters()` is
            # followed (per element, or by forgetting what that parameter holds)
            looped = {var for n in walk(node.body) if type(n) is cst.For
                      for var, owner in parameter_loop_owner(n).items() if owner.split(".")[0] in params}
            for n in walk(node.body):
                target = None
                kind = type(n)
                if kind is cst.AssignTarget or kind is cst.AugAssign:
                    target = n.target
                elif (kind is cst.Call and isinstance(n.func, cst.Attribute)
                      and n.func.attr.value in ("requires_grad_", "_coalesced_")):
                    target = cst.Attribute(value=n.func.value, attr=cst.Name("requires_grad"))
                if isinstance(target, cst.Attribute) and target.attr.value in ("grad", "data", "requires_grad"):
                    root = (dotted(target) or "").split(".")[0]
                    if root in looped and target.attr.value == "requires_grad" and dotted(target.value) == root:
                        continue
                    if root not in params:
                        found = True
                        break
            self._untracked[node] = found
        return self._untracked[node]

    def _stores_on_parameters(self, node: cst.FunctionDef) -> bool:
        """Its body stores an attribute or an item of one of its parameters (`m.conv1 =
        ...`, `g["adj"] = ...`)."""
        found = self._param_stores.get(node)
        if found is None:
            params = parameters_of(node)
            found = False
            for n in walk(node.body):
                if type(n) in (cst.AssignTarget, cst.AugAssign) and type(n.target) in (cst.Attribute, cst.Subscript):
                    root = n.target
                    while type(root) in (cst.Attribute, cst.Subscript):
                        root = root.value
                    if type(root) is cst.Name and root.value in params:
                        found = True
                        break
            self._param_stores[node] = found
        return found

    def _freezes(self, node: cst.FunctionDef) -> bool:
        """Its body sets `requires_grad` of something, or calls `requires_grad_`."""
        found = self._freezers.get(node)
        if found is None:
            targets = [n.target for n in walk(node.body) if type(n) in (cst.AssignTarget, cst.AugAssign)]
            found = self._freezers[node] = any(
                type(t) is cst.Attribute and t.attr.value == "requires_grad" for t in targets) or any(
                type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "requires_grad_"
                for n in walk(node.body))
        return found

    def _globals_read(self, node: cst.FunctionDef) -> set[str]:
        """Names a function reads that it does not bind: the module's, or builtins."""
        if node not in self._free:
            params = parameters_of(node)
            local = params | self._rebound_in(node)
            self._free[node] = {n.value for n in walk(node.body) if type(n) is cst.Name} - local
        return self._free[node]

    def _holds_token(self, node: cst.FunctionDef) -> bool:
        """Whether a function's source holds one of the rules' tokens."""
        if node not in self._tokens_in:
            tokens = self.walker.ctx.tokens
            self._tokens_in[node] = bool(tokens) and tokens.search(self.walker.ctx.code(node))
        return self._tokens_in[node]

    def _class_holds_token(self, receiver) -> bool:
        """Whether the class of this file that an object is an instance of holds one of the
        rules' tokens in its source, looked up once per class."""
        if not isinstance(receiver, Instance):
            return False
        w = self.walker
        cls = _own_class(receiver.cls, w.ctx.path)
        klass = w.classes.get(cls) if cls is not None else None
        if klass is None:
            return False
        if klass not in self._tokens_in:
            tokens = w.ctx.tokens
            self._tokens_in[klass] = bool(tokens) and bool(tokens.search(w.ctx.code(klass)))
        return self._tokens_in[klass]

    def _forward_holds_token(self, model: Module) -> bool:
        """Whether the `forward` of a model's class of this file can build a fact itself."""
        cls = _local_class(model, self.walker.ctx.path)
        klass = self.walker.classes.get(cls) if cls is not None else None
        return klass is not None and self._method_holds_token(klass, "forward")

    def _method_holds_token(self, klass: cst.ClassDef, method: str) -> bool:
        """Whether a method of a class can build a fact itself (its source holds one of the
        rules' tokens): `__init__`, so that constructing it is worth following with nothing
        known; `forward`, so that a call given a model of it is."""
        name = (klass.name.value, method)
        if name not in self._method_tokens:
            import ast
            from .project.models import project_index
            ctx = self.walker.ctx
            loaded = project_index()._load(ctx.path, ctx.source)
            found = False
            if loaded is not None:
                lines = ctx.source.splitlines()
                for node in loaded[0].body:
                    if isinstance(node, ast.ClassDef) and node.name == name[0]:
                        for item in node.body:
                            if isinstance(item, ast.FunctionDef) and item.name == method:
                                code = "\n".join(lines[item.lineno - 1:item.end_lineno])
                                found = bool(ctx.tokens) and ctx.tokens.search(code)
                        break
            self._method_tokens[name] = found
        return self._method_tokens[name]

    def _rebound_in(self, node: cst.FunctionDef) -> set[str]:
        if node not in self._rebound:
            self._rebound[node] = (set(self.walker.scopes.assigned(node)) if isinstance(node.body, cst.IndentedBlock)
                                  else set())
        return self._rebound[node]

    def _analyse(self, node: cst.FunctionDef, bound: dict[str, Fact], outer: dict[str, Fact],
                 grad: bool = True, backward_after=False,
                 saved: Optional[dict[str, Evidence]] = None) -> Optional[_Result]:
        w = self.walker
        saved = saved or {}
        written = w.scopes.writes(node, w.functions)
        lost = w.scopes.kinds(node, w.functions)[2]
        # what the names it rebinds outside itself held before: its effects depend on them
        prior = {k: v for k, v in outer.items() if k.split(".")[0] in written} if written else {}
        try:
            key = (node, tuple(sorted(bound.items(), key=lambda kv: kv[0])), bool(w.silent), grad, backward_after,
                   tuple(sorted(saved.items())), tuple(sorted(prior.items(), key=lambda kv: kv[0])),
                   # a literal's origin (a constructor option) is part of what the findings say
                   tuple(f.evidence for f in bound.values() if type(f) is Const and f.evidence))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._memo:
            w.ctx.replay(self._memo_reports.get(key, ()))
            return self._memo[key]
        reported = w.ctx.dependents()
        initial: dict[str, Fact] = {}
        for name, fact in bound.items():
            initial[name] = fact
            for attr, sub in getattr(fact, "attrs", ()) or ():
                initial[f"{name}.{attr}"] = sub
        scope = self.walker.ctx.scope
        entry = not _ACTIVE and (scope is None or type(scope.node) is cst.Module)
        if entry:
            _ENTRY.append(node)
        _ACTIVE.append(node)
        outer_unplaced, self.unplaced = self.unplaced, False
        try:
            final, returns = w.callee(node, initial, outer, grad, backward_after, saved)
        finally:
            _ACTIVE.pop()
            if entry:
                _ENTRY.pop()
            unplaced, self.unplaced = self.unplaced, outer_unplaced
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
                if k == name and _same_object(before, after):
                    continue  # the attributes it set are effects of their own paths
                if after != before or (after is not None and before is None):
                    effects[k] = after
        # module globals the callee changed in place (an optimizer over them stepped)
        params = parameters_of(node)
        local = params | self._rebound_in(node)
        for k, fact in final.env.items():
            root = k.split(".")[0]
            if root not in local and root not in bound and k in outer and fact != outer[k]:
                effects[_GLOBAL + k] = fact
        # names it rebinds in the module or an enclosing function (`global`, `nonlocal`)
        for k in {k for k in final.env if k.split(".")[0] in written} | set(prior):
            after = final.env.get(k)
            if after != prior.get(k):
                effects[_GLOBAL + k] = after
        for name in lost:
            # a module name a function it calls rebinds, hidden here by a variable of its own
            effects[_GLOBAL + name] = None
        result = _Result(returned, effects, self._writes_untracked(node, local), unplaced=unplaced)
        result.backward = bool(w._scope_summary(node)[1])
        for k, evidence in final.saved.items():
            root = k.split(".")[0]
            if root in bound and root not in self._rebound_in(node) and saved.get(k) != evidence:
                result.saved[k] = evidence
        if key is not None:
            self._memo[key] = result
            self._memo_reports[key] = w.ctx.made_since(reported, node)
        return result


def _after_yield(body) -> Optional[list]:
    """The statements a generator-based context manager runs when its `with` block ends:
    those after a `yield` that comes first in its body (after a docstring), or the `finally`
    of a `try` that does nothing but yield, and what follows it. Code before the `yield`
    (a name it binds, an effect it has) is not followed into the block: such a manager is
    left out, rather than its teardown read without it."""
    start = 1 if body and _is_docstring(body[0]) else 0
    if len(body) <= start:
        return None
    first = body[start]
    if _yields_alone(first):
        return list(body[start + 1:])
    if isinstance(first, cst.Try) and len(first.body.body) == 1 and _yields_alone(first.body.body[0]) \
            and not first.handlers and first.orelse is None:
        return [*(first.finalbody.body.body if first.finalbody is not None else ()), *body[start + 1:]]
    return None


def _yields_alone(st) -> bool:
    """`yield` or `yield x` as a statement of its own."""
    return (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr)
            and isinstance(st.body[0].value, cst.Yield))


def _is_docstring(st) -> bool:
    return (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr)
            and isinstance(st.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _string_key(node: cst.BaseExpression) -> Optional[str]:
    from .evaluation.inference import literal
    key = literal(node)
    return key if isinstance(key, str) else None


def _same_object(before, after) -> bool:
    """The same object before and after a call, its record of attributes aside."""
    return (isinstance(before, Instance) and isinstance(after, Instance)
            and replace(before, attrs=(), evidence=()) == replace(after, attrs=(), evidence=()))


def _saved_into(saved: dict[str, Evidence], paths: dict[str, str]) -> dict[str, Evidence]:
    """The caller's saved-for-backward paths, in the names of the callee's parameters."""
    out = {}
    for name, caller in paths.items():
        for key, evidence in saved.items():
            if key == caller or key.startswith(caller + "."):
                out[name + key[len(caller):]] = evidence
    return out


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
        if (fact.cls == "argparse.Namespace" and fact.attrs) or fact.cls == COMMAND_LINE:
            # the command line's options in one configuration (or the command line itself, for
            # `parse_args` to read): they pick the branches the callee runs (which optimizer,
            # `sparse=`), however plain each value is
            return True
        return depth < 3 and any(_relevant(v, depth + 1) for _, v in fact.attrs)
    if isinstance(fact, Items):
        return depth < 3 and any(_relevant(v, depth + 1) for v in fact.items)
    if isinstance(fact, (Const, Literal)) and isinstance(fact.value, tuple) and declares_options():
        # an argument list (`get_args([])`, `main(["--optim", "adam"])`) in a program with
        # options: what the callee parses, instead of the command line
        return all(isinstance(v, str) for v in fact.value)
    # a function of the project passed as a value: the callee may call it (`apply(make)`);
    # a torch class is followed with the other facts of its call, not alone
    return isinstance(fact, Callee) and fact.project


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
            # the last item holds the module's source positions once a check needs them: they
            # cost a code generation pass over the whole module, and every file that calls
            # into the module needs the same ones
            _PARSED[key] = (module, text, tuple(Names.from_module(module).aliases.items()), {})
        except (cst.ParserSyntaxError, RecursionError):
            _PARSED[key] = None
    return _PARSED[key]


def _portable(fact, ctx, path: str):
    """The fact with its evidence resolved to positions in `ctx`'s file (named by `path`
    when that is not the file of the finding), so it can travel to another file."""
    if fact is None or not hasattr(fact, "evidence"):
        return fact
    if isinstance(fact, Callee) and fact.project:
        # a callable of that file, called elsewhere, is looked up in its module; its own
        # evidence is not shown in findings (and resolving it would place every node of
        # the file): what it holds travels
        return replace(fact, evidence=(), file=fact.file or os.path.abspath(ctx.path),
                       closure=tuple((k, _portable(v, ctx, path)) for k, v in fact.closure),
                       args=tuple(_portable(v, ctx, path) for v in fact.args),
                       kwargs=tuple((k, _portable(v, ctx, path)) for k, v in fact.kwargs),
                       receiver=_portable(fact.receiver, ctx, path))
    out = replace(fact, evidence=tuple(_travelling(e, ctx, path) for e in fact.evidence))
    if getattr(fact, "values_of", None) is not None:
        out = replace(out, values_of=_portable(fact.values_of, ctx, path))
    if getattr(fact, "attrs", ()):
        out = replace(out, attrs=tuple((k, _portable(v, ctx, path)) for k, v in fact.attrs))
    if getattr(fact, "written", None):
        # where a dict's keys are written, in the file that writes them
        out = replace(out, written=_portable_written(fact.written, ctx, path))
    if isinstance(fact, Items):
        out = replace(out, items=tuple(_portable(v, ctx, path) for v in fact.items))
    return out


# a global declared, an item or attribute of a name stored, or a mutating method of a name
# called: what a function of another module may change in its module's state
_MODULE_WRITE = re.compile(r"^\s*global\s|^\s*(\w+)\s*\[[^\n]*\]\s*(?:[-+*/|&]?=)(?!=)"
                           r"|^\s*([A-Za-z_]\w*)\.\w+\s*=(?!=)|\b(\w+)\.(?:update|setdefault|pop|clear|append|extend)\(", re.M)
# a name a module binds at its top level
_MODULE_NAME = re.compile(r"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)


def _qualified(fact, path: str, depth: int = 0):
    """The fact with the objects of classes of the module at `path` named as that module's
    (`<path>::Name`), so they are not taken for classes of the file they travel to."""
    if not isinstance(fact, Instance) or depth > 3:
        return fact
    cls = fact.cls if "::" in fact.cls or "." in fact.cls or fact.cls in ("dict", "list", "tuple") else f"{path}::{fact.cls}"
    return replace(fact, cls=cls, attrs=tuple((k, _qualified(v, path, depth + 1)) for k, v in fact.attrs))


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


def _at_call_site(d, evidence: tuple, here, call: cst.CSTNode):
    """A finding inside an installed package, reported at the call of this file that leads
    there: the user can change their call, not the package. Where it fails in the package
    comes first in the chain."""
    if call not in here.ranges:
        # a call the analysis made up (a config's default instance): no place in this file,
        # and the package is not the user's to change
        return None
    l1, c1, l2, c2 = here.span(call)
    chain = []
    for e in evidence:
        if not e.path:
            e = replace(e, path=d.path)  # the package's own lines keep their file
        elif e.path == here.path:
            if (e.line, e.column) == (l1, c1):
                continue  # the call itself: now the finding's place
            e = replace(e, path="")
        chain.append(e)
    inside = Evidence(d.line, d.column, "inside the installed package, where it fails", path=d.path)
    # the message speaks of the package's line: said of this call, "at this line" is "there"
    message = f"this call leads into an installed package, where {d.message.replace(' at this line', ' there')}"
    return replace(d, path=here.path, line=l1, column=c1, end_line=l2, end_column=c2, fix=None, message=message,
                   evidence=(inside, *chain))


def _travelling(e: Evidence, ctx, path: str) -> Evidence:
    """Evidence made in `ctx`'s file, named by `path` wherever it goes; a node keeps what
    places it, so its position is computed only if a finding shows it."""
    if e.node is not None:
        return e if e.where is not None else replace(e, path=path, where=ctx.places)
    return replace(e, path=path) if not e.path or e.path == ctx.path else e


def _portable_written(written: tuple, ctx, path: str) -> tuple:
    return tuple((key, _travelling(e, ctx, path)) for key, e in written if e is not None)


def _portable_evidence(evidence: Evidence, ctx, path: str) -> Evidence:
    return _travelling(evidence, ctx, path)


_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})
_GUARDING = frozenset({cst.IfExp, cst.BooleanOperation, cst.Lambda, *_COMPREHENSIONS})
# builtins that run a generator they are given to its end (`any` and `all` to the element
# that decides them)
_CONSUMERS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "any", "all", "dict"})
# elements a comprehension's calls are run for one by one
_MAX_ELEMENT_RUNS = 8


def _comprehension_names(comp) -> set:
    """The names a comprehension's `for` clauses bind."""
    out, clause = set(), comp.for_in
    while clause is not None:
        out.update(n.value for n in walk(clause.target) if type(n) is cst.Name)
        clause = clause.inner_for_in
    return out


def _iterables(comp) -> list:
    out, clause = [], comp.for_in
    while clause is not None:
        out.append(clause.iter)
        clause = clause.inner_for_in
    return out


def _module_index_path(expr: cst.BaseExpression) -> Optional[str]:
    """`model.layers[0]` as the path its parameters are named under (`model.layers.0`)."""
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1:
        return None
    index = expr.slice[0].slice
    base = dotted(expr.value)
    if base is None or not isinstance(index, cst.Index):
        return None
    key = index.value
    if isinstance(key, cst.Integer):
        return f"{base}.{key.value}"
    if isinstance(key, cst.SimpleString) and key.evaluated_value.isidentifier():
        return f"{base}.{key.evaluated_value}"
    return None


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _paths_in(expr: cst.BaseExpression) -> set[str]:
    """The names and attribute chains an argument expression mentions (`[weight]`, `model`)."""
    found = set()
    for n in walk(expr):
        path = dotted(n) if isinstance(n, (cst.Name, cst.Attribute)) else None
        if path:
            found.add(path)
    return found


def _holds_literal_data(fact, depth: int = 0) -> bool:
    """A tensor of literal data, or a tuple or dict holding one (what `*args`/`**kwargs` get)."""
    if isinstance(fact, Tensor):
        return fact.literal is not None
    if isinstance(fact, Items) and depth < 3:
        return any(_holds_literal_data(v, depth + 1) for v in fact.items)
    if isinstance(fact, Instance) and fact.cls == "dict" and depth < 3:
        return any(_holds_literal_data(v, depth + 1) for _, v in fact.attrs)
    return False


def _plain_value(fact, depth: int = 0) -> bool:
    """A literal, or a config (dict, dataclass, plain object) or tuple (what `*args` holds)
    holding only literals."""
    if isinstance(fact, (Const, Scalar)):
        return True
    if isinstance(fact, Items) and fact.kind == "tuple":
        known = [v for v in fact.items if v is not None]
        return depth < 3 and bool(known) and all(_plain_value(v, depth + 1) for v in known)
    return (isinstance(fact, Instance) and depth < 3 and bool(fact.attrs)
            and all(_plain_value(v, depth + 1) for _, v in fact.attrs))


def _named_by_module(fact, there):
    """An object of a class of `there`'s module, named so that the caller finds its methods
    there (`Optimizer.from_opt(...)` returns an `Optimizer` of that module)."""
    if isinstance(fact, Instance) and fact.cls in there.classes:
        return replace(fact, cls=f"{os.path.abspath(there.ctx.path)}::{fact.cls}")
    return fact


def _own_class(cls: Optional[str], path: str) -> Optional[str]:
    """An instance's class as this file names it: an object made by another module's call
    knows it as `<file>::<Name>`."""
    if cls is None or "::" not in cls:
        return cls
    import os
    file, _, name = cls.partition("::")
    return name if os.path.abspath(file) == os.path.abspath(path) else cls


def _local_class(fact, path: str) -> Optional[str]:
    """The name of a class of this file that made a module fact."""
    if not isinstance(fact, Module) or not fact.cls or "::" not in fact.cls:
        return None
    name = _own_class(fact.cls, path)
    return name if name != fact.cls else None


def _decorator_name(d: cst.Decorator) -> str:
    expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
    return expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""


_EVERY = object()


@dataclass(frozen=True)
class _Unpacked:
    """An element a `*seq` or `**mapping` argument passes: its fact, the argument, and the
    caller's path to the container."""

    fact: Optional[Fact]
    origin: cst.BaseExpression
    container: Optional[str]


@dataclass(frozen=True)
class _Default:
    """A parameter's default, as evaluated when its `def` ran."""

    fact: Optional[Fact]


@dataclass(frozen=True)
class _Packed:
    """What `*args` ("tuple") or `**kwargs` ("dict") collects: the values bound to it."""

    kind: str
    items: tuple


@dataclass(frozen=True)
class _ClassValue:
    fact: Optional[Fact]


class _AllNames(frozenset):
    def __contains__(self, item) -> bool:
        return True


_ALL_NAMES = _AllNames()


def _defines(klass: cst.ClassDef, name: str) -> bool:
    """The class body itself defines the method (not a base)."""
    return any(isinstance(st, cst.FunctionDef) and st.name.value == name for st in klass.body.body)


def _is_super(expr: cst.BaseExpression) -> bool:
    """`super()`, or `super(Cls, self)` (which `_super` checks names the class itself)."""
    return (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"
            and (not expr.args or (len(expr.args) == 2 and all(isinstance(a.value, cst.Name) and not a.star
                                                               and a.keyword is None for a in expr.args))))


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


def _constructor(target: _Target) -> bool:
    return target.makes == "module" or (target.node is not None and target.node.name.value == "__init__")


def _unknown_arguments(init: Optional[cst.FunctionDef]) -> list:
    """Arguments for a constructor's required parameters, each a name nothing binds (its
    value not known), so that the parameters with defaults take them."""
    if init is None:
        return []
    p = init.params
    out = [cst.Arg(cst.Name("__unknown_argument__")) for x in [*p.posonly_params, *p.params][1:] if x.default is None]
    out += [cst.Arg(cst.Name("__unknown_argument__"), keyword=cst.Name(x.name.value))
            for x in p.kwonly_params if x.default is None]
    return out


def _returned_test(node: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """What a function's body ends by returning, when that `return` is its only way out and
    nothing before it rebinds a parameter: a test the caller can read as its own."""
    if node.decorators or not isinstance(node.body, cst.IndentedBlock):
        return None
    body = node.body.body
    last = body[-1] if body else None
    if not isinstance(last, cst.SimpleStatementLine) or len(last.body) != 1:
        return None
    returned = last.body[0]
    if not isinstance(returned, cst.Return) or returned.value is None:
        return None
    if not parameters_of(node).isdisjoint(assigned_names(body[:-1])):
        return None  # the parameter rebound before the test
    if any(isinstance(n, (cst.Return, cst.Yield, cst.Await)) for st in body[:-1] for n in walk(st)):
        return _flag_test(body) if _is_name(returned.value, "False") else None
    return returned.value


def _flag_test(body) -> Optional[cst.BaseExpression]:
    """The test a body of nested `if`s that `return True` and a final `return False` stands
    for: the conditions of each `return True`, and-ed along its nesting, or-ed together."""
    paths: list[list[cst.BaseExpression]] = []

    def read(stmts, conditions) -> bool:
        for st in stmts:
            if isinstance(st, cst.If) and st.orelse is None and isinstance(st.body, cst.IndentedBlock):
                if not read(st.body.body, [*conditions, st.test]):
                    return False
            elif (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Return)
                  and _is_name(st.body[0].value, "True") and conditions):
                paths.append(conditions)
            elif not (isinstance(st, cst.SimpleStatementLine) and all(isinstance(x, (cst.Expr, cst.Pass)) for x in st.body)
                      and not any(isinstance(n, cst.Call) for n in walk(st))):
                return False  # anything but tests, docstrings and `return True`
        return True

    if not read(body[:-1], []) or not paths or len(paths) > 8:
        return None
    disjuncts = []
    for conditions in paths:
        test = conditions[0]
        for c in conditions[1:]:
            test = cst.BooleanOperation(left=test, operator=cst.And(), right=c)
        disjuncts.append(test)
    test = disjuncts[0]
    for d in disjuncts[1:]:
        test = cst.BooleanOperation(left=test, operator=cst.Or(), right=d)
    return test


def _is_name(node, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def _held_by_object(value: cst.BaseExpression) -> bool:
    """`self._adj`, or a chain of method calls on an attribute (`self._adj.coalesce()`)."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        value = value.func.value
    return type(value) is cst.Attribute


# objects the facts model that are no instance of a class of the project
_BUILTIN_INSTANCES = frozenset({"dict", "list", "tuple", "argparse.Namespace"})
