"""Command-line options are inputs: a program that reads its optimizer, its clipping norm or
its sparse switch from `argparse` is checked with each value its options admit.

The options are read from the module's own `parser.add_argument(...)` calls with literal
names: their defaults (argparse's `None` where none is given, `False` for `store_true`),
each of their `choices`, and each on/off flag turned on. The module is checked once with
every option at its default, then once per other admitted value of one option (the rest at
their defaults), as a user who passes that one option runs it. What `parse_args()` returns
then holds those values, each with where it comes from.
"""
from __future__ import annotations

import ast
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Optional

from ..diagnostics import Evidence
from .evaluation.facts import Const, Fact, Scalar

_PARSED: ContextVar[Optional[tuple]] = ContextVar("parsed_arguments", default=None)
_HAS_OPTIONS = re.compile(r"\.add_argument\(")
_PARSES = re.compile(r"\.parse(?:_known)?_args\(")
# what an option can lead to: an optimizer built, gradients clipped, sparse gradients
_ACTS = re.compile(r"\b(optim|Adam\w*|SGD|RMSprop|Adagrad|Adadelta|clip_grad_\w+|sparse)\b")
MAX_CONFIGURATIONS = 8
_FLAGS = {"store_true": (False, True), "store_false": (True, False)}


@dataclass(frozen=True)
class _Option:
    dest: str
    spelled: str  # `--optim`
    line: int
    column: int
    default: object
    others: tuple  # the other values a user may give


def parsed_arguments() -> Optional[tuple]:
    """The attributes of what `parse_args()` returns in the configuration being checked."""
    return _PARSED.get()


def configurations(text: str) -> list[tuple]:
    """(name, fact) attributes of the parsed arguments, one tuple per configuration (None:
    nothing known, first). Empty when the module declares no options worth turning."""
    if not (_HAS_OPTIONS.search(text) and _PARSES.search(text) and _ACTS.search(text)):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    # an option the program never reads (`args.name`) near an optimizer, clipping or a
    # sparse switch cannot change a finding worth the extra runs
    lines = text.splitlines()
    options = [o for o in map(_option, _add_argument_calls(tree)) if o is not None and _acts_near(o.dest, lines)]
    if not options:
        return []
    defaults = {o.dest: _fact(o.default, _at(o, f"the default `{o.spelled} {_shown(o.default)}`"))
                for o in options if o.default is not _NO_VALUE}
    # first as before, nothing known of the options (a value without choices, `--clip`, may
    # be any), then the defaults, then each other admitted value
    found: list = [None, tuple(sorted(defaults.items()))]
    for o in options:
        for value in o.others:
            if len(found) >= MAX_CONFIGURATIONS:
                return found
            text_ = f"`{o.spelled}` given" if value is True and o.default is False else \
                f"`{o.spelled} {_shown(value)}`, a value the option admits"
            config = {**defaults, o.dest: _fact(value, _at(o, text_))}
            found.append(tuple(sorted(config.items())))
    return found


def _acts_near(dest: str, lines: list, window: int = 3) -> bool:
    read = re.compile(rf"\.{re.escape(dest)}\b")
    for i, line in enumerate(lines):
        if read.search(line) and not line.lstrip().startswith(("#", "parser.", "p.")) and any(
                _ACTS.search(near) for near in lines[i:i + window + 1]):
            return True
    return False


def use(config: Optional[tuple]):
    return _PARSED.set(config)


def reset(token) -> None:
    _PARSED.reset(token)


_NO_VALUE = object()


def _add_argument_calls(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            yield node


def _option(call: ast.Call) -> Optional[_Option]:
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names or len(names) != len(call.args):
        return None
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    longs = [n for n in names if n.startswith("--")]
    spelled = longs[0] if longs else names[0]
    dest = _literal(keywords["dest"]) if "dest" in keywords else spelled.lstrip("-").replace("-", "_")
    if not isinstance(dest, str) or not dest.isidentifier():
        return None
    if not spelled.startswith("-"):
        return None  # a positional argument: required, nothing to assume of it
    action = _literal(keywords["action"]) if "action" in keywords else None
    if action in _FLAGS:
        default, turned = _FLAGS[action]
        return _Option(dest, spelled, call.lineno, call.col_offset + 1, default, (turned,))
    if action is not None or "nargs" in keywords:
        return None
    default = _literal(keywords["default"]) if "default" in keywords else None
    if default is _NO_VALUE:
        return None
    kind = keywords.get("type")
    if isinstance(default, str) and isinstance(kind, ast.Name) and kind.id in ("int", "float"):
        try:  # argparse applies `type` to a string default
            default = int(default) if kind.id == "int" else float(default)
        except ValueError:
            return None
    choices = _literal(keywords["choices"]) if "choices" in keywords else ()
    if not isinstance(choices, (list, tuple)) or not all(_scalar(c) for c in choices):
        choices = ()
    if "required" in keywords and _literal(keywords["required"]) is not False:
        # always given: no default is ever seen, only what a user passes (its choices)
        return _Option(dest, spelled, call.lineno, call.col_offset + 1, _NO_VALUE, tuple(dict.fromkeys(choices)))
    others = tuple(c for c in dict.fromkeys(choices) if c != default)
    return _Option(dest, spelled, call.lineno, call.col_offset + 1, default, others)


def _literal(node: ast.AST):
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return _NO_VALUE
    return value if _scalar(value) or isinstance(value, (list, tuple)) else _NO_VALUE


def _scalar(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _fact(value, evidence: Evidence) -> Fact:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Scalar(value=value, evidence=(evidence,))
    return Const(value=value, evidence=(evidence,))


def _at(option: _Option, text: str) -> Evidence:
    return Evidence(option.line, option.column, text)


def _shown(value) -> str:
    return value if isinstance(value, str) else repr(value)
