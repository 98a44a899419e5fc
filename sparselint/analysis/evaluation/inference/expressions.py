"""Expressions: the fact of a name, an attribute chain, an operator or a call."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from .. import shapes
from ....diagnostics import Evidence
from ..facts import (COMMAND_LINE, NOGRAD, NONLEAF, Callee, Choice, Const, Coroutine, Fact, Instance, Items, Literal, Module,
                     Optimizer, Params, Scalar, Tensor, attr_of, join, union_flags, union_params)
from ...cst.names import Names, dotted
from ...cst.syntax import assigned_names, parameters_of
from ...cst.tree import walk
from ..gradflags import NONE, UNKNOWN
from ...argparse_options import parsed_arguments, parsed_literal
from ...options import admit
from .values import _CONSTANTS, _FIXED_RESULT, _UNKNOWN, ABSENT, held_torch_callable, is_number, literal
from .state import State
from .containers import (ContainerFacts, _filters_on_requires_grad, parameter_of, _subset, param_groups, sequence_items,
                         sequence_of)
from .torch_calls import TorchCalls, _literal_tensor
from .effects import Effects
from .pyvalues import PythonValues, value_fact
from .objects import Objects
from .sharing import Sharing

_PATH_TYPES = frozenset({cst.Name, cst.Attribute, cst.Subscript})
# functions of the `math` module that return a Python number (never a tensor)
_MATH_NUMBERS = frozenset(f"math.{n}" for n in (
    "sqrt", "log", "log2", "log10", "log1p", "exp", "expm1", "pow", "floor", "ceil", "trunc", "fabs", "cos", "sin",
    "tan", "tanh", "atan", "atan2", "erf", "gamma", "lgamma", "hypot", "prod", "fsum", "isqrt", "comb", "factorial"))
_EVALUATED = frozenset({cst.IfExp, cst.BooleanOperation, cst.Comparison, cst.UnaryOperation, cst.FormattedString})


class Inference(ContainerFacts, TorchCalls, Effects, PythonValues, Objects, Sharing):
    """Derives facts for one scope (module body or one function body)."""

    def __init__(
        self,
        names: Names,
        summary: Callable[[str], Optional[Fact]] = lambda name: None,
        outer: Optional[dict[str, Fact]] = None,
        locals_: frozenset[str] = frozenset(),
        models: Optional[Callable[..., Optional[Module]]] = None,
        calls=None,
        project_names: frozenset[str] = frozenset(),
    ):
        self.names = names
        self.summary = summary
        self.outer = outer or {}
        self.locals = locals_
        self.models = models
        # call-site analyses of the file's own functions and classes (sparselint.calls)
        self.calls = calls
        # names of the functions and classes the file defines at module level
        self.project_names = project_names
        self.grad_enabled = True
        # the function whose body this inference reads (None for a module or class body)
        self.scope_node = None
        self.module_node = None  # the module whose code this runs in
        # id(module) -> (module, its checked config lookups): see `_checked_keys`
        self._checked: dict = {}
        # the entry point whose body this is (a public function of a package), if any
        self.entry = None
        # path -> the `F.embedding(..., sparse=True)` call of this scope it is the weight of
        self.sparse_weights: dict[str, cst.Call] = {}
        # False when the source holds no `:=`: no statement needs a search for one
        self.walrus_possible = True
        # a loop variable bound, in a per-element run, to parameters of a model known by
        # path: variable -> (model path, parameter names) (`for p in model.emb.parameters():
        # p.requires_grad = False` freezes them)
        self.element_parts: dict[str, tuple[str, tuple[str, ...]]] = {}
        # a loop variable over `X.parameters()` of a model X known by path, in any run of
        # the loop: variable -> X (a freeze written on it that no per-element run places
        # leaves X's parameters unknown)
        self.loop_owners: dict[str, str] = {}

    def lookup(self, path: str, state: State) -> Optional[Fact]:
        fact = state.env.get(path)
        if fact is not None:
            return fact
        head = path.split(".")[0]
        if head in self.locals:
            return None
        return self.outer.get(path)

    def builtin(self, name: str, state: State) -> bool:
        """The name means Python's builtin: no binding of this scope, the module or the
        project shadows it."""
        return name not in self.project_names and name not in self.locals and self.lookup(name, state) is None

    def tensor(self, node: cst.BaseExpression, state: State) -> Optional[Tensor]:
        fact = self.fact(node, state)
        return fact if isinstance(fact, Tensor) else None

    def value(self, node: Optional[cst.BaseExpression], state: State):
        """The Python value of a literal, or of a name that holds one (`sparse=sparse`)."""
        v = literal(node)
        if v is _UNKNOWN and node is not None and not isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return self.known_value(node, state)
        return v

    def looked_up(self, table: Instance, index: Optional[Fact], key: str) -> Optional[Fact]:
        """`table[key]`: what it holds there. An option's default used as the key admits
        every other key of the table, and what it picks carries why that key."""
        held = attr_of(table.attrs, key)
        if isinstance(index, Const) and index.option is not None:
            written = dict(table.written or ())
            for other, _ in table.attrs:
                admit(index, other, written.get(other), "a key of the table it indexes")
        if held is not None and isinstance(index, Const) and index.evidence and hasattr(held, "evidence"):
            held = replace(held, evidence=(*index.evidence, *held.evidence))
        return held

    def _parses_command_line(self, node: cst.Call, state: State) -> bool:
        """`parse_args()`, `parse_args(sys.argv[1:])`, or `parse_args(argv)` with `argv` None
        here (`def main(argv=None)` called without one): the program's own command line."""
        if not node.args:
            return True
        if len(node.args) != 1 or node.args[0].star or (node.args[0].keyword is not None
                                                        and node.args[0].keyword.value != "args"):
            return False
        held = self.fact(node.args[0].value, state)
        return (isinstance(held, Const) and held.value is None) or (isinstance(held, Instance) and held.cls == COMMAND_LINE)

    def _command_line(self, node: cst.Subscript) -> Optional[Instance]:
        """`sys.argv[1:]`: the program's own arguments, also once passed on (`main(sys.argv[1:])`)."""
        if dotted(node.value) == "sys.argv" and cst.Module([]).code_for_node(node.slice[0]) == "1:":
            return Instance(cls=COMMAND_LINE, evidence=(Evidence.at(node, "`sys.argv[1:]`: the command line"),))
        return None

    def _parsed_list(self, node: cst.Call, state: State) -> Optional[tuple]:
        """`parse_args(["--optimizer", "adagrad"])`, or a list of strings known otherwise (a
        caller's `main(["--clip", "0"])`): the options it gives."""
        given = node.args[0].value if len(node.args) == 1 and not node.args[0].star and (
            node.args[0].keyword is None or node.args[0].keyword.value == "args") else None
        held = self.fact(given, state) if given is not None else None
        if isinstance(held, Literal) and held.value == ():
            held = Const(value=())  # `parse_args([])`: every option at its default
        if not (isinstance(held, Const) and isinstance(held.value, tuple) and all(isinstance(v, str) for v in held.value)):
            return None
        # the function that builds the parser: the one called (`train_parser().parse_args(...)`)
        # or this one (`p = ArgumentParser(); p.add_argument(...); p.parse_args(...)`)
        recv = node.func.value if isinstance(node.func, cst.Attribute) else None
        if isinstance(recv, cst.Call) and isinstance(recv.func, cst.Name):
            parser = recv.func.value
        else:
            parser = self.scope_node.name.value if isinstance(self.scope_node, cst.FunctionDef) else ""
        known_only = isinstance(node.func, cst.Attribute) and node.func.attr.value == "parse_known_args"
        return parsed_literal(list(held.value), Evidence.at(given, ""), parser, known_only)

    def _choice(self, table: Instance, index: Optional[cst.BaseExpression], state: State) -> Optional[Choice]:
        """`OPTIMIZERS[cfg["optimizer"]]` with a key that the caller of this function passes
        (read from a parameter or from `self`) and that is not known here: one of the table's
        torch optimizer classes, each of which the table offers."""
        # (a table imported from another module holds at least the keys it holds there)
        keys = table.keys if table.keys is not None else tuple(k for k, _ in table.attrs)
        if index is None or len(keys) < 2 or self.fact(index, state) is not None:
            return None
        scope = self.scope_node
        if not isinstance(scope, cst.FunctionDef) or not _callers_key(index, scope):
            return None
        if type(index) is cst.Name:
            # a parameter of the entry point analysed, read nowhere but here: what a caller
            # of the package passes, checked by nothing (a known caller's value, or one a
            # helper validates first, is not every key of the table)
            if self.entry is None or index.value not in self.entry.params or _reads(scope, index.value) != 1:
                return None
        else:
            module = self.calls.walker.ctx.module if self.calls is not None else scope
            holder, key = _config_lookup(index)
            held = self._checked.get(id(module))
            if held is None or held[0] is not module:
                # (read once per module: the lookup is evaluated again at each use of its value)
                held = self._checked[id(module)] = (module, _checked_keys(module))
            if (_last_name(holder), key) in held[1]:
                return None  # (`if opt["optimizer"] not in SPARSE_OK: raise`, anywhere in the module)
        spelled = cst.Module([]).code_for_node(index)
        held = dict(table.attrs)
        written = dict(table.written or ())
        options = []
        for key in keys:
            fact = held.get(key)
            if not (isinstance(fact, Callee) and not fact.project and fact.target.startswith("torch.optim.")):
                return None
            options.append((key, fact, written.get(key)))
        shown = f"`{spelled}`" if len(spelled) <= 40 and "\n" not in spelled else "the key"
        return Choice(options=tuple(options), evidence=(Evidence.at(
            index, f"{shown}, which the caller chooses, picks the class from the table"),))

    def callee_name(self, func: cst.BaseExpression, state: State) -> Optional[str]:
        """The torch name a callee means: spelled out, or held by a name (`opt_cls(...)`)."""
        q = self.names.qualify(func)
        if q is None and type(func) in _PATH_TYPES:
            root = func
            while type(root) is cst.Attribute or type(root) is cst.Subscript:
                root = root.value
            if type(root) in (cst.Dict, cst.List, cst.Tuple):
                pass  # `{"adam": torch.optim.Adam, ...}[name]`: a table written out in the call
            elif type(root) is not cst.Name or (
                    root.value not in state.env and root.value not in self.outer
                    and (self.calls is None or root.value in self.locals or self.calls.imported_value(root.value) is None)):
                return None  # only a name bound in this scope, the module, or imported from the project
            fact = self.fact(func, state)
            if isinstance(fact, Callee) and not fact.project:
                return fact.target
        if q is None and isinstance(func, cst.Call):
            fact = self.fact(func, state)  # `getattr(torch.optim, "Adam")(params)`
            if isinstance(fact, Callee) and not fact.project:
                return fact.target
        return q

    def _with_partial_keywords(self, node: cst.Call, state: State) -> cst.Call:
        """A call of a `functools.partial` of a torch callable, spelled with the keywords the
        partial stored (those the call does not give itself), when they are plain values."""
        fact = self.fact(node.func, state)
        if not isinstance(fact, Callee) or fact.project or not fact.keywords:
            return node
        given = {a.keyword.value for a in node.args if a.keyword is not None}
        extra = []
        for name, value in fact.keywords:
            if name in given:
                continue
            if value is None or not isinstance(value, (bool, int, float, str)):
                return node  # a stored value not known: the call is not spelled out
            extra.append(cst.Arg(keyword=cst.Name(name), value=cst.parse_expression(repr(value))))
        return node.with_changes(args=[*node.args, *extra]) if extra else node

    def spelled_getattr(self, node: cst.BaseExpression, state: State) -> Optional[cst.Attribute]:
        """`getattr(obj, "name")`, or with a name the facts know (`getattr(cb, hook)` where
        the caller passed `"on_after_backward"`), spelled `obj.name`; None otherwise. The
        node is made here: it has no place in the source."""
        if type(node) is not cst.Call:
            return None
        func = node.func
        if (not isinstance(func, cst.Name) or func.value != "getattr" or len(node.args) != 2
                or any(a.star or a.keyword is not None for a in node.args) or not self._builtin("getattr", state)):
            return None
        name = self.known_value(node.args[1].value, state)
        if not isinstance(name, str) or not name.isidentifier():
            return None
        return cst.Attribute(value=node.args[0].value, attr=cst.Name(name))

    def _getattr(self, node: cst.Call, state: State) -> Optional[Fact]:
        """`getattr(obj, "name")`: what `obj.name` holds, or the torch class it names."""
        spelled = self.spelled_getattr(node, state)
        if spelled is None:
            return None
        name = spelled.attr.value
        q = self.names.qualify(spelled)
        if q is not None:
            # the class a name picks carries why that name (an option's value)
            chosen = self.fact(node.args[1].value, state)
            return Callee(target=q, evidence=chosen.evidence if isinstance(chosen, Const) else ()) if (
                q.startswith("torch.") and q.split(".")[-1][:1].isupper()) else None
        path = dotted(spelled)
        held = self.lookup(f"{path}", state) if path else None
        if held is not None:
            return held
        base = self.fact(node.args[0].value, state)
        if isinstance(base, (Instance, Module)) and not (isinstance(base, Instance) and base.cls in ("dict", "list", "tuple")):
            return attr_of(base.attrs, name)
        # `getattr(module, "name")` of a module of the project: what `module.name` holds
        return self._attribute(spelled, state) if base is None and isinstance(node.args[0].value, cst.Name) else None

    def fact(self, node: cst.BaseExpression, state: State) -> Optional[Fact]:
        # Facts are memoised for the length of one outermost evaluation (the state cannot
        # change inside it), so that asking the op table about a call, which looks at its
        # operands again, stays linear in the depth of nested calls.
        memo = getattr(self, "_memo", None)
        top = memo is None
        if top:
            memo = self._memo = {}
        try:
            key = (id(node), id(state))
            if key not in memo:
                memo[key] = self._fact(node, state)
            return memo[key]
        except RecursionError:
            return None
        finally:
            if top:
                self._memo = None

    def _fact(self, node: cst.BaseExpression, state: State) -> Optional[Fact]:
        # exact node types: an `isinstance` test of a LibCST class goes through ABCMeta, and
        # this runs for every expression of every statement
        t = type(node)
        if t is cst.Name:
            if node.value in _CONSTANTS:
                return _CONSTANTS[node.value]
            fact = self.lookup(node.value, state)
            if fact is None and node.value in self.project_names and node.value not in self.locals:
                return Callee(target=node.value, local=True)
            if fact is None and self.calls is not None and node.value not in self.locals:
                fact = self.calls.imported_value(node.value)
            if fact is None and node.value not in self.locals:
                q = self.names.qualify(node)  # `from torch import tanh`, read as a value
                if q is not None and held_torch_callable(q):
                    return Callee(target=q)
            return fact
        if t is cst.Integer or t is cst.Float:
            return Scalar(value=literal(node))
        if t is cst.SimpleString:
            v = literal(node)
            return Const(value=v) if isinstance(v, str) and len(v) <= 80 else None
        if t is cst.Attribute:
            return self._attribute(node, state)
        if t is cst.Dict:
            return self._dict(node, state)
        if t is cst.Call:
            return self._call(node, state)
        if t is cst.BinaryOperation:
            return self._binary(node, state)
        if t is cst.UnaryOperation and isinstance(node.operator, cst.Minus):
            held = self.tensor(node.expression, state)
            return self._derived(held, held.layout, None, [held], elementwise=True) if held else None
        if t in _EVALUATED:
            return self._evaluated(node, state)
        if t is cst.Subscript:
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice) and type(node.value) is cst.Attribute:
                argv = self._command_line(node)
                if argv is not None:
                    return argv
            base = self.fact(node.value, state)
            if isinstance(base, Tensor) and base.layout == "strided":
                return self._derived(base, "strided", None, [base])
            if isinstance(base, Instance) and base.cls == "dict" and len(node.slice) == 1:
                index = getattr(node.slice[0].slice, "value", None)
                key = self.value(index, state)
                if isinstance(key, str):
                    return self.looked_up(base, self.fact(index, state), key)
                return self._choice(base, index, state) if key is _UNKNOWN else None
            return self._item(base, node, state)
        if t is cst.List or t is cst.Tuple:
            return self._collection(node, state)
        if t is cst.Set:
            # `{"bias", "pos_embed"}`: the names a model says to skip (no order to iterate in)
            v = self.known_value(node, state)
            return value_fact(frozenset(v)) if isinstance(v, tuple) else None
        if t is cst.ListComp or t is cst.GeneratorExp:
            return self._comprehension(node, state) or self._comprehended(node, state)
        if t is cst.DictComp:
            return self._comprehended(node, state)
        if t is cst.NamedExpr:
            return self.fact(node.value, state)
        if t is cst.Await:
            awaited = self.fact(node.expression, state)
            return awaited.result if isinstance(awaited, Coroutine) else None
        if t is cst.Lambda:
            return self.calls.function_value(node, self, state) if self.calls is not None else None
        return None

    def _next(self, node: cst.Call, state: State) -> Optional[Fact]:
        """`next(it)` / `next(it, default)` of an iterator whose elements are known: the
        first one (a generator that does not count them gives what every one is); the
        default where it may be exhausted."""
        it = self.fact(node.args[0].value, state)
        if not isinstance(it, Items) or it.kind != "generator":
            return None
        default = self.fact(node.args[1].value, state) if len(node.args) == 2 else None
        if it.counted:
            return it.items[0] if it.items else default
        return it.items[0] if len(node.args) == 1 else join(it.items[0], default)

    def _partial(self, node: cst.Call, state: State) -> Optional[Callee]:
        """`functools.partial(f, a, k=b)` of a callable of the project: the same callable with
        the facts of `a` and `b` bound first, as they are when the partial is made."""
        func = self.fact(node.args[0].value, state)
        rest = node.args[1:]
        if not isinstance(func, Callee) or not func.project or any(a.star for a in rest):
            return None
        args = tuple(self.fact(a.value, state) for a in rest if a.keyword is None)
        given = {a.keyword.value: self.fact(a.value, state) for a in rest if a.keyword is not None}
        kwargs = tuple((k, v) for k, v in func.kwargs if k not in given) + tuple(given.items())
        return replace(func, args=func.args + args, kwargs=kwargs,
                       evidence=func.evidence + (Evidence.at(node, "arguments bound by `functools.partial`"),))

    def _grad_of(self, inputs: list[Optional[Tensor]]) -> Optional[str]:
        if not self.grad_enabled:
            return NOGRAD
        states = [t.requires_grad if t is not None else None for t in inputs]
        if any(s is True for s in states):
            return NONLEAF
        if states and all(s is False for s in states):
            return NOGRAD
        return None

    def _number_like(self, node: cst.BaseExpression) -> bool:
        """A number written out, a parameter of this function whose default is one
        (`laziness=0.5`), or arithmetic of those: what a caller passes there is taken to be
        a number too."""
        if is_number(node):
            return True
        if type(node) is cst.BinaryOperation:
            return self._number_like(node.left) and self._number_like(node.right)
        if type(node) is cst.UnaryOperation and type(node.operator) in (cst.Minus, cst.Plus):
            return self._number_like(node.expression)
        scope = self.scope_node
        if (type(node) is cst.Name and isinstance(scope, cst.FunctionDef) and isinstance(scope.body, cst.IndentedBlock)
                and node.value not in assigned_names(scope.body.body)):
            return any(p.name.value == node.value and p.default is not None and is_number(p.default)
                       for p in (*scope.params.params, *scope.params.kwonly_params))
        return False

    def _derived(self, base: Optional[Tensor], layout, coalesced, inputs, origin="op", elementwise=False) -> Tensor:
        """A new tensor computed from `inputs`; an elementwise op keeps the base's needs."""
        ev = base.evidence if base is not None else ()
        needs = bool(elementwise and base is not None and base.needs_sparse_grad)
        return Tensor(layout=layout, coalesced=coalesced, grad=self._grad_of(inputs), origin=origin,
                      needs_sparse_grad=needs, evidence=ev)

    def _attribute(self, node: cst.Attribute, state: State) -> Optional[Fact]:
        path = dotted(node)
        if path is not None:
            fact = self.lookup(path, state)
            if fact is not None:
                return fact
        attr = node.attr.value
        q = self.names.qualify(node)
        if q is not None:
            if q in ("math.pi", "math.e", "math.tau", "math.inf"):
                return Scalar()
            return Callee(target=q) if held_torch_callable(q) else None
        base = self.fact(node.value, state)
        where = node
        if (base is None and isinstance(node.value, cst.Name) and self.calls is not None
                and node.value.value not in self.locals and self.lookup(node.value.value, state) is None):
            return self.calls.imported_value(node.value.value, attr)  # `helpers.make` of `import helpers`
        if isinstance(base, Instance):
            held = attr_of(base.attrs, attr)
            return held if held is not None else self._member(node, base, state)
        if isinstance(base, Callee):
            return self._member(node, base, state)
        if isinstance(base, Tensor):
            if attr == "grad":
                if base.grad_layout in ("coo", "strided"):
                    t = Tensor(layout=base.grad_layout, coalesced=base.grad_coalesced, grad=NOGRAD, is_grad=True, origin="grad", evidence=base.evidence)
                    if base.grad_layout == "coo":
                        state_text = {False: "uncoalesced", True: "coalesced", None: "of unknown coalescing"}[base.grad_coalesced]
                        return t.why(where, f"its `.grad` is a sparse COO tensor, {state_text}")
                    return t.why(where, "its `.grad` is dense")
                if base.grad_layout == "mixed":
                    return Tensor(grad=NOGRAD, is_grad=True, origin="grad", evidence=base.evidence)
                return None
            if attr == "data":
                return replace(base, grad=NOGRAD, parameter=False, origin="data", values_of=None)
            if attr == "T" and base.literal is not None:
                value = shapes.transpose(base.literal)
                return _literal_tensor(value, base) if value is not None else None
            if attr in ("T", "mT", "H", "mH"):
                return self._derived(base, base.layout, None, [base])
            return None
        if isinstance(base, Optimizer) and attr == "param_groups":
            return param_groups(base)
        if isinstance(base, Module):
            held = attr_of(base.attrs, attr)
            if held is not None:
                return held
            if attr == "training" and base.training is not None:
                return Const(base.training, evidence=(Evidence.at(node, "a module is in training mode until `.eval()`"
                                                                  if base.training else "set by `.eval()`"),))
            if any(p == attr for p, _, _ in base.classes):
                child = base.child(attr)  # a submodule of a project class, parameters or not
                if child is not None:
                    return child
            exact = [f for p, f in base.parts or () if p == attr]
            if exact:
                return parameter_of(exact[0], base.evidence)
            child = base.child(attr)
            if child is not None and child.parts == (("", child.flags),):
                return parameter_of(child.flags, child.evidence)
            if child is not None:
                return child
            if attr in ("weight", "bias") and base.kind in ("Embedding", "EmbeddingBag"):
                return parameter_of(base.flags, base.evidence)
            return self._member(node, base, state)
        return None

    def _member(self, node: cst.Attribute, base: Fact, state: State) -> Optional[Fact]:
        """What the object's class gives `obj.name`: a property's value, a bound method, a
        class attribute (the project's classes are the calls' business)."""
        return self.calls.member(node, base, state) if self.calls is not None else None

    def _binary(self, node: cst.BinaryOperation, state: State) -> Optional[Fact]:
        op = node.operator
        left, right = node.left, node.right
        if isinstance(op, cst.Add):
            lp, rp = self.fact(left, state), self.fact(right, state)
            if isinstance(lp, Params) and isinstance(rp, Params):
                return union_params(lp, rp)
            li, ri = sequence_items(lp), sequence_items(rp)
            if li is not None and ri is not None:
                tuples = all(isinstance(f, Items) and f.kind == "tuple" for f in (lp, rp))
                return sequence_of("tuple" if tuples else "list", li + ri)
            if isinstance(lp, Const) and isinstance(rp, Const) and isinstance(lp.value, str) and isinstance(rp.value, str):
                return value_fact(lp.value + rp.value)
        lt, rt = self.tensor(left, state), self.tensor(right, state)
        if isinstance(op, cst.MatrixMultiply):
            if lt is None:
                return None
            layout = "strided" if rt is not None and rt.layout == "strided" else None
            shape = shapes.matmul_shape(lt.shape, rt.shape) if rt is not None else None
            return replace(self._derived(lt, layout, None, [lt, rt]), shape=shape)
        scalar_l = is_number(left) or isinstance(self.fact(left, state), Scalar)
        scalar_r = is_number(right) or isinstance(self.fact(right, state), Scalar)
        if scalar_l and scalar_r:
            return Scalar()
        if isinstance(op, (cst.Multiply, cst.Divide)):
            if lt is not None and scalar_r:
                return self._probed(node, state, lt) or self._derived(lt, lt.layout, None, [lt], elementwise=True)
            if rt is not None and scalar_l and isinstance(op, cst.Multiply):
                return self._probed(node, state, rt) or self._derived(rt, rt.layout, None, [rt], elementwise=True)
        if lt is None or rt is None:
            known, other = (lt, right) if lt is not None else (rt, left)
            if isinstance(op, cst.Multiply) and known is not None and known.is_coo and self._number_like(other):
                # `(1 - laziness) * p_rw`: a number times a sparse COO tensor is sparse COO, as
                # coalesced as it was (another operand may be a CSR mask, a wrapper object, or
                # a broadcast that coalesces)
                return self._derived(known, "coo", known.coalesced, [known])
            if lt is not None and lt.layout == "strided" and (scalar_r or scalar_l or self._number_like(right)):
                return self._derived(lt, "strided", None, [lt])
            if rt is not None and rt.layout == "strided" and (scalar_l or scalar_r or self._number_like(left)):
                # (`laziness * torch.eye(n)` with `laziness=0.5`: a number, as a caller passes)
                return self._derived(rt, "strided", None, [rt])
            if lt is not None and lt.layout == "strided" and lt.requires_grad and isinstance(op, cst.Divide):
                # `w / norm`: a dense tensor divided by what is not known gives a dense one
                # when it runs (torch divides nothing by a sparse tensor), in `w`'s graph; a
                # sparse tensor may be divided by a zero-dim one, so the other way is not known
                return self._derived(lt, "strided", None, [lt])
            if isinstance(op, cst.Multiply) and known is not None and known.layout == "strided" and known.requires_grad:
                # `edge_mask * norm`: whatever the other factor is, the product is in the
                # graph of the one that requires grad (its layout follows the other)
                return self._derived(known, None, None, [known])
            return None
        if lt.layout == "strided" and rt.layout == "strided":
            return self._derived(lt, "strided", None, [lt, rt])
        if isinstance(op, cst.Multiply) and (lt.is_sparse or rt.is_sparse) and None not in (lt.layout, rt.layout):
            sparse = lt if lt.is_sparse else rt
            return self._derived(sparse, sparse.layout, None, [lt, rt])
        if isinstance(op, (cst.Add, cst.Subtract)) and lt.is_coo and rt.is_coo:
            return self._probed(node, state, lt)
        return None

    def _call(self, node: cst.Call, state: State) -> Optional[Fact]:
        func = node.func
        where = node
        outcome = self.calls.outcome(node) if self.calls is not None else None
        if outcome is not None and outcome.returned is not None:
            return outcome.returned
        made = self._held_class_call(node, state)
        if made is not None:
            return made
        if isinstance(func, cst.Attribute) and func.attr.value in ("parse_args", "parse_known_args"):
            parsed = parsed_arguments() if self._parses_command_line(node, state) else self._parsed_list(node, state)
            if parsed is not None:
                # the command line's options in the configuration being checked (an explicit
                # argument list is what it parses instead)
                namespace = Instance(cls="argparse.Namespace", attrs=parsed)
                return namespace if func.attr.value == "parse_args" else Items((namespace, None))
        q = self.callee_name(func, state)
        if q in _MATH_NUMBERS:
            return Scalar()  # `math.sqrt(fan_in)`: a Python number, whatever it is given
        if q == "functools.partial" and node.args and not node.args[0].keyword:
            target = self.callee_name(node.args[0].value, state)
            if target is not None:
                kws = tuple((a.keyword.value, self.value(a.value, state)) for a in node.args[1:] if a.keyword is not None)
                return Callee(target=target, keywords=kws)
            return self._partial(node, state)
        if (type(func) is cst.Call and self.callee_name(func.func, state) == "functools.wraps" and len(node.args) == 1
                and not node.args[0].star and node.args[0].keyword is None):
            # `functools.wraps(fn)(wrapper)`: the wrapper, with the name of what it wraps
            return self.fact(node.args[0].value, state)
        if q in ("copy.deepcopy", "copy.copy") and len(node.args) == 1 and not node.args[0].star:
            # a teacher, an EMA or a best-so-far copy of a model: the same layers, with the
            # same gradients (a shallow copy even shares them)
            held = self.fact(node.args[0].value, state)
            if isinstance(held, Module):
                return replace(held, evidence=(*held.evidence, Evidence.at(node, f"`{q}` of a model: the same layers")))
        if q == "asyncio.run":
            # runs the coroutine to its end: what it returns
            main = self.fact(node.args[0].value, state) if node.args and not node.args[0].star else None
            return main.result if isinstance(main, Coroutine) else None
        if q == "collections.OrderedDict":
            return self._dict_call(node, state)
        if q is not None and self.names.qualify(func) is None:
            node = self._with_partial_keywords(node, state)  # `Emb(10, 4)` of `partial(nn.Embedding, sparse=True)`
        if q is not None and self.names.qualify(func) == q:
            made = self._object_call(q, node, state)
            if made is not None:
                return made
        if q is not None:
            return self._torch_call(q, node, state, where)
        computed = self._evaluated(node, state) or self._container_call(node, state) or self._getattr(node, state)
        if computed is not None:
            return computed
        if isinstance(func, cst.Name):
            if func.value in ("list", "tuple", "iter") and len(node.args) == 1 and not node.args[0].star:
                inner = self.fact(node.args[0].value, state)
                if isinstance(inner, Items) and self.builtin(func.value, state):
                    # a new list (a copy), or an iterator over the same elements
                    return replace(inner, kind="generator" if func.value == "iter" else func.value)
                return inner if isinstance(inner, Params) else None
            if (func.value == "next" and len(node.args) == 1 and isinstance(node.args[0].value, cst.GeneratorExp)
                    and self.builtin("next", state)):
                # `next(t for t in xs)`: the first element the generator gives
                gen = self._comprehended(node.args[0].value, state)
                return gen.items[0] if isinstance(gen, Items) and gen.items else None
            if (func.value == "next" and 1 <= len(node.args) <= 2 and not any(a.star or a.keyword for a in node.args)
                    and self.builtin("next", state)):
                return self._next(node, state)
            if func.value == "dict" and func.value not in self.project_names and self.lookup("dict", state) is None:
                return self._dict_call(node, state)
            if func.value == "filter" and len(node.args) == 2:
                inner = self.fact(node.args[1].value, state)
                if isinstance(inner, Params):
                    return inner if _filters_on_requires_grad(node.args[0].value) else _subset(inner)
                return None
            made = self.calls.exception(node, state) if self.calls is not None else None
            if made is not None:
                return made
            fact = self.summary(func.value)
            if isinstance(fact, Tensor):
                return fact.why(where, f"returned by `{func.value}()`")
            if fact is not None:
                return fact
        model = self.models(node, self, state) if self.models is not None else None
        if model is not None:
            return model
        if isinstance(func, cst.Attribute):
            recv = self.fact(func.value, state)
            method = func.attr.value
            if isinstance(recv, Tensor):
                return self._tensor_method(recv, method, node, state, where)
            if recv is None and method in _FIXED_RESULT:
                # the operation alone fixes the result's layout, whatever the receiver is
                layout, coalesced = _FIXED_RESULT[method]
                t = Tensor(layout=layout, coalesced=coalesced, origin="conversion")
                return t.why(where, f"`.{method}()` returns a {'coalesced ' if coalesced else ''}sparse {layout.upper()} tensor")
            if isinstance(recv, Module):
                if method in ("parameters", "named_parameters"):
                    # `named_parameters(remove_duplicate=False)` yields a shared parameter under each name
                    once = self.argument(node, "remove_duplicate", 2, state) if method == "named_parameters" else True
                    parts = (recv.distinct_parts() if once is True or once is ABSENT
                             else recv.parts if once is False else None)
                    owner = dotted(func.value)
                    flags = recv.flags
                    recurse = self.argument(node, "recurse", 0 if method == "parameters" else 1, state)
                    if recurse is not True and recurse is not ABSENT:
                        # `m.parameters(recurse=False)`: the module's own, none of its submodules'
                        # (a loop over `model.modules()` meets the model itself first)
                        parts = tuple(p for p in parts if "." not in p[0]) if parts is not None and recurse is False else None
                        flags = union_flags(f for _, f in parts) if parts is not None else UNKNOWN
                    return Params(flags=flags, named=method == "named_parameters", parts=parts,
                                  evidence=recv.evidence, models=(owner,) if owner else (), layers=recv.layers)
                if method == "requires_grad_" and self.argument(node, "requires_grad", 0, state) is False:
                    # `Teacher(...).requires_grad_(False)`: a model none of whose parameters get a gradient
                    return replace(recv, flags=NONE, parts=tuple((n, NONE) for n, _ in recv.parts)
                                   if recv.parts is not None else None)
                if method in ("train", "eval"):
                    return replace(recv, training=_training_mode(method, node, self.argument(node, "mode", 0, state)))
                if method in ("to", "cuda", "cpu", "float", "double", "requires_grad_"):
                    return recv
                if method in _SUBMODULES and not node.args:
                    return _submodules(recv, method)
        if isinstance(func, cst.Name) or isinstance(func, cst.Attribute):
            callee = self.fact(func, state)
            if isinstance(callee, Module):
                return Tensor(layout="strided", grad=NONLEAF if self.grad_enabled else NOGRAD, origin="op")
        return None


# methods of a module that iterate over its submodules
_SUBMODULES = frozenset({"modules", "named_modules", "children", "named_children"})


def _submodules(model: Module, method: str) -> Optional[Items]:
    """What `model.modules()` and its kin yield, when every parameter of the model is known
    by name: the submodules that hold parameters (a layer without any, such as `nn.ReLU`,
    is left out), in the order they were set."""
    paths = model.submodules()
    if paths is None:
        return None
    if method.endswith("children"):
        pairs = [(p, model.child(p)) for p in paths if "." not in p]
    else:
        pairs = [("", model), *((p, model.child(p)) for p in paths)]
    if method.startswith("named_"):
        return Items(tuple(Items((Const(value=p), m)) for p, m in pairs), "generator")
    return Items(tuple(m for _, m in pairs), "generator")


def _config_lookup(node: cst.CSTNode) -> Optional[tuple[cst.BaseExpression, str]]:
    """(the config, the key) of `opt["optimizer"]` or `opt.get("optimizer", "sgd")`."""
    if (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "get"
            and node.args and node.args[0].keyword is None and isinstance(node.args[0].value, cst.SimpleString)):
        return node.func.value, node.args[0].value.evaluated_value
    if (type(node) is cst.Subscript and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.SimpleString)):
        return node.value, node.slice[0].slice.value.evaluated_value
    return None


def _last_name(holder: cst.BaseExpression) -> str:
    """`opt` of `self.opt` or of `opt`."""
    return holder.attr.value if type(holder) is cst.Attribute else getattr(holder, "value", "")


def _callers_key(index: cst.BaseExpression, scope: cst.FunctionDef) -> bool:
    """A key as the caller gives it: a parameter the function never rebinds (`name`), or a
    key of a config dict it or its object was given (`opt["optimizer"]`,
    `self.opt["optimizer"]`, `opt.get("optimizer", "sgd")`). An attribute (`self.optim_name`,
    `cfg.optimizer`, `args.optimizer`) may hold what a constructor, a record class or a
    parser's `choices` checked; argparse options are read where the parser is."""
    lookup = _config_lookup(index)
    holder = index if type(index) is cst.Name else lookup[0] if lookup is not None else None
    if type(holder) is cst.Name:
        return holder.value in parameters_of(scope) and holder.value not in assigned_names(scope.body.body)
    return (lookup is not None and type(holder) is cst.Attribute and type(holder.value) is cst.Name
            and holder.value.value == "self")


def _reads(scope: cst.FunctionDef, name: str) -> int:
    return sum(1 for node in walk(scope.body) if type(node) is cst.Name and node.value == name)


def _checked_keys(module: cst.CSTNode) -> frozenset:
    """(config name, key) of each config lookup that code of the module compares, matches,
    sets or hands to a call other than `get`: a check may restrict it to some of a table's
    keys (`if opt["optimizer"] not in SPARSE_OK: raise`, `validate(opt["optimizer"])`)."""
    checked = []

    def lookups_in(node) -> None:
        for n in walk(node):
            lookup = _config_lookup(n)
            if lookup is not None:
                checked.append((_last_name(lookup[0]), lookup[1]))

    for node in walk(module):
        t = type(node)
        if t is cst.Comparison:
            lookups_in(node)
        elif t is cst.Match:
            lookups_in(node.subject)
        elif t is cst.AssignTarget or t is cst.AugAssign or t is cst.AnnAssign:
            lookups_in(node.target)
        elif t is cst.Call and not (type(node.func) is cst.Attribute and node.func.attr.value == "get"):
            for a in node.args:
                lookups_in(a.value)
    return frozenset(checked)


def _training_mode(method: str, node: cst.Call, mode) -> Optional[bool]:
    """What `model.train(...)` or `model.eval()` leaves `model.training`: None when the
    argument is not known."""
    if method == "eval":
        return False if not node.args else None
    if not node.args:
        return True
    return mode if isinstance(mode, bool) else None
