"""Carries of session 30 (issue 14, item 6): Welford-style running means and co-moments read
at their end, as users write them. The textbook update, its factors swapped, the mean as a
weighted average, the squared deviation first with t/(t+1), the mean started at the first
row, a (count, mean, M2) dict, a covariance and a correlation from three and five carries, the
variance of a derived series, a pooled 3-D state, a long stream, and a co-moment far from
zero.

References are hand-vectorized NumPy as a user writes them (np.var, np.cov-style centred
products, np.mean); never a loop over the steps."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_SEQ = {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}}
_LONG = {"small": {"n": 9, "d": 2}, "default": {"n": 4000, "d": 8}}
_EVEN = {"small": {"n": 6, "d": 4}, "default": {"n": 1000, "d": 32}}


def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


def _xy_inputs(rng, n, d):
    x = normal(rng, n, d)
    return x, 0.6 * x + normal(rng, n, d)


def _far_inputs(rng, n, d):
    x = normal(rng, n, d) + 500.0
    return x, x + normal(rng, n, d) - 1000.0


def welford_swapped(X):
    """Item 6: Welford's update with the factors the other way round, (x - new mean) first."""
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        old = mu
        mu = mu + (X[t] - mu) / (t + 1)
        m2 = m2 + (X[t] - mu) * (X[t] - old)
    return np.sum(m2) / (X.shape[0] - 1)


def welford_swapped_ref(X):
    return np.sum(np.var(X, axis=0, ddof=1))


def weighted_average_mean(X):
    """Item 6: the mean as a weighted average of the old mean and the row, M2 from both."""
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        new = mu * (t / (t + 1)) + X[t] / (t + 1)
        m2 = m2 + (X[t] - mu) * (X[t] - new)
        mu = new
    return np.sum(np.sqrt(m2 / X.shape[0]))


def weighted_average_mean_ref(X):
    return np.sum(np.std(X, axis=0))


def squared_first_at_end(X):
    """Item 6: M2 += t/(t+1) delta^2 before the mean's update (West), read only at the end."""
    mean, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        delta = X[t] - mean
        m2 = m2 + delta * delta * (t / (t + 1))
        mean = mean + delta / (t + 1)
    return np.sum(m2) / X.shape[0] + np.sum(mean ** 2)


def squared_first_at_end_ref(X):
    return np.sum(np.var(X, axis=0)) + np.sum(np.mean(X, axis=0) ** 2)


def mean_from_first_row(X):
    """Item 6: the mean started at the first row and the loop from the second."""
    mean, m2 = X[0], vnp.zeros(X.shape[1])
    for t in range(1, X.shape[0]):
        d = X[t] - mean
        mean = mean + d / (t + 1)
        m2 = m2 + d * (X[t] - mean)
    return np.sum(m2) / (X.shape[0] - 1)


def mean_from_first_row_ref(X):
    return np.sum(np.var(X, axis=0, ddof=1))


def count_mean_m2_dict(X):
    """Item 6: a dict with the count, the mean and M2, the count read for the division."""
    st = {"count": 0, "mean": vnp.zeros(X.shape[1]), "m2": vnp.zeros(X.shape[1])}
    for t in range(X.shape[0]):
        st["count"] = st["count"] + 1
        d = X[t] - st["mean"]
        st["mean"] = st["mean"] + d / st["count"]
        st["m2"] = st["m2"] + d * (X[t] - st["mean"])
    var = st["m2"] / (st["count"] - 1)
    return np.sum(var / (1.0 + st["mean"] ** 2))


def count_mean_m2_dict_ref(X):
    return np.sum(np.var(X, axis=0, ddof=1) / (1.0 + np.mean(X, axis=0) ** 2))


def covariance_three_carries(X, Y):
    """Item 6: a covariance from the old x-mean and the new y-mean (three carries), scaled."""
    mx, my, cxy = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        dx = X[t] - mx
        mx = mx + dx / (t + 1)
        my = my + (Y[t] - my) / (t + 1)
        cxy = cxy + dx * (Y[t] - my)
    return np.sum(cxy ** 2) / (X.shape[0] - 1) ** 2


def covariance_three_carries_ref(X, Y):
    c = np.sum((X - X.mean(0)) * (Y - Y.mean(0)), axis=0) / (X.shape[0] - 1)
    return np.sum(c ** 2)


def streaming_correlation(X, Y):
    """Item 6: a correlation per channel from five carries (two means, two M2s, one
    co-moment), all read at the end."""
    mx, my = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    sxx, syy, sxy = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        dx, dy = X[t] - mx, Y[t] - my
        mx = mx + dx / (t + 1)
        my = my + dy / (t + 1)
        sxx = sxx + dx * (X[t] - mx)
        syy = syy + dy * (Y[t] - my)
        sxy = sxy + dx * (Y[t] - my)
    return np.sum(sxy / np.sqrt(sxx * syy))


def streaming_correlation_ref(X, Y):
    xc, yc = X - X.mean(0), Y - Y.mean(0)
    return np.sum((xc * yc).sum(0) / np.sqrt((xc * xc).sum(0) * (yc * yc).sum(0)))


def derived_series_variance(X, Y):
    """Item 6: the running variance of a series computed from the inputs first (a product
    and a shift), the update on that series."""
    Z = X * Y + 0.5 * X
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(Z.shape[0]):
        d = Z[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (Z[t] - mu)
    return np.sum(m2) / Z.shape[0]


def derived_series_variance_ref(X, Y):
    return np.sum(np.var(X * Y + 0.5 * X, axis=0))


def pooled_grid_variance(X):
    """Item 6: a (2, d/2) state per step (channels as a grid), Welford's update on it."""
    G = vnp.reshape(X, (X.shape[0], 2, X.shape[1] // 2))
    mu, m2 = vnp.zeros((2, X.shape[1] // 2)), vnp.zeros((2, X.shape[1] // 2))
    for t in range(G.shape[0]):
        d = G[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (G[t] - mu)
    return np.sum(m2[0] * m2[1]) / G.shape[0] ** 2


def pooled_grid_variance_ref(X):
    G = X.reshape(X.shape[0], 2, X.shape[1] // 2)
    v = np.var(G, axis=0)
    return np.sum(v[0] * v[1])


def long_scalar_stream(X):
    """Item 6: one long series per column walked with a scalar-looking state per column
    (a 4,000-step loop), the mean negated on both sides."""
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        back = mu - X[t]
        mu = (mu * t + X[t]) / (t + 1)
        m2 = m2 + back * (mu - X[t])
    return np.sum(m2) / X.shape[0]


def long_scalar_stream_ref(X):
    return np.sum(np.var(X, axis=0))


def far_offset_comoment(X, Y):
    """Item 6: a co-moment on data 500 from zero (raw sums of products would lose ~5 of 16
    digits), both deviations from the old means weighted (n - 1) / n, the count a carry."""
    n = 0
    mx, my, c = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        n = n + 1
        dx, dy = X[t] - mx, Y[t] - my
        c = c + dx * dy * ((n - 1) / n)
        mx = mx + dx / n
        my = my + dy / n
    return np.sum(c / (n - 1) * np.cos(np.arange(X.shape[1])))


def far_offset_comoment_ref(X, Y):
    c = np.sum((X - X.mean(0)) * (Y - Y.mean(0)), axis=0) / (X.shape[0] - 1)
    return np.sum(c * np.cos(np.arange(X.shape[1])))


def _p(name, sizes, argnums, inputs):
    mod = globals()
    return Pattern(name, 6, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target="scan", tags=("variant", "scans"))


PATTERNS = [
    _p("welford_swapped", _SEQ, (0,), _x_inputs),
    _p("weighted_average_mean", _SEQ, (0,), _x_inputs),
    _p("squared_first_at_end", _SEQ, (0,), _x_inputs),
    _p("mean_from_first_row", _SEQ, (0,), _x_inputs),
    _p("count_mean_m2_dict", _SEQ, (0,), _x_inputs),
    _p("covariance_three_carries", _SEQ, (0, 1), _xy_inputs),
    _p("streaming_correlation", _SEQ, (0, 1), _xy_inputs),
    _p("derived_series_variance", _SEQ, (0, 1), _xy_inputs),
    _p("pooled_grid_variance", _EVEN, (0,), _x_inputs),
    _p("long_scalar_stream", _LONG, (0,), _x_inputs),
    _p("far_offset_comoment", _SEQ, (0, 1), _far_inputs),
]
