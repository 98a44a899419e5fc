"""What a rule may ask while the engine walks a file, and how it reports."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostics import Diagnostic, Edit, Evidence, Fix
from .evaluation.facts import Callee, Const, Fact, Scalar, Tensor
from .torchops.opcall import number_kind
from .cst.names import Names, dotted
from ..source import split_lines
from .cst.tree import Order, child_list
from .entry import caller_key
from .. import notebook
from .cst.syntax import (NOT_WRITES, assigned_names, backward_calls, contains_backward, declared_names, grad_free,
                         handed_on, operand_names, parameters_of, read_with_grad, reads_of)

# Expressions whose parts may run many times, or never, for one run of their statement
_REPEATED = frozenset({cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})
# Calls that read their arguments and keep no handle on them
_HOLDS_NOTHING = frozenset({"print", "len", "repr", "str", "format", "isinstance", "type", "id", "hasattr",
                            "bool", "int", "float", "round", "abs"})
_LOG_METHODS = frozenset({"debug", "info", "warning", "error", "log"})
# torch functions whose result shares the storage of their argument
_VIEWS = frozenset({"view", "narrow", "select", "transpose", "t", "as_strided", "squeeze", "unsqueeze", "reshape",
                    "flatten", "expand", "detach", "alias", "permute", "movedim", "unbind", "split", "chunk",
                    "diagonal", "view_as_real", "view_as_complex", "broadcast_to", "swapaxes", "swapdims"})


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in NOT_WRITES


@dataclass
class Scope:
    node: cst.CSTNode
    backward_calls: list[cst.Call]


# a callee's call runs again after a backward pass (see `Context.backward_at_call`)
REPEATED = "repeated"


class Context:
    def __init__(self, path: str, source: str, names: Names, module: cst.Module):
        self.path = path
        self.source = source
        self.names = names
        self.module = module
        self._ranges = None
        self._places = None
        # where the positions of a module shared by many checks are kept (calls._parse)
        self.positions_kept: Optional[dict] = None
        self._order = None
        self.parents: dict[cst.CSTNode, Optional[cst.CSTNode]] = {}
        self.diagnostics: list[Diagnostic] = []
        self.state = None
        # what rules share while they look at one node in one state (the op table's verdict
        # of a call, which four rules read): emptied before the next node's rules run
        self.node_memo: dict = {}
        # a public module of a package: its public functions are entry points (entry.py)
        self.public_module = False
        self.scope: Optional[Scope] = None
        self.inference = None
        self.loops: list[cst.CSTNode] = []
        self.statement: Optional[cst.CSTNode] = None
        self.line_node: Optional[cst.CSTNode] = None
        self._loop_backward: dict[cst.CSTNode, bool] = {}
        self._assigned: dict[cst.CSTNode, set[str]] = {}
        self._backward_in: dict = {}
        self._seen: dict = {}  # finding key -> its index in self.diagnostics
        self._provisional: set = set()  # keys of findings a later context may say better (see `report`)
        self._unsafe_here: set = set()  # finding keys whose fix some context makes unsafe
        # finding key -> one `_Report` per report of it: the finding is revoked once no
        # report of it is live (see `revoke`)
        self._depends: dict = {}
        # the compound statements (`if`, loops, `try`, `match`) the walk is inside, outermost first
        self.guards: list = []
        # how many backward passes the walk has gone through
        self.backwards = 0
        self._revoked: set[int] = set()  # indices in self.diagnostics of findings revoked
        # other files whose content the findings depend on (model classes defined there)
        self.dependencies: set[str] = set()
        # names bound to functions of other project modules whose source holds a token
        self.imported: frozenset[str] = frozenset()
        # for a module another file's check runs into: (its text, its path, that file's
        # context), until `imported` is worked out on first use
        self.imported_pending: Optional[tuple] = None
        # the prefilter tokens of the rules that run on this file
        self.tokens = None  # a sparselint.tokens.Tokens
        # the function being analysed was called at a point that a backward call follows
        self.backward_after_call = False
        self._module_for_code = cst.Module(body=[])

    # -- positions and code ------------------------------------------------------------

    @property
    def ranges(self):
        # Positions cost a full code generation pass: computed once, on the first report.
        if self._ranges is None:
            self._ranges = _positions_of(self.module, self.positions_kept)
        return self._ranges

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """1-based line and column where a node starts."""
        r = self.ranges.get(node)
        if r is None:
            return (0, 0)
        return (r.start.line, r.start.column + 1)

    def span(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
        r = self.ranges[node]
        return (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)

    @property
    def places(self) -> "Places":
        """What places this module's nodes, for evidence that travels to another file."""
        if self._places is None:
            if self.positions_kept is None:
                # one store for this context and its Places: whichever needs positions first
                # computes them for both
                self.positions_kept = {} if self._ranges is None else {"ranges": self._ranges}
            self._places = Places(self)
        return self._places

    def resolve(self, evidence: Iterable[Evidence]) -> tuple[Evidence, ...]:
        """Evidence placed: lines and columns, nodes of other modules with their file."""
        return self._resolve(evidence)

    def _resolve(self, evidence: Iterable[Evidence]) -> tuple[Evidence, ...]:
        out = []
        for e in evidence:
            if e.node is not None:
                there = e.where
                line, col = (there or self).position(e.node)
                if not line:
                    continue  # a node made by the analysis (a call it spells out) has no place
                path = e.path if there is not None and e.path != self.path else ""
                e = Evidence(line, col, e.text, path=path)
            elif e.path == self.path:
                e = Evidence(e.line, e.column, e.text)
            out.append(e)
        return tuple(out)

    def code(self, node: cst.CSTNode) -> str:
        return self._module_for_code.code_for_node(node)

    # -- facts -------------------------------------------------------------------------

    def fact(self, node: cst.BaseExpression) -> Optional[Fact]:
        return self.inference.fact(node, self.state)

    def value(self, node: Optional[cst.BaseExpression]):
        """The Python value of a literal or of a name holding one; `inference._UNKNOWN` else."""
        return self.inference.value(node, self.state)

    def unpacked(self, call: cst.Call, keyword: str):
        """The value a `**mapping` argument of a call passes for a keyword: `inference.ABSENT`
        when none passes it, `inference._UNKNOWN` when that cannot be known."""
        return self.inference.unpacked(call, keyword, self.state)

    def argument(self, call: cst.Call, keyword: str, position: Optional[int] = None):
        """The value a call passes for a parameter of a library function, bound by Python's
        rules (keyword, position, `*seq`, `**mapping`): `inference.ABSENT` when nothing passes
        it, `inference._UNKNOWN` when what may pass it cannot be read."""
        return self.inference.argument(call, keyword, position, self.state)

    def tensor(self, node: cst.BaseExpression) -> Optional[Tensor]:
        fact = self.fact(node)
        return fact if isinstance(fact, Tensor) else None

    def number(self, node: cst.BaseExpression) -> Optional[str]:
        """The probed stand-in for a Python number `node` holds (see `torchops.opcall`):
        "num" when its value is not known, None when it is not known to be a number."""
        fact = self.fact(node)
        if not isinstance(fact, Scalar):
            return None
        return number_kind(fact.value)

    def truth(self, node: cst.BaseExpression) -> Optional[bool]:
        """True or False when `node` is known to hold that flag, else None."""
        fact = self.fact(node)
        return fact.value if isinstance(fact, Const) and isinstance(fact.value, bool) else None

    def computed_on_read(self, node: cst.BaseExpression) -> bool:
        """Whether `node` (`self.adj`) is a property its class's getter computes on every
        read, rather than a value stored on the object."""
        calls = getattr(self.inference, "calls", None)
        return type(node) is cst.Attribute and calls is not None and calls.computed_on_read(node, self.state)

    def imported_modules(self) -> list[cst.Module]:
        """The parsed modules of the project that this file imports (directly): code that
        runs on what this file hands it. One that does not parse is left out."""
        from .project.models import project_index
        from .calls import _parse
        out = []
        for file in project_index().imported_files(self.path, self.source):
            self.dependencies.add(file)
            parsed = _parse(file)  # (parsed once per process for calls into it)
            if parsed is not None:
                out.append(parsed[0])
        return out

    def caller_argument(self, node: cst.BaseExpression) -> Optional[tuple[str, str]]:
        """(function, parameter) when `node` is a parameter of a public function being checked
        as an entry point, still holding whatever a caller outside the package passed (nothing
        is known of it): rules may then word what that function does to it as its contract."""
        entry = getattr(self.inference, "entry", None)
        if entry is None or not isinstance(node, cst.Name):
            return None
        name = node.value
        if name not in entry.params and (self.state is None or caller_key(name) not in self.state.env):
            return None
        fact = self.fact(node)
        if fact is None or (isinstance(fact, Tensor) and fact.admitted is not None and fact.admitted[1] == name):
            return entry.function, name
        return None

    def function_of(self, expr: cst.BaseExpression):
        """The lambda or `def` of this file that a callable expression runs (a hook, a
        callback passed by name); None when that is not known."""
        if isinstance(expr, cst.Lambda):
            return expr
        fact = self.fact(expr)
        if not isinstance(fact, Callee) or fact.args or fact.kwargs:
            return None
        if isinstance(fact.node, (cst.Lambda, cst.FunctionDef)):
            return fact.node
        calls = self.inference.calls
        if fact.local and calls is not None and not fact.closure:
            return calls.walker.functions.get(fact.target)
        return None

    def autograd_function(self, call: cst.Call):
        """(forward, backward) definitions of the custom `torch.autograd.Function` whose
        `apply` this call is, or None."""
        calls = getattr(self.inference, "calls", None)
        if calls is None or self.state is None:
            return None
        return calls.autograd_function(call, self.state)

    def backward_gradients(self, call: cst.Call):
        """What the `backward` of the custom autograd function `Fn.apply(...)` returns for
        this call, one gradient per input (an `Items` fact, or one fact for a single input),
        when the engine ran it; None otherwise."""
        calls = getattr(self.inference, "calls", None)
        return calls.gradients(call) if calls is not None else None

    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        """The torch name an expression means, also through a name that holds a torch class
        or a `functools.partial` of one."""
        if self.state is None:
            return self.inference.names.qualify(node)
        return self.inference.callee_name(node, self.state)

    @property
    def grad_enabled(self) -> bool:
        return self.inference.grad_enabled

    def saved_for_backward(self, node: cst.BaseExpression) -> Optional[Evidence]:
        path = dotted(node)
        return self.state.saved.get(path) if path else None

    def anything_saved_for_backward(self) -> Optional[Evidence]:
        """Evidence of some tensor a forward op saved in this scope, if any."""
        return next(iter(self.state.saved.values()), None)

    # -- syntax around a node ----------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.parents.get(node)

    def usage(self, node: cst.BaseExpression) -> str:
        """How the value of an expression is used: "read", "inplace" (receiver of an in-place
        method), "item-assign" / "item-augassign" (`x[i] = v` / `x[i] += v` on it),
        "augassign" (`x += v`), "assign" (an assignment target)."""
        parent = self.parents.get(node)
        # exact type tests (the classes are concrete): `isinstance` against a LibCST class
        # that fails runs a Python-level `__instancecheck__`, and this runs for every name
        kind = type(parent)
        if kind is cst.Attribute and parent.value is node:
            grand = self.parents.get(parent)
            if type(grand) is cst.Call and grand.func is parent and is_inplace_method(parent.attr.value):
                return "inplace"
            return "read"
        if kind is cst.Subscript and parent.value is node:
            grand = type(self.parents.get(parent))
            if grand is cst.AssignTarget:
                return "item-assign"
            if grand is cst.AugAssign and self.parents.get(parent).target is parent:
                return "item-augassign"
            return "read"
        if kind is cst.AugAssign and parent.target is node:
            return "augassign"
        if kind is cst.AssignTarget:
            return "assign"
        return "read"

    def inplace_call(self, node: cst.BaseExpression) -> Optional[cst.Call]:
        """The in-place method call whose receiver is this expression, if any."""
        parent = self.parent(node)
        if self.usage(node) == "inplace":
            return self.parent(parent)
        return None

    def backward_at_call(self, site: cst.CSTNode):
        """What a callee run from `site` is told of the backward passes after it: False (none
        follows), True (one does), or `REPEATED`: the call runs again after a backward pass,
        in a loop with one here or around the call that ran this scope (a tensor its object
        built once, in a graph, is then backpropagated through twice)."""
        if not self.backward_follows(site):
            return False
        if self.backward_after_call == REPEATED:
            return REPEATED
        func = dotted(site.func) if type(site) is cst.Call else None
        root = func.split(".")[0] if func else None
        for loop in self.loops:
            # (an object built again on each run has a new graph each time; a backward that
            # may keep the graph (`retain_graph=`) can go through it again)
            if root and self.loop_has_backward(loop) and root not in self.assigned_in(loop) and not any(
                    a.keyword is not None and a.keyword.value in ("retain_graph", "create_graph")
                    for call in self.backward_calls_in(loop) for a in call.args):
                return REPEATED
        return True

    @property
    def backward_repeats(self) -> bool:
        """This scope runs again after a backward pass (see `backward_at_call`)."""
        return self.backward_after_call == REPEATED

    def backward_follows(self, node: cst.CSTNode, subject: Optional[cst.BaseExpression] = None) -> bool:
        """A backward call comes later in this scope, or in a loop around this statement that
        does not rebuild `subject` on each iteration."""
        return self.backward_after(node, subject) is not None

    def backward_after(self, node: cst.CSTNode, subject: Optional[cst.BaseExpression] = None):
        """The backward call that runs after this node (see `backward_follows`): the call of
        this scope, or None when there is none; `True` inside a callee whose caller runs
        backward after the call (the call is in the caller's file)."""
        if self.backward_after_call:
            return True  # inside a callee whose caller runs backward after the call
        root = (dotted(subject) or "").split(".")[0] if subject is not None else ""
        for loop in self.loops:
            if self.loop_has_backward(loop) and not (root and root in self.assigned_in(loop)):
                calls = self.backward_calls_in(loop)
                return calls[0] if calls else True
        if self.scope is None or not self.scope.backward_calls:
            return None  # no scope: an instance built for a class's own methods, not by a call
        if self._order is None:
            self._order = Order(self.module)
        pre, last = self._order.pre, self._order.end
        here = self.line_node or node
        end = last.get(here, pre.get(here, 0))
        at = pre.get(node, -1)
        for call in self.scope.backward_calls:
            start = pre.get(call, -1)
            if start > end:
                return call  # a later statement
            if start <= at <= last.get(call, -1):
                return call  # `expr.backward()` around this node runs after it
        return None

    def loop_has_backward(self, loop: cst.CSTNode) -> bool:
        if loop not in self._loop_backward:
            self._loop_backward[loop] = contains_backward(loop)
        return self._loop_backward[loop]

    def operands_in(self, node: cst.CSTNode) -> list[cst.Name]:
        """Names that feed computations in a block, outside `torch.no_grad()` blocks."""
        qualify = self.inference.names.qualify
        return operand_names(node, lambda with_node: grad_free(with_node, qualify))

    def backward_calls_in(self, node: cst.CSTNode) -> list[cst.Call]:
        found = self._backward_in.get(node)
        if found is None:
            found = self._backward_in[node] = backward_calls(node)
        return found

    def assigned_in(self, node: cst.CSTNode) -> set[str]:
        if node not in self._assigned:
            body = getattr(getattr(node, "body", None), "body", None)
            self._assigned[node] = assigned_names(body if body is not None else [node])
        return self._assigned[node]

    def outer_name(self, name: str) -> bool:
        """`name` is read here from outside the enclosing function: neither a parameter, nor
        bound in its body, nor declared `global`/`nonlocal`. Assigning it anywhere in the
        function would make it a local, and every read before that assignment would raise
        `UnboundLocalError`."""
        node = self.scope.node if self.scope is not None else None
        if not isinstance(node, cst.FunctionDef):
            return False
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        local = parameters_of(node) | {p.split(".")[0] for p in assigned_names(body)}
        return name not in local and name not in declared_names(body)

    def uses_after(self, name: str) -> list[tuple[cst.Name, cst.CSTNode, Optional[cst.CSTNode]]]:
        """The uses of `name` on the lines of this scope after the current statement, each with
        its parent and grandparent (what the value is fed to)."""
        node = self.scope.node if self.scope is not None else None
        if node is None or self.line_node is None:
            return []
        body = node.body if isinstance(node, cst.Module) else getattr(node.body, "body", ())
        last = self.span(self.statement or self.line_node)[2]
        return [use for use in reads_of(body, name) if self.position(use[0])[0] > last]

    def evaluated_once(self, node: cst.CSTNode) -> bool:
        """Running the current statement evaluates `node` exactly once, whatever happens:
        not in a lambda, a comprehension, an arm of a conditional expression or the right
        side of `and`/`or`. A line inserted before the statement then runs where `node` does."""
        stmt, line = self.statement, self.line_node
        if not isinstance(line, cst.SimpleStatementLine) or not any(s is stmt for s in line.body):
            return False
        if self.ranges.get(stmt) is None:
            return False  # a statement the analysis made (a lambda's body): not in the file
        path = _path_to(stmt, node)
        if path is None:
            return False
        for here, child in zip(path, path[1:]):
            kind = type(here)
            if kind in _REPEATED:
                return False
            if kind is cst.IfExp and child is not here.test:
                return False
            if kind is cst.BooleanOperation and child is here.right:
                return False
        return True

    def held_elsewhere(self, node: cst.BaseExpression) -> bool:
        """Rebinding the name or `.grad` attribute `node` to a new tensor here could change
        what the program computes: something else may hold the old tensor and miss the
        edits made through the name from now on. That is a parameter written in place later
        in its function (its caller holds the tensor), or any name whose tensor an earlier use
        in its scope (or one anywhere in a loop around this statement) handed on
        (`g = p.grad`, `{"adj": adj}`, `self.adj = adj`)."""
        scope = self.scope.node if self.scope is not None else None
        if isinstance(node, cst.Name):
            name = node.value
            matches = lambda n: type(n) is cst.Name and n.value == name  # noqa: E731
        elif isinstance(node, cst.Attribute) and node.attr.value == "grad":
            # `p.grad` and `q.grad` may be one gradient (`p` a loop variable over `q`'s module)
            matches = lambda n: type(n) is cst.Attribute and n.attr.value == "grad"  # noqa: E731
        else:
            return True
        if scope is None or self.statement is None:
            return True
        body = scope.body if isinstance(scope, cst.Module) else getattr(scope.body, "body", ())
        if self._order is None:
            self._order = Order(self.module)
        pre, end = self._order.pre, self._order.end
        here = self.line_node or self.statement
        start, stop = pre.get(here, -1), end.get(here, -1)

        def in_loop(at: int) -> bool:
            return any(pre.get(loop, -1) <= at <= end.get(loop, -1) for loop in self.loops)
        if any(not start <= pre.get(n, -1) <= stop and (pre.get(n, -1) < start or in_loop(pre.get(n, -1)))
               for n in handed_on(body, matches, self._may_hold)):
            return True
        if isinstance(node, cst.Name) and isinstance(scope, cst.FunctionDef) and name in parameters_of(scope):
            return any(pre.get(n, -1) > stop or (pre.get(n, -1) < start and in_loop(pre.get(n, -1)))
                       for n in handed_on(body, matches, self._may_hold, writes=True))
        return False

    def _may_hold(self, call: cst.Call) -> bool:
        """A call that may keep a handle on its arguments: anything but printing, logging,
        formatting, and torch's functions that build a new tensor."""
        name = self.inference.names.qualify(call.func) or (call.func.value if type(call.func) is cst.Name else "")
        if name in _HOLDS_NOTHING or name.startswith("logging."):
            return False
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _LOG_METHODS:
            return False
        last = name.rsplit(".", 1)[-1]
        return not (name.startswith("torch.") and not last.endswith("_") and last not in _VIEWS)

    def read_with_grad_elsewhere(self, node: cst.BaseExpression) -> bool:
        """The tensor this name or attribute path spells is read somewhere else in this scope
        in a way that can carry its gradient: not through `.data`, `.grad`, `.detach()` or a
        shape read, not as an optimizer's argument or an assignment target. An attribute path
        (`self.weight`), or a name the function reads from outside, is looked for in the whole
        module, where other functions read it. True when the expression is not a path."""
        path = dotted(node)
        scope = self.scope.node if self.scope is not None else None
        if not path or scope is None:
            return True
        if "." in path or isinstance(scope, cst.Module) or self.outer_name(path):
            stmts = list(self.module.body)
        elif isinstance(scope.body, cst.IndentedBlock):
            stmts = list(scope.body.body)
        else:
            return True
        return bool(read_with_grad(stmts, {path}, {id(node)}, self.names.qualify))

    def displayed(self, stmt: cst.CSTNode) -> bool:
        """This expression statement's value is shown, not discarded: it is the last
        statement of a notebook cell, at top level, with no trailing semicolon (what IPython
        displays)."""
        line = self.line_node
        if not notebook.is_joined(self.source) or not isinstance(stmt, cst.Expr):
            return False
        if not isinstance(line, cst.SimpleStatementLine) or line.body[-1] is not stmt:
            return False
        if isinstance(stmt.semicolon, cst.Semicolon) or self.position(line)[1] != 1:
            return False
        return notebook.ends_cell(self.source, self.span(stmt)[2])

    def torch_spelling(self, qualified: str) -> Optional[str]:
        return self.inference.names.local_for(qualified)

    # -- fixes -------------------------------------------------------------------------

    def replace(self, node: cst.CSTNode, new: cst.CSTNode) -> Edit:
        l1, c1, l2, c2 = self.span(node)
        if hasattr(new, "lpar") and getattr(node, "lpar", None):
            # The recorded range of a node excludes its own parentheses, which stay around the
            # new text; a node written without them (`(a or b).data` replaced by its value)
            # keeps the new one's own
            new = new.with_changes(lpar=(), rpar=())
        return Edit((l1, c1), (l2, c2), self.code(new))

    def replace_text(self, node: cst.CSTNode, text: str) -> Edit:
        l1, c1, l2, c2 = self.span(node)
        return Edit((l1, c1), (l2, c2), text)

    def insert_before(self, node: cst.CSTNode, text: str) -> Edit:
        l1, c1, _, _ = self.span(node)
        return Edit((l1, c1), (l1, c1), text)

    def statement_indent(self, stmt: cst.CSTNode) -> Optional[str]:
        """The indentation of a statement that starts its own physical line, else None."""
        line, col = self.position(stmt)
        text = self.source_line(line)
        prefix = text[: col - 1]
        return prefix if prefix.strip() == "" else None

    def source_line(self, line: int) -> str:
        if not hasattr(self, "_lines"):
            self._lines = split_lines(self.source)
        return self._lines[line - 1] if 0 < line <= len(self._lines) else ""

    def newline(self) -> str:
        for nl in ("\r\n", "\n", "\r"):
            if nl in self.source:
                return nl
        return "\n"

    # -- reporting ---------------------------------------------------------------------

    def report(self, rule, node: cst.CSTNode, message: str, *, evidence: Iterable[Evidence] = (),
               fix: Optional[Fix] = None, suggestion: str = "", when: str = "", provisional: bool = False,
               depends: Iterable[str] = (), holds: Optional[Callable] = None) -> None:
        """`provisional`: a finding another context of the same line may say better (an
        optimizer class picked by a key not known here, which a run with the option's values
        names); the first finding that is not provisional takes its place. `depends`: the
        models (names in the scope being walked) whose gradients the finding rests on, and
        `holds`, given their gradient flags, whether it still does: a change to one of them
        later in the walk revokes it unless it still holds (see `revoke`)."""
        l1, c1, l2, c2 = self.span(node)
        key = (rule.code, l1, c1, l2, c2)
        reports, depends = self._depends.setdefault(key, []), tuple(depends)
        if depends or not any(not r.models for r in reports):
            reports.append(_Report(self.inference, depends, holds, True, tuple(map(id, self.guards)), self.backwards))
        index = self._seen.get(key)
        if index in self._revoked:
            # revoked in one walk of its line, reported in another that does not change the model
            self._revoked.discard(index)
            self.diagnostics[index] = self._diagnostic(rule, (l1, c1, l2, c2), message, evidence, fix, suggestion, when)
            return
        if key in self._provisional and not provisional:
            self._provisional.discard(key)
            index = self._seen[key]
            earlier = self.diagnostics[index]
            self.diagnostics[index] = self._diagnostic(rule, (l1, c1, l2, c2), message, evidence,
                                                       _shared_fix(earlier.fix, fix), suggestion, when)
            return
        if key in self._seen:
            # the line runs in several contexts (its function called from here and from
            # there): one edit serves them all, so it is only as safe as its least safe one
            index = self._seen[key]
            earlier = self.diagnostics[index]
            shared = _shared_fix(earlier.fix, fix)
            if shared is not earlier.fix:
                self.diagnostics[index] = replace(earlier, fix=shared)
            return
        self._seen[key] = len(self.diagnostics)
        if provisional:
            self._provisional.add(key)
        if fix is not None and fix.safe and key in self._unsafe_here:
            fix = replace(fix, safe=False)
        self.diagnostics.append(self._diagnostic(rule, (l1, c1, l2, c2), message, evidence, fix, suggestion, when))

    def _diagnostic(self, rule, span: tuple, message: str, evidence, fix, suggestion: str, when: str) -> Diagnostic:
        l1, c1, l2, c2 = span
        return Diagnostic(code=rule.code, name=rule.name, message=message, path=self.path,
                          line=l1, column=c1, end_line=l2, end_column=c2, evidence=self._resolve(evidence),
                          fix=fix, suggestion=suggestion, when=when or rule.when)

    def revoke(self, inference, changed: Optional[str], now: Callable, guards: tuple) -> None:
        """A model of the scope `inference` walks was changed after findings about it were
        reported (`model.emb.sparse = False` after the optimizer was built over
        `model.parameters()`): the gradients it gets at the step are the new ones. A report
        that rests on the model at `changed`, on a module inside it or on one that holds it
        (`changed` None: on any model) is revoked unless it holds for the gradient flags
        `now` gives its models (None: not known), and a revoked one comes back where it
        holds again. A change revokes only where it surely follows the report: no backward
        pass ran in between, and it is inside no test or loop the report is not inside
        (`guards`: the ids of those it is inside). A finding goes when all its reports have."""
        for key, entries in self._depends.items():
            touched = False
            for r in entries:
                if r.where is not inference or not r.models or not (changed is None or any(
                        m == changed or changed.startswith(m + ".") or m.startswith(changed + ".") for m in r.models)):
                    continue
                flags = now(r.models)
                holds = r.holds is not None and flags is not None and r.holds(flags)
                if holds or (r.backwards == self.backwards and r.guards[:len(guards)] == guards):
                    r.live, touched = holds, True
            if touched and key in self._seen:
                if any(r.live for r in entries):
                    self._revoked.discard(self._seen[key])
                else:
                    self._revoked.add(self._seen[key])

    def dependents(self) -> dict:
        """How many reports of each finding `revoke` knows of now, for `rehome` after a call."""
        return {key: len(entries) for key, entries in self._depends.items()}

    def rehome(self, before: dict, caller, paths: dict, function) -> None:
        """Reports made since `before` in the walk of `function`, which the scope of `caller`
        called, about models it was passed (`paths`: its parameter -> the caller's name):
        they rest on those models of the caller from now on."""
        for key, entries in self._depends.items():
            for r in entries[before.get(key, 0):]:
                if getattr(r.where, "scope_node", None) is not function:
                    continue
                mapped = []
                for m in r.models:
                    root, dot, rest = m.partition(".")
                    if not paths.get(root):
                        break
                    mapped.append(paths[root] + dot + rest)
                else:
                    if mapped:
                        r.where, r.models = caller, tuple(mapped)

    def made_since(self, before: dict, function) -> list:
        """The revocable reports the walk of `function` made since `before`, to `replay`
        when a call is answered by that walk again."""
        return [(key, replace(r)) for key, entries in self._depends.items() for r in entries[before.get(key, 0):]
                if r.models and getattr(r.where, "scope_node", None) is function]

    def replay(self, made: list) -> None:
        """A call answered by an earlier walk makes that walk's reports again, at this point
        of the walk."""
        for key, r in made:
            self._depends.setdefault(key, []).append(
                replace(r, guards=tuple(map(id, self.guards)), backwards=self.backwards))
            if r.live and key in self._seen:
                self._revoked.discard(self._seen[key])

    def findings(self, since: int = 0) -> list[Diagnostic]:
        """The findings reported since there were `since` of them, less those revoked."""
        return [d for i, d in enumerate(self.diagnostics[since:], since) if i not in self._revoked]

    def withdraw(self, since: int) -> None:
        """Drop the findings reported since there were `since` of them (a walk of a loop
        that turned out not to be what the program does)."""
        del self.diagnostics[since:]
        self._seen = {k: i for k, i in self._seen.items() if i < since}
        self._revoked = {i for i in self._revoked if i < since}
        self._depends = {k: v for k, v in self._depends.items() if k in self._seen}
        self._provisional &= set(self._seen)

    def fix_unsafe_here(self, rule, node: cst.CSTNode) -> None:
        """The rule looked at `node` in a context where it finds nothing, but where the edit
        it makes in other contexts could change what the line computes (the same function
        called with something else): any fix at `node` is unsafe, whichever context comes
        first."""
        l1, c1, l2, c2 = self.span(node)
        key = (rule.code, l1, c1, l2, c2)
        self._unsafe_here.add(key)
        index = self._seen.get(key)
        if index is not None:
            earlier = self.diagnostics[index]
            if earlier.fix is not None and earlier.fix.safe:
                self.diagnostics[index] = replace(earlier, fix=replace(earlier.fix, safe=False))

    def make_fix(self, rule, edits: Iterable[Edit], safe: bool, title: str = "") -> Fix:
        return Fix(title=title or rule.fix_title, edits=tuple(edits), safe=safe)


@dataclass
class _Report:
    """One report of a finding that a later change of a model may revoke (see `revoke`)."""

    where: object  # the inference of the walk that made it
    models: tuple  # the names of the models it rests on, in that walk's scope
    holds: Optional[Callable]  # given their gradient flags, whether it still holds
    live: bool
    guards: tuple  # ids of the compound statements the walk was inside
    backwards: int  # backward passes walked before it


def _path_to(root: cst.CSTNode, node: cst.CSTNode) -> Optional[list]:
    """The nodes from `root` down to `node`, both included; None when `node` is not under it."""
    stack = [(root, [root])]
    while stack:
        here, path = stack.pop()
        if here is node:
            return path
        stack.extend((c, path + [c]) for c in child_list(here))
    return None


def _shared_fix(a: Optional[Fix], b: Optional[Fix]) -> Optional[Fix]:
    """The fix one finding seen in two contexts may keep: none where either context offered
    none or they differ, unsafe where either is."""
    if a is None or b is None or a.edits != b.edits:
        return None
    return a if a.safe <= b.safe else b


class Places:
    """The positions of one module's nodes, computed on first use. Kept by evidence that
    leaves the module, so a module whose facts reach no finding never pays for them; it
    holds the module's tree and position store, not its whole check."""

    __slots__ = ("_module", "_kept", "_ranges")

    def __init__(self, ctx: Context):
        self._module = ctx.module
        self._kept = ctx.positions_kept
        self._ranges = None

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        if self._ranges is None:
            self._ranges = _positions_of(self._module, self._kept)
        r = self._ranges.get(node)
        return (0, 0) if r is None else (r.start.line, r.start.column + 1)


def _positions_of(module: cst.Module, kept: Optional[dict]):
    """The positions of a module's nodes, from `kept` (where the checks of a run that share
    the module keep them) or computed and kept there."""
    if kept is not None and "ranges" in kept:
        return kept["ranges"]
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    if kept is not None:
        kept["ranges"] = ranges
    return ranges
