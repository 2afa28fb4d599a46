"""np.packbits / np.unpackbits of traced arrays: bits of booleans and integers packed into
uint8 bytes and back, as NumPy's (axis None: the flattened array; 'big' or 'little' bit
order; a last byte padded with zero bits; `count` keeping or padding bits). Integer results:
no gradient; they batch as the elementwise operations and sums they are made of."""
from __future__ import annotations

from typing import Any

import numpy as _np

from ..tracing import Tracer
from . import _ops, _ufuncs
from ._base import _dtype, _shape, asarray, astype

__all__ = ["packbits", "unpackbits"]

_U8 = _np.dtype(_np.uint8)


def _weights(bitorder: str) -> _np.ndarray:
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    w = 1 << _np.arange(8)[::-1] if bitorder == "big" else 1 << _np.arange(8)
    return w.astype(_U8)


def _along_last(a: Any, axis: int | None) -> tuple[Any, int]:
    """`a` with `axis` moved last (axis None: flattened), and that axis normalized."""
    if axis is None:
        return _ops.reshape(a, (-1,)), 0
    nd = len(_shape(a))
    if not -nd <= axis < nd:
        raise _np.exceptions.AxisError(axis, nd)
    axis %= nd
    return _ops.moveaxis(a, axis, -1), axis


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Each run of 8 entries along `axis` (nonzero: a 1 bit) packed into one uint8, the
    first entry the highest bit ('big') or the lowest ('little'); a short last run is
    padded with zero bits."""
    if not isinstance(a, Tracer):
        return _np.packbits(a, axis=axis, bitorder=bitorder)
    if _dtype(a).kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    w = _weights(bitorder)
    nd = len(_shape(a))
    b, ax = _along_last(astype(_ufuncs.not_equal(a, 0), _U8), axis)
    n = _shape(b)[-1]
    m = -(-n // 8)
    if m * 8 != n:
        pad = _np.zeros(_shape(b)[:-1] + (m * 8 - n,), _U8)
        b = _ops.concatenate([b, pad], axis=-1)
    b = _ops.reshape(b, _shape(b)[:-1] + (m, 8))
    out = _ops.sum(_ufuncs.multiply(b, w), axis=-1, dtype=_U8)
    return out if axis is None or nd == 0 else _ops.moveaxis(out, -1, ax)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The 8 bits of each uint8 along `axis` (axis None: the flattened array) as 0 / 1
    uint8 entries, highest first ('big') or lowest first ('little'); `count` keeps that
    many bits (negative: drops them from the end; past the end: zero bits)."""
    if not isinstance(a, Tracer):
        return _np.unpackbits(a, axis=axis, count=count, bitorder=bitorder)
    if _dtype(a) != _U8:
        raise TypeError("Expected an input array of unsigned byte data type")
    shifts = _np.arange(8)[::-1] if _weights(bitorder)[0] == 128 else _np.arange(8)
    nd = len(_shape(a))
    b, ax = _along_last(asarray(a), axis)
    bits = _ufuncs.bitwise_and(_ufuncs.right_shift(_ops.reshape(b, _shape(b) + (1,)),
                                                   shifts.astype(_U8)), _np.uint8(1))
    bits = _ops.reshape(bits, _shape(b)[:-1] + (_shape(b)[-1] * 8,))
    if count is not None:
        n = _shape(bits)[-1]
        keep = count if count >= 0 else max(n + count, 0)
        bits = bits[..., :keep]
        if keep > n:
            pad = _np.zeros(_shape(bits)[:-1] + (keep - n,), _U8)
            bits = _ops.concatenate([bits, pad], axis=-1)
    return bits if axis is None or nd == 0 else _ops.moveaxis(bits, -1, ax)
