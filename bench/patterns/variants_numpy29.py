"""Natural programs that read a few order statistics of each row (session 29, numpy lane):
an interquartile range, a median absolute deviation, a min-max scaling by the sorted ends, the
gap between the two largest entries picked by np.argsort, a clipped range and the median of a
row of odd length written into a buffer. Their gradients need the sort and one comparison per
position read (rewrite/orderings.py: scatter_of_picks, gather_of_picks), not an argsort of
every row (2.9x the sort)."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_T = ("variant", "numpy29")


def iqr_rows(X):
    """Item 1: each row's interquartile range by positions of its sorted values."""
    tot = 0.0
    for r in X:
        s = np.sort(r)
        n = r.shape[0]
        tot = tot + (s[(3 * n) // 4] - s[n // 4]) ** 2
    return tot


def iqr_rows_ref(X):
    S = np.sort(X, axis=1)
    n = X.shape[1]
    return np.sum((S[:, (3 * n) // 4] - S[:, n // 4]) ** 2)


def mad_rows(X):
    """Item 1: the median absolute deviation of each row from its median (two sorts)."""
    tot = 0.0
    for r in X:
        m = np.sort(r)[r.shape[0] // 2]
        tot = tot + np.sort(np.abs(r - m))[r.shape[0] // 2]
    return tot


def mad_rows_ref(X):
    k = X.shape[1] // 2
    m = np.sort(X, axis=1)[:, k]
    return np.sum(np.sort(np.abs(X - m[:, None]), axis=1)[:, k])


def minmax_scaled(X, w):
    """Item 1: each row scaled to [0, 1] by its smallest and largest sorted values, weighted."""
    tot = 0.0
    for r in X:
        s = np.sort(r)
        tot = tot + np.dot((r - s[0]) / (s[-1] - s[0]), w)
    return tot


def minmax_scaled_ref(X, w):
    S = np.sort(X, axis=1)
    return np.sum(((X - S[:, :1]) / (S[:, -1:] - S[:, :1])) @ w)


def top_gap_argsort(X):
    """Item 1: the gap between the two largest entries of each row, picked by np.argsort."""
    tot = 0.0
    for r in X:
        i, j = np.argsort(r)[-2:]
        tot = tot + np.tanh(r[j] - r[i])
    return tot


def top_gap_argsort_ref(X):
    S = np.sort(X, axis=1)
    return np.sum(np.tanh(S[:, -1] - S[:, -2]))


def median_buffer(X):
    """Item 1: each row's median written into a buffer, then a softplus of the medians."""
    out = vnp.empty(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = np.sort(X[i])[X.shape[1] // 2]
    return np.sum(np.log1p(np.exp(out)))


def median_buffer_ref(X):
    return np.sum(np.log1p(np.exp(np.sort(X, axis=1)[:, X.shape[1] // 2])))


def _rows(rng, n, d):
    return (normal(rng, n, d),)


def _weighted(rng, n, d):
    return normal(rng, n, d), np.linspace(-1.0, 1.0, d)


_SMALL = {"n": 4, "d": 9}
_DEFAULT = {"n": 1000, "d": 33}


def _p(name, natural, ref, inputs, argnums=(0,)):
    return Pattern(name, 1, natural, ref, inputs, {"small": _SMALL, "default": _DEFAULT},
                   argnums, tags=_T)


PATTERNS = [
    _p("iqr_rows", iqr_rows, iqr_rows_ref, _rows),
    _p("mad_rows", mad_rows, mad_rows_ref, _rows),
    _p("minmax_scaled", minmax_scaled, minmax_scaled_ref, _weighted, (0, 1)),
    _p("top_gap_argsort", top_gap_argsort, top_gap_argsort_ref, _rows),
    _p("median_buffer", median_buffer, median_buffer_ref, _rows),
]
