"""Natural programs with Python's max / min of traced ints and Python floats (session 28,
numpy lane; vecgrad.mixedfold: each was a ConcretizationError before): a rate with a guarded
count in the denominator, per-item weights clipped from integer counts, scores weighted by
integer labels, and sums over a mask on the last axis of each sample whose selection's fill
is read no more (rewrite.identities.where_of_where); Chebyshev series per row with learned
coefficients (numpy.polynomial.chebyshev.chebval, a TracedIntoNumpyError before) and rows'
negative entries replaced by learned values in turn (np.place with a traced mask, a
TraceError before)."""
from __future__ import annotations

import numpy as np

from .core import Pattern, normal

_T = ("variant", "numpy28")


def guarded_rates(x, counts):
    """Item 1: per item, a value over its count guarded away from 0, x[i] / max(n[i], 0.5)."""
    tot = 0.0
    for i in range(x.shape[0]):
        tot = tot + (x[i] / max(counts[i], 0.5)) ** 2
    return tot


def guarded_rates_ref(x, counts):
    return np.sum((x / np.maximum(counts, 0.5)) ** 2)


def clipped_count_weights(X, counts):
    """Item 1: each row weighted by its count clipped to [0.25, 4.5], min(max(n, 0.25), 4.5)."""
    return sum(min(max(n, 0.25), 4.5) * np.sum(np.tanh(x)) for x, n in zip(X, counts))


def clipped_count_weights_ref(X, counts):
    return np.sum(np.clip(counts, 0.25, 4.5) * np.sum(np.tanh(X), axis=1))


def int_label_weights(s, labels):
    """Item 1: scores weighted by integer labels in {-1, 1} folded with floats, the negative
    class down-weighted: max(labels[i], -0.5) * s[i] + min(labels[i], 0.5) * s[i] ** 2."""
    tot = 0.0
    for i in range(s.shape[0]):
        tot = tot + max(labels[i], -0.5) * s[i] + min(labels[i], 0.5) * s[i] ** 2
    return tot


def int_label_weights_ref(s, labels):
    return np.sum(np.maximum(labels, -0.5) * s + np.minimum(labels, 0.5) * s ** 2)


def gated_row_sums(T, g):
    """Item 1: per sample, the squared row sums of the columns a shared gate selects, then
    the mean of the selection (T[..., g > 0] read twice)."""
    return sum(np.sum(np.sum(t[..., g > 0], axis=-1) ** 2) + np.mean(t[..., g > 0]) for t in T)


def gated_row_sums_ref(T, g):
    S = T[..., g > 0]
    return np.sum(np.sum(S, axis=-1) ** 2) + np.sum(np.mean(S, axis=(1, 2)))


def cheb_rows(X, c):
    """Item 1: a Chebyshev series with learned coefficients at each row's values."""
    return sum(np.sum(np.polynomial.chebyshev.chebval(x, c) ** 2) for x in X)


def cheb_rows_ref(X, c):
    return np.sum(np.polynomial.chebyshev.chebval(X, c) ** 2)


def placed_rows(X, v):
    """Item 1: each row's negative entries replaced by learned values in turn,
    np.place(y, y < 0, v) (the k-th negative entry takes v[k % len(v)])."""
    tot = 0.0
    for x in X:
        y = x * 1.0
        np.place(y, y < 0, v)
        tot = tot + np.sum(y ** 2)
    return tot


def placed_rows_ref(X, v):
    m = X < 0
    k = np.cumsum(m, axis=1) - 1
    return np.sum(np.where(m, v[k % v.shape[0]], X) ** 2)


def _cheb(rng, n, d):
    return rng.uniform(-1, 1, (n, d)), normal(rng, 6)


def _placed(rng, n, d):
    return normal(rng, n, d), normal(rng, 3)


def _counts(rng, n, d):
    return normal(rng, n), rng.integers(-1, 6, n)


def _rows_counts(rng, n, d):
    return normal(rng, n, d), rng.integers(0, 7, n)


def _labels(rng, n, d):
    return normal(rng, n), rng.choice([-1, 1], n)


def _gates(rng, n, d):
    return normal(rng, n, 8, d), normal(rng, d)


_SMALL = {"n": 4, "d": 9}


def _p(name, natural, ref, inputs, default, argnums=(0,)):
    return Pattern(name, 1, natural, ref, inputs, {"small": _SMALL, "default": default},
                   argnums, tags=_T)


PATTERNS = [
    _p("guarded_rates", guarded_rates, guarded_rates_ref, _counts, {"n": 2000, "d": 1}),
    _p("clipped_count_weights", clipped_count_weights, clipped_count_weights_ref, _rows_counts,
       {"n": 1000, "d": 33}),
    _p("int_label_weights", int_label_weights, int_label_weights_ref, _labels, {"n": 2000, "d": 1}),
    _p("gated_row_sums", gated_row_sums, gated_row_sums_ref, _gates, {"n": 500, "d": 16}),
    _p("cheb_rows", cheb_rows, cheb_rows_ref, _cheb, {"n": 1000, "d": 33}, (0, 1)),
    _p("placed_rows", placed_rows, placed_rows_ref, _placed, {"n": 1000, "d": 33}, (0, 1)),
]
