"""Python values computed from known ones: comparisons, `not`, `and`/`or`, conditional
expressions, f-strings, pure `str` methods and `hasattr` with a literal name.

A value is known only when every operand it depends on is; anything else is unknown
(`_UNKNOWN`), never a default, so a branch is chosen only when the program surely takes it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst

from ..facts import NOGRAD, Const, Fact, Instance, Items, Literal, Module, Optimizer, Scalar, Tensor, attr_of, join
from ...torchops import torchapi as api
from ...cst.names import CANONICAL, dotted
from .state import State
from .containers import layers_of
from .values import _CONSTANTS, _UNKNOWN, literal

# `str` methods whose result depends only on the string and the arguments.
_PURE_STR_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace",
                               "casefold", "title", "capitalize", "removeprefix", "removesuffix", "isdigit",
                               "isalpha", "isalnum", "islower", "isupper"})
_MAX_STR = 200  # longer computed strings are not kept (a loop doubling a string stays bounded)
_MAX_ITEMS = 64  # nor longer computed collections
_SCALARS = (str, int, float, bool, type(None))
_CONTAINER_CLASSES = ("dict", "list", "tuple")
# builtins that copy a sequence into another kind of collection, as far as `in` can tell
_SEQUENCE_BUILTINS = {"set": frozenset, "frozenset": frozenset, "tuple": tuple, "list": tuple}


def _parameter_requires_grad(p: Tensor):
    """`p.requires_grad` of a model's parameter: True where the facts say what its gradient
    will be (`if not p.requires_grad: continue` keeps it), False where it was frozen to no
    gradient; unknown otherwise (a frozen part's element keeps no trace of the freeze)."""
    if p.grad_layout in ("coo", "strided"):
        return True
    return False if p.grad == NOGRAD else _UNKNOWN


def _asks_rank(node: cst.BaseExpression) -> bool:
    """`p.ndim`, `p.dim()`, `p.ndimension()`."""
    if type(node) is cst.Attribute:
        return node.attr.value == "ndim"
    return (type(node) is cst.Call and not node.args and type(node.func) is cst.Attribute
            and node.func.attr.value in ("dim", "ndimension"))


# operators a tensor applies element by element (`in`, `is` and their negations are Python's)
_ELEMENTWISE_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal,
                            cst.NotEqual)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass(frozen=True)
class Layout:
    """A `torch.layout` object (`torch.sparse_coo`, `t.layout` of a tensor whose layout is
    known): one object per layout, equal only to itself."""

    name: str


_LAYOUTS = {name: Layout(name) for name in set(api.LAYOUT_NAMES.values())}


def layout_value(name: Optional[str]):
    return _LAYOUTS.get(name or "", _UNKNOWN)


# objects whose truth is their size: an empty one is false
_SIZED = frozenset({"dict", "list", "tuple", "set", "frozenset", "collections.OrderedDict", "collections.defaultdict"})


def compare(op: cst.BaseCompOp, a, b):
    """`a <op> b` on known Python values, or _UNKNOWN where the value types leave it open
    (a tuple here may stand for a list: only membership is asked of it)."""
    if isinstance(a, Layout) or isinstance(b, Layout):
        if isinstance(op, (cst.In, cst.NotIn)):
            if not isinstance(b, (tuple, frozenset)):
                return _UNKNOWN
            return (a in b) == isinstance(op, cst.In)
        if isinstance(op, (cst.Equal, cst.Is)):
            return a == b
        if isinstance(op, (cst.NotEqual, cst.IsNot)):
            return a != b
        return _UNKNOWN
    if isinstance(op, (cst.In, cst.NotIn)):
        if isinstance(b, str) and isinstance(a, str):
            found = a in b
        elif isinstance(b, (tuple, frozenset)) and isinstance(a, _SCALARS):
            found = a in b
        else:
            return _UNKNOWN
        return found == isinstance(op, cst.In)
    if not (isinstance(a, _SCALARS) and isinstance(b, _SCALARS)):
        return _UNKNOWN
    if isinstance(op, (cst.Is, cst.IsNot)):
        # identity is defined by the language only for the singletons
        if a is None or b is None or (isinstance(a, bool) and isinstance(b, bool)):
            return (a is b) == isinstance(op, cst.Is)
        return _UNKNOWN
    if isinstance(op, cst.Equal):
        return a == b
    if isinstance(op, cst.NotEqual):
        return a != b
    ordered = (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str))
    if not ordered:
        return _UNKNOWN
    if isinstance(op, cst.LessThan):
        return a < b
    if isinstance(op, cst.LessThanEqual):
        return a <= b
    if isinstance(op, cst.GreaterThan):
        return a > b
    if isinstance(op, cst.GreaterThanEqual):
        return a >= b
    return _UNKNOWN


def _origin(fact) -> tuple:
    return fact.evidence if isinstance(fact, (Const, Scalar)) else ()


def value_fact(v) -> Optional[Fact]:
    """The fact that holds a computed Python value."""
    if _is_number(v):
        return Scalar(value=v)
    if isinstance(v, (bool, type(None))) or (isinstance(v, str) and len(v) <= _MAX_STR):
        return Const(value=v)
    if isinstance(v, (tuple, frozenset)) and len(v) <= _MAX_ITEMS and all(isinstance(x, _SCALARS) for x in v):
        return Const(value=v)  # (`set(names)`: a collection of known scalars)
    return None


_ARITHMETIC = {cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b}


class PythonValues:
    """Methods of `Inference` (sparselint.inference.expressions)."""

    def known_value(self, node: Optional[cst.BaseExpression], state: State):
        """The Python value of an expression when the facts decide it, else _UNKNOWN."""
        v = literal(node)
        if v is not _UNKNOWN or node is None:
            return v
        if _asks_rank(node):
            rank = self._rank(node.value if type(node) is cst.Attribute else node.func.value, state)
            if rank is not _UNKNOWN:
                return rank  # (else `cfg.ndim` of a config object, read as any attribute)
        if isinstance(node, cst.Name) and node.value in _CONSTANTS:
            return _UNKNOWN
        if isinstance(node, cst.Name) and node.value in getattr(self, "mutated", ()):
            held = self.fact(node, state)
            if isinstance(held, Const) and isinstance(held.value, (tuple, list)):
                return _UNKNOWN  # a list changed in place somewhere: its first value is not known to hold
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            values = tuple(self.known_value(el.value, state) if not isinstance(el, cst.StarredElement) else _UNKNOWN
                           for el in node.elements)
            return _UNKNOWN if _UNKNOWN in values else values
        if isinstance(node, cst.Attribute) and node.attr.value in ("layout", "is_sparse"):
            held = self.fact(node.value, state)
            if isinstance(held, Tensor) and held.layout in _LAYOUTS:
                return _LAYOUTS[held.layout] if node.attr.value == "layout" else held.layout == "coo"
        elif isinstance(node, cst.Attribute) and node.attr.value == "requires_grad":
            held = self.fact(node.value, state)
            if isinstance(held, Tensor) and held.parameter:
                return _parameter_requires_grad(held)
        elif isinstance(node, (cst.Name, cst.Attribute)):
            found = layout_value(api.LAYOUT_NAMES.get(self.names.qualify(node) or ""))
            if found is not _UNKNOWN:
                return found
        if isinstance(node, cst.BinaryOperation) and type(node.operator) in _ARITHMETIC:
            # `len(self.convs) - 1`: sums of numbers the facts decide
            a, b = self.known_value(node.left, state), self.known_value(node.right, state)
            if all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b)):
                return _ARITHMETIC[type(node.operator)](a, b)
        fact = self.fact(node, state)
        if isinstance(fact, Const) or (isinstance(fact, Scalar) and fact.value is not None):
            return fact.value
        return _UNKNOWN

    def _rank(self, node: cst.BaseExpression, state: State):
        """How many dimensions a tensor has, where its fact knows (a standard layer's
        parameter: `p.ndim < 2` splits the biases and norms from the weights and tables)."""
        held = self.fact(node, state)
        return held.rank if isinstance(held, Tensor) and held.rank is not None else _UNKNOWN

    def _truthiness(self, node: cst.BaseExpression, state: State) -> Optional[bool]:
        v = self.known_value(node, state)
        if v is _UNKNOWN or not isinstance(v, _SCALARS + (tuple,)):
            held = self.fact(node, state) if v is _UNKNOWN else None
            if isinstance(held, Instance) and held.cls not in _SIZED:
                return True  # an object of a class (a config the caller built): `cfg or Config()` is `cfg`
            return None
        return bool(v)

    def _sequence(self, node: cst.BaseExpression, state: State):
        """A known tuple or list, also a literal one held as data (a parameter's default `()`)."""
        v = self.known_value(node, state)
        if v is _UNKNOWN:
            held = self.fact(node, state)
            if isinstance(held, Literal):
                v = held.value
            elif isinstance(held, Items) and held.counted and all(
                    isinstance(x, Const) and isinstance(x.value, _SCALARS) for x in held.items):
                v = tuple(x.value for x in held.items)  # `[n for n, p in model.named_parameters() if ...]`
        return v if isinstance(v, (tuple, list, frozenset)) else _UNKNOWN

    def _members(self, node: cst.BaseExpression, state: State):
        """What `in` looks through: a known string or sequence, or the keys of a known dict."""
        v = self.known_value(node, state)
        if v is not _UNKNOWN:
            return v
        v = self._sequence(node, state)
        if v is not _UNKNOWN:
            return v
        fact = self.fact(node, state)
        if isinstance(fact, Instance) and fact.cls == "dict" and fact.keys is not None:
            return frozenset(fact.keys)
        return _UNKNOWN

    def comparison_value(self, node: cst.Comparison, state: State):
        """A comparison chain: each link needs both its operands known."""
        if (len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot))
                and isinstance(node.comparisons[0].comparator, cst.Name) and node.comparisons[0].comparator.value == "None"
                and isinstance(self.fact(node.left, state), (Instance, Module, Tensor, Optimizer))):
            # `if cfg is None:` with an object known to be there (a config the caller built)
            return isinstance(node.comparisons[0].operator, cst.IsNot)
        left = self.known_value(node.left, state)
        for target in node.comparisons:
            if left is _UNKNOWN:
                return _UNKNOWN
            membership = isinstance(target.operator, (cst.In, cst.NotIn))
            right = (self._members if membership else self.known_value)(target.comparator, state)
            if right is _UNKNOWN:
                return _UNKNOWN
            result = compare(target.operator, left, right)
            if result is not True:
                return result  # False ends the chain; _UNKNOWN leaves it open
            left = right
        return True

    def _evaluated(self, node: cst.BaseExpression, state: State) -> Optional[Fact]:
        """The fact of a conditional expression, `and`/`or`, a comparison, `not`, an f-string
        or a pure call on known values; None for any other node."""
        t = type(node)
        if t is cst.IfExp:
            decided = self.truth(node.test, state)
            if decided is not None:
                return self.fact(node.body if decided else node.orelse, state)
            # either branch may run: what both agree on, as after an `if` statement
            return join(self.fact(node.body, state), self.fact(node.orelse, state))
        if t is cst.BooleanOperation:
            first = self._truthiness(node.left, state)
            is_or = isinstance(node.operator, cst.Or)
            if first is not None:
                # `a or b` is `a` when `a` is true, else `b`; `a and b` the other way round
                return self.fact(node.left if first == is_or else node.right, state)
            return join(self.fact(node.left, state), self.fact(node.right, state))
        if t is cst.Comparison:
            made = value_fact(self.comparison_value(node, state))
            if made is None:
                return self._dense_mask(node, state)
            # where the compared values came from (a command-line option) is why the result holds
            evidence = tuple(e for part in (node.left, *(c.comparator for c in node.comparisons))
                             for e in _origin(self.fact(part, state)))
            return replace(made, evidence=evidence[:2]) if evidence else made
        if t is cst.UnaryOperation and isinstance(node.operator, cst.Not):
            inner = self._truthiness(node.expression, state)
            return Const(value=not inner) if inner is not None else None
        if t is cst.FormattedString:
            return value_fact(self._formatted(node, state))
        if t is cst.Call:
            return value_fact(self._pure_call(node, state))
        return None

    def _dense_mask(self, node: cst.Comparison, state: State) -> Optional[Tensor]:
        """`torch.rand(n, m) < density`: a dense tensor compared with a number or another
        dense tensor is a dense boolean mask, outside any graph. A sparse operand is left
        unknown (torch compares few sparse layouts, and not to a sparse result always)."""
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, _ELEMENTWISE_COMPARISONS):
            return None
        nodes = (node.left, node.comparisons[0].comparator)
        sides = tuple(self.fact(n, state) for n in nodes)
        tensors = [f for f in sides if isinstance(f, Tensor)]
        if not tensors or any(t.layout != "strided" for t in tensors):
            return None
        if len(tensors) == 1 and not any(isinstance(f, Scalar) or (f is None and self._number_like(n))
                                         for n, f in zip(nodes, sides)):
            return None
        return Tensor(layout="strided", grad=NOGRAD, origin="op")

    def _formatted(self, node: cst.FormattedString, state: State):
        out = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                out.append(part.value)
                continue
            if part.conversion is not None or part.format_spec is not None or part.equal is not None:
                return _UNKNOWN
            v = self.known_value(part.expression, state)
            if not isinstance(v, (str, int, bool)):
                return _UNKNOWN
            out.append(str(v))
        if any(c in node.start.lower() for c in "rb"):
            return _UNKNOWN  # raw and bytes prefixes change what the text means
        text = "".join(out)
        if "\\" in text or "{{" in text or "}}" in text:
            return _UNKNOWN  # escapes are not decoded here
        return text

    def _pure_call(self, node: cst.Call, state: State):
        """`name.lower()` and the other pure `str` methods on a known string, `hasattr(obj,
        "name")` where the attribute is known to be there."""
        if any(a.star or a.keyword is not None for a in node.args):
            return _UNKNOWN
        func = node.func
        if (isinstance(func, cst.Name) and func.value in _SEQUENCE_BUILTINS and len(node.args) <= 1
                and self._builtin(func.value, state)):
            # `set(no_weight_decay_list)` of a known sequence: what membership tests read
            elements = self._sequence(node.args[0].value, state) if node.args else ()
            return _UNKNOWN if elements is _UNKNOWN else _SEQUENCE_BUILTINS[func.value](elements)
        if isinstance(func, cst.Name) and func.value == "len" and len(node.args) == 1 and self._builtin("len", state):
            held = self.fact(node.args[0].value, state)
            layers = layers_of(held) if isinstance(held, Module) else None  # `len(self.convs)`
            if layers is not None:
                return len(layers)
            if isinstance(held, Items) and held.counted and held.kind in ("list", "tuple"):
                return len(held.items)
            elements = self._sequence(node.args[0].value, state)  # `len(field_dims)` of a known list
            return len(elements) if elements is not _UNKNOWN else _UNKNOWN
        if isinstance(func, cst.Attribute) and func.attr.value in _PURE_STR_METHODS:
            recv = self.known_value(func.value, state)
            if not isinstance(recv, str):
                return _UNKNOWN
            args = [self.known_value(a.value, state) for a in node.args]
            if any(not isinstance(a, (str, int, tuple)) or isinstance(a, bool) for a in args):
                return _UNKNOWN
            try:
                return getattr(recv, func.attr.value)(*args)
            except Exception:
                return _UNKNOWN  # a call that raises has no value
        if (isinstance(func, cst.Name) and func.value == "isinstance" and len(node.args) == 2
                and self._builtin("isinstance", state)
                and self.names.qualify(node.args[1].value) in ("torch.Tensor", "torch.nn.Parameter")):
            held = self.fact(node.args[0].value, state)
            if isinstance(held, Tensor):
                # a tensor fact is a tensor; a parameter only when it is one
                return True if self.names.qualify(node.args[1].value) == "torch.Tensor" or held.parameter else _UNKNOWN
            if isinstance(held, (Const, Scalar)):
                return False  # a Python literal is no tensor
            return _UNKNOWN
        if (isinstance(func, cst.Name) and func.value in ("any", "all") and len(node.args) == 1
                and self._builtin(func.value, state)):
            return self._any_all(func.value, node.args[0].value, state)
        if (isinstance(func, cst.Name) and func.value == "isinstance" and len(node.args) == 2
                and self._builtin("isinstance", state)):
            held = self.fact(node.args[0].value, state)
            if isinstance(held, Module):
                classes = node.args[1].value
                named = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
                verdicts = {_is_layer(held, CANONICAL.get(q, q) if q else None)
                            for q in (self.names.qualify(c) for c in named)}
                return True if True in verdicts else False if verdicts == {False} else _UNKNOWN
        if (isinstance(func, cst.Name) and func.value == "hasattr" and len(node.args) == 2
                and self._builtin("hasattr", state)):
            name = self.known_value(node.args[1].value, state)
            if isinstance(name, str) and self._has_attribute(node.args[0].value, name, state):
                return True
            # absence is never proved: an object may get attributes the facts do not record
        return _UNKNOWN

    def _any_all(self, which: str, arg: cst.BaseExpression, state: State):
        """`any(tag in name for tag in NO_DECAY)` over a known sequence: each element's test
        evaluated with the element bound; one test decides it (`any` a true one, `all` a false
        one) even where others are not known."""
        if not isinstance(arg, (cst.GeneratorExp, cst.ListComp)) or arg.for_in.inner_for_in is not None \
                or arg.for_in.ifs or arg.for_in.asynchronous is not None:
            return _UNKNOWN
        elements = self.known_value(arg.for_in.iter, state)
        if not isinstance(elements, (tuple, list)) or len(elements) > 64:
            return _UNKNOWN
        deciding = which == "any"
        verdict = not deciding
        for element in elements:
            scratch = self._scratch(state)
            self._bind(arg.for_in.target, Const(value=element), scratch, None)
            v = self.known_value(arg.elt, scratch)
            if v is _UNKNOWN or not isinstance(v, (bool, int, float, str, type(None))):
                verdict = _UNKNOWN
            elif bool(v) == deciding:
                return deciding
        return verdict

    def _builtin(self, name: str, state: State) -> bool:
        """The name means the builtin: not rebound in the scope or the module."""
        return name not in self.project_names and name not in self.locals and self.lookup(name, state) is None

    def _has_attribute(self, obj: cst.BaseExpression, name: str, state: State) -> bool:
        path = dotted(obj)
        if path is not None and self.lookup(f"{path}.{name}", state) is not None:
            return True
        fact = self.fact(obj, state)
        if (isinstance(fact, (Instance, Module)) and getattr(self, "calls", None) is not None
                and self.calls.defines(fact, name)):
            return True
        if isinstance(fact, Instance) and fact.cls not in _CONTAINER_CLASSES:
            return attr_of(fact.attrs, name) is not None
        if isinstance(fact, Module):
            return (attr_of(fact.attrs, name) is not None or fact.child(name) is not None
                    or any(p == name for p, _ in fact.parts or ()))
        return False


# torch layers no other torch class derives from, and that derive from no torch class but
# `nn.Module`: one is an instance of another only when they are the same
_LEAF_LAYERS = frozenset({"torch.nn.Embedding", "torch.nn.EmbeddingBag"})


def _is_layer(module: Module, q: Optional[str]):
    """Whether a module is an instance of the torch class `q`; _UNKNOWN when that cannot
    be told (a class of the project may derive from the layer)."""
    if q == "torch.nn.Module":
        return True
    own = module.layer_class()
    if q is None or own is None:
        return _UNKNOWN
    if own == q:
        return True
    return False if own in _LEAF_LAYERS or q in _LEAF_LAYERS else _UNKNOWN
