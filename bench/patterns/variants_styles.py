"""Natural variants across writing styles (items 1-7): terms chosen by a Python-int parity,
a histogram filled by read-modify-write at integer positions, moving averages collected into
an array, messages both ways along weighted edges, a kernel passed to `map` and to a generic
Gram-matrix builder, rows of a score buffer normalized in place, a stencil whose boundary is an
`if`, prefix sums of growing slices, np.convolve per channel, float32 windows, a value written
and rewritten in one iteration, and a vector linear recurrence."""
from __future__ import annotations

from functools import partial

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges


def parity_terms(w, X):
    """Item 4 (variant): a logistic term on even rows, a squared term on odd rows (chosen by
    `if i % 2`), and a weight penalty added at every step."""
    n, loss = X.shape[0], 0.0
    for i in range(n):
        z = X[i] @ w
        if i % 2 == 0:
            loss += vnp.log1p(vnp.exp(-z))
        else:
            loss += 0.5 * z ** 2
        loss += 1e-3 * vnp.sum(w ** 2) / n
    return loss


def parity_terms_ref(w, X):
    z = X @ w
    return (np.sum(np.log1p(np.exp(-z[0::2]))) + np.sum(0.5 * z[1::2] ** 2)
            + 1e-3 * np.sum(w ** 2))


def parity_inputs(rng, n, d):
    return normal(rng, d, scale=d ** -0.5), normal(rng, n, d)


def histogram_rmw(v, idx, m):
    """Item 3 (variant): a histogram of squared values, h[idx[k]] = h[idx[k]] + v[k]**2 with
    repeated integer positions, then a concave readout."""
    h = vnp.zeros(m)
    for k in range(len(v)):
        h[idx[k]] = h[idx[k]] + v[k] ** 2
    return vnp.sum(vnp.sqrt(h + 1.0))


def histogram_rmw_ref(v, idx, m):
    return np.sum(np.sqrt(np.bincount(idx, weights=v ** 2, minlength=m) + 1.0))


def histogram_inputs(rng, n, m):
    return normal(rng, n), rng.integers(0, m, n), m


def moving_average_array(x, k):
    """Item 2 (variant): a moving average built as vnp.array of a comprehension of window
    means, and the squared residual of the series against it."""
    ma = vnp.array([vnp.mean(x[t:t + k]) for t in range(len(x) - k + 1)])
    return vnp.sum((x[k - 1:] - ma) ** 2)


def moving_average_array_ref(x, k):
    return np.sum((x[k - 1:] - sliding_window_view(x, k).mean(axis=1)) ** 2)


def moving_average_inputs(rng, T, k):
    return normal(rng, T), k


def edges_both_ways(H, edges, wts, deg):
    """Item 3 (variant): weighted messages both ways along a list of (a, b) tuples, each
    scaled by the receiver's degree, from `enumerate(edges)`."""
    out = vnp.zeros(H.shape)
    for e, (a, b) in enumerate(edges):
        out[a] += wts[e] * H[b] / deg[a]
        out[b] += wts[e] * H[a] / deg[b]
    return vnp.sum(vnp.tanh(out) ** 2)


def edges_both_ways_ref(H, src, dst, wts, deg, to_src, to_dst):
    out = (segment_sum((wts / deg[src])[:, None] * H[dst], to_src)
           + segment_sum((wts / deg[dst])[:, None] * H[src], to_dst))
    return np.sum(np.tanh(out) ** 2)


def edges_both_ways_inputs(rng, n, e, d):
    edges = random_edges(rng, n, e)
    deg = np.bincount(np.asarray(edges).ravel(), minlength=n) + 1.0
    return normal(rng, n, d), edges, rng.random(e), deg


def _prep_both_ways(args):
    H, edges, wts, deg = args
    src, dst = np.asarray(edges).T
    return H, src, dst, wts, deg, segments(src, len(H)), segments(dst, len(H))


def _rbf(a, b):
    return vnp.exp(-vnp.sum((a - b) ** 2))


def kernel_map(P, Q):
    """Items 4, 7 (variant): a kernel function passed to `map` (bound to p with
    functools.partial) over Q inside a comprehension over P, summed with Python's `sum`."""
    return sum(sum(map(partial(_rbf, p), Q)) for p in P)


def kernel_map_ref(P, Q):
    return np.sum(np.exp(-((P[:, None, :] - Q[None]) ** 2).sum(-1)))


def kernel_map_inputs(rng, n, m, d):
    return normal(rng, n, d), normal(rng, m, d)


def _gram(kernel, X):
    n = X.shape[0]
    G = vnp.zeros((n, n))
    for i in range(n):
        for j in range(n):
            G[i, j] = kernel(X[i], X[j])
    return G


def gram_solve(X, y):
    """Items 1, 7 (variant): a generic Gram-matrix builder that takes the kernel as an
    argument and fills G[i, j] in nested loops, then a regularized solve."""
    G = _gram(lambda a, b: vnp.exp(-vnp.sum((a - b) ** 2) / 0.98), X)
    return y @ vnp.linalg.solve(G + 1e-2 * vnp.eye(X.shape[0]), y)


def gram_solve_ref(X, y):
    G = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 0.98)
    return y @ np.linalg.solve(G + 1e-2 * np.eye(len(X)), y)


def gram_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n)


def row_softmax_rmw(Qm, K, V):
    """Item 1 (variant): scores written entry by entry, S[i, j] = Qm[i] @ K[j], then each row
    normalized in place (S[i] = exp(S[i] - max); S[i] = S[i] / sum) and read back."""
    n = Qm.shape[0]
    S = vnp.zeros((n, K.shape[0]))
    for i in range(n):
        for j in range(K.shape[0]):
            S[i, j] = Qm[i] @ K[j]
        S[i] = vnp.exp(S[i] - vnp.max(S[i]))
        S[i] = S[i] / vnp.sum(S[i])
    return vnp.sum((S @ V) ** 2)


def row_softmax_rmw_ref(Qm, K, V):
    S = Qm @ K.T
    S = np.exp(S - S.max(axis=1, keepdims=True))
    return np.sum(((S / S.sum(axis=1, keepdims=True)) @ V) ** 2)


def row_softmax_inputs(rng, n, m, d):
    return normal(rng, n, d, scale=d ** -0.5), normal(rng, m, d), normal(rng, m, d)


def stencil_if_boundary(x):
    """Item 2 (variant): a discrete Laplacian energy whose neighbours are zero outside the
    array, chosen with `x[i-1] if i > 0 else 0.0`."""
    n, tot = len(x), 0.0
    for i in range(n):
        left = x[i - 1] if i > 0 else 0.0
        right = x[i + 1] if i < n - 1 else 0.0
        tot += (x[i] - 0.5 * (left + right)) ** 2
    return tot


def stencil_if_boundary_ref(x):
    xp = np.pad(x, 1)
    return np.sum((x - 0.5 * (xp[:-2] + xp[2:])) ** 2)


def stencil_inputs(rng, n):
    return (normal(rng, n),)


def prefix_sums(x):
    """Item 4 (variant): the energy of every prefix sum, each written as the sum of the
    growing slice x[:i] (one element longer per iteration)."""
    return sum(vnp.sum(x[:i]) ** 2 for i in range(1, len(x) + 1))


def prefix_sums_ref(x):
    return np.sum(np.cumsum(x) ** 2)


def prefix_inputs(rng, n):
    return (normal(rng, n),)


def convolve_channels(S, k):
    """Item 2 (variant): plain np.convolve per channel in a comprehension, 'valid' mode."""
    return sum(np.sum(np.convolve(S[c], k, mode="valid") ** 2) for c in range(S.shape[0]))


def convolve_channels_ref(S, k):
    return np.sum((sliding_window_view(S, len(k), axis=1) @ k[::-1]) ** 2)


def convolve_inputs(rng, c, T, k):
    return normal(rng, c, T), normal(rng, k)


def float32_window_variance(x, k):
    """Item 2 (variant): the variance of every window of a float32 series, accumulated into a
    Python float (the sum stays float32, as NumPy's)."""
    out = 0.0
    for t in range(len(x) - k + 1):
        w = x[t:t + k]
        out += 0.5 * vnp.sum((w - vnp.mean(w)) ** 2)
    return out


def float32_window_variance_ref(x, k):
    W = sliding_window_view(x, k)
    return 0.5 * np.sum((W - W.mean(axis=1, keepdims=True)) ** 2)


def float32_inputs(rng, T, k):
    return normal(rng, T, dtype=np.float32), k


def rewrite_same_iteration(y):
    """Item 1 (variant): a buffer entry written, then read and rewritten in the same
    iteration, buf[i] = 2 y[i]; buf[i] = buf[i] + sin(buf[i])."""
    buf = vnp.zeros(len(y))
    for i in range(len(y)):
        buf[i] = y[i] * 2.0
        buf[i] = buf[i] + vnp.sin(buf[i])
    return vnp.sum(buf ** 2)


def rewrite_same_iteration_ref(y):
    b = 2.0 * y
    return np.sum((b + np.sin(b)) ** 2)


def rewrite_inputs(rng, n):
    return (normal(rng, n),)


def diag_linear_rnn(U, a):
    """Item 6 (variant): a vector state with a per-unit decay, h = a * h + U[t], and the
    running energy of the states."""
    h, tot = vnp.zeros(U.shape[1]), 0.0
    for t in range(U.shape[0]):
        h = a * h + U[t]
        tot += vnp.sum(h ** 2)
    return tot


def diag_linear_rnn_ref(U, a):
    h, tot = np.zeros(U.shape[1]), 0.0
    for t in range(U.shape[0]):
        h = a * h + U[t]
        tot += np.sum(h ** 2)
    return tot


def diag_rnn_inputs(rng, T, b):
    return normal(rng, T, b), 0.9 * rng.random(b)


PATTERNS = [
    Pattern("parity_terms", 4, parity_terms, parity_terms_ref, parity_inputs,
            {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 16}}, (0,),
            tags=("variant",)),
    Pattern("histogram_rmw", 3, histogram_rmw, histogram_rmw_ref, histogram_inputs,
            {"small": {"n": 9, "m": 4}, "default": {"n": 2000, "m": 64}}, (0,),
            tags=("variant",)),
    Pattern("moving_average_array", 2, moving_average_array, moving_average_array_ref,
            moving_average_inputs,
            {"small": {"T": 9, "k": 3}, "default": {"T": 3000, "k": 8}}, (0,),
            tags=("variant",)),
    Pattern("edges_both_ways", 3, edges_both_ways, edges_both_ways_ref,
            edges_both_ways_inputs,
            {"small": {"n": 5, "e": 9, "d": 2}, "default": {"n": 300, "e": 1500, "d": 8}},
            (0,), prepare=_prep_both_ways, tags=("variant",)),
    Pattern("kernel_map", 4, kernel_map, kernel_map_ref, kernel_map_inputs,
            {"small": {"n": 4, "m": 3, "d": 2}, "default": {"n": 100, "m": 80, "d": 3}},
            (0, 1), tags=("variant",)),
    Pattern("gram_solve", 7, gram_solve, gram_solve_ref, gram_inputs,
            {"small": {"n": 4, "d": 2}, "default": {"n": 60, "d": 3}}, (0, 1),
            tags=("variant",)),
    Pattern("row_softmax_rmw", 1, row_softmax_rmw, row_softmax_rmw_ref, row_softmax_inputs,
            {"small": {"n": 3, "m": 4, "d": 2}, "default": {"n": 100, "m": 100, "d": 16}},
            (0, 1, 2), tags=("variant",)),
    Pattern("stencil_if_boundary", 2, stencil_if_boundary, stencil_if_boundary_ref,
            stencil_inputs, {"small": {"n": 7}, "default": {"n": 2000}}, (0,),
            tags=("variant",)),
    Pattern("prefix_sums", 4, prefix_sums, prefix_sums_ref, prefix_inputs,
            {"small": {"n": 6}, "default": {"n": 400}}, (0,), tags=("variant",)),
    Pattern("convolve_channels", 2, convolve_channels, convolve_channels_ref, convolve_inputs,
            {"small": {"c": 2, "T": 12, "k": 3}, "default": {"c": 16, "T": 2000, "k": 9}},
            (0, 1), tags=("variant",)),
    Pattern("float32_window_variance", 2, float32_window_variance,
            float32_window_variance_ref, float32_inputs,
            {"small": {"T": 9, "k": 3}, "default": {"T": 4000, "k": 5}}, (0,),
            tags=("variant",)),
    Pattern("rewrite_same_iteration", 1, rewrite_same_iteration, rewrite_same_iteration_ref,
            rewrite_inputs, {"small": {"n": 5}, "default": {"n": 2000}}, (0,),
            tags=("variant",)),
    Pattern("diag_linear_rnn", 6, diag_linear_rnn, diag_linear_rnn_ref, diag_rnn_inputs,
            {"small": {"T": 5, "b": 3}, "default": {"T": 500, "b": 64}}, (0, 1),
            target="rolled", tags=("variant",)),
]
