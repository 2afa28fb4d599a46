"""Session 30 variants of maxima, minima and sums per key (item 3, some item 1): edge lists
of tuples and of two Python lists, per-class maxima read from a score matrix at (row,
class), dicts filled by `if k not in d` / `setdefault`, a count and a peak per histogram bin
in one loop, two buffers at traced ids in one loop, traced ids shifted negative, a maximum
then a sum per bucket, messages that read both ends of an edge. Each one's gradient goes
through one scatter's `winner_shares` (or a segment sum); the references use np.maximum.at,
np.minimum.at and np.bincount."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal
from .indices import random_edges


def edge_lists_abs_max(x, w, src, dst):
    """Item 3: the strongest incoming |message| per node over two Python lists of edge ends,
    best[v] = max(best[v], abs(x[u]) * w), in a list."""
    best = [0.0] * len(x)
    for u, v in zip(src, dst):
        best[v] = max(best[v], abs(x[u]) * w)
    return sum(b * b for b in best)


def edge_lists_abs_max_ref(x, w, src, dst):
    best = np.zeros(len(x))
    np.maximum.at(best, dst, np.abs(x[src]) * w)
    return np.sum(best * best)


def edge_gap_min(x, edges):
    """Item 3: the smallest positive rise into each node, lo[v] = min(lo[v],
    np.maximum(x[u] - x[v], 0.0) + 0.1), both ends of the edge read, a buffer of 3s."""
    lo = vnp.full(len(x), 3.0)
    for u, v in edges:
        lo[v] = min(lo[v], np.maximum(x[u] - x[v], 0.0) + 0.1)
    return np.sum(np.log(lo))


def edge_gap_min_ref(x, src, dst):
    lo = np.full(len(x), 3.0)
    np.minimum.at(lo, dst, np.maximum(x[src] - x[dst], 0.0) + 0.1)
    return np.sum(np.log(lo))


def class_score_max(S, labels):
    """Item 3: the highest score per class over the samples of that class, read at (row,
    class) of a score matrix, top[c] = max(top[c], S[i, c])."""
    top = [-2.0] * S.shape[1]
    for i, c in enumerate(labels):
        top[c] = max(top[c], S[i, c])
    return sum(np.exp(t) for t in top)


def class_score_max_ref(S, labels):
    top = np.full(S.shape[1], -2.0)
    np.maximum.at(top, labels, S[np.arange(len(labels)), labels])
    return np.sum(np.exp(top))


def dict_first_then_min(x, keys):
    """Item 3: a dict whose first value per key is stored as it is and later ones kept by
    min, `if k not in lo: lo[k] = v else: lo[k] = min(lo[k], v)`, summed in key order."""
    lo = {}
    for i, k in enumerate(keys):
        v = np.sin(x[i]) * 2.0
        if k not in lo:
            lo[k] = v
        else:
            lo[k] = min(lo[k], v)
    return sum((j + 1.0) * lo[k] for j, k in enumerate(sorted(lo)))


def dict_first_then_min_ref(x, keys):
    v = np.sin(x) * 2.0
    lo = np.full(keys.max() + 1, np.inf)
    np.minimum.at(lo, keys, v)
    present = np.flatnonzero(np.bincount(keys) > 0)
    return np.sum(np.arange(1.0, len(present) + 1) * lo[present])


def setdefault_max(x, keys):
    """Item 3: `d.setdefault(k, 0.5)` then a running maximum of x^2, d[k] = max(d[k],
    x[i] ** 2), the values summed under a square root."""
    d = {}
    for i, k in enumerate(keys):
        d.setdefault(k, 0.5)
        d[k] = max(d[k], x[i] ** 2)
    return sum(np.sqrt(v) for v in d.values())


def setdefault_max_ref(x, keys):
    top = np.full(keys.max() + 1, 0.5)
    np.maximum.at(top, keys, x ** 2)
    present = np.bincount(keys) > 0
    return np.sum(np.sqrt(top[present]))


def bin_count_and_peak(y, bins):
    """Items 1, 3: a count and a peak per histogram bin in one loop over Python-int bins,
    cnt[b] += 1; peak[b] = max(peak[b], y[i]), loss sum(cnt * peak^2)."""
    cnt = [0] * 32
    peak = [0.0] * 32
    for i, b in enumerate(bins):
        cnt[b] += 1
        peak[b] = max(peak[b], y[i])
    return sum(c * p ** 2 for c, p in zip(cnt, peak))


def bin_count_and_peak_ref(y, bins):
    peak = np.zeros(32)
    np.maximum.at(peak, bins, y)
    return np.sum(np.bincount(bins, minlength=32) * peak ** 2)


def two_buffers_traced(x, k):
    """Items 1, 3: the largest and the smallest value per traced bucket id in one loop, two
    buffers, hi[k[i]] = max(hi[k[i]], x[i]); lo[k[i]] = min(lo[k[i]], x[i])."""
    hi = vnp.full(48, -3.0)
    lo = vnp.full(48, 3.0)
    for i in range(len(k)):
        hi[k[i]] = max(hi[k[i]], x[i])
        lo[k[i]] = min(lo[k[i]], x[i])
    return np.sum(np.tanh(hi) - np.tanh(lo))


def two_buffers_traced_ref(x, k):
    hi, lo = np.full(48, -3.0), np.full(48, 3.0)
    np.maximum.at(hi, k, x)
    np.minimum.at(lo, k, x)
    return np.sum(np.tanh(hi) - np.tanh(lo))


def shifted_ids_np_maximum(x, k):
    """Item 3: np.maximum into a buffer at traced ids shifted negative, top[k[i] - 40] =
    np.maximum(top[k[i] - 40], 1.5 * x[i]) (NumPy's negative positions count from the
    end)."""
    top = vnp.zeros(40)
    for i in range(len(k)):
        top[k[i] - 40] = np.maximum(top[k[i] - 40], 1.5 * x[i])
    return np.sum(top ** 2)


def shifted_ids_np_maximum_ref(x, k):
    top = np.zeros(40)
    np.maximum.at(top, k - 40, 1.5 * x)
    return np.sum(top ** 2)


def max_then_total(x, keys):
    """Items 1, 3: a running maximum and a running total per Python-int key in one loop,
    top[k] = max(top[k], x[i]); tot[k] += x[i] * x[i], loss sum(top * tot)."""
    top = [0.0] * 24
    tot = [0.0] * 24
    for i, k in enumerate(keys):
        top[k] = max(top[k], x[i])
        tot[k] += x[i] * x[i]
    return sum(a * b for a, b in zip(top, tot))


def max_then_total_ref(x, keys):
    top = np.zeros(24)
    np.maximum.at(top, keys, x)
    return np.sum(top * np.bincount(keys, x * x, 24))


def weighted_edges_min(d, w, edges):
    """Item 3: one Bellman-Ford relaxation with a learned weight per edge, over a list of
    edge tuples, new[v] = min(new[v], d[u] + softplus(w[e]))."""
    new = [5.0] * len(d)
    for e, (u, v) in enumerate(edges):
        new[v] = min(new[v], d[u] + np.log1p(np.exp(w[e])))
    return sum(n * n for n in new)


def weighted_edges_min_ref(d, w, src, dst):
    new = np.full(len(d), 5.0)
    np.minimum.at(new, dst, d[src] + np.log1p(np.exp(w)))
    return np.sum(new * new)


def ids_min_then_read(x, k):
    """Item 3: a minimum per traced id, then each sample read back against its bucket's
    minimum, lo[k[i]] = min(lo[k[i]], x[i]) and then sum((x[i] - lo[k[i]]) ** 2)."""
    lo = vnp.full(64, 2.0)
    for i in range(len(k)):
        lo[k[i]] = min(lo[k[i]], x[i])
    return sum((x[i] - lo[k[i]]) ** 2 for i in range(len(k)))


def ids_min_then_read_ref(x, k):
    lo = np.full(64, 2.0)
    np.minimum.at(lo, k, x)
    return np.sum((x - lo[k]) ** 2)


def np_minimum_at_edges(x, w, src, dst):
    """Item 3: np.minimum.at over an edge list's arrays, as NumPy users write it, into a
    buffer of 1s, then a softplus of the minima."""
    lo = vnp.ones(len(x))
    np.minimum.at(lo, dst, x[src] * w)
    return np.sum(np.log1p(np.exp(lo)))


def np_minimum_at_edges_ref(x, w, src, dst):
    lo = np.ones(len(x))
    np.minimum.at(lo, dst, x[src] * w)
    return np.sum(np.log1p(np.exp(lo)))


def _edge_lists(rng, n, e):
    s, d = rng.integers(0, n, (2, e))
    return normal(rng, n), np.float64(0.8), [int(v) for v in s], [int(v) for v in d]


def _prep_lists(args):
    x, w, s, d = args
    return x, w, np.asarray(s), np.asarray(d)


def _edges(rng, n, e):
    return normal(rng, n), random_edges(rng, n, e)


def _prep_edges(args):
    x, edges = args
    s, d = np.array(edges).T
    return x, s, d


def _scores(rng, n, c):
    return normal(rng, n, c), [int(v) for v in rng.integers(0, c, n)]


def _keys(b):
    return lambda rng, n: (normal(rng, n), [int(v) for v in rng.integers(0, b, n)])


def _prep_keys(args):
    return args[0], np.asarray(args[1])


def _xk(lo, hi):
    return lambda rng, n: (normal(rng, n), rng.integers(lo, hi, n))


def _edges_dw(rng, n, e):
    return normal(rng, n), normal(rng, e, scale=0.5), random_edges(rng, n, e)


def _prep_edges_dw(args):
    d, w, edges = args
    s, t = np.array(edges).T
    return d, w, s, t


def _edge_arrays(rng, n, e):
    s, d = rng.integers(0, n, (2, e))
    return normal(rng, n), np.float64(0.7), s, d


_T = ("variant", "rmw30")
_N = {"small": {"n": 9}, "default": {"n": 4000}}
_E = {"small": {"n": 5, "e": 12}, "default": {"n": 300, "e": 4000}}
PATTERNS = [
    Pattern("edge_lists_abs_max", 3, edge_lists_abs_max, edge_lists_abs_max_ref, _edge_lists,
            _E, (0, 1), prepare=_prep_lists, tags=_T),
    Pattern("edge_gap_min", 3, edge_gap_min, edge_gap_min_ref, _edges, _E, (0,),
            prepare=_prep_edges, tags=_T),
    Pattern("class_score_max", 3, class_score_max, class_score_max_ref, _scores,
            {"small": {"n": 9, "c": 3}, "default": {"n": 4000, "c": 10}}, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("dict_first_then_min", 3, dict_first_then_min, dict_first_then_min_ref, _keys(40),
            _N, (0,), prepare=_prep_keys, tags=_T),
    Pattern("setdefault_max", 3, setdefault_max, setdefault_max_ref, _keys(50), _N, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("bin_count_and_peak", 1, bin_count_and_peak, bin_count_and_peak_ref, _keys(32), _N,
            (0,), prepare=_prep_keys, tags=_T),
    Pattern("two_buffers_traced", 1, two_buffers_traced, two_buffers_traced_ref, _xk(0, 48),
            _N, (0,), tags=_T),
    Pattern("shifted_ids_np_maximum", 3, shifted_ids_np_maximum, shifted_ids_np_maximum_ref,
            _xk(0, 40), _N, (0,), tags=_T),
    Pattern("max_then_total", 1, max_then_total, max_then_total_ref, _keys(24), _N, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("weighted_edges_min", 3, weighted_edges_min, weighted_edges_min_ref, _edges_dw, _E,
            (0, 1), prepare=_prep_edges_dw, tags=_T),
    Pattern("ids_min_then_read", 3, ids_min_then_read, ids_min_then_read_ref, _xk(0, 64), _N,
            (0,), tags=_T),
    Pattern("np_minimum_at_edges", 3, np_minimum_at_edges, np_minimum_at_edges_ref,
            _edge_arrays, _E, (0, 1), tags=_T),
]
