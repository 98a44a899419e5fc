"""Binding a call's arguments to a function's parameters by Python's rules.

Positional arguments fill the positional parameters in order, the rest going to `*args`;
keywords fill the parameters of their name (not the positional-only ones), the rest going
to `**kwargs`; a parameter left unfilled takes its default. `*seq` and `**mapping` at the
call site are unpacked when their elements are known. When one cannot be read, every
parameter it could fill is unknown: it may be filled, so it is never given its default.

The binding works on opaque values (syntax nodes, facts, literal values), so the call-site
analysis (LibCST) and the model summaries (`ast`) share it. A call that Python would reject
with a `TypeError` (too many arguments, a missing one, a keyword given twice) binds nothing:
its callee never runs.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional, Union

import libcst as cst


@dataclass(frozen=True)
class Signature:
    positional: tuple[str, ...]  # positional-only and ordinary parameters, in order
    posonly: int  # how many of `positional` are positional-only
    kwonly: tuple[str, ...] = ()
    defaults: frozenset = frozenset()  # parameters that have a default
    star: Optional[str] = None  # `*args`
    double_star: Optional[str] = None  # `**kwargs`

    @classmethod
    def of_cst(cls, params: cst.Parameters, skip: int = 0) -> "Signature":
        """The signature of a `def`, without its first `skip` positional parameters (the
        receiver a method is bound to)."""
        positional = [*params.posonly_params, *params.params][skip:]
        posonly = max(len(params.posonly_params) - skip, 0)
        every = (*positional, *params.kwonly_params)
        return cls(tuple(p.name.value for p in positional), posonly,
                   tuple(p.name.value for p in params.kwonly_params),
                   frozenset(p.name.value for p in every if p.default is not None),
                   params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None,
                   params.star_kwarg.name.value if params.star_kwarg is not None else None)

    @classmethod
    def of_ast(cls, args: ast.arguments, skip: int = 0) -> "Signature":
        positional = [*args.posonlyargs, *args.args]
        with_default = {p.arg for p in positional[len(positional) - len(args.defaults):]} if args.defaults else set()
        with_default |= {p.arg for p, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
        return cls(tuple(p.arg for p in positional[skip:]), max(len(args.posonlyargs) - skip, 0),
                   tuple(p.arg for p in args.kwonlyargs), frozenset(with_default),
                   args.vararg.arg if args.vararg is not None else None,
                   args.kwarg.arg if args.kwarg is not None else None)


# The pieces of a call site, in the order written.
@dataclass(frozen=True)
class Positional:
    value: object


@dataclass(frozen=True)
class Keyword:
    name: str
    value: object


@dataclass(frozen=True)
class Star:
    """`*seq`: its elements, or None when their number is not known."""

    items: Optional[tuple]


@dataclass(frozen=True)
class DoubleStar:
    """`**mapping`: the keys it surely passes with their values; `complete` when it passes no
    other (None items: nothing is known of it)."""

    items: Optional[tuple[tuple[str, object], ...]]
    complete: bool = True


Piece = Union[Positional, Keyword, Star, DoubleStar]


@dataclass
class Binding:
    values: dict[str, object] = field(default_factory=dict)  # parameter -> the value passed
    defaulted: list[str] = field(default_factory=list)  # parameters that take their default
    unknown: set[str] = field(default_factory=set)  # parameters an unreadable `*`/`**` may fill
    star: Optional[tuple] = None  # what `*args` holds (None: no `*args`, or not known)
    double_star: Optional[tuple[tuple[str, object], ...]] = None  # what `**kwargs` holds, likewise


def bind(signature: Signature, pieces: list) -> Optional[Binding]:
    """The parameters' values for a call made of `pieces`; None when Python raises."""
    positional: list = []
    open_positional = False  # a `*seq` of unknown length: later positions are not known
    keywords: dict[str, object] = {}
    open_keywords = False  # a `**mapping` that may pass keys not known
    for piece in pieces:
        if isinstance(piece, Positional):
            if not open_positional:
                positional.append(piece.value)
        elif isinstance(piece, Star):
            if piece.items is None:
                open_positional = True
            elif not open_positional:
                positional.extend(piece.items)
        else:
            items = ((piece.name, piece.value),) if isinstance(piece, Keyword) else piece.items
            if items is None:
                open_keywords = True
                continue
            for name, value in items:
                if name in keywords:
                    return None  # "got multiple values for keyword argument"
                keywords[name] = value
            if isinstance(piece, DoubleStar) and not piece.complete:
                open_keywords = True

    s = signature
    out = Binding()
    named = s.positional[s.posonly:] + s.kwonly
    extra = positional[len(s.positional):]
    if extra and s.star is None:
        return None  # too many positional arguments
    for name, value in zip(s.positional, positional):
        out.values[name] = value
    if open_positional:
        out.unknown.update(s.positional[len(positional):])
    elif s.star is not None:
        out.star = tuple(extra)
    more: dict[str, object] = {}
    for name, value in keywords.items():
        if name in named:
            if name in out.values:
                return None  # "got multiple values for argument"
            out.values[name] = value
            out.unknown.discard(name)  # the call runs: no `*seq` filled it
        elif s.double_star is not None:
            more[name] = value
        else:
            return None  # "got an unexpected keyword argument"
    if open_keywords:
        out.unknown.update(n for n in named if n not in out.values)
    elif s.double_star is not None:
        out.double_star = tuple(more.items())
    for name in s.positional + s.kwonly:
        if name in out.values or name in out.unknown:
            continue
        if name not in s.defaults:
            return None  # a required argument is missing
        out.defaulted.append(name)
    return out
