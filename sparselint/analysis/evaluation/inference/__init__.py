"""Tensor-fact inference: the value of an expression, and the effect of a statement.

`Inference.fact(expr, state)` is pure: it reads the facts that hold before the statement.
`Inference.apply(statement, state)` returns the facts that hold after it: bindings, in-place
updates that change a tensor (an optimizer step leaves a sparse parameter uncoalesced),
`requires_grad_()`, `retain_grad()`, tensors saved for backward.

The analysis is split by concern: `values` (literals and call arguments), `state` (the facts
at one point and their join), `expressions` (the fact of an expression), `containers`
(parameter collections and config dicts), `torch_calls` (torch constructors, conversions,
products and the op table) and `effects` (what a statement changes). Calls into the
project's own functions are followed by `sparselint.calls`, which this package asks for
outcomes and never drives.
"""
from .containers import params_of_tensor
from .effects import _calls_in, _conditional_arms
from .expressions import Inference
from .state import State, join_states
from .values import _UNKNOWN, ABSENT, arg, is_number, literal

__all__ = ["Inference", "State", "join_states", "arg", "is_number", "literal", "params_of_tensor", "_UNKNOWN", "ABSENT",
           "_calls_in", "_conditional_arms"]
