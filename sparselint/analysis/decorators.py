"""Decorators of a called function: those that leave the call as written, and those that hide it.

A call to a decorated function runs whatever its decorators returned. The engine follows the
call into the function's body, with the arguments as passed, only when that is what runs:

- a decorator known to keep the call: torch's grad modes and compilers, `functools` caches,
  `property`, `staticmethod`, `classmethod`, and markers of `abc` and `typing`;
- a project decorator that returns the function itself (a registry: `REGISTRY[name] = fn;
  return fn`), directly or from a decorator factory (`@register("gcn")`);
- a project decorator that returns a wrapper passing its own parameters on unchanged
  (`def wrapper(*args, **kwargs): ...; return fn(*args, **kwargs)`), whatever else it does
  around the call (logging, timing) as long as it rebinds none of them.

Any other decorator (an unknown library's, a class, a wrapper that coalesces or replaces an
argument) makes the call unknown: its result and effects are not those of the body, and an
unknown is silent.
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from .cst.names import dotted
from .cst.syntax import assigned_names
from .torchops import torchapi as api

# Qualified names (as `Names.qualify` spells them) of decorators that keep the call.
KEEPS_CALL = frozenset({
    *api.GRAD_MODES,
    "torch.compile", "torch.jit.script", "torch.jit.ignore", "torch.jit.unused", "torch.jit.export",
    "torch.autograd.function.once_differentiable", "torch._dynamo.disable",
    "functools.wraps", "functools.lru_cache", "functools.cache", "functools.cached_property",
})
# Spellings of builtins and standard markers, by their local text (their modules are not
# resolved by the alias table).
_KEEPS_BY_TEXT = frozenset({
    "staticmethod", "classmethod", "property", "cached_property",
    "abstractmethod", "abc.abstractmethod", "overload", "typing.overload", "final", "typing.final",
    "override", "typing.override", "typing_extensions.override",
})
_ACCESSORS = frozenset({"setter", "getter", "deleter"})

Resolve = Callable[[cst.BaseExpression], Optional[cst.FunctionDef]]
Qualify = Callable[[cst.BaseExpression], Optional[str]]


def keeps_call(fn: cst.FunctionDef, qualify: Qualify, resolve: Resolve) -> bool:
    """Whether calling `fn` by its decorated name runs its body with the arguments as passed.
    `resolve` gives the project function a decorator expression names, else None."""
    return all(_keeps(d.decorator, qualify, resolve) for d in fn.decorators)


def _keeps(expr: cst.BaseExpression, qualify: Qualify, resolve: Resolve) -> bool:
    head = expr.func if isinstance(expr, cst.Call) else expr
    q = qualify(head)
    if q is not None:
        return q in KEEPS_CALL
    text = dotted(head)
    if text is None:
        return False
    project = resolve(head)
    if project is not None:
        if isinstance(expr, cst.Call):
            # a decorator factory: what it returns is the decorator
            inner = _returned_function(project)
            return inner is not None and _returns_function_or_passthrough(inner)
        return _returns_function_or_passthrough(project)
    if text in _KEEPS_BY_TEXT and not isinstance(expr, cst.Call):
        return True
    return isinstance(head, cst.Attribute) and head.attr.value in _ACCESSORS and not isinstance(expr, cst.Call)


def _body(fn: cst.FunctionDef) -> list:
    return list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []


def _first_param(fn: cst.FunctionDef) -> Optional[str]:
    params = [*fn.params.posonly_params, *fn.params.params]
    return params[0].name.value if params else None


def _final_return(fn: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """The value of the last statement when it is a `return`, the only one of the body."""
    returns = [small for st in _body(fn) if isinstance(st, cst.SimpleStatementLine)
               for small in st.body if isinstance(small, cst.Return)]
    nested = any(not isinstance(st, (cst.SimpleStatementLine, cst.FunctionDef)) for st in _body(fn))
    if len(returns) != 1 or nested:
        return None
    last = _body(fn)[-1]
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        return None
    return last.body[-1].value


def _returned_function(fn: cst.FunctionDef) -> Optional[cst.FunctionDef]:
    """The inner function a decorator (factory) returns by name, when it defines it."""
    value = _final_return(fn)
    if not isinstance(value, cst.Name):
        return None
    inner = [st for st in _body(fn) if isinstance(st, cst.FunctionDef) and st.name.value == value.value]
    return inner[-1] if len(inner) == 1 else None


def _returns_function_or_passthrough(deco: cst.FunctionDef) -> bool:
    param = _first_param(deco)
    if param is None or param in assigned_names(_body(deco)):
        return False
    value = _final_return(deco)
    if isinstance(value, cst.Name) and value.value == param:
        return True  # a registry: the function itself
    wrapper = _returned_function(deco)
    if wrapper is None or not all(_is_wraps_of(d.decorator, param) for d in wrapper.decorators):
        return False
    return _passes_through(wrapper, param)


def _is_wraps_of(expr: cst.BaseExpression, param: str) -> bool:
    return (isinstance(expr, cst.Call) and (dotted(expr.func) or "").split(".")[-1] == "wraps"
            and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Name) and expr.args[0].value.value == param)


def _passes_through(wrapper: cst.FunctionDef, fn: str) -> bool:
    """`return fn(<the wrapper's parameters, in order, unchanged>)`."""
    value = _final_return(wrapper)
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == fn):
        return False
    p = wrapper.params
    if p.kwonly_params or [*p.posonly_params, *p.params] and any(x.default is not None for x in [*p.posonly_params, *p.params]):
        return False
    expected = [(None, x.name.value) for x in [*p.posonly_params, *p.params]]
    if isinstance(p.star_arg, cst.Param):
        expected.append(("*", p.star_arg.name.value))
    if p.star_kwarg is not None:
        expected.append(("**", p.star_kwarg.name.value))
    passed = [(a.star or None, a.value.value if isinstance(a.value, cst.Name) else None) for a in value.args
              if a.keyword is None]
    if len(passed) != len(value.args) or passed != expected:
        return False
    names = {name for _, name in expected} | {fn}
    return not (names & set(assigned_names(_body(wrapper))))
