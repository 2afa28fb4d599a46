"""Specs of Python's max/min folds along an axis (primitives/folds.py), each against a plain
Python loop of `c = max(c, x)` (builtins.max: the first of equal items, NaN items never win).
Ties and NaNs, where central differences say nothing, are in tests/test_folds.py."""
from __future__ import annotations

import builtins

import numpy as np
from spec_lib import Spec

SHAPES = [((9,), 0), ((6, 3), 0), ((3, 7, 2), 1)]


def _front(x: np.ndarray, axis: int) -> np.ndarray:
    return np.moveaxis(x, axis, 0)


def fold_ref(x: np.ndarray, axis: int, greater: bool) -> np.ndarray:
    """Running values and winners of the fold along axis, element by element in Python."""
    pick = builtins.max if greater else builtins.min
    x0 = _front(x, axis)
    val, won = np.empty_like(x0), np.zeros(x0.shape, np.intp)
    for j in np.ndindex(x0.shape[1:]):
        c, w = x0[(0,) + j], 0
        for t in range(x0.shape[0]):
            nxt = pick(c, x0[(t,) + j])
            if nxt is not c:  # (builtins.max returns one of its arguments)
                w = t
            c = nxt
            val[(t,) + j], won[(t,) + j] = c, w
    return np.moveaxis(val, 0, axis), np.moveaxis(won, 0, axis)


def scatter_ref(g: np.ndarray, ans: np.ndarray, axis: int, greater: bool) -> np.ndarray:
    won = winner_ref(ans, axis, greater)
    g0, w0 = _front(np.broadcast_to(g, ans.shape), axis), _front(won, axis)
    out = np.zeros(g0.shape, g.dtype)
    for t in np.ndindex(g0.shape):
        out[(w0[t],) + t[1:]] += g0[t]
    return np.moveaxis(out, 0, axis)


def winner_ref(ans: np.ndarray, axis: int, greater: bool) -> np.ndarray:
    """The last step up to each where the running value grew strictly (0 before any)."""
    a0 = _front(ans, axis)
    won = np.zeros(a0.shape, np.intp)
    for t in range(1, a0.shape[0]):
        grew = a0[t] > a0[t - 1] if greater else a0[t] < a0[t - 1]
        won[t] = np.where(grew, t, won[t - 1])
    return np.moveaxis(won, 0, axis)


def _p(axis: int, greater: bool) -> dict:
    return {"axis": axis, "greater": greater}


def _label(s: tuple, a: int, gr: bool) -> str:
    return f"{'max' if gr else 'min'}-{s}-{a}"


SPECS: list[Spec] = [
    *[Spec("fold_extreme", (s,), lambda x, a=a, gr=gr: fold_ref(x, a, gr)[0], _p(a, gr),
           label=_label(s, a, gr)) for s, a in SHAPES for gr in (True, False)],
    *[Spec("fold_winner", (s,), lambda x, a=a, gr=gr: winner_ref(x, a, gr), _p(a, gr),
           label=_label(s, a, gr)) for s, a in SHAPES for gr in (True, False)],
    *[Spec("fold_scatter", (s, s), lambda g, x, a=a, gr=gr: scatter_ref(g, x, a, gr),
           _p(a, gr), wrt=(0,), label=_label(s, a, gr)) for s, a in SHAPES
      for gr in (True, False)],
    *[Spec("fold_total", (s,), lambda x, a=a, gr=gr: np.take(fold_ref(x, a, gr)[0], -1, a),
           _p(a, gr), label=_label(s, a, gr)) for s, a in SHAPES for gr in (True, False)],
]
