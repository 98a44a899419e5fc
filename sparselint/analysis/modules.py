"""What an `nn.Module` of the project is made of, read from the run of its constructor.

The evaluator runs a model class's `__init__` like any other call, with a new instance as
`self`; what it stores there (`self.emb = nn.Embedding(..., sparse=True)`, a submodule of
another class, an `nn.Parameter`) and what its bases' constructors store are the module's
parameters. This module turns those stored facts into the module's flags and parameter
names; it holds no evaluation of its own.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from .cst.names import dotted
from .cst.syntax import grad_free, read_with_grad, sparse_embedding_weight
from .cst.tree import walk
from .evaluation import ties
from .evaluation.facts import LEAF, NOGRAD, Module, Tensor, union_flags
from .evaluation.gradflags import DENSE, NONE as NO_GRADS, SPARSE, UNKNOWN, Flags

# what `origin` a base's weight carries when the constructor's `sparse` is not known
BASE_WEIGHT = "base weight"
# the parts of an attribute that is itself a parameter (`self.w = nn.Parameter(...)`)
PARAMETER = (("", None),)


def parameter_flags(t: Tensor) -> Flags:
    """The gradient an `nn.Parameter` (or a torch base class's weight) gets."""
    if t.grad is not None and not t.requires_grad:
        return NO_GRADS
    if t.grad_layout == "coo":
        return SPARSE
    if t.origin == BASE_WEIGHT and t.grad_layout is None:
        return UNKNOWN
    if t.is_sparse:
        return Flags(None, None, True)
    return DENSE


def from_run(receiver: Module, effects: dict, untracked: bool, stored_calls: frozenset,
             functional: dict, order: tuple = (), dense_weights: frozenset = frozenset()) -> Module:
    """The module `receiver` becomes once its constructor ran with these effects on `self`
    (keys `self.<attr>`). `stored_calls`: attributes the constructor assigns a call's result
    to: one whose fact is not known may be a submodule, so the parameter names are not all
    known. `functional`: attributes used as the weight of `F.embedding(..., sparse=True)`.
    `order`: the attributes the constructor's code sets, in the order it first sets them."""
    entries: dict[str, tuple[Flags, Optional[tuple]]] = {}
    layers: dict[str, tuple] = {}
    classes: dict[str, tuple] = {}
    groups: list = []
    shared: list = []
    ties_known = True
    ordered = True
    known = not untracked
    evidence: list = []
    dense: list = []
    why = ""
    for key, fact in effects.items():
        if not key.startswith("self.") or "." in key[len("self."):]:
            continue
        attr = key[len("self."):]
        sparse = False
        layers.pop(attr, None)
        classes.pop(attr, None)
        if isinstance(fact, Module) and attr in dense_weights and fact.flags.has_sparse \
                and fact.parts is not None and [p for p, _ in fact.parts] == ["weight"]:
            fact = replace(fact, flags=DENSE, parts=(("weight", DENSE),))
        if isinstance(fact, Module):
            entries[attr] = (fact.flags, fact.parts)
            layers[attr] = tuple((f"{attr}.{p}" if p else attr, c) for p, c in fact.layers)
            classes[attr] = (((attr, fact.cls, fact.attrs),) if fact.cls else ()) + tuple(
                (f"{attr}.{p}", c, a) for p, c, a in fact.classes)
            sparse = fact.flags.has_sparse is True
            lifted = ties.lift(fact.ties, attr)
            ties_known = ties_known and lifted is not None
            groups.extend(lifted or ())
            ordered = ordered and fact.ordered
            if fact.ties:
                shared.extend(e for e in fact.evidence if ties.SHARED in e.text and e not in shared)
        elif isinstance(fact, Tensor) and fact.parameter:
            entries[attr] = (parameter_flags(fact), PARAMETER)
            sparse = fact.grad_layout == "coo"
        elif fact is None and attr in stored_calls:
            known = False
        else:
            entries.pop(attr, None)
        if sparse and fact.evidence:
            evidence.extend(fact.evidence)
            why = why or f"`self.{attr}` holds {fact.evidence[-1].text.split(': ', 1)[0]}"
        elif isinstance(fact, Module) and fact.cls is None and fact.evidence and fact.flags.has_dense:
            dense.extend(fact.evidence)  # a torch layer made dense by a named choice (an option)
    for attr in stored_calls:
        if f"self.{attr}" not in effects and attr not in entries:
            known = False  # stored, but what it holds was never known
    for attr in functional:
        entries[attr] = (SPARSE, PARAMETER)
    rank = {attr: i for i, attr in enumerate(order)}
    ordered = ordered and all(attr in rank for attr in entries)
    parts: list[tuple[str, Flags]] = []
    for attr, (flags, sub) in sorted(entries.items(), key=lambda e: rank.get(e[0], len(rank))):
        if sub is None:
            known = False
            parts.append((attr, flags))
        elif sub is PARAMETER:
            parts.append((attr, flags))
        else:
            # (a layer without parameters, `self.act = nn.GELU()`, adds none)
            parts.extend((f"{attr}.{p}" if p else attr, f) for p, f in sub)
    flags = union_flags(f for _, f in parts)
    if not known:
        flags = Flags(flags.has_sparse or None, flags.has_dense or None, flags.sparse_param or None)
    own = receiver.evidence
    if why and own:
        # the instance's own line says why it has sparse gradients: an editor shows it first
        own = (replace(own[0], text=f"{own[0].text}; {why}"), *own[1:])
    return replace(receiver, flags=flags, parts=tuple(parts) if known else None,
                   layers=(*((p, c) for p, c in receiver.layers if p == ""),
                           *(c for attr in entries for c in layers.get(attr, ()))),
                   classes=tuple(c for attr in entries for c in classes.get(attr, ())) if known else (),
                   ties=ties.merged(groups) if ties_known else None, ordered=ordered and known,
                   evidence=own + tuple(dict.fromkeys([*shared[:1], *(evidence or dense)[:2]])))


def assignment_order(init: Optional[cst.FunctionDef]) -> tuple:
    """The attributes of `self` that `__init__`'s code sets, in the order of their first
    assignment in the text; only those first set by a statement of the body itself (one
    first set under an `if` or a loop may come first or later, or not at all)."""
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return ()
    params = [*init.params.posonly_params, *init.params.params]
    if not params:
        return ()
    me = params[0].name.value
    top = {id(small) for line in init.body.body if isinstance(line, cst.SimpleStatementLine) for small in line.body}
    first: dict[str, bool] = {}
    for node in walk(init.body):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == me:
                    first.setdefault(t.attr.value, id(node) in top)
    return tuple(attr for attr, at_top in first.items() if at_top)


def stored_calls(init: Optional[cst.FunctionDef]) -> frozenset:
    """Attributes of `self` that `__init__` assigns the result of a call to (a submodule
    built by a function or class is one)."""
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return frozenset()
    params = [*init.params.posonly_params, *init.params.params]
    if not params:
        return frozenset()
    me = params[0].name.value
    out = set()
    for node in walk(init.body):
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and isinstance(node.value, cst.Call):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == me:
                    out.add(t.attr.value)
    return frozenset(out)


def functional_sparse(klass: cst.ClassDef, qualify: Callable) -> dict[str, cst.Call]:
    """Attributes a method of the class passes as the weight of `F.embedding(..., sparse=True)`:
    their gradient is sparse whatever made them."""
    out: dict[str, cst.Call] = {}
    for node in walk(klass.body):
        weight = sparse_embedding_weight(node, qualify)
        if isinstance(weight, cst.Attribute) and isinstance(weight.value, cst.Name) and weight.value.value == "self":
            out.setdefault(weight.attr.value, node)
    return out


def densely_read(klass: cst.ClassDef, qualify: Callable) -> frozenset:
    """Submodules whose `weight` the class's `forward` reads in a computation of its own
    (`h @ self.items.weight.t()`, an output projection tied to an embedding): that weight
    gets a dense gradient as well, and a sparse and a dense gradient add up to a dense one."""
    # what computes the loss; other methods save, log or export the weights
    methods = [st for st in klass.body.body if type(st) is cst.FunctionDef and st.name.value == "forward"]
    paths: set = set()
    kept: set = set()  # reads that add no dense gradient
    for n in (n for m in methods for n in walk(m.body)):
        kind = type(n)
        if kind is cst.Attribute and n.attr.value == "weight":
            path = dotted(n)
            if path and path.startswith("self.") and path.count(".") == 2:
                paths.add(path)
        elif kind in (cst.Assign, cst.AnnAssign):
            # `w = self.emb.weight` or `self.out.weight = self.emb.weight`: another name for it
            kept.add(id(n.value))
        elif kind is cst.With and grad_free(n, qualify):
            # under `torch.no_grad()` (a max-norm renormalisation in place)
            kept.update(id(a) for a in walk(n.body) if type(a) is cst.Attribute and a.attr.value == "weight")
        else:
            # `F.embedding(x, self.emb.weight, sparse=True)` gives it a sparse gradient
            weight = sparse_embedding_weight(n, qualify)
            if weight is not None:
                kept.add(id(weight))
    if not paths:
        return frozenset()
    return frozenset(p.split(".")[1] for p in read_with_grad(methods, paths, kept, qualify))


def base_parameters(layer: Module) -> dict[str, Tensor]:
    """The parameters a torch layer's constructor stores on `self` when a class derives from
    the layer (`class Table(nn.Embedding)`): each as an `nn.Parameter` with the gradient
    the layer gives it."""
    out = {}
    for name, flags in layer.parts or ():
        grad_layout = "coo" if flags.has_sparse else "strided" if flags.has_dense else None
        t = Tensor(layout="strided", grad=LEAF if flags != NO_GRADS else NOGRAD, parameter=True,
                   grad_layout=grad_layout, grad_coalesced=False if grad_layout == "coo" else None,
                   origin=BASE_WEIGHT, evidence=layer.evidence)
        out[name] = t
    return out

