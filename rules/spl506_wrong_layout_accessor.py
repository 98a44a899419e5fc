"""
## What it does
Checks for accessors and functions that do not exist for the tensor's layout:
`._values()` / `._indices()` / `.indices()` on a CSR, CSC or BSR tensor, `.ccol_indices()` /
`.row_indices()` on CSR, `.crow_indices()` / `.col_indices()` on CSC, and
`torch.sparse.sum` of a compressed tensor.

## Why is this bad?
Each raises at this line: `NotImplementedError: Could not run 'aten::_values' with arguments
from the 'SparseCsrCPU' backend`, `RuntimeError: indices expected sparse coordinate tensor
layout but got SparseCsr`, `RuntimeError: ccol_indices expected sparse column compressed
tensor layout but got SparseCsr`, `RuntimeError: coalesce expected sparse coordinate tensor
layout but got SparseCsr`.

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

import libcst as cst

from sparselint import torchapi as api
from sparselint.rule import Rule

from ._common import describe_layout, method_call

_ROW = {"csr", "bsr"}
_COLUMN = {"csc", "bsc"}


class WrongLayoutAccessor(Rule):
    code = "SPL506"
    name = "wrong-layout-accessor"
    error = "RuntimeError: indices expected sparse coordinate tensor layout but got SparseCsr"
    when = "line"
    hazards = ("39", "40", "41")
    valid = (
        "import torch\ns = torch.eye(3).to_sparse_csr()\nprint(s.values(), s.crow_indices(), s.col_indices())\n",
        "import torch\ns = torch.eye(3).to_sparse_csr()\nprint(s.to_sparse_coo().indices(), s.sum())\n",
    )
    invalid = (
        "import torch\ns = torch.eye(3).to_sparse_csr()\nidx = s.indices()  # SPL506\n",
        "import torch\ns = torch.eye(3).to_sparse_csr()\ntotal = torch.sparse.sum(s)  # SPL506\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        q = ctx.qualname(node.func)
        if q == "torch.sparse.sum" and node.args:
            t = ctx.tensor(node.args[0].value)
            if t is not None and t.is_compressed:
                ctx.report(self, node, f"`torch.sparse.sum` of a {describe_layout(t)} tensor raises `RuntimeError: "
                           "coalesce expected sparse coordinate tensor layout` at this line",
                           evidence=t.evidence, suggestion="use `Tensor.sum()`, which supports compressed layouts")
            return
        mc = method_call(node)
        if mc is None or q is not None:
            return
        t = ctx.tensor(mc[0])
        if t is None or not t.is_compressed:
            return
        tables = [api.WRONG_LAYOUT_ACCESSORS["compressed"]]
        tables.append(api.WRONG_LAYOUT_ACCESSORS["row" if t.layout in _ROW else "column"])
        for table in tables:
            if mc[1] in table:
                ctx.report(self, node, f"`.{mc[1]}()` does not exist for a {describe_layout(t)} tensor: "
                           f"`{table[mc[1]]}` at this line", evidence=t.evidence,
                           suggestion="use `.values()`, `.crow_indices()`/`.col_indices()` (CSR, BSR) or "
                                      "`.ccol_indices()`/`.row_indices()` (CSC, BSC)")
                return
