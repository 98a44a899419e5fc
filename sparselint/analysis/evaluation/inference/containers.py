"""Parameter collections: lists, chains, comprehensions filtered on names or grads,
param-group dicts, config dicts, and nn.Sequential / ModuleList / ModuleDict members."""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from typing import Optional

import libcst as cst

from ....diagnostics import Evidence
from ...options import Option, as_option
from ..facts import (LEAF, NOGRAD, Const, Fact, Instance, Items, Literal, Module, Optimizer, Params, Scalar, Tensor, attr_of,
                     grad_layout_of, join, join_all, union_flags, union_params)
from .. import ties
from ..gradflags import DENSE, NONE, SPARSE, Flags
from ...cst.names import dotted
from ...torchops import torchapi as api
from .values import _UNKNOWN, ABSENT, literal
from .state import State


class ContainerFacts:
    """Methods of `Inference` (sparselint.inference.expressions)."""

    def _strings(self, node: cst.BaseExpression, state: State) -> Optional[tuple]:
        """A literal list or tuple of strings, written out or held by a name."""
        if isinstance(node, (cst.List, cst.Tuple)):
            out = tuple(literal(el.value) for el in node.elements)
            return out if all(isinstance(v, str) for v in out) else None
        fact = self.fact(node, state)
        if isinstance(fact, Const) and isinstance(fact.value, tuple):
            return fact.value
        return None

    def _dict(self, node: cst.Dict, state: State) -> Optional[Instance]:
        """A config dict with literal keys: `cfg["sparse"]` reads the value's fact. `**other`
        merges another dict in, a later key replacing an earlier one; what may replace a
        key that is not known (a mapping or a key that cannot be read) leaves it unknown."""
        merged = _Merged()
        for el in node.elements:
            if isinstance(el, cst.StarredDictElement):
                merged.add(*self._mapping_layer(el.value, state), replaces=True)
                continue
            key = literal(el.key)
            if not isinstance(key, str):
                merged.add({}, False, replaces=True)
                continue
            merged.add({key: self.fact(el.value, state)}, True, replaces=True,
                       written={key: Evidence.at(el.key, "")})
        return merged.instance()

    def _dict_call(self, node: cst.Call, state: State) -> Optional[Instance]:
        """`dict(lr=0.1, weight_decay=1e-4)`, `dict(base, sparse=True)`, `dict(sparse=True,
        **other)`: a config dict. Keywords cannot collide (the call would raise), so one
        `**mapping` that cannot be read leaves the keywords written beside it known; it may
        replace the keys of the positional mapping."""
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if len(positional) > 1 or any(a.star == "*" for a in node.args):
            return None
        keywords = _Merged()
        for a in node.args:
            if a.star == "**":
                keywords.add(*self._mapping_layer(a.value, state), replaces=False)
            elif a.keyword is not None:
                keywords.add({a.keyword.value: self.fact(a.value, state)}, True, replaces=False,
                             written={a.keyword.value: Evidence.at(a.keyword, "")})
        merged = _Merged()
        if positional:
            merged.add(*self._mapping_layer(positional[0].value, state), replaces=True)
        merged.add(keywords.facts, keywords.complete, replaces=True, written=keywords.written, caller=keywords.caller)
        return merged.instance()

    def merged_into(self, held: Instance, node: cst.BaseExpression, state: State) -> Instance:
        """A dict after `held.update(node)`: the mapping's keys replace those it holds."""
        merged = _Merged()
        merged.add(*_layer(held), replaces=True)
        merged.add(*self._mapping_layer(node, state), replaces=True)
        return merged.instance()

    def _mapping_layer(self, node: cst.BaseExpression, state: State) -> tuple:
        """(key -> fact of the keys a mapping surely holds, whether it holds no other, where
        its keys are written, the caller that passes it)."""
        fact = self.fact(node, state)
        if isinstance(fact, Items) and fact.counted:
            # `OrderedDict((name, nn.EmbeddingBag(n, d)) for name, n, d in tables)`: pairs
            # whose keys are all known strings
            held = [elements_of_pair(p) for p in fact.items]
            if all(h is not None for h in held):
                return dict(held), True, {}, None
        if not isinstance(fact, Instance) or fact.cls != "dict":
            return {}, False
        return _layer(fact)

    def unpacked(self, call: cst.Call, keyword: str, state: State):
        """The Python value a `**mapping` argument passes for a keyword (`SGD(params, **cfg)`
        with `cfg = {"weight_decay": 1e-4}`): ABSENT when no mapping passes it, _UNKNOWN when
        a mapping that may hold it, or its value, is not known."""
        out = ABSENT
        for a in call.args:
            if a.star != "**":
                continue
            mapping = self.fact(a.value, state)
            if not isinstance(mapping, Instance) or mapping.cls != "dict":
                return _UNKNOWN
            if mapping.keys is None and attr_of(mapping.attrs, keyword) is None:
                return _UNKNOWN  # among the keys it may hold that are not known
            if mapping.keys is None or keyword in mapping.keys:
                held = attr_of(mapping.attrs, keyword)
                out = held.value if isinstance(held, (Const, Scalar)) and (
                    held.value is not None or isinstance(held, Const)) else _UNKNOWN
        return out

    def argument(self, call: cst.Call, keyword: str, position: Optional[int], state: State):
        """The Python value a call passes for a parameter of a library function, bound by
        Python's rules: by keyword, at its position (also through a `*seq` whose elements are
        known) or from a `**mapping`. ABSENT when nothing passes it (it has its default),
        _UNKNOWN when something that may pass it cannot be read."""
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return self.value(a.value, state)
        if position is not None:
            seen = 0
            for a in call.args:
                if a.keyword is not None or a.star == "**":
                    continue
                if a.star == "*":
                    items = self.items_of(a.value, state)
                    if items is None:
                        return _UNKNOWN  # its length is not known: it may reach the position
                    if seen + len(items) > position:
                        held = items[position - seen]
                        return held.value if isinstance(held, (Const, Scalar)) and (
                            held.value is not None or isinstance(held, Const)) else _UNKNOWN
                    seen += len(items)
                    continue
                if seen == position:
                    return self.value(a.value, state)
                seen += 1
        return self.unpacked(call, keyword, state)

    def _collection(self, node, state: State) -> Optional[Fact]:
        """`(3, 3)`, `[p, q]`, `[*a.parameters(), *b.parameters()]`, param-group dicts, or
        any other list or tuple whose elements are known one by one."""
        data = self._literal_data(node)
        if data is not None:
            return Literal(data)
        words = self._strings(node, state) if node.elements else None
        if words is not None:
            return Const(value=words)
        params = self._param_collection(node, state)
        if params is not None:
            return params
        items = self._display_items(node, state)
        return sequence_of("tuple" if isinstance(node, cst.Tuple) else "list", items) if items is not None else None

    def _display_items(self, node, state: State) -> Optional[tuple]:
        """The element facts of a list or tuple display, through starred elements whose
        length is known (`[*rest, x]`); None when its length is not known."""
        out: list = []
        for el in node.elements:
            if isinstance(el, cst.StarredElement):
                inner = (self._display_items(el.value, state) if isinstance(el.value, (cst.List, cst.Tuple))
                         else sequence_items(self.fact(el.value, state)))
                if inner is None:
                    return None
                out.extend(inner)
            else:
                out.append(self.fact(el.value, state))
            if len(out) > _MAX_ITEMS:
                return None
        return tuple(out)

    def items_of(self, node: cst.BaseExpression, state: State) -> Optional[tuple]:
        """The element facts of an iterable whose length is known, written out or held."""
        if isinstance(node, (cst.List, cst.Tuple)):
            return self._display_items(node, state)
        return sequence_items(self.fact(node, state))

    def _item(self, base, node: cst.Subscript, state: State) -> Optional[Fact]:
        """`items[1]`, `items[-1]`, `items[1:]` of a sequence whose elements are known."""
        if len(node.slice) != 1:
            return None
        sl = node.slice[0].slice
        if isinstance(base, Items) and not base.counted and base.kind in _SEQUENCES:
            # a list of what a generator gave: any element that exists is what every one is
            if isinstance(sl, cst.Index):
                return base.items[0] if (_is_int(self.known_value(sl.value, state))
                                         or isinstance(self.fact(sl.value, state), Scalar)) else None
            return base
        if isinstance(sl, cst.Index):
            i = self.known_value(sl.value, state)
            if isinstance(base, Module):
                return stored_module(base, i)
            if _is_int(i):
                return element_at(base, i)
            return self._any_element(base, sl.value, state)
        items = sequence_items(base)
        if items is None and not isinstance(base, Module):
            return None
        bounds = [self.known_value(b, state) if b is not None else None for b in (sl.lower, sl.upper, sl.step)]
        if any(b is not None and not _is_int(b) for b in bounds) or bounds[2] == 0:
            return None
        if isinstance(base, Module):
            return sliced_layers(base, bounds)
        return sequence_of(base.kind if isinstance(base, Items) else "list", items[slice(*bounds)])

    def _any_element(self, base, index: cst.BaseExpression, state: State) -> Optional[Fact]:
        """`adjs[r]` with `r` a number not known: the tensor every element of a list of
        alike tensors written out is, else not known."""
        if not (isinstance(base, Items) and base.counted and base.kind in _SEQUENCES and base.items):
            return None
        if not isinstance(self.fact(index, state), Scalar):
            return None
        every = join_all(base.items)
        return every if isinstance(every, Tensor) and every.layout is not None else None

    def _container_call(self, node: cst.Call, state: State) -> Optional[Fact]:
        """`cfg.get("k")` / `cfg.get("k", default)` (or `pop`) on a dict whose keys are known;
        `cfg.copy()`, a dict holding the same."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not node.args:
            recv = self.fact(func.value, state)
            return recv if isinstance(recv, Instance) and recv.cls == "dict" else None
        if (not isinstance(func, cst.Attribute) or func.attr.value not in ("get", "pop") or not 1 <= len(node.args) <= 2
                or any(a.star or a.keyword is not None for a in node.args)):
            return None
        recv = self.fact(func.value, state)
        if not isinstance(recv, Instance) or recv.cls != "dict":
            return None
        key = self.known_value(node.args[0].value, state)
        if not isinstance(key, str):
            return None
        held = self.looked_up(recv, self.fact(node.args[0].value, state), key)
        if held is not None:
            return held
        if recv.keys is not None and key not in recv.keys:
            if func.attr.value == "pop" and len(node.args) == 1:
                return None  # `pop` of a missing key without a default raises
            default = self.fact(node.args[1].value, state) if len(node.args) == 2 else Const(value=None)
            if recv.caller is not None and len(node.args) == 2:
                # a key the caller did not give here: its default is an option
                param, function = recv.caller
                default = as_option(default, Option(param, key, function), Evidence.at(node.args[1].value, ""))
            return default
        return None

    def _param_collection(self, node, state: State) -> Optional[Params]:
        out: Optional[Params] = None
        facts: list = []
        for el in node.elements:
            if isinstance(el.value, cst.Dict):
                part = self._param_group(el.value, state)
                facts = None
            else:
                fact = self.fact(el.value, state)
                if isinstance(el, cst.StarredElement):
                    part = fact if isinstance(fact, Params) else None
                    facts = facts + list(part.items) if facts is not None and part is not None and part.items is not None else None
                elif is_parameter(fact):
                    part = params_of_tensor(fact, dotted(el.value))
                    if facts is not None:
                        facts.append(fact)
                else:
                    part = None
            if part is None:
                return None
            out = part if out is None else union_params(out, part)
        if out is not None and facts is not None:
            out = replace(out, items=tuple(facts))  # `[p, q][0]` is `p`
        return out

    def _range(self, node: cst.BaseExpression, state: State) -> Optional[tuple]:
        """`range(n_layer)` with its bounds known, in a comprehension (`nn.ModuleList([Block(cfg)
        for _ in range(cfg.n_layer)])`): each number in turn."""
        if not (type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "range"
                and 1 <= len(node.args) <= 2 and not any(a.star or a.keyword for a in node.args)
                and self.builtin("range", state)):
            return None
        bounds = [self.value(a.value, state) for a in node.args]
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            return None
        numbers = range(*bounds)
        return tuple(Scalar(value=i) for i in numbers) if len(numbers) <= _MAX_COMPREHENDED else None

    def _scratch(self, state: State) -> State:
        """A copy of the state to bind a comprehension's target in, kept alive for as long as
        the facts memoised against it (the memo is keyed by the state's identity)."""
        out = state.copy()
        memo = getattr(self, "_memo", None)
        if memo is not None:
            memo.setdefault("scratch", []).append(out)
        return out

    def comprehension_states(self, node, state: State) -> Optional[tuple[list, bool]]:
        """The states a comprehension's element is evaluated in, one per element it keeps,
        in order, and whether they are counted (one state stands for every element of an
        iterable whose length is not known); None where they are not known."""
        states = [state]
        comp = node.for_in
        counted = True
        while comp is not None:
            if comp.asynchronous is not None:
                return None
            nxt = []
            for s in states:
                elements = self.iterated(comp.iter, s)
                if elements is None:
                    elements = self._range(comp.iter, s)
                if elements is None:
                    # an iterable whose length is not known (a generator function's): the
                    # result holds one fact, true of every element; a filter only drops some
                    every = self.every_element(comp.iter, s)
                    if every is None:
                        return None
                    inner = self._scratch(s)
                    self._bind(comp.target, every, inner, None)
                    nxt.append(inner)
                    counted = False
                    continue
                for e in elements:
                    inner = self._scratch(s)
                    self._bind(comp.target, e, inner, None)
                    kept = [self.truth(c.test, inner) for c in comp.ifs]
                    if None in kept:
                        if not counted:
                            nxt.append(inner)
                            continue
                        return None
                    if all(kept):
                        nxt.append(inner)
            states = nxt
            if len(states) > _MAX_COMPREHENDED:
                return None
            comp = comp.inner_for_in
        return states, counted

    def _comprehended(self, node, state: State) -> Optional[Fact]:
        """`[f(t) for t in [a, b]]`, `{k: t for k, t in pairs}`, `(t for t in xs)` over
        elements that are all known: the list, dict or generator of what each one gives."""
        found = self.comprehension_states(node, state)
        if found is None:
            return None
        states, counted = found
        if isinstance(node, cst.DictComp):
            if not counted:
                return None  # which keys it holds is not known
            attrs, keys = [], []
            for s in states:
                key = self.value(node.key, s)
                if not isinstance(key, str):
                    return None
                fact = self.fact(node.value, s)
                attrs = [(k, v) for k, v in attrs if k != key] + ([(key, fact)] if fact is not None else [])
                keys = [k for k in keys if k != key] + [key]
            return Instance(cls="dict", attrs=tuple(attrs), keys=tuple(keys))
        facts = tuple(self.fact(node.elt, s) for s in states)
        if not counted:
            every = join_all(facts)
            if every is None or not states:
                return None
            facts = (every,)
        if isinstance(node, cst.ListComp) and counted and facts and all(is_parameter(f) for f in facts):
            # `[p for n, p in param_dict.items() if p.dim() >= 2]`: parameters, one by one
            return replace(reduce(union_params, (params_of_tensor(f, None) for f in facts)), items=facts)
        if isinstance(node, cst.ListComp):
            return Items(facts, "list", counted=counted)
        return Items(facts, "generator", counted=counted) if isinstance(node, cst.GeneratorExp) else None

    def _param_group(self, node: cst.Dict, state: State) -> Optional[Params]:
        params, decay = None, None
        for el in node.elements:
            if not isinstance(el, cst.DictElement):
                return None
            key = literal(el.key)
            if key == "params":
                fact = self.fact(el.value, state)
                if isinstance(fact, Tensor) and fact.parameter:
                    fact = params_of_tensor(fact, dotted(el.value))
                params = fact if isinstance(fact, Params) else None
            elif key == "weight_decay":
                decay = self.value(el.value, state)
        if params is None:
            return None
        return Params(flags=params.flags, paths=params.paths, parts=params.parts,
                      groups=((params, decay),), evidence=params.evidence, models=params.models)

    def _comprehension(self, node, state: State) -> Optional[Params]:
        """`[p for n, p in model.named_parameters() if "emb" in n]` and similar filters."""
        if node.for_in.inner_for_in is not None:
            return self._flattened(node, state)
        source = self.fact(node.for_in.iter, state)
        if not isinstance(source, Params):
            return None
        target = node.for_in.target
        name_var = param_var = None
        if isinstance(target, cst.Tuple) and len(target.elements) == 2 and source.named:
            name_var, param_var = (dotted(e.value) for e in target.elements)
        else:
            param_var = dotted(target)
        if param_var is None or dotted(node.elt) != param_var:
            return None
        ifs = node.for_in.ifs
        if not ifs:
            return replace(source, named=False)
        keep = _filter(ifs[0].test, name_var, param_var, lambda e: self._strings(e, state)) if len(ifs) == 1 else None
        if keep is None:
            return self._filtered_parts(node, source, state) or _subset(source)
        kind, value = keep
        if kind == "grad-sparse":
            f = source.flags
            flags = Flags(f.has_sparse if value else False, False if value else f.has_dense, f.sparse_param)
            return Params(flags=flags, evidence=source.evidence)
        if kind == "requires-grad":
            return replace(source, named=False)
        if source.parts is None:
            return _subset(source)
        chosen = tuple((n, f) for n, f in source.parts if value(n))
        return Params(flags=union_flags(f for _, f in chosen), parts=chosen, evidence=source.evidence,
                      layers=source.layers, models=source.models)

    def _filtered_parts(self, node, source: Params, state: State) -> Optional[Params]:
        """A filter of a model's parameters known by name (`if p.is_sparse`, `if not
        any(t in n for t in NO_DECAY)`), decided for each parameter on its own facts; None
        when a test is not decided for one of them."""
        from .effects import elements_of  # (effects builds on this module)
        elements = elements_of(source) if source.parts is not None and source.groups is None else None
        if elements is None:
            return None
        chosen = []
        for part, element in zip(source.parts, elements):
            inner = self._scratch(state)
            self._bind(node.for_in.target, element, inner, None)
            kept = [self.truth(c.test, inner) for c in node.for_in.ifs]
            if None in kept:
                return None
            if all(kept):
                chosen.append(part)
        return Params(flags=union_flags(f for _, f in chosen), parts=tuple(chosen), evidence=source.evidence,
                      layers=source.layers, models=source.models)

    def _flattened(self, node, state: State) -> Optional[Params]:
        """`[p for g in opt.param_groups for p in g["params"]]`: the parameters of every
        element of the outer iterable, each read with the outer target bound to it."""
        outer, inner = node.for_in, node.for_in.inner_for_in
        if inner.inner_for_in is not None or outer.ifs or inner.ifs:
            return None
        elt = dotted(node.elt)
        if elt is None or elt != dotted(inner.target):
            return None
        elements = self.iterated(outer.iter, state)
        if elements is None:
            every = self.every_element(outer.iter, state)
            elements = (every,) if every is not None else None
        if not elements:
            return None
        found = []
        for element in elements:
            bound = state.copy()
            self._bind(outer.target, element, bound, None)
            held = self.fact(inner.iter, bound)
            if not isinstance(held, Params):
                return None
            found.append(held)
        return Params(flags=union_flags(f.flags for f in found), evidence=tuple(e for f in found for e in f.evidence))

    def _built_container(self, q: str, inner: cst.BaseExpression, state: State) -> Optional[Module]:
        """`nn.ModuleDict({k: nn.Embedding(n, d) for k, n in sizes.items()})`, or a list or
        dict built before: by name when the code that built it is known element by element,
        else the one kind of module every element is (its parameter names not known)."""
        kind = q.split(".")[-1]
        named = _modules_held(q, self.fact(inner, state))
        if named and all(isinstance(m, Module) and m.parts == () and m.cls for _, m in named):
            # project layers without parameters: nothing to name, and a loop over them meets
            # one of their class (below) as it does where how many is not known
            named = None
        if named is not None:
            parts: list[tuple[str, Flags]] = []
            evidence: tuple = ()
            for key, m in named:
                if not isinstance(m, Module) or m.parts is None:
                    return None
                parts.extend((f"{key}.{p}" if p else key, f) for p, f in m.parts)
                evidence += m.evidence
            return Module(kind=kind, flags=union_flags(f for _, f in parts), parts=tuple(parts),
                          **_children_ties(named), layers=_layers(q, named), classes=_classes(named), evidence=evidence)
        held = self.fact(inner, state)
        if q in SEQUENCE_CONTAINERS and isinstance(held, Items) and held.kind == "list" and not held.counted and (
                isinstance(held.items[0], Module)):
            return every_container(q, held.items[0])  # a list of layers built by a loop
        if not isinstance(inner, (cst.ListComp, cst.GeneratorExp, cst.DictComp)):
            return None
        scratch = self._scratch(state)
        comp = inner.for_in
        while comp is not None:
            self._bind(comp.target, None, scratch, None)
            comp = comp.inner_for_in
        every = self.fact(inner.value if isinstance(inner, cst.DictComp) else inner.elt, scratch)
        if not isinstance(every, Module):
            return None
        # (`nn.ModuleList(Layer(d, d) for _ in range(n))`: how many is not known, but a loop
        # over it meets a layer of that class, whose `forward` a call of it runs)
        element = ((EVERY, every.cls, every.attrs),) if every.cls and not isinstance(inner, cst.DictComp) else ()
        return Module(kind=kind, flags=every.flags, parts=None, layers=(("", q),), classes=element,
                      evidence=every.evidence)

    def _spread_sequential(self, q: str, node: cst.Call, state: State) -> Optional[Module]:
        """`nn.Sequential(*blocks, nn.Linear(d, 1))`: every layer known, one by one."""
        held: list = []
        for a in node.args:
            fact = self.fact(a.value, state)
            if not a.star:
                held.append(fact)
            elif isinstance(fact, Items) and fact.counted and fact.kind in ("list", "tuple"):
                held.extend(fact.items)
            else:
                return None
        if not all(isinstance(m, Module) and m.parts is not None for m in held):
            return None
        return sequence_container(q, [(str(i), m) for i, m in enumerate(held)])

    def _container(self, q: str, node: cst.Call, state: State) -> Optional[Module]:
        """`nn.Sequential(a, b)`, `nn.ModuleList([a, b])`, `nn.ModuleDict({"a": a})`."""
        items: list[tuple[str, cst.BaseExpression]] = []
        if q.endswith("Sequential"):
            if any(a.keyword or a.star == "**" for a in node.args):
                return None
            if len(node.args) == 1 and node.args[0].star == "*":
                # `nn.Sequential(*layers)` of a list built before, also by a loop
                return self._built_container(q, node.args[0].value, state)
            if any(a.star for a in node.args):
                return self._spread_sequential(q, node, state)
            items = [(str(i), a.value) for i, a in enumerate(node.args)]
        elif node.args:
            inner = node.args[0].value
            if isinstance(inner, (cst.List, cst.Tuple)) and q.endswith("ModuleList"):
                items = [(str(i), el.value) for i, el in enumerate(inner.elements) if not isinstance(el, cst.StarredElement)]
                if len(items) != len(inner.elements):
                    return None
            elif isinstance(inner, cst.Dict) and q.endswith("ModuleDict"):
                for el in inner.elements:
                    key = literal(el.key) if isinstance(el, cst.DictElement) else None
                    if not isinstance(key, str):
                        return None
                    items.append((key, el.value))
            else:
                return self._built_container(q, inner, state)
        parts: list[tuple[str, Flags]] = []
        evidence: tuple = ()
        flags, named = NONE, True
        held = []
        for key, expr in items:
            m = self.fact(expr, state)
            if not isinstance(m, Module):
                return None
            held.append((key, m))
            flags = flags.union(m.flags)
            if m.parts is None:
                named = False  # a layer whose parameter names are not known
            else:
                parts.extend((f"{key}.{p}" if p else key, f) for p, f in m.parts)
            evidence += m.evidence
        return Module(kind=q.split(".")[-1], flags=flags, parts=tuple(parts) if named else None,
                      **_children_ties(held), layers=_layers(q, held), classes=_classes(held) if named else (),
                      evidence=evidence)


def _layers(q: str, children) -> tuple[tuple[str, str], ...]:
    """The torch layers of a container of these (name, module) children, itself first."""
    return (("", q), *((f"{key}.{p}" if p else key, c) for key, m in children for p, c in m.layers))


# the path `Module.classes` gives the class of every element of a container whose elements
# are not known one by one
EVERY = "*"
SEQUENCE_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})


def layers_of(fact: Module) -> Optional[tuple]:
    """The layers of a ModuleList or Sequential in order, when every one of them is known by
    its index."""
    if fact.layer_class() not in SEQUENCE_CONTAINERS or fact.parts is None:
        return None
    keys = {p for p, _ in fact.layers if p and "." not in p} | {p for p, _, _ in fact.classes if "." not in p}
    if not keys or not all(k.isdigit() for k in keys) or sorted(map(int, keys)) != list(range(len(keys))):
        return None
    children = tuple(fact.child(str(i)) for i in range(len(keys)))
    return children if all(c is not None for c in children) else None


def every_layer(fact: Module) -> Optional[Module]:
    """What every layer of `nn.ModuleList(Layer(d, d) for _ in range(n))` is: one of that
    class, how many not known."""
    if fact.parts is not None or fact.layer_class() not in SEQUENCE_CONTAINERS:
        return None
    cls, attrs = next(((c, a) for p, c, a in fact.classes if p == EVERY), (None, ()))
    if cls is None:
        return None
    return Module(kind=cls.rsplit("::", 1)[-1], flags=fact.flags, parts=None, cls=cls, attrs=attrs, evidence=fact.evidence)


def sliced_layers(fact: Module, bounds: list) -> Optional[Module]:
    """`self.convs[:-1]`: a ModuleList of those of its layers (of the same class, when only
    that is known of them)."""
    if fact.layer_class() not in SEQUENCE_CONTAINERS:
        return None
    if fact.parts is None:
        return fact if any(p == EVERY for p, _, _ in fact.classes) else None
    children = layers_of(fact)
    if children is None:
        return None
    held = list(enumerate(children[slice(*bounds)]))
    parts = tuple((f"{i}.{p}" if p else str(i), f) for i, m in held for p, f in m.parts)
    return Module(kind=fact.kind, flags=union_flags(f for _, f in parts), parts=parts,
                  layers=_layers(fact.layer_class(), [(str(i), m) for i, m in held]),
                  classes=_classes([(str(i), m) for i, m in held]), evidence=fact.evidence)


def sequence_container(q: str, held: list) -> Module:
    """The ModuleList or Sequential `q` of these (index, module) layers, each known."""
    parts = tuple((f"{key}.{p}" if p else key, f) for key, m in held for p, f in m.parts)
    return Module(kind=q.split(".")[-1], flags=union_flags(f for _, f in parts) if held else NONE, parts=parts,
                  **_children_ties(held), layers=_layers(q, held), classes=_classes(held),
                  evidence=tuple(e for _, m in held for e in m.evidence))


def appended(container: Module, layers: tuple) -> Optional[Module]:
    """`layers.append(m)`, `layers.extend([a, b])` on a ModuleList: the layers follow where
    each one is known, or where every one is alike (a ModuleList of unknown length of one
    kind of layer stays one). None: not known."""
    q = container.layer_class()
    if q not in SEQUENCE_CONTAINERS or not all(isinstance(m, Module) for m in layers):
        return None
    held = _known_layers(container)
    if held is not None and all(m.parts is not None for m in layers):
        return sequence_container(q, [(str(i), m) for i, m in enumerate((*held, *layers))])
    every = _every_element(container)
    if every is not None and all(alike(every, m) for m in layers):
        return container
    return None


def grown(a: Fact, b: Fact) -> Optional[Fact]:
    """One list or ModuleList at two ends of a loop's runs (before it and after, or after one
    run and after two) that grew by elements all alike: a list of that element, how many not
    known. A loop that appends one layer per run builds one (`for d in dims:
    self.convs.append(GCNConv(d, d))`); it is taken to run at least once, as a comprehension
    over the same range is."""
    ka, ea = _elements_alike(a)
    kb, eb = _elements_alike(b)
    if ka is None or ka != kb:
        return None
    found = [e for e in (ea, eb) if e is not None]
    e = found[0] if len(found) == 1 else _alike_elements(found[0], found[1]) if found else None
    if e is None:
        return None
    return Items((e,), "list", e.evidence, counted=False) if ka == "list" else every_container(ka, e)


def _alike_elements(a, b):
    """The one element two alike elements stand for: layers alike (the first), or tensors
    of one layout (their join); None when they are not alike."""
    if isinstance(a, Module) and isinstance(b, Module):
        return a if alike(a, b) else None
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        j = join(a, b)
        return j if isinstance(j, Tensor) and j.layout is not None else None
    return None


def every_container(q: str, e: Module) -> Module:
    """A ModuleList or Sequential of layers like `e`, how many not known."""
    return Module(kind=q.split(".")[-1], flags=e.flags, parts=None, layers=(("", q),),
                  classes=((EVERY, e.cls, e.attrs),) if e.cls else (), evidence=e.evidence)


def _elements_alike(fact) -> tuple:
    """(what kind of sequence, the one element all its elements are alike to, None when it
    is empty) for a list or ModuleList of alike elements; (None, None) otherwise."""
    if isinstance(fact, (Literal, Const)) and fact.value == ():
        return "list", None  # `layers = []`
    if isinstance(fact, Items) and fact.kind == "list":
        if not fact.counted:
            return ("list", fact.items[0]) if isinstance(fact.items[0], (Module, Tensor)) else (None, None)
        items = fact.items
        if items and all(isinstance(t, Tensor) for t in items):
            # a list of tensors built by appends (`adjs.append(torch.sparse_coo_tensor(...))`)
            every = items[0]
            for t in items[1:]:
                every = _alike_elements(every, t)
                if every is None:
                    return None, None
            return "list", every
    elif isinstance(fact, Module) and fact.layer_class() in SEQUENCE_CONTAINERS:
        if fact.parts is None:
            every = _every_element(fact)
            return (fact.layer_class(), every) if every is not None else (None, None)
        items = _known_layers(fact)
        if items is None:
            return None, None
    else:
        return None, None
    if not all(isinstance(m, Module) and alike(items[0], m) for m in items):
        return None, None
    kind = "list" if isinstance(fact, Items) else fact.layer_class()
    return kind, (items[0] if items else None)


def _known_layers(fact: Module) -> Optional[tuple]:
    """The layers of a ModuleList or Sequential known one by one (none, for an empty one)."""
    if fact.parts == () and len(fact.layers) <= 1 and not fact.classes:
        return ()
    return layers_of(fact)


def _every_element(fact: Module) -> Optional[Module]:
    """The one kind of layer every layer of a ModuleList of unknown length is."""
    if fact.parts is not None or fact.flags.has_sparse is None and fact.flags.has_dense is None:
        return None
    made = every_layer(fact)
    if made is not None:
        return made
    if fact.classes:
        return None
    return Module(kind="", flags=fact.flags, parts=None, evidence=fact.evidence)


def alike(a: Module, b: Module) -> bool:
    """Two layers alike in what the analysis reads of them: their class, its attributes and
    the gradients their parameters get."""
    return a.cls == b.cls and a.attrs == b.attrs and a.flags == b.flags


def _classes(children) -> tuple:
    """The submodules made by classes of the project, of a container of these (name,
    module) children (see `Module.classes`)."""
    return tuple(c for key, m in children for c in (((key, m.cls, m.attrs),) if m.cls else ())
                 + tuple((f"{key}.{p}", cls, a) for p, cls, a in m.classes))


def _children_ties(children) -> dict:
    """The shared parameters and the order of a container of these (name, module) children."""
    groups: list = []
    for key, m in children:
        lifted = ties.lift(m.ties, key)
        if lifted is None:
            return {"ties": None, "ordered": False}
        groups.extend(lifted)
    return {"ties": ties.merged(groups), "ordered": all(m.ordered for _, m in children)}


def _modules_held(q: str, held) -> Optional[list]:
    """(name, fact) of what a dict or list built by code holds, when every name is known."""
    if q.endswith("ModuleDict") and isinstance(held, Instance) and held.cls == "dict" and held.keys is not None:
        facts = dict(held.attrs)
        return [(k, facts.get(k)) for k in held.keys]
    if q.endswith("ModuleList") and isinstance(held, Items) and held.counted:
        return [(str(i), f) for i, f in enumerate(held.items)]
    if q in SEQUENCE_CONTAINERS and isinstance(held, Items) and held.counted and held.kind in ("list", "tuple"):
        return [(str(i), f) for i, f in enumerate(held.items)]
    return None


class _Merged:
    """A dict built from layers in order (`{**a, "k": v}`, `dict(a, **b)`): key -> fact, and
    whether every key is known."""

    def __init__(self):
        self.facts: dict[str, Optional[Fact]] = {}
        self.complete = True
        self.written: dict = {}
        self.caller: Optional[tuple] = None

    def add(self, facts: dict, complete: bool, written: Optional[dict] = None, caller: Optional[tuple] = None, *,
            replaces: bool) -> None:
        if not complete:
            self.complete = False
            if replaces:
                # a key it holds that is not known may be any earlier one: only what it
                # surely holds is known
                self.facts, self.written = {}, {}
        if caller is not None and replaces:
            # an entry point's caller may give any key of what it is merged over: each
            # one it does not give here holds its default, an option
            param, function = caller
            for key, fact in self.facts.items():
                if key not in facts:
                    self.facts[key] = as_option(fact, Option(param, key, function), self.written.get(key))
        if caller is not None:
            self.caller = caller  # the caller may set any key of the result too
        self.facts.update(facts)
        self.written.update(written or {})

    def instance(self) -> Instance:
        attrs = tuple((k, f) for k, f in self.facts.items() if f is not None)
        return Instance(cls="dict", attrs=attrs, keys=tuple(self.facts) if self.complete else None,
                        written=tuple(self.written.items()), caller=self.caller)


def elements_of_pair(fact) -> Optional[tuple]:
    """(key, value) of a pair `(k, v)` whose key is a known string."""
    if isinstance(fact, Items) and fact.counted and len(fact.items) == 2 and isinstance(fact.items[0], Const) \
            and isinstance(fact.items[0].value, str):
        return fact.items[0].value, fact.items[1]
    return None


def _layer(fact: Instance) -> tuple:
    written = dict(fact.written or ())
    if fact.keys is None:
        return dict(fact.attrs), False, written, fact.caller
    return {k: attr_of(fact.attrs, k) for k in fact.keys}, True, written, fact.caller


_MAX_COMPREHENDED = 64  # elements a comprehension is evaluated for, one by one
_MAX_ITEMS = 64  # longer sequences are not followed element by element
_SEQUENCES = ("list", "tuple")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_parameter(fact) -> bool:
    """A tensor that a list of parameters holds (what an optimizer is given)."""
    return isinstance(fact, Tensor) and (fact.parameter or fact.grad == LEAF)


def is_sequence(fact) -> bool:
    """A list or tuple (not a generator, which is consumed once and cannot be indexed)."""
    return ((isinstance(fact, Items) and fact.kind in _SEQUENCES) or isinstance(fact, (Params, Literal))
            or (isinstance(fact, Const) and isinstance(fact.value, tuple)))


def sequence_items(fact) -> Optional[tuple]:
    """The element facts (None where unknown) of a list or tuple whose length is known."""
    if isinstance(fact, Items) and fact.kind in _SEQUENCES and fact.counted:
        return fact.items
    if isinstance(fact, Params):
        return fact.items
    if isinstance(fact, Literal) and isinstance(fact.value, tuple) and len(fact.value) <= _MAX_ITEMS:
        return tuple(Literal(v) if isinstance(v, tuple) else Scalar(value=v) for v in fact.value)
    if isinstance(fact, Const) and isinstance(fact.value, tuple):
        return tuple(Const(value=v) for v in fact.value)
    return None


def stored_module(container: Module, key) -> Optional[Module]:
    """`layers[0]`, `towers["user"]`: the module an `nn.ModuleList`, `nn.Sequential` or
    `nn.ModuleDict` stores under that index or key, which is the submodule its parameter
    names start with. A class of the project may define its own `__getitem__`: not followed.
    A negative index counts from an end whose position the parameter names do not tell."""
    if container.cls is not None or not (isinstance(key, str) or (_is_int(key) and key >= 0)):
        return None
    return container.child(str(key))


def param_groups(optimizer: Optimizer) -> Optional[Items]:
    """`opt.param_groups`: a list of one dict per group, whose `"params"` holds the
    parameters the optimizer was built over for that group. Its other keys (`lr`, the
    defaults filled in) are not known."""
    params = optimizer.params
    if params is None:
        return None
    groups = params.groups if params.groups is not None else ((params, None),)
    out = []
    for group, _ in groups:
        held = replace(group, groups=None, named=False)
        out.append(Instance(cls="dict", attrs=(("params", held),), keys=None, evidence=optimizer.evidence))
    return Items(tuple(out), "list", optimizer.evidence)


def element_at(fact, index: int) -> Optional[Fact]:
    items = sequence_items(fact)
    if items is not None:
        return items[index] if -len(items) <= index < len(items) else None
    return None


def sequence_of(kind: str, items: tuple) -> Optional[Fact]:
    """The fact of a list or tuple of these elements, as a display of them gives it."""
    if len(items) > _MAX_ITEMS:
        return None
    if all((isinstance(f, Literal) and isinstance(f.value, tuple)) or (isinstance(f, Scalar) and isinstance(f.value, (int, float))
                                      and not isinstance(f.value, bool)) for f in items):
        return Literal(tuple(f.value for f in items))
    if all(isinstance(f, Const) and isinstance(f.value, str) for f in items):
        return Const(value=tuple(f.value for f in items))
    if kind == "list" and all(is_parameter(f) for f in items):
        out = None
        for f in items:
            part = params_of_tensor(f, None)
            out = part if out is None else union_params(out, part)
        return replace(out, items=tuple(items))
    return Items(tuple(items), kind)


def parameter_of(flags: Flags, evidence, rank: Optional[int] = None, model: Optional[str] = None) -> Tensor:
    """The one parameter tensor of a module part (an embedding's weight, an `nn.Parameter`)."""
    grad_layout = grad_layout_of(flags)
    if grad_layout == "mixed":
        grad_layout = None
    # a sparse parameter's layout (COO, CSR) is not in the flags
    layout = "strided" if flags.sparse_param is False else "sparse" if flags.sparse_param is True else None
    return Tensor(layout=layout, grad=LEAF, parameter=True, grad_layout=grad_layout,
                  grad_coalesced=False if grad_layout == "coo" else None, rank=rank, model=model, evidence=evidence)


def part_rank(layers: tuple, name: str) -> Optional[int]:
    """How many dimensions the parameter `name` of a model made of these layers has, when a
    standard layer holds it (`user.embedding.weight` of an `Embedding`: 2)."""
    prefix, _, attr = name.rpartition(".")
    cls = dict(layers).get(prefix)
    return api.parameter_rank(cls.split(".")[-1], attr) if cls else None


def params_of_tensor(t: Tensor, path: Optional[str]) -> Params:
    if t.grad_layout == "coo":
        flags = SPARSE
    elif t.grad_layout == "strided":
        flags = DENSE
    else:
        flags = Flags(None, None, None)
    if t.is_sparse and t.grad == NOGRAD:
        return Params(flags=Flags(False, False, None), paths=(path,) if path else (), evidence=t.evidence,
                      models=(t.model,) if t.model else ())
    if t.is_sparse:
        flags = Flags(flags.has_sparse, flags.has_dense, True)
    elif t.layout == "strided":
        flags = Flags(flags.has_sparse, flags.has_dense, False)
        if t.grad_layout is None and t.parameter:
            flags = Flags(None, None, False)
    return Params(flags=flags, paths=(path,) if path else (), parts=None, evidence=t.evidence,
                  models=(t.model,) if t.model else ())


def _subset(p: Params) -> Params:
    """Some unknown part of a collection: what it lacks, it still lacks."""
    f = p.flags
    return Params(flags=Flags(False if f.has_sparse is False else None, False if f.has_dense is False else None,
                              False if f.sparse_param is False else None), evidence=p.evidence)


def _filters_on_requires_grad(fn: cst.BaseExpression) -> bool:
    return (isinstance(fn, cst.Lambda) and isinstance(fn.body, cst.Attribute)
            and fn.body.attr.value == "requires_grad")


def _filter(test: cst.BaseExpression, name_var: Optional[str], param_var: str, strings=lambda e: None):
    """What a comprehension filter keeps: ("name", predicate) on parameter names,
    ("grad-sparse", bool), ("requires-grad", True), or None when it cannot be read.
    `strings` reads a literal list of strings, also through a name (`no_decay`)."""
    negate = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negate, test = True, test.expression
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        # `p.grad is not None and p.grad.is_sparse`: the None check keeps every parameter
        left = test.left
        if _is_grad_check(left, param_var) and not negate:
            return _filter(test.right, name_var, param_var, strings)
        return None
    if _is_grad_check(test, param_var) and not negate:
        return ("requires-grad", True)  # every parameter has a grad after backward
    if (name_var is not None and isinstance(test, cst.Call) and isinstance(test.func, cst.Name)
            and test.func.value in ("any", "all") and len(test.args) == 1 and isinstance(test.args[0].value, cst.GeneratorExp)):
        # `any(nd in n for nd in no_decay)`
        gen = test.args[0].value
        words = strings(gen.for_in.iter)
        elt = gen.elt
        if (words is not None and not gen.for_in.ifs and gen.for_in.inner_for_in is None
                and isinstance(elt, cst.Comparison) and len(elt.comparisons) == 1
                and isinstance(elt.comparisons[0].operator, cst.In)
                and dotted(elt.left) == dotted(gen.for_in.target) and dotted(elt.comparisons[0].comparator) == name_var):
            combine = any if test.func.value == "any" else all
            return ("name", lambda n, ws=words, c=combine, k=not negate: c(w in n for w in ws) == k)
        return None
    d = dotted(test)
    if d in (f"{param_var}.grad.is_sparse",):
        return ("grad-sparse", not negate)
    if d == f"{param_var}.requires_grad" and not negate:
        return ("requires-grad", True)
    if name_var is None:
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        right = test.comparisons[0].comparator
        lit = literal(test.left)
        if isinstance(lit, str) and dotted(right) == name_var and isinstance(op, (cst.In, cst.NotIn)):
            keep_in = isinstance(op, cst.In) != negate
            return ("name", lambda n, s=lit, k=keep_in: (s in n) == k)
        rlit = literal(right)
        if dotted(test.left) == name_var and isinstance(rlit, str) and isinstance(op, (cst.Equal, cst.NotEqual)):
            eq = isinstance(op, cst.Equal) != negate
            return ("name", lambda n, s=rlit, k=eq: (n == s) == k)
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and dotted(test.func.value) == name_var:
        method = test.func.attr.value
        if method in ("startswith", "endswith") and len(test.args) == 1:
            lit = literal(test.args[0].value)
            if isinstance(lit, str):
                return ("name", lambda n, s=lit, m=method, k=not negate: getattr(n, m)(s) == k)
    return None


def _is_grad_check(test: cst.BaseExpression, param_var: str) -> bool:
    """`p.grad is not None`."""
    return (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.IsNot) and dotted(test.left) == f"{param_var}.grad"
            and literal(test.comparisons[0].comparator) is None)

