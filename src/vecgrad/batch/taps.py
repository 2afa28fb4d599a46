"""Elementwise work on overlapping windows in the order their elements lie in memory.

Batching a loop over windows `w = x[t:t+k]` of a (T, C) array gives a strided view of shape
(n, k, C) whose position and tap axes both step by a row: NumPy walks it (and every result
computed from it) in runs of C elements, one inner loop per (t, a). Read tap-major, (k, n, C),
the same view is k runs of n * C contiguous elements, the tap slices `x[a:a+n]` a
hand-vectorized version adds up. So elementwise work on such a view (`w - mean(w)` with the
window mean broadcast back, a clip, a square) runs on the view in its *run order* (the axes
that merge into the longest contiguous inner run innermost) and is transposed back after; the
layout rules (rewrite/layout.py) move that transpose on to where a reduction or a contraction
absorbs it, so the chain and its cotangents run in long runs, and the windows' cotangent is k
adds of contiguous slices. A window's maximum or minimum reduces the same view in run order
(k - 1 maximums of contiguous slabs), and its cotangent's mask runs in that order too.
"""
from __future__ import annotations

import numpy as np

from .. import primitives as P
from ..ir import Eqn
from ..rewrite.engine import Ctx
from .windows import _flat_steps, _overlaps

# Reordered only when the run order's inner run is this many times the view order's (the
# transposed result's consumers may copy it back).
GAIN = 4


def _inner_run(n_steps: list[tuple[int, int]]) -> int:
    """The contiguous run the innermost axes of (size, step) axes make, in that order."""
    run = 1
    for n, st in reversed(n_steps):
        if n == 1:
            continue
        if st != run:
            break
        run *= n
    return run


def run_order(shape: tuple[int, ...], dims: tuple) -> tuple[int, ...] | None:
    """The order of the view's axes (outer to inner) with the longest contiguous inner run:
    from step 1 outwards, at each step the longest axis whose step is the run so far; the
    other axes outside, by decreasing step. None where that run is not GAIN times the one of
    the view's own order."""
    steps = _flat_steps(shape, dims)
    axes = [(n, st) for (n, _), st in zip(dims, steps)]
    inner: list[int] = []
    run = 1
    while True:
        fits = [a for a, (n, st) in enumerate(axes) if a not in inner and n > 1 and st == run]
        if not fits:
            break
        a = max(fits, key=lambda a: axes[a][0])
        inner.append(a)
        run *= axes[a][0]
    outer = sorted((a for a in range(len(axes)) if a not in inner), key=lambda a: -abs(axes[a][1]))
    order = tuple(outer + inner[::-1])
    if run < GAIN * _inner_run(axes):
        return None
    return order


def _moved(shape: tuple[int, ...], nd: int, order: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of a broadcast operand (rank <= nd) read in `order`, where that is a reshape
    (only its unit axes move); else None."""
    full = (1,) * (nd - len(shape)) + tuple(shape)
    kept = [a for a in range(nd) if full[a] != 1]
    if [a for a in order if full[a] != 1] != kept:
        return None
    return tuple(full[a] for a in order)


def _reordered(s: Eqn) -> tuple[int, ...] | None:
    """The run order of view s, where its windows overlap and the order gains (else None)."""
    shape, dims = s.inputs[0].aval.shape, s.params["dims"]
    return run_order(shape, dims) if _overlaps(shape, dims) else None


def _view_in(c: Ctx, s: Eqn, order: tuple[int, ...], src: object) -> object:
    """View s with its axes in `order`."""
    dims = s.params["dims"]
    return c.emit(P.strided, (s.inputs[0],), {"start": s.params["start"],
                                              "dims": tuple(dims[k] for k in order)}, src)


def elementwise_of_windows_tap_major(e: Eqn, c: Ctx) -> object:
    """f(windows(x), y) = transpose(f(windows(x) in run order, y reshaped), back): the
    windows overlap, their own order has short inner runs, and every other operand is a
    scalar or broadcasts so that reading it in the new order moves only unit axes."""
    if not e.prim.elementwise or e.out.aval.ndim < 2:
        return None
    views = [c.def_of(a, P.strided) if a.aval.shape == e.out.aval.shape else None
             for a in e.inputs]
    s = next((v for v in views if v is not None), None)
    if s is None or any(v is not None and (v.params != s.params or v.inputs[0].aval.shape
                                           != s.inputs[0].aval.shape) for v in views):
        return None
    order = _reordered(s)
    if order is None:
        return None
    nd = e.out.aval.ndim
    ins = []
    for v, a in zip(views, e.inputs):
        if v is not None:
            ins.append(_view_in(c, v, order, e.src))
        elif a.aval.ndim == 0:
            ins.append(a)
        else:
            moved = _moved(a.aval.shape, nd, order)
            if moved is None:
                return None
            ins.append(c.emit(P.reshape, (a,), {"shape": moved}, e.src))
    inner = c.emit(e.prim, tuple(ins), dict(e.params), e.src)
    return P.transpose, (inner,), {"perm": tuple(int(i) for i in np.argsort(order))}


def extreme_of_windows_tap_major(e: Eqn, c: Ctx) -> object:
    """max(windows(x), axes) = max(windows(x) in run order, the same axes): NumPy reduces
    the tap axis of (k, n, C) as k - 1 maximums of contiguous slabs, of (n, k, C) one short
    inner loop per window; its cotangent (a mask against the result) runs in that order
    too."""
    s = c.def_of(e.inputs[0], P.strided)
    order = _reordered(s) if s is not None else None
    if order is None:
        return None
    view = _view_in(c, s, order, e.src)
    axes = e.params["axes"]
    r = c.emit(e.prim, (view,), {"axes": tuple(sorted(order.index(a) for a in axes))}, e.src)
    kept = [a for a in order if a not in axes]  # r's axes, as the view's
    perm = tuple(kept.index(a) for a in sorted(kept))
    if perm == tuple(range(len(perm))):
        return r
    return P.transpose, (r,), {"perm": perm}


__all__ = ["elementwise_of_windows_tap_major", "extreme_of_windows_tap_major", "run_order"]
