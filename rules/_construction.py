"""Reading a `torch.sparse_coo_tensor(indices, values, size)` call whose parts are literals."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from sparselint.analysis.evaluation.facts import Literal, Tensor
from sparselint.analysis.evaluation.inference import arg

CONSTRUCTORS = {"torch.sparse_coo_tensor"}


@dataclass
class Construction:
    indices: Optional[Tensor]
    values: Optional[Tensor]
    size: Optional[tuple]


def construction(node: cst.Call, ctx) -> Optional[Construction]:
    if ctx.qualname(node.func) not in CONSTRUCTORS:
        return None
    i_node, v_node = arg(node, 0, "indices"), arg(node, 1, "values")
    if i_node is None or v_node is None:
        return None
    s_node = arg(node, 2, "size")
    size = None
    if s_node is not None:
        fact = ctx.fact(s_node)
        if isinstance(fact, Literal) and all(isinstance(d, int) for d in fact.value):
            size = tuple(fact.value)
    return Construction(ctx.tensor(i_node), ctx.tensor(v_node), size)
