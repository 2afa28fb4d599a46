"""Natural variants of edge lists, read-modify-write and mixed sums (issue 14, items 1, 3, 4),
written the way users write them and not yet covered by the suite.

- Edge lists: edge features, two int arrays zipped, an (E, 2) int array unpacked per row, the
  nonzeros of an adjacency matrix, a dict of neighbour lists (read with a list index and looped
  over), self loops appended in Python, degrees counted in a traced buffer, attention normalised
  per destination, both directions, `np.add.at` / `np.maximum.at` / `np.minimum.at` with traced
  index arrays.
- Read-modify-write: `buf[i] = buf[i] * a + b` in rounds, `buf[idx] += v` with repeated indices
  (NumPy's buffered semantics), `np.add.at` histograms, `np.multiply.at`, masks written with
  `buf[mask] = ...`, `.copy()` of a row then masked and in-place writes, `out[:, j] -= ...`, a
  value written then read back by the next iteration, a buffer reset per outer loop.
- Mixed sums: accumulators mixing four kinds of terms, Python `sum` of a generator with a
  branch, pairs i < j with an `if` cutoff (static) or an `np.where` cutoff (traced), sums nested
  two deep, running max / min, `np.mean` of a list comprehension, losses with `np.where`,
  `np.clip` and `np.logaddexp`, embedding lookups at traced ids and by lists of lists.

Most use plain `np.` calls on traced arrays, as users do; buffers come from `vnp.zeros`."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges
from .variants_more import _prep_forces, pair_forces_inputs

_EDGE_SIZES = {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}}
_ROW_SIZES = {"small": {"n": 5, "d": 3}, "default": {"n": 3000, "d": 32}}


def _edge_arrays(args):
    """(arrays..., edges) -> (arrays..., src, plan of dst): edges as a list of pairs."""
    *arrays, edges = args
    src, dst = np.asarray(edges).reshape(-1, 2).T
    return (*arrays, src, segments(dst, len(arrays[0])))


def _sq_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), random_edges(rng, n, e)


# ------------------------------------------------------------------------------ edge lists

def edge_feature_messages(x, ef, W, U, edges):
    """Item 3 (natural): messages mixing the source's features with the edge's own features,
    agg[d] += np.tanh(x[s] @ W + ef[e] @ U) for e, (s, d) in enumerate(edges)."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for e, (s, d) in enumerate(edges):
        agg[d] += np.tanh(x[s] @ W + ef[e] @ U)
    return np.sum(agg ** 2)


def edge_feature_messages_ref(x, ef, W, U, src, plan):
    return np.sum(segment_sum(np.tanh((x @ W)[src] + ef @ U), plan) ** 2)


def edge_feature_inputs(rng, n, e, f):
    x, W, edges = _sq_inputs(rng, n, e, f)
    return x, normal(rng, e, 4), W, normal(rng, 4, f, scale=0.5), edges


def zip_src_dst_products(x, w, src, dst):
    """Item 3 (natural): two int arrays zipped, `for s, d in zip(src, dst)`, a bilinear edge
    term x[s] * w * x[d] scattered to the destination, then log1p of its square."""
    out = vnp.zeros_like(x)
    for s, d in zip(src, dst):
        out[d] += x[s] * w * x[d]
    return np.sum(np.log1p(out ** 2))


def zip_src_dst_products_ref(x, w, src, dst, plan):
    return np.sum(np.log1p(segment_sum(x[src] * w * x[dst], plan) ** 2))


def zip_src_dst_inputs(rng, n, e, f):
    s, d = rng.integers(0, n, (2, e))
    return normal(rng, n, f), normal(rng, f), s, d


def _prep_zip_src_dst(args):
    x, w, s, d = args
    return x, w, s, d, segments(d, len(x))


def e2_rows_unpacked(x, W, edges):
    """Item 3 (natural): an (E, 2) int array unpacked per row by index, s, d = edges[e], and
    m[d] = m[d] + np.maximum(x[s] @ W, 0) written without `+=`."""
    m = vnp.zeros((x.shape[0], W.shape[1]))
    for e in range(edges.shape[0]):
        s, d = edges[e]
        m[d] = m[d] + np.maximum(x[s] @ W, 0.0)
    return np.sum(np.tanh(m))


def e2_rows_unpacked_ref(x, W, src, plan):
    return np.sum(np.tanh(segment_sum(np.maximum((x @ W)[src], 0.0), plan)))


def e2_rows_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), rng.integers(0, n, (e, 2))


def nonzero_adjacency(x, W, adj):
    """Item 3 (natural): edges as the nonzeros of a dense weighted adjacency matrix (a static
    nested list of floats), `for i, j in zip(*np.nonzero(A))`, out[i] += A[i, j] * x[j] @ W."""
    A = np.array(adj)
    out = vnp.zeros((x.shape[0], W.shape[1]))
    for i, j in zip(*np.nonzero(A)):
        out[i] += A[i, j] * (x[j] @ W)
    return np.sum(np.tanh(out) ** 2)


def nonzero_adjacency_ref(x, W, A):
    return np.sum(np.tanh(A @ (x @ W)) ** 2)


def nonzero_adjacency_inputs(rng, n, p, f):
    A = np.where(rng.random((n, n)) < p, rng.random((n, n)), 0.0)
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), A.tolist()


def _prep_adjacency(args):
    x, W, adj = args
    return x, W, np.array(adj)


def neighbour_dict_rows(x, W, nbrs):
    """Item 3 (natural): a dict of neighbour lists of varying lengths, read with a list index,
    h[v] = np.tanh(x[v] @ W + x[nb].mean(axis=0)) written into a buffer."""
    h = vnp.zeros((x.shape[0], W.shape[1]))
    for v, nb in nbrs.items():
        h[v] = np.tanh(x[v] @ W + x[nb].mean(axis=0))
    return np.sum(h ** 2)


def neighbour_dict_rows_ref(x, W, flat, plan, counts):
    return np.sum(np.tanh(x @ W + segment_sum(x[flat], plan) / counts[:, None]) ** 2)


def neighbour_dict_inputs(rng, n, k, f):
    nbrs = {v: [int(u) for u in rng.integers(0, n, rng.integers(1, k + 1))] for v in range(n)}
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), nbrs


def _prep_neighbour_dict(args):
    x, W, nbrs = args
    flat = np.concatenate([nbrs[v] for v in range(len(x))])
    owner = np.repeat(np.arange(len(x)), [len(nbrs[v]) for v in range(len(x))])
    counts = np.array([len(nbrs[v]) for v in range(len(x))], np.float64)
    return x, W, flat, segments(owner, len(x)), counts


def neighbour_dict_loops(x, W, nbrs):
    """Item 3 (natural): a dict of neighbour lists walked by two nested loops, out[v] += x[u]
    @ W for u in nbrs[v], with the degree normalisation len(nb) from the list."""
    out = vnp.zeros((x.shape[0], W.shape[1]))
    for v, nb in nbrs.items():
        for u in nb:
            out[v] += (x[u] @ W) / len(nb)
    return np.sum(np.tanh(out) ** 2)


def neighbour_dict_loops_ref(x, W, flat, plan, counts):
    return np.sum(np.tanh(segment_sum((x @ W)[flat], plan) / counts[:, None]) ** 2)


def self_loop_gcn(x, W, edges):
    """Items 1, 3 (natural): self loops appended to the edge list in Python, in-degrees counted
    into a buffer by one pass over the edges, then out[d] += h[s] / deg[d] by a second pass."""
    n = x.shape[0]
    deg = vnp.zeros(n)
    all_edges = edges + [(v, v) for v in range(n)]
    for s, d in all_edges:
        deg[d] += 1.0
    h = x @ W
    out = vnp.zeros_like(h)
    for s, d in all_edges:
        out[d] += h[s] / deg[d]
    return np.sum(np.tanh(out))


def self_loop_gcn_ref(x, W, src, plan, deg_dst):
    return np.sum(np.tanh(segment_sum((x @ W)[src] / deg_dst[:, None], plan)))


def _prep_self_loops(args):
    x, W, edges = args
    n = len(x)
    src, dst = np.asarray(edges + [(v, v) for v in range(n)]).T
    deg = np.bincount(dst, minlength=n).astype(np.float64)
    return x, W, src, segments(dst, n), deg[dst]


def gat_attention(x, a_src, a_dst, edges):
    """Item 3 (natural): attention over an edge list in two passes: exp of a leaky score summed
    per destination into a denominator (np.where for the leak), then normalised messages."""
    denom = vnp.zeros(x.shape[0])
    scores = []
    for s, d in edges:
        z = x[s] @ a_src + x[d] @ a_dst
        sc = np.exp(np.where(z > 0, z, 0.2 * z))
        scores.append(sc)
        denom[d] += sc
    out = vnp.zeros_like(x)
    for (s, d), sc in zip(edges, scores):
        out[d] += sc / denom[d] * x[s]
    return np.sum(out ** 2)


def gat_attention_ref(x, a_src, a_dst, src, dst, plan):
    z = (x @ a_src)[src] + (x @ a_dst)[dst]
    sc = np.exp(np.where(z > 0, z, 0.2 * z))
    denom = segment_sum(sc, plan)
    return np.sum(segment_sum((sc / denom[dst])[:, None] * x[src], plan) ** 2)


def gat_inputs(rng, n, e, f):
    return (normal(rng, n, f), normal(rng, f, scale=0.3), normal(rng, f, scale=0.3),
            random_edges(rng, n, e))


def _prep_gat(args):
    x, a, b, edges = args
    src, dst = np.asarray(edges).T
    return x, a, b, src, dst, segments(dst, len(x))


def laplacian_both_ways(x, k, edges):
    """Items 1, 3 (natural): a graph Laplacian applied by read-modify-write both ways in one
    iteration, L[s] += x[s] - x[d]; L[d] += x[d] - x[s], then x . L plus a quartic term."""
    L = vnp.zeros_like(x)
    for s, d in edges:
        L[s] += x[s] - x[d]
        L[d] += x[d] - x[s]
    return np.sum(x * L) + k * np.sum(L ** 4)


def laplacian_both_ways_ref(x, k, src, dst, to_src, to_dst):
    diff = x[src] - x[dst]
    L = segment_sum(diff, to_src) - segment_sum(diff, to_dst)
    return np.sum(x * L) + k * np.sum(L ** 4)


def add_at_messages(x, W, src, dst):
    """Item 3 (natural): plain NumPy on traced int arrays, np.add.at(agg, dst, np.tanh(x[src] @
    W)), then a squared readout."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    np.add.at(agg, dst, np.tanh(x[src] @ W))
    return np.sum(agg ** 2)


def add_at_messages_ref(x, W, src, dst, plan):
    return np.sum(segment_sum(np.tanh((x @ W)[src]), plan) ** 2)


def add_at_inputs(rng, n, e, f):
    s, d = rng.integers(0, n, (2, e))
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), s, d


def maximum_at_pool(x, W, src, dst):
    """Item 3 (natural): max aggregation of messages with np.maximum.at into a buffer of zeros
    (a relu-like floor), traced index arrays, then a squared readout."""
    out = vnp.zeros((x.shape[0], W.shape[1]))
    np.maximum.at(out, dst, x[src] @ W)
    return np.sum(out ** 2)


def maximum_at_pool_ref(x, W, src, dst, plan):
    out = np.zeros((x.shape[0], W.shape[1]))
    np.maximum.at(out, dst, (x @ W)[src])
    return np.sum(out ** 2)


def minimum_at_clusters(X, C, labels):
    """Item 3 (natural): the distance of each point to its cluster centre, and per cluster the
    smallest of them by np.minimum.at into a buffer of ones (traced labels)."""
    dist = np.sum((X - C[labels]) ** 2, axis=1)
    best = vnp.ones(C.shape[0]) * 10.0
    np.minimum.at(best, labels, dist)
    return np.sum(best) + 0.1 * np.sum(dist)


def minimum_at_clusters_ref(X, C, labels):
    dist = np.sum((X - C[labels]) ** 2, axis=1)
    best = np.full(C.shape[0], 10.0)
    np.minimum.at(best, labels, dist)
    return np.sum(best) + 0.1 * np.sum(dist)


def minimum_at_inputs(rng, n, k, d):
    return normal(rng, n, d), normal(rng, k, d), rng.integers(0, k, n)


# ---------------------------------------------------------------------- read-modify-write

def decay_rounds(x, a, order):
    """Item 1 (natural): three rounds of buf[i] = buf[i] * a[i] + x[i], visiting the positions
    in a static shuffled order each round (each round parallel, the rounds in sequence)."""
    buf = vnp.ones(x.shape[0])
    for _ in range(3):
        for i in order:
            buf[i] = buf[i] * a[i] + x[i]
    return np.sum(np.sin(buf))


def decay_rounds_ref(x, a, order):
    b = np.ones(x.shape[0])
    for _ in range(3):
        b = b * a + x
    return np.sum(np.sin(b))


def decay_inputs(rng, n):
    return normal(rng, n), 0.5 + 0.4 * rng.random(n), [int(i) for i in rng.permutation(n)]


def repeated_index_iadd(v, idx, m):
    """Item 3 (natural): `buf[idx] += v` with repeated traced indices, NumPy's buffered
    semantics (the last addition to a repeated position wins), then a smooth readout."""
    buf = vnp.zeros(m)
    buf[idx] += v ** 2
    return np.sum(np.sqrt(buf + 1.0))


def repeated_index_iadd_ref(v, idx, m):
    buf = np.zeros(m)
    buf[idx] += v ** 2
    return np.sum(np.sqrt(buf + 1.0))


def repeated_index_inputs(rng, n, m):
    return normal(rng, n), rng.integers(0, m, n), m


def add_at_histogram(v, w, idx, m):
    """Item 3 (natural): a weighted histogram with np.add.at at traced repeated indices into a
    buffer of ones, then an entropy."""
    h = vnp.ones(m)
    np.add.at(h, idx, w * v ** 2)
    p = h / np.sum(h)
    return -np.sum(p * np.log(p))


def add_at_histogram_ref(v, w, idx, m):
    h = 1.0 + np.bincount(idx, weights=w * v ** 2, minlength=m)
    p = h / np.sum(h)
    return -np.sum(p * np.log(p))


def add_at_histogram_inputs(rng, n, m):
    return normal(rng, n), rng.random(n), rng.integers(0, m, n), m


def multiply_at_scales(x, f, idx):
    """Item 3 (natural): per-row scale factors multiplied in at traced repeated indices with
    np.multiply.at into a buffer of ones, then applied to the rows."""
    scale = vnp.ones(x.shape[0])
    np.multiply.at(scale, idx, f)
    return np.sum(np.tanh(x * scale[:, None]))


def multiply_at_scales_ref(x, f, idx):
    scale = np.ones(x.shape[0])
    np.multiply.at(scale, idx, f)
    return np.sum(np.tanh(x * scale[:, None]))


def multiply_at_inputs(rng, n, e, d):
    return normal(rng, n, d), 0.5 + rng.random(e), rng.integers(0, n, e)


def masked_assign(x, w):
    """Item 1 (natural): masks written with `buf[mask] = ...`: y = x * w; negative entries set
    to zero, and entries where x > 2 (a mask of the input) capped at 2."""
    y = x * w
    y[y < 0] = 0.0
    y[x > 2] = 2.0
    return np.sum(y ** 2)


def masked_assign_ref(x, w):
    y = np.where(x > 2, 2.0, np.maximum(x * w, 0.0))
    return np.sum(y ** 2)


def masked_inputs(rng, n, d):
    return normal(rng, n, d) * 1.5, normal(rng, d)


def copy_mask_rows(X, W, b):
    """Item 1 (natural): per row, r = X[i].copy(); r[r < 0] = 0.0 (a mask written into the
    copy); r[0] += b; out[i] = r @ W. (`r[r < 0] *= 0.1` reads r[mask], whose length depends
    on the data: refused with a typed error.)"""
    out = vnp.zeros((X.shape[0], W.shape[1]))
    for i in range(X.shape[0]):
        r = X[i].copy()
        r[r < 0] = 0.0
        r[0] += b
        out[i] = r @ W
    return np.sum(np.tanh(out))


def copy_mask_rows_ref(X, W, b):
    R = np.maximum(X, 0.0)
    R[:, 0] += b
    return np.sum(np.tanh(R @ W))


def copy_mask_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5), np.array(0.3)


def columns_minus_eq(X, s):
    """Item 1 (natural): `out[:, j] -= ...` column by column on a copy: each column loses its
    mean times a learned scale, then is divided by its root mean square."""
    out = X.copy()
    for j in range(X.shape[1]):
        out[:, j] -= s[j] * X[:, j].mean()
        out[:, j] /= np.sqrt(np.mean(out[:, j] ** 2) + 1e-3)
    return np.sum(np.cos(out))


def columns_minus_eq_ref(X, s):
    out = X - s * X.mean(0)
    out = out / np.sqrt(np.mean(out ** 2, 0) + 1e-3)
    return np.sum(np.cos(out))


def columns_inputs(rng, n, d):
    return normal(rng, n, d) + 0.5, normal(rng, d)


def write_read_previous(x, w):
    """Item 1 (natural): buf[i] = x[i] ** 2 * w written, then y[i] = buf[i] - buf[i - 1] read
    back (the previous iteration's write) for i > 0: no recurrence, only an order."""
    n = x.shape[0]
    buf = vnp.zeros_like(x)
    y = vnp.zeros((n - 1, x.shape[1]))
    for i in range(n):
        buf[i] = x[i] ** 2 * w
        if i > 0:
            y[i - 1] = buf[i] - buf[i - 1]
    return np.sum(np.abs(y) ** 1.5)


def write_read_previous_ref(x, w):
    b = x ** 2 * w
    return np.sum(np.abs(b[1:] - b[:-1]) ** 1.5)


def write_read_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def reset_buffer_rows(X, idx, m):
    """Items 1, 3 (natural): a buffer reset per outer loop, buf = vnp.zeros(m), filled by
    buf[idx[j]] += X[r, j] at repeated static positions, then its logsumexp into out[r]."""
    out = vnp.zeros(X.shape[0])
    for r in range(X.shape[0]):
        buf = vnp.zeros(m)
        for j, k in enumerate(idx):
            buf[k] += X[r, j]
        out[r] = np.log(np.sum(np.exp(buf)))
    return np.sum(out ** 2)


def reset_buffer_rows_ref(X, M):
    B = X @ M
    return np.sum(np.log(np.sum(np.exp(B), axis=1)) ** 2)


def reset_buffer_inputs(rng, r, c, m):
    return normal(rng, r, c, scale=0.5), [int(k) for k in rng.integers(0, m, c)], m


def _prep_reset(args):
    X, idx, m = args
    M = np.zeros((len(idx), m))
    M[np.arange(len(idx)), idx] = 1.0
    return X, M


def list_index_iadd(v, idx, n):
    """Item 3 (natural): one vectorized `buf[idx] += v` with a static Python list of distinct
    positions, then `buf[idx2] -= v2` at a reversed list, and a smooth readout."""
    buf = vnp.ones((n, v.shape[1])) * 2.0
    buf[idx] += v ** 2
    buf[idx[::-1]] -= 0.5 * v ** 2
    return np.sum(np.sqrt(buf ** 2 + 1.0))


def list_index_iadd_ref(v, idx, n):
    buf = np.full((n, v.shape[1]), 2.0)
    buf[idx] += v ** 2
    buf[idx[::-1]] -= 0.5 * v ** 2
    return np.sum(np.sqrt(buf ** 2 + 1.0))


def list_index_inputs(rng, e, n, d):
    return normal(rng, e, d), [int(i) for i in rng.permutation(n)[:e]], n


def _prep_list_index(args):
    v, idx, n = args
    return v, np.asarray(idx), n


# ------------------------------------------------------------------------------ mixed sums

def four_term_accumulator(w, b, X, y):
    """Item 4 (natural): one accumulator fed four kinds of terms per sample: total += y * z;
    total -= np.log1p(np.exp(z)); total -= 1e-3 * w.sum(); total += 1e-3 * z ** 2."""
    total = 0.0
    for i in range(X.shape[0]):
        z = X[i] @ w + b
        total += y[i] * z
        total -= np.log1p(np.exp(z))
        total -= 1e-3 * w.sum()
        total += 1e-3 * z ** 2
    return -total


def four_term_accumulator_ref(w, b, X, y):
    z = X @ w + b
    return -(np.sum(y * z - np.log1p(np.exp(z)) + 1e-3 * z ** 2) - 1e-3 * len(y) * w.sum())


def four_term_inputs(rng, n, d):
    return (normal(rng, d, scale=d ** -0.5), np.array(0.1), normal(rng, n, d),
            (rng.random(n) < 0.5).astype(np.float64))


def branchy_generator_sum(w, X, labels):
    """Item 4 (natural): Python `sum` of a generator with a branch on a static label list: a
    hinge term for positives, a squared term for negatives."""
    return sum(np.maximum(0.0, 1.0 - x @ w) if lab == 1 else 0.5 * (x @ w) ** 2
               for x, lab in zip(X, labels))


def branchy_generator_sum_ref(w, X, pos):
    z = X @ w
    return np.sum(np.maximum(0.0, 1.0 - z[pos])) + np.sum(0.5 * z[~pos] ** 2)


def branchy_inputs(rng, n, d):
    return normal(rng, d, scale=d ** -0.5), normal(rng, n, d), [int(b) for b in
                                                                 rng.integers(0, 2, n)]


def _prep_branchy(args):
    w, X, labels = args
    return w, X, np.asarray(labels) == 1


def pairs_static_cutoff(x, sites, cut):
    """Item 4 (natural): pairs i < j whose fixed sites lie within a cutoff (an `if` on static
    data), a soft repulsion between their learned states plus a constant per pair."""
    n = len(sites)
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if abs(sites[i] - sites[j]) < cut:
                e += np.exp(-np.sum((x[i] - x[j]) ** 2)) + 0.01
    return e


def pairs_static_cutoff_ref(x, I, J):
    return np.sum(np.exp(-np.sum((x[I] - x[J]) ** 2, axis=1))) + 0.01 * len(I)


def pairs_static_inputs(rng, n, d):
    return normal(rng, n, d), [float(s) for s in rng.random(n) * n / 8], 1.0


def _prep_pairs_static(args):
    x, sites, cut = args
    s = np.asarray(sites)
    I, J = np.nonzero(np.triu(np.abs(s[:, None] - s[None]) < cut, 1))
    return x, I, J


def pairs_where_cutoff(pos, q):
    """Item 4 (natural): pairs i < j with a cutoff on the traced distance written with
    np.where, a shifted Coulomb term q_i q_j (1/r - 1/rc) inside it."""
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r = np.sqrt(np.sum((pos[i] - pos[j]) ** 2))
            e += np.where(r < 1.5, q[i] * q[j] * (1.0 / r - 1.0 / 1.5), 0.0)
    return e


def pairs_where_cutoff_ref(pos, q):
    I, J = np.triu_indices(len(q), 1)
    r = np.sqrt(np.sum((pos[I] - pos[J]) ** 2, axis=1))
    return np.sum(np.where(r < 1.5, q[I] * q[J] * (1.0 / r - 1.0 / 1.5), 0.0))


def pairs_where_inputs(rng, n):
    return rng.random((n, 3)) * 0.93 * n ** (1 / 3), normal(rng, n)


def nested_sum_two_deep(W, x):
    """Item 4 (natural): Python sums nested two deep over scalars, sum(sum(W[i, j] *
    np.tanh(x[j]) for j) ** 2 for i)."""
    n, m = W.shape
    return sum(sum(W[i, j] * np.tanh(x[j]) for j in range(m)) ** 2 for i in range(n))


def nested_sum_two_deep_ref(W, x):
    return np.sum((W @ np.tanh(x)) ** 2)


def nested_inputs(rng, n, m):
    return normal(rng, n, m), normal(rng, m)


def running_max_rows(X, W):
    """Items 4, 6 (natural): a running elementwise max over the rows of tanh(X @ W), m =
    np.maximum(m, h) from the first row, then a running min of the row sums."""
    H = np.tanh(X @ W)
    m = H[0]
    lo = np.sum(H[0])
    for h in H[1:]:
        m = np.maximum(m, h)
        lo = np.minimum(lo, np.sum(h))
    return np.sum(m ** 2) + lo


def running_max_rows_ref(X, W):
    H = np.tanh(X @ W)
    return np.sum(H.max(0) ** 2) + H.sum(1).min()


def running_max_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5)


def mean_of_listcomp(w, X, y):
    """Item 4 (natural): the mean of a list comprehension of per-sample logistic losses written
    with np.logaddexp, plus an L2 term (vnp.mean: NumPy does not hand np.mean of a list of
    traced values to vecgrad, and says so)."""
    return vnp.mean([np.logaddexp(0.0, -y[i] * (X[i] @ w)) for i in range(X.shape[0])]) \
        + 1e-3 * np.sum(w ** 2)


def mean_of_listcomp_ref(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w))) + 1e-3 * np.sum(w ** 2)


def signed_inputs(rng, n, d):
    return normal(rng, d, scale=d ** -0.5), normal(rng, n, d), np.sign(normal(rng, n))


def huber_where(w, X, y):
    """Item 4 (natural): a Huber loss accumulated per sample with np.where on the residual's
    size, total += np.where(abs(r) < 1, 0.5 * r ** 2, abs(r) - 0.5)."""
    total = 0.0
    for x, t in zip(X, y):
        r = x @ w - t
        total += np.where(np.abs(r) < 1.0, 0.5 * r ** 2, np.abs(r) - 0.5)
    return total


def huber_where_ref(w, X, y):
    r = X @ w - y
    return np.sum(np.where(np.abs(r) < 1.0, 0.5 * r ** 2, np.abs(r) - 0.5))


def regression_inputs(rng, n, d):
    return normal(rng, d), normal(rng, n, d), normal(rng, n, scale=3.0)


def clip_residuals(w, X, y):
    """Item 4 (natural): clipped residuals, each squared and added, with a clipped-weight term
    per sample: loss += np.clip(x @ w - t, -1, 1) ** 2 + 1e-4 * np.sum(np.clip(w, -.5, .5))."""
    loss = 0.0
    for i in range(len(y)):
        loss += np.clip(X[i] @ w - y[i], -1.0, 1.0) ** 2
        loss += 1e-4 * np.sum(np.clip(w, -0.5, 0.5))
    return loss


def clip_residuals_ref(w, X, y):
    return (np.sum(np.clip(X @ w - y, -1.0, 1.0) ** 2)
            + 1e-4 * len(y) * np.sum(np.clip(w, -0.5, 0.5)))


def logaddexp_pairs_sum(w, X, y):
    """Item 4 (natural): `sum(np.logaddexp(0, -t * (x @ w)) for x, t in zip(X, y))` plus a
    margin penalty on each score through np.maximum."""
    return sum(np.logaddexp(0.0, -t * (x @ w)) + 0.1 * np.maximum(0.0, 0.5 - t * (x @ w))
               for x, t in zip(X, y))


def logaddexp_pairs_sum_ref(w, X, y):
    m = y * (X @ w)
    return np.sum(np.logaddexp(0.0, -m) + 0.1 * np.maximum(0.0, 0.5 - m))


def embedding_traced_ids(E, C, tokens, contexts):
    """Items 3, 4 (natural): skip-gram pairs as two traced int arrays, loss +=
    np.logaddexp(0, -E[t] @ C[c]) for t, c in zip(tokens, contexts)."""
    loss = 0.0
    for t, c in zip(tokens, contexts):
        loss += np.logaddexp(0.0, -E[t] @ C[c])
    return loss


def embedding_traced_ids_ref(E, C, tokens, contexts):
    return np.sum(np.logaddexp(0.0, -np.sum(E[tokens] * C[contexts], axis=1)))


def embedding_ids_inputs(rng, v, n, d):
    return (normal(rng, v, d, scale=0.3), normal(rng, v, d, scale=0.3), rng.integers(0, v, n),
            rng.integers(0, v, n))


def embedding_bag_lists(E, w, docs):
    """Item 3 (natural): bags of words as a list of token lists of varying lengths, each bag
    the mean of E[doc] read with a list index, scored by a sigmoid, np.mean of their stack."""
    return np.mean(np.stack([np.log1p(np.exp(-(E[doc].mean(axis=0) @ w))) for doc in docs]))


def embedding_bag_lists_ref(E, w, flat, plan, counts):
    bags = segment_sum(E[flat], plan) / counts[:, None]
    return np.mean(np.log1p(np.exp(-(bags @ w))))


def embedding_bag_inputs(rng, v, n, k, d):
    docs = [[int(t) for t in rng.integers(0, v, rng.integers(1, k + 1))] for _ in range(n)]
    return normal(rng, v, d, scale=0.3), normal(rng, d), docs


def _prep_bags(args):
    E, w, docs = args
    flat = np.concatenate(docs)
    owner = np.repeat(np.arange(len(docs)), [len(d) for d in docs])
    return E, w, flat, segments(owner, len(docs)), np.array([len(d) for d in docs], float)


def _p(name, item, mod, sizes, argnums, **kw):
    """A Pattern from the functions named `name`, `name`_ref in this module."""
    return Pattern(name, item, mod[name], mod[name + "_ref"], kw.pop("inputs"), sizes,
                   argnums, tags=("variant", "natural"), **kw)


_M = globals()
_DICT_SIZES = {"small": {"n": 5, "k": 3, "f": 3}, "default": {"n": 400, "k": 12, "f": 16}}
PATTERNS = [
    _p("edge_feature_messages", 3, _M, _EDGE_SIZES, (0, 1, 2, 3), inputs=edge_feature_inputs,
       prepare=_edge_arrays),
    _p("zip_src_dst_products", 3, _M, _EDGE_SIZES, (0, 1), inputs=zip_src_dst_inputs,
       prepare=_prep_zip_src_dst),
    _p("e2_rows_unpacked", 3, _M, _EDGE_SIZES, (0, 1), inputs=e2_rows_inputs,
       prepare=_edge_arrays),
    _p("nonzero_adjacency", 3, _M, {"small": {"n": 5, "p": 0.4, "f": 3},
                                    "default": {"n": 300, "p": 0.03, "f": 16}}, (0, 1),
       inputs=nonzero_adjacency_inputs, prepare=_prep_adjacency),
    _p("neighbour_dict_rows", 3, _M, _DICT_SIZES, (0, 1), inputs=neighbour_dict_inputs,
       prepare=_prep_neighbour_dict),
    _p("neighbour_dict_loops", 3, _M, _DICT_SIZES, (0, 1), inputs=neighbour_dict_inputs,
       prepare=_prep_neighbour_dict),
    _p("self_loop_gcn", 3, _M, _EDGE_SIZES, (0, 1), inputs=_sq_inputs, prepare=_prep_self_loops),
    _p("gat_attention", 3, _M, _EDGE_SIZES, (0, 1, 2), inputs=gat_inputs, prepare=_prep_gat),
    _p("laplacian_both_ways", 3, _M, {"small": {"n": 5, "e": 9, "d": 3},
                                      "default": {"n": 500, "e": 3000, "d": 16}}, (0, 1),
       inputs=pair_forces_inputs,
       prepare=_prep_forces),
    _p("add_at_messages", 3, _M, _EDGE_SIZES, (0, 1), inputs=add_at_inputs,
       prepare=_prep_zip_src_dst),
    _p("maximum_at_pool", 3, _M, _EDGE_SIZES, (0, 1), inputs=add_at_inputs,
       prepare=_prep_zip_src_dst),
    _p("minimum_at_clusters", 3, _M, {"small": {"n": 9, "k": 3, "d": 2},
                                      "default": {"n": 5000, "k": 50, "d": 16}}, (0, 1),
       inputs=minimum_at_inputs),
    _p("decay_rounds", 1, _M, {"small": {"n": 6}, "default": {"n": 3000}}, (0, 1),
       inputs=decay_inputs),
    _p("repeated_index_iadd", 3, _M, {"small": {"n": 9, "m": 4},
                                      "default": {"n": 20000, "m": 500}}, (0,),
       inputs=repeated_index_inputs),
    _p("add_at_histogram", 3, _M, {"small": {"n": 9, "m": 4},
                                   "default": {"n": 20000, "m": 500}}, (0, 1),
       inputs=add_at_histogram_inputs),
    _p("multiply_at_scales", 3, _M, {"small": {"n": 5, "e": 9, "d": 2},
                                     "default": {"n": 2000, "e": 6000, "d": 16}}, (0, 1),
       inputs=multiply_at_inputs),
    _p("masked_assign", 1, _M, {"small": {"n": 5, "d": 3}, "default": {"n": 1000, "d": 64}},
       (0, 1), inputs=masked_inputs),
    _p("copy_mask_rows", 1, _M, {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 32}},
       (0, 1, 2), inputs=copy_mask_inputs),
    _p("columns_minus_eq", 1, _M, {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 64}},
       (0, 1), inputs=columns_inputs),
    _p("write_read_previous", 1, _M, {"small": {"n": 5, "d": 3},
                                      "default": {"n": 2000, "d": 32}}, (0, 1),
       inputs=write_read_inputs),
    _p("reset_buffer_rows", 3, _M, {"small": {"r": 3, "c": 6, "m": 3},
                                    "default": {"r": 200, "c": 40, "m": 16}}, (0,),
       inputs=reset_buffer_inputs, prepare=_prep_reset),
    _p("list_index_iadd", 3, _M, {"small": {"e": 4, "n": 6, "d": 2},
                                  "default": {"e": 3000, "n": 5000, "d": 16}}, (0,),
       inputs=list_index_inputs, prepare=_prep_list_index),
    _p("four_term_accumulator", 4, _M, _ROW_SIZES, (0, 1), inputs=four_term_inputs),
    _p("branchy_generator_sum", 4, _M, _ROW_SIZES, (0,), inputs=branchy_inputs,
       prepare=_prep_branchy),
    _p("pairs_static_cutoff", 4, _M, {"small": {"n": 6, "d": 2}, "default": {"n": 400, "d": 8}},
       (0,), inputs=pairs_static_inputs, prepare=_prep_pairs_static),
    _p("pairs_where_cutoff", 4, _M, {"small": {"n": 5}, "default": {"n": 80}}, (0, 1),
       inputs=pairs_where_inputs),
    _p("nested_sum_two_deep", 4, _M, {"small": {"n": 3, "m": 4}, "default": {"n": 60, "m": 50}},
       (0, 1), inputs=nested_inputs),
    _p("running_max_rows", 6, _M, _ROW_SIZES, (0, 1), inputs=running_max_inputs),
    _p("mean_of_listcomp", 4, _M, _ROW_SIZES, (0,), inputs=signed_inputs),
    _p("huber_where", 4, _M, _ROW_SIZES, (0,), inputs=regression_inputs),
    _p("clip_residuals", 4, _M, _ROW_SIZES, (0,), inputs=regression_inputs),
    _p("logaddexp_pairs_sum", 4, _M, _ROW_SIZES, (0,), inputs=signed_inputs),
    _p("embedding_traced_ids", 3, _M, {"small": {"v": 6, "n": 9, "d": 3},
                                       "default": {"v": 1000, "n": 3000, "d": 32}}, (0, 1),
       inputs=embedding_ids_inputs),
    _p("embedding_bag_lists", 3, _M, {"small": {"v": 6, "n": 4, "k": 3, "d": 3},
                                      "default": {"v": 1000, "n": 500, "k": 10, "d": 32}},
       (0, 1), inputs=embedding_bag_inputs, prepare=_prep_bags),
]
