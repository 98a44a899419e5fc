"""The hazards of the matrix, one or more per rule family, written as ingredients: a source
expression that yields the fact-bearing value, a safe source for the twin, and a sink that
consumes the value and fails at its report line."""
from __future__ import annotations

from dataclasses import dataclass

REPORT = "# <report>"  # marks the sink line where the finding must be reported

_COO = "torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3))"


@dataclass(frozen=True)
class Hazard:
    code: str
    title: str
    kind: str  # "tensor", "module" (a sparse-grad model), "indices" (a literal index tensor)
    source: str
    safe_source: str
    sink_lines: tuple[str, ...]  # statements using `{v}`; the one ending in REPORT is reported
    error: str  # "Type: message prefix", as a fixture's `# expect-error:` header
    flag: str = ""  # for module hazards: the `sparse=` argument of the bad value
    safe_flag: str = ""

    def sink(self, value: str, indent: int = 0) -> str:
        pad = " " * indent
        return "\n".join(pad + line.format(v=value) for line in self.sink_lines)


HAZARDS = (
    Hazard("SPL001", "`.indices()` of a fresh `torch.sparse_coo_tensor` (uncoalesced)", "tensor",
           _COO, _COO + ".coalesce()",
           ("row = {v}.indices()[0]  " + REPORT,),
           "RuntimeError: Cannot get indices on an uncoalesced tensor, please call .coalesce() first"),
    Hazard("SPL103", "in-place `mul_` on a sparse leaf that requires grad", "tensor",
           "torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2), "
           "requires_grad=True)",
           "torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2))",
           ("{v}.mul_(0.5)  " + REPORT,),
           "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."),
    Hazard("SPL201", "`.grad` of a sparse tensor built from values that require grad (a non-leaf)", "tensor",
           "torch.sparse_coo_tensor(torch.tensor([[0, 1, 2], [2, 0, 1]]), "
           "torch.tensor([1.0, 2.0, 3.0], requires_grad=True), (3, 3))",
           "torch.sparse_coo_tensor(torch.tensor([[0, 1, 2], [2, 0, 1]]), torch.tensor([1.0, 2.0, 3.0]), "
           "(3, 3), requires_grad=True)",
           ("torch.sparse.sum({v}).backward()", "g = {v}.grad.coalesce()  " + REPORT),
           "AttributeError: 'NoneType' object has no attribute 'coalesce'"),
    Hazard("SPL301", "`clip_grad_norm_` over a model with `nn.Embedding(sparse=True)` after backward", "module",
           "nn.Embedding(10, 4, sparse=True)", "nn.Embedding(10, 4, sparse=False)",
           ("{v}(torch.tensor([1, 2])).sum().backward()",
            "torch.nn.utils.clip_grad_norm_({v}.parameters(), 1.0)  " + REPORT),
           "NotImplementedError: Could not run 'aten::linalg_vector_norm' with arguments from the 'SparseCPU' backend",
           flag="True", safe_flag="False"),
    Hazard("SPL401", "`torch.optim.Adam` over a model with `nn.Embedding(sparse=True)`", "module",
           "nn.Embedding(10, 4, sparse=True)", "nn.Embedding(10, 4, sparse=False)",
           ("opt = torch.optim.Adam({v}.parameters(), lr=0.1)  " + REPORT,
            "{v}(torch.tensor([1, 2])).sum().backward()",
            "opt.step()"),
           "RuntimeError: Adam does not support sparse gradients, please consider SparseAdam instead",
           flag="True", safe_flag="False"),
    Hazard("SPL501", "sparse + dense", "tensor",
           _COO, _COO + ".to_dense()",
           ("out = {v} + torch.ones(3, 3)  " + REPORT,),
           "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead."),
    Hazard("SPL601", "literal indices with 2 entries, values with 3", "indices",
           "torch.tensor([[0, 1], [1, 2]])", "torch.tensor([[0, 1, 2], [1, 2, 0]])",
           ("s = torch.sparse_coo_tensor({v}, torch.tensor([1.0, 2.0, 3.0]), (3, 3))  " + REPORT,),
           "RuntimeError: indices and values must have same nnz, but got nnz from indices: 2, nnz from values: 3"),
)


@dataclass(frozen=True)
class Variant:
    """One side of a cell: the hazard with either its bad or its safe value."""

    hazard: Hazard
    safe: bool

    @property
    def src(self) -> str:
        return self.hazard.safe_source if self.safe else self.hazard.source

    @property
    def other(self) -> str:
        """The other side's value: a twin holding the bad value where it never runs tests precision."""
        return self.hazard.source if self.safe else self.hazard.safe_source

    @property
    def flag(self) -> str:
        return self.hazard.safe_flag if self.safe else self.hazard.flag

    def sink(self, value: str, indent: int = 0) -> str:
        return self.hazard.sink(value, indent)
