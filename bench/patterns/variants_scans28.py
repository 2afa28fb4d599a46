"""Carries of session 28 (issue 14, item 6): running selections whose tie and NaN rules are
not builtins.max's `c = max(c, x)`. The new value first, `max(x[t], best)` (an equal item
wins: the gradient goes to the newest; a NaN restarts the fold), `np.where(x >= m, x, m)`
(an equal row wins, a NaN never does), `np.where(m >= x, m, x)` (the first of equal items,
a NaN either side lets x in), their min twins, backwards and scaled by a learned weight;
and the same selections against the carry plus a constant (max-plus: a chamfer distance both
ways, a distance transform, a leaking peak detector, a cooling level per channel).

References are hand-vectorized NumPy as a user writes them: np.maximum.accumulate and
np.minimum.accumulate; never a loop over the steps."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import normal, presets, variant

_N = presets({"n": 12}, {"n": 2000})
_ND = presets({"n": 7, "d": 3}, {"n": 1000, "d": 32})


def newest_high_weighted(x):
    """Item 6: the high so far, the new price first (`max(x[t], hi)`), weighted by time."""
    hi, tot = x[0], 0.0
    for t in range(1, len(x)):
        hi = max(x[t], hi)
        tot = tot + hi * t
    return tot


def newest_high_weighted_ref(x):
    return np.sum(np.maximum.accumulate(x)[1:] * np.arange(1.0, len(x)))


def peak_gap_value_first(x):
    """Item 6: how far below its running peak a series spends (`peak = max(x[t], peak)`)."""
    peak, gap = x[0], 0.0
    for t in range(1, len(x)):
        peak = max(x[t], peak)
        gap = gap + (peak - x[t]) ** 2
    return gap


def peak_gap_value_first_ref(x):
    return np.sum((np.maximum.accumulate(x) - x) ** 2)


def latest_low_rows(X):
    """Item 6: row-wise running minimum where an equal row replaces the low."""
    m, out = X[0], [X[0]]
    for t in range(1, len(X)):
        m = np.where(X[t] <= m, X[t], m)
        out.append(m)
    return np.sum(np.stack(out) ** 2)


def latest_low_rows_ref(X):
    return np.sum(np.minimum.accumulate(X, axis=0) ** 2)


def keep_unless_beaten_rows(X):
    """Item 6: a running max that keeps the old row only where it is at least the new one
    (`np.where(m >= X[t], m, X[t])`), read through tanh."""
    m, out = X[0], []
    for t in range(1, len(X)):
        m = np.where(m >= X[t], m, X[t])
        out.append(np.tanh(m))
    return np.sum(np.stack(out))


def keep_unless_beaten_rows_ref(X):
    return np.sum(np.tanh(np.maximum.accumulate(X, axis=0)[1:]))


def value_first_low_backwards(x):
    """Item 6: the lowest value from here to the end (`low = min(x[t], low)`, backwards)."""
    low, out = x[-1], [x[-1]]
    for t in range(len(x) - 2, -1, -1):
        low = min(x[t], low)
        out.append(low)
    return np.sum(np.array(out) * np.arange(len(x), 0, -1.0))


def value_first_low_backwards_ref(x):
    low = np.minimum.accumulate(x[::-1])
    return np.sum(low * np.arange(len(x), 0, -1.0))


def scaled_value_first(x, w):
    """Item 6: the best scaled score so far, the new score first (`best = max(w * x[t],
    best)`), with the scale learned."""
    best, out = w * x[0], []
    for t in range(1, len(x)):
        best = max(w * x[t], best)
        out.append(best)
    return np.sum(np.array(out) ** 2)


def scaled_value_first_ref(x, w):
    return np.sum(np.maximum.accumulate(w * x)[1:] ** 2)


def rise_from_newest_low(x):
    """Item 6: the low so far with the new price first, and the largest rise above it."""
    low, rise = x[0], 0.0
    for t in range(1, len(x)):
        low = min(x[t], low)
        rise = max(rise, x[t] - low)
    return rise


def rise_from_newest_low_ref(x):
    return max(0.0, np.max(x - np.minimum.accumulate(x)))


def flipped_ge_rows(X):
    """Item 6: `vnp.where(m <= X[t], X[t], m)`: a running max, the comparison written from
    the carry's side."""
    m, out = X[0], []
    for t in range(1, len(X)):
        m = vnp.where(m <= X[t], X[t], m)
        out.append(m * m)
    return vnp.sum(vnp.stack(out))


def flipped_ge_rows_ref(X):
    return np.sum(np.maximum.accumulate(X, axis=0)[1:] ** 2)


# ------------------------------------------------- max-plus: the carried side plus a constant

def chamfer_two_pass(x):
    """Item 6: a 1-D chamfer distance both ways in place (`y[i] = max(y[i], y[i-1] - c)`,
    then from the right)."""
    y = x.copy()
    for i in range(1, len(y)):
        y[i] = max(y[i], y[i - 1] - 0.05)
    for i in range(len(y) - 2, -1, -1):
        y[i] = max(y[i], y[i + 1] - 0.05)
    return np.sum(y ** 2)


def chamfer_two_pass_ref(x):
    r = 0.05 * np.arange(len(x))
    y = np.maximum.accumulate(x + r) - r
    z = (np.maximum.accumulate((y - r)[::-1]) + r[::-1])[::-1]
    return np.sum(z ** 2)


def distance_transform(x):
    """Item 6: a 1-D distance transform (`d[i] = min(d[i], d[i-1] + 1)`) of a cost, summed
    softly."""
    d = x.copy()
    for i in range(1, len(d)):
        d[i] = min(d[i], d[i - 1] + 1.0)
    return np.sum(np.exp(-d))


def distance_transform_ref(x):
    r = np.arange(len(x), dtype=float)
    return np.sum(np.exp(-(np.minimum.accumulate(x - r) + r)))


def leaky_peak_list(x):
    """Item 6: a peak detector whose held value leaks (`m = max(m - 0.02, x[t])`), listed."""
    m, out = x[0], [x[0]]
    for t in range(1, len(x)):
        m = max(m - 0.02, x[t])
        out.append(m)
    return np.sum(np.array(out) * np.linspace(0.0, 1.0, len(x)))


def leaky_peak_list_ref(x):
    r = 0.02 * np.arange(len(x))
    return np.sum((np.maximum.accumulate(x + r) - r) * np.linspace(0.0, 1.0, len(x)))


def cooldown_rows(X):
    """Item 6: per channel, a level that cools by 0.1 a step unless the new row is hotter
    (`np.where(L - 0.1 > X[t], L - 0.1, X[t])`)."""
    L, out = X[0], [X[0]]
    for t in range(1, len(X)):
        L = np.where(L - 0.1 > X[t], L - 0.1, X[t])
        out.append(L)
    return np.sum(np.stack(out) ** 2)


def cooldown_rows_ref(X):
    r = 0.1 * np.arange(len(X))[:, None]
    return np.sum((np.maximum.accumulate(X + r, axis=0) - r) ** 2)


# ------------------------------------------------------------------ inputs

def _walk(rng, n):
    return (np.cumsum(normal(rng, n)),)


def _walk_w(rng, n):
    return np.cumsum(normal(rng, n)), np.array(0.7)


def _noise(rng, n):
    return (normal(rng, n),)


def _costs(rng, n):  # mostly far (large costs), a few sources near zero
    return (np.where(rng.random(n) < 0.05, normal(rng, n, scale=0.3), 20.0 + normal(rng, n)),)


def _rows(rng, n, d):
    return (normal(rng, n, d),)


# ------------------------------------------------------------------------------- the suite

def _p(name, sizes, argnums, inputs):
    return variant(globals(), name, 6, sizes, argnums, inputs)


PATTERNS = [
    _p("newest_high_weighted", _N, (0,), _walk),
    _p("peak_gap_value_first", _N, (0,), _walk),
    _p("latest_low_rows", _ND, (0,), _rows),
    _p("keep_unless_beaten_rows", _ND, (0,), _rows),
    _p("value_first_low_backwards", _N, (0,), _walk),
    _p("scaled_value_first", _N, (0, 1), _walk_w),
    _p("rise_from_newest_low", _N, (0,), _walk),
    _p("flipped_ge_rows", _ND, (0,), _rows),
    _p("chamfer_two_pass", _N, (0,), _noise),
    _p("distance_transform", _N, (0,), _costs),
    _p("leaky_peak_list", _N, (0,), _noise),
    _p("cooldown_rows", _ND, (0,), _rows),
]
