"""The layout primitives: a constant fill, reshape, transpose, relayout and broadcast_to.
They sit below the elementwise family, whose batching rules and VJPs reshape and broadcast,
and below structural (indexing and writes), which re-exports them."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register


def _lift(x: Any, rank: int) -> Any:
    """Give a batched operand (n, *s) the rank rank+1 by inserting unit axes after n."""
    if x.ndim - 1 >= rank:
        return x
    return reshape(x, shape=(x.shape[0],) + (1,) * (rank + 1 - x.ndim) + x.shape[1:])


def _full_shape(shape: tuple[int, ...], dtype: np.dtype, value: float) -> Aval:
    return Aval(shape, np.dtype(dtype))


full = register(Primitive(
    "full", lambda shape, dtype, value: np.full(shape, value, dtype), _full_shape))


def _reshape_shape(x: Aval, shape: tuple[int, ...]) -> Aval:
    if math.prod(shape) != x.size:
        raise ShapeError(f"cannot reshape array of size {x.size} (shape {x.shape}) into "
                         f"shape {shape}")
    return Aval(tuple(shape), x.dtype)


reshape = register(Primitive(
    "reshape", lambda x, shape: np.reshape(x, shape), _reshape_shape,
    lambda g, ans, x, shape: (reshape(g, shape=x.shape),),
    lambda n, b, x, shape: reshape(x, shape=(n,) + shape)))


def _transpose_shape(x: Aval, perm: tuple[int, ...]) -> Aval:
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"axes {perm} don't match an array of shape {x.shape}")
    return Aval(tuple(x.shape[p] for p in perm), x.dtype)


transpose = register(Primitive(
    "transpose", lambda x, perm: np.transpose(x, perm), _transpose_shape,
    lambda g, ans, x, perm: (transpose(g, perm=tuple(np.argsort(perm).tolist())),),
    lambda n, b, x, perm: transpose(x, perm=(0,) + tuple(p + 1 for p in perm))))


# A transpose that copies into the new order: for an operand that several contractions read
# with their batch axis first (backends/numpy/relayout.py). Rules never look through it.


relayout = register(Primitive(
    "relayout", lambda x, perm: np.ascontiguousarray(np.transpose(np.asarray(x), perm)),
    _transpose_shape,
    lambda g, ans, x, perm: (transpose(g, perm=tuple(np.argsort(perm).tolist())),),
    lambda n, b, x, perm: relayout(x, perm=(0,) + tuple(p + 1 for p in perm))))


def _bcast_shape(x: Aval, shape: tuple[int, ...]) -> Aval:
    try:
        ok = np.broadcast_shapes(x.shape, shape) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"cannot broadcast an array of shape {x.shape} to shape {shape}")
    return Aval(tuple(shape), x.dtype)


broadcast_to = register(Primitive(
    "broadcast_to", lambda x, shape: np.broadcast_to(x, shape), _bcast_shape,
    lambda g, ans, x, shape: (g,),  # the AD driver sums g back to x's shape
    lambda n, b, x, shape: broadcast_to(_lift(x, len(shape)), shape=(n,) + shape)))
