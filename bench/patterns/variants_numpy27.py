"""Natural programs that select per sample with a traced boolean mask (session 27, numpy
lane), each in a loop or a comprehension over rows: the largest entry above a row's mean
(np.max(x[x > x.mean()]), no initial=: NumPy raises on an empty selection, vecgrad checks
where the compiled code runs), the range of a gated selection (max - min of x[g > 0]), a
row's tail cleared where its first column is positive (B[B[:, 0] > 0, 1:] = 0.0), sums
over a mask on the last axis (T[..., m]), and covariances with learned observation weights
(np.cov(..., aweights=a), whose values NumPy checks: where the compiled code runs)."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_T = ("variant", "numpy27")


def above_mean_max(X):
    """Item 1: the largest entry of each row above the row's mean, squared."""
    return sum(np.max(x[x > x.mean()]) ** 2 for x in X)


def above_mean_max_ref(X):
    return np.sum(np.max(np.where(X > X.mean(axis=1, keepdims=True), X, -np.inf), axis=1)
                  ** 2)


def gated_range(X, G):
    """Item 1: the range of each row's entries where a gate is open (its first entry always
    is), max minus min of one selection."""
    tot = 0.0
    for x, g in zip(X, G):
        sel = np.tanh(x[g > 0])
        tot = tot + (sel.max() - sel.min()) ** 2
    return tot


def gated_range_ref(X, G):
    t, m = np.tanh(X), G > 0
    hi = np.max(np.where(m, t, -np.inf), axis=1)
    lo = np.min(np.where(m, t, np.inf), axis=1)
    return np.sum((hi - lo) ** 2)


def cleared_tails(X, w):
    """Item 1: each sample a (k, 3) block whose rows, where the first column is positive,
    have their tail replaced by a constant; then a weighted score."""
    out = vnp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        B = X[i].reshape(-1, 3) * 1.0
        B[B[:, 0] > 0, 1:] = 0.5
        out[i] = np.sum(B @ w)
    return np.sum(out ** 2)


def cleared_tails_ref(X, w):
    B = X.reshape(X.shape[0], -1, 3)
    B = np.where((B[:, :, :1] > 0) & (np.arange(3) > 0), 0.5, B)
    return np.sum(np.sum(B @ w, axis=1) ** 2)


def last_axis_gates(T, g):
    """Item 1: per sample, the sums over the columns a shared gate selects (T[..., g > 0])."""
    return sum(np.sum(np.sum(t[..., g > 0], axis=-1) ** 2) for t in T)


def last_axis_gates_ref(T, g):
    return np.sum(np.sum(T[..., g > 0], axis=-1) ** 2)


def weighted_cov(X, A):
    """Item 1: per sample, the covariance of 3 variables with traced observation weights."""
    return sum(np.sum(np.cov(x.reshape(3, -1), aweights=a) ** 2) for x, a in zip(X, A))


def weighted_cov_ref(X, A):
    Xr = X.reshape(X.shape[0], 3, -1)
    ws = A.sum(axis=1)
    xc = Xr - (np.einsum("nkd,nd->nk", Xr, A) / ws[:, None])[:, :, None]
    fact = ws - np.sum(A * A, axis=1) / ws  # (ddof 1 with aweights: NumPy's normalization)
    C = np.einsum("nkd,nld,nd->nkl", xc, xc, A) / fact[:, None, None]
    return np.sum(C ** 2)


def _rows(rng, n, d):
    return (normal(rng, n, d),)


def _gated(rng, n, d):
    G = normal(rng, n, d)
    G[:, 0] = np.abs(G[:, 0]) + 0.1  # (every row selects something)
    return normal(rng, n, d), G


def _blocks(rng, n, d):
    return normal(rng, n, 3 * (d // 3)), np.array([0.5, -1.0, 2.0])


def _gates(rng, n, d):
    return normal(rng, n, 8, d), normal(rng, d)


def _weights(rng, n, d):
    return normal(rng, n, 3 * d), rng.random((n, d)) + 0.1


_SMALL = {"n": 4, "d": 9}
_DEFAULT = {"n": 1000, "d": 33}


def _p(name, natural, ref, inputs, argnums=(0,)):
    return Pattern(name, 1, natural, ref, inputs, {"small": _SMALL, "default": _DEFAULT},
                   argnums, tags=_T)


PATTERNS = [
    _p("above_mean_max", above_mean_max, above_mean_max_ref, _rows),
    _p("gated_range", gated_range, gated_range_ref, _gated),
    _p("cleared_tails", cleared_tails, cleared_tails_ref, _blocks),
    _p("weighted_cov", weighted_cov, weighted_cov_ref, _weights, (0, 1)),
    Pattern("last_axis_gates", 1, last_axis_gates, last_axis_gates_ref, _gates,
            {"small": _SMALL, "default": {"n": 500, "d": 16}}, (0,), tags=_T),
]
