"""Session 25 variants of read-modify-writes, buckets, histograms and edge lists (items 1 and
3): per-bucket statistics read BEFORE each update (running means, predictions of an
exponential average, rows, a budget spent down, a learned rate) at traced bucket ids, the same
at Python-int keys from a list, running extremes and products per bucket, histograms read
after the loop, edge lists of tuples with reads of the destination before the add. The
references sort the events by bucket (a stable argsort) and take exclusive prefix sums within
each run, as a hand-vectorizing user would."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal


def _runs(k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stable order of the events by bucket, each sorted event's run start, and its rank in
    its run."""
    order = np.argsort(k, kind="stable")
    s = k[order]
    first = np.r_[True, s[1:] != s[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(len(k)), 0))
    return order, start, np.arange(len(k)) - start


def _before(v: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums of sorted event values within their runs (rows along axis 0)."""
    c = np.cumsum(v, axis=0) - v
    return c - c[start]


def bucket_mean_before(x, k):
    """Items 1, 3: each sample compared with its bucket's running mean BEFORE it is added,
    avg = s[k] / (n[k] + 1); s[k] += x; n[k] += 1 (traced bucket ids)."""
    s, n = vnp.zeros(64), vnp.zeros(64)
    loss = 0.0
    for i in range(len(k)):
        avg = s[k[i]] / (n[k[i]] + 1.0)
        loss = loss + (x[i] - avg) ** 2
        s[k[i]] += x[i]
        n[k[i]] += 1.0
    return loss


def bucket_mean_before_ref(x, k):
    order, start, rank = _runs(k)
    xs = x[order]
    return np.sum((xs - _before(xs, start) / (rank + 1.0)) ** 2)


def _xk_inputs(rng, n, b):
    return normal(rng, n), rng.integers(0, b, n)


def ema_prediction(x, k):
    """Items 1, 3: a per-bucket exponential average used as a prediction before its update,
    loss += (x - e[k])**2; e[k] = 0.8 * e[k] + 0.2 * x (traced bucket ids)."""
    e = vnp.full(64, 0.5)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + (x[i] - e[k[i]]) ** 2
        e[k[i]] = 0.8 * e[k[i]] + 0.2 * x[i]
    return loss


def ema_prediction_ref(x, k):
    order, start, rank = _runs(k)
    xs = x[order]
    w = 0.8 ** -rank.astype(float)  # (e before rank r: 0.8^r (0.5 + 0.2 sum 0.8^-(i+1) x_i))
    pred = 0.8 ** rank * (0.5 + 0.2 * _before(xs * w / 0.8, start))
    return np.sum((xs - pred) ** 2)


def _xk_small_buckets(rng, n, b):
    return normal(rng, n), rng.integers(0, b, n)


def row_sums_before(X, k):
    """Items 1, 3: rows accumulated per bucket, each row squashed against its bucket's sum so
    far, loss += sum(tanh(X[i] - 0.1 * S[k])); S[k] += X[i] (traced bucket ids)."""
    S = vnp.zeros((32, X.shape[1]))
    loss = 0.0
    for i in range(len(k)):
        loss = loss + np.sum(np.tanh(X[i] - 0.1 * S[k[i]]))
        S[k[i]] += X[i]
    return loss


def row_sums_before_ref(X, k):
    order, start, _ = _runs(k)
    Xs = X[order]
    return np.sum(np.tanh(Xs - 0.1 * _before(Xs, start)))


def _rows_inputs(rng, n, b, f):
    return normal(rng, n, f), rng.integers(0, b, n)


def budget_spent(cost, k):
    """Items 1, 3: budgets spent down per account, a penalty on what is left before each
    spend, loss += exp(-left**2); left[k] -= 0.1 * cost**2 (traced account ids)."""
    left = vnp.full(50, 3.0)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + np.exp(-left[k[i]] ** 2)
        left[k[i]] -= 0.1 * cost[i] ** 2
    return loss


def budget_spent_ref(cost, k):
    order, start, _ = _runs(k)
    spend = 0.1 * cost[order] ** 2
    return np.sum(np.exp(-(3.0 - _before(spend, start)) ** 2))


def learned_rate_prediction(x, a, k):
    """Items 1, 3: a prediction per bucket decayed at a learned rate (a 0-d argument),
    loss += e[k] * x; e[k] = a * e[k] + x (traced bucket ids)."""
    e = vnp.zeros(64)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + e[k[i]] * x[i]
        e[k[i]] = a * e[k[i]] + x[i]
    return loss


def learned_rate_prediction_ref(x, a, k):
    order, start, rank = _runs(k)
    xs = x[order]
    w = a ** -rank.astype(float)
    pred = a ** rank * _before(xs * w / a, start)
    return np.sum(pred * xs)


def _xak_inputs(rng, n, b):
    return normal(rng, n), np.float64(0.9), rng.integers(0, b, n)


def keyed_mean_before(x, keys):
    """Items 1, 3, 8: the running mean read before each update at Python-int keys from a list
    (static positions), avg = s[key] / (n[key] + 1); s[key] += x; n[key] += 1."""
    s, n = vnp.zeros(64), vnp.zeros(64)
    loss = 0.0
    for i, key in enumerate(keys):
        avg = s[key] / (n[key] + 1.0)
        loss = loss + (x[i] - avg) ** 2
        s[key] += x[i]
        n[key] += 1.0
    return loss


def _keys_inputs(rng, n, b):
    return normal(rng, n), [int(v) for v in rng.integers(0, b, n)]


def _prep_keys(args):
    return args[0], np.asarray(args[1])


def edge_tuples_before(x, edges):
    """Items 1, 3: an edge list of tuples, each message weighed by its destination's total so
    far, loss += h[b] * x[a]; h[b] += tanh(x[a]) (Python-int destinations)."""
    h = vnp.zeros(len(x))
    loss = 0.0
    for a, b in edges:
        loss = loss + h[b] * x[a]
        h[b] += np.tanh(x[a])
    return loss + np.sum(h ** 2)


def edge_tuples_before_ref(x, src, dst):
    order, start, _ = _runs(dst)
    m = np.tanh(x[src])[order]
    h = np.bincount(dst, np.tanh(x[src]), len(x))
    return np.sum(_before(m, start) * x[src][order]) + np.sum(h ** 2)


def _edges_inputs(rng, n, e):
    src, dst = rng.integers(0, n, e), rng.integers(0, n, e)
    return normal(rng, n), [(int(a), int(b)) for a, b in zip(src, dst)]


def _prep_edges(args):
    x, edges = args
    e = np.asarray(edges)
    return x, e[:, 0], e[:, 1]


def histogram_read_after(w, b):
    """Item 3: a histogram at traced bin ids, h[b] += w**2, then each sample's bin read after
    the loop (its share of the bin), the buffer's reads after all writes."""
    h = vnp.zeros(100)
    for i in range(len(b)):
        h[b[i]] += w[i] ** 2
    return sum(w[i] ** 2 / (h[b[i]] + 1.0) for i in range(len(b)))


def histogram_read_after_ref(w, b):
    h = np.bincount(b, w ** 2, 100)
    return np.sum(w ** 2 / (h[b] + 1.0))


def _wb_inputs(rng, n, b):
    return normal(rng, n), rng.integers(0, b, n)


def bucket_max_then_gap(x, k):
    """Item 3: a running maximum per bucket with np.maximum at traced ids, m[k] =
    maximum(m[k], x), then each sample's gap to its bucket's final maximum."""
    m = vnp.full(64, -10.0)
    for i in range(len(k)):
        m[k[i]] = np.maximum(m[k[i]], x[i])
    return np.sum((m[k] - x) ** 2) + np.sum(m)


def bucket_max_then_gap_ref(x, k):
    m = np.full(64, -10.0)
    np.maximum.at(m, k, x)
    return np.sum((m[k] - x) ** 2) + np.sum(m)


def bucket_min_builtin(x, k):
    """Item 3: Python's min into a buffer at traced ids, lo[k] = min(lo[k], x * x), then a
    smooth loss of the minima."""
    lo = vnp.full(64, 4.0)
    for i in range(len(k)):
        lo[k[i]] = min(lo[k[i]], x[i] * x[i])
    return np.sum(np.sqrt(lo + 1.0))


def bucket_min_builtin_ref(x, k):
    lo = np.full(64, 4.0)
    np.minimum.at(lo, k, x * x)
    return np.sum(np.sqrt(lo + 1.0))


def bucket_product_iadd(x, k):
    """Items 1, 3: a per-bucket decay by a constant and an add, p[k] *= 0.95; p[k] += x (a
    `*=` then a `+=` at one traced id per step)."""
    p = vnp.ones(64)
    for i in range(len(k)):
        p[k[i]] *= 0.95
        p[k[i]] += x[i]
    return np.sum(p ** 2)


def bucket_product_iadd_ref(x, k):
    order, _, rank = _runs(k)
    cnt = np.bincount(k, minlength=64)
    later = np.empty(len(k))
    later[order] = cnt[k[order]] - 1 - rank  # (the writes after each one in its bucket)
    return np.sum((0.95 ** cnt + np.bincount(k, x * 0.95 ** later, 64)) ** 2)


_T = ("variant", "rmw25")
_B = {"small": {"n": 9, "b": 4}, "default": {"n": 2000, "b": 64}}
PATTERNS = [
    Pattern("bucket_mean_before", 3, bucket_mean_before, bucket_mean_before_ref, _xk_inputs,
            _B, (0,), tags=_T),
    Pattern("ema_prediction", 3, ema_prediction, ema_prediction_ref, _xk_small_buckets,
            _B, (0,), tags=_T),
    Pattern("row_sums_before", 3, row_sums_before, row_sums_before_ref, _rows_inputs,
            {"small": {"n": 9, "b": 4, "f": 3}, "default": {"n": 2000, "b": 32, "f": 16}},
            (0,), tags=_T),
    Pattern("budget_spent", 3, budget_spent, budget_spent_ref, _xk_inputs,
            {"small": {"n": 9, "b": 4}, "default": {"n": 2000, "b": 50}}, (0,), tags=_T),
    Pattern("learned_rate_prediction", 3, learned_rate_prediction,
            learned_rate_prediction_ref, _xak_inputs, _B, (0, 1), tags=_T),
    Pattern("keyed_mean_before", 3, keyed_mean_before, bucket_mean_before_ref, _keys_inputs,
            _B, (0,), prepare=_prep_keys, tags=_T),
    Pattern("edge_tuples_before", 3, edge_tuples_before, edge_tuples_before_ref,
            _edges_inputs, {"small": {"n": 6, "e": 12}, "default": {"n": 500, "e": 2000}},
            (0,), prepare=_prep_edges, tags=_T),
    Pattern("histogram_read_after", 3, histogram_read_after, histogram_read_after_ref,
            _wb_inputs, {"small": {"n": 9, "b": 4}, "default": {"n": 3000, "b": 100}}, (0,),
            tags=_T),
    Pattern("bucket_max_then_gap", 3, bucket_max_then_gap, bucket_max_then_gap_ref,
            _xk_inputs, _B, (0,), tags=_T),
    Pattern("bucket_min_builtin", 3, bucket_min_builtin, bucket_min_builtin_ref, _xk_inputs,
            _B, (0,), tags=_T),
    Pattern("bucket_product_iadd", 1, bucket_product_iadd, bucket_product_iadd_ref,
            _xk_inputs, _B, (0,), tags=_T),
]
