"""Python's `c = max(c, x)` and `c = min(c, x)` folded along one axis (builtins.max keeps its
first argument unless the second is strictly greater): the running value (`fold_extreme`),
the final value (`fold_total`), and the running value's transpose (`fold_scatter`).

The fold differs from np.maximum.accumulate in three ways, all of which decide where the
gradient goes: an x equal to the running value never wins (the earliest of equal items does),
a NaN x never wins (NaN > c is False), and a NaN first item is kept throughout. So the value
is np.fmax.accumulate (which skips NaNs), with the columns whose first item is NaN set to NaN.
Each step's value is the item at its *winner*, the last strict record up to it (a step where
the running value grew), so the cotangent of the running value is, at each record, the sum
of the cotangents of its steps up to the next record: one segment sum (np.add.reduceat on a
vector), read from the running value alone (a record is a step where it grew), with no
running argmax in the forward pass and no scatter by index in the backward one.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ComplexError, ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import eq, where
from .sorting import _INTP, _check_axis, argmax, take_along
from .structural import broadcast_to, reshape

__all__ = ["fold_extreme", "fold_scatter", "fold_total", "fold_winner"]


def _real(name: str, x: Aval, axis: int) -> None:
    _check_axis(name, x, axis)
    if x.dtype.kind == "c":
        raise ComplexError(name)  # (Python's max/min compare with >: no order)
    if x.dtype.kind not in "biuf":
        raise ShapeError(f"{name}: Python's max/min order real numbers, not {x.dtype}")
    if x.shape[axis] == 0:
        raise ValueError(f"{name}: max() of an empty sequence")


def _running(x0: np.ndarray, greater: bool) -> np.ndarray:
    """The fold's running value along axis 0 (see the module doc)."""
    if x0.dtype.kind != "f":
        return (np.maximum if greater else np.minimum).accumulate(x0, axis=0)
    out = (np.fmax if greater else np.fmin).accumulate(x0, axis=0)
    if x0.ndim == 1:  # (a NaN first item is kept: every later comparison with it is False)
        if x0[0] != x0[0]:
            out[:] = np.nan
        return out
    stuck = np.isnan(x0[0])
    if stuck.any():
        out[:, stuck] = np.nan
    return out


def _front(x: np.ndarray, axis: int) -> np.ndarray:
    return x if axis == 0 else np.moveaxis(x, axis, 0)  # (moveaxis: microseconds)


def _records(a0: np.ndarray, greater: bool) -> np.ndarray:
    """Where the running value a0 (axis 0) grew strictly: the steps whose item won."""
    return (np.greater if greater else np.less)(a0[1:], a0[:-1])


def _fold_extreme(x: np.ndarray, axis: int, greater: bool) -> np.ndarray:
    return np.moveaxis(_running(_front(x, axis), greater), 0, axis) if axis else \
        _running(x, greater)


def _winner0(a0: np.ndarray, greater: bool) -> np.ndarray:
    """The winner of each step along axis 0: the last record up to it (0 before any)."""
    return _last_record(_records(a0, greater))


def _last_record(rec: np.ndarray) -> np.ndarray:
    """The last record up to each step (rec: steps 1.. along axis 0; step 0 always one)."""
    n = rec.shape[0] + 1
    pos = np.zeros((n,) + rec.shape[1:], _INTP)
    pos[1:] = np.arange(1, n).reshape((n - 1,) + (1,) * (rec.ndim - 1))
    pos[1:] *= rec
    return np.maximum.accumulate(pos, axis=0)


def _fold_winner(ans: np.ndarray, axis: int, greater: bool) -> np.ndarray:
    return np.moveaxis(_winner0(_front(ans, axis), greater), 0, axis) if axis else \
        _winner0(ans, greater)


def _fold_scatter(g: np.ndarray, ans: np.ndarray, axis: int, greater: bool) -> np.ndarray:
    """out[j] = the sum of g[t] over the steps t that item j won (zero off the records)."""
    if g.shape != ans.shape:
        g = np.broadcast_to(g, ans.shape)
    out = segment_sums(_front(g, axis), _records(_front(ans, axis), greater))
    return np.moveaxis(out, 0, axis) if axis else out


def segment_sums(g0: np.ndarray, rec: np.ndarray) -> np.ndarray:
    """Along axis 0, each record's sum of g0 over its steps up to the next record (step 0 a
    record; rec holds steps 1..), zero off the records."""
    out = np.zeros(g0.shape, g0.dtype)
    if g0.ndim == 1:  # segments of consecutive steps: one reduceat over their starts
        starts = np.flatnonzero(rec)
        starts += 1
        starts = np.concatenate(([0], starts))
        out[starts] = np.add.reduceat(g0, starts)
        return out
    # each column its own segments: a sum by (winner, column) position
    n, m = g0.shape[0], g0[0].size
    flat = (_last_record(rec).reshape(n, m) * m + np.arange(m)).ravel()
    w = g0.reshape(n * m)
    sums = np.bincount(flat, w.real, n * m)  # (bincount weighs by reals only)
    if w.dtype.kind == "c":
        sums = sums + 1j * np.bincount(flat, w.imag, n * m)
    return sums.astype(out.dtype, copy=False).reshape(g0.shape)


def _fold_total(x: np.ndarray, axis: int, greater: bool) -> np.ndarray:
    x0 = _front(x, axis)
    if x0.dtype.kind != "f":
        return (np.max if greater else np.min)(x0, axis=0)
    out = np.asarray((np.fmax if greater else np.fmin).reduce(x0, axis=0))
    return np.where(np.isnan(x0[0]), x0[0], out) if np.isnan(x0[0]).any() else out


def _same_shape(name: str, int_out: bool = False) -> Any:
    def rule(x: Aval, axis: int, greater: bool) -> Aval:
        _real(name, x, axis)
        return Aval(x.shape, _INTP if int_out else x.dtype)
    return rule


def _total_shape(x: Aval, axis: int, greater: bool) -> Aval:
    _real("fold_total", x, axis)
    return Aval(x.shape[:axis] + x.shape[axis + 1:], x.dtype)


def _scatter_shape(g: Aval, ans: Aval, axis: int, greater: bool) -> Aval:
    _real("fold_scatter", ans, axis)
    try:
        s = np.broadcast_shapes(g.shape, ans.shape)
    except ValueError:
        raise ShapeError(f"fold_scatter: shapes {g.shape} and {ans.shape} do not broadcast") \
            from None
    if s != ans.shape:
        raise ShapeError(f"fold_scatter: the cotangent {g.shape} is wider than {ans.shape}")
    return Aval(s, g.dtype)


def _axis_batch(name: str) -> Any:
    def rule(n: int, b: tuple, *ins: Any, axis: int, greater: bool) -> Any:
        lead = [x if bb else broadcast_to(reshape(x, shape=(1,) + x.shape),
                                          shape=(n,) + x.shape) for x, bb in zip(ins, b)]
        return REG[name](*lead, axis=axis + 1, greater=greater)
    return rule


def _extreme_vjp(g: Any, ans: Any, x: Any, axis: int, greater: bool) -> tuple:
    return (fold_scatter(g, ans, axis=axis, greater=greater),)


def _scatter_vjp(gg: Any, out: Any, g: Any, ans: Any, axis: int, greater: bool) -> tuple:
    # linear in g: its transpose reads each step's cotangent at the step's winner; the
    # records are piecewise constant in ans (no cotangent)
    return (take_along(gg, fold_winner(ans, axis=axis, greater=greater), axis=axis), None)


def _total_vjp(g: Any, ans: Any, x: Any, axis: int, greater: bool) -> tuple:
    # the first item equal to the total won (a NaN first item, equal to none, is item 0)
    kd = x.shape[:axis] + (1,) + x.shape[axis + 1:]
    won = argmax(eq(x, reshape(ans, shape=kd)), axis=axis)
    n = x.shape[axis]
    pos = np.arange(n).reshape((n,) + (1,) * (x.ndim - 1 - axis))
    return (where(eq(pos, reshape(won, shape=kd)), reshape(g, shape=kd), 0.0),)


REG: dict[str, Primitive] = {}


def _prim(name: str, impl: Any, shape: Any, vjp: Any) -> Primitive:
    REG[name] = register(Primitive(name, impl, shape, vjp, _axis_batch(name)))
    return REG[name]


fold_extreme = _prim("fold_extreme", _fold_extreme, _same_shape("fold_extreme"), _extreme_vjp)
fold_winner = _prim("fold_winner", _fold_winner, _same_shape("fold_winner", True), None)
fold_scatter = _prim("fold_scatter", _fold_scatter, _scatter_shape, _scatter_vjp)
fold_total = _prim("fold_total", _fold_total, _total_shape, _total_vjp)
