"""Natural programs that order, fit or select per sample (session 26, numpy lane), each in a
loop or a comprehension over rows: medians, trimmed means from np.sort, ordered weighted
averages, top-k sums through np.partition and through np.argsort, per-row 1-Wasserstein
distances between two samples, rows reordered by a key, the range of each row; quadratic fits
through np.poly1d(np.polyfit(...)), scores written into a buffer made by np.zeros, and row
sums of gated columns (A[:, g > 0], a mask past the leading axis)."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_T = ("variant", "numpy26")


def median_rows(X):
    """Item 1: the median of each row of odd length, the middle of np.sort(row)."""
    tot = 0.0
    for x in X:
        tot = tot + np.sort(x)[x.shape[0] // 2] ** 2
    return tot


def median_rows_ref(X):
    return np.sum(np.sort(X, axis=1)[:, X.shape[1] // 2] ** 2)


def trimmed_mean(X):
    """Item 1: a mean of each row without its 2 smallest and 2 largest entries, written
    into a buffer."""
    out = vnp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = np.mean(np.sort(X[i])[2:-2])
    return np.sum(out ** 2)


def trimmed_mean_ref(X):
    return np.sum(np.mean(np.sort(X, axis=1)[:, 2:-2], axis=1) ** 2)


def ordered_weights(X, w):
    """Item 1: an ordered weighted average per row, np.dot(np.sort(row), w)."""
    return sum(np.tanh(np.dot(np.sort(r), w)) for r in X)


def ordered_weights_ref(X, w):
    return np.sum(np.tanh(np.sort(X, axis=1) @ w))


def partition_topk(X):
    """Item 1: the sum of each row's 4 largest entries from np.partition."""
    return sum(np.sum(np.partition(r, -4)[-4:]) for r in X)


def partition_topk_ref(X):
    return np.sum(np.partition(X, -4, axis=1)[:, -4:])


def argsort_topk(X):
    """Item 1: the squares of each row's 3 largest entries, picked by np.argsort."""
    tot = 0.0
    for r in X:
        top = np.argsort(r)[-3:]
        tot = tot + np.sum(r[top] ** 2)
    return tot


def argsort_topk_ref(X):
    return np.sum(np.sort(X, axis=1)[:, -3:] ** 2)


def wasserstein_rows(X, Y):
    """Item 1: the 1-Wasserstein distance between two equal-size samples per row, the mean
    absolute difference of their sorted values."""
    return sum(np.mean(np.abs(np.sort(a) - np.sort(b))) for a, b in zip(X, Y))


def wasserstein_rows_ref(X, Y):
    return np.sum(np.mean(np.abs(np.sort(X, axis=1) - np.sort(Y, axis=1)), axis=1))


def sort_by_key(X, K, w):
    """Item 1: each row's values reordered by another row's ranks, weighted."""
    tot = 0.0
    for x, k in zip(X, K):
        tot = tot + np.dot(x[np.argsort(k)], w)
    return tot


def sort_by_key_ref(X, K, w):
    return np.sum(np.take_along_axis(X, np.argsort(K, axis=1), axis=1) @ w)


def row_spread(X):
    """Item 1: each row's range and inner range from the sorted row."""
    tot = 0.0
    for r in X:
        s = np.sort(r)
        tot = tot + (s[-1] - s[0]) ** 2 + 0.5 * (s[-2] - s[1])
    return tot


def row_spread_ref(X):
    S = np.sort(X, axis=1)
    return np.sum((S[:, -1] - S[:, 0]) ** 2 + 0.5 * (S[:, -2] - S[:, 1]))


def _rows(rng, n, d):
    return (normal(rng, n, d),)


def _two(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d)


def _weighted(rng, n, d):
    return normal(rng, n, d), np.linspace(0.1, 1.0, d)


def _keyed(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d), np.linspace(0.1, 1.0, d)


_SMALL = {"n": 4, "d": 7}
_DEFAULT = {"n": 1000, "d": 33}


def _p(name, natural, ref, inputs, argnums=(0,)):
    return Pattern(name, 1, natural, ref, inputs, {"small": _SMALL, "default": _DEFAULT},
                   argnums, tags=_T)


PATTERNS = [
    _p("median_rows", median_rows, median_rows_ref, _rows),
    _p("trimmed_mean_rows", trimmed_mean, trimmed_mean_ref, _rows),
    _p("ordered_weights", ordered_weights, ordered_weights_ref, _weighted, (0, 1)),
    _p("partition_topk", partition_topk, partition_topk_ref, _rows),
    _p("argsort_topk", argsort_topk, argsort_topk_ref, _rows),
    _p("wasserstein_rows", wasserstein_rows, wasserstein_rows_ref, _two, (0, 1)),
    _p("sort_by_key", sort_by_key, sort_by_key_ref, _keyed, (0, 2)),
    _p("row_spread", row_spread, row_spread_ref, _rows),
]


def poly_fit_residuals(Y, t):
    """Item 1: a quadratic least-squares fit per sample through np.poly1d(np.polyfit(...)),
    its squared residuals and its slope at the middle."""
    tot = 0.0
    for y in Y:
        p = np.poly1d(np.polyfit(t, y, 2))
        tot = tot + np.sum((y - p(t)) ** 2) + p.deriv()(0.5) ** 2
    return tot


def poly_fit_residuals_ref(Y, t):
    C = np.polyfit(t, Y.T, 2)  # (3, n): one column per sample
    fit = np.vander(t, 3) @ C
    slope = 2 * C[0] * 0.5 + C[1]
    return np.sum((Y.T - fit) ** 2) + np.sum(slope ** 2)


def numpy_buffer_rows(X, w):
    """Item 1: per-row scores written into a buffer made by np.zeros, then a loss of it."""
    out = np.zeros(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = np.dot(X[i], w) + np.max(X[i])
    return np.sum(np.tanh(out) ** 2)


def numpy_buffer_rows_ref(X, w):
    return np.sum(np.tanh(X @ w + np.max(X, axis=1)) ** 2)


def _fit(rng, n, d):
    return normal(rng, n, d), np.linspace(0.0, 1.0, d)



def gated_column_sums(X, G):
    """Item 1: per sample, the row sums of a matrix's columns that a gate selects
    (`A[:, g > 0].sum(axis=1)`, a boolean mask past the leading axis)."""
    tot = 0.0
    for A, g in zip(X, G):
        tot = tot + np.sum(A[:, g > 0].sum(axis=1) ** 2)
    return tot


def gated_column_sums_ref(X, G):
    return np.sum(np.sum(np.where(G[:, None, :] > 0, X, 0.0), axis=2) ** 2)


def _gated(rng, n, d):
    return normal(rng, n, 8, d), normal(rng, n, d)


PATTERNS += [
    Pattern("poly_fit_residuals", 1, poly_fit_residuals, poly_fit_residuals_ref, _fit,
            {"small": _SMALL, "default": {"n": 300, "d": 33}}, (0,), tags=_T),
    _p("numpy_buffer_rows", numpy_buffer_rows, numpy_buffer_rows_ref, _weighted, (0, 1)),
    Pattern("gated_column_sums", 1, gated_column_sums, gated_column_sums_ref, _gated,
            {"small": _SMALL, "default": {"n": 500, "d": 16}}, (0,), tags=_T),
]
