"""Linear recurrences with constant coefficients in closed form.

`affine_scan(c0, a, b)` computes c[t] = a[t] * c[t-1] + b[t] by pairing steps (log-depth,
no division: see primitives/scans.py), since a closed form over- or underflows for arbitrary
coefficients. When the coefficients are constants (a running mean's t / (t + 1), a decay of
0.99), their cumulative product P is known while compiling, and where it stays well inside
the floating-point range the closed form

    c = P * (c0 + cumsum(b / P))

is one cumulative sum and two products by constants: what a user writes by hand, and
cheaper than the paired steps (measured: 1-D, 8,000 steps 58 -> 25 us). Its rounding is
bounded as the recurrence's own (each term b[s] enters scaled by P[t] / P[s], the product of
the coefficients between the steps, as in the loop). Not for rows of more than ROW_MAX
elements: NumPy's cumsum along the first axis of such rows runs at 6-12 ns per element, and
the paired steps' whole-row passes win (1,000 steps of 64: 633 against 827 us; of 256: 2.5
against 4.0 ms; a harmonic running mean of (1,000, 64) went 0.51 -> 1.09 ms).

A first coefficient of zero (a running mean's 0 / 1, the end of a reverse scan) makes P zero
throughout; the scan restarts there instead: c[0] = b[0], and c[1:] is the scan of the other
steps from it, whose product is in range (P = 1 / (t + 1) for the mean).

Where P leaves the range over the whole run (a decay of 0.9 over 4,000 steps: 1e-183), the
run is cut into nb blocks of L steps over which it stays in range: with Q the cumulative
product within each block, s the closed form of each block from a zero state, and C[k] the
state at the end of block k (C[-1] = c0),

    c[kL + j] = Q[k, j] * (C[k-1] + cumsum_j(b / Q)[k, j]),   C[k] = Q[k, L-1] C[k-1] + e[k],

e[k] = Q[k, L-1] cumsum(b / Q)[k, L-1]: the blocks' ends are an affine_scan of nb steps
(itself in closed form where its product stays in range), the rest one cumulative sum and
products by constants (1-D, 4,000 steps: 71 -> 40 us). Only for rows of at most
BLOCK_ROW_MAX elements: its dozen whole-array operations lose to the paired steps on wider
rows (two_timescale_ema's (999, 32): 2.9 -> 4.8 ms in one process at load 14).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn

ROW_MAX = 32  # (rows of 32: closed 243 us against 312 for the paired steps; of 64: 827 / 633)
BLOCK_ROW_MAX = 8  # (rows of 8: blocked 78 us against 123 for the paired steps; of 4: 83 / 157)


def closed_affine_scan(e: Eqn, ctx: Any) -> Any:
    """affine_scan(c0, a, b) = P * (c0 + cumsum(b / P)) for constant a (see module doc)."""
    init, a, b = e.inputs
    out = e.out.aval
    if not isinstance(a, Const) or out.dtype.kind != "f":
        return None
    T, row = out.shape[0], out.shape[1:]
    if math.prod(row) > ROW_MAX:
        return None
    av = np.asarray(a.value).astype(out.dtype)
    av = av.reshape(av.shape[:1] + (1,) * (len(row) + 1 - av.ndim) + av.shape[1:])
    av = np.broadcast_to(av, (T,) + av.shape[1:])
    if T > 1 and a.aval.shape[0] == T and b.aval.dtype == out.dtype and not np.any(av[0]):
        return _restart(ctx, e, b)
    with np.errstate(all="ignore"):
        prod = np.cumprod(av, axis=0)
        inv = 1 / prod
    big = float(np.finfo(out.dtype).max) ** 0.25  # (1e77 in float64, 4e9 in float32)
    zero = isinstance(init, Const) and not np.any(init.value)
    bs = b.aval.shape  # (b's row is aligned after its step axis, as affine_scan's own)
    steps = bs[:1] + (1,) * (len(row) + 1 - len(bs)) + bs[1:]
    shape = np.broadcast_shapes(steps, prod.shape, (1,) + init.aval.shape)
    if shape != out.shape:
        return None
    if not _in_range(prod, big):
        L = _block(av, big)
        if L is None or math.prod(row) > BLOCK_ROW_MAX or \
                np.broadcast_shapes(steps, prod.shape) != out.shape:
            return None
        if steps != bs:
            b = ctx.emit(P.reshape, (b,), {"shape": steps}, e.src)
        return _blocked(ctx, e, init, av, b, L)
    if steps != bs:
        b = ctx.emit(P.reshape, (b,), {"shape": steps}, e.src)
    s = ctx.emit(P.mul, (b, Const(inv)), {}, e.src)
    s = ctx.emit(P.cumsum, (s,), {"axis": 0, "reverse": False}, e.src)
    if not zero:
        s = ctx.emit(P.add, (s, init), {}, e.src)
    if np.broadcast_shapes(s.aval.shape, prod.shape) == out.shape:
        return P.mul, (s, Const(prod)), {}
    # (a zero init dropped, b and a narrower than the state: one value per step, repeated)
    s = ctx.emit(P.mul, (s, Const(prod)), {}, e.src)
    return P.broadcast_to, (s,), {"shape": out.shape}


def _restart(ctx: Any, e: Eqn, b: Any) -> Any:
    """affine_scan(c0, a, b) with a[0] = 0 (a running mean's 0 / 1, a reverse scan's end):
    c[0] = b[0] whatever c0, and c[1:] = affine_scan(b[0], a[1:], b[1:]), whose coefficients'
    product no longer starts at zero (P = 1 / (t + 1) for the mean)."""
    a = e.inputs[1]
    out = e.out.aval
    T, row = out.shape[0], out.shape[1:]

    def rows(v: Any, lo: int, hi: int | None = None) -> Any:
        k = (lo if hi is None else P.Sl(lo, hi, 1),)
        return ctx.emit(P.getitem, (v,), {"idx": k + tuple(P.Sl(0, d, 1)
                                                           for d in v.aval.shape[1:])}, e.src)
    b0 = rows(b, 0)
    first = ctx.emit(P.broadcast_to, (b0,), {"shape": row}, e.src)
    rest = ctx.emit(P.affine_scan, (first, Const(np.asarray(a.value)[1:]), rows(b, 1, T)), {},
                    e.src)
    first = ctx.emit(P.reshape, (first,), {"shape": (1,) + row}, e.src)
    return P.concatenate, (first, rest), {"axis": 0}


def _in_range(prod: np.ndarray, big: float) -> bool:
    m = np.abs(prod)
    return bool(np.all(np.isfinite(prod)) and m.size and m.min() >= 1 / big and m.max() <= big)


MIN_BLOCK = 16  # steps per block, at least (shorter blocks: the paired steps are as cheap)


def _block(av: np.ndarray, big: float) -> int | None:
    """A block length over which every product of consecutive coefficients stays within
    [1 / big, big], the blocks as even as they can be; None where blocks would be short."""
    with np.errstate(all="ignore"):
        worst = float(np.max(np.abs(np.log(np.abs(av))))) if av.size else 0.0
    if not np.isfinite(worst) or worst == 0.0:
        return None
    L = int(math.log(big) / worst)
    T = av.shape[0]
    if L < MIN_BLOCK or L >= T:
        return None
    nb = -(-T // L)
    return -(-T // nb)


def _blocked(ctx: Any, e: Eqn, init: Any, av: np.ndarray, b: Any, L: int) -> Any:
    """The blocked closed form of affine_scan(init, av, b) (module doc); b's row aligned."""
    out = e.out.aval
    T, row, src = out.shape[0], out.shape[1:], e.src
    nb = -(-T // L)
    pad = nb * L - T
    if pad:  # (padding steps: coefficient 1, input 0; their rows are cut off at the end)
        av = np.concatenate([av, np.ones((pad,) + av.shape[1:], av.dtype)])
        zeros = Const(np.zeros((pad,) + b.aval.shape[1:], out.dtype))
        b = ctx.emit(P.concatenate, (b, zeros), {"axis": 0}, src)
    q = np.cumprod(av.reshape((nb, L) + av.shape[1:]), axis=1)
    b = ctx.emit(P.reshape, (b,), {"shape": (nb, L) + b.aval.shape[1:]}, src)
    s = ctx.emit(P.mul, (b, Const(1 / q)), {}, src)
    s = ctx.emit(P.cumsum, (s,), {"axis": 1, "reverse": False}, src)
    full = tuple(P.Sl(0, d, 1) for d in row)
    ends = ctx.emit(P.getitem, (s,), {"idx": (P.Sl(0, nb, 1), L - 1) + full}, src)
    gain = Const(np.ascontiguousarray(q[:, L - 1]))
    ends = ctx.emit(P.mul, (ends, gain), {}, src)
    C = ctx.emit(P.affine_scan, (init, gain, ends), {}, src)  # the state after each block
    first = ctx.emit(P.broadcast_to, (init,), {"shape": row}, src)
    first = ctx.emit(P.reshape, (first,), {"shape": (1,) + row}, src)
    if nb > 1:
        before = ctx.emit(P.getitem, (C,), {"idx": (P.Sl(0, nb - 1, 1),) + full}, src)
        first = ctx.emit(P.concatenate, (first, before), {"axis": 0}, src)
    first = ctx.emit(P.reshape, (first,), {"shape": (nb, 1) + row}, src)
    s = ctx.emit(P.add, (s, first), {}, src)
    s = ctx.emit(P.mul, (s, Const(q)), {}, src)
    s = ctx.emit(P.reshape, (s,), {"shape": (nb * L,) + row}, src)
    if not pad:
        return s
    return P.getitem, (s,), {"idx": (P.Sl(0, T, 1),) + full}


__all__ = ["closed_affine_scan"]
