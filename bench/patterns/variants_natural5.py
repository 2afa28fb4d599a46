"""Natural variants of edge lists, read-modify-write and mixed sums (issue 14, items 1, 3, 4),
fifth set, in styles the suite lacked: edge lists as (u, v, w) tuples aggregated over two
rounds, per-edge weights from node features reused by a second round, mean and symmetric
degree-normalized aggregation over a dict of neighbour lists, max-pooling over neighbour
lists, `np.subtract.at` / `np.maximum.at` / 2-D `np.add.at` with repeated static indices,
histograms by `np.digitize` then accumulation, class scatter through `if y[i] == k`,
`buf[idx[i]] = np.maximum(buf[idx[i]], v)` on rows, `np.add(buf[:, j], ..., out=buf[:, j])`
on columns, top-k masks per row, ranking hinges over `itertools.combinations`, contrastive
dot-product losses over every pair, sparse COO matvecs with values rescaled in the loop,
two-stage pooling (scatter the cluster means, gather them back), triplet losses over three
index lists, quadratic forms over a dict keyed by (u, v), and sign-dependent read-modify-write.

Each has a hand-vectorized NumPy reference; static Python data (lists, dicts) is turned into
index arrays once, outside the timed region (`prepare`)."""
from __future__ import annotations

import itertools

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges

_G = {"small": {"n": 6, "e": 14, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}}
_ROWS = {"small": {"n": 7, "d": 3}, "default": {"n": 3000, "d": 32}}


def _edge_arrays(edges):
    a = np.array(edges)
    return a[:, 0].astype(int), a[:, 1].astype(int)


# ------------------------------------------------------------------- edge lists (item 3)

def weighted_tuple_rounds(x, W, edges):
    """Item 3: an edge list of (u, v, w) tuples with Python-float weights, two rounds of
    agg[v] += w * h[u], each followed by tanh(agg @ W)."""
    h = x
    for _ in range(2):
        agg = vnp.zeros_like(h)
        for u, v, w in edges:
            agg[v] += w * h[u]
        h = np.tanh(agg @ W)
    return np.sum(h ** 2)


def weighted_tuple_rounds_ref(x, W, src, dst, w, seg):
    h = x
    for _ in range(2):
        h = np.tanh(segment_sum(w[:, None] * h[src], seg) @ W)
    return np.sum(h ** 2)


def _wedge_inputs(rng, n, e, f):
    edges = [(u, v, float(w)) for (u, v), w in zip(random_edges(rng, n, e), rng.random(e))]
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), edges


def _prep_wedge(args):
    x, W, edges = args
    s, d = _edge_arrays(edges)
    return x, W, s, d, np.array([w for _, _, w in edges]), segments(d, len(x))


def feature_weights_reused(x, edges):
    """Item 3: per-edge weights from node features, w = exp(-sum((x[u] - x[v])**2)), kept in
    a list and reused by a second round over the same edges."""
    ws = [np.exp(-np.sum((x[u] - x[v]) ** 2)) for u, v in edges]
    h = vnp.zeros_like(x)
    for (u, v), w in zip(edges, ws):
        h[v] += w * x[u]
    out = vnp.zeros_like(x)
    for (u, v), w in zip(edges, ws):
        out[u] += w * np.tanh(h[v])
    return np.sum(out ** 2)


def feature_weights_reused_ref(x, src, dst, seg_d, seg_s):
    w = np.exp(-np.sum((x[src] - x[dst]) ** 2, axis=1))[:, None]
    h = segment_sum(w * x[src], seg_d)
    out = segment_sum(w * np.tanh(h[dst]), seg_s)
    return np.sum(out ** 2)


def _xe_inputs(rng, n, e, f):
    return normal(rng, n, f, scale=0.3), random_edges(rng, n, e)


def _prep_fw(args):
    x, edges = args
    s, d = _edge_arrays(edges)
    return x, s, d, segments(d, len(x)), segments(s, len(x))


def mean_dict_of_lists(x, W, adj):
    """Item 3: adjacency as a dict of neighbour lists, the mean of the neighbours' rows by a
    comprehension and `len`, then a layer; nodes without neighbours keep their row."""
    out = []
    for v in range(x.shape[0]):
        nbrs = adj.get(v, [])
        if nbrs:
            m = sum(x[u] for u in nbrs) / len(nbrs)
        else:
            m = x[v]
        out.append(np.tanh(m @ W))
    return np.sum(np.stack(out) ** 2)


def mean_dict_of_lists_ref(x, W, src, seg, deg, lonely):
    m = segment_sum(x[src], seg) / np.maximum(deg, 1)[:, None]
    m[lonely] = x[lonely]
    return np.sum(np.tanh(m @ W) ** 2)


def _adj(rng, n, e):
    adj: dict = {}
    for u, v in random_edges(rng, n, e):
        adj.setdefault(v, []).append(u)
    return adj


def _adj_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), _adj(rng, n, e)


def _adj_arrays(adj, n):
    src = np.array([u for v in range(n) for u in adj.get(v, [])], dtype=int)
    dst = np.array([v for v in range(n) for _ in adj.get(v, [])], dtype=int)
    deg = np.bincount(dst, minlength=n).astype(float)
    return src, dst, deg


def _prep_mean_adj(args):
    x, W, adj = args
    src, dst, deg = _adj_arrays(adj, len(x))
    return x, W, src, segments(dst, len(x)), deg, np.flatnonzero(deg == 0)


def sym_norm_smoothing(x, adj):
    """Item 3: one step of symmetric degree-normalized smoothing over a dict of lists,
    y[v] = x[v] - sum over u of x[u] / sqrt(d_u d_v), degrees counted in Python."""
    deg = {v: len(nb) for v, nb in adj.items()}
    y = x.copy()
    for v, nbrs in adj.items():
        for u in nbrs:
            y[v] -= x[u] / np.sqrt(max(deg.get(u, 0), 1) * deg[v])
    return np.sum(y ** 2) + np.sum(np.abs(y[:, 0]))


def sym_norm_smoothing_ref(x, src, seg, coef):
    y = x - segment_sum(coef[:, None] * x[src], seg)
    return np.sum(y ** 2) + np.sum(np.abs(y[:, 0]))


def _adj_only_inputs(rng, n, e, f):
    return normal(rng, n, f), _adj(rng, n, e)


def _prep_sym(args):
    x, adj = args
    src, dst, deg = _adj_arrays(adj, len(x))
    coef = 1.0 / np.sqrt(np.maximum(deg[src], 1) * deg[dst])
    return x, src, segments(dst, len(x)), coef


def neighbour_max_pool(x, W, adj):
    """Item 3: max-pooling over each node's neighbour list, x[nbrs] gathered by a Python list
    and reduced with np.max, then a layer on the pooled rows of the nodes that have one."""
    pooled = []
    for v in sorted(adj):
        pooled.append(np.max(x[adj[v]], axis=0))
    return np.sum(np.tanh(np.stack(pooled) @ W) ** 2)


def neighbour_max_pool_ref(x, W, src, starts):
    pooled = np.maximum.reduceat(x[src], starts, axis=0)
    return np.sum(np.tanh(pooled @ W) ** 2)


def _prep_maxpool(args):
    x, W, adj = args
    keys = sorted(adj)
    src = np.concatenate([adj[v] for v in keys]).astype(int)
    starts = np.cumsum([0] + [len(adj[v]) for v in keys[:-1]])
    return x, W, src, starts


# ------------------------------------------------------------------ ufunc.at (item 3)

def subtract_at_static(x, v, idx):
    """Item 3: np.subtract.at into a copy of x at a static list of repeated rows, then a
    second np.add.at of the squares at the same rows."""
    buf = x.copy()
    np.subtract.at(buf, idx, v)
    np.add.at(buf, idx, v ** 2)
    return np.sum(np.tanh(buf))


def subtract_at_static_ref(x, v, seg):
    return np.sum(np.tanh(x + segment_sum(v ** 2 - v, seg)))


def _sub_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, 2 * n, d), [int(i) for i in rng.integers(0, n, 2 * n)]


def _prep_sub(args):
    x, v, idx = args
    return x, v, segments(idx, len(x))


def maximum_at_static(x, v, idx):
    """Item 3: np.maximum.at of rows of v into a buffer of x's rows at a static list of
    repeated positions (the winners take the gradient)."""
    buf = x * 1.0
    np.maximum.at(buf, idx, v)
    return np.sum(buf ** 2)


def maximum_at_static_ref(x, v, plan):
    return np.sum(_max_into(x, v, plan) ** 2)


def _max_plan(idx):
    """The rows of a static repeated index sorted into runs, for np.maximum.reduceat (much
    faster than np.maximum.at on rows)."""
    return segments(idx, 0)


def _max_into(x, v, plan):
    """x with each row idx[k] replaced by its maximum with v[k] (np.maximum.at's result)."""
    buf = x.copy()
    buf[plan.ids] = np.maximum(buf[plan.ids],
                               np.maximum.reduceat(v[plan.order], plan.starts, axis=0))
    return buf


def _prep_max(args):
    x, v, idx = args
    return x, v, _max_plan(idx)


def add_at_2d_pairs(G0, v, rows, cols):
    """Item 3: np.add.at into a 2-D grid at static (row, col) lists with repeated cells."""
    G = G0.copy()
    np.add.at(G, (rows, cols), v)
    return np.sum(np.sin(G) * G)


def add_at_2d_pairs_ref(G0, v, flat):
    G = G0 + np.bincount(flat, weights=v, minlength=G0.size).reshape(G0.shape)
    return np.sum(np.sin(G) * G)


def _grid_inputs(rng, n, h, w):
    return (normal(rng, h, w), normal(rng, n), [int(r) for r in rng.integers(0, h, n)],
            [int(c) for c in rng.integers(0, w, n)])


def _prep_grid(args):
    G0, v, rows, cols = args
    return G0, v, np.array(rows) * G0.shape[1] + np.array(cols)


def digitize_histogram(w, t, k):
    """Item 3: a histogram of the samples t (data, not differentiated) binned by np.digitize
    into k fixed bins, then h[b] += w[i] ** 2 one sample at a time; the loss compares the
    normalized histogram to a flat one."""
    edges = np.linspace(-2.5, 2.5, k)
    h = vnp.zeros(len(edges) + 1)
    for i in range(len(t)):
        b = np.digitize(t[i], edges)
        h[b] += w[i] ** 2
    p = h / np.sum(h)
    return np.sum((p - 1.0 / len(h)) ** 2)


def digitize_histogram_ref(w, t, edges):
    nb = len(edges) + 1
    h = np.bincount(np.digitize(t, edges), weights=w ** 2, minlength=nb)
    p = h / np.sum(h)
    return np.sum((p - 1.0 / nb) ** 2)


def _digit_inputs(rng, n, k):
    return normal(rng, n), rng.standard_normal(n), k


def _prep_digit(args):
    w, t, k = args
    return w, t, np.linspace(-2.5, 2.5, k)  # (t is an argument: binned in each call)


# ------------------------------------------------------------ read-modify-write (item 1)

def rows_maximum_rmw(X, V, idx):
    """Item 1: buf[idx[i]] = np.maximum(buf[idx[i]], V[i]) on rows of a buffer that starts at
    X, at static repeated positions, then a layer-free loss on the buffer."""
    buf = X.copy()
    for i in range(len(idx)):
        buf[idx[i]] = np.maximum(buf[idx[i]], V[i])
    return np.sum(buf * np.tanh(buf))


def rows_maximum_rmw_ref(X, V, plan):
    buf = _max_into(X, V, plan)
    return np.sum(buf * np.tanh(buf))


def _rmw_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d), rng.integers(0, n // 2, n).tolist()


def _prep_rmw(args):
    X, V, idx = args
    return X, V, _max_plan(idx)


def column_add_out(X, w):
    """Item 1: columns updated in place through np.add(buf[:, j], X[:, j] * w[j],
    out=buf[:, j]) after a scaling by np.multiply(..., out=...)."""
    buf = np.tanh(X)
    for j in range(X.shape[1]):
        np.multiply(buf[:, j], 0.5, out=buf[:, j])
        np.add(buf[:, j], X[:, j] * w[j], out=buf[:, j])
    return np.sum(buf ** 2)


def column_add_out_ref(X, w):
    return np.sum((0.5 * np.tanh(X) + X * w) ** 2)


def _cols_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def signed_rmw(x, idx, signs):
    """Item 1: read-modify-write whose direction depends on a static sign per entry: `if
    signs[k] > 0: buf[idx[k]] += x[k] else: buf[idx[k]] -= 0.5 * x[k]`."""
    buf = vnp.zeros((max(idx) + 1, x.shape[1]))
    for k in range(x.shape[0]):
        if signs[k] > 0:
            buf[idx[k]] += x[k]
        else:
            buf[idx[k]] -= 0.5 * x[k]
    return np.sum(np.logaddexp(0.0, buf))


def signed_rmw_ref(x, seg, coef):
    return np.sum(np.logaddexp(0.0, segment_sum(coef[:, None] * x, seg)))


def _signed_inputs(rng, n, d):
    return (normal(rng, n, d), rng.integers(0, n // 4, n).tolist(),
            [1 if s else -1 for s in rng.random(n) < 0.6])


def _prep_signed(args):
    x, idx, signs = args
    return x, segments(idx, max(idx) + 1), np.where(np.array(signs) > 0, 1.0, -0.5)


def topk_row_masks(X, k):
    """Items 1, 4: a top-k mask per row, the k-th largest found by np.sort, entries below it
    zeroed by np.where, one row at a time into a buffer."""
    out = vnp.zeros_like(X)
    for i in range(X.shape[0]):
        thr = np.sort(X[i])[-k]
        out[i] = np.where(X[i] >= thr, X[i], 0.0)
    return np.sum(out ** 2) + np.sum(out[:, :3])


def topk_row_masks_ref(X, k):
    thr = np.partition(X, X.shape[1] - k, axis=1)[:, -k][:, None]
    out = np.where(X >= thr, X, 0.0)
    return np.sum(out ** 2) + np.sum(out[:, :3])


def _topk_inputs(rng, n, d):
    return normal(rng, n, d), 4


# --------------------------------------------------------------------- pair losses (item 4)

def ranking_hinge_combinations(s, y):
    """Item 4: a ranking hinge over `itertools.combinations(range(n), 2)` with a margin, only
    for pairs whose static labels differ, signed by which label is larger."""
    loss = 0.0
    for i, j in itertools.combinations(range(len(y)), 2):
        if y[i] != y[j]:
            sign = 1.0 if y[i] > y[j] else -1.0
            loss = loss + np.maximum(0.0, 1.0 - sign * (s[i] - s[j]))
    return loss


def ranking_hinge_combinations_ref(s, sign, mask):
    return np.sum(mask * np.maximum(0.0, 1.0 - sign * (s[:, None] - s[None, :])))


def _rank_inputs(rng, n):
    return normal(rng, n), [int(v) for v in rng.integers(0, 4, n)]


def _prep_rank(args):
    s, y = args
    y = np.array(y)
    sign = np.sign(y[:, None] - y[None, :]).astype(float)
    return s, sign, np.triu(sign != 0, 1).astype(float)


def contrastive_dot_pairs(X, same):
    """Item 4: a contrastive loss over every pair i < j of `combinations`: (x_i . x_j - 1)^2
    for pairs of one class, max(0, x_i . x_j - 0.2)^2 for the others (a dense pair set)."""
    loss = 0.0
    for i, j in itertools.combinations(range(X.shape[0]), 2):
        d = np.dot(X[i], X[j])
        if same[i][j]:
            loss = loss + (d - 1.0) ** 2
        else:
            loss = loss + np.maximum(d - 0.2, 0.0) ** 2
    return loss


def contrastive_dot_pairs_ref(X, S, D):
    G = X @ X.T
    return np.sum(S * (G - 1.0) ** 2 + D * np.maximum(G - 0.2, 0.0) ** 2)


def _contrast_inputs(rng, n, d):
    y = rng.integers(0, 5, n)
    return normal(rng, n, d, scale=d ** -0.5), (y[:, None] == y[None, :]).tolist()


def _prep_contrast(args):
    X, same = args
    s = np.array(same, dtype=float)
    up = np.triu(np.ones_like(s), 1)
    return X, s * up, (1 - s) * up


def triplet_three_lists(E, A, Pp, N):
    """Item 4: a triplet margin loss over three parallel Python lists of anchors, positives
    and negatives, zipped, with squared distances written with np.sum."""
    loss = 0.0
    for a, p, n in zip(A, Pp, N):
        dp = np.sum((E[a] - E[p]) ** 2)
        dn = np.sum((E[a] - E[n]) ** 2)
        loss = loss + np.maximum(dp - dn + 0.5, 0.0)
    return loss / len(A)


def triplet_three_lists_ref(E, a, p, n):
    dp = np.sum((E[a] - E[p]) ** 2, axis=1)
    dn = np.sum((E[a] - E[n]) ** 2, axis=1)
    return np.mean(np.maximum(dp - dn + 0.5, 0.0))


def _triplet_inputs(rng, n, t, d):
    lists = [rng.integers(0, n, t).tolist() for _ in range(3)]
    return (normal(rng, n, d, scale=0.5), *lists)


def _prep_triplet(args):
    E, A, Pp, N = args
    return E, np.array(A), np.array(Pp), np.array(N)


def quadratic_form_edge_dict(x, wdict):
    """Item 4: a graph quadratic form over a dict keyed by (u, v) with Python-float weights,
    sum of w * |x_u - x_v|^2, plus a node term."""
    loss = 0.0
    for (u, v), w in wdict.items():
        loss = loss + w * np.sum((x[u] - x[v]) ** 2)
    return loss + 0.1 * np.sum(x ** 4)


def quadratic_form_edge_dict_ref(x, u, v, w):
    return np.sum(w * np.sum((x[u] - x[v]) ** 2, axis=1)) + 0.1 * np.sum(x ** 4)


def _wdict_inputs(rng, n, e, f):
    return normal(rng, n, f), {(u, v): float(rng.random()) for u, v in random_edges(rng, n, e)}


def _prep_wdict(args):
    x, wd = args
    uv = np.array(list(wd.keys()))
    return x, uv[:, 0], uv[:, 1], np.array(list(wd.values()))


# ------------------------------------------------------- sparse products and pooling (items 3, 4)

def coo_rescaled_matvec(vals, x, rows, cols):
    """Items 3, 4: a sparse COO matrix-vector product applied twice, its values rescaled in
    the loop (v = vals[k] * exp(-0.1 * step)) and y[rows[k]] += v * z[cols[k]]."""
    z = x
    for step in range(2):
        y = vnp.zeros_like(x)
        for k in range(len(rows)):
            v = vals[k] * np.exp(-0.1 * step)
            y[rows[k]] += v * z[cols[k]]
        z = np.tanh(y)
    return np.sum(z ** 2)


def coo_rescaled_matvec_ref(vals, x, rows, cols, n):
    z = x
    for step in range(2):
        z = np.tanh(np.bincount(rows, weights=vals * np.exp(-0.1 * step) * z[cols], minlength=n))
    return np.sum(z ** 2)


def _coo_inputs(rng, n, e):
    return normal(rng, e), normal(rng, n), rng.integers(0, n, e).tolist(), \
        rng.integers(0, n, e).tolist()


def _prep_coo(args):
    vals, x, rows, cols = args
    return vals, x, np.array(rows), np.array(cols), len(x)


def scatter_mean_gather(X, c, k):
    """Items 3, 4: two-stage pooling: the cluster sums and counts scattered by buf[c[i]] +=
    X[i], their means, then every row's squared distance to its cluster's mean gathered
    back (a within-cluster scatter)."""
    sums = vnp.zeros((k, X.shape[1]))
    cnt = np.zeros(k)
    for i in range(X.shape[0]):
        sums[c[i]] += X[i]
        cnt[c[i]] += 1
    means = sums / np.maximum(cnt, 1)[:, None]
    loss = 0.0
    for i in range(X.shape[0]):
        loss = loss + np.sum((X[i] - means[c[i]]) ** 2)
    return loss


def scatter_mean_gather_ref(X, c, seg, cnt):
    means = segment_sum(X, seg) / np.maximum(cnt, 1)[:, None]
    return np.sum((X - means[c]) ** 2)


def _cluster_inputs(rng, n, d, k):
    return normal(rng, n, d), rng.integers(0, k, n).tolist(), k


def _prep_cluster(args):
    X, c, k = args
    c = np.array(c)
    return X, c, segments(c, k), np.bincount(c, minlength=k).astype(float)


def class_scatter_if(X, y, k):
    """Items 3, 4: between-class scatter through `if y[i] == c` over classes and rows: each
    class mean accumulated into a Python-float-counted sum, then the squared distances of
    the class means to the overall mean, weighted by the class sizes."""
    mu = np.mean(X, axis=0)
    loss = 0.0
    for c in range(k):
        s = vnp.zeros(X.shape[1])
        cnt = 0
        for i in range(X.shape[0]):
            if y[i] == c:
                s += X[i]
                cnt += 1
        if cnt:
            loss = loss + cnt * np.sum((s / cnt - mu) ** 2)
    return loss


def class_scatter_if_ref(X, onehot, counts):
    mu = np.mean(X, axis=0)
    means = onehot @ X / np.maximum(counts, 1)[:, None]
    return np.sum(counts * np.sum((means - mu) ** 2, axis=1))


def _class_inputs(rng, n, d, k):
    return normal(rng, n, d), rng.integers(0, k, n).tolist(), k


def _prep_class(args):
    X, y, k = args
    onehot = (np.array(y)[None, :] == np.arange(k)[:, None]).astype(float)
    return X, onehot, onehot.sum(axis=1)


def edge_gate_two_kinds(x, a, pos, neg):
    """Items 3, 4: a loss from two kinds of edges in two lists, logistic on x[u] . x[v] for
    positive edges and on its negation (scaled by a traced factor) for negative ones,
    accumulated into one Python float as the lists are walked in turn."""
    loss = 0.0
    for (u, v), (p, q) in zip(pos, neg):
        loss += np.logaddexp(0.0, -np.dot(x[u], x[v]))
        loss += a * np.logaddexp(0.0, np.dot(x[p], x[q]))
    return loss


def edge_gate_two_kinds_ref(x, a, u, v, p, q):
    return np.sum(np.logaddexp(0.0, -np.sum(x[u] * x[v], axis=1))) + \
        a * np.sum(np.logaddexp(0.0, np.sum(x[p] * x[q], axis=1)))


def _gate_inputs(rng, n, e, f):
    return (normal(rng, n, f, scale=0.3), np.float64(0.7), random_edges(rng, n, e),
            random_edges(rng, n, e))


def _prep_gate(args):
    x, a, pos, neg = args
    u, v = _edge_arrays(pos)
    p, q = _edge_arrays(neg)
    return x, a, u, v, p, q


# ------------------------------------------------------------------------------- the suite

def _p(name, item, sizes, argnums, inputs, prepare=None, target="parallel"):
    mod = globals()
    kw = {"prepare": prepare} if prepare is not None else {}
    return Pattern(name, item, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target=target, tags=("variant", "natural", "style5"), **kw)


PATTERNS = [
    _p("weighted_tuple_rounds", 3, _G, (0, 1), _wedge_inputs, _prep_wedge),
    _p("feature_weights_reused", 3, _G, (0,), _xe_inputs, _prep_fw),
    _p("mean_dict_of_lists", 3, _G, (0, 1), _adj_inputs, _prep_mean_adj),
    _p("sym_norm_smoothing", 3, _G, (0,), _adj_only_inputs, _prep_sym),
    _p("neighbour_max_pool", 3, _G, (0, 1), _adj_inputs, _prep_maxpool),
    _p("subtract_at_static", 3, {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 16}},
       (0, 1), _sub_inputs, _prep_sub),
    _p("maximum_at_static", 3, {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 16}},
       (0, 1), _sub_inputs, _prep_max),
    _p("add_at_2d_pairs", 3, {"small": {"n": 9, "h": 3, "w": 4},
                              "default": {"n": 6000, "h": 96, "w": 64}}, (0, 1),
       _grid_inputs, _prep_grid),
    _p("digitize_histogram", 3, {"small": {"n": 9, "k": 4}, "default": {"n": 20000, "k": 30}},
       (0,), _digit_inputs, _prep_digit),
    _p("rows_maximum_rmw", 1, _ROWS, (0, 1), _rmw_inputs, _prep_rmw),
    _p("column_add_out", 1, {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 48}},
       (0, 1), _cols_inputs),
    _p("signed_rmw", 1, _ROWS, (0,), _signed_inputs, _prep_signed),
    _p("topk_row_masks", 1, {"small": {"n": 5, "d": 6}, "default": {"n": 2000, "d": 32}},
       (0,), _topk_inputs),
    _p("ranking_hinge_combinations", 4, {"small": {"n": 6}, "default": {"n": 200}}, (0,),
       _rank_inputs, _prep_rank),
    _p("contrastive_dot_pairs", 4, {"small": {"n": 6, "d": 2}, "default": {"n": 200, "d": 16}},
       (0,), _contrast_inputs, _prep_contrast),
    _p("triplet_three_lists", 4, {"small": {"n": 6, "t": 5, "d": 2},
                                  "default": {"n": 1000, "t": 3000, "d": 16}}, (0,),
       _triplet_inputs, _prep_triplet),
    _p("quadratic_form_edge_dict", 4, _G, (0,), _wdict_inputs, _prep_wdict),
    _p("coo_rescaled_matvec", 3, {"small": {"n": 6, "e": 14}, "default": {"n": 2000, "e": 8000}},
       (0, 1), _coo_inputs, _prep_coo),
    _p("scatter_mean_gather", 3, {"small": {"n": 9, "d": 2, "k": 3},
                                  "default": {"n": 4000, "d": 16, "k": 20}}, (0,),
       _cluster_inputs, _prep_cluster),
    _p("class_scatter_if", 4, {"small": {"n": 9, "d": 2, "k": 3},
                               "default": {"n": 3000, "d": 16, "k": 5}}, (0,),
       _class_inputs, _prep_class),
    _p("edge_gate_two_kinds", 4, _G, (0, 1), _gate_inputs, _prep_gate),
]
