"""Silent hazards, which torch lets through and only a run can prove:

- SPL005: `_coalesced_(True)` on indices that are unsorted or repeated (checked then, on
  the indices themselves);
- SPL003: a per-entry edit (not a scaling) of `._values()` of a tensor with repeated indices;
- SPL004: an in-place op on `.data` of a sparse tensor that leaves the tensor as it was
  (torch gives the copy new values storage);
- SPL002: a `coalesce()` copy that dies unused, or edited, while the tensor it copies lives;
- SPL109: an in-place edit of a tensor that requires grad after a sparse tensor was built
  from it as its values (the sparse tensor's gradient uses the values before the edit);
- SPL603: indices out of the size's bounds at construction (memory corruption follows).

What a run does not see, at a cost it could pay: a `coalesce()` copy kept alive and never
used is only judged when it dies (never, if it lives to the end); SPL109 is followed for
values that are not leaves (a leaf's in-place edits are an optimizer's steps); SPL603 only
for COO tensors built with an explicit size (without one, torch sizes them to fit); a
per-entry edit through `.values()` cannot meet duplicates (`.values()` raises first, SPL001).
"""
from __future__ import annotations

import dis
import weakref

import torch
from torch.utils.weak import WeakIdKeyDictionary

from ..session import user_frame
from ..watch import evidence, here, is_sparse

# in-place ops that act on each stored entry alike whatever the duplicates: scaling a
# duplicated entry scales their sum, so these are right on an uncoalesced tensor
_LINEAR = {"mul_", "div_", "neg_", "zero_", "__imul__", "__itruediv__", "__idiv__"}
_CONSTRUCTORS = {torch.sparse_coo_tensor: 1, torch.sparse_csr_tensor: 2, torch.sparse_csc_tensor: 2,
                 torch.sparse_compressed_tensor: 2, torch.sparse_bsr_tensor: 2, torch.sparse_bsc_tensor: 2}
_DATA = torch.Tensor.data.__get__
_DATA_SET = torch.Tensor.data.__set__


def _inplace_name(func) -> str:
    name = getattr(func, "__name__", "")
    if (name.endswith("_") and not name.endswith("__")) or name.startswith("__i") or name == "__setitem__":
        return name
    return ""


def _augmented() -> bool:
    """Whether the user's line is running an augmented assignment (`x *= 2`) right now."""
    frame = user_frame()
    if frame is None:
        return True
    try:
        return dis.opname[frame.f_code.co_code[frame.f_lasti]] in ("BINARY_OP", "INPLACE_MULTIPLY",
                                                                  "INPLACE_ADD", "INPLACE_SUBTRACT",
                                                                  "INPLACE_TRUE_DIVIDE")
    except (IndexError, AttributeError):
        return True


def _coalesced_indices(t) -> bool:
    """Whether the stored indices are sorted and unique (what `coalesce()` would give)."""
    idx = t._indices()
    if idx.size(1) < 2:
        return True
    sizes = t.shape[:t.sparse_dim()]
    linear = torch.zeros(idx.size(1), dtype=torch.long)
    for d, n in enumerate(sizes):
        linear = linear * n + idx[d]
    return bool((linear[1:] > linear[:-1]).all())


def _has_duplicates(t) -> bool:
    return t.layout is torch.sparse_coo and not t.is_coalesced() and t.coalesce()._nnz() < t._nnz()


def install(session):
    watch = session.watch
    datas = WeakIdKeyDictionary()    # `.data` of a sparse tensor -> weak reference to the tensor
    sources = WeakIdKeyDictionary()  # values that require grad -> (weak ref to the sparse tensor, place)
    copies = WeakIdKeyDictionary()   # `coalesce()` copy -> its state (see `coalesced`)
    pending: list = []
    unused = [0]  # `coalesce()` copies not used yet: only then does every call look for them
    snapshots = WeakIdKeyDictionary()  # `.data` about to be edited -> its values, and its tensor's, before

    def forced_flag(func, args, kwargs):
        t = args[0]
        flag = args[1] if len(args) > 1 else kwargs.get("coalesced")
        if flag is True and t.layout is torch.sparse_coo and not _coalesced_indices(t):
            session.record("SPL005", "`_coalesced_(True)` on indices that are unsorted or repeated: later ops "
                           "trust the flag and compute wrong results", when="silent",
                           evidence=watch.built_evidence(t, "the sparse tensor is built here"),
                           suggestion="call `.coalesce()` instead")

    def data_read(func, args, kwargs, result):
        if is_sparse(args[0]) and isinstance(result, torch.Tensor):
            datas[result] = weakref.ref(args[0])
            watch.follow = True

    def built(func, args, kwargs, result):
        position = _CONSTRUCTORS[func]
        values = kwargs.get("values", args[position] if len(args) > position else None)
        # a non-leaf: the edits of a leaf (an optimizer's step) are training, not this hazard
        if isinstance(values, torch.Tensor) and values.grad_fn is not None and is_sparse(result):
            sources[values] = (weakref.ref(result), here())
            watch.follow = True
        if func is torch.sparse_coo_tensor:
            _bounds(session, args, kwargs, result)

    def coalesced(func, args, kwargs, result):
        original = args[0]
        if result is original or not is_sparse(result):
            return
        state = {"used": False, "edited": None, "at": here()}
        copies[result] = state
        unused[0] += 1
        watch.follow = True
        source = weakref.ref(original)

        def died():
            if not state["used"]:
                unused[0] -= 1
            if source() is None:
                return
            if state["edited"] is not None:
                session.record("SPL002", "the edit changes a `coalesce()` copy that is then dropped; the tensor "
                               "it copies is unchanged", when="silent", at=state["edited"],
                               suggestion="assign the coalesced tensor back before editing it")
            elif not state["used"] and state["at"] is not None:
                session.record("SPL002", "the result of `coalesce()` is dropped; the tensor stays uncoalesced",
                               when="silent", at=state["at"], suggestion="assign it: `x = x.coalesce()`")
        weakref.finalize(result, died)

    def any_op(func, args, kwargs, result):
        # everything after the fact: uses of `coalesce()` copies, edits of `.data`, of values
        if unused[0]:
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, torch.Tensor) and a in copies and not copies[a]["used"]:
                    copies[a]["used"] = True
                    unused[0] -= 1
        name = _inplace_name(func)
        if not name or not args or not isinstance(args[0], torch.Tensor):
            return
        target = args[0]
        if datas and target in datas:
            check = (datas[target], target, name, snapshots.pop(target, None), here())
            if _augmented():
                # `p.grad.data *= 2` goes on to assign the result back through `.data` (torch
                # shows it as `mul_`): judged at the next call, once any assignment is made
                pending.append(check)
            else:
                _data_edit(session, *check)
        if sources and target in sources:
            ref, at = sources[target]
            if ref() is not None:
                session.record("SPL109", "the values are edited in place after the sparse tensor was built from "
                               "them; its gradient uses the values before the edit", when="silent",
                               evidence=evidence(at, "the sparse tensor is built from these values here"),
                               suggestion="edit the values before building the sparse tensor, out of place")

    def before_op(func, args, kwargs):
        if pending and func != _DATA_SET:  # a method-wrapper: equal, not the same object
            while pending:
                _data_edit(session, *pending.pop())
        if datas and args and isinstance(args[0], torch.Tensor) and _inplace_name(func) and args[0] in datas:
            owner = datas[args[0]]()
            if owner is not None and owner.layout is torch.sparse_coo:
                snapshots[args[0]] = (args[0]._values().clone(), owner._nnz(), owner._values().clone())

    def view_edit(func, args, kwargs, result):
        name = _inplace_name(func)
        if not name:
            return
        ref, accessor = watch.views[args[0]]
        owner = ref()
        if owner is None:
            return
        if owner in copies:
            copies[owner]["edited"] = here()
        if accessor == "_values" and name not in _LINEAR and _has_duplicates(owner):
            param = watch.grads.get(owner)
            cause = watch.maker_evidence(param) if param is not None else watch.built_evidence(
                owner, "the uncoalesced tensor is built here")
            session.record("SPL003", f"`{name}` edits each duplicate entry of an uncoalesced tensor, not their "
                           "sum", when="silent", evidence=cause,
                           suggestion="coalesce first and edit the coalesced values")

    watch.on_before([torch.Tensor._coalesced_], forced_flag)
    watch.on_after([_DATA], data_read)
    watch.on_after(list(_CONSTRUCTORS), built)
    watch.on_after([torch.Tensor.coalesce], coalesced)
    watch.any_op.append(any_op)
    watch.any_before.append(before_op)
    watch.view_inplace.append(view_edit)
    return lambda: None


def _data_edit(session, ref, data, name, before, at) -> None:
    """Proven only when the edit changed the copy and left the tensor exactly as it was."""
    owner = ref()
    if owner is None or before is None or not is_sparse(data):
        return
    data_values, owner_nnz, owner_values = before

    def same(a, b):
        return a.shape == b.shape and bool(torch.equal(a, b))
    changed = data._nnz() != data_values.size(0) or not same(data._values(), data_values)
    if changed and owner._nnz() == owner_nnz and same(owner._values(), owner_values):
        session.record("SPL004", f"`{name}` on `.data` of a sparse tensor changes a copy: the tensor keeps its "
                       "values", when="silent", at=at, suggestion=f"call `{name}` on the tensor itself (under "
                                                            "`torch.no_grad()` for a parameter or gradient)")


def _bounds(session, args, kwargs, result) -> None:
    size = kwargs.get("size", args[2] if len(args) > 2 else None)
    indices = kwargs.get("indices", args[0] if args else None)
    if size is None or not isinstance(indices, torch.Tensor) or indices.dim() != 2 or indices.numel() == 0:
        return
    if kwargs.get("check_invariants"):
        return
    limits = torch.tensor(list(result.shape[:indices.size(0)]), dtype=indices.dtype).unsqueeze(1)
    if bool((indices < 0).any()) or bool((indices >= limits).any()):
        session.record("SPL603", "indices out of the tensor's bounds: later ops read and write out of memory",
                       when="silent", suggestion="pass `check_invariants=True`, or fix the indices or the size")
