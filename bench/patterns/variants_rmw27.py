"""Session 27 variants of read-modify-writes, buckets and edge lists (items 1 and 3): running
maxima and minima kept per key in Python lists and dicts (Python's max, np.maximum, rows,
edge tuples, two lists per step), and per-bucket updates of two or three links per step (a
decay and an add, an add and a halving, a learned rate) at traced ids, Python-int keys and on
rows. The references use np.maximum.at / np.minimum.at, and for the decays the closed form a
hand-vectorizing user would write (each event weighted by the rate to the power of the
events after it in its bucket, from a stable argsort). `rows_imul_ema` writes `E[k] *= 0.9`
on a row view at a traced id (tracing's write-back of the view)."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal
from .indices import random_edges
from .variants_rmw25 import _runs


def _later(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each event's count of later events in its bucket, and the buckets' counts."""
    order, _, rank = _runs(k)
    cnt = np.bincount(k, minlength=int(k.max()) + 1)
    later = np.empty(len(k))
    later[order] = cnt[k[order]] - 1 - rank
    return later, cnt


def list_max_builtin(x, keys):
    """Item 3: Python's max per bucket of a Python list, best[k] = max(best[k], x * x), keys
    from a list of Python ints, then a smooth loss of the maxima."""
    best = [0.0] * 64
    for i, key in enumerate(keys):
        best[key] = max(best[key], x[i] * x[i])
    return sum((b + 1.0) ** 0.5 for b in best)


def list_max_builtin_ref(x, k):
    best = np.zeros(64)
    np.maximum.at(best, k, x * x)
    return np.sum(np.sqrt(best + 1.0))


def dict_min_get(x, keys):
    """Item 3: a dict of running minima, lo[key] = min(lo.get(key, 3.0), tanh(x) + 1), summed
    in key order."""
    lo = {}
    for i, key in enumerate(keys):
        lo[key] = min(lo.get(key, 3.0), np.tanh(x[i]) + 1.0)
    return sum(lo[key] ** 2 for key in sorted(lo))


def dict_min_get_ref(x, k):
    lo = np.full(int(k.max()) + 1, 3.0)
    np.minimum.at(lo, k, np.tanh(x) + 1.0)
    return np.sum(lo[np.unique(k)] ** 2)


def dict_first_max(x, keys):
    """Item 3: a dict whose first value per key is the sample itself, later ones
    max(best[key], v) (`if key in best`), v = sin(x)."""
    best = {}
    for i, key in enumerate(keys):
        v = np.sin(x[i])
        best[key] = max(best[key], v) if key in best else v
    return sum(b ** 3 for b in best.values())


def dict_first_max_ref(x, k):
    best = np.full(int(k.max()) + 1, -np.inf)
    np.maximum.at(best, k, np.sin(x))
    return np.sum(best[np.unique(k)] ** 3)


def list_rows_maximum(X, W, keys):
    """Item 3: max-pooling rows into clusters kept as a Python list of vectors,
    pooled[c] = np.maximum(pooled[c], X[i] @ W)."""
    pooled = [np.zeros(W.shape[1]) for _ in range(16)]
    for i, c in enumerate(keys):
        pooled[c] = np.maximum(pooled[c], X[i] @ W)
    return sum(np.sum(np.tanh(p)) for p in pooled)


def list_rows_maximum_ref(X, W, k):
    pooled = np.zeros((16, W.shape[1]))
    np.maximum.at(pooled, k, X @ W)
    return np.sum(np.tanh(pooled))


def edge_tuples_max(x, w, edges):
    """Item 3: the strongest incoming message per node over an edge list of tuples,
    best[v] = max(best[v], x[u] * w), a Python list."""
    best = [0.0] * len(x)
    for u, v in edges:
        best[v] = max(best[v], x[u] * w)
    return sum(b * b for b in best)


def edge_tuples_max_ref(x, w, src, dst):
    best = np.zeros(len(x))
    np.maximum.at(best, dst, x[src] * w)
    return np.sum(best * best)


def _prep_edges(args):
    x, w, edges = args
    s, d = np.array(edges).T
    return x, w, s, d


def hi_lo_lists(x, keys):
    """Items 1, 3: two Python lists updated per step, the range per bucket, hi[k] =
    max(hi[k], x), lo[k] = min(lo[k], x), loss sum(hi - lo)."""
    hi, lo = [-5.0] * 32, [5.0] * 32
    for i, key in enumerate(keys):
        hi[key] = max(hi[key], x[i])
        lo[key] = min(lo[key], x[i])
    return sum((h - m) ** 2 for h, m in zip(hi, lo))


def hi_lo_lists_ref(x, k):
    hi, lo = np.full(32, -5.0), np.full(32, 5.0)
    np.maximum.at(hi, k, x)
    np.minimum.at(lo, k, x)
    return np.sum((hi - lo) ** 2)


def decay_add_keys(x, keys):
    """Items 1, 3: a per-key decay then an add at Python-int keys from a list,
    p[key] *= 0.9; p[key] += x."""
    p = vnp.ones(48)
    for i, key in enumerate(keys):
        p[key] *= 0.9
        p[key] += x[i]
    return np.sum(p ** 2)


def decay_add_keys_ref(x, k):
    later, cnt = _later(k)
    cnt = np.bincount(k, minlength=48)
    return np.sum((0.9 ** cnt + np.bincount(k, x * 0.9 ** later, 48)) ** 2)


def add_then_halve(x, k):
    """Items 1, 3: an add then a halving at one traced id, p[k] += sin(x); p[k] *= 0.5."""
    p = vnp.full(64, 0.5)
    for i in range(len(k)):
        p[k[i]] += np.sin(x[i])
        p[k[i]] *= 0.5
    return np.sum(p * np.arange(64.0))


def add_then_halve_ref(x, k):
    later, _ = _later(k)
    cnt = np.bincount(k, minlength=64)
    p = 0.5 * 0.5 ** cnt + np.bincount(k, np.sin(x) * 0.5 ** (later + 1), 64)
    return np.sum(p * np.arange(64.0))


def three_link_step(x, k):
    """Items 1, 3: three updates per step at one traced id, p[k] *= 0.9; p[k] -= x;
    p[k] *= 1.05."""
    p = vnp.zeros(64)
    for i in range(len(k)):
        p[k[i]] *= 0.9
        p[k[i]] -= x[i]
        p[k[i]] *= 1.05
    return np.sum(np.tanh(p))


def three_link_step_ref(x, k):
    later, _ = _later(k)
    r = 0.9 * 1.05
    return np.sum(np.tanh(np.bincount(k, -1.05 * x * r ** later, 64)))


def rows_decay_add(X, k):
    """Items 1, 3: rows decayed then added at traced ids, H[k] = 0.8 * H[k];
    H[k] += 2 X[i] (rows of 16)."""
    H = vnp.zeros((32, X.shape[1]))
    for i in range(len(k)):
        H[k[i]] = 0.8 * H[k[i]]
        H[k[i]] += X[i] * 2.0
    return np.sum(H ** 2)


def rows_decay_add_ref(X, k):
    later, _ = _later(k)
    H = np.zeros((32, X.shape[1]))
    np.add.at(H, k, 2.0 * X * 0.8 ** later[:, None])
    return np.sum(H ** 2)


def rows_imul_ema(X, k):
    """Items 1, 3: a per-bucket row average written with in-place operators at traced ids,
    E[k] *= 0.9; E[k] += 0.1 * X[i] (`*=` on the row view E[k], rows of 16)."""
    E = vnp.ones((32, X.shape[1]))
    for i in range(len(k)):
        E[k[i]] *= 0.9
        E[k[i]] += 0.1 * X[i]
    return np.sum(np.tanh(E))


def rows_imul_ema_ref(X, k):
    later, _ = _later(k)
    cnt = np.bincount(k, minlength=32)
    E = np.repeat((0.9 ** cnt)[:, None], X.shape[1], axis=1)
    np.add.at(E, k, 0.1 * X * 0.9 ** later[:, None])
    return np.sum(np.tanh(E))


def learned_decay_add(x, a, k):
    """Items 1, 3: a decay rate passed in and differentiated, p[k] *= a; p[k] += x."""
    p = vnp.ones(64)
    for i in range(len(k)):
        p[k[i]] *= a
        p[k[i]] += x[i]
    return np.sum(p ** 2)


def learned_decay_add_ref(x, a, k):
    later, _ = _later(k)
    cnt = np.bincount(k, minlength=64)
    return np.sum((a ** cnt + np.bincount(k, x * a ** later, 64)) ** 2)


def _xk(rng, n):
    return normal(rng, n), rng.integers(0, 64, n)


def _keys(b):
    return lambda rng, n: (normal(rng, n), [int(v) for v in rng.integers(0, b, n)])


def _prep_keys(args):
    return args[0], np.asarray(args[1])


def _rows_keys(rng, n, f):
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), \
        [int(v) for v in rng.integers(0, 16, n)]


def _prep_rows(args):
    return args[0], args[1], np.asarray(args[2])


_T = ("variant", "rmw27")
_N = {"small": {"n": 9}, "default": {"n": 4000}}
PATTERNS = [
    Pattern("list_max_builtin", 3, list_max_builtin, list_max_builtin_ref, _keys(64), _N,
            (0,), prepare=_prep_keys, tags=_T),
    Pattern("dict_min_get", 3, dict_min_get, dict_min_get_ref, _keys(40), _N, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("dict_first_max", 3, dict_first_max, dict_first_max_ref, _keys(40), _N, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("list_rows_maximum", 3, list_rows_maximum, list_rows_maximum_ref, _rows_keys,
            {"small": {"n": 9, "f": 3}, "default": {"n": 2000, "f": 16}}, (0, 1),
            prepare=_prep_rows, tags=_T),
    Pattern("edge_tuples_max", 3, edge_tuples_max, edge_tuples_max_ref,
            lambda rng, n, e: (normal(rng, n), np.float64(0.7), random_edges(rng, n, e)),
            {"small": {"n": 5, "e": 12}, "default": {"n": 300, "e": 4000}}, (0, 1),
            prepare=_prep_edges, tags=_T),
    Pattern("hi_lo_lists", 1, hi_lo_lists, hi_lo_lists_ref, _keys(32), _N, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("decay_add_keys", 3, decay_add_keys, decay_add_keys_ref, _keys(48), _N, (0,),
            prepare=_prep_keys, tags=_T),
    Pattern("add_then_halve", 1, add_then_halve, add_then_halve_ref, _xk, _N, (0,), tags=_T),
    Pattern("three_link_step", 1, three_link_step, three_link_step_ref, _xk, _N, (0,),
            tags=_T),
    Pattern("rows_decay_add", 3, rows_decay_add, rows_decay_add_ref,
            lambda rng, n, f: (normal(rng, n, f), rng.integers(0, 32, n)),
            {"small": {"n": 9, "f": 3}, "default": {"n": 2000, "f": 16}}, (0,), tags=_T),
    Pattern("rows_imul_ema", 3, rows_imul_ema, rows_imul_ema_ref,
            lambda rng, n, f: (normal(rng, n, f), rng.integers(0, 32, n)),
            {"small": {"n": 9, "f": 3}, "default": {"n": 2000, "f": 16}}, (0,), tags=_T),
    Pattern("learned_decay_add", 3, learned_decay_add, learned_decay_add_ref,
            lambda rng, n: (normal(rng, n), np.float64(0.93), rng.integers(0, 64, n)), _N,
            (0, 1), tags=_T),
]
