"""Public functions of a package analysed as entry points: a caller outside the package can
pass what the function's own code admits.

A library function gets its tensors from callers the check never sees. Where its own layout
test narrows a parameter to sparse COO (`if adj.is_sparse:`), every such tensor is admitted
there, the uncoalesced ones straight from `torch.sparse_coo_tensor` included, unless the
function states otherwise (its docstring says the tensor is coalesced, or it asserts it).
The `api-entry-points` setting turns this off.
"""
from __future__ import annotations

import os
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from .cst.syntax import assigned_names

_ENABLED: ContextVar[bool] = ContextVar("api_entry_points", default=True)
# a docstring that states a requirement on coalescing: the caller has been told
_STATED = re.compile(r"coalesc", re.I)


@dataclass(frozen=True)
class EntryPoint:
    function: str
    # parameters the body never rebinds: a layout test on one is a test of what was passed
    params: frozenset
    # parameters the body rebinds somewhere: a test on one is a test of what was passed until
    # the first rebinding on the path to it (tracked in the state, see `caller_key`)
    rebound: frozenset = frozenset()
    # the run in which keyword parameters hold their literal defaults (a caller who passes
    # nothing), after the run in which nothing is known of them
    defaults: bool = False
    # in a run with the defaults, one option a caller sets to another value the code admits:
    # (options.Option, the fact of that value)
    turned: Optional[tuple] = None


def enabled() -> bool:
    return _ENABLED.get()


def use(enabled: bool):
    return _ENABLED.set(enabled)


def reset(token) -> None:
    _ENABLED.reset(token)


def entry_point(node: cst.FunctionDef, method: Optional[str] = None) -> Optional[EntryPoint]:
    """The entry point a module-level public function of a public module of a package is
    (`public_module` says the module is one), or a public method of its public class
    `method` (the instance itself is not a parameter callers pass), or None."""
    if node.name.value.startswith("_") or not isinstance(node.body, cst.IndentedBlock):
        return None
    doc = node.get_docstring()
    if doc and _STATED.search(doc):
        return None
    p = node.params
    positional = [*p.posonly_params, *p.params]
    if method and not _static(node):
        positional = positional[1:]
    params = frozenset(x.name.value for x in (*positional, *p.kwonly_params))
    rebound = params & assigned_names(node.body.body)
    name = f"{method}.{node.name.value}" if method else node.name.value
    return EntryPoint(name, params - rebound, rebound) if params else None


def documented_coo(node: cst.FunctionDef, entry: EntryPoint) -> dict[str, cst.CSTNode]:
    """{parameter: its function's docstring} for each parameter the docstring describes as a
    sparse COO tensor, in its own entry (`adj: sparse COO adjacency`, `adj (Tensor): a
    sparse COO matrix`, `:param adj: sparse COO ...`) or in prose (`the sparse COO matrix
    ``adj```): a caller may pass any such tensor, the uncoalesced one included. A docstring
    that speaks of coalescing made the function no entry point at all."""
    doc = node.get_docstring(clean=True)
    if not documents_coo(doc):
        return {}
    found = {}
    for param in sorted(entry.params | entry.rebound):
        name = re.escape(param)
        own = re.search(rf"^\s*(?::param\s+(?:\S+\s+)?{name}\s*:|{name}\s*(?:\([^)\n]*\))?\s*:)(.*(?:\n(?!\s*\w+\s*(?:\([^)\n]*\))?\s*:)(?!\s*$).*)*)",
                        doc, re.M)
        prose = re.search(rf"sparse\s+COO\s+(?:\w+\s+){{0,2}}[`']*{name}[`']*(?!\w)", doc, re.I)
        if (own is not None and _COO.search(own.group(1))) or prose is not None:
            found[param] = node.body.body[0]
    return found


def documents_coo(doc: Optional[str]) -> bool:
    """Whether a docstring names the sparse COO layout at all (the cheap test)."""
    return bool(doc) and _COO.search(doc) is not None


# "sparse COO", "COO sparse", "sparse_coo": the layout a docstring names for a tensor
_COO = re.compile(r"sparse[\s_-]+coo|coo[\s_-]+sparse|\bcoo\b[\s-]+(?:format|tensor|matrix|adjacency)", re.I)


def caller_key(param: str) -> str:
    """The state key that says `param` still holds what the caller passed: set on entry,
    dropped by the state when the name is rebound, kept where every path kept it. No
    access path starts with a NUL, so no fact is ever read or written under it."""
    return "\0" + param


def public_module(path: str) -> bool:
    """Whether the public functions of the module at `path` are checked as entry points."""
    return _ENABLED.get() and in_package(path)


def in_package(path: str) -> bool:
    """A public module of a package (its folder has an `__init__.py`): library code, whose
    public functions are called from outside. A script beside no `__init__.py` is not, nor
    a private module (`_utils.py`) or a module of a private package (`pkg/_impl/ops.py`):
    what they define is the package's own business."""
    if not os.path.isfile(package_marker(path)):
        return False
    here = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(here))[0]
    if stem.startswith("_") and stem != "__init__":
        return False
    folder = os.path.dirname(here)
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        if os.path.basename(folder).startswith("_"):
            return False
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return True


def package_marker(path: str) -> str:
    """The file whose presence makes `path` a module of a package (a dependency of its
    results: creating or deleting it changes them)."""
    return os.path.join(os.path.dirname(os.path.abspath(path)), "__init__.py")


def _static(node: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators)
