"""What a statement changes: bindings, in-place updates, optimizer steps, frozen
parameters, tensors saved for backward, and the facts inside a branch."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

import libcst as cst

from ...torchops import torchapi as api
from ....diagnostics import Evidence
from ..facts import (LEAF, NOGRAD, Const, Fact, Instance, Items, Literal, Module, Optimizer, Params, Scalar, Tensor, froze,
                     attr_of, element_of, join, join_all, union_flags, union_params)
from ..gradflags import DENSE as DENSE_GRADS, NONE as NO_GRADS, SPARSE as SPARSE_GRADS, Flags
from ...cst.names import dotted, is_torch
from ...cst.syntax import parameters_of
from ...entry import caller_key, documented_coo
from ...cst.tree import children, walk

_SCOPE_TYPES = frozenset({cst.Lambda, cst.FunctionDef, cst.ClassDef})
# Methods that change what a dict holds.
_DICT_UPDATES = frozenset({"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__", "__ior__"})
from .values import _UNKNOWN, arg, literal
from .state import State
from .containers import (SEQUENCE_CONTAINERS, alike, appended, every_layer, is_parameter, is_sequence, layers_of,
                         parameter_of, params_of_tensor, part_rank, sequence_items, sequence_of)

# Methods that change a list in place.
_LIST_UPDATES = frozenset({"append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear", "__setitem__",
                           "__delitem__", "__iadd__", "__imul__"})
# Builtins that read a list they are given and never change it.
_READING_BUILTINS = frozenset({"len", "print", "sorted", "list", "tuple", "set", "frozenset", "enumerate", "zip", "iter",
                               "reversed", "sum", "min", "max", "any", "all", "isinstance", "str", "repr", "id",
                               "hash", "dict", "range", "next", "map", "filter", "bool", "type", "hasattr", "getattr"})


# how the evidence of an entry point's layout test begins (rules find the test's place by it)
ADMITTED = "this layout test admits"
DOCUMENTED = "this docstring admits"


class Effects:
    """Methods of `Inference` (sparselint.inference.expressions)."""

    def apply(self, stmt: cst.BaseSmallStatement, state: State) -> State:
        """The facts after a simple statement."""
        value = getattr(stmt, "value", None)
        value_fact = self.fact(value, state) if isinstance(value, cst.BaseExpression) else None
        out = state.copy()
        for node in (self.calls.live_calls(stmt, state) if self.calls is not None else _calls_in(stmt)):
            if isinstance(node, cst.Call):
                self._passed_lists(node, out)
                self._call_effect(node, out)
            elif type(node.operator) is cst.Multiply:
                self._sparse_times_effect(node.left, node.right, out, node)
                self._sparse_times_effect(node.right, node.left, out, node)
            else:
                # `p @ x` / `x @ p`: a sparse parameter in a dense product gets a dense grad
                self._sparse_operand_effect("@", node.left, node.right, out, node)
                self._sparse_operand_effect("@", node.right, node.left, out, node)
        self._bind_walrus(stmt, out)
        if isinstance(stmt, cst.Assert):
            # past an `assert`, its test holds (`assert adj.is_coalesced()`)
            return self.refine(stmt.test, out, True)
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                self._bind(target.target, value_fact, out, value)
        elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, value_fact, out, stmt.value)
        elif isinstance(stmt, cst.AugAssign) and isinstance(stmt.target, cst.Subscript):
            self._dict_item_set(stmt.target, None, out)  # `cfg["lr"] *= 2`: the value is not followed
        elif isinstance(stmt, cst.AugAssign) and is_sequence(self._held(dotted(stmt.target), out)):
            path = dotted(stmt.target)
            held = self._held(path, out)
            if isinstance(stmt.operator, cst.AddAssign):
                self._sequence_update(path, held, "extend", stmt.value, out)  # `items += [x]`
            else:
                self._forget_sequence(path, held, out)
        elif isinstance(stmt, cst.AugAssign):
            target, path = self.tensor(stmt.target, state), dotted(stmt.target)
            after = self._probed(stmt, state, target)
            if after is not None and path:
                out.env[path] = replace(target, coalesced=after.coalesced, evidence=after.evidence)
            else:
                self._inplace_update(stmt.target, isinstance(stmt.operator, (cst.AddAssign, cst.SubtractAssign)), stmt, out)
        elif isinstance(stmt, cst.Del):
            for el in _del_targets(stmt.target):
                if isinstance(el, cst.Subscript):
                    self._dict_item_set(el, None, out, remove=True)
                    continue
                p = dotted(el)
                if p:
                    out.bind(p, None)
        return out

    def truth(self, test: cst.BaseExpression, state: State) -> Optional[bool]:
        """The value of a branch test that depends only on literals the facts hold (`if clip:`
        with `clip=False` passed or defaulted, `if name == "adam":`, `if self.max_norm is
        not None:`); None when it cannot be decided."""
        if _is_connective(test):
            return _connective(test, lambda part: self.truth(part, state))
        if isinstance(test, cst.Comparison):
            v = self.comparison_value(test, state)
            return None if v is _UNKNOWN else v
        if (type(test) is cst.Call and type(test.func) is cst.Name and test.func.value in ("any", "all")
                and len(test.args) == 1 and not test.args[0].star and test.args[0].keyword is None
                and type(test.args[0].value) in (cst.GeneratorExp, cst.ListComp) and self.builtin(test.func.value, state)):
            decided = self._each_truth(test.func.value, test.args[0].value, state)
            if decided is not None:
                return decided
        v = self.known_value(test, state)
        if v is _UNKNOWN or not isinstance(v, (bool, int, float, str, type(None))):
            return None
        return bool(v)

    def _each_truth(self, which: str, comp, state: State) -> Optional[bool]:
        """`any(p.grad is not None and p.grad.is_sparse for p in model.parameters())`: the
        test of each parameter, with its facts; one element decides it (`any` a true one,
        `all` a false one), else every element must be decided."""
        if comp.for_in.inner_for_in is not None or not isinstance(self.fact(comp.for_in.iter, state), Params):
            return None  # a model's parameters only: other sequences are `known_value`'s
        found = self.comprehension_states(comp, state)
        if found is None or not found[1]:
            return None  # how many elements there are is not known
        deciding = which == "any"
        verdict: Optional[bool] = not deciding
        for each in found[0]:
            v = self._element_truth(comp.elt, each)
            if v is deciding:
                return deciding
            if v is None:
                verdict = None
        return verdict

    def _element_truth(self, test: cst.BaseExpression, state: State) -> Optional[bool]:
        """`truth` of a test about one parameter, where `p.grad is not None` counts as true
        when its gradient is known: a parameter whose gradient is missing has no gradient
        that could fail either, so the test reads as it does where the gradient exists."""
        if _is_connective(test):
            return _connective(test, lambda part: self._element_truth(part, state))
        if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
                and _is_name(test.comparisons[0].comparator, "None")
                and isinstance(test.left, cst.Attribute) and test.left.attr.value == "grad"
                and isinstance(self.fact(test.left, state), Tensor)):
            return isinstance(test.comparisons[0].operator, cst.IsNot)
        return self.truth(test, state)

    def refine(self, test: cst.BaseExpression, state: State, truth: bool, given: Optional[dict] = None,
               qualify=None, site: Optional[cst.BaseExpression] = None) -> State:
        """The facts inside a branch of `if x.is_sparse:` / `if x.layout == torch.strided:`,
        also written through a helper (`if is_sparse_tensor(x):`). `given`: inside such a
        helper's test, its parameters -> the caller's arguments, and how its module qualifies
        names, and `site` the call of the helper."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.refine(test.expression, state, not truth, given, qualify, site)
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and truth:
            return self.refine(test.right, self.refine(test.left, state, True, given, qualify, site), True, given, qualify,
                               site)
        if (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or) and truth
                and self.entry is not None):
            # an entry point's `if a.layout == coo or a.layout == csr:` (or a helper testing
            # layout after layout): a COO tensor passes its COO test, so it is admitted there
            for part in _disjuncts(test):
                narrowed = self.refine(part, state, True, given, qualify, site)
                if any(isinstance(f, Tensor) and f.admitted is not None and state.env.get(k) is not f
                       for k, f in narrowed.env.items()):
                    return narrowed
            return state
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or) and not truth:
            return self.refine(test.right, self.refine(test.left, state, False, given, qualify, site), False, given,
                               qualify, site)
        if (isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "is_coalesced"
                and not test.args):
            return self._refine_coalesced(test.func.value, state, truth, given)
        if isinstance(test, cst.Call) and given is None and self.calls is not None:
            helper = self.calls.helper_test(test, state)
            if helper is not None:
                return self.refine(helper[0], state, truth, helper[1], helper[2], test)
            return state
        sparse, subject = None, None
        coo = False  # the test says COO itself, not any sparse layout
        if isinstance(test, cst.Attribute) and test.attr.value == "is_sparse":
            subject, sparse, coo = test.value, truth, truth  # True for the COO layout only
        elif (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
              and isinstance(test.left, cst.Attribute) and test.left.attr.value == "layout"):
            op = test.comparisons[0].operator
            layout = api.LAYOUT_NAMES.get((qualify or self.names.qualify)(test.comparisons[0].comparator) or "")
            if layout is not None and isinstance(op, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
                equal = isinstance(op, (cst.Equal, cst.Is)) == truth
                subject = test.left.value
                if given is not None:
                    subject = given.get(subject.value) if isinstance(subject, cst.Name) else None
                    given = None  # the caller's expression from here on
                    if subject is None:
                        return state
                sparse = (layout != "strided") if equal else (True if layout == "strided" else None)
                coo = equal and layout == "coo"
                held = self.tensor(subject, state)
                path = dotted(subject)
                known = held.layout if held is not None and held.layout != "sparse" else None
                if path and known is not None and (known == layout) != equal:
                    # a branch the tensor known to have this layout never takes (a helper
                    # called with a COO tensor, in its CSR branch): nothing is known there
                    out = state.copy()
                    out.bind(path, None)
                    return out
        if given is not None and subject is not None:
            # the helper's parameter stands for what the caller passed
            subject = given.get(subject.value) if isinstance(subject, cst.Name) else None
        path = dotted(subject) if subject is not None else None
        if path is None or sparse is None:
            return state
        if coo and self.entry is not None and self.tensor(subject, state) is None and (
                path in self.entry.params or caller_key(path) in state.env):
            return self._admitted(site if site is not None else test, path, state)
        old = self.tensor(subject, state) or Tensor()
        if sparse and old.is_sparse:
            return state
        out = state.copy()
        new = replace(old, layout="sparse" if sparse else "strided", coalesced=None if sparse else old.coalesced)
        out.env[path] = new if not sparse or old.layout is None else old
        return out

    def _admitted(self, test: cst.CSTNode, param: str, state: State, by: str = ADMITTED) -> State:
        """A layout test of a public function narrows a parameter to COO (or its docstring
        says it is one, `by`): whatever COO tensor a caller passes gets there, the
        uncoalesced one straight from `torch.sparse_coo_tensor` included."""
        t = Tensor(layout="coo", coalesced=False, origin="parameter", admitted=(self.entry.function, param, test),
                   evidence=(Evidence.at(test, f"{by} any sparse COO `{param}`, the uncoalesced "
                                               "one straight from `torch.sparse_coo_tensor` included"),))
        out = state.copy()
        out.env[param] = t
        return out

    def documented(self, node: cst.FunctionDef, state: State) -> State:
        """An entry point whose docstring says a parameter is a sparse COO tensor admits
        any one there, from its first line."""
        for param, doc in documented_coo(node, self.entry).items():
            if param not in state.env:
                state = self._admitted(doc, param, state, DOCUMENTED)
        return state

    def _refine_coalesced(self, subject: cst.BaseExpression, state: State, truth: bool, given) -> State:
        """`if s.is_coalesced():` / `assert s.is_coalesced()`: a COO tensor is coalesced in
        the branch that says so, and not in the other."""
        if given is not None:
            subject = given.get(subject.value) if isinstance(subject, cst.Name) else None
        path = dotted(subject) if subject is not None else None
        if not path:
            return state
        old = self.tensor(subject, state)
        if old is None and truth and self.fact(subject, state) is None:
            # `is_coalesced()` answers for a sparse COO tensor only (a dense one raises)
            old = Tensor(layout="coo")
        if old is None or old.coalesced is truth or (old.layout is not None and not old.is_coo):
            return state
        out = state.copy()
        out.env[path] = replace(old, coalesced=truth, admitted=old.admitted if not truth else None)
        return out

    def bind_loop_target(self, target: cst.BaseExpression, iterable: cst.BaseExpression, state: State) -> State:
        out = state.copy()
        it = self.fact(iterable, state)
        where = iterable
        if isinstance(it, Params) and not _display(iterable):
            element = element_of(it, where)
            if it.named and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                first = dotted(target.elements[0].value)
                if first:
                    out.bind(first, None)
                target = target.elements[1].value
            p = dotted(target)
            if p:
                out.bind(p, element)
                return out
        every = self.every_element(iterable, state)
        if every is not None:
            # every iteration binds one element: what holds in the body holds for all of them
            self._bind(target, every, out, None)
            return out
        for name in _target_paths(target):
            out.bind(name, None)
        return out

    def iterated(self, node: cst.BaseExpression, state: State) -> Optional[tuple]:
        """The facts a `for` over `node` binds in turn (None for an element not known), when
        how many elements there are is known: a list or tuple, `enumerate`, `zip`, and the
        keys, values or items of a dict whose keys are all known."""
        if _display(node):
            # the elements themselves (a display of leaves is also a parameter collection)
            return tuple(self.fact(el.value, state) for el in node.elements)
        if isinstance(node, cst.Call) and not any(a.star for a in node.args):
            func = node.func
            positional = [a.value for a in node.args if a.keyword is None]
            if (isinstance(func, cst.Name) and func.value in ("list", "tuple", "iter", "enumerate", "zip")
                    and self.builtin(func.value, state)):
                if func.value == "enumerate" and 1 <= len(positional) <= 2:
                    inner = self.iterated(positional[0], state)
                    start = self.value(arg(node, 1, "start"), state) if len(node.args) == 2 else 0
                    if inner is None:
                        return None
                    number = isinstance(start, int) and not isinstance(start, bool)
                    return tuple(Items((Scalar(value=start + i) if number else Scalar(), e)) for i, e in enumerate(inner))
                if func.value == "zip" and positional and all(a.keyword is None or a.keyword.value == "strict"
                                                               for a in node.args):
                    seqs = [self.iterated(p, state) for p in positional]
                    if any(q is None for q in seqs):
                        return None
                    return tuple(Items(tuple(group)) for group in zip(*seqs))
                if func.value in ("list", "tuple", "iter") and len(node.args) == 1 and positional:
                    return self.iterated(positional[0], state)
                return None
            if isinstance(func, cst.Attribute) and not node.args and func.attr.value in ("items", "keys", "values"):
                held = self.fact(func.value, state)
                if not isinstance(held, Instance) or held.cls != "dict" or held.keys is None:
                    return None
                keys = tuple(Const(value=k) for k in held.keys)
                values = tuple(attr_of(held.attrs, k) for k in held.keys)
                if func.attr.value == "items":
                    return tuple(Items(pair) for pair in zip(keys, values))
                return keys if func.attr.value == "keys" else values
        fact = self.fact(node, state)
        if isinstance(fact, Instance) and fact.cls == "dict" and fact.keys is not None:
            return tuple(Const(value=k) for k in fact.keys)
        if isinstance(fact, Instance):
            return None  # a NamedTuple is iterable too, but an object in general is not
        return elements_of(fact)

    def parameter_kinds(self, node: cst.BaseExpression, state: State) -> Optional[tuple]:
        """For `model.parameters()` of a model whose parameters are not all known by name
        but that surely holds some with sparse gradients: one parameter of each kind it
        surely holds (sparse gradient first, then dense), what a loop's body meets at least
        once. Named ones come with an unknown name."""
        fact = self.fact(node, state)
        if not isinstance(fact, Params) or fact.groups is not None or fact.items is not None:
            return None
        if fact.flags.has_sparse is not True:
            return None
        kinds = [parameter_of(SPARSE_GRADS, fact.evidence)]
        if fact.flags.has_dense is True:
            kinds.append(parameter_of(DENSE_GRADS, fact.evidence))
        return tuple(Items((None, k)) for k in kinds) if fact.named else tuple(kinds)

    def every_element(self, node: cst.BaseExpression, state: State) -> Optional[Fact]:
        """What every element a `for` over `node` binds is, also when how many there are is
        not known (a generator function's items, `enumerate` or `list` of them)."""
        elements = self.iterated(node, state)
        if elements is not None:
            return join_all(elements)
        if isinstance(node, cst.Call) and not any(a.star or a.keyword is not None for a in node.args):
            func = node.func
            positional = [a.value for a in node.args]
            if (isinstance(func, cst.Name) and func.value in ("list", "tuple", "iter", "enumerate", "zip")
                    and self.builtin(func.value, state)):
                if func.value in ("list", "tuple", "iter") and len(positional) == 1:
                    return self.every_element(positional[0], state)
                if func.value == "enumerate" and len(positional) == 1:
                    inner = self.every_element(positional[0], state)
                    return Items((Scalar(), inner)) if inner is not None else None
                if func.value == "zip" and positional:
                    parts = tuple(self.every_element(p, state) for p in positional)
                    return Items(parts) if any(p is not None for p in parts) else None
                return None
        fact = self.fact(node, state)
        if isinstance(fact, Items) and not fact.counted:
            return fact.items[0]
        return every_layer(fact) if isinstance(fact, Module) else None

    def _bind_walrus(self, node: cst.CSTNode, state: State) -> None:
        """`(x := X())` in a statement or a branch test binds `x` (in the enclosing scope,
        also from a comprehension, where what it binds is not followed)."""
        if not self.walrus_possible:
            return
        for walrus, in_comprehension in _walruses(node):
            fact = None if in_comprehension else self.fact(walrus.value, state)
            self._bind(walrus.target, fact, state, walrus.value)

    def bind_walrus(self, node: cst.CSTNode, state: State) -> State:
        if not self.walrus_possible or not _walruses(node):
            return state
        out = state.copy()
        self._bind_walrus(node, out)
        return out

    def _unpack(self, target, fact: Optional[Fact], state: State, value) -> None:
        """`a, (b, *c) = ...`: each target gets the fact of its element (a starred one the
        list of those it takes); all become unknown when the elements are not known."""
        elements = elements_of(fact)
        els = target.elements
        stars = [i for i, el in enumerate(els) if isinstance(el, cst.StarredElement)]
        if (elements is None or len(stars) > 1 or (not stars and len(elements) != len(els))
                or (stars and len(elements) < len(els) - 1)):
            for p in _target_paths(target):
                state.bind(p, None)
            return
        nodes = None
        if isinstance(value, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            nodes = [e.value for e in value.elements]
        if stars:
            i = stars[0]
            cut = len(elements) - (len(els) - i - 1)
            parts = [(els[k].value, elements[k], k) for k in range(i)]
            parts.append((els[i].value, Items(tuple(elements[i:cut]), "list"), None))
            parts += [(els[k].value, elements[cut + k - i - 1], cut + k - i - 1) for k in range(i + 1, len(els))]
        else:
            parts = [(el.value, elements[k], k) for k, el in enumerate(els)]
        for sub, f, k in parts:
            self._bind(sub, f, state, nodes[k] if nodes is not None and k is not None else None)

    def _bind(self, target: cst.BaseExpression, fact: Optional[Fact], state: State, value) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            self._unpack(target, fact, state, value)
            return
        if isinstance(target, cst.Subscript):
            self._dict_item_set(target, fact, state)
            return
        path = dotted(target)
        if path is None:
            return
        if isinstance(fact, Items) and fact.kind == "generator" and fact.counted:
            # a generator held by a name is consumed by its first use: its elements by
            # position are not followed (what every element is, when that is all that is
            # known, stays true of those left)
            fact = None
        if isinstance(target, cst.Attribute) and target.attr.value == "data":
            # `p.data = p.data.coalesce()` swaps the storage of `p`, keeping its autograd identity.
            owner = dotted(target.value)
            old = (state.env.get(owner) or self.lookup(owner, state)) if owner else None
            if owner and isinstance(old, Tensor) and isinstance(fact, Tensor):
                state.env[owner] = replace(old, layout=fact.layout, coalesced=fact.coalesced,
                                           evidence=old.evidence + fact.evidence[-1:])
                self._module_tensor_set(owner, state.env[owner], state)
            elif owner:
                state.bind(owner, None)
            return
        if (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"
                and isinstance(fact, Const) and fact.value is False and self._freeze(dotted(target.value) or "", state)):
            return
        if isinstance(fact, Tensor) and fact.is_grad is False and isinstance(target, cst.Attribute) and target.attr.value == "grad":
            fact = replace(fact, is_grad=True, grad=NOGRAD)
        if isinstance(fact, Tensor) and fact.evidence:
            where = target
            fact = fact.why(where, f"assigned to `{path}`")
        fact = self._sparse_embedding_grad(path, fact)
        if isinstance(target, cst.Attribute):
            tied = fact
            done, fact = self.share(target, value, fact, state)
            if done:
                if _may_tie_sparse(value, tied):
                    # (the model holding both, when its parameters are not all known by name)
                    self._parameter_set_unplaced(dotted(target.value) or "", state)
                return
            self._module_attribute_set(target, value, fact, state)
        if isinstance(target, cst.Attribute):
            # `cfg.sparse = False` / `args.adj = adj` on an object: the object's own record of
            # its attributes (what a constructor or callee it is passed to reads) follows
            owner = dotted(target.value)
            held = state.env.get(owner) if owner else None
            name = target.attr.value
            if isinstance(held, Instance) and held.cls not in ("dict", "list", "tuple"):
                attrs = tuple((k, v) for k, v in held.attrs if k != name) + (((name, fact),) if fact is not None else ())
                state.env[owner] = replace(held, attrs=attrs)
        state.bind(path, fact)
        # A tensor passed as the values of a sparse constructor is remembered as such.
        if isinstance(value, cst.Call):
            q = self.names.qualify(value.func)
            if q in api.SPARSE_CONSTRUCTORS:
                vnode = arg(value, api.SPARSE_CONSTRUCTORS[q][1], "values")
                vpath = dotted(vnode) if vnode is not None else None
                vt = state.env.get(vpath) if vpath else None
                if isinstance(vt, Tensor) and vt.layout == "strided":
                    state.env[vpath] = replace(vt, values_of_sparse=True)

    def _module_tensor_set(self, path: str, new: Tensor, state: State) -> None:
        """`layer.weight.data = ...` on a tensor a class of the project set on a module: the
        module's record of it (what a function given the module reads) follows."""
        owner, _, name = path.rpartition(".")
        held = (state.env.get(owner) or self.lookup(owner, state)) if owner else None
        if isinstance(held, Module) and isinstance(attr_of(held.attrs, name), Tensor):
            changed = replace(held, attrs=tuple((k, new if k == name else v) for k, v in held.attrs))
            state.env[owner] = changed
            self._into_owner(owner, changed, state, held)

    def _sparse_embedding_grad(self, path: str, fact: Optional[Fact]) -> Optional[Fact]:
        """A leaf this scope looks up with `F.embedding(..., sparse=True)` gets its grads from
        there, whether an optimizer over it is built before or after that lookup."""
        embedding = self.sparse_weights.get(path)
        if (embedding is None or not isinstance(fact, Tensor) or fact.grad != LEAF or fact.layout != "strided"
                or fact.grad_layout is not None):
            return fact
        return replace(fact, grad_layout="coo", grad_coalesced=False).why(
            embedding, f"`F.embedding(..., sparse=True)` gives `{path}` an uncoalesced sparse grad")

    def enter(self, state: State) -> None:
        """The parameters a function is called with, as it looks them up (see `_sparse_embedding_grad`)."""
        for path in self.sparse_weights:
            held = state.env.get(path)
            if held is not None:
                state.env[path] = self._sparse_embedding_grad(path, held)

    def _dict_item_set(self, target: cst.Subscript, fact: Optional[Fact], state: State, remove: bool = False) -> None:
        """`cfg["weight_decay"] = 0.0` / `del cfg["weight_decay"]` on a config dict: its key
        holds the new value (or is gone); a key that cannot be read makes the dict unknown."""
        path = dotted(target.value)
        held = state.env.get(path) if path else None
        if is_sequence(held):
            self._sequence_item_set(path, held, target, fact, state, remove)
            return
        container = held if held is not None or not path else self.fact(target.value, state)
        if isinstance(container, Module):
            # `net.layers[0] = Plain(4)`: another layer in that place of a ModuleList
            index = target.slice[0].slice if len(target.slice) == 1 else None
            key = self.known_value(index.value, state) if isinstance(index, cst.Index) else _UNKNOWN
            new = None
            if isinstance(key, (int, str)) and not isinstance(key, bool) and container.parts is not None and not remove:
                name = str(key)
                if name.isdigit() or not name.startswith("-"):
                    new = None if _tied(container, name) else (
                        _with_submodule(container, name, fact) or _without_submodule(container, name))
            self._module_changed(path, container, new, state)
            return
        # a module-level dict a function fills (`REGISTRY[name] = fn`): the change is the
        # function's effect on the module's dict
        outer = held is None and path is not None
        held = held if held is not None else self._held(path, state)
        if not isinstance(held, Instance) or held.cls != "dict":
            return
        key = self.known_value(target.slice[0].slice.value, state) if (
            len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)) else _UNKNOWN
        if not isinstance(key, str):
            if outer:
                # forgetting the name would show the module's dict as it was: it is now a
                # dict of which nothing is known
                state.env[path] = replace(held, attrs=(), keys=None)
            else:
                state.bind(path, None)
            return
        attrs = tuple((k, v) for k, v in held.attrs if k != key)
        if fact is not None and not remove:
            attrs += ((key, fact),)
        keys = None
        if held.keys is not None:
            keys = tuple(k for k in held.keys if k != key) + (() if remove else (key,))
        state.env[path] = replace(held, attrs=attrs, keys=keys)

    def _setattr(self, call: cst.Call, state: State) -> None:
        """`setattr(obj, "name", value)` binds `obj.name`; a name not known may be any
        attribute of the object, which is then forgotten."""
        if len(call.args) != 3 or any(a.star or a.keyword is not None for a in call.args):
            return
        path = dotted(call.args[0].value)
        if path is None:
            return
        name = self.known_value(call.args[1].value, state)
        if not isinstance(name, str) or not name.isidentifier():
            state.bind(path, None)
            return
        fact = self.fact(call.args[2].value, state)
        spelled = cst.Attribute(value=call.args[0].value, attr=cst.Name(name))
        done, fact = self.share(spelled, call.args[2].value, fact, state)
        if done:
            return
        self._module_attribute_set(spelled, call.args[2].value, fact, state)  # `setattr(model, "user", emb)`
        held = state.env.get(path)
        if isinstance(held, Instance) and held.cls not in ("dict", "list", "tuple"):
            attrs = tuple((k, v) for k, v in held.attrs if k != name) + (((name, fact),) if fact is not None else ())
            state.env[path] = replace(held, attrs=attrs)
        state.bind(f"{path}.{name}", fact)

    def _held(self, path: Optional[str], state: State):
        return (state.env.get(path) or self.lookup(path, state)) if path else None

    def _module_attribute_set(self, target: cst.Attribute, value, fact, state: State) -> None:
        """An attribute set on a module after it was built: `model.emb.sparse = False` changes
        the gradient its weight gets; `model.emb = nn.Embedding(...)` sets another submodule
        in place of the old one; `model.normalize = False` changes what its `forward` reads.
        What the module holds follows where it is known, and is forgotten where it is not
        (here and in the modules that hold it)."""
        name, owner_path = target.attr.value, dotted(target.value)
        if owner_path is not None and owner_path != "self" and self._being_built(owner_path) and name == "sparse":
            # `self.entities.sparse = False` in the constructor, after the layer was made
            # (by this code or a base's): the layer it holds from here on
            owner = self.fact(target.value, state)
            if isinstance(owner, Module) and owner.cls is None:
                switched = state.copy()
                self._sparse_switch(target, owner, fact, switched)
                state.bind(owner_path, switched.env.get(owner_path))
            return
        if owner_path is None or self._being_built(owner_path):
            return  # (a module being built: what its constructor sets is what it is made of)
        owner = self.fact(target.value, state)
        if name == "sparse" and not (isinstance(owner, Module) and owner.cls is not None):
            if isinstance(owner, Module):
                self._sparse_switch(target, owner, fact, state)
            elif owner is None and owner_path in self.loop_owners:
                # `for m in model.modules(): m.sparse = False`: which of its modules it was is
                # not known
                looped = self.loop_owners[owner_path]
                held = self._held(looped, state)
                if isinstance(held, Module) and not self._placed_by_caller(looped, state):
                    self._module_changed(looped, held, None, state)
                else:
                    self.unplaced(None, state)
            return
        # (`model.emb.weight` read from a module whose parameters are not known by name has no fact)
        if _may_tie_sparse(value, fact) and (fact is not None or self._enclosing_module(dotted(value) or "", state)):
            self._parameter_set_unplaced(owner_path, state)
        if not isinstance(owner, Module) or owner.parts is None:
            return
        prefix = name + "."
        holds = (any(p == name or p.startswith(prefix) for p, _ in owner.parts)
                 or any(p == name for p, _, _ in owner.classes))
        if not holds and not isinstance(fact, Module) and not (isinstance(fact, Tensor) and fact.parameter):
            if owner.cls is not None and any(k == name for k, _ in owner.attrs):
                new = replace(owner, attrs=tuple((k, v) for k, v in owner.attrs if k != name)
                              + (((name, fact),) if fact is not None else ()))
                self._module_changed(owner_path, owner, new, state)
            return
        new = None
        if not _tied(owner, name):
            # (a submodule of a kind not known: what the others hold stays as it was)
            new = (_with_parameter(owner, name, fact) or _with_submodule(owner, name, fact)
                   or _without_submodule(owner, name))
        self._module_changed(owner_path, owner, new, state)

    def _parameter_set_unplaced(self, path: str, state: State) -> None:
        """A parameter set on a module of a model whose parameters are not all known by
        name (`model.decoder.weight = model.emb.weight` beside a GRU): it may now be one
        parameter with a sparse table, whose gradient is then dense; whether the model
        still has sparse gradients is no longer known."""
        parts = path.split(".")
        for cut in range(len(parts), 0, -1):
            owner = ".".join(parts[:cut])
            held = self._held(owner, state)
            if isinstance(held, Module) and held.parts is None and held.flags.has_sparse is True:
                # (a module being built, its gradients not yet known, keeps its record of ties)
                state.env[owner] = replace(held, flags=Flags(None, held.flags.has_dense, None))
                self._into_owner(owner, None, state)
                self._revoke(owner, state)

    def _sparse_switch(self, target: cst.Attribute, layer: Module, fact, state: State) -> None:
        """`emb.sparse = flag` on an embedding: its weight gets the gradient the flag says."""
        path = dotted(target.value)
        sparse = fact.value if isinstance(fact, Const) and isinstance(fact.value, bool) else None
        new = None
        if layer.layer_class() is None and layer.cls is None:
            # a layer of a kind not known (one of a ModuleList of unknown length): it may be
            # an embedding, and which model holds it is not known either
            self._module_changed(path, layer, None, state)
            return
        if layer.layer_class() not in api.EMBEDDINGS:
            return  # a torch layer without a sparse switch: a plain attribute
        if layer.parts is not None and len(layer.parts) == 1:
            (weight, flags), = layer.parts
            if flags is NO_GRADS:
                return  # frozen: it gets no gradient either way
            if sparse is not None:
                flags = SPARSE_GRADS if sparse else DENSE_GRADS
                new = replace(layer, parts=((weight, flags),), flags=flags, evidence=(*layer.evidence, Evidence.at(
                    target, f"`{path}.sparse = {sparse}`: its weight gets a {'sparse' if sparse else 'dense'} grad")))
        self._module_changed(path, layer, new, state)

    def _module_changed(self, path: str, old: Module, new: Optional[Module], state: State) -> None:
        """The module at `path` is now `new` (None: not known), and so are the modules that
        hold it, where they are known."""
        try:
            self._module_replaced(path, old, new, state)
        finally:
            self._revoke(path, state)
            if path in self.loop_owners:
                self._revoke(self.loop_owners[path], state)  # `for m in model.modules(): m.sparse = False`

    def _module_replaced(self, path: str, old: Module, new: Optional[Module], state: State) -> None:
        if new is None:
            state.bind(path, None)
            placed = self._into_owner(path, None, state)
        else:
            state.env[path] = new
            self._aliases(path, old, new, state)
            placed = self._into_owner(path, new, state, old)
        if placed or self._placed_by_caller(path, state):
            return
        looped = self.loop_owners.get(path)
        held = self._held(looped, state) if looped else None
        if isinstance(held, Module) and not self._placed_by_caller(looped, state):
            # `for m in teacher.modules(): m.sparse = False`: one of the modules of that model,
            # which one not placed
            state.bind(looped, None)
            self._into_owner(looped, None, state)
        elif self._held_elsewhere(path, old, state):
            self.unplaced(path, state)  # the model holding it is not known

    def _sequence_update(self, path: str, held, method: str, value: Optional[cst.BaseExpression], state: State) -> None:
        """`items.append(x)`, `items.extend(xs)`, `items += xs`: the elements follow; any
        other change to the list (insert, pop, sort, ...) leaves it unknown."""
        added = self._added(method, value, state)
        old = sequence_items(held)
        new = None
        if isinstance(held, Params) and added is not None and all(is_parameter(f) for f in added):
            new = held
            for f in added:
                new = union_params(new, params_of_tensor(f, dotted(value) if method == "append" else None))
            new = replace(new, items=old + added if old is not None else None)
        elif isinstance(held, Params) and method == "extend" and value is not None and added is None:
            more = self.fact(value, state)
            new = union_params(held, more) if isinstance(more, Params) else None
        elif added is not None and old is not None:
            new = sequence_of("list", old + added)
        elif (added is not None and isinstance(held, Items) and not held.counted and held.kind == "list"
              and all(isinstance(f, Module) and alike(held.items[0], f) for f in added)):
            return  # one more layer like every one it holds
        elif (added is not None and isinstance(held, Items) and not held.counted and held.kind == "list"
              and isinstance(held.items[0], Tensor) and all(isinstance(f, Tensor) for f in added)):
            # one more tensor in a list of tensors alike: every element is what they all are
            every = held.items[0]
            for f in added:
                every = join(every, f)
            if isinstance(every, Tensor) and every.layout is not None:
                state.env[path] = replace(held, items=(every,))
                return
        self._forget_sequence(path, held, state)
        if new is not None:
            state.env[path] = new

    def _added(self, method: str, value: Optional[cst.BaseExpression], state: State) -> Optional[tuple]:
        """The facts of what `append(value)` or `extend(value)` adds, in order; None when
        that is not known (or the method adds nothing known)."""
        if value is not None and method == "append":
            return (self.fact(value, state),)
        if value is not None and method == "extend":
            return self.items_of(value, state)
        return None

    def _being_built(self, path: str) -> bool:
        """`self...` in `__init__`: part of the module its constructor is building."""
        return path.split(".")[0] == "self" and isinstance(self.scope_node, cst.FunctionDef) and (
            self.scope_node.name.value == "__init__")

    def _layers_update(self, path: str, held: Module, method: str, value: Optional[cst.BaseExpression],
                       state: State) -> None:
        """`self.convs.append(GCNConv(d, d))`, `layers.extend([...])` on a ModuleList: its
        layers follow (see `appended`); any other change leaves it unknown."""
        added = self._added(method, value, state)
        new = appended(held, added) if added is not None else None
        if new is held:
            return
        if self._being_built(path):
            state.bind(path, new)  # what its constructor sets is what it is made of
        else:
            self._module_changed(path, held, new, state)

    def _sequence_item_set(self, path: str, held, target: cst.Subscript, fact, state: State, remove: bool) -> None:
        """`items[1] = x` on a list whose elements are known; other stores make it unknown."""
        old = sequence_items(held)
        sl = target.slice[0].slice if len(target.slice) == 1 else None
        i = self.known_value(sl.value, state) if isinstance(sl, cst.Index) else _UNKNOWN
        self._forget_sequence(path, held, state)
        if not remove and old is not None and isinstance(i, int) and not isinstance(i, bool) and -len(old) <= i < len(old):
            items = list(old)
            items[i] = fact
            new = sequence_of("list", tuple(items))
            if new is not None:
                state.env[path] = new

    def _function_def(self, node: cst.BaseExpression, state: State):
        """The `def` or `lambda` a value names: a nested one or a lambda held as a value, or a
        function of this module; None when not known."""
        held = self.fact(node, state)
        if getattr(held, "node", None) is not None:
            return held.node
        walker = self.calls.walker if self.calls is not None else None
        if type(node) is cst.Name and walker is not None and self.lookup(node.value, state) is None:
            return walker.functions.get(node.value)
        return None

    def _chosen_list_update(self, chooser: cst.IfExp, call: cst.Call, state: State) -> None:
        """`(no_decay if name.endswith("bias") else decay).append(p)`: the list the test
        picks is updated; where the test is not decided, either may have been, and what
        both hold is no longer known."""
        decided = self.truth(chooser.test, state)
        arms = [chooser.body, chooser.orelse]
        if decided is not None:
            arms = [arms[0] if decided else arms[1]]
        for arm in arms:
            path = dotted(arm)
            held = (state.env.get(path) or self.lookup(path, state)) if path else None
            if path is None or not (is_sequence(held) or (isinstance(held, Module) and held.layer_class() in SEQUENCE_CONTAINERS)):
                continue
            if decided is None:
                self._maybe_appended(path, held, call, state)
                continue
            method = call.func.attr.value
            value = _only_argument(call)
            update = self._layers_update if isinstance(held, Module) else self._sequence_update
            update(path, held, method, value, state)

    def _dict_item_update(self, item: cst.Subscript, call: cst.Call, state: State) -> None:
        """`groups["decay"].append(p)`: the list the dict holds under a known key is updated
        as one held by a name is; under a key not known (`groups[kind]`), or in a dict whose
        keys are not all known, which list changed is not known, and the dict's are forgotten."""
        holder = dotted(item.value)
        held = (state.env.get(holder) or self.lookup(holder, state)) if holder else None
        if not isinstance(held, Instance) or held.cls != "dict":
            return
        index = item.slice[0].slice if len(item.slice) == 1 else None
        key = self.value(index.value, state) if isinstance(index, cst.Index) else None
        value = attr_of(held.attrs, key) if isinstance(key, (str, int)) and held.keys is not None else None
        if value is None or not (is_sequence(value) or isinstance(value, Params)):
            self._forget_sequence(holder, held, state)
            return
        scratch = f"{holder}[{key!r}]"
        state.env[scratch] = value
        self._sequence_update(scratch, value, call.func.attr.value, _only_argument(call), state)
        updated = state.env.pop(scratch, None)
        state.bind(holder, replace(held, attrs=tuple((k, updated if k == key else v) for k, v in held.attrs)))

    def _maybe_appended(self, path: str, held, call: cst.Call, state: State) -> None:
        """`(skipped if name in frozen else trained).append(p)` with the test not decided:
        each list may or may not have got `p`. A parameter list keeps what it surely holds
        (the sparse table put in before); anything else about it is no longer known."""
        if isinstance(held, Params):
            appended = state.copy()  # (the list as it is if the test picked it)
            self._sequence_update(path, held, call.func.attr.value, _only_argument(call), appended)
            after = appended.env.get(path)
            kept = join(held, after) if isinstance(after, Params) else None
            if isinstance(kept, Params):
                state.env[path] = replace(kept, items=None)
                return
        self._forget_sequence(path, held, state)

    def _forget_sequence(self, path: str, held, state: State) -> None:
        """A list changed in place: every other name bound to the same list (`b = items`)
        no longer holds what the facts say."""
        for key in [k for k, v in state.env.items() if v is held and k != path]:
            state.bind(key, None)
        state.bind(path, None)

    def _passed_lists(self, call: cst.Call, state: State) -> None:
        """A list handed to a callable may be changed by it (`random.shuffle(xs)`), a
        generator is consumed: what they hold is forgotten, also under every other name bound
        to them, unless torch, a builtin that only reads it, or a method of a list or dict
        (which only reads its arguments) takes it."""
        func = call.func
        q = self.names.qualify(func)
        reads = (q is not None and is_torch(q)) or (
            isinstance(func, cst.Name) and func.value in _READING_BUILTINS and self.builtin(func.value, state))
        if isinstance(func, cst.Attribute):
            recv = self._held(dotted(func.value), state)
            reads = reads or is_sequence(recv) or (isinstance(recv, Instance) and recv.cls == "dict")
        known: list = []

        def followed() -> bool:
            if not known:
                found = self.calls.outcome(call) if self.calls is not None else None
                known.append(found is not None and found.followed)
            return known[0]

        for a in call.args:
            path = dotted(a.value)
            held = state.env.get(path) if path else None
            if isinstance(held, Items) and ((held.kind == "generator" and held.counted)
                                            or (held.kind == "list" and not reads)):
                self._forget_sequence(path, held, state)
            elif isinstance(held, Params) and held.items is not None and not reads and not followed():
                self._forget_sequence(path, held, state)
            elif isinstance(held, Module) and held.training is not None and not reads and not followed():
                # a callable not followed may put the model in the other mode (`evaluate(model)`)
                state.env[path] = replace(held, training=None)

    def _inplace_update(self, target, adds_entries: bool, node, state: State) -> None:
        path = dotted(target)
        fact = state.env.get(path) if path else None
        if isinstance(fact, Tensor) and fact.is_coo and adds_entries:
            where = node
            state.env[path] = replace(fact, coalesced=False).why(where, "an in-place update adds entries, leaving it uncoalesced")

    def _call_effect(self, call: cst.Call, state: State) -> None:
        func = call.func
        for name in self.calls.escaped.get(call, ()) if self.calls is not None else ():
            state.bind(name, None)  # a function passed to it may have rebound the name
        outcome = self.calls.outcome(call) if self.calls is not None else None
        if outcome is not None:
            if outcome.backward:
                state.saved.clear()
                self.ran_backward()
            if outcome.unplaced:
                self.unplaced(None, state)
            changed = []
            for path in sorted(outcome.effects, key=len):
                old = state.env.get(path) or self.lookup(path, state)
                state.bind(path, outcome.effects[path])
                self._into_owner(path, outcome.effects[path], state, old)
                if isinstance(old, Module) and outcome.effects[path] != old:
                    changed.append(path)  # `densify(model)`: a model the callee changed
            for path in changed:
                self._revoke(path, state)
            state.saved.update(outcome.saved)
            return
        q = self.names.qualify(func)
        where = call
        if q is not None:
            if q in api.BACKWARD_FUNCTIONS:
                state.saved.clear()
                self.ran_backward()
            if q in api.PRODUCTS or q in api.GRAD_COALESCED_BY:
                a_at, b_at = api.PRODUCTS.get(q, (0, None))
                a = arg(call, a_at)
                b = arg(call, b_at) if b_at is not None else None
                self._sparse_operand_effect(q, a, b, state, where)
            if q == "torch.mul":
                self._sparse_times_effect(arg(call, 0, "input"), arg(call, 1, "other"), state, where)
                self._sparse_times_effect(arg(call, 1, "other"), arg(call, 0, "input"), state, where)
            if q in api.FUNCTIONAL_EMBEDDINGS and literal(arg(call, None, "sparse")) is True:
                w = arg(call, 1, "weight")
                wp = dotted(w) if w is not None else None
                wt = state.env.get(wp) if wp else None
                # Only a weight the scope reads nowhere else with grad: a tied projection
                # (`h @ W.t()`) adds a dense gradient and the accumulated one is dense.
                if wp and wp in self.sparse_weights and isinstance(wt, Tensor):
                    state.env[wp] = replace(wt, grad_layout="coo", grad_coalesced=False).why(
                        where, "`F.embedding(..., sparse=True)` gives it an uncoalesced sparse grad")
            return
        if isinstance(func, cst.Name) and func.value == "setattr" and self._builtin("setattr", state):
            self._setattr(call, state)
            return
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        recv_path = dotted(func.value)
        if type(func.value) is cst.IfExp and method in _LIST_UPDATES:
            self._chosen_list_update(func.value, call, state)
            return
        if type(func.value) is cst.Subscript and method in _LIST_UPDATES:
            self._dict_item_update(func.value, call, state)
            return
        if method == "__init__" and recv_path is None and self.calls is not None:
            found = self.calls.base_init(call, state)
            if found is not None:
                state.bind(*found)
                return
        if method in _DICT_UPDATES:
            # `vars(args).update(...)`, `args.__dict__.update(...)`: any attribute may change
            owner = _namespace_of(func.value)
            if owner is not None and self._builtin("vars", state):
                state.bind(owner, None)
                return
        if method == "backward":
            state.saved.clear()
            self.ran_backward()
            return
        if recv_path is None:
            return
        recv = state.env.get(recv_path) or self.lookup(recv_path, state)
        if isinstance(recv, Items) and recv.kind == "generator":
            state.bind(recv_path, None)  # `gen.send(...)`, `gen.close()`: not followed
            return
        if method == "requires_grad_" and self.value(arg(call, 0, "requires_grad"), state) is False:
            if self._freeze(recv_path, state):
                return
        if method == "apply" and isinstance(recv, Module) and len(call.args) == 1 and not call.args[0].star:
            # `model.apply(fn)` runs `fn` on every submodule: one that sets their attributes
            # (`m.sparse = False`, `m.weight = ...`) leaves the model's gradients unknown
            fn = self._function_def(call.args[0].value, state)
            if fn is not None and _sets_attributes_of_argument(fn):
                self._module_changed(recv_path, recv, None, state)
            return
        if method in ("train", "eval") and isinstance(recv, Module):
            # what `self.training` reads in its methods and in its submodules' methods
            changed = self.fact(call, state)
            if isinstance(changed, Module):
                state.env[recv_path] = changed
                self._into_owner(recv_path, changed, state, recv)
                owner = recv_path.rpartition(".")[0]
                while owner:
                    # (a model one of whose submodules is in another mode: what its other
                    # submodules are in is still its own, but theirs is no longer one flag)
                    held = state.env.get(owner)
                    if isinstance(held, Module) and held.training is not None and held.training != changed.training:
                        state.env[owner] = replace(held, training=None)
                    owner = owner.rpartition(".")[0]
            return
        if method in ("add_module", "register_module") and isinstance(recv, Module):
            state.bind(recv_path, None)  # a submodule set by name: not followed
            self._into_owner(recv_path, None, state)
            return
        if method in _LIST_UPDATES and (is_sequence(recv) or (
                isinstance(recv, Module) and recv.layer_class() in SEQUENCE_CONTAINERS)):
            value = _only_argument(call)
            update = self._layers_update if isinstance(recv, Module) else self._sequence_update
            update(recv_path, recv, method, value, state)
            return
        if isinstance(recv, Tensor):
            if method == "requires_grad_":
                state.env[recv_path] = self._tensor_method(recv, method, call, state, where)
            elif method == "retain_grad":
                state.env[recv_path] = replace(recv, retains_grad=True)
            elif recv.is_coo and method.endswith("_") and self._probed(call, state, recv) is not None:
                after = self._probed(call, state, recv)
                state.env[recv_path] = replace(recv, coalesced=after.coalesced, evidence=after.evidence)
            elif method in api.UNCOALESCING_UPDATES:
                self._inplace_update(func.value, True, call, state)
            elif method == "to_dense":
                self._sparse_operand_effect("to_dense", func.value, None, state, where)
            elif method == "sum" and not call.args:
                self._sparse_operand_effect("sum", func.value, None, state, where)
            elif (method == "values" and recv.grad == LEAF and recv.grad_layout == "coo" and self.grad_enabled
                  and recv.grad_coalesced is not None):
                # a second way into the graph (an L1 term on the values): the gradients of
                # one backward are summed, and torch coalesces the sum
                state.env[recv_path] = replace(recv, grad_coalesced=None)
        elif isinstance(recv, Instance) and recv.cls == api.AUTOGRAD_CTX and method == "save_for_backward":
            # what backward reads back as `ctx.saved_tensors`, in order
            saved = None
            if not any(a.star or a.keyword is not None for a in call.args):
                saved = Items(tuple(self.fact(a.value, state) for a in call.args), "tuple")
            state.bind(f"{recv_path}.saved_tensors", saved)
        elif isinstance(recv, Instance) and recv.cls == "dict" and method == "update" and len(call.args) == 1 and (
                not call.args[0].star and call.args[0].keyword is None):
            # `cfg.update(overrides)`: the mapping's keys replace those it holds
            state.bind(recv_path, self.merged_into(recv, call.args[0].value, state))
        elif (isinstance(recv, Instance) and recv.cls == "dict" and method == "pop" and recv.keys is not None
              and call.args and not call.args[0].star and call.args[0].keyword is None
              and isinstance(self.known_value(call.args[0].value, state), str)):
            # `opt_cfg = cfg.pop("optimizer")`: the dict without that key
            key = self.known_value(call.args[0].value, state)
            state.bind(recv_path, replace(recv, keys=tuple(k for k in recv.keys if k != key),
                                          attrs=tuple((k, v) for k, v in recv.attrs if k != key)))
        elif isinstance(recv, Instance) and recv.cls == "dict" and method in _DICT_UPDATES:
            state.bind(recv_path, None)  # `cfg.update(k=v)`, `cfg.popitem()`: not followed
        elif isinstance(recv, Optimizer) and method == "step" and recv.params is not None:
            why = f"`{recv_path}.step()` adds the sparse grad into it, leaving it uncoalesced"
            def stepped(t):
                # SGD adds the gradient into the weight: an uncoalesced gradient leaves it
                # uncoalesced, a coalesced one keeps it as it was; a parameter without a
                # gradient (frozen, or no backward yet) is skipped
                if not isinstance(t, Tensor) or not t.is_coo or t.grad_coalesced is True:
                    return None
                if t.grad_layout is None and not (t.grad == LEAF and self._backward_ran()):
                    return None  # no gradient known, and none made yet
                if t.grad_layout not in (None, "coo"):
                    return None
                if t.grad_coalesced is False or t.grad_layout is None:
                    return replace(t, coalesced=False).why(where, why)
                return replace(t, coalesced=None) if t.coalesced is True else None

            changes = {}
            if _gradients_rewritten(self.scope_node if self.scope_node is not None else self.module_node):
                # a gradient coalesced, replaced or hooked where the step runs: what it adds
                # into the weight is not the one backward made
                return
            for p in _stepped_paths(recv.params):
                held = state.env.get(p) or self.lookup(p, state)
                if p not in recv.params.paths and not (isinstance(held, Tensor) and held.grad_layout == "coo"):
                    continue  # a model's parameter: only one a sparse gradient is known to reach
                t = stepped(held)
                if t is not None and self._gets_sparse_grad(p, state) and not _values_in_a_loss(
                        self.module_node, p.rsplit(".", 1)[-1]):
                    state.env[p] = changes[p] = t
            for model in recv.params.models:
                # the model's own record of the parameter, which code given the model reads
                # (`module.weight` in a callback)
                held = state.env.get(model) or self.lookup(model, state)
                changed = held
                for part, _ in (recv.params.parts or ()) if isinstance(held, Module) else ():
                    new = changes.get(f"{model}.{part}")
                    if new is not None:
                        changed = _with_attribute(changed, part.split("."), lambda a: replace(
                            a, coalesced=new.coalesced, evidence=new.evidence) if isinstance(a, Tensor) else None) or changed
                if changed is not held:
                    state.env[model] = changed

    def _gets_sparse_grad(self, path: str, state: State) -> bool:
        """Whether the model that holds the parameter at `path` (`layer.weight`) still says it
        gets a sparse gradient (not frozen since), or no model is known to hold it."""
        root, _, part = path.partition(".")
        model = state.env.get(root) or self.lookup(root, state)
        if not isinstance(model, Module) or model.parts is None or not part:
            return not isinstance(model, Module)
        flags = dict(model.parts).get(part)
        return flags is not None and flags.has_sparse is not False

    def _sparse_times_effect(self, a, b, state: State, where) -> None:
        """`s * d`: the elementwise product keeps a sparse `s` for the grad of `d` when `d`
        requires grad (checked under torch 2.13, COO, `d` dense or sparse)."""
        ap = dotted(a) if a is not None else None
        at = state.env.get(ap) if ap else None
        if not isinstance(at, Tensor) or not at.is_sparse or not self.grad_enabled:
            return
        bt = self.tensor(b, state) if b is not None else None
        if bt is not None and bt.requires_grad:
            state.saved[ap] = Evidence.at(where, f"`{ap}` is saved for backward by `*` (the other operand requires grad)")

    def _freeze(self, path: str, state: State) -> bool:
        """`model.emb.weight.requires_grad_(False)`: that parameter gets no gradient, in the
        module that owns it (the nearest enclosing path with a module fact)."""
        held = state.env.get(path)
        if isinstance(held, Tensor) and held.parameter:
            # (`p.requires_grad = False` in a loop over parameters: a later `if not
            # p.requires_grad: continue` skips it)
            state.env[path] = replace(held, grad=NOGRAD, grad_layout=None, grad_coalesced=None)
        if path in self.element_parts:
            owner, names = self.element_parts[path]
            frozen = [self._freeze(f"{owner}.{n}", state) for n in names]
            return bool(frozen) and all(frozen)
        whole = state.env.get(path) or self.lookup(path, state)
        if isinstance(whole, Module):
            # `m.requires_grad_(False)` on a module: every parameter it holds
            if whole.parts is None:
                state.bind(path, None)
                if not self._into_owner(path, None, state):
                    self.unplaced(path, state)
                return True
            frozen = tuple((n, NO_GRADS) for n, _ in whole.parts)
            state.env[path] = replace(whole, parts=frozen, flags=union_flags(f for _, f in frozen))
            self._into_owner(path, state.env[path], state, whole)
            self._revoke_frozen(path, state)
            return True
        if path in self.loop_owners:
            # which of its parameters this run stands for is not known
            owner = self.loop_owners[path]
            mapped = self._placed_by_caller(owner, state)
            state.bind(owner, None)
            if not self._into_owner(owner, None, state) and not mapped:
                self.unplaced(owner, state)
            return True
        found = self._enclosing_module(path, state)
        if found is not None:
            owner, module, suffix = found
            if module.parts is None:
                state.bind(owner, None)  # which parameter it was is unknown
                if not self._into_owner(owner, None, state):
                    self.unplaced(owner, state)
                return True
            frozen = tuple((n, NO_GRADS if n == suffix or n.startswith(suffix + ".") else f) for n, f in module.parts)
            state.env[owner] = replace(module, parts=frozen, flags=union_flags(f for _, f in frozen))
            self._aliases(owner, module, state.env[owner], state)
            for name, _ in frozen:
                if name == suffix or name.startswith(suffix + "."):
                    self.freeze_shared(f"{owner}.{name}", state)  # its other names are the same parameter
            self._into_owner(owner, state.env[owner], state, module)
            self._revoke_frozen(owner, state)
            return True
        if self.lookup(path.split(".")[0], state) is None:
            # a parameter of something not known (`model.towers[-1]`, a helper's argument
            # nothing is known of): any model may hold it
            self.unplaced(None, state)
        return False

    def _enclosing_module(self, path: str, state: State, nearest: bool = False) -> Optional[tuple[str, Module, str]]:
        """The nearest enclosing path of `path` that holds a module fact: (that path, the
        module, the rest of `path` under it). `nearest`: only when the nearest enclosing
        path with a fact holds a module (`cfg.model.emb` of a config object is no model's)."""
        parts = path.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            owner = ".".join(parts[:cut])
            module = state.env.get(owner) or self.lookup(owner, state)
            if isinstance(module, Module):
                return owner, module, ".".join(parts[cut:])
            if nearest and module is not None:
                return None
        return None

    def _into_owner(self, path: str, fact, state: State, old=None) -> bool:
        """A helper given a submodule (`freeze(model.emb)`) changed what its parameters get:
        the module that holds it holds the changed parameters too. False when no module is
        known to hold it; then a freeze (`old` had parameters that now get no gradient) may
        be of a submodule that any model holds under another name (`first =
        model.towers[0]`), and what they hold is forgotten."""
        if fact is not None and (not isinstance(fact, Module) or fact.parts is None):
            return False
        found = self._enclosing_module(path, state)
        if found is None:
            if (fact is not None and froze(old, fact) and not self._placed_by_caller(path, state)
                    and self._held_elsewhere(path, old, state)):
                self.unplaced(path, state)
            return False
        owner_path, owner, sub = found
        if owner.parts is None:
            return True
        prefix = sub + "."
        held = {n[len(prefix):]: f for n, f in owner.parts if n.startswith(prefix)}
        if fact is None:
            if held:  # what its submodule's parameters get is no longer known
                state.bind(owner_path, None)
                self._into_owner(owner_path, None, state)
            return True
        recorded = next((c for p, c, _ in owner.classes if p == sub), None)
        if recorded != fact.cls and (recorded is not None or fact.cls is not None):
            # another submodule set in its place (`swap(model)`): what a call of it runs is
            # no longer the class recorded
            state.bind(owner_path, None)
            self._into_owner(owner_path, None, state)
            return True
        if set(held) != {n for n, _ in fact.parts}:
            return True  # not the submodule it held (a new one was set): not followed here
        changed = dict(fact.parts)
        parts = tuple((n, changed[n[len(prefix):]] if n.startswith(prefix) else f) for n, f in owner.parts)
        # (what the submodule's own `forward` reads of its attributes, as they now are)
        classes = tuple((p, c, fact.attrs if p == sub else a) for p, c, a in owner.classes)
        if parts != owner.parts or classes != owner.classes:
            state.env[owner_path] = replace(owner, parts=parts, flags=union_flags(f for _, f in parts), classes=classes)
            self._aliases(owner_path, owner, state.env[owner_path], state)
            self._into_owner(owner_path, state.env[owner_path], state, owner)
        return True

    def _held_elsewhere(self, path: str, module: Module, state: State) -> bool:
        """Another model known here holds a submodule like this one (`side = model.side`, a
        loop over `model.towers`): it may be that very submodule. Two models built alike
        (`teacher, student = Net(), Net()`) hold no submodule like each other."""
        def like(a, b) -> bool:
            return a is not None and a.parts == b.parts and a.cls == b.cls and a.layers == b.layers
        facts = [*state.env.items(), *((k, v) for k, v in self.outer.items() if k not in state.env)]
        for key, fact in facts:
            held = [fact] if isinstance(fact, Module) else [v for _, v in fact.attrs if isinstance(v, Module)] \
                if isinstance(fact, Instance) else []
            for holder in held:
                if key != path and any(like(holder.child(sub), module) for sub in holder.submodules() or ()):
                    return True
        return False

    def _placed_by_caller(self, path: str, state: State) -> bool:
        """`path` is a parameter of the function analysed, known at its entry: what happens
        to it goes back to the caller's own name for it, and the caller places it."""
        root = path.split(".")[0]
        scope = self.scope_node
        return (isinstance(scope, cst.FunctionDef) and root in parameters_of(scope)
                and state.env.get(root) is not None)

    def _aliases(self, path: str, old: Module, new: Module, state: State) -> None:
        """Other names holding the module that was at `path` (`self.model = model`) hold it
        as it is now."""
        for key, fact in list(state.env.items()):
            # (an attribute holding an equal module is taken for the same one; two names
            # of this scope may be two models built alike: `teacher, student = Net(), Net()`)
            if key != path and "." in key and isinstance(fact, Module) and fact == old:
                state.env[key] = replace(new, evidence=fact.evidence)
            elif isinstance(fact, Instance) and any(v == old for _, v in fact.attrs if isinstance(v, Module)):
                state.env[key] = replace(fact, attrs=tuple((k, replace(new, evidence=v.evidence) if isinstance(v, Module)
                                                            and v == old else v) for k, v in fact.attrs))

    def _revoke_frozen(self, changed: str, state: State) -> None:
        """A freeze after an optimizer was built over the model (SparseAdam, then the dense
        head frozen) revokes what no longer holds, in a program that never unfreezes: a
        thaw (`requires_grad_(True)`, `p.requires_grad = True`) is not followed, and would
        bring the gradients back."""
        if self.calls is None:
            return
        ctx = self.calls.walker.ctx
        thaws = getattr(ctx, "_thaws", None)
        if thaws is None:
            thaws = ctx._thaws = _thaws(ctx.module)
        if not thaws:
            self._revoke(changed, state)

    def _revoke(self, changed: Optional[str], state: State) -> None:
        """Findings of this walk that rest on the model at `changed` (None: on any) are
        revoked unless they hold for the gradients its models get now."""
        if self.calls is None:
            return
        ctx = self.calls.walker.ctx

        def now(models):
            held = [self._held(m, state) for m in models]
            return union_flags(h.flags for h in held) if all(isinstance(h, Module) for h in held) else None
        guards = ctx.guards
        for i, g in enumerate(guards):
            if type(g) is cst.For and any(type(n) is cst.Name and n.value in self.loop_owners for n in walk(g.target)):
                # a loop over the model's own modules runs over all of them, and what it
                # tests of each one is decided by the module
                guards = guards[:i]
                break
        ctx.revoke(self, changed, now, tuple(map(id, guards)))

    def _backward_ran(self) -> bool:
        """Whether a backward has been walked before this point of the check."""
        return self.calls is not None and self.calls.walker.ctx.backwards > 0

    def ran_backward(self) -> None:
        """A backward pass: what a step after it finds is what the model was then."""
        if self.calls is not None:
            self.calls.walker.ctx.backwards += 1

    def unplaced(self, keep: Optional[str], state: State) -> None:
        """Parameters were frozen where no known module holds them by that name: every
        module that may hold a sparse one (`keep` aside) is no longer known, here and, for a
        callee, where it was called."""
        for key, fact in list(state.env.items()):
            if key not in state.env or key == keep:
                continue
            if isinstance(fact, Module) and fact.flags.has_sparse is not False:
                state.bind(key, None)
            elif isinstance(fact, Instance) and any(_may_be_sparse(v) for _, v in fact.attrs):
                # an object holding the model (`self.model`) holds it no longer known
                state.env[key] = replace(fact, attrs=tuple((k, v) for k, v in fact.attrs if not _may_be_sparse(v)))
        if self.calls is not None:
            self.calls.unplaced = True
        self._revoke(None, state)

    def _sparse_operand_effect(self, q: str, a, b, state: State, where) -> None:
        ap = dotted(a) if a is not None else None
        at = state.env.get(ap) if ap else None
        if not isinstance(at, Tensor) or not at.is_sparse:
            return
        if not self.grad_enabled:
            return  # (under `torch.no_grad()` the op gives nothing a gradient)
        if at.grad == LEAF and q in api.DENSE_GRAD_PRODUCTS:
            state.env[ap] = replace(at, grad_layout="strided", grad_coalesced=None).why(
                where, f"`{q.split('.')[-1]}` gives a sparse parameter a dense (strided) grad")
            at = state.env[ap]
        elif at.grad == LEAF and at.is_coo:
            coalesced = False if q == "to_dense" else api.GRAD_COALESCED_BY.get(q, False)
            if at.grad_layout == "coo" and at.grad_coalesced is False:
                coalesced = False
            text = f"the backward of `{q.split('.')[-1]}` gives it {'a coalesced' if coalesced else 'an uncoalesced'} sparse grad"
            at = replace(at, grad_layout="coo", grad_coalesced=coalesced).why(where, text)
            state.env[ap] = at
        if not self.grad_enabled:
            return
        name = q.split(".")[-1]
        bt = self.tensor(b, state) if b is not None else None
        if bt is not None and bt.requires_grad:
            state.saved[ap] = Evidence.at(where, f"`{ap}` is saved for backward by `{name}` (the other operand requires grad)")
        elif at.requires_grad and q in api.SAVE_SPARSE_FOR_OWN_GRAD:
            state.saved[ap] = Evidence.at(where, f"`{ap}` is saved for backward by `{name}` (its backward needs it for the grad of `{ap}` itself)")


_PRODUCT_OPERATORS = (cst.MatrixMultiply, cst.Multiply)


def _calls_in(node: cst.CSTNode) -> list:
    """Calls, matrix products and products in evaluation order (inner first), not entering
    lambdas."""
    out: list = []

    def walk(n: cst.CSTNode) -> None:
        t = type(n)
        if t in _SCOPE_TYPES:
            return
        for child in children(n):
            walk(child)
        if t is cst.Call or (t is cst.BinaryOperation and type(n.operator) in _PRODUCT_OPERATORS):
            out.append(n)

    try:
        walk(node)
    except RecursionError:
        return []
    return out


def _conditional_arms(node: cst.CSTNode) -> list:
    """(test, calls that run only where it is true, calls that run only where it is false)
    of each conditional expression and `and`/`or` of a statement, not entering lambdas or
    comprehensions."""
    out: list = []

    def walk(n: cst.CSTNode) -> None:
        t = type(n)
        if t in _SCOPE_TYPES or t in _COMPREHENSION_TYPES:
            # a comprehension binds names of its own: its tests are not decided by the
            # statement's facts (its calls all count)
            return
        if t is cst.IfExp:
            out.append((n.test, frozenset(_calls_in(n.body)), frozenset(_calls_in(n.orelse))))
        elif t is cst.BooleanOperation:
            # `a and f()` calls `f` only where `a` is true, `a or f()` only where it is false
            right = frozenset(_calls_in(n.right))
            out.append((n.left, right, frozenset()) if type(n.operator) is cst.And else (n.left, frozenset(), right))
        for child in children(n):
            walk(child)

    try:
        walk(node)
    except RecursionError:
        return []
    return out


def _namespace_of(expr: cst.BaseExpression) -> Optional[str]:
    """The object whose attribute dict `vars(obj)` or `obj.__dict__` is."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__":
        return dotted(expr.value)
    if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "vars"
            and len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None):
        return dotted(expr.args[0].value)
    return None


def _target_paths(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for el in target.elements:
            out.extend(_target_paths(el.value))
        return out
    if isinstance(target, cst.StarredElement):
        return _target_paths(target.value)
    p = dotted(target)
    return [p] if p else []


def elements_of(fact) -> Optional[tuple]:
    """The facts of the elements a value unpacks to, by position, when their number is known."""
    if isinstance(fact, Items):
        return fact.items if fact.counted else None
    if isinstance(fact, Params) and fact.items is not None:  # `p, q = [w1, w2]`
        return fact.items
    if isinstance(fact, Params) and fact.groups is None and fact.parts and len(fact.parts) <= _MAX_PARTS:
        # `model.parameters()` of a model whose parameters are all known: each in turn, with
        # the gradient its layer gives it; `named_parameters()` pairs each with its name
        model = fact.models[0] if len(fact.models) == 1 else None
        params = tuple(parameter_of(flags, fact.evidence, part_rank(fact.layers, name), model) for name, flags in fact.parts)
        if fact.named:
            return tuple(Items((Const(value=name), p)) for (name, _), p in zip(fact.parts, params))
        return params
    if isinstance(fact, Literal) and isinstance(fact.value, tuple):  # (a join of two sizes is not)
        return tuple(Literal(v) if isinstance(v, tuple) else Scalar(value=v) for v in fact.value)
    if isinstance(fact, Const) and isinstance(fact.value, tuple):
        return tuple(Const(value=v) for v in fact.value)
    if isinstance(fact, Instance) and fact.fields is not None:
        return tuple(attr_of(fact.attrs, f) for f in fact.fields)
    if isinstance(fact, Module):
        # `for layer in self.layers`: each layer of a ModuleList or Sequential in turn
        return layers_of(fact)
    return None


# a model with more parameters than this is iterated as their join, not one by one
_MAX_PARTS = 64


def _display(node) -> bool:
    """A list or tuple written out, without starred elements."""
    return isinstance(node, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in node.elements)


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_COMPREHENSION_TYPES = frozenset(_COMPREHENSIONS)


def _walruses(node: cst.CSTNode) -> list:
    """The `:=` of a statement or expression in evaluation order, each with whether it sits
    in a comprehension; not entering functions, lambdas or classes."""
    out: list = []

    def walk(n: cst.CSTNode, inside: bool) -> None:
        t = type(n)
        if t in _SCOPE_TYPES:
            return
        inner = inside or t in _COMPREHENSION_TYPES
        for child in children(n):
            walk(child, inner)
        if t is cst.NamedExpr:
            out.append((n, inside))

    try:
        walk(node, False)
    except RecursionError:
        return []
    return out


def _del_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [el.value for el in target.elements]
    return [target]


def _disjuncts(test: cst.BaseExpression) -> list:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return [*_disjuncts(test.left), *_disjuncts(test.right)]
    return [test]


def _tied(owner: Module, name: str) -> bool:
    """A parameter under `name` may be one that another name of `owner` shares."""
    if owner.ties is None:
        return True
    prefix = name + "."
    return any(n.lstrip("^") == name or n.lstrip("^").startswith(prefix) for group in owner.ties for n in group)


def _outside(owner: Module, name: str) -> tuple:
    """(parameters, torch layers, project submodules) of `owner` that are not under `name`."""
    prefix = name + "."

    def out(p: str) -> bool:
        return p != name and not p.startswith(prefix)

    return (tuple((p, f) for p, f in owner.parts if out(p)), tuple((p, c) for p, c in owner.layers if out(p)),
            tuple(c for c in owner.classes if out(c[0])))


def _with_submodule(owner: Module, name: str, fact) -> Optional[Module]:
    """`owner` with `fact` set as its submodule `name` (None: what it then holds is not
    known, as for a parameter or a value that is no module)."""
    if not isinstance(fact, Module) or fact.parts is None or fact.ties:
        return None
    prefix = name + "."
    parts, layers, classes = _outside(owner, name)
    parts += tuple((prefix + p, f) for p, f in fact.parts)
    layers += tuple((prefix + p if p else name, c) for p, c in fact.layers)
    classes += (((name, fact.cls, fact.attrs),) if fact.cls else ()) + tuple((prefix + p, c, a) for p, c, a in fact.classes)
    return replace(owner, parts=parts, flags=union_flags(f for _, f in parts), layers=layers, classes=classes,
                   evidence=owner.evidence + fact.evidence[-1:])


def _with_parameter(owner: Module, name: str, fact) -> Optional[Module]:
    """`model.emb.weight = nn.Parameter(vectors)` on a torch layer: the new dense parameter
    gets the gradient the layer gives its weight (an embedding made with `sparse=True` still
    looks it up sparsely), or none where it was made frozen. None: not such a replacement."""
    if (owner.cls is not None or owner.layer_class() is None or not isinstance(fact, Tensor) or not fact.parameter
            or fact.layout != "strided" or fact.grad not in (LEAF, NOGRAD)):
        return None
    if not any(p == name for p, _ in owner.parts):
        return None
    parts = tuple((p, (f if fact.grad == LEAF else NO_GRADS) if p == name else f) for p, f in owner.parts)
    return replace(owner, parts=parts, flags=union_flags(f for _, f in parts))


def _may_tie_sparse(value, fact) -> bool:
    """`value` reads a parameter a module already has (`model.emb.weight`, not a new
    `nn.Parameter(...)`) whose gradient may be sparse: setting it elsewhere ties the two."""
    if not isinstance(value, cst.Attribute):
        return False
    return fact is None or (isinstance(fact, Tensor) and fact.parameter and fact.grad_layout != "strided")


def _without_submodule(owner: Module, name: str) -> Module:
    """`owner` holding at `name` something not known: its other parameters keep their
    gradients, which are then all it surely has."""
    rest, layers, classes = _outside(owner, name)
    known = union_flags(f for _, f in rest)
    return replace(owner, parts=None, flags=Flags(known.has_sparse or None, known.has_dense or None,
                                                  known.sparse_param or None),
                   layers=layers, classes=classes, ties=None)


def _may_be_sparse(fact) -> bool:
    return isinstance(fact, Module) and fact.flags.has_sparse is not False


def _is_name(node, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def _is_connective(test) -> bool:
    return isinstance(test, cst.BooleanOperation) or (isinstance(test, cst.UnaryOperation)
                                                       and isinstance(test.operator, cst.Not))


def _connective(test, truth) -> Optional[bool]:
    """`not`, `and`, `or` over the truth `truth` gives each part (None: not decided)."""
    if isinstance(test, cst.UnaryOperation):
        inner = truth(test.expression)
        return None if inner is None else not inner
    left, right = truth(test.left), truth(test.right)
    if isinstance(test.operator, cst.And):
        return False if False in (left, right) else True if left is True and right is True else None
    return True if True in (left, right) else False if left is False and right is False else None


def _sets_attributes_of_argument(fn) -> bool:
    """Whether a function (or lambda) assigns an attribute of its first parameter, or
    freezes it (`m.sparse = False`, `setattr(m, ...)`, `m.requires_grad_(False)`): what
    `model.apply(fn)` changes in each submodule."""
    params = [*fn.params.posonly_params, *fn.params.params]
    if not params:
        return False
    name = params[0].name.value
    for n in walk(fn.body):
        targets = ()
        if type(n) is cst.Assign:
            targets = tuple(t.target for t in n.targets)
        elif type(n) in (cst.AugAssign, cst.AnnAssign):
            targets = (n.target,)
        for t in targets:
            if type(t) is cst.Attribute and (dotted(t) or "").split(".")[0] == name and t.attr.value != "data":
                return True
        if type(n) is cst.Call:
            func = n.func
            if type(func) is cst.Name and func.value == "setattr":
                return True
            if (type(func) is cst.Attribute and func.attr.value in ("requires_grad_", "register_parameter", "add_module")
                    and (dotted(func.value) or "").split(".")[0] == name):
                return True
    return False


def _thaws(module: cst.Module) -> bool:
    """Whether a module turns gradients back on anywhere: `requires_grad_()`,
    `requires_grad_(True)` or with a value not written out, `x.requires_grad = <not False>`."""
    for n in walk(module):
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "requires_grad_":
            if not (n.args and type(n.args[0].value) is cst.Name and n.args[0].value.value == "False"):
                return True
        elif type(n) is cst.Assign and any(type(t.target) is cst.Attribute and t.target.attr.value == "requires_grad"
                                           for t in n.targets):
            if not (type(n.value) is cst.Name and n.value.value == "False"):
                return True
    return False


def _only_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The one plain positional argument of a call (`items.append(x)`), or None."""
    if len(call.args) == 1 and not call.args[0].star and call.args[0].keyword is None:
        return call.args[0].value
    return None


def _stepped_paths(params) -> list[str]:
    """The paths of the parameters an optimizer steps: those named (`[model.weight]`), and
    the sparse parts of the models whose `parameters()` it was given (`layer.weight`)."""
    out = list(params.paths)
    for model in params.models:
        for part, flags in params.parts or ():
            if flags.sparse_param is not False and f"{model}.{part}" not in out:
                out.append(f"{model}.{part}")
    return out


def _with_attribute(fact, names: list[str], change):
    """`fact` with the attribute at the dotted path `names` replaced by what `change` makes
    of it; None when the path is not held or `change` gives None."""
    attrs = getattr(fact, "attrs", None)
    if not names or not attrs:
        return None
    head = names[0]
    held = dict(attrs).get(head)
    if held is None:
        return None
    new = change(held) if len(names) == 1 else _with_attribute(held, names[1:], change)
    if new is None:
        return None
    return replace(fact, attrs=tuple((n, new if n == head else f) for n, f in attrs))


def _values_in_a_loss(module, attribute: str) -> bool:
    """Whether a method of a model class of the module reads `.<attribute>.values()` with grad
    enabled (an L1 term over a sparse weight's values): a second way into the graph, whose
    gradient torch sums with the first, and the sum it coalesces; read by a regex once per
    module and attribute."""
    if module is None:
        return True

    def found() -> bool:
        read = re.compile(rf"\.{re.escape(attribute)}\.values\(\)")
        for klass in module.body:
            if isinstance(klass, cst.ClassDef) and _model_class(klass):
                for item in klass.body.body:
                    if isinstance(item, cst.FunctionDef):
                        code = cst.Module([]).code_for_node(item)
                        if read.search(code) and "no_grad" not in code and "inference_mode" not in code:
                            return True
        return False

    return _once_per_node(module, attribute, found)


def _model_class(klass: cst.ClassDef) -> bool:
    """A class that defines `forward` or derives from a `Module`, read by its syntax."""
    return any(isinstance(i, cst.FunctionDef) and i.name.value == "forward" for i in klass.body.body) or any(
        (dotted(b.value) or "").endswith("Module") for b in klass.bases)


_REWRITES_GRADIENT = re.compile(r"\.grad\s*(?:=(?!=)|\+=|-=|\*=)|\.grad\.(?:coalesce_|data)\b|register_(?:post_accumulate_grad_)?hook\(")
_read_of_nodes: dict[tuple, tuple] = {}  # (id of a node, what is asked) -> (the node, the answer)


def _once_per_node(node: cst.CSTNode, asked: str, read) -> bool:
    """`read()`, worked out once per node and question (nodes take no weak references, so
    the node is kept beside its answer and checked by identity)."""
    key = (id(node), asked)
    held = _read_of_nodes.get(key)
    if held is None or held[0] is not node:
        if len(_read_of_nodes) > 512:
            _read_of_nodes.clear()
        held = _read_of_nodes[key] = (node, read())
    return held[1]


def _gradients_rewritten(scope) -> bool:
    """Whether the code of a scope replaces, coalesces or hooks a gradient (`p.grad =
    p.grad.coalesce()`, `p.register_hook(...)`), read once per scope."""
    if scope is None:
        return True
    return _once_per_node(scope, "", lambda: bool(_REWRITES_GRADIENT.search(cst.Module([]).code_for_node(scope))))
