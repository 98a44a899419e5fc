"""
## What it does
Checks for `t._coalesced_(True)` on a sparse COO tensor built from literal indices that are
out of order or repeat an entry. (`_coalesced_` is a private call that graph libraries use to
skip a sort they believe is done.) The tensor may be built elsewhere: a helper of another
module, or of an installed package (torch_geometric's `to_edge_index`, reached from
`remove_self_loops` and `GCNConv`), that marks the caller's tensor is reported at the
caller's call.

In a package, a public function or method that calls it on a parameter it never rebinds is
also reported: the caller's tensor is marked, whatever order its entries come in. A docstring
that speaks of coalescing (the caller has been told) silences it; so does
`api-entry-points = false`.

## Why is this bad?
`_coalesced_(True)` only sets the flag; it neither sorts nor merges the entries. Everything
that trusts the flag then works on a scrambled matrix, silently: `coalesce()` returns the
tensor as it is, `to_sparse_csr()` builds a wrong matrix, products and `values()` see the
duplicates. (In an autograd graph, backward also raises `RuntimeError: derivative for
aten::_coalesced_ is not implemented`; that is SPL502.)

## Example
```python
t = torch.sparse_coo_tensor(torch.tensor([[2, 0, 0], [0, 1, 1]]), v, (3, 3))
t._coalesced_(True)
```

## Use instead
```python
t = torch.sparse_coo_tensor(torch.tensor([[2, 0, 0], [0, 1, 1]]), v, (3, 3)).coalesce()
```

## Fix safety
No fix: whether the real indices are sorted is only known at run time.

## References
- the bad and good fixtures in `fixtures/SPL005/`, proven under torch
"""
from __future__ import annotations

import libcst as cst

from sparselint.rule import Rule
from sparselint.analysis.cst.tree import walk

from ._common import method_call
from ._construction import construction


class CoalescedFlagForced(Rule):
    code = "SPL005"
    name = "coalesced-flag-forced"
    error = "no error: later ops use unsorted or duplicate entries as if coalesced"
    when = "silent"
    hazards = ("beyond-catalog",)
    prefilter = ("_coalesced_()",)
    valid = (
        "import torch\nt = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2))\n"
        "t._coalesced_(True)\n",
        "import torch\nt = torch.sparse_coo_tensor(torch.tensor([[1, 0], [0, 1]]), torch.ones(2), (2, 2))\n"
        "t = t.coalesce()\nt._coalesced_(True)\n",
    )
    invalid = (
        "import torch\nt = torch.sparse_coo_tensor(torch.tensor([[1, 0], [0, 1]]), torch.ones(2), (2, 2))\n"
        "t._coalesced_(True)  # SPL005\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        mc = method_call(node)
        if mc is None or mc[1] != "_coalesced_" or not isinstance(mc[0], cst.Name) or len(node.args) != 1:
            return
        flag = node.args[0].value
        if not (isinstance(flag, cst.Name) and flag.value == "True"):
            return
        caller = ctx.caller_argument(mc[0])
        t = ctx.tensor(mc[0])
        if caller is None and t is not None and t.admitted is not None and t.is_coo and t.coalesced is False:
            caller = t.admitted[:2]  # what a public function admitted, handed on to a helper that marks it
        if caller is not None:
            # the caller's tensor: `_coalesced_` takes a COO tensor only, and callers build
            # theirs with `torch.sparse_coo_tensor`, in whatever order their edges come
            function, param = caller
            ctx.report(self, node, f"`{function}({param})` marks the caller's COO `{param}` coalesced without sorting "
                       "or merging its entries: for one straight from `torch.sparse_coo_tensor` with unsorted or "
                       "repeated indices, `coalesce()`, CSR conversion and products then silently work on a "
                       "scrambled matrix", evidence=t.evidence if t is not None else (),
                       suggestion=f"`{param} = {param}.coalesce()` (a no-op on a coalesced tensor)")
            return
        if t is None or not t.is_coo or t.coalesced is not False:
            return
        entries = _literal_entries(mc[0].value, node, ctx) if t.origin == "constructor" else None
        if entries is not None:
            duplicate = len(set(entries)) != len(entries)
            if not duplicate and entries == sorted(entries):
                return
            what = f"its index list {'repeats an entry' if duplicate else 'is not in sorted order'}"
        elif t.scrambled and _unconditional(node, ctx):
            # built elsewhere (the caller's tensor, handed to a helper or a library that marks
            # it): its evidence says where and why
            what = "it was built on written-out indices that are out of order or repeat an entry"
        else:
            return
        ctx.report(self, node, f"`{mc[0].value}._coalesced_(True)` marks it coalesced, but {what}: "
                   "`coalesce()`, CSR conversion and products then silently work on a scrambled matrix",
                   evidence=t.evidence, suggestion=f"`{mc[0].value} = {mc[0].value}.coalesce()`")


def _literal_entries(name: str, at: cst.CSTNode, ctx):
    """The (row, col, ...) entries of the literal indices `name` was last built from before
    `at` in this scope, if that was a `torch.sparse_coo_tensor` call with literal indices."""
    found = None
    for n in walk(ctx.scope.node, stop=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if n is at:
            break
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name) \
                and n.targets[0].target.value == name:
            found = n.value if isinstance(n.value, cst.Call) else None
    if found is None:
        return None
    c = construction(found, ctx)
    if c is None or c.indices is None or c.indices.literal is None:
        return None
    rows = c.indices.literal
    if not rows or not all(isinstance(r, tuple) and len(r) == len(rows[0]) for r in rows):
        return None
    return list(zip(*rows))


def _unconditional(at: cst.CSTNode, ctx) -> bool:
    """Whether a call runs whenever its function gets this tensor: the tests of the blocks
    around it only ask what kind of tensor it is (`if adj.layout == torch.sparse_coo:`),
    which the tensor's facts decide. A helper that marks the tensor only after checking its
    order (`if (key[1:] > key[:-1]).all():`) marks a scrambled one never."""
    for test in _tests_around(ctx.scope.node if ctx.scope is not None else None, at) or ():
        if not _kind_test(test):
            return False
    return True


def _tests_around(root, at):
    """The tests of the `if`/`while` statements and conditional expressions that hold `at`
    in their body, from `root` down; None when `at` is not found under it."""
    if root is None:
        return None
    if root is at:
        return []
    tests = []
    if isinstance(root, (cst.If, cst.While, cst.IfExp)):
        tests = [root.test]
    for child in root.children:
        if isinstance(root, (cst.If, cst.While, cst.IfExp)) and child is root.test:
            found = _tests_around(child, at)
            if found is not None:
                return found
            continue
        found = _tests_around(child, at)
        if found is not None:
            return tests + found
    return None


def _kind_test(test: cst.BaseExpression) -> bool:
    """A test of a tensor's kind: its layout, `is_sparse`, `isinstance`, or a layout helper
    (`is_torch_sparse_tensor(adj)`), possibly negated or combined."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _kind_test(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return _kind_test(test.left) and _kind_test(test.right)
    if isinstance(test, cst.Comparison):
        return isinstance(test.left, cst.Attribute) and test.left.attr.value == "layout"
    if isinstance(test, cst.Attribute):
        return test.attr.value in ("is_sparse", "is_sparse_csr")
    if isinstance(test, cst.Call):
        name = test.func.value if isinstance(test.func, cst.Name) else (
            test.func.attr.value if isinstance(test.func, cst.Attribute) else "")
        return name == "isinstance" or "sparse" in name
    return False
