"""Correlations of which only a part is needed, or whose signal is mostly zeros.

NumPy's `np.correlate` runs one multiply-add per (output, tap) pair that overlaps the
signal: mode "valid" of a signal of length N with k taps costs (N - k + 1) k, mode "full"
(the signal padded with k - 1 zeros both sides, the padding skipped) costs N k. Two forms
waste most of that:

- a read of a slice of the correlation (`np.correlate(x, x, "full")[n - 1:n - 1 + m]`,
  the lags 0..m-1 of an autocorrelation): the slice is the correlation of the part of the
  signal it reaches, so the other outputs are never computed;
- the correlation of a signal that is zeros outside a run `[a, b)` (the cotangent of such a
  read, `zeros.at[a:b].set(g)`, which the VJP correlates with the other operand): it is the
  full correlation of the run alone, read at the shifted positions (zeros where the run
  does not reach), b - a signal entries instead of N.

Both compute the same sums of the same products, in the same order (terms that are zeros in
the original are left out, adding nothing): as accurate as the original.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn


def _cost(n: int, k: int, mode: str) -> int:
    """Multiply-adds of np.correlate on a signal of n and k taps."""
    return n * k if mode == "full" else max(n - k + 1, 0) * k


def _zeros(n: int, dtype: Any, ctx: Any, e: Eqn) -> Any:
    return ctx.emit(P.full, (), {"shape": (n,), "dtype": dtype, "value": 0.0}, e.src)


def _window(x: Any, lo: int, hi: int, ctx: Any, e: Eqn) -> Any:
    """x[lo:hi] where positions outside x read zeros."""
    n, dt = x.aval.shape[0], x.aval.dtype
    a, b = max(lo, 0), min(hi, n)
    parts = []
    if lo < 0:
        parts.append(_zeros(min(-lo, hi - lo), dt, ctx, e))
    if a < b:
        parts.append(x if (a, b) == (0, n) else
                     ctx.emit(P.getitem, (x,), {"idx": P.BasicIndex((P.Sl(a, b, 1),))}, e.src))
    if hi > n:
        parts.append(_zeros(min(hi - n, hi - lo), dt, ctx, e))
    return parts[0] if len(parts) == 1 else ctx.emit(P.concatenate, tuple(parts), {"axis": 0},
                                                     e.src)


def read_of_correlate(e: Eqn, ctx: Any) -> Any:
    """correlate(x, w, mode)[s:t] = correlate(x'[s - o:t + k - 1 - o], w, "valid"), x' the
    signal with zeros beyond its ends and o = k - 1 in mode "full" (0 in "valid"): the
    outputs s..t-1 only, when that costs fewer multiply-adds."""
    idx = e.params["idx"]
    c = ctx.def_of(e.inputs[0], P.correlate)
    if c is None or ctx.n_uses(e.inputs[0]) != 1 or len(idx) != 1 or \
            not isinstance(idx[0], P.Sl) or idx[0].step != 1 or len(idx[0]) == 0:
        return None
    x, w = c.inputs
    n, k, mode = x.aval.shape[0], w.aval.shape[0], c.params["mode"]
    s, t = idx[0].start, idx[0].stop
    if (t - s) * k >= _cost(n, k, mode):
        return None
    o = k - 1 if mode == "full" else 0
    lo, hi = s - o, t + k - 1 - o
    if min(hi, n) <= max(lo, 0):
        return None  # (the slice reaches no entry of x: zeros, left as they are)
    return P.correlate, (_window(x, lo, hi, ctx, e), w), {"mode": "valid"}


def _run_in_zeros(p: Any, ctx: Any) -> tuple[Any, int, int] | None:
    """p = zeros.at[a:b].set(g), 1-D: (g, a, b)."""
    s = ctx.def_of(p, P.setitem)
    if s is None:
        return None
    z, idx = s.inputs[0], s.params["idx"]
    f = ctx.def_of(z, P.full)
    zeros = f.params["value"] == 0 if f is not None else \
        isinstance(z, Const) and not np.any(z.value)
    if not zeros or len(idx) != 1 or not isinstance(idx[0], P.Sl) or idx[0].step != 1 or \
            len(idx[0]) == 0 or s.inputs[1].aval.shape != (len(idx[0]),):
        return None
    return s.inputs[1], idx[0].start, idx[0].stop


def correlate_of_zero_padded(e: Eqn, ctx: Any) -> Any:
    """correlate(zeros.at[a:b].set(g), w, mode)[u] = correlate(g, w, "full")[u + k - 1 - a - o]
    (o = k - 1 in mode "full", 0 in "valid"; zeros where that index leaves the full
    correlation): the run g alone, when that costs fewer multiply-adds."""
    p, w = e.inputs
    found = _run_in_zeros(p, ctx)
    if found is None or isinstance(w, Const) and not np.any(w.value):
        return None
    g, a, b = found
    n, k, mode = p.aval.shape[0], w.aval.shape[0], e.params["mode"]
    if _cost(b - a, k, "full") >= _cost(n, k, mode):
        return None
    o = k - 1 if mode == "full" else 0
    full = ctx.emit(P.correlate, (g, w), {"mode": "full"}, e.src)
    first = k - 1 - a - o
    out = _window(full, first, first + e.out.aval.shape[0], ctx, e)
    return out if out.aval == e.out.aval else None


__all__ = ["correlate_of_zero_padded", "read_of_correlate"]
