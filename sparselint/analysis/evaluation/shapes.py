"""Shapes and values of tensors written as literals, for the construction checks."""
from __future__ import annotations

from typing import Optional

MAX_ELEMENTS = 10_000


def shape_of(value) -> Optional[tuple[int, ...]]:
    """The shape of a rectangular nested tuple of numbers, else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ()
    if not isinstance(value, tuple):
        return None
    if not value:
        return (0,)
    inner = [shape_of(v) for v in value]
    if any(s is None for s in inner) or len(set(inner)) != 1:
        return None
    return (len(value),) + inner[0]


def size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _get(value, index):
    for i in index:
        value = value[i]
    return value


def _build(shape, fn, prefix=()):
    if len(prefix) == len(shape):
        return fn(prefix)
    return tuple(_build(shape, fn, prefix + (i,)) for i in range(shape[len(prefix)]))


def permute(value, dims: tuple[int, ...]):
    shape = shape_of(value)
    if shape is None or sorted(dims) != list(range(len(shape))):
        return None
    new_shape = tuple(shape[d] for d in dims)

    def at(index):
        src = [0] * len(shape)
        for pos, d in enumerate(dims):
            src[d] = index[pos]
        return _get(value, src)

    return _build(new_shape, at)


def transpose(value, a: int = 0, b: int = 1):
    shape = shape_of(value)
    if shape is None or len(shape) < 2:
        return value if shape is not None and len(shape) < 2 else None
    n = len(shape)
    a, b = a % n, b % n
    dims = list(range(n))
    dims[a], dims[b] = dims[b], dims[a]
    return permute(value, tuple(dims))


def flip(value, dims: tuple):
    """The value reversed along each of `dims`."""
    shape = shape_of(value)
    if shape is None or not shape or not all(isinstance(d, int) and not isinstance(d, bool) and -len(shape) <= d < len(shape)
                                             for d in dims):
        return None
    axes = {d % len(shape) for d in dims}

    def at(index):
        return _get(value, [shape[k] - 1 - i if k in axes else i for k, i in enumerate(index)])

    return _build(shape, at)


def repeat(value, reps: tuple):
    """`Tensor.repeat(*reps)`: the value tiled `reps` times along each dimension, new leading
    dimensions first."""
    shape = shape_of(value)
    if shape is None or len(reps) < len(shape) or any(r < 0 for r in reps):
        return None
    for _ in range(len(reps) - len(shape)):
        value = (value,)
    shape = (1,) * (len(reps) - len(shape)) + shape
    new_shape = tuple(s * r for s, r in zip(shape, reps))
    if size(new_shape) > MAX_ELEMENTS:
        return None
    return _build(new_shape, lambda index: _get(value, [i % s for i, s in zip(index, shape)]))


def stack(values: list, dim: int = 0):
    shapes = [shape_of(v) for v in values]
    if not values or any(s is None for s in shapes) or len(set(shapes)) != 1:
        return None
    stacked = tuple(values)
    n = len(shapes[0]) + 1
    dim = dim % n
    dims = list(range(1, n))
    dims.insert(dim, 0)
    return permute(stacked, tuple(dims))


def cat(values: list, dim: int = 0):
    shapes = [shape_of(v) for v in values]
    if not values or any(s is None or not s for s in shapes):
        return None
    n = len(shapes[0])
    dim = dim % n
    if any(len(s) != n or s[:dim] + s[dim + 1:] != shapes[0][:dim] + shapes[0][dim + 1:] for s in shapes):
        return None
    moved = [permute(v, (dim,) + tuple(d for d in range(n) if d != dim)) for v in values]
    joined = tuple(x for m in moved for x in m)
    back = [0] * n
    order = (dim,) + tuple(d for d in range(n) if d != dim)
    for pos, d in enumerate(order):
        back[d] = pos
    return permute(joined, tuple(back))


def flat(value):
    if isinstance(value, tuple):
        for v in value:
            yield from flat(v)
    else:
        yield value


def matmul_shape(a: Optional[tuple], b: Optional[tuple]) -> Optional[tuple]:
    """The shape of the product of two matrices of these shapes, when both are known and agree."""
    if a is None or b is None or len(a) != 2 or len(b) != 2 or a[1] != b[0]:
        return None
    return (a[0], b[1])
