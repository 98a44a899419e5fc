"""One statement-ordered traversal of a module that drives inference and every rule.

Statements are visited in execution order: branches are analysed separately and joined, a
loop body is analysed twice (once silently, to learn what a previous iteration leaves
behind), functions are analysed after the module body with the module's stable bindings
visible. Before each statement's effects are applied, every rule hook for the node types
in that statement is called with a `Context` that answers questions at that point.
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from . import torchapi as api
from .context import Context, Scope
from .diagnostics import Evidence
from .facts import Fact, Module, Tensor, join
from .models import project_index
from .inference import _UNKNOWN as UNKNOWN_LITERAL
from .inference import Inference, State, join_states, literal
from .names import Names, dotted
from .syntax import assigned_names, backward_calls_in_block, parameters_of
from .tree import children

_NOT_ENTERED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
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
        self._summarising: set[str] = set()
        self.returns: list[Optional[Fact]] = []

    # -- scopes ------------------------------------------------------------------------

    def run(self) -> None:
        body = self.module.body
        for st in body:
            if isinstance(st, cst.FunctionDef):
                self.functions[st.name.value] = st
        inference = Inference(self.ctx.names, self.summary, models=self.model_of)
        scope = Scope(self.module, backward_calls_in_block(body))
        final = self.scope(body, State(), inference, scope)
        stable = self._stable_globals(body, final)
        for st in body:
            self.definitions(st, stable)

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
        self_facts: dict[str, Fact] = {}
        init = next((m for m in methods if m.name.value == "__init__"), None)
        if init is not None:
            final = self.function(init, outer)
            reassigned = set()
            for m in methods:
                if m is not init:
                    reassigned |= {p for p in assigned_names(m.body.body, attributes=True) if p.startswith("self.")}
            self_facts = {k: v for k, v in final.env.items()
                          if k.startswith("self.") and k.split(".")[1] not in {r.split(".")[1] for r in reassigned}}
        for m in methods:
            if m is not init:
                self.function(m, outer, initial=self_facts)
        for st in node.body.body:
            if isinstance(st, cst.ClassDef):
                self.klass(st, outer)

    def function(self, node: cst.FunctionDef, outer: dict[str, Fact], silent: bool = False,
                 initial: Optional[dict[str, Fact]] = None) -> State:
        params = parameters_of(node)
        locals_ = frozenset(params | {p.split(".")[0] for p in assigned_names(node.body.body)})
        names = self.ctx.names.without(locals_)
        inference = Inference(names, self.summary, outer, locals_, models=self.model_of)
        inference.grad_enabled = self._decorated_grad_mode(node, names)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        scope = Scope(node, backward_calls_in_block(body))
        saved_returns, self.returns = self.returns, []
        self.silent += silent
        try:
            final = self.scope(body, State(dict(initial or {})), inference, scope)
        finally:
            self.silent -= silent
        returned = self.returns
        self.returns = saved_returns
        name = node.name.value
        if name not in self.summaries and returned:
            fact = returned[0]
            for r in returned[1:]:
                fact = join(fact, r)
            self.summaries[name] = fact
        if not silent:
            for st in body:
                self.definitions(st, {})
        return final

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

    def model_of(self, call: cst.Call) -> Optional[Module]:
        """An instance of a model class of this project, built by this call."""
        if not isinstance(call.func, cst.Name):
            return None
        index = project_index()
        qualname = index.resolve_name(call.func.value, self.ctx.path, self.ctx.source)
        if qualname is None:
            return None
        args = {}
        for i, a in enumerate(a for a in call.args if a.keyword is None and not a.star):
            value = literal(a.value)
            if value is not UNKNOWN_LITERAL:
                args[i] = value
        for a in call.args:
            if a.keyword is not None:
                value = literal(a.value)
                if value is not UNKNOWN_LITERAL:
                    args[a.keyword.value] = value
        info = index.instantiate(qualname, self.ctx.path, args, text=self.ctx.source)
        if info is None:
            return None
        self.ctx.dependencies.update(info.files)
        return Module(kind=call.func.value, flags=info.flags, parts=info.parts,
                      evidence=(Evidence.at(call, f"an instance of {info.evidence}"),))

    def _decorated_grad_mode(self, node: cst.FunctionDef, names: Names) -> bool:
        for deco in node.decorators:
            expr = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
            q = names.qualify(expr)
            if q in api.GRAD_MODES:
                return api.GRAD_MODES[q]
        return True

    def _stable_globals(self, body, final: State) -> dict[str, Fact]:
        counts: dict[str, int] = {}
        for p in assigned_names(body, attributes=True, count=counts):
            pass
        return {k: v for k, v in final.env.items() if counts.get(k.split(".")[0], 0) <= 1}

    # -- statements --------------------------------------------------------------------

    def scope(self, body, state: State, inference: Inference, scope: Scope) -> State:
        outer_scope, outer_inf = self.ctx.scope, self.ctx.inference
        self.ctx.scope, self.ctx.inference = scope, inference
        try:
            return self.block(body, state)
        finally:
            self.ctx.scope, self.ctx.inference = outer_scope, outer_inf

    def block(self, stmts, state: State) -> State:
        for st in stmts:
            state = self.statement(st, state)
        return state

    def statement(self, node: cst.CSTNode, state: State) -> State:
        inf = self.ctx.inference
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.ctx.statement, self.ctx.line_node = small, node
                self.dispatch(small, state)
                if isinstance(small, cst.Return) and small.value is not None:
                    self.returns.append(inf.fact(small.value, state))
                state = inf.apply(small, state)
            return state
        if isinstance(node, cst.If):
            self.header(node, [node.test], state)
            a = self.block(node.body.body, inf.refine(node.test, state, True))
            otherwise = inf.refine(node.test, state, False)
            if node.orelse is None:
                b = otherwise
            elif isinstance(node.orelse, cst.If):
                b = self.statement(node.orelse, otherwise)
            else:
                b = self.block(node.orelse.body.body, otherwise)
            return join_states(a, b)
        if isinstance(node, cst.For):
            self.ctx.statement = self.ctx.line_node = node
            self.dispatch(node.iter, state)
            return self.loop(node, state, lambda s: inf.bind_loop_target(node.target, node.iter, s))
        if isinstance(node, cst.While):
            self.header(node, [node.test], state)
            return self.loop(node, state, lambda s: s.copy())
        if isinstance(node, cst.With):
            return self.with_block(node, state)
        if isinstance(node, (cst.Try, cst.TryStar)):
            after_body = self.block(node.body.body, state.copy())
            result = join_states(state, after_body)
            ends = [after_body]
            for handler in node.handlers:
                ends.append(self.block(handler.body.body, result.copy()))
            if node.orelse is not None:
                ends[0] = self.block(node.orelse.body.body, after_body)
            out = ends[0]
            for e in ends[1:]:
                out = join_states(out, e)
            if node.finalbody is not None:
                out = self.block(node.finalbody.body.body, out)
            return out
        if isinstance(node, cst.Match):
            self.header(node, [node.subject], state)
            out = None
            for case in node.cases:
                end = self.block(case.body.body, state.copy())
                out = end if out is None else join_states(out, end)
            return join_states(out, state) if out is not None else state
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            out = state.copy()
            out.bind(node.name.value, None)
            return out
        return state

    def header(self, node, exprs, state: State) -> None:
        self.ctx.statement = self.ctx.line_node = node
        self._call_hooks(node, state)
        for e in exprs:
            self.dispatch(e, state)

    def loop(self, node, state: State, bind) -> State:
        """Analyse the body for the first iteration, then again from the state the first
        iteration leaves behind (what the second iteration sees); findings of both count."""
        body = node.body.body
        self.ctx.loops.append(node)
        try:
            self.ctx.statement = self.ctx.line_node = node
            self._call_hooks(node, state)
            end = self.block(body, bind(state))
            if len(self.ctx.loops) <= MAX_LOOP_DEPTH_TWICE:
                self.ctx.statement = self.ctx.line_node = node
                self._call_hooks(node, end)
                end = join_states(end, self.block(body, bind(end)))
        finally:
            self.ctx.loops.pop()
        out = join_states(state, end)
        if node.orelse is not None:
            out = self.block(node.orelse.body.body, out)
        return out

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
            if item.asname is not None:
                p = dotted(item.asname.name)
                if p:
                    out.bind(p, None)
        try:
            return self.block(node.body.body, out)
        finally:
            inf.grad_enabled = previous

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

        def walk(node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> None:
            parents[node] = parent
            self._call_hooks(node, state)
            if isinstance(node, _NOT_ENTERED):
                return
            for child in children(node):
                walk(child, node)

        try:
            walk(root, parents.get(root, self.ctx.line_node if root is not self.ctx.line_node else None))
        except RecursionError:
            pass

    def _call_hooks(self, node: cst.CSTNode, state: State) -> None:
        if self.silent:
            return
        hooks = self.hooks.get(type(node).__name__)
        if hooks:
            self.ctx.state = state
            for hook in hooks:
                hook(node, self.ctx)


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
