"""Natural variants written as users write them (issue 14), from the lead's probes of
session 26: running extremes kept with Python's `max` / `min` (a drawdown, the best gain
after a running low, a running maximum written into a buffer, the gaps below a running
peak), per-bucket maxima in a Python list, degree-normalised messages over an edge list,
matrix messages along edge tuples, triplet hinge losses over index tuples, a symmetric
matrix filled from (i, j, w) triples, a pairwise energy with an `if i != j` test, sliding
standard deviations, flattened window features, lagged predictions from a nested Python
sum, same-padded convolution rows, ragged group means from index lists, and a mixed loss
of per-sample terms, a ridge term and a Python sum of absolute values.

Each has a hand-vectorized NumPy reference."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import normal, presets, segment_sum, segments, variant


def drawdown_builtin(x):
    """Item 6: the deepest drawdown below the running peak, with Python's max and min."""
    peak, dd = x[0], 0.0
    for t in range(1, len(x)):
        peak = max(peak, x[t])
        dd = min(dd, x[t] - peak)
    return dd


def drawdown_builtin_ref(x):
    return min(0.0, np.min(x - np.maximum.accumulate(x)))


def best_gain_builtin(x):
    """Item 6: the best gain over the running low (buy low, sell high), Python's max/min."""
    lo, best = x[0], 0.0
    for t in range(1, len(x)):
        best = max(best, x[t] - lo)
        lo = min(lo, x[t])
    return best


def best_gain_builtin_ref(x):
    return max(0.0, np.max(x[1:] - np.minimum.accumulate(x)[:-1]))


def running_max_buffer(x, w):
    """Item 6: a running maximum written into a buffer, `m[t] = max(m[t - 1], x[t])`."""
    m = vnp.zeros_like(x)
    m[0] = x[0]
    for t in range(1, len(x)):
        m[t] = max(m[t - 1], x[t])
    return np.sum(m * w)


def running_max_buffer_ref(x, w):
    return np.sum(np.maximum.accumulate(x) * w)


def peak_gaps(x):
    """Item 6: squared gaps below the running peak, summed in the loop."""
    peak, s = x[0], 0.0
    for t in range(1, len(x)):
        peak = max(peak, x[t])
        s = s + (peak - x[t]) ** 2
    return s


def peak_gaps_ref(x):
    return np.sum((np.maximum.accumulate(x)[1:] - x[1:]) ** 2)


def degree_normalised(x, edges):
    """Item 3: degrees counted over an edge list, then messages scaled by 1/sqrt(du dv)."""
    n = len(x)
    deg = np.zeros(n)
    for u, v in edges:
        deg[u] += 1
        deg[v] += 1
    out = vnp.zeros(n)
    for u, v in edges:
        out[u] += x[v] / np.sqrt(deg[u] * deg[v])
    return np.sum(out ** 2)


def degree_normalised_ref(x, src, dst):
    n = len(x)
    deg = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    out = np.bincount(src, x[dst] / np.sqrt(deg[src] * deg[dst]), minlength=n)
    return np.sum(out ** 2)


def edge_matrix_messages(H, W, edges):
    """Item 3: `agg[v] += W @ H[u]` along edge tuples, then a nonlinearity."""
    agg = vnp.zeros_like(H)
    for u, v in edges:
        agg[v] += W @ H[u]
    return np.sum(np.tanh(agg) ** 2)


def edge_matrix_messages_ref(H, W, src, dst):
    agg = np.zeros_like(H)
    np.add.at(agg, dst, H[src] @ W.T)
    return np.sum(np.tanh(agg) ** 2)


def triplet_hinge(E, trips):
    """Item 3: a triplet margin loss over (anchor, positive, negative) index tuples."""
    loss = 0.0
    for a, p, q in trips:
        dp = np.sum((E[a] - E[p]) ** 2)
        dn = np.sum((E[a] - E[q]) ** 2)
        loss += np.maximum(0.0, dp - dn + 0.5)
    return loss


def triplet_hinge_ref(E, a, p, q):
    dp = np.sum((E[a] - E[p]) ** 2, 1)
    dn = np.sum((E[a] - E[q]) ** 2, 1)
    return np.sum(np.maximum(0.0, dp - dn + 0.5))


def symmetric_triples(x, triples):
    """Item 3: a symmetric matrix filled from (i, j, w) triples, then a quadratic form."""
    n = len(x)
    G = vnp.zeros((n, n))
    for i, j, w in triples:
        G[i, j] += w
        G[j, i] += w
    return np.sum((G @ x) ** 2)


def symmetric_triples_ref(x, i, j, w):
    n = len(x)
    G = np.zeros((n, n))
    np.add.at(G, (i, j), w)
    np.add.at(G, (j, i), w)
    return np.sum((G @ x) ** 2)


def pair_energy_if(X):
    """Item 4: a Coulomb energy over ordered pairs with an `if i != j` test, halved."""
    E = 0.0
    n = len(X)
    for i in range(n):
        for j in range(n):
            if i != j:
                E += 1.0 / np.linalg.norm(X[i] - X[j])
    return E / 2


def pair_energy_if_ref(X):
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    iu = np.triu_indices(len(X), 1)
    return np.sum(1.0 / D[iu])


def sliding_std(x, k=10):
    """Item 2: standard deviations of sliding windows, from a comprehension."""
    return np.sum(np.array([np.std(x[i:i + k]) for i in range(len(x) - k + 1)]))


def sliding_std_ref(x, k=10):
    return np.sum(np.std(np.lib.stride_tricks.sliding_window_view(x, k), axis=1))


def flat_window_features(X, w, k=4):
    """Item 2: each window of k rows flattened and dotted with one weight vector."""
    out = []
    for i in range(len(X) - k + 1):
        out.append(X[i:i + k].ravel() @ w)
    return np.sum(np.array(out) ** 2)


def flat_window_features_ref(X, w, k=4):
    v = np.lib.stride_tricks.sliding_window_view(X, k, axis=0).transpose(0, 2, 1)
    return np.sum((v.reshape(v.shape[0], -1) @ w) ** 2)


def lagged_predictions(x, w):
    """Item 2: autoregressive predictions from a nested Python sum over lags."""
    k = len(w)
    preds = [sum(w[j] * x[t - j - 1] for j in range(k)) for t in range(k, len(x))]
    return np.sum((np.array(preds) - x[k:]) ** 2)


def lagged_predictions_ref(x, w):
    k = len(w)
    V = np.lib.stride_tricks.sliding_window_view(x[:-1], k)[:, ::-1]
    return np.sum((V @ w - x[k:]) ** 2)


def same_padded_conv(x, w):
    """Item 2: a same-padded convolution, one np.dot per output row of a padded copy."""
    k = len(w)
    xp = np.pad(x, k // 2)
    out = np.array([np.dot(xp[i:i + k], w) for i in range(len(x))])
    return np.sum(out ** 2)


def same_padded_conv_ref(x, w):
    xp = np.pad(x, len(w) // 2)
    return np.sum(np.convolve(xp, w[::-1], "valid")[:len(x)] ** 2)


def ragged_group_means(E, w, groups):
    """Item 3: the mean embedding of each ragged group of indices, dotted with w, summed."""
    return sum(np.mean(E[idx], 0) @ w for idx in groups)


def ragged_group_means_ref(E, w, ids, plan, sizes):
    return np.sum((segment_sum(E[ids], plan) / sizes[:, None]) @ w)


def mixed_abs_terms(w, X, y):
    """Item 4: a mean of per-sample squared errors, a ridge term and a Python sum of |w_j|."""
    loss = 0.0
    for i in range(len(X)):
        loss = loss + (X[i] @ w - y[i]) ** 2 / len(X)
    loss += 0.1 * np.dot(w, w)
    loss += 0.5 * sum(abs(v) for v in w)
    return loss


def mixed_abs_terms_ref(w, X, y):
    return np.mean((X @ w - y) ** 2) + 0.1 * w @ w + 0.5 * np.abs(w).sum()


# ------------------------------------------------------------------ inputs


def _x_in(rng, n):
    return (np.cumsum(normal(rng, n)),)


def _xw_in(rng, n):
    return np.cumsum(normal(rng, n)), normal(rng, n)


def _edge_list(rng, n, m):
    return list(zip(rng.integers(0, n, m).tolist(), rng.integers(0, n, m).tolist()))


def _deg_in(rng, n):
    return normal(rng, n), _edge_list(rng, n, 8 * n)


def _deg_prep(args):
    x, edges = args
    e = np.asarray(edges)
    return x, e[:, 0], e[:, 1]


def _msg_in(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5), _edge_list(rng, n, 8 * n)


def _msg_prep(args):
    H, W, edges = args
    e = np.asarray(edges)
    return H, W, e[:, 0], e[:, 1]


def _trip_in(rng, n, d):
    t = rng.integers(0, n, (5 * n, 3))
    return normal(rng, n, d), [tuple(r) for r in t.tolist()]


def _trip_prep(args):
    E, trips = args
    t = np.asarray(trips)
    return E, t[:, 0], t[:, 1], t[:, 2]


def _triples_in(rng, n):
    m = 8 * n
    return normal(rng, n), list(zip(rng.integers(0, n, m).tolist(), rng.integers(0, n, m).tolist(),
                                    normal(rng, m).tolist()))


def _triples_prep(args):
    x, triples = args
    i, j, w = (np.asarray(c) for c in zip(*triples))
    return x, i.astype(int), j.astype(int), w.astype(float)


def _pts_in(rng, n):
    return (normal(rng, n, 3),)


def _seq_in(rng, n):
    return (normal(rng, n),)


def _win_in(rng, n, d):
    return normal(rng, n, d), normal(rng, 4 * d)


def _lag_in(rng, n, k):
    return normal(rng, n), normal(rng, k, scale=0.3)


def _conv_in(rng, n, k):
    return normal(rng, n), normal(rng, k)


def _groups_in(rng, n, d):
    groups = [rng.integers(0, n, rng.integers(1, 12)).tolist() for _ in range(2 * n // 3)]
    return normal(rng, n, d), normal(rng, d), groups


def _groups_prep(args):
    E, w, groups = args
    ids = np.concatenate([np.asarray(g) for g in groups])
    seg = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    sizes = np.array([len(g) for g in groups], float)
    return E, w, ids, segments(seg, len(groups)), sizes


def _ridge_in(rng, n, d):
    return normal(rng, d), normal(rng, n, d), normal(rng, n)


def _p(name, item, sizes, argnums, inputs, prepare=None):
    return variant(globals(), name, item, sizes, argnums, inputs, prepare)


_sz = presets


PATTERNS = [
    _p("drawdown_builtin", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("best_gain_builtin", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("running_max_buffer", 6, _sz({"n": 12}, {"n": 2000}), (0, 1), _xw_in),
    _p("peak_gaps", 6, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("degree_normalised", 3, _sz({"n": 8}, {"n": 200}), (0,), _deg_in, _deg_prep),
    _p("edge_matrix_messages", 3, _sz({"n": 6, "d": 3}, {"n": 200, "d": 8}), (0, 1), _msg_in,
       _msg_prep),
    _p("triplet_hinge", 3, _sz({"n": 6, "d": 3}, {"n": 100, "d": 8}), (0,), _trip_in,
       _trip_prep),
    _p("symmetric_triples", 3, _sz({"n": 6}, {"n": 100}), (0,), _triples_in, _triples_prep),
    _p("pair_energy_if", 4, _sz({"n": 5}, {"n": 40}), (0,), _pts_in),
    _p("sliding_std", 2, _sz({"n": 16}, {"n": 2000}), (0,), _seq_in),
    _p("flat_window_features", 2, _sz({"n": 8, "d": 2}, {"n": 500, "d": 6}), (0, 1), _win_in),
    _p("lagged_predictions", 2, _sz({"n": 12, "k": 3}, {"n": 2000, "k": 5}), (0, 1), _lag_in),
    _p("same_padded_conv", 2, _sz({"n": 10, "k": 3}, {"n": 1000, "k": 5}), (0, 1), _conv_in),
    _p("ragged_group_means", 3, _sz({"n": 9, "d": 2}, {"n": 300, "d": 8}), (0, 1),
       _groups_in, _groups_prep),
    _p("mixed_abs_terms", 4, _sz({"n": 6, "d": 3}, {"n": 500, "d": 8}), (0,), _ridge_in),
]
