"""Final-graph quality (simplify lane, session 24): a logsumexp written with the max added
first, per row in a loop and over a whole matrix (`np.max(S)`), and gradients that add one
cotangent through several products (a polynomial of X, per-row feature scalings written as
in-place adds). References are the hand-vectorized forms (scipy-style logsumexp with the max
subtracted; the polynomial in Horner form)."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal


def lse_rows_max_first(Z, W, y):
    """Item 4 (variant): softmax regression's negative log-likelihood, one row at a time,
    m + log(sum(exp(s - m))) with the max written first, minus the label's score."""
    total = 0.0
    for i in range(len(Z)):
        s = Z[i] @ W
        m = np.max(s)
        total = total + m + np.log(np.sum(np.exp(s - m))) - s[y[i]]
    return total


def lse_rows_max_first_ref(Z, W, y):
    S = Z @ W
    m = S.max(1, keepdims=True)
    lse = np.log(np.exp(S - m).sum(1)) + m[:, 0]
    return np.sum(lse - S[np.arange(len(S)), y])


def _zwy_inputs(rng, n, d, k):
    return normal(rng, n, d), normal(rng, d, k, scale=d ** -0.5), \
        [int(v) for v in rng.integers(0, k, n)]


def _prep_labels(args):
    Z, W, y = args
    return Z, W, np.asarray(y)


def matrix_logsumexp(X, W):
    """Mixed (plain NumPy, straight-line): logsumexp of every score of a matrix (GradBench's
    lse over X @ W), the max written first."""
    S = X @ W
    m = np.max(S)
    return m + np.log(np.sum(np.exp(S - m)))


def matrix_logsumexp_ref(X, W):
    S = X @ W
    m = S.max()
    return m + np.log(np.exp(S - m).sum())


def _xw_inputs(rng, n, d, k):
    return normal(rng, n, d), normal(rng, d, k, scale=d ** -0.5)


def polynomial_paths(X, a, b, c):
    """Mixed (plain NumPy, straight-line): an elementwise chain whose gradient adds X's
    cotangent through three products, tanh(a x + b x^2 + c x^3) per feature."""
    return np.sum(np.tanh(a * X + b * X ** 2 + c * X ** 3))


def polynomial_paths_ref(X, a, b, c):
    return np.sum(np.tanh(X * (a + X * (b + X * c))))


def _poly_inputs(rng, n, d):
    return normal(rng, n, d, scale=0.5), normal(rng, d), normal(rng, d, scale=0.5), \
        normal(rng, d, scale=0.2)


def feature_scalings_inplace(X, a, b, s):
    """Item 1 (variant): each row built by in-place adds of two feature scalings, then scaled
    by its weight; the gradient reaches X through both products."""
    buf = vnp.zeros(X.shape)
    for i in range(len(X)):
        buf[i] += X[i] * a
        buf[i] += vnp.exp(X[i]) * b
        buf[i] *= s[i]
    return vnp.sum(vnp.tanh(buf))


def feature_scalings_inplace_ref(X, a, b, s):
    return np.sum(np.tanh((X * a + np.exp(X) * b) * s[:, None]))


def _scal_inputs(rng, n, d):
    return normal(rng, n, d, scale=0.5), normal(rng, d), normal(rng, d, scale=0.3), normal(rng, n)


ITEMS = {"lse_rows_max_first": 4, "feature_scalings_inplace": 1}  # the rest: straight-line


def _p(name, sizes, argnums, inputs, target, prepare=None):
    mod = globals()
    extra = {"prepare": prepare} if prepare else {}
    return Pattern(name, ITEMS.get(name, 0), mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target=target, tags=("variant", "simplify", "plain-numpy"), **extra)


PATTERNS = [
    _p("lse_rows_max_first", {"small": {"n": 6, "d": 3, "k": 4},
                              "default": {"n": 1000, "d": 16, "k": 10}},
       (0, 1), _zwy_inputs, "parallel", _prep_labels),
    _p("matrix_logsumexp", {"small": {"n": 5, "d": 3, "k": 4},
                            "default": {"n": 1000, "d": 16, "k": 64}},
       (0, 1), _xw_inputs, "parallel"),
    _p("polynomial_paths", {"small": {"n": 5, "d": 3}, "default": {"n": 1000, "d": 64}},
       (0, 1, 2, 3), _poly_inputs, "single"),
    _p("feature_scalings_inplace", {"small": {"n": 6, "d": 3}, "default": {"n": 250, "d": 256}},
       (0, 1, 2, 3), _scal_inputs, "parallel"),
]
