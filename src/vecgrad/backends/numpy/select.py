"""np.where(c, 0.0, x) as a bit mask: the same bits, without np.where's branches.

A masked write (`y[y < 0] = 0.0`, `r[r < 0] = 0.0`) and the cotangent of every such write,
of np.maximum(x, 0) and of np.clip are selections of x or a zero by a mask. np.where copies
element by element with a data-dependent branch: on random masks it ran at 8-9 ns per
float64 (a (2000, 32) select 0.5 ms, where np.maximum takes 20 us). The zero's bits are all
zero, so the selection is x's bits and-ed with a mask of all ones where x is kept:

    where(c, +0.0, x) = bits(x) & (c - 1)        where(c, x, +0.0) = bits(x) & -c

over the integers of x's width: bit for bit np.where's result (NaNs, infinities and -0.0 of x
kept; the +0.0 written), 20x faster. x may be smaller than the result and broadcast (a scalar
constant: the cotangent mask `where(c, 1.0, 0.0)` of a select, 10x faster than np.where); the
mask has the result's shape. Only for float32 and float64 results of x's dtype, with the
constant +0.0 (not -0.0).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir import Const, Eqn

_INT = {np.dtype(np.float64): np.int64, np.dtype(np.float32): np.int32}


def _is_plus_zero(a: Any) -> bool:
    return a.__class__ is Const and a.value.size == 1 and a.value.dtype.kind == "f" and \
        float(a.value.reshape(())) == 0.0 and not np.signbit(a.value.reshape(()))


def _fits(x: Any, out: Any) -> bool:
    """x has out's dtype and broadcasts to out's shape (no larger)."""
    shape = x.aval.shape
    return x.aval.dtype == out.dtype and len(shape) <= len(out.shape) and \
        all(d in (1, o) for d, o in zip(shape[::-1], out.shape[::-1]))


def zero_select(e: Eqn) -> Callable[..., Any] | None:
    """The bit-mask form of `where(c, 0.0, x)` / `where(c, x, 0.0)` (module doc), or None."""
    c, a, b = e.inputs
    out = e.out.aval
    it = _INT.get(out.dtype)
    if it is None or c.aval.dtype != np.bool_ or c.aval.shape != out.shape or not out.shape:
        return None  # (0-d: NumPy scalars, nothing to gain)
    if _is_plus_zero(a) and _fits(b, out):
        keep_where_false = True
    elif _is_plus_zero(b) and _fits(a, out):
        keep_where_false = False
    else:
        return None
    ft = out.dtype

    def run(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        m = np.asarray(c).view(np.int8).astype(it)
        if keep_where_false:
            m -= 1  # (all ones where c is False: x = b kept)
            x = b
        else:
            np.negative(m, out=m)  # (all ones where c is True: x = a kept)
            x = a
        return np.bitwise_and(np.asarray(x, ft).view(it), m, out=m).view(ft)
    return run


__all__ = ["zero_select"]
