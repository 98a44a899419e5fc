"""The facts the engine infers about values, and how facts from two paths join.

A fact is immutable. Every field may be unknown (None); a rule fires only on known fields.
Joining two facts (after an `if`, around a loop) keeps what both agree on.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Optional, Union

from ...diagnostics import Evidence
from . import ties
from .gradflags import NONE, UNKNOWN, Flags

SPARSE_LAYOUTS = frozenset({"coo", "csr", "csc", "bsr", "bsc", "sparse"})
COMPRESSED_LAYOUTS = frozenset({"csr", "csc", "bsr", "bsc"})

# Grad states of a tensor.
LEAF = "leaf"  # a leaf that requires grad (requires_grad=True, requires_grad_(), Parameter)
NONLEAF = "nonleaf"  # computed from something that requires grad: part of a graph
NOGRAD = "none"  # does not require grad

# Boolean fields that make a rule fire join with AND; those that silence one join with OR.
_SILENCING = frozenset({"retains_grad"})


@dataclass(frozen=True)
class Tensor:
    layout: Optional[str] = None
    coalesced: Optional[bool] = None
    grad: Optional[str] = None
    parameter: bool = False
    # Layout the tensor's future `.grad` will have ("coo", "strided", "mixed") and whether
    # that grad is coalesced.
    grad_layout: Optional[str] = None
    grad_coalesced: Optional[bool] = None
    origin: Optional[str] = None
    values_of_sparse: bool = False
    retains_grad: bool = False
    is_grad: bool = False
    # the backward of the op that made it needs a sparse incoming gradient (results of
    # torch.sparse.sum(dim=...), torch.sparse.softmax, torch.sparse.mm(sparse, sparse))
    needs_sparse_grad: bool = False
    shape: Optional[tuple] = None
    literal: Optional[tuple] = None
    # the sparse tensor whose `.values()` this is: the same storage, so an in-place write
    # here (`vals = s.values(); vals.mul_(2)`) is a write to `s.values()`
    values_of: Optional["Tensor"] = None
    # `_indices()` of an uncoalesced COO tensor: its entries, duplicates included
    uncoalesced_indices: bool = False
    # a COO tensor built on such indices: one entry for each of those duplicates
    repeats_duplicates: bool = False
    # an uncoalesced COO tensor built on written-out indices that are out of order or repeat
    # an entry: marking it coalesced without coalescing scrambles it
    scrambled: bool = False
    # how many dimensions it has, where that is known (a standard layer's parameter)
    rank: Optional[int] = None
    # the model whose parameter it is, taken out of its `parameters()` one by one: a list it
    # is put in rests on that model, which a later freeze or switch changes
    model: Optional[str] = field(default=None, compare=False)
    # a parameter of a public function whose own code admits this state for what callers
    # pass: (function, parameter, the test that admits it)
    admitted: Optional[tuple] = field(default=None, compare=False)
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)

    @property
    def is_sparse(self) -> bool:
        return self.layout in SPARSE_LAYOUTS

    @property
    def is_coo(self) -> bool:
        return self.layout == "coo"

    @property
    def is_compressed(self) -> bool:
        return self.layout in COMPRESSED_LAYOUTS

    @property
    def requires_grad(self) -> Optional[bool]:
        if self.grad is None:
            return None
        return self.grad in (LEAF, NONLEAF)

    def why(self, where, text: str) -> "Tensor":
        return replace(self, evidence=self.evidence + (Evidence.at(where, text),))


@dataclass(frozen=True)
class Module:
    """An `nn.Module` instance and what its parameters' gradients are."""

    kind: str
    flags: Flags = UNKNOWN
    # leaf parameter names -> flags, when every parameter name is known
    parts: Optional[tuple[tuple[str, Flags], ...]] = None
    mode: Optional[str] = None
    # the class of this project that made it ("<file>::<Name>"), whose methods can be followed
    cls: Optional[str] = None
    # facts of attributes that are not submodules (`self.adj = ...` in `__init__`)
    attrs: tuple[tuple[str, "Fact"], ...] = ()
    # parameter names that are one parameter (see `ties`); None: not known which are
    ties: Optional[tuple[tuple[str, ...], ...]] = ()
    # `parts` are in the order the modules holding them were set (what decides the name
    # `named_parameters()` gives a shared parameter)
    ordered: bool = False
    # (submodule path, torch class) of the torch layers it is made of, "" for itself when it
    # is one (`nn.Embedding`): what `isinstance(m, nn.Embedding)` tests
    layers: tuple[tuple[str, str], ...] = ()
    # (submodule path, "<file>::<Name>", its attributes that are not submodules) of the
    # submodules made by classes of the project: what a call of `self.conv1(x, adj)` in its
    # `forward` runs, and what that run reads of `self.normalize`
    classes: tuple[tuple[str, str, tuple], ...] = ()
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)
    # what `self.training` is: set by `model.train()` / `model.eval()` (None: not known)
    training: Optional[bool] = None

    def child(self, name: str) -> Optional["Module"]:
        if self.parts is None:
            return None
        prefix = name + "."
        sub = tuple((p[len(prefix):], f) for p, f in self.parts if p.startswith(prefix))
        if not sub and not any(p == name or p.startswith(prefix) for p, _, _ in self.classes) \
                and not any(p == name for p, _ in self.layers):
            # (a submodule of a project class, a container of them or a torch layer may hold
            # no parameter: it is still there)
            return None
        layers = tuple((p[len(prefix):] if p != name else "", c) for p, c in self.layers
                       if p == name or p.startswith(prefix))
        cls, attrs = next(((c, a) for p, c, a in self.classes if p == name), (None, ()))
        classes = tuple((p[len(prefix):], c, a) for p, c, a in self.classes if p.startswith(prefix))
        return Module(kind=name, flags=union_flags(f for _, f in sub), parts=sub, ties=ties.narrow(self.ties, name),
                      ordered=self.ordered, layers=layers, cls=cls, attrs=attrs, classes=classes, evidence=self.evidence,
                      training=self.training)

    def layer_class(self) -> Optional[str]:
        """The torch class it is an instance of, when it is a torch layer known as one."""
        return next((c for p, c in self.layers if p == ""), None)

    def submodules(self) -> Optional[tuple[str, ...]]:
        """The paths of the submodules holding its parameters, each before its own
        submodules (what `modules()` yields after the module itself); None when its
        parameters are not all known."""
        if self.parts is None:
            return None
        out: dict[str, None] = {}
        for name, _ in self.parts:
            pieces = name.split(".")[:-1]
            for i in range(1, len(pieces) + 1):
                out.setdefault(".".join(pieces[:i]))
        return tuple(out)

    def distinct_parts(self) -> Optional[tuple[tuple[str, Flags], ...]]:
        """The parameter names `parameters()` yields: a shared parameter once."""
        if self.ties and not self.ordered and any(
                sum(1 for n in g if not n.startswith("^")) > 1 for g in self.ties):
            return None  # which of its names torch gives it is not known
        return ties.distinct(self.parts, self.ties)


@dataclass(frozen=True)
class Params:
    """An iterable of parameters (`model.parameters()`, `[p, q]`, param groups)."""

    flags: Flags = UNKNOWN
    paths: tuple[str, ...] = ()
    named: bool = False
    parts: Optional[tuple[tuple[str, Flags], ...]] = None
    # param groups: (params, weight_decay of the group or None when it inherits the default)
    groups: Optional[tuple[tuple["Params", object], ...]] = None
    # a list written out or built by appends: the fact of each element, in order
    items: Optional[tuple[Optional["Fact"], ...]] = None
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)
    # the names of the models whose parameters these are (`model` of `model.parameters()`):
    # a finding about their gradients no longer holds once one of them is changed
    models: tuple[str, ...] = field(default=(), compare=False)
    # (submodule path, torch class) of the layers of the model whose `parameters()` these
    # are, paths relative to it as the part names are: what gives each part its rank
    layers: tuple[tuple[str, str], ...] = field(default=(), compare=False)


# the class of the `Instance` that `sys.argv[1:]` is: the program's own arguments
COMMAND_LINE = "sys.argv"


@dataclass(frozen=True)
class Optimizer:
    kind: str
    params: Optional[Params] = None
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)


def union_flags(items) -> Flags:
    out = None
    for f in items:
        out = f if out is None else out.union(f)
    return out if out is not None else NONE


def union_params(a: Params, b: Params) -> Params:
    parts = a.parts + b.parts if a.parts is not None and b.parts is not None else None
    groups = None
    if a.groups is not None or b.groups is not None:
        groups = (a.groups or ((a, None),)) + (b.groups or ((b, None),))
    items = a.items + b.items if a.items is not None and b.items is not None else None
    return Params(flags=a.flags.union(b.flags), paths=a.paths + b.paths if a.paths and b.paths else (),
                  parts=parts, groups=groups, items=items, evidence=tuple(dict.fromkeys(a.evidence + b.evidence)),
                  models=tuple(dict.fromkeys(a.models + b.models)))


@dataclass(frozen=True)
class Literal:
    """A literal tuple of numbers: a size such as `(3, 3)` or `torch.Size([2, 3])`."""

    value: tuple
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Scalar:
    """A Python number (`wd = 1e-4`): arithmetic with a tensor keeps the tensor's layout."""

    value: object = None
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Const:
    """A literal `True`, `False`, `None` or string held by a name (`sparse=True` passed on)."""

    value: object = None
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)
    # the option of an entry point this value is the default of, which callers may set to
    # another value (sparselint.analysis.options.Option)
    option: Optional[object] = field(default=None, compare=False)


@dataclass(frozen=True)
class Instance:
    """An object of a class of this file that is not an `nn.Module` (a trainer, a config)."""

    cls: str
    attrs: tuple[tuple[str, "Fact"], ...] = ()
    # every key of a dict, also those whose value is not known (`attrs` holds only known
    # ones): None when the keys are not all known
    keys: Optional[tuple[str, ...]] = None
    # a NamedTuple's fields in order: what unpacking it binds
    fields: Optional[tuple[str, ...]] = None
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)
    # a dict's keys and the nodes where they are written (`"adam": torch.optim.Adam`)
    written: Optional[tuple[tuple[str, object], ...]] = field(default=(), compare=False)
    # a dict an entry point's caller passes (`**overrides`): (the parameter that holds it,
    # the entry point)
    caller: Optional[tuple[str, str]] = field(default=None, compare=False)


@dataclass(frozen=True)
class Items:
    """A tuple, list or generator whose elements' facts are known by position (an element
    whose fact is not known is None): what unpacking, a `for` or a comprehension binds."""

    items: tuple[Optional["Fact"], ...]
    kind: str = "tuple"  # "tuple", "list" (mutable: edits make it unknown) or "generator"
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)
    # False: how many elements there are is not known (what a generator function yields in
    # a loop); `items` then holds one fact, true of every element
    counted: bool = True


@dataclass(frozen=True)
class Coroutine:
    """What calling an `async def` of the project gives: `await` of it gives `result`."""

    result: Optional["Fact"] = None
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Callee:
    """A callable held as a value: a torch class (`opt_cls = torch.optim.Adam`), a
    `functools.partial` of one, or a function or class of this file (`norm=gcn_norm`), or a
    method of a class of this file reached through an object or the class (`Factory().build`,
    target "Factory.build"), a nested function or a lambda (`node`, with the facts of the
    enclosing names it reads), a function or class of another module of the project (`file`),
    or a `functools.partial` of any of these (`args`, `kwargs`: the facts it binds first)."""

    target: str
    keywords: tuple[tuple[str, object], ...] = ()
    local: bool = False
    # what a method is bound to: the instance, the class for a classmethod (None: unbound or
    # a staticmethod)
    receiver: Optional["Fact"] = None
    # the `def` or `lambda` of a function that is not at module level (compared by identity)
    node: Optional[object] = None
    # enclosing names (and their attribute paths) the nested function or lambda reads
    closure: tuple[tuple[str, Optional["Fact"]], ...] = ()
    # the module that defines it, when that is not the file where the value is used
    file: str = ""
    args: tuple[Optional["Fact"], ...] = ()
    kwargs: tuple[tuple[str, Optional["Fact"]], ...] = ()
    # the function as its `def` wrote it, before its decorators applied (what a decorator
    # is given)
    bare: bool = False
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)

    @property
    def project(self) -> bool:
        """A callable of the project (its body can be analysed), not a torch class."""
        return self.local or self.node is not None or bool(self.file)


@dataclass(frozen=True)
class Choice:
    """One of the torch callables of a table, picked by a key the caller of this function
    chooses (`OPTIMIZERS[cfg["optimizer"]]`, the key not known here): the table offers each
    of them, so each is admitted. `options`: (key, the callable, where the key is written)."""

    options: tuple[tuple[str, "Callee", Optional[Evidence]], ...]
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)


Fact = Union[Tensor, Module, Params, Optimizer, Scalar, Literal, Const, Instance, Callee, Items, Coroutine, Choice]


def attr_of(attrs: tuple, name: str):
    for key, fact in attrs:
        if key == name:
            return fact
    return None


def join_all(facts) -> Optional[Fact]:
    """What every one of several values (the elements a loop binds in turn) agrees on."""
    out, first = None, True
    for f in facts:
        out, first = (f if first else join(out, f)), False
    return out


def with_evidence(fact, ev: Evidence):
    return replace(fact, evidence=fact.evidence + (ev,))


def _join_attrs(a: tuple, b: tuple) -> tuple:
    other = dict(b)
    out = []
    for key, fact in a:
        j = join(fact, other.get(key)) if key in other else None
        if j is not None:
            out.append((key, j))
    return tuple(out)


def join(a: Optional[Fact], b: Optional[Fact]) -> Optional[Fact]:
    if a is None or b is None or type(a) is not type(b):
        return None
    if a == b:
        return a if len(a.evidence) <= len(b.evidence) else b
    if isinstance(a, (Callee, Const)) or (isinstance(a, Instance) and a.cls != b.cls):
        return None  # two different values: a literal is known only when it is one value
    if isinstance(a, Items):
        if a.kind != b.kind or a.counted != b.counted or len(a.items) != len(b.items):
            return None
        return Items(tuple(join(x, y) for x, y in zip(a.items, b.items)), a.kind, a.evidence, a.counted)
    if isinstance(a, Coroutine):
        return Coroutine(join(a.result, b.result), a.evidence)
    changes = {}
    for f in fields(a):
        if f.name == "evidence":
            continue
        if f.name == "attrs":
            changes["attrs"] = _join_attrs(a.attrs, b.attrs)
            continue
        if f.name == "classes" and len(a.classes) == len(b.classes) and all(
                (p, c) == (q, d) for (p, c, _), (q, d, _) in zip(a.classes, b.classes)):
            # the same submodules, their attributes changed on one path (a sparse weight left
            # uncoalesced by a step)
            changes["classes"] = tuple((p, c, _join_attrs(x, y)) for (p, c, x), (_, _, y) in zip(a.classes, b.classes))
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if x == y:
            continue
        if f.type == "bool":
            changes[f.name] = (x or y) if f.name in _SILENCING else (x and y)
        elif isinstance(x, Flags) and isinstance(y, Flags):
            changes[f.name] = Flags(*(u if u == v else None for u, v in
                                      ((x.has_sparse, y.has_sparse), (x.has_dense, y.has_dense),
                                       (x.sparse_param, y.sparse_param))))
        else:
            changes[f.name] = () if f.type == "tuple[str, ...]" or f.name in ("layers", "classes") else None
    return replace(a, **changes)


def grad_layout_of(f: Flags) -> Optional[str]:
    """The layout of the gradients a set of parameters gets: "coo", "strided", "mixed"."""
    if f.has_sparse is True:
        return "coo" if f.has_dense is False else "mixed" if f.has_dense is True else None
    if f.has_sparse is False and f.has_dense is True:
        return "strided"
    return None


def element_of(params: Params, where) -> Tensor:
    """The fact for one parameter drawn from a parameter collection."""
    f = params.flags
    grad_layout = grad_layout_of(f)
    text = {"coo": "its parameters get sparse gradients",
            "mixed": "some of its parameters get sparse gradients"}.get(grad_layout or "", "")
    t = Tensor(
        layout="strided" if f.sparse_param is False and grad_layout else None,
        grad=LEAF,
        parameter=True,
        grad_layout=grad_layout,
        grad_coalesced=False if grad_layout == "coo" else None,
        evidence=params.evidence,
    )
    return t.why(where, f"iterates over a parameter collection: {text}") if text else t


def froze(old, new) -> bool:
    """`new` is `old` with some of its parameters frozen (they no longer get a gradient)."""
    if not isinstance(old, Module) or not isinstance(new, Module) or old.parts is None or new.parts is None:
        return False
    before = dict(old.parts)
    return any(f == NONE and before.get(n, NONE) != NONE for n, f in new.parts)
