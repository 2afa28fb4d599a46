"""Natural programs calling the NumPy functions ML and scientific users call (session 25, numpy
lane), each in a loop over samples: a masked mean of positive residuals per row (`r[r > 0]`
reduced), a hinge written with np.r_, per-sample linear solves, slogdet and Cholesky
log-determinants, running means from np.cumsum, second differences, np.roll / np.pad
circular and edge smoothing, np.select Huber terms, np.interp through a learned table, valid
np.convolve per channel, np.logaddexp softplus terms, np.nanmean of rows with gaps,
np.clip / np.where leaky terms, hand-written log-sum-exp with keepdims, np.einsum per
sample, and a top-k of np.sort."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_T = ("variant", "numpy25")


def masked_positive_mean(X, W):
    """Item 1: per row, the mean of the positive residuals and the squared norm of the
    negative ones (`r[r > 0].mean()`, `np.linalg.norm(r[r < 0])`), written with boolean
    selections of data-dependent length."""
    loss = 0.0
    for i in range(X.shape[0]):
        r = X[i] @ W - 0.1
        pos = r[r > 0]
        loss = loss + np.sum(pos) / (np.count_nonzero(r > 0) + 1.0) \
            + np.linalg.norm(r[r < 0]) ** 2
    return loss


def masked_positive_mean_ref(X, W):
    r = X @ W - 0.1
    p = r > 0
    return np.sum(np.sum(r * p, axis=1) / (np.sum(p, axis=1) + 1.0)) + np.sum(r * r * ~p)


def _xw_inputs(rng, n, d, k):
    return normal(rng, n, d), normal(rng, d, k, scale=d ** -0.5)


def hinge_r_(X, w):
    """Item 1: per sample a score padded with a zero by np.r_ and a max over it (a hinge as
    np.max(np.r_[0.0, margins]))."""
    tot = 0.0
    for x in X:
        m = 1.0 - x * w
        tot = tot + np.max(np.r_[0.0, m])
    return tot


def hinge_r_ref(X, w):
    return np.sum(np.maximum(np.max(1.0 - X * w, axis=1), 0.0))


def _hinge_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def per_sample_solve(A, b):
    """Item 1: for each sample a small shifted system solved with np.linalg.solve and a
    squared norm of the solution."""
    tot = 0.0
    for i in range(A.shape[0]):
        M = A[i] + 4.0 * np.eye(A.shape[1])
        x = np.linalg.solve(M, b)
        tot = tot + np.sum(x ** 2)
    return tot


def per_sample_solve_ref(A, b):
    M = A + 4.0 * np.eye(A.shape[1])
    x = np.linalg.solve(M, np.broadcast_to(b, A.shape[:2])[..., None])[..., 0]
    return np.sum(x ** 2)


def _solve_inputs(rng, n, d):
    return normal(rng, n, d, d, scale=0.3), normal(rng, d)


def slogdet_gram(A):
    """Item 1: a log-determinant per sample of a Gram matrix plus the identity
    (np.linalg.slogdet's sign times its log)."""
    tot = 0.0
    for a in A:
        sign, ld = np.linalg.slogdet(a @ a.T + np.eye(a.shape[0]))
        tot = tot + sign * ld
    return tot


def slogdet_gram_ref(A):
    s, ld = np.linalg.slogdet(A @ np.swapaxes(A, 1, 2) + np.eye(A.shape[1]))
    return np.sum(s * ld)


def _gram_inputs(rng, n, d, k):
    return (normal(rng, n, d, k, scale=k ** -0.5),)


def cholesky_logdet(A):
    """Item 1: twice the sum of the log-diagonal of a Cholesky factor, per sample, in a list
    comprehension summed by Python's sum."""
    return sum(2 * np.sum(np.log(np.diag(np.linalg.cholesky(a @ a.T + np.eye(a.shape[0])))))
               for a in A)


def cholesky_logdet_ref(A):
    L = np.linalg.cholesky(A @ np.swapaxes(A, 1, 2) + np.eye(A.shape[1]))
    return 2 * np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)))


def running_means(X):
    """Item 1: running means of each row from np.cumsum, written into a buffer row by row,
    then a squared loss."""
    out = vnp.zeros_like(X)
    for i in range(X.shape[0]):
        out[i] = np.cumsum(X[i]) / (np.arange(X.shape[1]) + 1)
    return np.sum(out ** 2)


def running_means_ref(X):
    return np.sum((np.cumsum(X, axis=1) / (np.arange(X.shape[1]) + 1)) ** 2)


def _rows_inputs(rng, n, d):
    return (normal(rng, n, d),)


def second_differences(X):
    """Item 2: a roughness penalty per row from np.diff(x, n=2) plus a first difference
    with prepend=0."""
    return sum(np.sum(np.diff(x, n=2) ** 2) + np.sum(np.diff(x, prepend=0.0) ** 2) for x in X)


def second_differences_ref(X):
    d1 = np.diff(X, axis=1, prepend=0.0)
    return np.sum(np.diff(X, n=2, axis=1) ** 2) + np.sum(d1 ** 2)


def roll_pad_smooth(X):
    """Item 2: per row a circular neighbour product (np.roll) and a 3-tap smoothing of the
    edge-padded row (np.pad mode='edge')."""
    tot = 0.0
    for x in X:
        p = np.pad(x, 1, mode="edge")
        s = (p[:-2] + p[1:-1] + p[2:]) / 3.0
        tot = tot + np.sum(np.roll(x, 1) * x) + np.sum(s ** 2)
    return tot


def roll_pad_smooth_ref(X):
    P = np.concatenate([X[:, :1], X, X[:, -1:]], axis=1)
    S = (P[:, :-2] + P[:, 1:-1] + P[:, 2:]) / 3.0
    return np.sum(np.roll(X, 1, axis=1) * X) + np.sum(S ** 2)


def select_huber(X):
    """Item 1: a Huber loss per row written with np.select (three pieces, a default)."""
    return sum(np.sum(np.select([np.abs(x) < 1, x > 0], [0.5 * x ** 2, x - 0.5], -x - 0.5))
               for x in X)


def select_huber_ref(X):
    a = np.abs(X)
    return np.sum(np.where(a < 1, 0.5 * X * X, a - 0.5))


def interp_table(X, fp):
    """Item 1: a learned lookup table (fp, differentiated) read by np.interp at each row's
    values."""
    xp = np.linspace(-3, 3, fp.shape[0])
    return sum(np.sum(np.interp(x, xp, fp) ** 2) for x in X)


def interp_table_ref(X, fp):
    return np.sum(np.interp(X, np.linspace(-3, 3, fp.shape[0]), fp) ** 2)


def _interp_inputs(rng, n, d, t):
    return np.clip(normal(rng, n, d), -2.9, 2.9), normal(rng, t)


def convolve_channels_valid(X, k):
    """Item 2: np.convolve(x, k, mode='valid') per channel with a learned kernel, squared."""
    return sum(np.sum(np.convolve(x, k, mode="valid") ** 2) for x in X)


def convolve_channels_valid_ref(X, k):
    from numpy.lib.stride_tricks import sliding_window_view
    return np.sum((sliding_window_view(X, len(k), axis=1) @ k[::-1]) ** 2)


def _conv_inputs(rng, c, T, k):
    return normal(rng, c, T), normal(rng, k)


def logaddexp_softplus(X, w):
    """Item 1: a logistic loss per sample written with np.logaddexp(0, -z) and a log1p
    term."""
    tot = 0.0
    for x in X:
        z = x @ w
        tot = tot + np.logaddexp(0.0, -z) + 0.1 * np.log1p(z * z)
    return tot


def logaddexp_softplus_ref(X, w):
    z = X @ w
    return np.sum(np.logaddexp(0.0, -z) + 0.1 * np.log1p(z * z))


def _logistic_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, scale=d ** -0.5)


def nanmean_gaps(X):
    """Item 1: per row, the mean of the entries that are not gaps (np.nan where a value is
    above 1.5), by np.nanmean, squared."""
    tot = 0.0
    for x in X:
        g = np.where(x > 1.5, np.nan, x)
        tot = tot + np.nanmean(g) ** 2
    return tot


def nanmean_gaps_ref(X):
    keep = X <= 1.5
    return np.sum((np.sum(X * keep, axis=1) / np.sum(keep, axis=1)) ** 2)


def clip_where_leaky(X):
    """Item 1: a leaky unit by np.where and a clipped square per row (np.clip with Python
    scalars)."""
    tot = 0.0
    for x in X:
        y = np.where(x > 0, x, 0.1 * x)
        tot = tot + np.sum(np.clip(y, -0.5, 1) ** 2)
    return tot


def clip_where_leaky_ref(X):
    return np.sum(np.clip(np.where(X > 0, X, 0.1 * X), -0.5, 1) ** 2)


def logsumexp_keepdims(X, W):
    """Item 1: a log-sum-exp per sample written by hand with keepdims (max-shifted), then
    the log-likelihood of class 0."""
    tot = 0.0
    for x in X:
        z = x @ W
        m = np.max(z, keepdims=True)
        tot = tot + (m + np.log(np.sum(np.exp(z - m), keepdims=True)))[0] - z[0]
    return tot


def logsumexp_keepdims_ref(X, W):
    Z = X @ W
    m = np.max(Z, axis=1, keepdims=True)
    return np.sum(m[:, 0] + np.log(np.sum(np.exp(Z - m), axis=1)) - Z[:, 0])


def einsum_bilinear(X, W):
    """Item 1: a bilinear form per sample by np.einsum('i,ij,j->', x, W, x)."""
    return sum(np.einsum("i,ij,j->", x, W, x) for x in X)


def einsum_bilinear_ref(X, W):
    return np.sum((X @ W) * X)


def _bilinear_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5)


def sort_topk(X):
    """Item 1: the sum of the 3 largest entries of each row, from np.sort reversed."""
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.sort(x)[::-1][:3])
    return tot


def sort_topk_ref(X):
    return np.sum(np.sort(X, axis=1)[:, -3:])


PATTERNS = [
    Pattern("masked_positive_mean", 1, masked_positive_mean, masked_positive_mean_ref,
            _xw_inputs, {"small": {"n": 5, "d": 3, "k": 4},
                         "default": {"n": 1000, "d": 16, "k": 32}}, (0, 1), tags=_T),
    Pattern("hinge_r_", 1, hinge_r_, hinge_r_ref, _hinge_inputs,
            {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 16}}, (0, 1), tags=_T),
    Pattern("per_sample_solve", 1, per_sample_solve, per_sample_solve_ref, _solve_inputs,
            {"small": {"n": 4, "d": 3}, "default": {"n": 500, "d": 4}}, (0, 1), tags=_T),
    Pattern("slogdet_gram", 1, slogdet_gram, slogdet_gram_ref, _gram_inputs,
            {"small": {"n": 4, "d": 3, "k": 2}, "default": {"n": 500, "d": 4, "k": 3}}, (0,),
            tags=_T),
    Pattern("cholesky_logdet", 1, cholesky_logdet, cholesky_logdet_ref, _gram_inputs,
            {"small": {"n": 4, "d": 3, "k": 2}, "default": {"n": 500, "d": 4, "k": 3}}, (0,),
            tags=_T),
    Pattern("running_means", 1, running_means, running_means_ref, _rows_inputs,
            {"small": {"n": 4, "d": 5}, "default": {"n": 500, "d": 64}}, (0,), tags=_T),
    Pattern("second_differences", 2, second_differences, second_differences_ref,
            _rows_inputs, {"small": {"n": 4, "d": 6}, "default": {"n": 500, "d": 64}}, (0,),
            tags=_T),
    Pattern("roll_pad_smooth", 2, roll_pad_smooth, roll_pad_smooth_ref, _rows_inputs,
            {"small": {"n": 4, "d": 6}, "default": {"n": 500, "d": 64}}, (0,), tags=_T),
    Pattern("select_huber", 1, select_huber, select_huber_ref, _rows_inputs,
            {"small": {"n": 4, "d": 6}, "default": {"n": 500, "d": 64}}, (0,), tags=_T),
    Pattern("interp_table", 1, interp_table, interp_table_ref, _interp_inputs,
            {"small": {"n": 4, "d": 5, "t": 7}, "default": {"n": 500, "d": 32, "t": 33}},
            (0, 1), tags=_T),
    Pattern("convolve_channels_valid", 2, convolve_channels_valid, convolve_channels_valid_ref,
            _conv_inputs, {"small": {"c": 3, "T": 10, "k": 3},
                           "default": {"c": 32, "T": 1000, "k": 7}}, (0, 1), tags=_T),
    Pattern("logaddexp_softplus", 1, logaddexp_softplus, logaddexp_softplus_ref,
            _logistic_inputs, {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 16}},
            (0, 1), tags=_T),
    Pattern("nanmean_gaps", 1, nanmean_gaps, nanmean_gaps_ref, _rows_inputs,
            {"small": {"n": 4, "d": 6}, "default": {"n": 500, "d": 64}}, (0,), tags=_T),
    Pattern("clip_where_leaky", 1, clip_where_leaky, clip_where_leaky_ref, _rows_inputs,
            {"small": {"n": 4, "d": 6}, "default": {"n": 500, "d": 64}}, (0,), tags=_T),
    Pattern("logsumexp_keepdims", 1, logsumexp_keepdims, logsumexp_keepdims_ref, _xw_inputs,
            {"small": {"n": 5, "d": 3, "k": 4}, "default": {"n": 1000, "d": 16, "k": 32}},
            (0, 1), tags=_T),
    Pattern("einsum_bilinear", 1, einsum_bilinear, einsum_bilinear_ref, _bilinear_inputs,
            {"small": {"n": 5, "d": 3}, "default": {"n": 1000, "d": 16}}, (0, 1), tags=_T),
    Pattern("sort_topk", 1, sort_topk, sort_topk_ref, _rows_inputs,
            {"small": {"n": 4, "d": 6}, "default": {"n": 500, "d": 32}}, (0,), tags=_T),
]
