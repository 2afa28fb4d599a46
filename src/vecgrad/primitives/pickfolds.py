"""Running selections `c = where(x OP c, x, c)` (or `where(c OP x, c, x)`) whose tie and NaN
rules are not builtins.max's (that one, x winning only where strictly greater, is
`fold_extreme` in folds.py). Two rules fix every such fold of a running max (min alike):

- `latest`: an x equal to the running value wins (`max(x[t], c)`, `np.where(x >= c, x, c)`),
  so the gradient goes to the newest of equal items;
- `restart`: x wins unless the comparison that keeps c holds, and a comparison with NaN is
  False, so a NaN x wins (the running value is NaN there) and the next item wins against that
  NaN: the fold restarts after each NaN (`max(x[t], c)` keeps c only where c > x[t]).
  Otherwise (sticky) a NaN x never wins and a NaN start is kept, as in fold_extreme.

Values: sticky is np.fmax.accumulate with NaN-started columns NaN (folds._running); restart
is np.maximum.accumulate where no NaN occurs (every order of equal values gives one value)
and one accumulate per NaN-free segment in the columns that hold NaNs. The winner of a step
is its last record, a step where x won, which the running value alone does not show for
`latest` (an equal x wins without a change) but x and the value do:

    latest:            x[t] won  <=>  x[t] == c[t]  (or x[t] is NaN, under restart)
    earliest, restart: x[t] won  <=>  c[t] != c[t-1]  (NaN != anything)

so the value's VJP is the same segment sum as fold_scatter's over these records, and reads x.

A constant `shift` a makes the carried side c + a (`y[i] = max(y[i], y[i-1] - 0.1)`, a
chamfer; `d[i] = min(d[i], d[i-1] + 1)`, a distance transform): max-plus linear, computed by
doubling (`_doubling`), and x won where the loop's comparison of x with c[t-1] + a says so.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .folds import _front, _last_record, _real, _records, _running, segment_sums
from .sorting import _INTP, take_along
from .structural import broadcast_to, reshape

__all__ = ["fold_pick", "fold_pick_scatter", "fold_pick_winner"]


def _restarted(x0: np.ndarray, greater: bool) -> np.ndarray:
    """The running extreme along axis 0 restarted after each NaN (see the module doc)."""
    acc = (np.maximum if greater else np.minimum).accumulate
    out = acc(x0, axis=0)
    if x0.dtype.kind != "f":
        return out
    nan = np.isnan(x0)
    cols = nan.any(axis=0)
    if not cols.any():
        return out
    for j in (np.ndindex(()) if x0.ndim == 1 else zip(*np.nonzero(cols))):
        v, o = x0[(slice(None),) + tuple(j)], out[(slice(None),) + tuple(j)]
        start = 0
        for k in [*np.flatnonzero(np.isnan(v)), v.shape[0]]:  # (o is a view of out)
            if k > start:
                o[start:k] = acc(v[start:k])
            if k < v.shape[0]:
                o[k] = v[k]
            start = k + 1
    return out


def _value0(x0: np.ndarray, greater: bool, latest: bool, restart: bool,
            shift: float) -> np.ndarray:
    if not shift:
        return _restarted(x0, greater) if restart else _running(x0, greater)
    if x0.dtype.kind == "f" and np.isnan(x0).any():
        return _stepwise(x0, greater, latest, restart, shift)
    return _doubling(x0, greater, shift)


def _doubling(x0: np.ndarray, greater: bool, shift: float) -> np.ndarray:
    """c[t] = max(c[t-1] + a, x[t]) without NaNs: the steps' maps c -> max(c + a, x[t])
    compose as max-plus pairs, (a1, b1) then (a2, b2) = (a1 + a2, max(b1 + a2, b2)), so
    log2(T) rounds of one shifted add and one maximum (Hillis-Steele) give every prefix.
    After round k, c[t] is the best of x[s] + (t - s) a over the 2^(k+1) items up to t; each
    value is x[s] plus at most log2(t - s) exact multiples 2^j a, rounded once each, where
    the loop rounds t - s times: it is at least as close to the exact value as the loop's.
    (Which of equal values wins does not change the value.)"""
    y = np.array(x0)  # (a NumPy copy, written in place)
    op = np.maximum if greater else np.minimum
    d, T = 1, y.shape[0]
    while d < T:
        op(y[d:], y[:-d] + d * shift, out=y[d:])  # (the sum is a new array: no overlap)
        d *= 2
    return y


def _stepwise(x0: np.ndarray, greater: bool, latest: bool, restart: bool,
              shift: float) -> np.ndarray:
    """The selection step by step (NaNs decide which side wins; rare: the loop's cost)."""
    y = np.array(x0)
    for t in range(1, y.shape[0]):
        s = y[t - 1] + shift
        y[t] = np.where(_x_wins(s, x0[t], greater, latest, restart), x0[t], s)
    return y


def _x_wins(s: np.ndarray, x: np.ndarray, greater: bool, latest: bool,
            restart: bool) -> np.ndarray:
    """Where the new item x replaces the carried value s, as the loop's comparison says."""
    if restart:  # the comparison keeping s, False with a NaN on either side
        keep = (s > x if latest else s >= x) if greater else (s < x if latest else s <= x)
        return ~keep
    return (x >= s if latest else x > s) if greater else (x <= s if latest else x < s)


def _won(a0: np.ndarray, x0: np.ndarray, greater: bool, latest: bool, restart: bool,
         shift: float) -> np.ndarray:
    """Steps 1.. along axis 0 where x won: the loop's comparison of x with the carried
    value, read from the running value (see the module doc)."""
    if not shift and latest:
        won = x0[1:] == a0[1:]
        if restart and x0.dtype.kind == "f":
            won |= np.isnan(x0[1:])
        return won
    if not shift:
        return a0[1:] != a0[:-1] if restart else _records(a0, greater)
    return _x_wins(a0[:-1] + shift, x0[1:], greater, latest, restart)


def _on_axis(f: Any) -> Any:
    def run(*xs: np.ndarray, axis: int, **p: Any) -> np.ndarray:
        xs = tuple(np.asarray(x) for x in xs)  # (a backend's host call passes its arrays)
        s = xs[-1].shape  # (a cotangent may come broadcast)
        out = f(*[_front(x if x.shape == s else np.broadcast_to(x, s), axis) for x in xs],
                **p)
        return np.moveaxis(out, 0, axis) if axis else out
    return run


def _pick0(x0: np.ndarray, greater: bool, latest: bool, restart: bool,
           shift: float = 0.0) -> np.ndarray:
    return _value0(x0, greater, latest, restart, shift)


def _winner0(a0: np.ndarray, x0: np.ndarray, greater: bool, latest: bool, restart: bool,
             shift: float = 0.0) -> np.ndarray:
    return _last_record(_won(a0, x0, greater, latest, restart, shift))


def _scatter0(g0: np.ndarray, a0: np.ndarray, x0: np.ndarray, greater: bool, latest: bool,
              restart: bool, shift: float = 0.0) -> np.ndarray:
    """out[j] = the sum of g[t] over the steps t that item j won (zero off the records):
    c[t] = x[w] + (t - w) a for the winner w of step t, whose derivative in x is one-hot."""
    return segment_sums(g0, _won(a0, x0, greater, latest, restart, shift))


def _same(name: str, int_out: bool = False) -> Any:
    def rule(x: Aval, *rest: Aval, axis: int, **p: Any) -> Aval:
        for a in (x, *rest):
            _real(name, a, axis)
        if any(a.shape != x.shape for a in rest):
            raise ShapeError(f"{name}: shapes {[a.shape for a in (x, *rest)]} differ")
        return Aval(x.shape, _INTP if int_out else x.dtype)
    return rule


def _scatter_shape(g: Aval, ans: Aval, x: Aval, axis: int, **p: Any) -> Aval:
    _same("fold_pick_scatter")(ans, x, axis=axis)
    if np.broadcast_shapes(g.shape, ans.shape) != ans.shape:
        raise ShapeError(f"fold_pick_scatter: the cotangent {g.shape} does not fit "
                         f"{ans.shape}")
    return Aval(ans.shape, g.dtype)


def _batch(name: str) -> Any:
    def rule(n: int, b: tuple, *ins: Any, axis: int, **p: Any) -> Any:
        lead = [x if bb else broadcast_to(reshape(x, shape=(1,) + x.shape),
                                          shape=(n,) + x.shape) for x, bb in zip(ins, b)]
        return REG[name](*lead, axis=axis + 1, **p)
    return rule


def _pick_vjp(g: Any, ans: Any, x: Any, **p: Any) -> tuple:
    return (fold_pick_scatter(g, ans, x, **p),)


def _scatter_vjp(gg: Any, out: Any, g: Any, ans: Any, x: Any, **p: Any) -> tuple:
    # linear in g: its transpose reads each step's cotangent at the step's winner; the
    # records are piecewise constant in ans and x (no cotangent)
    return (take_along(gg, fold_pick_winner(ans, x, **p), axis=p["axis"]), None, None)


REG: dict[str, Primitive] = {}


def _prim(name: str, impl: Any, shape: Any, vjp: Any) -> Primitive:
    REG[name] = register(Primitive(name, _on_axis(impl), shape, vjp, _batch(name)))
    return REG[name]


fold_pick = _prim("fold_pick", _pick0, _same("fold_pick"), _pick_vjp)
fold_pick_winner = _prim("fold_pick_winner", _winner0, _same("fold_pick_winner", True), None)
fold_pick_scatter = _prim("fold_pick_scatter", _scatter0, _scatter_shape, _scatter_vjp)
