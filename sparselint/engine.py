"""The pipeline for one file: read -> prefilter -> parse -> facts and rules -> suppressions -> fixes."""
from __future__ import annotations

import os
import signal
import stat
import threading
from collections import defaultdict
from functools import lru_cache
from typing import Callable, Optional

import libcst as cst

from . import source as src
from . import notebook, pyparse, suppression
from .analysis import argparse_options, entry
from .analysis.torchops import optable
from .config import Settings
from .analysis.context import Context
from .diagnostics import (DECODE_ERROR, ENGINE_CODES, INTERNAL_ERROR, PARSE_ERROR, READ_ERROR, TIMEOUT, UNUSED_NOQA, Diagnostic,
                          FileResult)
from .fixer import applicable, apply_edits, parses
from .analysis.cst.names import Names
from .analysis.cst.tree import forget_children
from .analysis.relevance.reduce import Reduced, reduce_source
from .analysis.relevance.tokens import Tokens
from .analysis.evaluation.walker import Walker

MAX_FIX_ROUNDS = 10


def _engine_diagnostic(kind: tuple[str, str], path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    code, name = kind
    return Diagnostic(code=code, name=name, message=message, path=path, line=line, column=column,
                      end_line=line, end_column=column)


def prefilter_tokens(rules) -> Tokens:
    """The tokens of a rule set; one object per set, so its compiled checks are reused
    for every file."""
    return _tokens_of(tuple(rules))


@lru_cache(maxsize=None)
def _tokens_of(rules: tuple) -> Tokens:
    return Tokens(tok for r in rules for tok in r.prefilter)


@lru_cache(maxsize=None)
def rule_tokens(rule) -> Tokens:
    return Tokens(rule.prefilter)


class EntryTokens:
    """The tokens that count only in a module of a package checked for its entry points:
    per rule, groups of which a text must hold one token each."""

    def __init__(self, rules: tuple):
        self.groups = tuple((r, tuple(Tokens(g) for g in r.entry_prefilter)) for r in rules if r.entry_prefilter)
        # what the reduction keeps as if it were a token: the layout tests
        self.words = tuple(sorted({tok for r in rules for g in r.entry_prefilter[:1] for tok in g}))

    def __bool__(self) -> bool:
        return bool(self.groups)

    def rules_in(self, text, helpers: tuple = ()) -> tuple:
        """The rules whose groups the text holds: the first (the layout test) in the text
        itself, the others in it or in `helpers` (the code of the functions it imports from
        its package, where what fails may be)."""
        return tuple(r for r, groups in self.groups if groups[0].search(text) and all(
            g.search(text) or any(g.search(h) for h in helpers) for g in groups[1:]))

    def tested_in(self, text) -> bool:
        """Whether the text holds a layout test of some rule."""
        return any(groups[0].search(text) for _, groups in self.groups)

    def search(self, text) -> bool:
        return bool(self.rules_in(text))


@lru_cache(maxsize=None)
def entry_tokens(rules: tuple) -> EntryTokens:
    return EntryTokens(rules)


def entry_rules(candidates: EntryTokens, text: str, path: str, dependencies: Optional[set] = None) -> tuple:
    """The rules whose entry-point tokens a package's module holds, counting what fails in
    the functions it imports from other modules of the project (`if adj.is_sparse: return
    _degree(adj)`, the indices read in `ops._degree`)."""
    found = candidates.rules_in(text)
    if found or not candidates.tested_in(text):
        return found
    from .analysis.project.models import project_index
    index = project_index()
    index.missing = set()
    helpers, files = index.imported_definitions(text, path)
    if dependencies is not None:
        dependencies.update(files | index.missing)
    return candidates.rules_in(text, helpers) if helpers else ()


def imported_code(text: str, path: str, tokens: Tokens, dependencies: Optional[set] = None):
    """Names this file imports from other modules of the project whose code holds a
    prefilter token, and that code: a hazard there can be set off by this file's facts."""
    from .analysis.project.models import project_index
    index = project_index()
    index.missing = set()
    names, texts, files = index.imported_code(text, path, tokens)
    if dependencies is not None:
        dependencies.update(files | index.missing)
    return tuple(names), texts


def _once_elsewhere(diagnostics: list[Diagnostic], path: str) -> list[Diagnostic]:
    """A finding inside another module, reached by several call chains of this file, once
    (the first copy with a fix, else the first)."""
    out: list[Diagnostic] = []
    where: dict[tuple, int] = {}
    for d in diagnostics:
        if d.path == path:
            out.append(d)
            continue
        key = (os.path.normpath(d.path), d.line, d.column, d.code)
        if key not in where:
            where[key] = len(out)
            out.append(d)
        elif d.fix is not None and out[where[key]].fix is None:
            out[where[key]] = d
    return out


def analyse(text: str, path: str, rules, dependencies: Optional[set] = None, torch_version: str = "",
            entry_points: bool = True) -> list[Diagnostic]:
    """Findings of the given rules on one source text (no suppression, no fixes); the other
    files they depend on are added to `dependencies`. `torch_version` picks the op table
    (`target-torch-version`; the newest by default); `entry_points` checks public functions
    of a package as entry points (`api-entry-points`)."""
    token = optable.use(torch_version)
    entries = entry.use(entry_points)
    try:
        return _analyse(text, path, rules, dependencies)
    finally:
        entry.reset(entries)
        optable.reset(token)


def _analyse(text: str, path: str, rules, dependencies: Optional[set] = None) -> list[Diagnostic]:
    tokens = prefilter_tokens(rules)
    if not rules:
        return []
    # Modules of the project that this file imports count with it: a helper there can hold
    # the hazard that this file's facts set off. Names imported from such a module are kept
    # by the reduction as if they were tokens.
    extra, imported = imported_code(text, path, tokens, dependencies)
    texts = [text, *imported]
    # In a package's module, a public function's layout test is a source of its own (only
    # there: the words are common, and other files' reductions never depend on them).
    candidates = entry_tokens(tuple(rules))
    public = entry.public_module(path)
    entries = entry_rules(candidates, text, path, dependencies) if candidates and public else ()
    if dependencies is not None and entry.enabled():
        # whether the file is a package's module decides it: creating or deleting
        # `__init__.py` changes the findings
        dependencies.add(entry.package_marker(path))
    if not entries and not any(tokens.search(t) for t in texts):
        return []
    # Python's parser first: what it refuses is reported at once, not after LibCST has
    # spent minutes and a gigabyte on it.
    verdict = pyparse.examine(text)
    if verdict.refused is not None:
        line, column, message = verdict.refused
        return [_engine_diagnostic(PARSE_ERROR, path, message, line, column)]
    if os.environ.get("SPARSELINT_NO_REDUCTION") or verdict.tree is None:
        # every statement analysed (to check that the reduction never changes a finding),
        # or a file Python does not parse, left to LibCST (it may be newer syntax)
        reduced = Reduced(text, None)
    else:
        try:
            reduced = reduce_source(text, tokens, extra, verdict.tree, candidates.words if entries else ())
        except Exception:  # the reduction is an optimisation; the full text is always right
            reduced = Reduced(text, None)
    if reduced.text is None:
        return []  # nothing in this file can matter: no LibCST parse
    if verdict.tree is not None:
        deep = [s for s in pyparse.deep_statements(verdict.tree, text, reduced=reduced.text) if pyparse.kept(s, reduced.text)]
        if deep:
            # LibCST's native parse cannot be interrupted: refuse it up front
            line = deep[0][0]
            return [_engine_diagnostic(TIMEOUT, path, f"skipped: line {line} holds an expression nested more than "
                                       f"{pyparse.MAX_DEPTH} levels deep, too deep to parse in reasonable time", line)]
    if reduced.tree is None:
        return _parse_and_walk(text, path, rules, texts, tokens, extra, reduced.text, dependencies, verdict.error,
                               entries, public, verdict.tree)
    from .analysis.project.models import project_index
    index = project_index()
    index.offer(path, text, reduced.tree)
    try:
        return _parse_and_walk(text, path, rules, texts, tokens, extra, reduced.text, dependencies, verdict.error,
                               entries, public, verdict.tree)
    finally:
        index.withdraw(path, text)


def _parse_and_walk(text, path, rules, texts, tokens, extra, reduced: str, dependencies,
                    python_error: Optional[SyntaxError] = None, entries: tuple = (), public: bool = False,
                    tree=None) -> list[Diagnostic]:
    try:
        module = cst.parse_module(reduced)
    except cst.ParserSyntaxError as exc:
        if python_error is not None:
            # where and what Python says: the place people know, not where LibCST gave up
            line, column = pyparse.position(python_error)
            return [_engine_diagnostic(PARSE_ERROR, path, f"cannot parse: {python_error.msg}", line, column)]
        return [_engine_diagnostic(PARSE_ERROR, path, f"cannot parse: {exc.message}", exc.raw_line, exc.raw_column + 1)]
    except RecursionError:
        return [_engine_diagnostic(PARSE_ERROR, path, "cannot parse: nesting too deep for the parser")]
    ctx = None
    try:
        ctx = Context(path, text, Names.from_module(module), module)
        ctx.imported = frozenset(extra)
        ctx.tokens = tokens
        ctx.public_module = public
        # a rule runs where its tokens are, or where the entry points of a package's module
        # hold its source
        instances = [r() for r in rules if r in entries or any(rule_tokens(r).search(t) for t in texts)]
        hooks = _hooks(instances)

        def hooks_for(source: str) -> dict[str, list[Callable]]:
            # a module the check follows a call into (an installed package's) runs the
            # rules whose tokens its own source holds too: `to_edge_index(adj)` marks the
            # caller's tensor coalesced there, though this file never says `_coalesced_`
            more = [r() for r in rules if r not in active and rule_tokens(r).search(source)]
            return _hooks([*instances, *more]) if more else hooks

        active = {type(r) for r in instances}
        ctx.hooks_for = hooks_for
        # a program that reads its options from the command line is checked with each value
        # they admit (after the run that knows none); findings of every run are one list
        configs = argparse_options.configurations(text, path, ctx.dependencies, tree) if entry.enabled() else None
        for parsed in configs or [None]:
            token = argparse_options.use(parsed, configs.declared if configs is not None else None)
            try:
                Walker(module, ctx, dict(hooks)).run()
            finally:
                argparse_options.reset(token)
        if dependencies is not None:
            dependencies.update(ctx.dependencies)
        return _once_elsewhere(ctx.findings(), path)
    except RecursionError:
        return [_engine_diagnostic(PARSE_ERROR, path, "cannot analyse: nesting too deep")]
    except _OutOfTime:
        if ctx is None:
            raise
        # out of budget mid-walk: what was found so far stands (each finding rests on
        # evidence already seen), and the file says it was not checked to the end
        return [*ctx.findings(), _timeout_diagnostic(path, partial=True)]
    except Exception as exc:  # a bug of ours must not stop the run
        return [_engine_diagnostic(INTERNAL_ERROR, path, f"internal error while checking this file: {type(exc).__name__}: {exc}")]
    finally:
        forget_children()


def _hooks(instances) -> dict[str, list[Callable]]:
    """The rules' `visit_` methods by the name of the node type they visit."""
    hooks: dict[str, list[Callable]] = defaultdict(list)
    for rule in instances:
        for attr in dir(rule):
            if attr.startswith("visit_"):
                hooks[attr[len("visit_"):]].append(getattr(rule, attr))
    return hooks


def check_text(text: str, path: str, settings: Settings, rules=None,
               dependencies: Optional[set] = None,
               fixed_codes: Optional[list] = None,
               used_elsewhere: Optional[set] = None) -> tuple[list[Diagnostic], Optional[str], int]:
    """Findings after suppression; with fixes on, also the fixed text and how many fixes went
    in. `used_elsewhere` receives the directives of other files that suppressed a finding."""
    rules = settings.rules() if rules is None else rules

    def findings(t: str) -> list[Diagnostic]:
        sups: dict = {}  # read only when there is a finding: tokenizing costs more than the check
        version = settings.target_torch_version
        entries = settings.api_entry_points

        def suppressed(d: Diagnostic) -> bool:
            # a finding inside another module that this file calls obeys that module's noqa
            if d.path not in sups:
                sups[d.path] = suppression.parse(t) if d.path == path else _suppressions_on_disk(d.path)
            hit = sups[d.path].suppresses(d.code, d.line)
            if hit and d.path != path and used_elsewhere is not None:
                used_elsewhere.add((os.path.realpath(d.path), sups[d.path].directive_line(d.line), d.code))
            return hit

        kept = [d for d in analyse(t, path, rules, dependencies, version, entries) if not suppressed(d)]
        if timed_out(kept):
            return kept  # the budget is spent: no second pass
        if UNUSED_NOQA[0] in settings.extend_select or UNUSED_NOQA[0] in settings.select:
            kept.extend(suppression.unused(t, path, analyse(t, path, rules, None, version, entries), UNUSED_NOQA))
        return kept

    diagnostics = findings(text)
    if not settings.fix:
        return sorted(diagnostics, key=Diagnostic.sort_key), None, 0
    current, applied = text, 0
    for _ in range(MAX_FIX_ROUNDS):
        if timed_out(diagnostics):
            break  # fixes only from a complete analysis, and no more time to spend
        fixes = applicable(diagnostics, settings.unsafe_fixes)
        if not fixes:
            break
        candidate, went_in = apply_edits(current, fixes)
        if not parses(candidate):
            # Try the fixes one at a time, keeping only those that leave valid code.
            candidate, went_in = current, []
            for fix in fixes:
                attempt, one = apply_edits(candidate, [fix])
                if one and parses(attempt):
                    candidate, went_in = attempt, went_in + one
        if not went_in or candidate == current:
            break
        if fixed_codes is not None:
            fixed_codes.extend(d.code for d in diagnostics if any(d.fix is f for f in went_in))
        current, applied = candidate, applied + len(went_in)
        diagnostics = findings(current)
    return sorted(diagnostics, key=Diagnostic.sort_key), (current if current != text else None), applied


def _suppressions_on_disk(path: str) -> suppression.Suppressions:
    try:
        with open(path, "rb") as fh:
            return suppression.parse(src.decode(fh.read()).text)
    except (OSError, src.DecodeError):
        return suppression.Suppressions()


def check_bytes(data: bytes, path: str, settings: Settings, rules=None) -> FileResult:
    result = FileResult(path=path)
    try:
        decoded = src.decode(data)
    except src.DecodeError as exc:
        result.diagnostics.append(_engine_diagnostic(DECODE_ERROR, path, f"cannot decode: {exc}"))
        return result
    deps: set = set()
    codes: list = []
    used: set = set()
    diagnostics, fixed, applied = check_text(decoded.text, path, settings, rules, deps, codes, used)
    result.diagnostics = diagnostics
    result.noqa_used_elsewhere = tuple(sorted(used))
    result.fixed_codes = tuple(codes)
    result.dependencies = tuple(sorted(deps))
    result.fixes_applied = applied
    if fixed is not None:
        result.fixed_source = fixed
        result.encoding = decoded.encoding
        result.original_source = decoded.text
    return result


class _OutOfTime(BaseException):
    """Not an Exception: the handlers that keep a run going past a bug of ours (the
    reduction's fallback, a rule's failure) must not swallow it and go on unbounded."""


_BUDGET = {"armed": False, "seconds": 0.0}


def _alarm(signum, frame):
    # Raise only while a file is being checked: a late signal must not hit other code.
    if _BUDGET["armed"]:
        _BUDGET["armed"] = False
        raise _OutOfTime()


def _timeout_diagnostic(path: str, partial: bool = False) -> Diagnostic:
    spent = f"checking took more than {_BUDGET['seconds']:g} s of CPU time"
    message = (f"not checked to the end: {spent} (the findings reported were made before)" if partial
               else f"skipped: {spent}")
    return _engine_diagnostic(TIMEOUT, path, message)


def timed_out(diagnostics) -> bool:
    return any(d.code == TIMEOUT[0] for d in diagnostics)


def check_file(path: str, settings: Settings, rules=None, display: Optional[str] = None) -> FileResult:
    """Check one file within the per-file budget, so one pathological file cannot hang a run.
    The budget is CPU time, not wall-clock: on a loaded machine a file must not lose its
    findings to a timeout because other processes ran."""
    budget = settings.file_timeout
    if not budget or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "ITIMER_PROF"):
        return _check_file(path, settings, rules, display)
    previous = signal.signal(signal.SIGPROF, _alarm)
    try:
        try:
            _BUDGET["armed"], _BUDGET["seconds"] = True, budget
            signal.setitimer(signal.ITIMER_PROF, budget)
            return _check_file(path, settings, rules, display)
        finally:
            _BUDGET["armed"] = False
            signal.setitimer(signal.ITIMER_PROF, 0)
    except _OutOfTime:
        r = FileResult(path=display or path)
        r.diagnostics.append(_timeout_diagnostic(display or path))
        return r
    finally:
        signal.signal(signal.SIGPROF, previous)


def _check_file(path: str, settings: Settings, rules=None, display: Optional[str] = None) -> FileResult:
    shown = display or path
    if rules is None or settings.per_file_ignores:
        rules = settings.rules_for(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        r = FileResult(path=shown)
        r.diagnostics.append(_engine_diagnostic(READ_ERROR, shown, f"cannot read: {exc.strerror or exc}"))
        return r
    if path.endswith(".ipynb"):
        return check_notebook(data, shown, settings, rules)
    return check_bytes(data, shown, settings, rules)


def check_notebook(data: bytes, path: str, settings: Settings, rules=None) -> FileResult:
    result = FileResult(path=path)
    try:
        nb = notebook.load(data)
    except notebook.NotebookError as exc:
        result.diagnostics.append(_engine_diagnostic(DECODE_ERROR, path, str(exc)))
        return result
    joined = notebook.join(nb)
    deps: set = set()
    used: set = set()
    diagnostics, fixed, applied = check_text(joined.text, path, settings, rules, deps, used_elsewhere=used)
    result.noqa_used_elsewhere = tuple(sorted(used))
    result.diagnostics = [m for m in (notebook.map_diagnostic(d, joined) if d.code not in ENGINE_CODES and d.path == path
                                      else notebook.map_evidence_in(d, joined, path) for d in diagnostics)
                          if m is not None]
    result.dependencies = tuple(sorted(deps))
    for cell, line, why in joined.unparsable:
        code, name = PARSE_ERROR
        result.diagnostics.append(Diagnostic(code=code, name=name, path=path, line=line, column=1, end_line=line,
                                             end_column=1, cell=cell,
                                             message=f"cannot parse this cell, so it was not checked: {why}"))
    result.diagnostics.sort(key=Diagnostic.sort_key)
    if fixed is not None:
        try:
            # only the changed cells' source is rewritten, in the file's own formatting
            result.fixed_source = notebook.rewrite(data.decode("utf-8"), nb, notebook.split(fixed, joined, nb))
        except notebook.NotebookError as exc:
            result.diagnostics.append(_engine_diagnostic(INTERNAL_ERROR, path, f"fixes not applied: {exc}"))
            return result
        result.fixes_applied = applied
        result.original_source = data.decode("utf-8", "replace")
    return result


def write_fixed(path: str, result: FileResult) -> Optional[str]:
    """Write a fixed file back; return an error message instead of raising."""
    if result.fixed_source is None:
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"{result.path}: fixes not written: {exc}"
    if not stat.S_ISREG(mode):
        # a FIFO or a device read as a file: replacing it would destroy it
        return f"{result.path}: not a regular file, fixes not written"
    if not mode & 0o222 or not os.access(path, os.W_OK):
        return f"{result.path}: read-only (not writable), fixes not applied"
    try:
        src.write_atomic(path, src.encode(result.fixed_source, result.encoding))
    except (OSError, UnicodeEncodeError) as exc:
        return f"{result.path}: fixes not written: {exc}"
    return None
