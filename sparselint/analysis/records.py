"""Record classes of the project: dataclasses and `typing.NamedTuple` classes.

Their constructor is generated from the fields the class body declares (those of base
dataclasses of the same file first): it binds each field from the call's positional
arguments in field order, then from its keywords, else from the field's default, a
class-level value or `field(default=...)`, or by calling its `field(default_factory=...)`
(a lambda, a function or record class of the project, a torch constructor). The facts of
the defaults are found once per class, in the module that defines it.

A field whose value is not known is left out of the instance's attributes, so reading it
is unknown; a class whose fields cannot all be listed (a base of another module, options
that are not literals) is not treated as a record.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst

from .cst.names import dotted
from .evaluation.facts import Fact, Instance

_DATACLASS = ("dataclass", "dataclasses.dataclass")
_FIELD = ("field", "dataclasses.field")
_NAMEDTUPLE = ("NamedTuple", "typing.NamedTuple")
_CLASSVAR = ("ClassVar", "typing.ClassVar")
_KW_ONLY = ("KW_ONLY", "dataclasses.KW_ONLY")
_INITVAR = ("InitVar", "dataclasses.InitVar")
# bases that add no fields and no constructor
_NEUTRAL_BASES = ("object", "Generic", "typing.Generic")
# a record that is still being read (a factory that makes its own class)
_BUSY = object()


@dataclass(frozen=True)
class Field:
    name: str
    init: bool = True  # a parameter of the generated `__init__`
    kw_only: bool = False
    has_default: bool = False
    default: Optional[Fact] = None  # the fact of its default value (None: not known)
    attribute: bool = True  # False for an `InitVar`: passed to `__post_init__`, never stored


@dataclass(frozen=True)
class Record:
    kind: str  # "dataclass" or "namedtuple"
    fields: tuple[Field, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


def _decorator_parts(d: cst.Decorator) -> tuple[Optional[str], tuple]:
    expr = d.decorator
    if isinstance(expr, cst.Call):
        return dotted(expr.func), tuple(expr.args)
    return dotted(expr), ()


def _options(klass: cst.ClassDef) -> Optional[dict]:
    """The options of a class's `@dataclass(...)` decorator ({} when it has none), or None
    when it is not decorated so."""
    for d in klass.decorators:
        name, args = _decorator_parts(d)
        if name in _DATACLASS:
            return {a.keyword.value: a.value for a in args if a.keyword is not None}
    return None


def record_kind(klass: cst.ClassDef) -> Optional[str]:
    if _options(klass) is not None:
        return "dataclass"
    if any(dotted(b.value) in _NAMEDTUPLE for b in klass.bases if b.keyword is None):
        return "namedtuple"
    return None


def declares_record(node) -> bool:
    """Whether an `ast.ClassDef` is decorated `@dataclass` or subclasses `NamedTuple` (read
    before the module is parsed by LibCST)."""
    import ast

    def name(expr) -> str:
        if isinstance(expr, ast.Call):
            expr = expr.func
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            return f"{expr.value.id}.{expr.attr}"
        return expr.id if isinstance(expr, ast.Name) else ""

    return (any(name(d) in _DATACLASS for d in node.decorator_list)
            or any(name(b) in _NAMEDTUPLE for b in node.bases))


def field_annotations(node) -> dict:
    """Field name -> (its annotation, its literal default, its statement) of an
    `ast.ClassDef`'s body, the default None where it is not one literal (`field(...)`)."""
    import ast
    out = {}
    for st in node.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            default = st.value if isinstance(st.value, ast.Constant) else None
            out[st.target.id] = (st.annotation, default, st)
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            # a plain class's class-level default
            out[st.targets[0].id] = (None, st.value if isinstance(st.value, ast.Constant) else None, st)
    return out


def class_defaults(node) -> Optional[dict]:
    """Name -> literal value of a plain config class (`class TrainConfig: optimizer = "adam"`):
    no bases, no methods, a body of class-level literal assignments; None for any other."""
    import ast
    if node.bases or node.keywords or node.decorator_list:
        return None
    out = {}
    for st in node.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue  # the docstring
        target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else (
            st.target if isinstance(st, ast.AnnAssign) else None)
        if not isinstance(target, ast.Name) or not isinstance(st.value, ast.Constant):
            return None
        out[target.id] = st.value.value
    return out


def literal_members(annotation) -> tuple:
    """The `ast.Constant` members of a `Literal["a", "b"]` annotation (also `typing.Literal`,
    `Optional[Literal[...]]` is not read); () for any other annotation."""
    import ast
    if not isinstance(annotation, ast.Subscript):
        return ()
    head = annotation.value
    if not ((isinstance(head, ast.Name) and head.id == "Literal")
            or (isinstance(head, ast.Attribute) and head.attr == "Literal")):
        return ()
    inner = annotation.slice
    members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
    return tuple(m for m in members if isinstance(m, ast.Constant))


_QUOTED = re.compile(r"""(["'])([A-Za-z_][\w.-]*)\1""")


def documented_values(lines: list, field) -> tuple:
    """The quoted words of the comment that documents a field (`optimizer: str = "adam"  #
    "adam" or "sparse_adam"`, or a comment line right above it): the values its author says
    it takes, each with its (line, column)."""
    found = []
    for number in (field.lineno, field.lineno - 1):
        if not 1 <= number <= len(lines):
            continue
        text = lines[number - 1]
        comment = _comment_at(text) if number == field.lineno else (
            text.find("#") if text.lstrip().startswith("#") else -1)
        if comment < 0:
            continue
        for m in _QUOTED.finditer(text, comment):
            found.append((m.group(2), number, m.start() + 1))
        break
    return tuple(found)


def _comment_at(line: str) -> int:
    """Where the comment of a line of code starts (-1: none), quotes skipped."""
    import io
    import tokenize
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return -1
    return -1


def _flag(node: Optional[cst.BaseExpression]):
    """A literal True/False option; None when absent; _BUSY when it is not a literal."""
    if node is None:
        return None
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return _BUSY


def record_of(walker, klass: cst.ClassDef) -> Optional[Record]:
    """The record a class of `walker`'s module declares, memoised per class."""
    memo = walker.records
    found = memo.get(klass)
    if found is _BUSY:
        return None
    if found is not None or klass in memo:
        return found
    memo[klass] = _BUSY
    try:
        found = _read(walker, klass)
    finally:
        memo[klass] = None
    memo[klass] = found
    return found


def _read(walker, klass: cst.ClassDef) -> Optional[Record]:
    kind = record_kind(klass)
    if kind is None:
        return None
    options = _options(klass) or {}
    every_kw_only = _flag(options.get("kw_only"))
    if _BUSY in (every_kw_only, _flag(options.get("init"))) or _flag(options.get("init")) is False:
        return None  # no generated constructor, or one whose shape is not known
    fields: dict[str, Field] = {}
    for base in klass.bases:
        if base.keyword is not None:
            continue
        name = dotted(base.value if not isinstance(base.value, cst.Subscript) else base.value.value)
        if name in _NAMEDTUPLE or name in _NEUTRAL_BASES:
            continue
        if kind == "dataclass" and isinstance(base.value, cst.Name) and name in walker.classes:
            inherited = record_of(walker, walker.classes[name])
            if inherited is not None:
                fields.update((f.name, f) for f in inherited.fields)
                continue
            if _declares_fields(walker.classes[name]):
                return None  # a base that is not a record but declares annotated names
            continue
        return None  # a base whose fields are not known
    kw_only = bool(every_kw_only)
    for line in klass.body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for small in line.body:
            if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                continue
            annotation = small.annotation.annotation
            head = dotted(annotation.value if isinstance(annotation, cst.Subscript) else annotation)
            if head in _CLASSVAR:
                continue
            if kind == "dataclass" and head in _KW_ONLY:
                kw_only = True
                continue
            made = _field(walker, klass, small.target.value, small.value, kind, kw_only, head in _INITVAR)
            if made is None:
                return None
            old = fields.get(made.name)
            fields[made.name] = made
            if old is not None:
                # an overridden field keeps its place in the order
                fields = {k: (made if k == made.name else v) for k, v in fields.items()}
    return Record(kind, tuple(fields.values()))


def _declares_fields(klass: cst.ClassDef) -> bool:
    return any(isinstance(small, cst.AnnAssign) for line in klass.body.body
               if isinstance(line, cst.SimpleStatementLine) for small in line.body)


def _field(walker, klass, name: str, value: Optional[cst.BaseExpression], kind: str, kw_only: bool,
           initvar: bool) -> Optional[Field]:
    if value is None:
        return Field(name, kw_only=kw_only, attribute=not initvar)
    if (kind == "dataclass" and isinstance(value, cst.Call)
            and (dotted(value.func) in _FIELD or walker.ctx.names.qualify(value.func) == "dataclasses.field")):
        spec = {a.keyword.value: a.value for a in value.args if a.keyword is not None}
        if any(a.keyword is None or a.star for a in value.args):
            return None
        init, own_kw_only = _flag(spec.get("init")), _flag(spec.get("kw_only"))
        if _BUSY in (init, own_kw_only):
            return None
        field = Field(name, init=init is not False, kw_only=kw_only if own_kw_only is None else own_kw_only,
                      attribute=not initvar)
        if "default" in spec:
            return replace(field, has_default=True, default=_value(walker, klass, spec["default"]))
        if "default_factory" in spec:
            return replace(field, has_default=True, default=_made_by(walker, klass, spec["default_factory"]))
        return field
    return Field(name, kw_only=kw_only, has_default=True, default=_value(walker, klass, value), attribute=not initvar)


def _value(walker, klass: cst.ClassDef, expr: cst.BaseExpression) -> Optional[Fact]:
    """The fact of an expression of the class body, as the body computed it."""
    inference, state = walker.class_scope(klass)
    with walker.evaluating(inference):
        return inference.fact(expr, state)


def _made_by(walker, klass: cst.ClassDef, factory: cst.BaseExpression) -> Optional[Fact]:
    """What calling a `default_factory` with no arguments gives, each time an instance is made."""
    inference, state = walker.class_scope(klass)
    if isinstance(factory, cst.Lambda):
        if factory.params.params or factory.params.posonly_params or factory.params.kwonly_params:
            return None
        # a lambda's body sees the module's names, not the class body's
        body_inference = walker.module_scope_inference(klass)
        with walker.evaluating(body_inference):
            return body_inference.fact(factory.body, type(state)())
    if isinstance(factory, cst.Name) and factory.value in walker.classes and factory.value not in inference.locals:
        other = walker.classes[factory.value]
        record = record_of(walker, other)
        if record is None or bind(record, [], {}) is None:
            return None
        return instance_from(record, factory.value, {}, ())
    call = cst.Call(func=factory)
    with walker.evaluating(inference):
        made = inference.fact(call, state)
    return _rehomed(made, call, factory)


def _rehomed(fact, synthetic: cst.CSTNode, real: cst.CSTNode):
    """Evidence pointing at a call made up here points at the factory named in the source."""
    if fact is None or not hasattr(fact, "evidence"):
        return fact
    evidence = tuple(replace(e, node=real) if e.node is synthetic else e for e in fact.evidence)
    return replace(fact, evidence=evidence)


def bind(record: Record, positional: list, keywords: dict) -> Optional[dict]:
    """Field name -> the argument node or `Field` that gives it its value, for a call with
    these positional argument nodes and keyword -> node; None where the call raises."""
    params = [f for f in record.fields if f.init]
    ordered = [f for f in params if not f.kw_only]
    if len(positional) > len(ordered):
        return None
    given: dict[str, object] = {f.name: node for f, node in zip(ordered, positional)}
    names = {f.name for f in params}
    for key, node in keywords.items():
        if key not in names or key in given:
            return None
        given[key] = node
    out: dict[str, object] = {}
    for f in record.fields:
        if f.name in given:
            out[f.name] = given[f.name]
        elif f.has_default:
            out[f.name] = f
        elif f.init:
            return None  # a required argument is missing
    return out


def instance_from(record: Record, cls: str, facts: dict, evidence: tuple) -> Instance:
    """The instance a record class makes from the facts of the arguments it was given (field
    name -> fact); the other fields get their defaults."""
    attrs = []
    for f in record.fields:
        if not f.attribute:
            continue
        fact = facts[f.name] if f.name in facts else (f.default if f.has_default else None)
        if fact is not None:
            attrs.append((f.name, fact))
    return Instance(cls=cls, attrs=tuple(attrs), fields=record.names if record.kind == "namedtuple" else None,
                    evidence=evidence)
