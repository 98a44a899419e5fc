"""Which gradients a set of parameters gets: the flags every layer of the analysis shares.

Data only, below both the torch tables and the model summaries, so that neither imports the
other to name a dense or a sparse gradient."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Flags:
    """Whether a set of parameters holds some with sparse grads, some with dense grads, and
    some sparse parameter tensors. Each is True, False or None (unknown)."""

    has_sparse: Optional[bool] = None
    has_dense: Optional[bool] = None
    sparse_param: Optional[bool] = False

    def union(self, other: "Flags") -> "Flags":
        return Flags(_or(self.has_sparse, other.has_sparse), _or(self.has_dense, other.has_dense),
                     _or(self.sparse_param, other.sparse_param))


def _or(a, b):
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None


NONE = Flags(False, False, False)
DENSE = Flags(False, True, False)
SPARSE = Flags(True, False, False)
UNKNOWN = Flags(None, None, None)
