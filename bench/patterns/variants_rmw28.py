"""Session 28 variants of running maxima and minima per key (item 3, some item 1): edge
relaxations over Python edge tuples, traced bucket ids into buffers (Python's max and
np.maximum, rows), dicts and lists of Python-int keys (negative ones too), a count and a
maximum kept per step, the maxima read back per sample, histogram bins of a static
digitize. Their gradients are each one scatter's `winner_shares`; Python's max is the
scatter's builtin_max. The references use np.maximum.at / np.minimum.at."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal
from .indices import random_edges


def edge_relax_min(d0, w, edges):
    """Item 3: one relaxation pass of shortest paths from known distances d0,
    best[v] = min(best[v], d0[u] + w[e]) over edge tuples, a buffer of 10s."""
    best = vnp.full(len(d0), 10.0)
    for e, (u, v) in enumerate(edges):
        best[v] = min(best[v], d0[u] + w[e])
    return np.sum(np.log1p(best ** 2))


def edge_relax_min_ref(d0, w, src, dst):
    best = np.full(len(d0), 10.0)
    np.minimum.at(best, dst, d0[src] + w)
    return np.sum(np.log1p(best ** 2))


def traced_ids_builtin_max(x, w, k):
    """Item 3: Python's max into a buffer at traced bucket ids, buf[k[i]] = max(buf[k[i]],
    x[i] * w), a learned scale."""
    buf = vnp.zeros(128)
    for i in range(len(k)):
        buf[k[i]] = max(buf[k[i]], x[i] * w)
    return np.sum(np.sqrt(buf + 1.0))


def traced_ids_builtin_max_ref(x, w, k):
    buf = np.zeros(128)
    np.maximum.at(buf, k, x * w)
    return np.sum(np.sqrt(buf + 1.0))


def dict_get_max(x, keys):
    """Item 3: a dict of maxima with a default, best[key] = max(best.get(key, -1.0),
    sin(x)), summed over the keys in order with weights."""
    best = {}
    for i, key in enumerate(keys):
        best[key] = max(best.get(key, -1.0), np.sin(x[i]))
    return sum((j + 1.0) * best[key] for j, key in enumerate(sorted(best)))


def dict_get_max_ref(x, k):
    best = np.full(int(k.max()) + 1, -1.0)
    np.maximum.at(best, k, np.sin(x))
    keys = np.unique(k)
    return np.sum(np.arange(1.0, len(keys) + 1.0) * best[keys])


def rows_traced_maximum(H, k):
    """Item 3: max-pooling rows into a buffer at traced cluster ids,
    pooled[k[i]] = np.maximum(pooled[k[i]], H[i] * 2 - 1)."""
    pooled = vnp.zeros((32, H.shape[1]))
    for i in range(len(k)):
        pooled[k[i]] = np.maximum(pooled[k[i]], H[i] * 2.0 - 1.0)
    return np.sum(np.tanh(pooled))


def rows_traced_maximum_ref(H, k):
    pooled = np.zeros((32, H.shape[1]))
    np.maximum.at(pooled, k, H * 2.0 - 1.0)
    return np.sum(np.tanh(pooled))


def edge_rows_maximum(X, W, edges):
    """Item 3: the strongest message per node, rows, over edge tuples,
    agg[v] = np.maximum(agg[v], X[u] @ W), a Python list of vectors."""
    agg = [np.zeros(W.shape[1]) for _ in range(X.shape[0])]
    for u, v in edges:
        agg[v] = np.maximum(agg[v], X[u] @ W)
    return sum(np.sum(a ** 2) for a in agg)


def edge_rows_maximum_ref(X, W, src, dst):
    agg = np.zeros((X.shape[0], W.shape[1]))
    np.maximum.at(agg, dst, (X @ W)[src])
    return np.sum(agg ** 2)


def negative_list_keys(x, keys):
    """Item 3: Python's min into a list at negative Python-int keys (from the end),
    lo[key] = min(lo[key], x * x - 1)."""
    lo = [0.5] * 48
    for i, key in enumerate(keys):
        lo[key] = min(lo[key], x[i] * x[i] - 1.0)
    return sum(v * v for v in lo)


def negative_list_keys_ref(x, k):
    lo = np.full(48, 0.5)
    np.minimum.at(lo, k, x * x - 1.0)
    return np.sum(lo * lo)


def count_and_max(x, k):
    """Items 1, 3: two buffers per step at a traced id, a count and a maximum,
    cnt[k] += 1; best[k] = np.maximum(best[k], x), loss sum(best * log1p(cnt))."""
    cnt, best = vnp.zeros(64), vnp.full(64, -3.0)
    for i in range(len(k)):
        cnt[k[i]] += 1.0
        best[k[i]] = np.maximum(best[k[i]], x[i])
    return np.sum(best * np.log1p(cnt))


def count_and_max_ref(x, k):
    cnt = np.bincount(k, minlength=64).astype(float)
    best = np.full(64, -3.0)
    np.maximum.at(best, k, x)
    return np.sum(best * np.log1p(cnt))


def max_read_back(x, k):
    """Item 3: the maximum per bucket, then each sample's gap to its bucket's maximum,
    m[k[i]] = max(m[k[i]], x[i]); sum((m[k] - x)^2)."""
    m = vnp.full(64, -10.0)
    for i in range(len(k)):
        m[k[i]] = max(m[k[i]], x[i])
    return np.sum((m[k] - x) ** 2)


def max_read_back_ref(x, k):
    m = np.full(64, -10.0)
    np.maximum.at(m, k, x)
    return np.sum((m[k] - x) ** 2)


def hist_bin_max(y, bins):
    """Item 3: the largest value per histogram bin, the bins a Python list from a static
    np.digitize of a coordinate, top[b] = max(top[b], y[i])."""
    top = [0.0] * 40
    for i, b in enumerate(bins):
        top[b] = max(top[b], y[i])
    return sum(v ** 2 for v in top)


def hist_bin_max_ref(y, bins):
    top = np.zeros(40)
    np.maximum.at(top, bins, y)
    return np.sum(top ** 2)


def edge_dict_softplus_min(x, w, edges):
    """Item 3: a dict of minima per destination node, lo[v] = min(lo.get(v, 2.0),
    log1p(exp(x[u] * w))), the values in key order."""
    lo = {}
    for u, v in edges:
        lo[v] = min(lo.get(v, 2.0), np.log1p(np.exp(x[u] * w)))
    return sum(lo[v] ** 2 for v in sorted(lo))


def edge_dict_softplus_min_ref(x, w, src, dst):
    lo = np.full(len(x), 2.0)
    np.minimum.at(lo, dst, np.log1p(np.exp(x[src] * w)))
    return np.sum(lo[np.unique(dst)] ** 2)


def spread_per_bucket(x, k):
    """Items 1, 3: the range per bucket at traced ids, hi[k] = np.maximum(hi[k], x);
    lo[k] = np.minimum(lo[k], x); loss sum((hi - lo)^2)."""
    hi, lo = vnp.full(32, -4.0), vnp.full(32, 4.0)
    for i in range(len(k)):
        hi[k[i]] = np.maximum(hi[k[i]], x[i])
        lo[k[i]] = np.minimum(lo[k[i]], x[i])
    return np.sum((hi - lo) ** 2)


def spread_per_bucket_ref(x, k):
    hi, lo = np.full(32, -4.0), np.full(32, 4.0)
    np.maximum.at(hi, k, x)
    np.minimum.at(lo, k, x)
    return np.sum((hi - lo) ** 2)


def _edges_w(rng, n, e):
    edges = random_edges(rng, n, e)
    return normal(rng, n), normal(rng, e, scale=0.5), edges


def _prep_edges_w(args):
    d0, w, edges = args
    s, d = np.array(edges).T
    return d0, w, s, d


def _xk(b):
    return lambda rng, n: (normal(rng, n), rng.integers(0, b, n))


def _keys(lo, hi):
    return lambda rng, n: (normal(rng, n), [int(v) for v in rng.integers(lo, hi, n)])


def _prep_keys(args):
    return args[0], np.asarray(args[1])


def _prep_rows_edges(args):
    X, W, edges = args
    s, d = np.array(edges).T
    return X, W, s, d


def _prep_edges_xw(args):
    x, w, edges = args
    s, d = np.array(edges).T
    return x, w, s, d


def _hist(rng, n):
    bins = np.digitize(rng.uniform(0.0, 1.0, n), np.linspace(0.0, 1.0, 41)[1:-1])
    return normal(rng, n), [int(b) for b in bins]


_T = ("variant", "rmw28")
_N = {"small": {"n": 9}, "default": {"n": 4000}}
_E = {"small": {"n": 5, "e": 12}, "default": {"n": 300, "e": 4000}}
_ROWS = {"small": {"n": 9, "f": 3}, "default": {"n": 2000, "f": 16}}
PATTERNS = [
    Pattern("edge_relax_min", 3, edge_relax_min, edge_relax_min_ref, _edges_w, _E, (0, 1),
            prepare=_prep_edges_w, tags=_T),
    Pattern("traced_ids_builtin_max", 3, traced_ids_builtin_max, traced_ids_builtin_max_ref,
            lambda rng, n: (normal(rng, n), np.float64(0.8), rng.integers(0, 128, n)), _N,
            (0, 1), tags=_T),
    Pattern("dict_get_max", 3, dict_get_max, dict_get_max_ref, _keys(0, 50), _N, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("rows_traced_maximum", 3, rows_traced_maximum, rows_traced_maximum_ref,
            lambda rng, n, f: (normal(rng, n, f), rng.integers(0, 32, n)), _ROWS, (0,),
            tags=_T),
    Pattern("edge_rows_maximum", 3, edge_rows_maximum, edge_rows_maximum_ref,
            lambda rng, n, e, f: (normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5),
                                  random_edges(rng, n, e)),
            {"small": {"n": 5, "e": 12, "f": 3}, "default": {"n": 200, "e": 2000, "f": 16}},
            (0, 1), prepare=_prep_rows_edges, tags=_T),
    Pattern("negative_list_keys", 3, negative_list_keys, negative_list_keys_ref,
            _keys(-48, 0), _N, (0,), prepare=_prep_keys, tags=_T),
    Pattern("count_and_max", 1, count_and_max, count_and_max_ref, _xk(64), _N, (0,),
            tags=_T),
    Pattern("max_read_back", 3, max_read_back, max_read_back_ref, _xk(64), _N, (0,),
            tags=_T),
    Pattern("hist_bin_max", 3, hist_bin_max, hist_bin_max_ref, _hist, _N, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("edge_dict_softplus_min", 3, edge_dict_softplus_min, edge_dict_softplus_min_ref,
            lambda rng, n, e: (normal(rng, n), np.float64(0.9), random_edges(rng, n, e)), _E,
            (0, 1), prepare=_prep_edges_xw, tags=_T),
    Pattern("spread_per_bucket", 1, spread_per_bucket, spread_per_bucket_ref, _xk(32), _N,
            (0,), tags=_T),
]
