"""Parse only what is needed: blank out top-level statements that cannot matter.

A top-level statement matters when its code (not its strings or comments) contains one of
the prefilter strings, when a module-level statement that matters reads a name it binds, or
when it reads a value a statement that matters binds (a function or class only where it is
called). So an
optimizer built over a sparse parameter, the `.backward()` of a loss computed from one, and
the tensors a sparse constructor is built from are all kept. Everything else is replaced by
empty lines before the LibCST parse: every line keeps its number and every kept character
its column, so positions and fixes need no mapping. The cheap C parser of `ast` decides;
when it cannot parse the file, nothing is blanked and LibCST reports the error.
"""
from __future__ import annotations

import ast
import warnings
from collections import defaultdict
from dataclasses import dataclass, field

from .source import NEWLINE, split_lines

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)


@dataclass
class _Summary:
    words: set[str] = field(default_factory=set)
    bound: set[str] = field(default_factory=set)
    used: set[str] = field(default_factory=set)
    called: set[str] = field(default_factory=set)


def _summarise(stmt: ast.stmt) -> _Summary:
    s = _Summary()
    if isinstance(stmt, _DEFS):
        s.bound.add(stmt.name)
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name):
            s.words.add(n.id)
            if isinstance(n.ctx, ast.Load):
                s.used.add(n.id)
            elif not isinstance(stmt, _DEFS):
                s.bound.add(n.id)
        elif isinstance(n, ast.Attribute):
            s.words.add(n.attr)
            if isinstance(n.value, ast.Name):
                s.words.add(f"{n.value.id}.{n.attr}")
            elif isinstance(n.value, ast.Attribute):
                s.words.add(f"{n.value.attr}.{n.attr}")
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            s.called.add(n.func.id)
        elif isinstance(n, ast.keyword) and n.arg and isinstance(n.value, ast.Constant):
            s.words.add(f"{n.arg}={n.value.value!r}")
            s.words.add(f"{n.arg} = {n.value.value!r}")
        elif isinstance(n, _DEFS):
            s.words.add(n.name)
        elif isinstance(n, ast.ImportFrom) and n.module:
            s.words.add(n.module)
        elif isinstance(n, ast.alias):
            s.words.add(n.name)
            local = (n.asname or n.name).split(".")[0]
            s.bound.add(local)
    return s


def _relevant(statements: list[ast.stmt], tokens: tuple[str, ...], names: tuple[str, ...] = ()) -> list[bool]:
    summaries = [_summarise(s) for s in statements]
    binders, users, callers = defaultdict(list), defaultdict(list), defaultdict(list)
    for i, s in enumerate(summaries):
        for n in s.bound:
            binders[n].append(i)
        for n in s.used:
            users[n].append(i)
        for n in s.called:
            callers[n].append(i)
    keep = [False] * len(statements)
    work = []
    for i, (stmt, s) in enumerate(zip(statements, summaries)):
        if any(tok in w for w in s.words for tok in tokens) or (names and any(w in names for w in s.words)):
            keep[i] = True
            work.append(i)
        elif isinstance(stmt, _IMPORTS):
            keep[i] = True  # kept, but an import of nothing relevant propagates nothing
    while work:
        i = work.pop()
        s, stmt = summaries[i], statements[i]
        is_def = isinstance(stmt, _DEFS)
        # A function reads globals only through their stable facts, which the module-level
        # statements that matter already carry; following its reads would keep everything.
        followers = [] if is_def else [j for n in s.used for j in binders[n]]
        index = callers if is_def else users
        followers += [j for n in s.bound for j in index[n]]
        for j in followers:
            if not keep[j]:
                keep[j] = True
                work.append(j)
    return keep


def _span(s: ast.stmt) -> tuple[int, int]:
    decorators = getattr(s, "decorator_list", ())
    return min([s.lineno, *(d.lineno for d in decorators)]), s.end_lineno or s.lineno


def reduce_source(text: str, tokens: tuple[str, ...], names: tuple[str, ...] = ()) -> str:
    """`tokens` match inside words; `names` (imported helpers that can hold a hazard) match
    whole names only."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are not ours to report
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    statements = tree.body
    keep = _relevant(statements, tokens, names)
    if all(keep):
        return text
    lines = split_lines(text)
    endings = NEWLINE.findall(text)
    spans = [_span(s) for s in statements]
    kept_lines = {n for (first, last), k in zip(spans, keep) if k for n in range(first, last + 1)}
    for (first, last), k in zip(spans, keep):
        if k or any(n in kept_lines for n in range(first, last + 1)):
            continue  # a statement sharing a line with a kept one stays
        for n in range(first - 1, last):
            lines[n] = ""
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i < len(endings):
            out.append(endings[i])
    return "".join(out)
