"""Carries of session 27 (issue 14, item 6): running extremes kept with Python's `max` / `min`
as users write them. A low and the rise above it (the new low read, the other order from
best_gain), peaks appended to a list, a trailing stop, the record highs summed, a running
minimum taken backwards, the best product of two series and the nearest squared distance (only
the final value read), a running peak's relative drawdown, a peak feeding a floor, a fold of
absolute returns, row-wise selections `np.where(x > m, x, m)`, and a float32 series.

References are hand-vectorized NumPy as a user writes them: np.maximum.accumulate and
np.minimum.accumulate, np.max and np.min; never a loop over the steps."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import normal, presets, variant

_N = presets({"n": 12}, {"n": 2000})
_ND = presets({"n": 7, "d": 3}, {"n": 1000, "d": 32})


def low_then_rise(x):
    """Item 6: the lowest price so far (updated first) and the largest rise above it."""
    low, rise = x[0], 0.0
    for t in range(1, len(x)):
        low = min(low, x[t])
        rise = max(rise, x[t] - low)
    return rise


def low_then_rise_ref(x):
    return max(0.0, np.max(x[1:] - np.minimum.accumulate(x)[1:]))


def peaks_listed(x):
    """Item 6: the running peak appended to a list, stacked and weighted by the step."""
    peak, peaks = x[0], []
    for t in range(len(x)):
        peak = max(peak, x[t])
        peaks.append(peak)
    return np.sum(np.stack(peaks) * np.linspace(0.0, 1.0, len(x)))


def peaks_listed_ref(x):
    return np.sum(np.maximum.accumulate(x) * np.linspace(0.0, 1.0, len(x)))


def trailing_stop(x):
    """Item 6: a trailing stop k below the running peak of the price (a max of shifted
    items), the squared gap above it summed over the steps."""
    stop = x[0] - 0.5
    total = 0.0
    for t in range(1, len(x)):
        stop = max(stop, x[t] - 0.5)
        total = total + (x[t] - stop) ** 2
    return total


def trailing_stop_ref(x):
    stop = np.maximum.accumulate(x - 0.5)
    return np.sum((x[1:] - stop[1:]) ** 2)


def record_highs(x, w):
    """Item 6: the running high scaled by a weight and summed at every step."""
    hi = x[0]
    total = 0.0
    for t in range(len(x)):
        hi = max(hi, x[t])
        total = total + w * hi
    return total


def record_highs_ref(x, w):
    return w * np.sum(np.maximum.accumulate(x))


def backwards_min(x):
    """Item 6: the running minimum from the end (the lowest price still to come), each
    step's gap above it squared."""
    m = x[-1]
    total = 0.0
    for t in range(len(x) - 1, -1, -1):
        m = min(m, x[t])
        total = total + (x[t] - m) ** 2
    return total


def backwards_min_ref(x):
    m = np.minimum.accumulate(x[::-1])[::-1]
    return np.sum((x - m) ** 2)


def best_product(a, b):
    """Item 6: the best product of two series so far; only the final value is read."""
    best = a[0] * b[0]
    for t in range(1, len(a)):
        best = max(best, a[t] * b[t])
    return best


def best_product_ref(a, b):
    return np.max(a * b)


def nearest_sq(x, p):
    """Item 6: the squared distance of the nearest item to a learned point p."""
    d = (x[0] - p) ** 2
    for t in range(1, len(x)):
        d = min(d, (x[t] - p) ** 2)
    return d


def nearest_sq_ref(x, p):
    return np.min((x - p) ** 2)


def relative_drawdown(x):
    """Item 6: each step's drawdown relative to the running peak of positive prices."""
    peak = x[0]
    total = 0.0
    for t in range(len(x)):
        peak = max(peak, x[t])
        total = total + (peak - x[t]) / peak
    return total


def relative_drawdown_ref(x):
    peak = np.maximum.accumulate(x)
    return np.sum((peak - x) / peak)


def peak_floor(x):
    """Item 6: a running peak, and a floor that keeps the lowest half-peak gap (a min fold
    reading the max fold)."""
    hi, floor = x[0], 0.0
    for t in range(1, len(x)):
        hi = max(hi, x[t])
        floor = min(floor, x[t] - 0.5 * hi)
    return floor


def peak_floor_ref(x):
    hi = np.maximum.accumulate(x)
    return min(0.0, np.min(x[1:] - 0.5 * hi[1:]))


def largest_move(x):
    """Item 6: the largest absolute one-step move (a fold of abs of differences)."""
    best = 0.0
    for t in range(1, len(x)):
        best = max(best, abs(x[t] - x[t - 1]))
    return best


def largest_move_ref(x):
    return max(0.0, np.max(np.abs(np.diff(x))))


def where_fold_channels(X):
    """Item 6: a per-channel running maximum written as a selection, `np.where(x > m, x, m)`,
    the states stacked and squared."""
    m = X[0]
    states = [m]
    for t in range(1, X.shape[0]):
        m = np.where(X[t] > m, X[t], m)
        states.append(m)
    return np.sum(np.stack(states) ** 2)


def where_fold_channels_ref(X):
    return np.sum(np.maximum.accumulate(X, axis=0) ** 2)


def float32_low(x):
    """Item 6: the running low of a float32 series, each step's gap above it summed."""
    low = x[0]
    total = 0.0
    for t in range(len(x)):
        low = min(low, x[t])
        total = total + (x[t] - low)
    return total


def float32_low_ref(x):
    return np.sum(x - np.minimum.accumulate(x))


# ------------------------------------------------------------------ running moments

def welford_tuple_offset(X):
    """Item 6: Welford's update on a (count, mean, m2) tuple, the data 300 from zero
    (a closed form by raw sums of squares would cancel catastrophically)."""
    n, mean, m2 = 0, vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        n = n + 1
        d = X[t] - mean
        mean = mean + d / n
        m2 = m2 + d * (X[t] - mean)
    return np.sum(np.sqrt(m2 / (n - 1)))


def welford_tuple_offset_ref(X):
    return np.sum(np.std(X, axis=0, ddof=1))


def running_means_listed(X):
    """Item 6: the running mean of each channel from the first row, appended to a list at
    every step and compared with the row (a z-like score summed)."""
    mean = X[0]
    out = []
    for t in range(1, X.shape[0]):
        mean = mean + (X[t] - mean) / (t + 1)
        out.append((X[t] - mean) ** 2)
    return np.sum(np.stack(out))


def running_means_listed_ref(X):
    n = X.shape[0]
    mean = np.cumsum(X, axis=0) / np.arange(1, n + 1)[:, None]
    return np.sum((X[1:] - mean[1:]) ** 2)


def comoment_pairs(X, Y):
    """Item 6: the running co-moment of two series per channel, the means' deltas both
    taken from the old means (C += (n - 1) / n dx dy), then the covariance."""
    mx = vnp.zeros(X.shape[1])
    my = vnp.zeros(X.shape[1])
    c = vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        dx, dy = X[t] - mx, Y[t] - my
        c = c + dx * dy * (t / (t + 1))
        mx = mx + dx / (t + 1)
        my = my + dy / (t + 1)
    return np.sum(c) / (X.shape[0] - 1)


def comoment_pairs_ref(X, Y):
    return np.sum((X - X.mean(0)) * (Y - Y.mean(0))) / (X.shape[0] - 1)


def decayed_mean_var(X):
    """Item 6: an exponentially weighted mean and variance with constant gains, the
    variance update reading the deviation from the old mean (West's form)."""
    a = 0.05
    m = X[0]
    v = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(1, X.shape[0]):
        d = X[t] - m
        m = m + a * d
        v = (1 - a) * (v + a * d * d)
        total = total + np.sum(v)
    return total


def decayed_mean_var_ref(X):
    a = 0.05
    n = X.shape[0]
    w = (1 - a) ** np.arange(n)[:, None]
    m = np.empty_like(X)
    m[0] = X[0]
    # m[t] = (1-a)^t x0 + a sum_{s=1..t} (1-a)^(t-s) x[s]: a cumulative sum rescaled
    m[1:] = w[1:] * (X[0] + a * np.cumsum(X[1:] / w[1:], axis=0))
    d = X[1:] - m[:-1]
    e = (1 - a) * a * d * d
    v = w[:-1] * np.cumsum(e / w[:-1], axis=0)
    return np.sum(v)

# ------------------------------------------------------------------ inputs

def _walk(rng, n):
    return (np.cumsum(normal(rng, n)),)


def _walk_w(rng, n):
    return np.cumsum(normal(rng, n)), np.array(0.7)


def _pair(rng, n):
    return normal(rng, n), normal(rng, n)


def _point(rng, n):
    return normal(rng, n), np.array(0.3)


def _prices(rng, n):
    return (np.exp(np.cumsum(normal(rng, n, scale=0.01))) * 10.0,)


def _rows(rng, n, d):
    return (normal(rng, n, d),)


def _offset_rows(rng, n, d):
    return (normal(rng, n, d) + 300.0,)


def _two_rows(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d) + 3.0


def _walk32(rng, n):
    return (np.cumsum(normal(rng, n)).astype(np.float32),)


# ------------------------------------------------------------------------------- the suite

def _p(name, sizes, argnums, inputs):
    return variant(globals(), name, 6, sizes, argnums, inputs)


PATTERNS = [
    _p("low_then_rise", _N, (0,), _walk),
    _p("peaks_listed", _N, (0,), _walk),
    _p("trailing_stop", _N, (0,), _walk),
    _p("record_highs", _N, (0, 1), _walk_w),
    _p("backwards_min", _N, (0,), _walk),
    _p("best_product", _N, (0, 1), _pair),
    _p("nearest_sq", _N, (0, 1), _point),
    _p("relative_drawdown", _N, (0,), _prices),
    _p("peak_floor", _N, (0,), _walk),
    _p("largest_move", _N, (0,), _walk),
    _p("where_fold_channels", _ND, (0,), _rows),
    _p("float32_low", _N, (0,), _walk32),
    _p("welford_tuple_offset", _ND, (0,), _offset_rows),
    _p("running_means_listed", _ND, (0,), _rows),
    _p("comoment_pairs", _ND, (0, 1), _two_rows),
    _p("decayed_mean_var", _ND, (0,), _rows),
]

