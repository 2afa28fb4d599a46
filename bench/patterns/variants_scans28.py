"""Carries of session 28 (issue 14, item 6): running selections whose tie and NaN rules are
not builtins.max's `c = max(c, x)`. The new value first, `max(x[t], best)` (an equal item
wins: the gradient goes to the newest; a NaN restarts the fold), `np.where(x >= m, x, m)`
(an equal row wins, a NaN never does), `np.where(m >= x, m, x)` (the first of equal items,
a NaN either side lets x in), their min twins, backwards and scaled by a learned weight.

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


# ------------------------------------------------------------------ inputs

def _walk(rng, n):
    return (np.cumsum(normal(rng, n)),)


def _walk_w(rng, n):
    return np.cumsum(normal(rng, n)), np.array(0.7)


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
]
