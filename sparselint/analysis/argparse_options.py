"""Command-line options are inputs: a program that reads its optimizer, its clipping norm or
its sparse switch from `argparse` is checked with each value its options admit.

The options are read from the module's own `parser.add_argument(...)` calls with literal
names, and from those of the functions it hands its parser to, in this module or another
module of the project (`opts.train_opts(parser)`, which adds them to an argument group of
it, or hands it on to further functions), and from those of a parser that a function of
another module builds and returns (`get_parser().parse_args()`): their defaults (argparse's `None` where none is given, `False` for `store_true`),
each of their `choices`, and each on/off flag turned on. The module is checked once with
every option at its default, then once per other admitted value of one option (the rest at
their defaults), as a user who passes that one option runs it. What `parse_args()` returns
then holds those values, each with where it comes from (the `add_argument` line, in its
own file). An option added through what cannot be read (names from a table) is not one of
them: what the program reads of it stays unknown.
"""
from __future__ import annotations

import ast
import os
import re
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Optional

from ..diagnostics import Evidence
from .evaluation.facts import Const, Fact, Scalar

_PARSED: ContextVar[Optional[tuple]] = ContextVar("parsed_arguments", default=None)
# the options the module declares, by how they are spelled: what a literal argument list parses to
_DECLARED: ContextVar[Optional[dict]] = ContextVar("declared_options", default=None)
_HAS_OPTIONS = re.compile(r"\.add_argument\(")
# a parser built here, which other functions may add options to
_MAKES_PARSER = re.compile(r"ArgumentParser\(")
_PARSES = re.compile(r"\.parse(?:_known)?_args\(")
# what an option can lead to: an optimizer built, gradients clipped, sparse gradients
_ACTS = re.compile(r"\b(optim|optimi[sz]ers?|Adam\w*|SGD|RMSprop|Adagrad|Adadelta|clip_grad_\w+|sparse)\b")
MAX_CONFIGURATIONS = 8
# how deep helpers that hand the parser on are followed, and how far imports are followed for
# the places the options are read
MAX_HELPER_DEPTH = 6
MAX_IMPORT_DEPTH = 3
MAX_READ_FILES = 60
# what a helper adds options through: the parser, an argument group of it (configargparse
# spells `add_argument` as `add` too)
_ADDS = frozenset({"add_argument", "add"})
_GROUPS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})
_FLAGS = {"store_true": (False, True), "store_false": (True, False)}


@dataclass(frozen=True)
class _Option:
    dest: str
    spelled: str  # `--optim`
    line: int
    column: int
    default: object
    others: tuple  # the other values a user may give
    path: str = ""  # the file that adds it, when it is not the checked one
    kind: Optional[str] = None  # `type=int` or `type=float`; "flag" for `store_true`/`store_false`
    choices: tuple = ()
    scope: str = ""  # the function of the checked module that adds it ("" at module level)
    aliases: tuple = ()  # its other spellings (`-o` beside `--optimizer`)


class Configurations(list):
    """The configurations to check, and the options declared (`declared`: how each is
    spelled -> the option, and per function that adds options, its own), which a literal
    argument list is parsed with."""

    declared: Optional[tuple] = None


def parsed_arguments() -> Optional[tuple]:
    """The attributes of what `parse_args()` returns in the configuration being checked."""
    return _PARSED.get()


def configurations(text: str, path: str = "", dependencies: Optional[set] = None,
                   tree: Optional[ast.Module] = None) -> Configurations:
    """(name, fact) attributes of the parsed arguments, one tuple per configuration (None:
    nothing known, first). Empty when the module declares no options worth turning. The
    files the options come from, or are read in, are added to `dependencies`. `tree`: the
    module's `ast`, when it is parsed already."""
    try:
        return _configurations(text, path, dependencies, tree)
    finally:
        _BY_TYPE.clear()  # the trees walked are not kept alive


def _configurations(text: str, path: str, dependencies: Optional[set], tree: Optional[ast.Module]) -> Configurations:
    found = Configurations()
    if not _PARSES.search(text):
        return found
    own, made = _HAS_OPTIONS.search(text), bool(path) and _MAKES_PARSER.search(text)
    if not (own or made or path):
        return found
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            return found
    options = [o for o in map(_option, _add_argument_calls(tree)) if o is not None] if own else []
    scopes = {(c.lineno, c.col_offset + 1): fn.name for fn in _of_type(tree, ast.FunctionDef)
              for c in _of_type(fn, ast.Call)} if options else {}
    options = [o if o.path else replace(o, scope=scopes.get((o.line, o.column), "")) for o in options]
    here = os.path.abspath(path) if path else ""
    if made:
        # the options of the functions the module hands its parser to (its own functions'
        # are among its `add_argument` calls already)
        options += [o for o in _options_of_helpers(tree, text, path) if o.path != here]
    if path:
        # a parser another module's function builds and returns (`get_parser().parse_args()`)
        options += [o for o in _options_of_factories(tree, text, path) if o.path != here]
    if "set_defaults" in text:
        options = _with_set_defaults(tree, options, scopes)
    scopes: dict = {}
    for o in options:
        if not o.path:
            scopes.setdefault(o.scope, []).append(o)
    found.declared = (_declared(options), {k: _declared(v) for k, v in scopes.items()})
    if not options:
        return found
    # an option the program never reads (`args.name`) near an optimizer, clipping or a
    # sparse switch, here or in the modules it imports, cannot change a finding worth the
    # extra runs
    read, tested = _read_near_acts(text)
    if path and any(o.dest not in read for o in options):
        more, more_tested = _read_in_imports(path, text, dependencies)
        read, tested = read | more, tested | more_tested
    options = [o for o in options if o.dest in read]
    if not options:
        return found
    if dependencies is not None:
        dependencies.update(o.path for o in options if o.path)
    defaults = {o.dest: _fact(o.default, _at(o, f"the default `{o.spelled} {_shown(o.default)}`", path))
                for o in options if o.default is not _NO_VALUE}
    # first as before, nothing known of the options (a value without choices, `--clip`, may
    # be any), then the defaults, then each other admitted value
    found += [None, tuple(sorted(defaults.items()))]
    # the values the program tests on the line of an optimizer, a clipping or a sparse switch
    # (`sparse=opt.optim == "sparseadam"`) first: they are the ones that change what it
    # builds; then the others, in the order they are declared
    turned = sorted(((o, v) for o in options for v in o.others), key=lambda ov: ov[1] not in tested)
    for o, value in turned:
        if len(found) >= MAX_CONFIGURATIONS:
            return found
        text_ = f"`{o.spelled}` given" if value is True and o.default is False else \
            f"`{o.spelled} {_shown(value)}`, a value the option admits"
        config = {**defaults, o.dest: _fact(value, _at(o, text_, path))}
        found.append(tuple(sorted(config.items())))
    return found


_ATTRIBUTE = re.compile(r"\.(\w+)\b")
_STRING = re.compile(r"""["']([\w.+-]{1,40})["']""")
_NEAR: dict[int, tuple] = {}


def _read_near_acts(text: str, window: int = 3) -> tuple[frozenset, frozenset]:
    """The attributes a module reads on a line at most `window` lines above an optimizer,
    clipping or a sparse switch, on that line, or on the two below it (the rest of a call
    written over several lines), and the strings on such a line."""
    key = hash(text)
    found = _NEAR.get(key)
    if found is None:
        lines = text.splitlines()
        out: set = set()
        tested: set = set()
        for j, line in enumerate(lines):
            if _ACTS.search(line) and not line.lstrip().startswith(("#", "parser.", "p.")):
                tested.update(_STRING.findall(line))
                for near in lines[max(0, j - window):j + 3]:
                    if not near.lstrip().startswith(("#", "parser.", "p.")):
                        out.update(_ATTRIBUTE.findall(near))
        if len(_NEAR) > 4096:
            _NEAR.clear()
        found = _NEAR[key] = (frozenset(out), frozenset(tested))
    return found


def _read_in_imports(path: str, text: str, dependencies: Optional[set]) -> tuple[frozenset, frozenset]:
    """What `_read_near_acts` finds in the project modules a module imports, and those they
    import, a few levels down: the options travel there (`build_model(opt)`)."""
    from .project.models import project_index
    index = project_index()
    out: set = set()
    tested: set = set()
    seen = {os.path.abspath(path)}
    level = list(index.imported_files(path, text))
    for _ in range(MAX_IMPORT_DEPTH):
        following = []
        for file in level:
            if file in seen or len(seen) > MAX_READ_FILES:
                continue
            seen.add(file)
            body = index._text(file)
            if body is None:
                continue
            if dependencies is not None:
                dependencies.add(file)
            read, strings = _read_near_acts(body)
            out |= read
            tested |= strings
            following.extend(index.imported_files(file))
        level = following
    return frozenset(out), frozenset(tested)


def _options_of_helpers(tree: ast.Module, text: str, path: str) -> list:
    """The options added by the functions a module calls with a parser it builds (or an
    argument group of one), found through the project index."""
    parsers = _parser_names(tree)
    if not parsers:
        return []
    out = []
    # what each helper adds, worked out once in this check (a helper's helpers live in other
    # files, which may change between checks)
    added: dict = {}
    for node in _of_type(tree, ast.Call):
        for slot in _passed(node, parsers):
            target = _resolve(node.func, path, text)
            if target is not None:
                out.extend(_added_by(*target, slot, 0, added))
    return list(_first_of_each(out))


def _options_of_factories(tree: ast.Module, text: str, path: str) -> list:
    """The options of the parsers this module parses that a function builds and returns:
    `get_parser().parse_args()`, or `parser = opts.build(); parser.parse_args()` in one
    scope (a name bound in another function, or bound twice, is no such parser)."""
    out: list = []
    added: dict = {}
    scopes = [tree, *_of_type(tree, ast.FunctionDef), *_of_type(tree, ast.AsyncFunctionDef)]
    for scope in scopes:
        made_by: dict = {}  # a name -> the function whose call it was bound to (None: bound otherwise)
        calls = []
        for node in _in_scope(scope):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        fresh = t.id not in made_by and isinstance(node.value, ast.Call)
                        made_by[t.id] = node.value.func if fresh else None
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
                made_by[node.target.id] = None
            elif isinstance(node, ast.Call) and _parses_argv(node):
                calls.append(node.func.value)
        for receiver in calls:
            factory = receiver.func if isinstance(receiver, ast.Call) else (
                made_by.get(receiver.id) if isinstance(receiver, ast.Name) else None)
            target = _resolve(factory, path, text) if factory is not None else None
            if target is not None and target[0] != os.path.abspath(path):
                out.extend(_returned_options(*target, added))
    return list(_first_of_each(out))


def _parses_argv(node: ast.Call) -> bool:
    """`parse_args()`, or with one argument that may be the command line (`argv`,
    `sys.argv[1:]`): whether it is, the analysis of the call decides."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr in ("parse_args", "parse_known_args")):
        return False
    given = [*node.args, *(k.value for k in node.keywords if k.arg == "args")]
    if len(given) != len(node.args) + len(node.keywords):
        return False
    return not given or (len(given) == 1 and isinstance(given[0], (ast.Name, ast.Subscript)))


def _in_scope(scope: ast.AST):
    """The nodes of a module's or a function's own code: not those of the functions,
    classes and lambdas it defines."""
    stack = list(scope.body) if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) else [scope]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _returned_options(file: str, name: str, added: dict) -> tuple:
    """The options of the parser a module's function builds and returns, added by itself or
    by the functions it hands the parser to."""
    from .project.models import project_index
    fn = project_index().function_def(file, name)
    if fn is None:
        return ()
    made = {t.id for node in _of_type(fn, ast.Assign) if isinstance(node.value, ast.Call)
            and _called_name(node.value.func).endswith("ArgumentParser")
            for t in node.targets if isinstance(t, ast.Name)}
    returned = {node.value.id for node in _of_type(fn, ast.Return) if isinstance(node.value, ast.Name)}
    names = _with_groups(fn, made & returned)
    return _adds_to(fn, names, file, 0, added) if names else ()


def _parser_names(tree: ast.AST) -> set:
    """Names of the parsers the module builds that parse the command line: the receiver of
    `parse_args()`, or a parser a function returns (`_get_parser().parse_args()`); a
    parser built for another purpose does not give the program its options."""
    made = {t.id for node in _of_type(tree, ast.Assign) if isinstance(node.value, ast.Call)
            and _called_name(node.value.func).endswith("ArgumentParser")
            for t in node.targets if isinstance(t, ast.Name)}
    if not made:
        return made
    used = {node.func.value.id for node in _of_type(tree, ast.Call) if _parses_argv(node)
            and isinstance(node.func.value, ast.Name)}
    used |= {node.value.id for node in _of_type(tree, ast.Return) if isinstance(node.value, ast.Name)}
    return _with_groups(tree, made & used)


def _with_groups(scope: ast.AST, names: set) -> set:
    """`names` and the argument groups made of them (`group = parser.add_argument_group()`)."""
    names = set(names)
    assigns = [n for n in _of_type(scope, ast.Assign) if isinstance(n.value, ast.Call)
               and isinstance(n.value.func, ast.Attribute) and n.value.func.attr in _GROUPS
               and isinstance(n.value.func.value, ast.Name)]
    grown = True
    while grown:
        grown = False
        for n in assigns:
            if n.value.func.value.id in names:
                for t in n.targets:
                    if isinstance(t, ast.Name) and t.id not in names:
                        names.add(t.id)
                        grown = True
    return names


# the nodes of each kind under a scope, while one module's configurations are worked out
_BY_TYPE: dict = {}


def _of_type(scope: ast.AST, kind: type) -> list:
    """The nodes of one kind under `scope`, from one walk of it for every kind asked (a
    module of 10,000 lines was walked six times)."""
    key = id(scope)
    held = _BY_TYPE.get(key)
    if held is None or held[0] is not scope:
        nodes: dict = {}
        for n in ast.walk(scope):
            nodes.setdefault(type(n), []).append(n)
        held = _BY_TYPE[key] = (scope, nodes)
    return held[1].get(kind, [])


def _called_name(func: ast.AST) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _passed(call: ast.Call, names: set) -> list:
    """Where a call passes one of `names`: ("pos", index) or ("kw", keyword)."""
    slots = [("pos", i) for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id in names]
    slots += [("kw", k.arg) for k in call.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id in names]
    if slots and any(isinstance(a, ast.Starred) for a in call.args):
        return []  # which parameter receives it is not known
    return slots


def _resolve(func: ast.AST, path: str, text: Optional[str]) -> Optional[tuple[str, str]]:
    """(file, name) of the function a call names: one of the module, or one it imports."""
    from .project.models import project_index
    index = project_index()
    if isinstance(func, ast.Name):
        if index.function_def(path, func.id, text) is not None:
            return os.path.abspath(path), func.id
        return index.resolve_function(func.id, path, text)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return index.resolve_function(func.value.id, path, text, func.attr)
    return None


def _added_by(file: str, name: str, slot: tuple, depth: int, added: dict) -> tuple:
    """The options a module's function adds to the parser it receives in `slot`, itself,
    through argument groups of it, or through the functions it hands either to."""
    from .project.models import project_index
    index = project_index()
    key = (file, name, slot)
    if key in added:
        return added[key]
    added[key] = ()  # a helper that calls itself adds nothing more
    fn = index.function_def(file, name)
    param = _parameter(fn, slot) if fn is not None else None
    found = _adds_to(fn, _with_groups(fn, {param}), file, depth, added) if param is not None else ()
    added[key] = found
    return found


def _adds_to(fn: ast.AST, names: set, file: str, depth: int, added: dict) -> tuple:
    """The options a function of the module `file` adds to the parsers (or argument groups)
    it holds under `names`, itself or through the functions it hands them to."""
    out: list = []
    for node in _of_type(fn, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _ADDS and isinstance(func.value, ast.Name) \
                and func.value.id in names:
            option = _option(node)
            if option is not None:
                out.append(replace(option, path=file))
        elif depth < MAX_HELPER_DEPTH:
            for inner in _passed(node, names):
                target = _resolve(func, file, None)
                if target is not None:
                    out.extend(_added_by(*target, inner, depth + 1, added))
    return tuple(out)


def _parameter(fn: ast.AST, slot: tuple) -> Optional[str]:
    args = fn.args
    if slot[0] == "pos":
        positional = [*args.posonlyargs, *args.args]
        return positional[slot[1]].arg if slot[1] < len(positional) else None
    named = [a.arg for a in (*args.args, *args.kwonlyargs)]
    return slot[1] if slot[1] in named else None


def _first_of_each(options):
    """Each option once, as argparse keeps it (the same helper called twice adds nothing new)."""
    seen = set()
    for o in options:
        if (o.path, o.line, o.column) not in seen:
            seen.add((o.path, o.line, o.column))
            yield o


def use(config: Optional[tuple], declared: Optional[tuple] = None):
    return _PARSED.set(config), _DECLARED.set(declared)


def reset(token) -> None:
    _PARSED.reset(token[0])
    _DECLARED.reset(token[1])


def declares_options() -> bool:
    """Whether the module being checked declares options a literal argument list can give."""
    declared = _DECLARED.get()
    return declared is not None and bool(declared[0])


def parsed_literal(argv: list, where: Evidence, parser: Optional[str] = None, known_only: bool = False) -> Optional[tuple]:
    """The attributes of what `parse_args(argv)` returns for a literal list of strings, read
    with the options the module declares (those the function `parser` adds, when it adds
    some: the function that builds the parser): each at its default, the ones the list gives
    at their value. None when the list holds anything else (a positional argument, an option
    not declared here, a value its choices or type refuse); with `known_only`
    (`parse_known_args`), a long option not declared is left out with its value."""
    held = _DECLARED.get()
    if not held or not held[0]:
        return None
    declared = held[0]
    if parser is not None and parser in held[1]:
        # the function's own options first; those it gets from a helper or a parent parser
        # as the module declares them
        declared = {**declared, **held[1][parser]}
    given: dict = {}
    i = 0
    while i < len(argv):
        spelled, _, inline = argv[i].partition("=")
        option = declared.get(spelled)
        if option is None and spelled.startswith("--") and spelled not in declared:
            # argparse takes an unambiguous prefix of a long option (`--optim` for `--optimizer`)
            longer = {o for k, o in declared.items() if k.startswith(spelled) and k.startswith("--")}
            option = next(iter(longer)) if len(longer) == 1 else None
        if option is None and known_only and spelled.startswith("--") and not inline and "=" not in argv[i]:
            # `parse_known_args` leaves an option it does not know to the caller, with the
            # value after it (`--local_rank 0`)
            i += 2 if i + 1 < len(argv) and not argv[i + 1].startswith("-") else 1
            continue
        if option is None:
            return None  # not declared here, or declared otherwise by another parser
        if option.kind == "flag":
            if inline:
                return None
            value, i = option.choices[0], i + 1
        else:
            if option.kind == "other" or (not inline and i + 1 >= len(argv)):
                return None
            text = inline or argv[i + 1]
            i += 1 if inline else 2
            try:
                value = _CONVERTERS[option.kind](text) if option.kind in _CONVERTERS else text
            except ValueError:
                return None
            if option.choices and value not in option.choices:
                return None
        given[option.dest] = _fact(value, replace(where, text=f"`{spelled} {_shown(value)}`, in the list `parse_args` is given"))
    if any(o is not None and o.default is _NO_VALUE and o.dest not in given for o in declared.values()):
        return None  # a required option it lacks: argparse exits
    attrs = {o.dest: _fact(o.default, _at(o, f"the default `{o.spelled} {_shown(o.default)}`", o.path))
             for o in declared.values() if o is not None and o.default is not _NO_VALUE}
    for spelled, o in declared.items():
        if o is None and spelled.startswith("--"):
            attrs.pop(spelled.lstrip("-").replace("-", "_"), None)
    attrs.update(given)
    return tuple(sorted(attrs.items()))


_NO_VALUE = object()


def _add_argument_calls(tree: ast.Module):
    for node in _of_type(tree, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            yield node


def _option(call: ast.Call) -> Optional[_Option]:
    found = _option_of(call)
    if found is None:
        return None
    names = tuple(a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return replace(found, aliases=tuple(n for n in names if n != found.spelled))


def _option_of(call: ast.Call) -> Optional[_Option]:
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
        if "default" in keywords:  # `action="store_true", default=True`: giving it changes nothing
            default = _literal(keywords["default"])
            if default is _NO_VALUE:
                return None
        return _Option(dest, spelled, call.lineno, call.col_offset + 1, default,
                       (turned,) if turned != default else (), kind="flag", choices=(turned,))
    if action is not None or "nargs" in keywords:
        return None
    default = _literal(keywords["default"]) if "default" in keywords else None
    if default is _NO_VALUE:
        return None
    typed = keywords.get("type")
    kind = ast.unparse(typed) if typed is not None else None
    if kind == "str":
        kind = None
    elif kind is not None and kind not in _CONVERTERS:
        kind = "other"  # a value a function converts: not read from a literal list
    if isinstance(default, str) and kind in _CONVERTERS:
        try:  # argparse applies `type` to a string default
            default = _CONVERTERS[kind](default)
        except ValueError:
            return None
    choices = _literal(keywords["choices"]) if "choices" in keywords else ()
    if not isinstance(choices, (list, tuple)) or not all(_scalar(c) for c in choices):
        choices = ()
    choices = tuple(dict.fromkeys(choices))
    if "required" in keywords and _literal(keywords["required"]) is not False:
        # always given: no default is ever seen, only what a user passes (its choices)
        return _Option(dest, spelled, call.lineno, call.col_offset + 1, _NO_VALUE, choices, kind=kind, choices=choices)
    others = tuple(c for c in choices if c != default)
    return _Option(dest, spelled, call.lineno, call.col_offset + 1, default, others, kind=kind, choices=choices)


# the `type=` of an option whose conversion of a given string is known
_CONVERTERS = {"int": int, "float": float, "str.lower": str.lower, "str.upper": str.upper}


def _declared(options: list) -> dict:
    """How each option is spelled -> the option. One spelled alike by two parsers of the
    module with different defaults or choices is not known (which parser a list goes to is
    not followed): None."""
    out: dict = {}
    for o in options:
        for spelled in (o.spelled, *o.aliases):
            held = out.get(spelled, o)
            same = held is not None and (held.dest, held.default, held.choices, held.kind) == (o.dest, o.default, o.choices, o.kind)
            out[spelled] = o if same else None
    return out


def _with_set_defaults(tree: ast.Module, options: list, scopes: dict) -> list:
    """`parser.set_defaults(optimizer="adagrad")` gives the option of that name its default
    (an option of the function that calls it, or of any when it is called at module level);
    one it sets to what cannot be read is not known."""
    out = list(options)
    for call in _of_type(tree, ast.Call):
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "set_defaults"):
            continue
        scope = scopes.get((call.lineno, call.col_offset + 1), "")
        for k in call.keywords:
            value = _literal(k.value)
            for i, o in enumerate(out):
                if o is None or o.dest != k.arg or (scope and o.scope != scope):
                    continue
                out[i] = None if value is _NO_VALUE else replace(
                    o, default=value, others=tuple(c for c in (o.choices or o.others) if c != value))
    return [o for o in out if o is not None]


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


def _at(option: _Option, text: str, checked: str = "") -> Evidence:
    if not option.path:
        return Evidence(option.line, option.column, text)
    # the other file, named as the checked file is named (relative to where it was given)
    shown = os.path.normpath(os.path.join(os.path.dirname(checked),
                                          os.path.relpath(option.path, os.path.dirname(os.path.abspath(checked)))))
    return Evidence(option.line, option.column, text, path=shown)


def _shown(value) -> str:
    return value if isinstance(value, str) else repr(value)
