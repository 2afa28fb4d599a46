"""Elementwise ops between a large array and an operand broadcast along its leading axes,
where the axes they share are short: `x - mu` with x (3000, 16) and mu (16,).

NumPy's ufunc loop runs one inner loop per row of the large operand, 3000 loops of 16
elements here, and each loop's setup costs more than its 16 subtractions: measured 19.7 us
against 6.3 us for `x - x` of the same shape. The same op over the array viewed as rows of
L = 16 * r elements, against the small operand tiled r times (a small copy), runs r times
fewer inner loops and computes every element exactly as before (the same ufunc on the same
pairs of numbers): the result is bit for bit NumPy's.

The kernel checks the layout at run time: an operand or output that is not C-contiguous
(a user's transposed input, a strided region written into) takes the plain ufunc.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...ir import Aval

SHORT = 128     # a shared block of fewer elements than this runs too many inner loops
ROW = 512       # the row length aimed at (elements): loop setups then cost a few percent
SAVED = 2048    # fewer inner loops saved than this (2-3 ns each) do not pay for the tiling (4 us)


class Rows:
    """`ufunc(a, b, out=None)` for operands of fixed shapes, one of them (`big`: 0 or 1) the
    result's shape and the other broadcast along its leading axes only, computed over rows
    of `length` elements (the small operand tiled `reps` times)."""

    nout = 1

    def __init__(self, ufunc: np.ufunc, big: int, shape: tuple[int, ...], length: int,
                 reps: int):
        self.ufunc, self.big, self.shape = ufunc, big, shape
        self.rows = (math.prod(shape) // length, length)
        self.reps = reps

    def __call__(self, a: Any, b: Any, out: Any = None) -> Any:
        x, s = (a, b) if self.big == 0 else (b, a)
        if not (x.__class__ is np.ndarray and x.flags.c_contiguous and
                (out is None or out.flags.c_contiguous)):
            return self.ufunc(a, b, out=out)
        t = np.tile(np.ravel(s), self.reps)
        rows = x.reshape(self.rows)
        into = None if out is None else out.reshape(self.rows)
        r = self.ufunc(rows, t, out=into) if self.big == 0 else self.ufunc(t, rows, out=into)
        return out if out is not None else r.reshape(self.shape)


def plan(ufunc: Any, avals: list[Aval]) -> Rows | None:
    """The row kernel for a binary ufunc on operands of these avals, where it pays (None:
    the plain ufunc)."""
    if not isinstance(ufunc, np.ufunc) or ufunc.nin != 2 or ufunc.nout != 1 or len(avals) != 2:
        return None
    for big in (0, 1):
        x, s = avals[big], avals[1 - big]
        n = x.size
        if s.ndim == 0 or s.size <= 1 or s.ndim > x.ndim or \
                s.dtype != x.dtype or x.dtype.kind not in "fc":
            continue
        block = _trailing_block(x.shape, s.shape)
        if block is None or block >= SHORT:
            continue
        reps = _reps(n // block, block)
        if reps is not None and n // block - n // (block * reps) >= SAVED:
            return Rows(ufunc, big, x.shape, block * reps, reps)
    return None


def _trailing_block(big: tuple[int, ...], small: tuple[int, ...]) -> int | None:
    """The number of elements of the trailing axes the small operand shares with the large
    one, where it is 1 (or absent) along every axis before them; None otherwise."""
    k = len(big) - len(small)
    padded = (1,) * k + small
    first = next((i for i, d in enumerate(padded) if d != 1), len(big))
    if padded[first:] != big[first:] or first == 0:
        return None
    return math.prod(big[first:])


def _reps(rows: int, block: int) -> int | None:
    """The fewest repeats r of the block, dividing the number of rows, that make rows of at
    least ROW elements (or all of them), where that cuts the inner loops at least fourfold."""
    want = -(-ROW // block)
    for r in range(want, min(rows, 8 * want) + 1):
        if rows % r == 0:
            return r if r >= 4 else None
    return None
