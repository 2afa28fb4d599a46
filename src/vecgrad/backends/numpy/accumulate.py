"""Running sums, maxima and minima (cumsum, cummax, cummin) over blocks of steps.

NumPy's accumulate loop reads back the element it has just stored before each add: one
dependent add per element through memory, about 5.5 ns per float64 here (175 us for a
cumsum of 32,000 floats, along any axis), 30x an elementwise add over the same array. The
scans of a running mean or extreme (cumsum of (999, 32) along axis 0: welford_mean_var's
gradient spent 380 of 917 us in its two) are most of their programs' time.

Split the scanned axis into K blocks of L steps and every block's scan runs at once:

    S[k, j] = S[k, j-1] (+) x[kL + j]            j = 1 .. L-1, one ufunc call over all k
    out[kL + j] = E[k-1] (+) S[k, j]             E = accumulate(S[:, L-1]) over the blocks

with (+) the scan's operator (add, maximum, minimum: associative). That is L calls over
(K, rest) arrays, one accumulate over (K, rest) and one pass that combines, at elementwise
speed; the steps past the last whole block (fewer than L) are one short accumulate. L is
about sqrt(n m / 300) (n steps, m elements per step; at most 16): the per-call cost of the L calls
against the serial K m elements of the blocks' scan.

Maxima and minima are exact, and so are sums of int64 (wrapping is associative), so the
values are NumPy's bit for bit (ties keep the earlier
operand: the prefix is passed first, as NumPy's loop passes its running value). A sum is
rounded in another order, with no larger error bound: each out[t] is a sum of at most
K + L rounded partial sums where NumPy's loop rounds t times.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ... import primitives as P
from ...ir import Aval
from .lowering import Lowering

MIN_SIZE = 8192  # elements: below, NumPy's loop is within a few microseconds of the blocks
MIN_STEPS = 64  # steps along the axis: fewer, and the blocks would be too short to pay
MAX_BLOCK = 16  # steps: longer blocks gained nothing measurable (memory-bound above)
MIN_ROW = 32  # contiguous elements per step: shorter rows make NumPy's inner loops short


def _block(n: int, m: int) -> int:
    return max(4, min(n // 4, MAX_BLOCK, round(math.sqrt(n * m / 300))))


def blocked(op: np.ufunc, x: np.ndarray, out: np.ndarray, L: int) -> None:
    """out[t] = x[0] (op) .. (op) x[t] along axis 0, by blocks of L steps (see the doc)."""
    n = x.shape[0]
    K = n // L
    X = x[:K * L].reshape((K, L) + x.shape[1:])
    S = out[:K * L].reshape(X.shape)
    S[:, 0] = X[:, 0]
    for j in range(1, L):
        op(S[:, j - 1], X[:, j], out=S[:, j])
    E = op.accumulate(S[:, L - 1], axis=0)
    op(E[:-1, None], S[1:], out=S[1:])
    if K * L < n:
        tail = out[K * L:]
        op.accumulate(x[K * L:], axis=0, out=tail)
        op(E[-1], tail, out=tail)


def _lower(op: np.ufunc, plain: Callable, dtypes: tuple) -> Callable:
    def lower(avals: list[Aval], axis: int, reverse: bool = False) -> Callable:
        a = avals[0]
        n, row = a.shape[axis], math.prod(a.shape[axis + 1:])
        if a.dtype not in dtypes or n < MIN_STEPS or a.size < MIN_SIZE or row < MIN_ROW:
            return lambda x: plain(x, axis=axis, reverse=reverse)
        L = _block(n, a.size // n)

        def run(x: np.ndarray) -> np.ndarray:
            if not x.flags.c_contiguous:  # (rows of a view may be short strided runs)
                return plain(x, axis=axis, reverse=reverse)
            out = np.empty(x.shape, x.dtype)
            xs, os = np.moveaxis(x, axis, 0), np.moveaxis(out, axis, 0)
            if reverse:
                xs, os = xs[::-1], os[::-1]
            blocked(op, xs, os, L)
            return out
        return run
    return lower


# (np.cumsum of a narrower integer sums in int64: the blocks would sum in its own dtype)
_SUMS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64))
_EXTREMES = _SUMS + (np.dtype(np.int32),)
LOWERINGS = {
    "cumsum": Lowering(lower=_lower(np.add, P.cumsum.impl, _SUMS)),
    "cummax": Lowering(lower=_lower(np.maximum, P.cummax.impl, _EXTREMES)),
    "cummin": Lowering(lower=_lower(np.minimum, P.cummin.impl, _EXTREMES)),
}
