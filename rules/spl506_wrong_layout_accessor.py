"""
## What it does
Checks for accessors and ops that do not exist for the tensor's sparse layout although they
do for another one: `._values()` / `._indices()` / `.indices()` on a CSR or CSC tensor,
`.ccol_indices()` / `.row_indices()` on CSR, `.crow_indices()` / `.col_indices()` on CSC or
COO, `torch.sparse.sum`, `index_select` or `torch.cat` of a compressed tensor. The op set
comes from the op table `tools/probe_torch.py` generates for each torch release.

## Why is this bad?
Each raises at this line: `NotImplementedError: Could not run 'aten::_values' with arguments
from the 'SparseCsrCPU' backend`, `RuntimeError: indices expected sparse coordinate tensor
layout but got SparseCsr`, `RuntimeError: ccol_indices expected sparse column compressed
tensor layout but got SparseCsr`, `RuntimeError: coalesce expected sparse coordinate tensor
layout but got SparseCsr`. The finding names the layouts where the op works and the torch
release the table was probed on. (BSR and BSC are not in the table.)

## Example
```python
csr = adj.to_sparse_csr()
vals, idx = csr._values(), csr.indices()
```

## Use instead
```python
vals = csr.values()
crow, col = csr.crow_indices(), csr.col_indices()  # or csr.to_sparse_coo().indices()
total = csr.sum()  # Tensor.sum works for CSR
```

## Fix safety
No fix: the compressed accessors return different index tensors.

## References
- hazards 39, 40, 41 of the catalog in `docs/hazards.md`
"""
from __future__ import annotations

from sparselint.analysis.torchops import torchapi as api
from sparselint.rule import Rule

from ._optable import LAYOUT, forward_verdict, layout_text, probed

_NAMES = {"coo": "COO", "csr": "CSR", "csc": "CSC"}


class WrongLayoutAccessor(Rule):
    code = "SPL506"
    name = "wrong-layout-accessor"
    error = "RuntimeError: indices expected sparse coordinate tensor layout but got SparseCsr"
    when = "line"
    hazards = ("39", "40", "41")
    prefilter = api.SPARSE_SOURCE_TOKENS
    valid = (
        "import torch\ns = torch.eye(3).to_sparse_csr()\nprint(s.values(), s.crow_indices(), s.col_indices())\n",
        "import torch\ns = torch.eye(3).to_sparse_csr()\nprint(s.to_sparse_coo().indices(), s.sum())\n",
    )
    invalid = (
        "import torch\ns = torch.eye(3).to_sparse_csr()\nidx = s.indices()  # SPL506\n",
        "import torch\ns = torch.eye(3).to_sparse_csr()\ntotal = torch.sparse.sum(s)  # SPL506\n",
    )

    def _check(self, node, ctx) -> None:
        v = forward_verdict(node, ctx)
        if v is None or v.category != LAYOUT:
            return
        use = v.use
        where = ", ".join(_NAMES[k] for k in v.works_on)
        ctx.report(self, node, f"{use.spelled} is not implemented for {layout_text(use.fact)} tensor (it is for "
                   f"{where}): `{v.error}` at this line {probed(v.version)}", evidence=use.fact.evidence,
                   suggestion="use `.values()`, `.crow_indices()`/`.col_indices()` (CSR) or "
                              "`.ccol_indices()`/`.row_indices()` (CSC), `Tensor.sum()`, or convert the layout first")

    visit_Call = visit_BinaryOperation = visit_AugAssign = visit_Comparison = _check
    visit_UnaryOperation = visit_Subscript = _check
