"""Natural variants written as users write them (issue 14), from the lead's probes of
session 27: recurrences written in place into a buffer, `y[i] += a * y[i - 1]` (a filter
run over a copy of the signal), returns-to-go accumulated backwards in place, rows updated
from the previous row with `-=`, a second-order filter, per-step gains, and a recurrent
layer that adds into its own state rows; and three misses found by the same probes, kept
here so that the suite shows them: Python's `max(x[i], best)` with the new value first (the
carry-first order folds as a scan; this order runs step by step), a max-plus recurrence
`y[i] = max(y[i], y[i - 1] - c)` (a chamfer distance), and a minimum-cost path filled row
by row, whose cells read their left neighbour.

Each has a hand-vectorized reference (scipy.signal.lfilter where the coefficients are
constant, a closed form over cumulative products otherwise, NumPy's loop where the step is
nonlinear and nothing vectorizes it)."""
from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

from .core import normal, presets, uniform, variant


def inplace_filter(x):
    """Item 6: a first-order filter run in place over a copy, `y[i] += a * y[i - 1]`."""
    y = x.copy()
    for i in range(1, len(y)):
        y[i] += 0.8 * y[i - 1]
    return np.sum(y ** 2)


def inplace_filter_ref(x):
    return np.sum(lfilter([1.0], [1.0, -0.8], x) ** 2)


def returns_in_place(r):
    """Item 6: discounted returns-to-go accumulated backwards into the rewards' copy."""
    g = r.copy()
    for t in reversed(range(len(g) - 1)):
        g[t] += 0.99 * g[t + 1]
    return np.sum(g * np.linspace(0.0, 1.0, len(g)))


def returns_in_place_ref(r):
    g = lfilter([1.0], [1.0, -0.99], r[::-1])[::-1]
    return np.sum(g * np.linspace(0.0, 1.0, len(g)))


def rows_minus_previous(X):
    """Item 6: each row loses a share of the (already updated) row before it, `-=`."""
    Y = X.copy()
    for t in range(1, Y.shape[0]):
        Y[t] -= 0.3 * Y[t - 1]
    return np.sum(np.tanh(Y))


def rows_minus_previous_ref(X):
    return np.sum(np.tanh(lfilter([1.0], [1.0, 0.3], X, axis=0)))


def second_order_in_place(x):
    """Item 6: a second-order filter in place, `y[i] += a1 y[i - 1] + a2 y[i - 2]`."""
    y = x.copy()
    for i in range(2, len(y)):
        y[i] += 0.5 * y[i - 1] - 0.25 * y[i - 2]
    return np.sum(y ** 2)


def second_order_in_place_ref(x):
    xp = x.copy()
    xp[1] -= 0.5 * x[0]  # (so that the filter leaves y[1] = x[1], as the loop does)
    return np.sum(lfilter([1.0], [1.0, -0.5, 0.25], xp) ** 2)


def gained_in_place(x, w):
    """Item 6: per-step gains, `y[i] = y[i] + w[i] * y[i - 1]` (a zeros buffer, then x)."""
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = x[i] + w[i] * y[i - 1]
    return np.sum(y ** 2)


def gained_in_place_ref(x, w):
    a = np.concatenate([[1.0], w[1:]])
    P = np.cumprod(a)
    return np.sum((P * np.cumsum(x / P)) ** 2)


def residual_state_rows(X, W):
    """Item 6: a recurrent layer that adds into its own state rows, `H[t] += tanh(H[t-1] W)`."""
    H = X.copy()
    for t in range(1, H.shape[0]):
        H[t] += np.tanh(H[t - 1] @ W)
    return np.sum(H ** 2)


def residual_state_rows_ref(X, W):
    H = X.copy()
    for t in range(1, H.shape[0]):
        H[t] += np.tanh(H[t - 1] @ W)
    return np.sum(H ** 2)


def value_first_max(x):
    """Item 6: a running maximum with Python's max, the new value first: `max(x[i], best)`."""
    best = x[0]
    out = [best]
    for i in range(1, len(x)):
        best = max(x[i], best)
        out.append(best)
    return np.sum(np.array(out) ** 2)


def value_first_max_ref(x):
    return np.sum(np.maximum.accumulate(x) ** 2)


def chamfer_in_place(x):
    """Item 6: a one-sided chamfer distance in place, `y[i] = max(y[i], y[i - 1] - c)`."""
    y = x.copy()
    for i in range(1, len(y)):
        y[i] = max(y[i], y[i - 1] - 0.1)
    return np.sum(y ** 2)


def chamfer_in_place_ref(x):
    i = np.arange(len(x))
    return np.sum((np.maximum.accumulate(x + 0.1 * i) - 0.1 * i) ** 2)


def min_cost_rows(D):
    """Item 6: a minimum-cost path over a grid filled row by row (each cell reads the row
    above and its left neighbour)."""
    n, m = D.shape
    prev = np.cumsum(D[0])
    for i in range(1, n):
        cur = np.zeros(m)
        cur[0] = prev[0] + D[i, 0]
        for j in range(1, m):
            cur[j] = D[i, j] + min(prev[j], cur[j - 1], prev[j - 1])
        prev = cur
    return prev[-1]


def min_cost_rows_ref(D):
    n, m = D.shape
    R = np.full((n, m), np.inf)
    R[0] = np.cumsum(D[0])
    R[:, 0] = np.cumsum(D[:, 0])
    for k in range(2, n + m - 1):  # anti-diagonals
        i = np.arange(max(1, k - m + 1), min(n - 1, k - 1) + 1)
        j = k - i
        R[i, j] = D[i, j] + np.minimum(np.minimum(R[i - 1, j], R[i, j - 1]), R[i - 1, j - 1])
    return R[-1, -1]


def _x_in(rng, n):
    return (normal(rng, n),)


def _xw_in(rng, n):
    return normal(rng, n), uniform(rng, n, low=0.9, high=1.0)


def _rows_in(rng, n, d):
    return (normal(rng, n, d),)


def _grid_in(rng, n):
    return (uniform(rng, n, n),)


def _state_in(rng, n, d):
    return normal(rng, n, d, scale=0.1), normal(rng, d, d, scale=0.3)


def _p(name, item, sizes, argnums, inputs, prepare=None):
    return variant(globals(), name, item, sizes, argnums, inputs, prepare)


_sz = presets


PATTERNS = [
    _p("inplace_filter", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("returns_in_place", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("rows_minus_previous", 6, _sz({"n": 12, "d": 3}, {"n": 1000, "d": 8}), (0,), _rows_in),
    _p("second_order_in_place", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("gained_in_place", 6, _sz({"n": 12}, {"n": 2000}), (0, 1), _xw_in),
    _p("residual_state_rows", 6, _sz({"n": 10, "d": 3}, {"n": 300, "d": 16}), (0, 1),
       _state_in),
    _p("value_first_max", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("chamfer_in_place", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("min_cost_rows", 6, _sz({"n": 5}, {"n": 30}), (0,), _grid_in),
]
