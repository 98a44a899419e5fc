"""Plain objects of the standard library: `types.SimpleNamespace` / `argparse.Namespace`
objects, `collections.namedtuple` / functional `typing.NamedTuple` classes and their
instances, and the copies `dataclasses.replace` and `._replace` make.

An object's attributes are the facts of the values bound to them; an attribute whose value
is not known is absent from `attrs`, so reading it is unknown, never a default.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..facts import Callee, Fact, Instance
from .state import State

# Constructors whose keyword arguments become the attributes of the object they make.
NAMESPACES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})
# Factories of tuple classes with named fields.
TUPLE_FACTORIES = frozenset({"collections.namedtuple", "typing.NamedTuple"})
_CONTAINERS = ("dict", "list", "tuple")


class Objects:
    """Methods of `Inference` (sparselint.inference.expressions)."""

    def _object_call(self, q: str, node: cst.Call, state: State) -> Optional[Fact]:
        """The fact of a call to one of the standard library's object makers, or None when
        `q` is not one of them."""
        if q in NAMESPACES:
            return self._namespace(q, node, state)
        if q in TUPLE_FACTORIES:
            return self._tuple_class(q, node, state)
        if q == "dataclasses.replace":
            if not node.args or node.args[0].keyword is not None or node.args[0].star:
                return None
            return self._copy_with(self.fact(node.args[0].value, state), node.args[1:], state)
        return None

    def _namespace(self, q: str, node: cst.Call, state: State) -> Instance:
        """`SimpleNamespace(lr=0.1, adj=adj)`: each keyword written out is an attribute (a
        positional mapping or `**mapping` of unknown content adds others, not known, and
        cannot repeat a keyword written out: that raises)."""
        attrs: dict[str, Fact] = {}
        for a in node.args:
            if a.star == "**":
                mapping = self.fact(a.value, state)
                if isinstance(mapping, Instance) and mapping.cls == "dict" and mapping.keys is not None:
                    attrs.update(mapping.attrs)
            elif a.keyword is not None:
                fact = self.fact(a.value, state)
                if fact is not None:
                    attrs[a.keyword.value] = fact
                else:
                    attrs.pop(a.keyword.value, None)
        return Instance(cls=q, attrs=tuple(attrs.items()))

    def _tuple_class(self, q: str, node: cst.Call, state: State) -> Optional[Callee]:
        """`namedtuple("Pair", ["adj", "scale"], defaults=[1.0])` or `NamedTuple("Pair",
        [("adj", Tensor), ("scale", float)])`: the class, held as a callable that records
        its field names and the facts of its defaults (for the last fields)."""
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if len(positional) != 2 or any(a.star for a in node.args):
            return None
        typename = self.known_value(positional[0].value, state)
        names = self.known_value(positional[1].value, state)
        if not isinstance(typename, str):
            return None
        if q == "collections.namedtuple":
            if isinstance(names, str):
                names = tuple(names.replace(",", " ").split())
            if not isinstance(names, tuple) or not all(isinstance(n, str) and n.isidentifier() for n in names):
                return None
        else:
            spec = positional[1].value
            if not isinstance(spec, (cst.List, cst.Tuple)):
                return None
            names = []
            for el in spec.elements:
                if not isinstance(el.value, cst.Tuple) or len(el.value.elements) != 2:
                    return None
                name = self.known_value(el.value.elements[0].value, state)
                if not isinstance(name, str):
                    return None
                names.append(name)
            names = tuple(names)
        defaults: tuple = ()
        for a in node.args:
            if a.keyword is None:
                continue
            if a.keyword.value == "defaults" and q == "collections.namedtuple":
                value = a.value
                if not isinstance(value, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement)
                                                                      for e in value.elements):
                    return None
                defaults = tuple(self.fact(e.value, state) for e in value.elements)
                if len(defaults) > len(names):
                    return None
            elif a.keyword.value not in ("rename", "module"):
                return None
        return Callee(target=q, keywords=(("typename", typename), ("fields", names), ("defaults", defaults)))

    def _tuple_instance(self, cls: Callee, node: cst.Call, state: State) -> Optional[Instance]:
        """An instance of a class `_tuple_class` made: its fields bound by position, then by
        keyword, then from the defaults; None where the call would raise."""
        spec = dict(cls.keywords)
        names, defaults = spec["fields"], spec["defaults"]
        if any(a.star for a in node.args):
            return None
        positional = [a for a in node.args if a.keyword is None]
        if len(positional) > len(names):
            return None
        given = {n: a.value for n, a in zip(names, positional)}
        for a in node.args:
            if a.keyword is not None:
                if a.keyword.value not in names or a.keyword.value in given:
                    return None
                given[a.keyword.value] = a.value
        first_default = len(names) - len(defaults)
        attrs = []
        for i, n in enumerate(names):
            if n in given:
                fact = self.fact(given[n], state)
            elif i >= first_default:
                fact = defaults[i - first_default]
            else:
                return None  # a missing argument: the call raises
            if fact is not None:
                attrs.append((n, fact))
        return Instance(cls=f"{cls.target}:{spec['typename']}", attrs=tuple(attrs), fields=tuple(names))

    def _copy_with(self, base: Optional[Fact], args, state: State) -> Optional[Instance]:
        """A copy of an object with the keywords given replacing its fields
        (`dataclasses.replace(cfg, sparse=False)`, `pair._replace(adj=adj)`)."""
        if not isinstance(base, Instance) or base.cls in _CONTAINERS:
            return None
        attrs = dict(base.attrs)
        for a in args:
            if a.keyword is None or a.star:
                return None
            if base.fields is not None and a.keyword.value not in base.fields:
                return None  # not a field: the call raises
            fact = self.fact(a.value, state)
            if fact is None:
                attrs.pop(a.keyword.value, None)
            else:
                attrs[a.keyword.value] = fact
        return Instance(cls=base.cls, attrs=tuple(attrs.items()), fields=base.fields)

    def _held_class_call(self, node: cst.Call, state: State) -> Optional[Fact]:
        """A call of a value that `_tuple_class` made (`Pair(adj, 1.0)`), or `obj._replace(...)`
        on an instance of a tuple class."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "_replace":
            base = self.fact(func.value, state)
            if isinstance(base, Instance) and base.fields is not None:
                return self._copy_with(base, node.args, state)
            return None
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        held = self.fact(func, state)
        if isinstance(held, Callee) and not held.local and held.target in TUPLE_FACTORIES and held.keywords:
            return self._tuple_instance(held, node, state)
        return None


