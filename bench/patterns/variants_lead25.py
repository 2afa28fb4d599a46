"""Natural variants written as users write them, across the seed patterns (issue 14): a
moving average kept as a Python list, a graph smoothness penalty over an edge list of tuples,
k-means style centroid sums by label, a Gram matrix from a kernel passed as a function, a
Jacobi sweep into a second buffer, autoregressive residuals with a Python sum over lags,
discounted returns appended in reverse, a per-sample MLP through `map` over two iterables,
triangle areas over a face list, linear-interpolation histogram writes at two neighbouring
bins, a causal attention row loop with a running mask, a mixed sum of per-sample terms
and a whole-array penalty, Horner's rule, a survival curve, a top-k per row, a cross-entropy
at Python-int labels and a mixture's log-likelihood.

Each has a hand-vectorized NumPy reference."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import normal, presets, segment_sum, segments, uniform, variant


def moving_average_list(x, k=8):
    """Item 2: a moving average kept as a Python list of window means, then stacked."""
    out = []
    for i in range(len(x) - k + 1):
        out.append(np.mean(x[i:i + k]))
    m = np.array(out)
    return np.sum((m - x[k - 1:]) ** 2)


def moving_average_list_ref(x, k=8):
    c = np.concatenate([[0.0], np.cumsum(x)])
    m = (c[k:] - c[:-k]) / k
    return np.sum((m - x[k - 1:]) ** 2)


def edge_tuple_smoothness(h, w, edges):
    """Item 3: a graph smoothness penalty over an edge list of (u, v) tuples, weighted."""
    e = 0.0
    for u, v in edges:
        e += w * np.sum((h[u] - h[v]) ** 2)
    return e


def edge_tuple_smoothness_ref(h, w, src, dst):
    return w * np.sum((h[src] - h[dst]) ** 2)


def centroid_sums(X, labels, k=16):
    """Item 3: centroids as sums of the points with each label (`c[lab] += x`), then means."""
    c = vnp.zeros((k, X.shape[1]))
    n = np.zeros(k)
    for i, lab in enumerate(labels):
        c[lab] += X[i]
        n[lab] += 1
    c = c / np.maximum(n, 1)[:, None]
    return np.sum(c ** 2)


def centroid_sums_ref(X, labels, plan, n):
    c = segment_sum(X, plan) / np.maximum(n, 1)[:, None]
    return np.sum(c ** 2)


def _rbf(a, b):
    return np.exp(-np.sum((a - b) ** 2))


def gram_from_kernel(X, alpha, kernel=_rbf):
    """Item 4: a Gram matrix built from a kernel function passed as an argument, nested lists."""
    K = np.array([[kernel(a, b) for b in X] for a in X])
    return alpha @ K @ alpha


def gram_from_kernel_ref(X, alpha):
    sq = np.sum(X * X, axis=1)
    K = np.exp(-(sq[:, None] + sq[None, :] - 2 * X @ X.T))
    return alpha @ K @ alpha


def jacobi_two_buffers(u):
    """Item 1: one Jacobi sweep of a 2-D grid into a second buffer, point by point."""
    n, m = u.shape
    v = vnp.zeros_like(u)
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return np.sum((v - u) ** 2)


def jacobi_two_buffers_ref(u):
    v = np.zeros_like(u)
    v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return np.sum((v - u) ** 2)


def ar_residuals(x, a):
    """Item 2: residuals of an AR(p) model, the prediction a Python sum over the lags."""
    p = len(a)
    tot = 0.0
    for t in range(p, len(x)):
        pred = sum(a[j] * x[t - j - 1] for j in range(p))
        tot = tot + (x[t] - pred) ** 2
    return tot


def ar_residuals_ref(x, a):
    p = len(a)
    T = len(x)
    pred = sum(a[j] * x[p - j - 1:T - j - 1] for j in range(p))
    return np.sum((x[p:] - pred) ** 2)


def reversed_returns(r, v, gamma=0.97):
    """Item 6: discounted returns built backwards and appended to a list, then a value loss."""
    ret = 0.0
    rets = []
    for rt in reversed(list(r)):
        ret = rt + gamma * ret
        rets.append(ret)
    rets = np.array(rets[::-1])
    return np.sum((rets - v) ** 2)


def reversed_returns_ref(r, v, gamma=0.97):
    T = len(r)
    p = gamma ** np.arange(T)
    rets = np.cumsum((r * p)[::-1])[::-1] / p
    return np.sum((rets - v) ** 2)


def map_two_iterables(W1, W2, X, Y):
    """Item 4: a per-sample two-layer network through `map` over two iterables, Python sum."""
    losses = map(lambda xi, yi: np.sum((W2 @ np.tanh(W1 @ xi) - yi) ** 2), X, Y)
    return sum(losses) / len(X)


def map_two_iterables_ref(W1, W2, X, Y):
    return np.sum((np.tanh(X @ W1.T) @ W2.T - Y) ** 2) / len(X)


def face_areas(V, faces):
    """Item 3: the total area of a triangle mesh, one cross product per face of a list."""
    area = 0.0
    for f in faces:
        a, b, c = V[f[0]], V[f[1]], V[f[2]]
        area = area + 0.5 * np.linalg.norm(np.cross(b - a, c - a))
    return area


def face_areas_ref(V, F):
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    return 0.5 * np.sum(np.linalg.norm(np.cross(b - a, c - a), axis=1))


def interp_histogram(f, w, bins):
    """Item 3: a soft histogram, each sample split between its two neighbouring bins (the
    bins, Python ints, computed from the data beforehand)."""
    h = vnp.zeros(33)
    for i, j in enumerate(bins):
        h[j] += w[i] * (1 - f[i])
        h[j + 1] += w[i] * f[i]
    return np.sum(h ** 2)


def interp_histogram_ref(f, w, j):
    h = np.bincount(j, w * (1 - f), 33) + np.bincount(j + 1, w * f, 33)
    return np.sum(h ** 2)


def causal_attention_rows(Q, K, V):
    """Item 2: causal attention one query row at a time over the keys up to it."""
    out = 0.0
    for t in range(len(Q)):
        s = K[:t + 1] @ Q[t]
        p = np.exp(s - np.max(s))
        out = out + np.sum((p / np.sum(p)) @ V[:t + 1])
    return out


def causal_attention_rows_ref(Q, K, V):
    S = Q @ K.T
    S = np.where(np.tri(len(Q), dtype=bool), S, -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return np.sum(P @ V)


def mixed_sample_penalty(w, X, y, lam=0.1):
    """Item 4: a Python sum of per-sample logistic losses plus a whole-array penalty."""
    data = sum(np.log1p(np.exp(-y[i] * (X[i] @ w))) for i in range(len(X)))
    return data / len(X) + lam * np.sum(w ** 2)


def mixed_sample_penalty_ref(w, X, y, lam=0.1):
    return np.sum(np.log1p(np.exp(-y * (X @ w)))) / len(X) + lam * np.sum(w ** 2)


def horner_coeffs(c, x):
    """Item 6: a polynomial evaluated by Horner's rule over its coefficients, elementwise."""
    y = np.zeros_like(x)
    for ci in c:
        y = y * x + ci
    return np.sum(y ** 2)


def horner_coeffs_ref(c, x):
    return np.sum(np.polyval(c, x) ** 2)


def survival_curve(p):
    """Item 6: a survival curve, the running product of (1 - hazard), summed."""
    s = 1.0
    tot = 0.0
    for pi in p:
        s = s * (1 - pi)
        tot = tot + s
    return tot


def survival_curve_ref(p):
    return np.sum(np.cumprod(1 - p))


def topk_per_row(X, k=3):
    """Item 4: the sum of each row's k largest entries, `np.sort(row)[-k:]` per row."""
    tot = 0.0
    for row in X:
        tot += np.sum(np.sort(row)[-k:])
    return tot


def topk_per_row_ref(X, k=3):
    return np.sum(np.sort(X, axis=1)[:, -k:])


def labels_cross_entropy(W, X, labels):
    """Item 3: a softmax cross-entropy per sample, indexed by its Python-int label."""
    loss = 0.0
    for x, y in zip(X, labels):
        z = W @ x
        e = np.exp(z - np.max(z))
        loss -= np.log((e / np.sum(e))[y])
    return loss / len(X)


def labels_cross_entropy_ref(W, X, labels):
    Z = X @ W.T
    Z = Z - Z.max(1, keepdims=True)
    return np.mean(np.log(np.exp(Z).sum(1)) - Z[np.arange(len(X)), labels])


def mixture_log_likelihood(X, mus):
    """Item 4: a Gaussian mixture's log-likelihood, a Python sum over the means per sample."""
    ll = 0.0
    for x in X:
        ll += np.log(sum(np.exp(-0.5 * np.sum((x - m) ** 2)) for m in mus))
    return ll


def mixture_log_likelihood_ref(X, mus):
    D = ((X[:, None] - mus[None]) ** 2).sum(-1)
    return np.sum(np.log(np.exp(-0.5 * D).sum(1)))


# ------------------------------------------------------------------ inputs and records

def _x_in(rng, n):
    return (normal(rng, n),)


def _edges_in(rng, n, d):
    E = 4 * n
    src, dst = rng.integers(0, n, E), rng.integers(0, n, E)
    return normal(rng, n, d), np.array(0.7), list(zip(src.tolist(), dst.tolist()))


def _edges_prep(args):
    h, w, edges = args
    e = np.asarray(edges)
    return h, w, e[:, 0], e[:, 1]


def _labels_in(rng, n, d):
    return normal(rng, n, d), rng.integers(0, 16, n).tolist()


def _labels_prep(args):
    X, labels = args
    lab = np.asarray(labels)
    return X, lab, segments(lab, 16), np.bincount(lab, minlength=16).astype(float)


def _gram_in(rng, n, d):
    return normal(rng, n, d, scale=0.5), normal(rng, n)


def _grid_in(rng, n):
    return (normal(rng, n, n),)


def _ar_in(rng, n, p):
    return normal(rng, n), normal(rng, p, scale=0.3)


def _rv_in(rng, n):
    return normal(rng, n), normal(rng, n)


def _mlp_in(rng, n, d, h):
    return (normal(rng, h, d, scale=d ** -0.5), normal(rng, 2, h, scale=h ** -0.5),
            normal(rng, n, d), normal(rng, n, 2))


def _mesh_in(rng, n):
    V = normal(rng, n, 3)
    F = np.stack([rng.choice(n, 3, replace=False) for _ in range(2 * n)])
    return V, [tuple(f) for f in F.tolist()]


def _mesh_prep(args):
    V, faces = args
    return V, np.asarray(faces)


def _hist_in(rng, n):
    x = rng.uniform(0, 32, n)
    j = np.floor(x).astype(int)
    return x - j, normal(rng, n), j.tolist()


def _hist_prep(args):
    f, w, bins = args
    return f, w, np.asarray(bins)


def _att_in(rng, n, d):
    return normal(rng, n, d, scale=d ** -0.5), normal(rng, n, d), normal(rng, n, d)


def _logit_in(rng, n, d):
    return normal(rng, d, scale=0.3), normal(rng, n, d), np.sign(normal(rng, n))


def _poly_in(rng, n, k):
    return normal(rng, k, scale=0.5), uniform(rng, n, low=-1.0, high=1.0)


def _hazard_in(rng, n):
    return (uniform(rng, n, high=0.1),)


def _rows_in(rng, n, d):
    return (normal(rng, n, d),)


def _ce_in(rng, n, d, c):
    return normal(rng, c, d, scale=0.3), normal(rng, n, d), rng.integers(0, c, n).tolist()


def _ce_prep(args):
    W, X, labels = args
    return W, X, np.asarray(labels)


def _mix_in(rng, n, k):
    return normal(rng, n, 2), normal(rng, k, 2)


def _p(name, item, sizes, argnums, inputs, prepare=None):
    return variant(globals(), name, item, sizes, argnums, inputs, prepare)


_sz = presets


PATTERNS = [
    _p("moving_average_list", 2, _sz({"n": 12}, {"n": 2000}), (0,), _x_in),
    _p("edge_tuple_smoothness", 3, _sz({"n": 6, "d": 2}, {"n": 500, "d": 16}), (0, 1),
       _edges_in, _edges_prep),
    _p("centroid_sums", 3, _sz({"n": 20, "d": 2}, {"n": 2000, "d": 8}), (0,), _labels_in,
       _labels_prep),
    _p("gram_from_kernel", 4, _sz({"n": 5, "d": 2}, {"n": 60, "d": 4}), (0, 1), _gram_in),
    _p("jacobi_two_buffers", 1, _sz({"n": 6}, {"n": 40}), (0,), _grid_in),
    _p("ar_residuals", 2, _sz({"n": 12, "p": 3}, {"n": 1000, "p": 4}), (0, 1), _ar_in),
    _p("reversed_returns", 6, _sz({"n": 10}, {"n": 1000}), (0, 1), _rv_in),
    _p("map_two_iterables", 4, _sz({"n": 5, "d": 3, "h": 4}, {"n": 500, "d": 16, "h": 32}),
       (0, 1), _mlp_in),
    _p("face_areas", 3, _sz({"n": 8}, {"n": 500}), (0,), _mesh_in, _mesh_prep),
    _p("interp_histogram", 3, _sz({"n": 10}, {"n": 2000}), (0, 1), _hist_in,
       _hist_prep),
    _p("causal_attention_rows", 2, _sz({"n": 6, "d": 3}, {"n": 128, "d": 16}), (0, 1, 2),
       _att_in),
    _p("mixed_sample_penalty", 4, _sz({"n": 6, "d": 3}, {"n": 1000, "d": 16}), (0,),
       _logit_in),
    _p("horner_coeffs", 6, _sz({"n": 5, "k": 4}, {"n": 1000, "k": 12}), (0, 1), _poly_in),
    _p("survival_curve", 6, _sz({"n": 8}, {"n": 1000}), (0,), _hazard_in),
    _p("topk_per_row", 4, _sz({"n": 5, "d": 6}, {"n": 300, "d": 16}), (0,), _rows_in),
    _p("labels_cross_entropy", 3, _sz({"n": 5, "d": 3, "c": 4}, {"n": 500, "d": 16, "c": 10}),
       (0,), _ce_in, _ce_prep),
    _p("mixture_log_likelihood", 4, _sz({"n": 6, "k": 3}, {"n": 300, "k": 5}), (0, 1),
       _mix_in),
]
