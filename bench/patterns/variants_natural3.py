"""Natural variants of edge lists, read-modify-write and mixed sums (issue 14, items 1, 3, 4, 6),
third set, in styles the suite lacked: graphs given as adjacency dicts `{i: [j, ...]}`, weighted
edge triples `for (u, v, w) in edges`, degrees counted in the loop (Python ints, or a traced
buffer with `+= 1.0`), attention over neighbours with a segment softmax (adjacency dicts and CSR
rows), pairwise potentials over `itertools.combinations` with a cutoff through `np.where`,
per-node updates through `np.clip`, scatter-max and scatter-min (np.maximum, Python's min),
weighted histograms and class counts, read-modify-writes at (i, j) of a 2-D buffer, float32 and
float64 accumulators side by side, losses branching on `if label == k`, a running mean
`mu = mu + (x - mu) / (t + 1)`, sums of `np.dot` over pairs, nested comprehensions over two
index lists, parameters in a dict argument, edge features, `defaultdict` accumulators,
segments given as (start, end) spans, and scatter-max through traced index arrays.

Each has a hand-vectorized NumPy reference; static Python data (lists, dicts) is turned into
index arrays once, outside the timed region (`prepare`)."""
from __future__ import annotations

import collections
import itertools

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges

_G = {"small": {"n": 6, "e": 14, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}}
_ROWS = {"small": {"n": 5, "d": 3}, "default": {"n": 3000, "d": 32}}


def _adj_dict(rng, n, k):
    """{i: [j, ...]}: each node's neighbours, 1 to k of them (repeats allowed)."""
    return {i: [int(j) for j in rng.integers(0, n, rng.integers(1, k + 1))] for i in range(n)}


def _flat_adj(adj):
    """(flat neighbour ids, owner of each, starts of each node's run, counts)."""
    lens = np.array([len(v) for v in adj.values()])
    flat = np.concatenate([np.asarray(v) for v in adj.values()])
    return flat, np.repeat(np.array(list(adj)), lens), np.r_[0, np.cumsum(lens)[:-1]], lens


# ---------------------------------------------------------------- adjacency dicts, edge triples

def adjacency_dict_mean(x, W, adj):
    """Item 3: a graph as an adjacency dict {i: [j, ...]}; each node's mean neighbour row
    through W, written into a buffer."""
    h = vnp.zeros((x.shape[0], W.shape[1]))
    for i, nbrs in adj.items():
        h[i] = np.mean(x[nbrs], axis=0) @ W
    return np.sum(np.tanh(h) ** 2)


def adjacency_dict_mean_ref(x, W, flat, owner, starts, lens):
    mean = np.add.reduceat(x[flat], starts, axis=0) / lens[:, None]
    return np.sum(np.tanh(mean @ W) ** 2)


def _adj_inputs(rng, n, k, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), _adj_dict(rng, n, k)


def _prep_adj(args):
    *arrays, adj = args
    return (*arrays, *_flat_adj(adj))


def weighted_edge_triples(x, edges):
    """Item 3: weighted edges as (u, v, w) triples with a Python-float weight,
    out[v] += w * tanh(x[u])."""
    out = vnp.zeros_like(x)
    for (u, v, w) in edges:
        out[v] += w * np.tanh(x[u])
    return np.sum(out ** 2)


def weighted_edge_triples_ref(x, src, w, plan):
    return np.sum(segment_sum(w[:, None] * np.tanh(x)[src], plan) ** 2)


def _triple_inputs(rng, n, e, f):
    return normal(rng, n, f), [(s, d, float(w)) for (s, d), w in
                               zip(random_edges(rng, n, e), rng.uniform(0.1, 1.0, e))]


def _prep_triples(args):
    x, edges = args
    s, d, w = (np.array(c) for c in zip(*edges))
    return x, s.astype(int), w, segments(d.astype(int), len(x))


def traced_edge_weights(x, ew, W, edges):
    """Item 3: a traced weight per edge, read by the edge's position from enumerate:
    agg[v] += ew[k] * (x[u] @ W)."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for k, (u, v) in enumerate(edges):
        agg[v] += ew[k] * (x[u] @ W)
    return np.sum(agg ** 2)


def traced_edge_weights_ref(x, ew, W, src, plan):
    return np.sum(segment_sum(ew[:, None] * (x @ W)[src], plan) ** 2)


def _ew_inputs(rng, n, e, f):
    edges = random_edges(rng, n, e)
    return normal(rng, n, f), normal(rng, len(edges)), normal(rng, f, f, scale=f ** -0.5), edges


def _prep_ew(args):
    x, ew, W, edges = args
    s, d = np.array(edges).T
    return x, ew, W, s, segments(d, len(x))


def gcn_degrees_python(x, W, edges):
    """Item 3: GCN normalization with degrees counted in the loop as Python ints (self
    loops included), c = 1 / sqrt(deg[u] * deg[v]) per edge, messages both ways."""
    n = x.shape[0]
    deg = [1] * n
    for u, v in edges:
        deg[u] += 1
        deg[v] += 1
    out = x / np.array(deg, dtype=float)[:, None]
    for u, v in edges:
        c = 1.0 / np.sqrt(deg[u] * deg[v])
        out[v] += c * x[u]
        out[u] += c * x[v]
    return np.sum(np.tanh(out @ W))


def gcn_degrees_python_ref(x, W, both_src, both_dst, c2, deg):
    out = x / deg[:, None] + np.bincount(
        np.repeat(both_dst * x.shape[1], x.shape[1]) + np.tile(np.arange(x.shape[1]),
                                                                len(both_dst)),
        (c2[:, None] * x[both_src]).ravel(), x.size).reshape(x.shape)
    return np.sum(np.tanh(out @ W))


def _gcn_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), random_edges(rng, n, e)


def _prep_gcn(args):
    x, W, edges = args
    s, d = np.array(edges).T
    deg = 1 + np.bincount(s, minlength=len(x)) + np.bincount(d, minlength=len(x))
    c = 1.0 / np.sqrt(deg[s] * deg[d])
    return x, W, np.r_[s, d], np.r_[d, s], np.r_[c, c], deg.astype(float)


def degree_buffer_mean(x, edges):
    """Items 1, 3: in-degrees counted into a buffer with `cnt[v] += 1.0` next to the sums of
    the messages, then the mean message per node (at least one)."""
    cnt = vnp.zeros(x.shape[0])
    tot = vnp.zeros_like(x)
    for u, v in edges:
        cnt[v] += 1.0
        tot[v] += x[u]
    mean = tot / np.maximum(cnt, 1.0)[:, None]
    return np.sum((x - mean) ** 2)


def degree_buffer_mean_ref(x, src, dst, plan):
    cnt = np.bincount(dst, minlength=len(x)).astype(float)
    mean = segment_sum(x[src], plan) / np.maximum(cnt, 1.0)[:, None]
    return np.sum((x - mean) ** 2)


def _edges_only_inputs(rng, n, e, f):
    return normal(rng, n, f), random_edges(rng, n, e)


def _prep_edges_only(args):
    x, edges = args
    s, d = np.array(edges).T
    return x, s, d, segments(d, len(x))


def gat_adjacency_dict(x, W, a, adj):
    """Item 3: attention over each node's neighbours (an adjacency dict), scores from the
    neighbour's and the node's own features, a segment softmax, out[i] = p @ h[nbrs]."""
    h = x @ W
    f = W.shape[1]
    out = vnp.zeros_like(h)
    for i, nbrs in adj.items():
        s = np.tanh(h[nbrs] @ a[:f] + h[i] @ a[f:])
        p = np.exp(s - np.max(s))
        out[i] = (p / np.sum(p)) @ h[nbrs]
    return np.sum(out ** 2)


def gat_adjacency_dict_ref(x, W, a, flat, owner, starts, lens):
    h = x @ W
    f = W.shape[1]
    s = np.tanh((h @ a[:f])[flat] + (h @ a[f:])[owner])
    p = np.exp(s - np.maximum.reduceat(s, starts)[owner])
    p = p / np.add.reduceat(p, starts)[owner]
    return np.sum(np.add.reduceat(p[:, None] * h[flat], starts, axis=0) ** 2)


def _gat_inputs(rng, n, k, f):
    return (normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), normal(rng, 2 * f),
            _adj_dict(rng, n, k))


def csr_softmax_rows(vals, x, indices, indptr):
    """Item 3: CSR rows through a static `indptr` (row lengths vary), a softmax over each
    row's stored values times the gathered x, y[i] = p @ x[indices[lo:hi]]."""
    n = len(indptr) - 1
    y = vnp.zeros(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        xs = x[indices[lo:hi]]
        s = vals[lo:hi] * xs
        p = np.exp(s - np.max(s))
        y[i] = p @ xs / np.sum(p)
    return np.sum(y ** 2)


def csr_softmax_rows_ref(vals, x, indices, owner, starts):
    xs = x[indices]
    s = vals * xs
    p = np.exp(s - np.maximum.reduceat(s, starts)[owner])
    return np.sum((np.add.reduceat(p * xs, starts) / np.add.reduceat(p, starts)) ** 2)


def _csr_inputs(rng, n, k):
    lens = rng.integers(1, k + 1, n)
    indptr = [0] + [int(v) for v in np.cumsum(lens)]
    return normal(rng, indptr[-1]), normal(rng, n), rng.integers(0, n, indptr[-1]), indptr


def _prep_csr(args):
    vals, x, indices, indptr = args
    lens = np.diff(indptr)
    return vals, x, indices, np.repeat(np.arange(len(lens)), lens), np.array(indptr[:-1])


def span_max_pool(H, W, spans):
    """Item 3: packed sequences given as (start, end) spans of several lengths; each span's
    rows through W, max-pooled, appended, then stacked."""
    pooled = []
    for (s, e) in spans:
        pooled.append(np.max(H[s:e] @ W, axis=0))
    return np.sum(np.tanh(np.stack(pooled)) ** 2)


def span_max_pool_ref(H, W, starts):
    return np.sum(np.tanh(np.maximum.reduceat(H @ W, starts, axis=0)) ** 2)


def _span_inputs(rng, n, k, f):
    lens = rng.integers(1, k + 1, n)
    ends = np.cumsum(lens)
    spans = [(int(e - m), int(e)) for e, m in zip(ends, lens)]
    return normal(rng, int(ends[-1]), f), normal(rng, f, f, scale=f ** -0.5), spans


def _prep_spans(args):
    H, W, spans = args
    return H, W, np.array([s for s, _ in spans])


# ---------------------------------------------------------------- pairwise, clip, max/min RMW

def lj_combinations_cutoff(P, eps):
    """Item 4: a Lennard-Jones energy over itertools.combinations of the particles, the cutoff
    applied with np.where on the squared distance."""
    E = 0.0
    for i, j in itertools.combinations(range(len(P)), 2):
        r2 = np.sum((P[i] - P[j]) ** 2)
        inv6 = (1.0 / r2) ** 3
        E += np.where(r2 < 2.5, 4.0 * eps * (inv6 ** 2 - inv6), 0.0)
    return E


def lj_combinations_cutoff_ref(P, eps, i, j):
    r2 = np.sum((P[i] - P[j]) ** 2, axis=1)
    inv6 = (1.0 / r2) ** 3
    return np.sum(np.where(r2 < 2.5, 4.0 * eps * (inv6 ** 2 - inv6), 0.0))


def _lj_inputs(rng, n):
    side = int(np.ceil(n ** (1 / 3)))
    grid = np.stack(np.meshgrid(*[np.arange(side)] * 3), -1).reshape(-1, 3)[:n] * 1.1
    return grid + rng.uniform(-0.05, 0.05, (n, 3)), np.float64(1.0)


def _prep_lj(args):
    P, eps = args
    i, j = np.triu_indices(len(P), 1)
    return P, eps, i, j


def clip_node_updates(H, W):
    """Item 1: per-node updates written back through np.clip, H2[i] = clip(H[i] +
    0.1 * tanh(H[i] @ W), -0.5, 0.5)."""
    H2 = vnp.zeros_like(H)
    for i in range(H.shape[0]):
        H2[i] = np.clip(H[i] + 0.1 * np.tanh(H[i] @ W), -0.5, 0.5)
    return np.sum(H2 ** 2)


def clip_node_updates_ref(H, W):
    return np.sum(np.clip(H + 0.1 * np.tanh(H @ W), -0.5, 0.5) ** 2)


def _hw_inputs(rng, n, d):
    return normal(rng, n, d, scale=0.4), normal(rng, d, d, scale=d ** -0.5)


def scatter_max_edges(x, edges):
    """Items 1, 3: scatter-max along an edge list, m[v] = np.maximum(m[v], x[u]), from the
    nodes' own rows (self loops)."""
    m = x * 1.0
    for u, v in edges:
        m[v] = np.maximum(m[v], x[u])
    return np.sum(np.tanh(m) * x)


def scatter_max_edges_ref(x, src, dst):
    m = x.copy()
    np.maximum.at(m, dst, x[src])
    return np.sum(np.tanh(m) * x)


def _prep_max_edges(args):
    x, edges = args
    s, d = np.array(edges).T
    return x, s, d


def _distinct_edges_inputs(rng, n, e, f):
    return normal(rng, n, f), [(u, v) for u, v in random_edges(rng, n, e) if u != v]


def scatter_min_builtin(x, edges):
    """Items 1, 3: the nearest neighbour's squared distance per node with Python's builtin
    min on 0-d values, d[v] = min(d[v], |x[u] - x[v]|^2), from a cap of 4."""
    d = vnp.full(x.shape[0], 4.0)
    for u, v in edges:
        d[v] = min(d[v], np.sum((x[u] - x[v]) ** 2))
    return np.sum(np.sqrt(d + 1e-3))


def scatter_min_builtin_ref(x, src, dst):
    d = np.full(x.shape[0], 4.0)
    np.minimum.at(d, dst, np.sum((x[src] - x[dst]) ** 2, axis=1))
    return np.sum(np.sqrt(d + 1e-3))


def _close_edges_inputs(rng, n, e, f):
    return normal(rng, n, f, scale=0.3), [(u, v) for u, v in random_edges(rng, n, e) if u != v]


def cluster_max_pool(h, W, cluster):
    """Items 1, 3: max pooling of node messages into clusters (a Python list of cluster ids),
    pooled[c] = np.maximum(pooled[c], h[i] @ W) from -inf."""
    K = max(cluster) + 1
    pooled = vnp.full((K, W.shape[1]), -np.inf)
    for i, c in enumerate(cluster):
        pooled[c] = np.maximum(pooled[c], h[i] @ W)
    return np.sum(np.tanh(pooled) ** 2)


def cluster_max_pool_ref(h, W, cluster, K):
    pooled = np.full((K, W.shape[1]), -np.inf)
    np.maximum.at(pooled, cluster, h @ W)
    return np.sum(np.tanh(pooled) ** 2)


def _cluster_inputs(rng, n, k, f):
    c = rng.integers(0, k, n)
    c[:k] = np.arange(k)
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), [int(v) for v in c]


def _prep_cluster(args):
    h, W, cluster = args
    return h, W, np.array(cluster), max(cluster) + 1


def traced_index_max(x, src, dst):
    """Items 1, 3: scatter-max through traced index arrays, for a, b in zip(src, dst):
    buf[b] = np.maximum(buf[b], 2 * x[a]) into a buffer filled with -2."""
    buf = vnp.full(x.shape[0] // 3 + 2, -2.0)
    for a, b in zip(src, dst):
        buf[b] = np.maximum(buf[b], x[a] * 2.0)
    return np.sum(buf ** 2)


def traced_index_max_ref(x, src, dst):
    buf = np.full(x.shape[0] // 3 + 2, -2.0)
    np.maximum.at(buf, dst, x[src] * 2.0)
    return np.sum(buf ** 2)


def _traced_idx_inputs(rng, n, e):
    return normal(rng, n), rng.integers(0, n, e), rng.integers(0, n // 3 + 2, e)


# ---------------------------------------------------------------- histograms, counts, 2-D RMW

def weighted_histogram(vals, w, bins):
    """Items 1, 3: a weighted histogram filled in a loop over static bin ids,
    hist[bins[k]] += w[k] * vals[k]."""
    hist = vnp.zeros(max(bins) + 1)
    for k in range(len(bins)):
        hist[bins[k]] += w[k] * vals[k]
    return np.sum(np.log1p(hist ** 2))


def weighted_histogram_ref(vals, w, bins, nb):
    return np.sum(np.log1p(np.bincount(bins, w * vals, nb) ** 2))


def _hist_inputs(rng, n, b):
    return normal(rng, n), normal(rng, n), [int(v) for v in rng.integers(0, b, n)]


def _prep_hist(args):
    vals, w, bins = args
    return vals, w, np.array(bins), max(bins) + 1


def class_counts_centroids(X, labels):
    """Items 1, 3: class sizes counted with `counts[c] += 1.0` next to the sums of the rows,
    the centroids, then each row's squared distance to its class centroid."""
    K = max(labels) + 1
    counts = vnp.zeros(K)
    sums = vnp.zeros((K, X.shape[1]))
    for k, c in enumerate(labels):
        counts[c] += 1.0
        sums[c] += X[k]
    centroids = sums / counts[:, None]
    return np.sum((X - centroids[labels]) ** 2)


def class_counts_centroids_ref(X, labels, plan, K):
    c = segment_sum(X, plan) / np.bincount(labels, minlength=K)[:, None]
    return np.sum((X - c[labels]) ** 2)


def _labels_inputs(rng, n, d, k=20):
    k = max(2, min(k, n // 3))
    lab = rng.integers(0, k, n)
    lab[:k] = np.arange(k)
    return normal(rng, n, d), [int(v) for v in lab]


def _prep_labels(args):
    X, labels = args
    K = max(labels) + 1
    return X, np.array(labels), segments(np.array(labels), K), K


def pair_rmw_2d(x, y, pairs):
    """Items 1, 3: read-modify-write of a 2-D buffer at (i, j) pairs (repeats add),
    C[i, j] += x[i] @ y[j]."""
    C = vnp.zeros((x.shape[0], y.shape[0]))
    for i, j in pairs:
        C[i, j] += x[i] @ y[j]
    return np.sum(np.tanh(C))


def pair_rmw_2d_ref(x, y, I, J, m):
    C = np.bincount(I * m + J, np.einsum("ij,ij->i", x[I], y[J]), x.shape[0] * m)
    return np.sum(np.tanh(C))


def _pair2d_inputs(rng, n, m, e, f):
    return (normal(rng, n, f), normal(rng, m, f),
            [(int(i), int(j)) for i, j in zip(rng.integers(0, n, e), rng.integers(0, m, e))])


def _prep_pair2d(args):
    x, y, pairs = args
    I, J = np.array(pairs).T
    return x, y, I, J, y.shape[0]


# ---------------------------------------------------------------- mixed sums and accumulators

def float32_float64_accumulators(X, w):
    """Item 4: float32 rows feeding a float32 running maximum and a float64 sum side by
    side, m32 = np.maximum(m32, X[i] * z); acc64 = acc64 + float64(z) ** 2."""
    m32 = vnp.full(X.shape[1], -np.inf, dtype=np.float32)
    acc64 = vnp.zeros((), dtype=np.float64)
    for i in range(X.shape[0]):
        z = np.tanh(X[i] @ w)
        m32 = np.maximum(m32, X[i] * z)
        acc64 = acc64 + z.astype(np.float64) ** 2
    return np.sum(m32.astype(np.float64) ** 2) + acc64


def float32_float64_accumulators_ref(X, w):
    z = np.tanh(X @ w)
    m32 = np.max(X * z[:, None], axis=0)
    return np.sum(m32.astype(np.float64) ** 2) + np.sum(z.astype(np.float64) ** 2)


def _f32_inputs(rng, n, d):
    return normal(rng, n, d, dtype=np.float32), normal(rng, d, scale=d ** -0.5, dtype=np.float32)


def label_branch_losses(X, w, labels):
    """Item 4: a loss that branches on `if label == k` over Python-int labels (three kinds
    of terms), iterating zip(X, labels) over the traced rows."""
    loss = 0.0
    for x, y in zip(X, labels):
        z = x @ w
        if y == 0:
            loss += np.logaddexp(0.0, z)
        elif y == 1:
            loss += np.logaddexp(0.0, -z)
        else:
            loss += 0.5 * z ** 2
    return loss / len(labels)


def label_branch_losses_ref(X, w, l0, l1, l2, n):
    z = X @ w
    return (np.sum(np.logaddexp(0.0, z[l0])) + np.sum(np.logaddexp(0.0, -z[l1])) +
            0.5 * np.sum(z[l2] ** 2)) / n


def _three_label_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d), [int(v) for v in rng.integers(0, 3, n)]


def _prep_three_labels(args):
    X, w, labels = args
    lab = np.array(labels)
    return X, w, *(np.flatnonzero(lab == k) for k in range(3)), len(labels)


def running_mean_surprise(X):
    """Item 6: a running mean updated as mu = mu + (x - mu) / (t + 1) and the squared
    surprise of each row against the mean before it (a linear recurrence)."""
    mu = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        total += np.sum((X[t] - mu) ** 2)
        mu = mu + (X[t] - mu) / (t + 1)
    return total


def running_mean_surprise_ref(X):
    n = X.shape[0]
    mus = np.cumsum(X, axis=0) / np.arange(1, n + 1)[:, None]
    prev = np.concatenate([np.zeros((1, X.shape[1])), mus[:-1]])
    return np.sum((X - prev) ** 2)


def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


def dot_pairs_margin(E, pairs):
    """Item 4: sums of np.dot over index pairs (a Python list of tuples) inside a softplus,
    plus an L2 term on the rows used."""
    return sum(np.log1p(np.exp(-np.dot(E[i], E[j]))) for i, j in pairs) + \
        1e-2 * sum(np.dot(E[i], E[i]) for i, _ in pairs)


def dot_pairs_margin_ref(E, i, j):
    return np.sum(np.log1p(np.exp(-np.einsum("ij,ij->i", E[i], E[j])))) + \
        1e-2 * np.sum(E[i] ** 2)


def _pairs_list_inputs(rng, n, e, f):
    return normal(rng, n, f, scale=0.5), [(int(a), int(b)) for a, b in
                                           rng.integers(0, n, (e, 2))]


def _prep_pairs_list(args):
    E, pairs = args
    i, j = np.array(pairs).T
    return E, i, j


def nested_two_lists(A, B, I, J):
    """Item 4: a nested generator over two static index lists,
    sum(exp(-|A[i] - B[j]|^2) for i in I for j in J)."""
    return sum(np.exp(-np.sum((A[i] - B[j]) ** 2)) for i in I for j in J)


def nested_two_lists_ref(A, B, I, J):
    a, b = A[I], B[J]
    d2 = np.sum(a ** 2, 1)[:, None] + np.sum(b ** 2, 1)[None, :] - 2 * a @ b.T
    return np.sum(np.exp(-d2))


def _two_lists_inputs(rng, n, m, d):
    return (normal(rng, n, d, scale=0.3), normal(rng, n, d, scale=0.3),
            [int(v) for v in rng.choice(n, m, replace=False)],
            [int(v) for v in rng.choice(n, min(n, m + 10), replace=False)])


def dict_arg_mlp_rows(params, X, y):
    """Item 4: parameters passed as a dict argument (a pytree), a per-row two-layer MLP with
    a squared error accumulated in a loop."""
    total = 0.0
    for i in range(X.shape[0]):
        h = np.tanh(X[i] @ params["W1"] + params["b1"])
        total += (h @ params["w2"] + params["b2"] - y[i]) ** 2
    return total / X.shape[0]


def dict_arg_mlp_rows_ref(params, X, y):
    h = np.tanh(X @ params["W1"] + params["b1"])
    return np.sum((h @ params["w2"] + params["b2"] - y) ** 2) / X.shape[0]


def _mlp_inputs(rng, n, d):
    params = {"W1": normal(rng, d, d, scale=d ** -0.5), "b1": normal(rng, d, scale=0.1),
              "w2": normal(rng, d, scale=d ** -0.5), "b2": np.float64(0.1)}
    return params, normal(rng, n, d), normal(rng, n)


def zip_edge_features(x, ef, W, U, edges):
    """Item 3: the edge list zipped with the rows of a traced edge-feature array,
    agg[v] += tanh(x[u] @ W + f_e @ U) for (u, v), f_e in zip(edges, ef)."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for (u, v), f_e in zip(edges, ef):
        agg[v] += np.tanh(x[u] @ W + f_e @ U)
    return np.sum(agg ** 2)


def zip_edge_features_ref(x, ef, W, U, src, plan):
    return np.sum(segment_sum(np.tanh((x @ W)[src] + ef @ U), plan) ** 2)


def _ef_inputs(rng, n, e, f):
    edges = random_edges(rng, n, e)
    return (normal(rng, n, f), normal(rng, len(edges), 4), normal(rng, f, f, scale=f ** -0.5),
            normal(rng, 4, f, scale=0.5), edges)


def _prep_ef(args):
    x, ef, W, U, edges = args
    s, d = np.array(edges).T
    return x, ef, W, U, s, segments(d, len(x))


def laplacian_weight_dict(x, weights):
    """Item 4: a graph Laplacian energy over a dict {(u, v): w} of Python-float weights,
    E += w * |x[u] - x[v]|^2, plus a small ridge term."""
    E = 0.0
    for (u, v), w in weights.items():
        E += w * np.sum((x[u] - x[v]) ** 2)
    return E + 1e-3 * np.sum(x ** 2)


def laplacian_weight_dict_ref(x, u, v, w):
    return w @ np.sum((x[u] - x[v]) ** 2, axis=1) + 1e-3 * np.sum(x ** 2)


def _wdict_inputs(rng, n, e, f):
    pairs = {(min(a, b), max(a, b)) for a, b in random_edges(rng, n, e) if a != b}
    return normal(rng, n, f), {p: float(w) for p, w in zip(sorted(pairs),
                                                           rng.uniform(0.1, 1, len(pairs)))}


def _prep_wdict(args):
    x, weights = args
    u, v = np.array(list(weights)).T
    return x, u, v, np.array(list(weights.values()))


def defaultdict_messages(x, W, edges):
    """Item 3: messages accumulated in a collections.defaultdict keyed by destination, then
    the nodes' values stacked in node order (zeros for nodes without messages)."""
    acc = collections.defaultdict(lambda: vnp.zeros(W.shape[1]))
    for u, v in edges:
        acc[v] = acc[v] + np.tanh(x[u] @ W)
    out = np.stack([acc[i] for i in range(x.shape[0])])
    return np.sum(out ** 2)


def defaultdict_messages_ref(x, W, src, plan):
    return np.sum(segment_sum(np.tanh(x @ W)[src], plan) ** 2)


def _prep_gnn_edges(args):
    x, W, edges = args
    s, d = np.array(edges).T
    return x, W, s, segments(d, len(x))


def where_rmw_rows(X, w):
    """Item 1: a read-modify-write through np.where on a traced condition per row,
    buf[i] = where(X[i, 0] > 0, buf[i] + tanh(X[i] @ w), 0.5 * buf[i])."""
    buf = vnp.ones(X.shape[0])
    for i in range(X.shape[0]):
        buf[i] = np.where(X[i, 0] > 0, buf[i] + np.tanh(X[i] @ w), 0.5 * buf[i])
    return np.sum(buf ** 2)


def where_rmw_rows_ref(X, w):
    return np.sum(np.where(X[:, 0] > 0, 1.0 + np.tanh(X @ w), 0.5) ** 2)


def _xw_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, scale=d ** -0.5)


def mixed_pairs_and_terms(x, w, pairs):
    """Item 4: a total mixing three sources: a weighted per-row term, a pair term over a
    list of tuples averaged with len(), and a ridge on the weights."""
    total = sum(w[k] * np.sum(np.tanh(x[k])) for k in range(x.shape[0]))
    total = total + sum(np.exp(-np.sum((x[i] - x[j]) ** 2)) for i, j in pairs) / len(pairs)
    return total + 0.01 * np.sum(w ** 2)


def mixed_pairs_and_terms_ref(x, w, i, j):
    return (w @ np.sum(np.tanh(x), axis=1) + np.mean(np.exp(-np.sum((x[i] - x[j]) ** 2, 1))) +
            0.01 * np.sum(w ** 2))


def _mixed_inputs(rng, n, e, f):
    return (normal(rng, n, f, scale=0.3), normal(rng, n),
            [(int(a), int(b)) for a, b in rng.integers(0, n, (e, 2))])


def _prep_mixed(args):
    x, w, pairs = args
    i, j = np.array(pairs).T
    return x, w, i, j


def prototype_label_rows(X, protos, labels):
    """Items 3, 4: each row against its class prototype read by a Python-int label, plus
    an extra term for class 0 only (`if labels[k] == 0`)."""
    loss = 0.0
    for k in range(X.shape[0]):
        c = labels[k]
        loss += np.sum((X[k] - protos[c]) ** 2)
        if c == 0:
            loss += 0.1 * np.sum(np.tanh(X[k]) ** 2)
    return loss


def prototype_label_rows_ref(X, protos, labels, zero):
    return np.sum((X - protos[labels]) ** 2) + 0.1 * np.sum(np.tanh(X[zero]) ** 2)


def _proto_inputs(rng, n, d, k=10):
    return normal(rng, n, d), normal(rng, k, d), [int(v) for v in rng.integers(0, k, n)]


def _prep_proto(args):
    X, protos, labels = args
    lab = np.array(labels)
    return X, protos, lab, np.flatnonzero(lab == 0)


def neighbour_sum_generator(x, nbrs):
    """Item 3: each node's neighbour rows added with Python's sum over a generator, divided
    by max(len(nbrs), 1) (a Python int), written into a buffer."""
    out = vnp.zeros_like(x)
    for i, nb in enumerate(nbrs):
        out[i] = sum(x[j] for j in nb) / max(len(nb), 1)
    return np.sum(np.tanh(out) ** 2)


def neighbour_sum_generator_ref(x, flat, owner, starts, lens):
    return np.sum(np.tanh(np.add.reduceat(x[flat], starts, axis=0) / lens[:, None]) ** 2)


def _nbr_list_inputs(rng, n, k, f):
    return normal(rng, n, f), [[int(j) for j in rng.integers(0, n, rng.integers(1, k + 1))]
                               for _ in range(n)]


def _prep_nbr_list(args):
    x, nbrs = args
    return (x, *_flat_adj(dict(enumerate(nbrs))))


def traced_label_counts(x, w, lab):
    """Items 1, 3: counts through a traced label array, hist[lab[k]] += 1.0, weighting a
    per-class term (the counts carry no gradient)."""
    hist = vnp.zeros(w.shape[0])
    for k in range(lab.shape[0]):
        hist[lab[k]] += 1.0
    return np.sum(hist * np.tanh(w)) + np.sum(x[lab] * w[lab])


def traced_label_counts_ref(x, w, lab):
    return np.sum(np.bincount(lab, minlength=w.shape[0]) * np.tanh(w)) + np.sum(x[lab] * w[lab])


def _traced_lab_inputs(rng, n, k):
    return normal(rng, n), normal(rng, k), rng.integers(0, k, n)


# ------------------------------------------------------------------------------- the suite

def _p(name, item, sizes, argnums, inputs, prepare=None, target="parallel"):
    mod = globals()
    kw = {"prepare": prepare} if prepare is not None else {}
    return Pattern(name, item, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target=target, tags=("variant", "natural", "style3"), **kw)


_ADJ = {"small": {"n": 6, "k": 3, "f": 3}, "default": {"n": 500, "k": 10, "f": 16}}
_CSR = {"small": {"n": 5, "k": 3}, "default": {"n": 2000, "k": 10}}
PATTERNS = [
    _p("adjacency_dict_mean", 3, _ADJ, (0, 1), _adj_inputs, _prep_adj),
    _p("weighted_edge_triples", 3, _G, (0,), _triple_inputs, _prep_triples),
    _p("traced_edge_weights", 3, _G, (0, 1, 2), _ew_inputs, _prep_ew),
    _p("gcn_degrees_python", 3, _G, (0, 1), _gcn_inputs, _prep_gcn),
    _p("degree_buffer_mean", 3, _G, (0,), _edges_only_inputs, _prep_edges_only),
    _p("gat_adjacency_dict", 3, _ADJ, (0, 1, 2), _gat_inputs, _prep_adj),
    _p("csr_softmax_rows", 3, _CSR, (0, 1), _csr_inputs, _prep_csr),
    _p("span_max_pool", 3, {"small": {"n": 4, "k": 3, "f": 3},
                            "default": {"n": 400, "k": 12, "f": 16}}, (0, 1), _span_inputs,
       _prep_spans),
    _p("lj_combinations_cutoff", 4, {"small": {"n": 6}, "default": {"n": 80}}, (0, 1),
       _lj_inputs, _prep_lj),
    _p("clip_node_updates", 1, _ROWS, (0, 1), _hw_inputs),
    _p("scatter_max_edges", 3, _G, (0,), _distinct_edges_inputs, _prep_max_edges),
    _p("scatter_min_builtin", 3, _G, (0,), _close_edges_inputs, _prep_max_edges),
    _p("cluster_max_pool", 3, {"small": {"n": 8, "k": 3, "f": 3},
                               "default": {"n": 3000, "k": 100, "f": 16}}, (0, 1),
       _cluster_inputs, _prep_cluster),
    _p("traced_index_max", 3, {"small": {"n": 9, "e": 12}, "default": {"n": 3000, "e": 3000}},
       (0,), _traced_idx_inputs),
    _p("weighted_histogram", 3, {"small": {"n": 12, "b": 4}, "default": {"n": 5000, "b": 64}},
       (0, 1), _hist_inputs, _prep_hist),
    _p("class_counts_centroids", 3, {"small": {"n": 12, "d": 3}, "default": {"n": 3000, "d": 32}},
       (0,), _labels_inputs, _prep_labels),
    _p("pair_rmw_2d", 1, {"small": {"n": 4, "m": 3, "e": 9, "f": 2},
                          "default": {"n": 100, "m": 80, "e": 3000, "f": 16}}, (0, 1),
       _pair2d_inputs, _prep_pair2d),
    _p("float32_float64_accumulators", 4, _ROWS, (1,), _f32_inputs),
    _p("label_branch_losses", 4, _ROWS, (0, 1), _three_label_inputs, _prep_three_labels),
    _p("running_mean_surprise", 6, {"small": {"n": 6, "d": 3},
                                    "default": {"n": 2000, "d": 32}}, (0,), _x_inputs,
       target="scan"),
    _p("dot_pairs_margin", 4, _G, (0,), _pairs_list_inputs, _prep_pairs_list),
    _p("nested_two_lists", 4, {"small": {"n": 6, "m": 3, "d": 2},
                               "default": {"n": 200, "m": 40, "d": 16}}, (0, 1),
       _two_lists_inputs),
    _p("dict_arg_mlp_rows", 4, _ROWS, (0,), _mlp_inputs),
    _p("zip_edge_features", 3, _G, (0, 1, 2, 3), _ef_inputs, _prep_ef),
    _p("laplacian_weight_dict", 4, _G, (0,), _wdict_inputs, _prep_wdict),
    _p("defaultdict_messages", 3, _G, (0, 1), _gcn_inputs, _prep_gnn_edges),
    _p("where_rmw_rows", 1, _ROWS, (0, 1), _xw_inputs),
    _p("mixed_pairs_and_terms", 4, {"small": {"n": 5, "e": 7, "f": 2},
                                    "default": {"n": 2000, "e": 2000, "f": 16}}, (0, 1),
       _mixed_inputs, _prep_mixed),
    _p("prototype_label_rows", 3, _ROWS, (0, 1), _proto_inputs, _prep_proto),
    _p("neighbour_sum_generator", 3, _ADJ, (0,), _nbr_list_inputs, _prep_nbr_list),
    _p("traced_label_counts", 1, {"small": {"n": 10, "k": 4},
                                  "default": {"n": 3000, "k": 50}}, (0, 1), _traced_lab_inputs),
]
