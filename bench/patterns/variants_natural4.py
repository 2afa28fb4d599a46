"""Natural variants of running statistics, edge lists, read-modify-write and mixed sums (issue
14, items 1, 3, 4, 6), fourth set, in styles the suite lacked: running statistics with several
carries (Welford's mean and variance, an exponential moving mean and variance, momentum and
Adam paths over given gradients, an online softmax with its running maximum and rescaled sum,
a two-compartment model, the running minimum with the value paired to it), a scalar Kalman
filter with known gains, message passing in two rounds over an edge list, edge weights from
node features, degree-normalized Laplacian smoothing, pair and triangle losses over
`itertools.product` with masks, per-class sums through `if y[i] == k`, scatters into a 2-D
grid by (row, col) lists and bilinear splats, `defaultdict` accumulators keyed by Python ints,
`enumerate(zip(...))` loops, and buffers updated through `np.add(buf[i], v, out=buf[i])`.

Each has a hand-vectorized NumPy reference; static Python data (lists, dicts) is turned into
index arrays once, outside the timed region (`prepare`). The linear recurrences' references
use the closed form (cumulative products and sums), at sizes where it stays in range."""
from __future__ import annotations

import collections
import itertools

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments, uniform
from .indices import random_edges

_SEQ = {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}}
_G = {"small": {"n": 6, "e": 14, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}}
_ROWS = {"small": {"n": 7, "d": 3}, "default": {"n": 3000, "d": 32}}


def _linrec(a, b, init=0.0):
    """c[t] = a[t] * c[t-1] + b[t] (c[-1] = init) in closed form: c = P (init + cumsum(b / P)),
    P the cumulative product of a (in range at the sizes used here)."""
    P = np.cumprod(a, axis=0)
    return P * (init + np.cumsum(b / P, axis=0))


def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


# ------------------------------------------------------------------ running statistics (item 6)

def welford_mean_var(X):
    """Item 6: Welford's running mean and sum of squared deviations, two carries
    (delta = x - mu; mu += delta / (t + 1); m2 += delta * (x - mu))."""
    mu = vnp.zeros(X.shape[1])
    m2 = vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        delta = X[t] - mu
        mu = mu + delta / (t + 1)
        m2 = m2 + delta * (X[t] - mu)
    return np.sum(m2 / (X.shape[0] - 1)) + np.sum(mu ** 2)


def welford_mean_var_ref(X):
    return np.sum(np.var(X, axis=0, ddof=1)) + np.sum(np.mean(X, axis=0) ** 2)


def ema_mean_var(X):
    """Item 6: an exponential moving mean and variance (two carries; the variance's update
    reads the mean's) and the variance summed over the steps."""
    a = 0.99
    m = vnp.zeros(X.shape[1])
    v = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        d = X[t] - m
        m = m + (1 - a) * d
        v = a * (v + (1 - a) * d * d)
        total = total + np.sum(v)
    return total


def ema_mean_var_ref(X):
    a = 0.99
    ones = np.full(X.shape[0], a)[:, None]
    m = _linrec(ones, (1 - a) * X)
    prev = np.concatenate([np.zeros((1, X.shape[1])), m[:-1]])
    v = _linrec(ones, a * (1 - a) * (X - prev) ** 2)
    return np.sum(v)


def momentum_path(p0, G):
    """Item 6: heavy-ball momentum over given gradients, v = b * v + g; p = p - lr * v, and
    the squared norm of every iterate (p is read each step: two live carries)."""
    v = vnp.zeros_like(p0)
    p = p0
    loss = 0.0
    for t in range(G.shape[0]):
        v = 0.9 * v + G[t]
        p = p - 0.01 * v
        loss = loss + np.sum(p ** 2)
    return loss


def momentum_path_ref(p0, G):
    v = _linrec(np.full(G.shape[0], 0.9)[:, None], G)
    p = p0 - 0.01 * np.cumsum(v, axis=0)
    return np.sum(p ** 2)


def _path_inputs(rng, n, d):
    return normal(rng, d), normal(rng, n, d)


def adam_fixed_grads(p0, G):
    """Item 6: Adam's moment estimates over given gradients (two scans) and the parameter
    path they move, m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr m / (sqrt(v) + e)."""
    m = vnp.zeros_like(p0)
    v = vnp.zeros_like(p0)
    p = p0
    for t in range(G.shape[0]):
        m = 0.9 * m + 0.1 * G[t]
        v = 0.999 * v + 0.001 * G[t] ** 2
        p = p - 0.01 * m / (np.sqrt(v) + 1e-8)
    return np.sum(p ** 2)


def adam_fixed_grads_ref(p0, G):
    n = G.shape[0]
    m = _linrec(np.full(n, 0.9)[:, None], 0.1 * G)
    v = _linrec(np.full(n, 0.999)[:, None], 0.001 * G ** 2)
    return np.sum((p0 - 0.01 * np.sum(m / (np.sqrt(v) + 1e-8), axis=0)) ** 2)


def online_softmax(S, V):
    """Item 6: an online softmax down each column: the running maximum and the sums rescaled
    by it (m = max(m, s); l = l e^(m_old - m) + e^(s - m); acc likewise with the values)."""
    m = S[0]
    l_ = vnp.ones(S.shape[1])
    acc = V[0]
    for t in range(1, S.shape[0]):
        m_new = np.maximum(m, S[t])
        scale = np.exp(m - m_new)
        p = np.exp(S[t] - m_new)
        l_ = l_ * scale + p
        acc = acc * scale + p * V[t]
        m = m_new
    return np.sum(acc / l_)


def online_softmax_ref(S, V):
    e = np.exp(S - S.max(axis=0))
    return np.sum(np.sum(e * V, axis=0) / np.sum(e, axis=0))


def _sv_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d)


def kalman_known_gain(Z, K):
    """Item 6: a scalar Kalman filter per channel with known gains K[t]: predict, innovate,
    update, and the squared innovations summed (x = F x; r = z - x; x = x + K r)."""
    x = vnp.zeros(Z.shape[1])
    loss = 0.0
    for t in range(Z.shape[0]):
        xp = 0.98 * x
        r = Z[t] - xp
        x = xp + K[t] * r
        loss = loss + np.sum(r ** 2)
    return loss


def kalman_known_gain_ref(Z, K):
    x = _linrec((0.98 * (1 - K))[:, None], K[:, None] * Z)
    prev = np.concatenate([np.zeros((1, Z.shape[1])), x[:-1]])
    return np.sum((Z - 0.98 * prev) ** 2)


def _kalman_inputs(rng, n, d):
    return normal(rng, n, d), uniform(rng, n, low=0.2, high=0.4)


def two_timescale_ema(X):
    """Item 6: a fast and a slow moving average (two independent carries) and the squared
    gap between them at every step."""
    fast = X[0]
    slow = X[0]
    loss = 0.0
    for t in range(1, X.shape[0]):
        fast = 0.8 * fast + 0.2 * X[t]
        slow = 0.99 * slow + 0.01 * X[t]
        loss = loss + np.sum((fast - slow) ** 2)
    return loss


def two_timescale_ema_ref(X):
    n = X.shape[0] - 1
    f = _linrec(np.full(n, 0.8)[:, None], 0.2 * X[1:], X[0])
    s = _linrec(np.full(n, 0.99)[:, None], 0.01 * X[1:], X[0])
    return np.sum((f - s) ** 2)


def two_compartment(X, k):
    """Item 6: a two-compartment model, the second driven by the first (a triangular linear
    system: a = 0.9 a + x; b = k * b + 0.1 a), and the second's level penalized."""
    a = vnp.zeros(X.shape[1])
    b = vnp.zeros(X.shape[1])
    loss = 0.0
    for t in range(X.shape[0]):
        a = 0.9 * a + X[t]
        b = k * b + 0.1 * a
        loss = loss + np.sum(b ** 2)
    return loss


def two_compartment_ref(X, k):
    n = X.shape[0]
    a = _linrec(np.full(n, 0.9)[:, None], X)
    b = _linrec(np.broadcast_to(k, X.shape), 0.1 * a)
    return np.sum(b ** 2)


def _compartment_inputs(rng, n, d):
    return normal(rng, n, d), uniform(rng, d, low=0.8, high=0.95)


def running_min_pair(X, Y):
    """Item 6: the running minimum of x and the y seen with it, best = where(x < m, y, best)
    (a select carry that reads the minimum's), summed over the steps."""
    m = X[0]
    best = Y[0]
    total = np.sum(best)
    for t in range(1, X.shape[0]):
        best = np.where(X[t] < m, Y[t], best)
        m = np.minimum(m, X[t])
        total = total + np.sum(best)
    return total


def running_min_pair_ref(X, Y):
    n = X.shape[0]
    m = np.minimum.accumulate(X, axis=0)
    prev = np.concatenate([np.full((1, X.shape[1]), np.inf), m[:-1]])
    t = np.where(X < prev, np.arange(n)[:, None], 0)
    last = np.maximum.accumulate(t, axis=0)
    return np.sum(np.take_along_axis(Y, last, axis=0))


def running_mean_list(X, w):
    """Item 6: running mean and mean square appended to lists each step, then stacked: a
    z-score of every row against the statistics before it."""
    mu = X[0]
    sq = X[0] ** 2
    zs = []
    for t in range(1, X.shape[0]):
        var = sq - mu ** 2 + 1.0
        zs.append((X[t] - mu) / np.sqrt(var))
        mu = mu + (X[t] - mu) / (t + 1)
        sq = sq + (X[t] ** 2 - sq) / (t + 1)
    return np.sum(np.stack(zs) * w)


def running_mean_list_ref(X, w):
    k = np.arange(1, X.shape[0] + 1)[:, None]
    mu = np.cumsum(X, axis=0) / k
    sq = np.cumsum(X ** 2, axis=0) / k
    return np.sum((X[1:] - mu[:-1]) / np.sqrt(sq[:-1] - mu[:-1] ** 2 + 1.0) * w)


def _xw_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


# ------------------------------------------------------------------ edge lists (item 3)

def message_two_rounds(x, W, edges):
    """Item 3: message passing in two rounds over one edge list, the second reading the
    first's tanh (agg[v] += h[u] @ W for (u, v) in edges, twice)."""
    h = x
    for _ in range(2):
        agg = vnp.zeros((x.shape[0], W.shape[1]))
        for u, v in edges:
            agg[v] += h[u] @ W
        h = np.tanh(agg)
    return np.sum(h ** 2)


def message_two_rounds_ref(x, W, src, dst, seg):
    h = x
    for _ in range(2):
        h = np.tanh(segment_sum((h @ W)[src], seg))
    return np.sum(h ** 2)


def _mp_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), random_edges(rng, n, e)


def _prep_mp(args):
    x, W, edges = args
    s, d = np.array(edges).T
    return x, W, s, d, segments(d, len(x))


def gaussian_edge_weights(x, edges):
    """Item 3: per-edge weights from node features, w = exp(-sum((x[u] - x[v])**2)), and the
    weighted neighbour sums they make."""
    agg = vnp.zeros_like(x)
    for u, v in edges:
        w = np.exp(-np.sum((x[u] - x[v]) ** 2))
        agg[v] += w * x[u]
    return np.sum(agg ** 2)


def gaussian_edge_weights_ref(x, src, dst, seg):
    w = np.exp(-np.sum((x[src] - x[dst]) ** 2, axis=1))
    return np.sum(segment_sum(w[:, None] * x[src], seg) ** 2)


def _xe_inputs(rng, n, e, f):
    return normal(rng, n, f, scale=0.3), random_edges(rng, n, e)


def _prep_xe(args):
    x, edges = args
    s, d = np.array(edges).T
    return x, s, d, segments(d, len(x))


def laplacian_smoothing(x, edges):
    """Item 3: degree-normalized Laplacian smoothing, degrees counted in Python ints, then
    sum over edges of |x[u] / sqrt(deg u) - x[v] / sqrt(deg v)|^2."""
    deg = collections.Counter()
    for u, v in edges:
        deg[u] += 1
        deg[v] += 1
    loss = 0.0
    for u, v in edges:
        loss = loss + np.sum((x[u] / np.sqrt(deg[u]) - x[v] / np.sqrt(deg[v])) ** 2)
    return loss


def laplacian_smoothing_ref(x, src, dst, deg):
    y = x / np.sqrt(deg)[:, None]
    return np.sum((y[src] - y[dst]) ** 2)


def _prep_lap(args):
    x, edges = args
    s, d = np.array(edges).T
    deg = np.bincount(s, minlength=len(x)) + np.bincount(d, minlength=len(x))
    return x, s, d, np.maximum(deg, 1).astype(float)


def defaultdict_int_keys(x, w, edges):
    """Item 3: a `defaultdict(float)` keyed by Python node ids, acc[v] += x[u] @ w, then the
    squares of the values summed in key order."""
    acc = collections.defaultdict(float)
    for u, v in edges:
        acc[v] += x[u] @ w
    return sum(val ** 2 for _, val in sorted(acc.items()))


def defaultdict_int_keys_ref(x, w, src, dst, n):
    return np.sum(np.bincount(dst, weights=(x @ w)[src], minlength=n) ** 2)


def _xwe_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f), random_edges(rng, n, e)


def _prep_xwe(args):
    x, w, edges = args
    s, d = np.array(edges).T
    return x, w, s, d, len(x)


def edge_softmax_two_pass(x, a, edges):
    """Item 3: attention over incoming edges in two passes over the list: the exponentiated
    scores summed per node, then each message weighted by its share."""
    z = vnp.zeros(x.shape[0])
    for u, v in edges:
        z[v] += np.exp(np.dot(x[u], a))
    out = vnp.zeros_like(x)
    for u, v in edges:
        out[v] += np.exp(np.dot(x[u], a)) / z[v] * x[u]
    return np.sum(out ** 2)


def edge_softmax_two_pass_ref(x, a, src, dst, seg):
    s = np.exp(x @ a)[src]
    z = np.bincount(dst, weights=s, minlength=len(x))
    return np.sum(segment_sum((s / z[dst])[:, None] * x[src], seg) ** 2)


def _xa_inputs(rng, n, e, f):
    return normal(rng, n, f, scale=0.3), normal(rng, f), random_edges(rng, n, e)


def _prep_xa(args):
    x, a, edges = args
    s, d = np.array(edges).T
    return x, a, s, d, segments(d, len(x))


def np_add_out_rows(x, W, edges):
    """Items 1, 3: a buffer updated in place through `np.add(buf[v], m, out=buf[v])` for
    every edge, then a tanh readout."""
    buf = vnp.zeros((x.shape[0], W.shape[1]))
    for u, v in edges:
        np.add(buf[v], x[u] @ W, out=buf[v])
    return np.sum(np.tanh(buf))


def np_add_out_rows_ref(x, W, src, dst, seg):
    return np.sum(np.tanh(segment_sum((x @ W)[src], seg)))


# ------------------------------------------------------------------ pairs and masks (item 4)

def product_pair_margin(s, pos, neg):
    """Item 4: a pairwise ranking loss over `itertools.product(pos, neg)`, a softplus of the
    score gap for every (positive, negative) pair."""
    return sum(np.log1p(np.exp(s[j] - s[i])) for i, j in itertools.product(pos, neg))


def product_pair_margin_ref(s, pos, neg):
    return np.sum(np.log1p(np.exp(s[neg][None, :] - s[pos][:, None])))


def _rank_inputs(rng, n):
    s = normal(rng, n)
    perm = rng.permutation(n)
    return s, [int(i) for i in perm[:n // 2]], [int(i) for i in perm[n // 2:]]


def _prep_rank(args):
    s, pos, neg = args
    return s, np.array(pos), np.array(neg)


def masked_pair_product(X, mask):
    """Item 4: a pair energy over `itertools.product(range(n), repeat=2)` kept where i < j and
    a static mask (a nested Python list of bools) allows it."""
    n = X.shape[0]
    loss = 0.0
    for i, j in itertools.product(range(n), repeat=2):
        if i < j and mask[i][j]:
            loss = loss + np.dot(X[i], X[j]) ** 2
    return loss


def masked_pair_product_ref(X, M):
    return np.sum((X @ X.T) ** 2 * M)


def _mask_inputs(rng, n, d):
    m = rng.random((n, n)) < 0.3
    return normal(rng, n, d), [[bool(v) for v in row] for row in m]


def _prep_mask(args):
    X, mask = args
    return X, np.triu(np.array(mask, dtype=float), 1)


def triangle_product_loss(X, tri):
    """Item 4: a loss over the triangles of a mesh given as (i, j, k) tuples: the squared
    area vector of each (a cross product of two edge vectors)."""
    loss = 0.0
    for i, j, k in tri:
        c = np.cross(X[j] - X[i], X[k] - X[i])
        loss = loss + np.dot(c, c)
    return loss


def triangle_product_loss_ref(X, i, j, k):
    c = np.cross(X[j] - X[i], X[k] - X[i])
    return np.sum(c * c)


def _tri_inputs(rng, n, t):
    return normal(rng, n, 3), [tuple(int(v) for v in rng.choice(n, 3, replace=False))
                               for _ in range(t)]


def _prep_tri(args):
    X, tri = args
    i, j, k = np.array(tri).T
    return X, i, j, k


def class_if_sums(X, C, y):
    """Items 3, 4: per-class sums through `if y[i] == k` in a loop over the classes and rows,
    then the squared distance of each class's mean to its prototype."""
    loss = 0.0
    for k in range(C.shape[0]):
        s = vnp.zeros(X.shape[1])
        cnt = 0
        for i in range(X.shape[0]):
            if y[i] == k:
                s = s + X[i]
                cnt += 1
        loss = loss + np.sum((s / max(cnt, 1) - C[k]) ** 2)
    return loss


def class_if_sums_ref(X, C, onehot, counts):
    return np.sum((onehot @ X / counts[:, None] - C) ** 2)


def _class_inputs(rng, n, d, k):
    return normal(rng, n, d), normal(rng, k, d), [int(v) for v in rng.integers(0, k, n)]


def _prep_class(args):
    X, C, y = args
    onehot = (np.array(y)[None, :] == np.arange(len(C))[:, None]).astype(float)
    return X, C, onehot, np.maximum(onehot.sum(axis=1), 1.0)


def enumerate_zip_discounted(X, y, w):
    """Item 4: `for t, (x, yt) in enumerate(zip(X, y))`, a squared error discounted by the
    step index, accumulated in a Python float."""
    loss = 0.0
    for t, (x, yt) in enumerate(zip(X, y)):
        loss += (np.dot(x, w) - yt) ** 2 / (t + 1)
    return loss


def enumerate_zip_discounted_ref(X, y, w):
    return np.sum((X @ w - y) ** 2 / np.arange(1, len(y) + 1))


def _xyw_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n), normal(rng, d)


def mixed_node_edge_terms(x, W, edges):
    """Item 4: one Python float accumulating three kinds of terms in turn: a node term for
    each node, an edge term for each edge and a constant-weighted prior every tenth node."""
    loss = 0.0
    for i in range(x.shape[0]):
        loss += 0.5 * np.sum((x[i] @ W) ** 2)
        if i % 10 == 0:
            loss += 1e-2 * np.sum(np.abs(x[i]))
    for u, v in edges:
        loss += np.sum(np.tanh(x[u] * x[v]))
    return loss


def mixed_node_edge_terms_ref(x, W, src, dst):
    return 0.5 * np.sum((x @ W) ** 2) + 1e-2 * np.sum(np.abs(x[::10])) + \
        np.sum(np.tanh(x[src] * x[dst]))


def _prep_mixed(args):
    x, W, edges = args
    s, d = np.array(edges).T
    return x, W, s, d


# ------------------------------------------------------------------ grids and buffers (item 1)

def grid_scatter_rc(v, M, rows, cols):
    """Items 1, 3: values scattered into a 2-D grid by (row, col) lists, G[r, c] += v[k], then
    a masked energy of the grid."""
    G = vnp.zeros(M.shape)
    for k, (r, c) in enumerate(zip(rows, cols)):
        G[r, c] += v[k]
    return np.sum(G * M) + np.sum(G ** 2)


def grid_scatter_rc_ref(v, M, rows, cols):
    G = np.bincount(rows * M.shape[1] + cols, weights=v, minlength=M.size).reshape(M.shape)
    return np.sum(G * M) + np.sum(G ** 2)


def _grid_inputs(rng, n, h, w):
    return (normal(rng, n), normal(rng, h, w), [int(r) for r in rng.integers(0, h, n)],
            [int(c) for c in rng.integers(0, w, n)])


def _prep_grid(args):
    v, M, rows, cols = args
    return v, M, np.array(rows), np.array(cols)


def bilinear_splat(v, P):
    """Items 1, 3: a bilinear splat: each point's value spread over the four grid cells
    around it with weights from its fractional position (four read-modify-writes)."""
    G = vnp.zeros((32, 32))
    for k in range(v.shape[0]):
        x, y = P[k]
        i, j = int(x), int(y)
        fx, fy = x - i, y - j
        G[i, j] += (1 - fx) * (1 - fy) * v[k]
        G[i + 1, j] += fx * (1 - fy) * v[k]
        G[i, j + 1] += (1 - fx) * fy * v[k]
        G[i + 1, j + 1] += fx * fy * v[k]
    return np.sum(G ** 2)


def bilinear_splat_ref(v, i, j, fx, fy):
    G = np.zeros(32 * 32)
    for di, dj, w in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)),
                      (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
        G += np.bincount((i + di) * 32 + j + dj, weights=w * v, minlength=32 * 32)
    return np.sum(G ** 2)


def _splat_inputs(rng, n):
    return normal(rng, n), [(float(a), float(b)) for a, b in rng.uniform(0, 30.99, (n, 2))]


def _prep_splat(args):
    v, P = args
    P = np.array(P)
    ij = np.floor(P).astype(int)
    return v, ij[:, 0], ij[:, 1], P[:, 0] - ij[:, 0], P[:, 1] - ij[:, 1]


def scale_then_add_rows(x, s, idx):
    """Item 1: read-modify-write of rows in two kinds of update, buf[i] *= s[i] and then
    buf[j] += x[j] at listed rows, on a copy of x."""
    buf = x.copy()
    for i in range(x.shape[0]):
        buf[i] *= s[i]
    for j in idx:
        buf[j] += x[j]
    return np.sum(np.sin(buf))


def scale_then_add_rows_ref(x, s, cnt):
    return np.sum(np.sin(x * s[:, None] + cnt[:, None] * x))


def _scale_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n), [int(j) for j in rng.integers(0, n, n // 2)]


def _prep_scale(args):
    x, s, idx = args
    return x, s, np.bincount(np.array(idx), minlength=len(x)).astype(float)


# ------------------------------------------------------------------------------- the suite

def _p(name, item, sizes, argnums, inputs, prepare=None, target="parallel"):
    mod = globals()
    kw = {"prepare": prepare} if prepare is not None else {}
    return Pattern(name, item, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target=target, tags=("variant", "natural", "style4"), **kw)


PATTERNS = [
    _p("welford_mean_var", 6, _SEQ, (0,), _x_inputs, target="scan"),
    _p("ema_mean_var", 6, _SEQ, (0,), _x_inputs, target="scan"),
    _p("momentum_path", 6, _SEQ, (0, 1), _path_inputs, target="scan"),
    _p("adam_fixed_grads", 6, _SEQ, (0, 1), _path_inputs, target="scan"),
    _p("online_softmax", 6, _SEQ, (0, 1), _sv_inputs, target="scan"),
    _p("kalman_known_gain", 6, _SEQ, (0,), _kalman_inputs, target="scan"),
    _p("two_timescale_ema", 6, _SEQ, (0,), _x_inputs, target="scan"),
    _p("two_compartment", 6, _SEQ, (0, 1), _compartment_inputs, target="scan"),
    _p("running_min_pair", 6, _SEQ, (0, 1), _sv_inputs, target="scan"),
    _p("running_mean_list", 6, _SEQ, (0, 1), _xw_inputs, target="scan"),
    _p("message_two_rounds", 3, _G, (0, 1), _mp_inputs, _prep_mp),
    _p("gaussian_edge_weights", 3, _G, (0,), _xe_inputs, _prep_xe),
    _p("laplacian_smoothing", 3, _G, (0,), _xe_inputs, _prep_lap),
    _p("defaultdict_int_keys", 3, {"small": {"n": 6, "e": 14, "f": 3},
                                   "default": {"n": 3000, "e": 8000, "f": 64}}, (0, 1),
       _xwe_inputs, _prep_xwe),
    _p("edge_softmax_two_pass", 3, _G, (0, 1), _xa_inputs, _prep_xa),
    _p("np_add_out_rows", 1, _G, (0, 1), _mp_inputs, _prep_mp),
    _p("product_pair_margin", 4, {"small": {"n": 6}, "default": {"n": 200}}, (0,),
       _rank_inputs, _prep_rank),
    _p("masked_pair_product", 4, {"small": {"n": 6, "d": 2}, "default": {"n": 200, "d": 16}},
       (0,), _mask_inputs, _prep_mask),
    _p("triangle_product_loss", 4, {"small": {"n": 6, "t": 5},
                                    "default": {"n": 1000, "t": 2000}}, (0,),
       _tri_inputs, _prep_tri),
    _p("class_if_sums", 4, {"small": {"n": 9, "d": 2, "k": 3},
                            "default": {"n": 5000, "d": 32, "k": 5}}, (0, 1),
       _class_inputs, _prep_class),
    _p("enumerate_zip_discounted", 4, {"small": {"n": 7, "d": 3},
                                       "default": {"n": 4000, "d": 64}}, (0, 2), _xyw_inputs),
    _p("mixed_node_edge_terms", 4, _G, (0, 1), _mp_inputs, _prep_mixed),
    _p("grid_scatter_rc", 1, {"small": {"n": 9, "h": 3, "w": 4},
                              "default": {"n": 6000, "h": 96, "w": 64}}, (0,),
       _grid_inputs, _prep_grid),
    _p("bilinear_splat", 1, {"small": {"n": 6}, "default": {"n": 2000}}, (0,),
       _splat_inputs, _prep_splat),
    _p("scale_then_add_rows", 1, _ROWS, (0, 1), _scale_inputs, _prep_scale),
]
