"""Session 26 variants of read-modify-writes, buckets and edge lists (items 1 and 3): per-key
state read before or after each update, at traced ids, at Python-int keys from a list, at
positions a dict hands out, with `+=`, `-=`, `*=` and decays, on scalars and on rows. The
references sort the events by key (a stable argsort) and scan within each run, as a
hand-vectorizing user would."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal
from .variants_rmw25 import _before, _runs


def count_before_weight(x, k):
    """Items 1, 3: each sample weighed by how many of its bucket came before it,
    loss += x * c[k]; c[k] += 1 (traced ids; the count read before the add)."""
    c = vnp.zeros(64)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + x[i] * c[k[i]] + 0.5 * x[i] ** 2
        c[k[i]] += 1.0
    return loss


def count_before_weight_ref(x, k):
    order, _, rank = _runs(k)
    xs = x[order]
    return np.sum(xs * rank + 0.5 * xs ** 2)


def keyed_ema_list(x, keys):
    """Items 1, 3: an exponential average per key from a Python list, compared with each
    sample before its update, e[key] = 0.85 * e[key] + 0.15 * x (Python-int positions)."""
    e = vnp.full(48, 0.1)
    loss = 0.0
    for i, key in enumerate(keys):
        loss = loss + (x[i] - e[key]) ** 2
        e[key] = 0.85 * e[key] + 0.15 * x[i]
    return loss


def _ema_before(Xs, start, rank, rate, init, gain):
    """Each sorted sample's bucket state before its update e <- rate e + gain x (e = init
    first): rate^r (init + gain sum over the earlier i of rate^-(i+1) x_i), rows along axis 0."""
    r = rank.reshape((-1,) + (1,) * (Xs.ndim - 1)).astype(float)
    return rate ** r * (init + gain * _before(Xs * rate ** -(r + 1.0), start))


def keyed_ema_list_ref(x, k):
    order, start, rank = _runs(k)
    xs = x[order]
    return np.sum((xs - _ema_before(xs, start, rank, 0.85, 0.1, 0.15)) ** 2)


def _keys48(rng, n):
    return normal(rng, n), [int(v) for v in rng.integers(0, 48, n)]


def _prep_keys(args):
    return args[0], np.asarray(args[1])


def dict_slots_before(x, names):
    """Items 1, 3, 8: string keys given slots by a dict in order of first sight
    (`setdefault`), each sample scored against its key's sum so far, s[j] += x."""
    slot = {}
    s = vnp.zeros(len(set(names)))
    loss = 0.0
    for i, name in enumerate(names):
        j = slot.setdefault(name, len(slot))
        loss = loss + np.tanh(s[j]) * x[i]
        s[j] += x[i]
    return loss


def dict_slots_before_ref(x, k):
    order, start, _ = _runs(k)
    xs = x[order]
    return np.sum(np.tanh(_before(xs, start)) * xs)


def _names(rng, n, b):
    return normal(rng, n), [f"user{v}" for v in rng.integers(0, b, n)]


def _prep_names(args):
    x, names = args
    return x, np.unique(names, return_inverse=True)[1]


def rows_ema_before(X, k):
    """Items 1, 3: a row per bucket decayed toward each sample after the sample is scored
    against it, E[k] = 0.9 * E[k] + 0.1 * X[i] (traced ids, rows of 16)."""
    E = vnp.zeros((32, X.shape[1]))
    loss = 0.0
    for i in range(len(k)):
        loss = loss + np.sum((X[i] - E[k[i]]) ** 2)
        E[k[i]] = 0.9 * E[k[i]] + 0.1 * X[i]
    return loss


def rows_ema_before_ref(X, k):
    order, start, rank = _runs(k)
    Xs = X[order]
    return np.sum((Xs - _ema_before(Xs, start, rank, 0.9, 0.0, 0.1)) ** 2)


def _rows(rng, n, b, f):
    return normal(rng, n, f), rng.integers(0, b, n)


def sum_after_add(x, k):
    """Items 1, 3: the bucket's sum read right after each sample is added, s[k] += x;
    loss += s[k] * x (an inclusive running sum per bucket, traced ids)."""
    s = vnp.zeros(64)
    loss = 0.0
    for i in range(len(k)):
        s[k[i]] += x[i]
        loss = loss + s[k[i]] * x[i]
    return loss


def sum_after_add_ref(x, k):
    order, start, _ = _runs(k)
    xs = x[order]
    return np.sum((_before(xs, start) + xs) * xs)


def capacity_after_spend(w, edges):
    """Items 1, 3: capacities spent down along an edge list of tuples, cap[b] -= w**2 and the
    capacity left read after each spend (Python-int destinations, a value on both ends)."""
    cap = vnp.full(300, 4.0)
    loss = 0.0
    for e, (a, b) in enumerate(edges):
        cap[b] -= w[e] ** 2
        loss = loss + np.exp(-cap[b] ** 2) * (a % 3)
    return loss


def capacity_after_spend_ref(w, src, dst):
    order, start, _ = _runs(dst)
    spend = w[order] ** 2
    left = 4.0 - _before(spend, start) - spend
    return np.sum(np.exp(-left ** 2) * (src[order] % 3))


def _edges(rng, n, e):
    src, dst = rng.integers(0, n, e), rng.integers(0, n, e)
    return normal(rng, e, scale=0.2), [(int(a), int(b)) for a, b in zip(src, dst)]


def _prep_edges(args):
    w, edges = args
    a = np.asarray(edges)
    return w, a[:, 0], a[:, 1]


def product_decay_read(x, k):
    """Items 1, 3: a weight per bucket halved toward 0.8 of itself at every visit, each
    sample scored with the weight before, loss += p[k] * x**2; p[k] *= 0.8 (traced ids,
    a `*=` alone: rate 0.8, nothing added)."""
    p = vnp.ones(64)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + p[k[i]] * x[i] ** 2
        p[k[i]] *= 0.8
    return loss


def product_decay_read_ref(x, k):
    order, _, rank = _runs(k)
    return np.sum(0.8 ** rank * x[order] ** 2)


def learned_rows_decay(X, a, k):
    """Items 1, 3: rows per bucket at a learned rate (a 0-d argument), read after each
    update, H[k] = a * H[k] + X[i]; loss += sum(H[k] * X[i]) (traced ids)."""
    H = vnp.zeros((16, X.shape[1]))
    loss = 0.0
    for i in range(len(k)):
        H[k[i]] = a * H[k[i]] + X[i]
        loss = loss + np.sum(H[k[i]] * X[i])
    return loss


def learned_rows_decay_ref(X, a, k):
    order, start, rank = _runs(k)
    Xs = X[order]
    r = rank[:, None].astype(float)
    H = a ** r * (_before(Xs * a ** -r, start) + Xs * a ** -r)
    return np.sum(H * Xs)


def _rows_rate(rng, n, b, f):
    return normal(rng, n, f), np.float64(0.9), rng.integers(0, b, n)


def zip_keys_sum_after(v, keys):
    """Items 1, 3, 8: keys and values zipped, t[key] += v and the running total read after
    each add, squared (Python-int keys, an inclusive sum per key)."""
    t = vnp.zeros(40)
    loss = 0.0
    for key, val in zip(keys, v):
        t[key] += val
        loss = loss + t[key] ** 2
    return loss


def zip_keys_sum_after_ref(v, k):
    order, start, _ = _runs(k)
    vs = v[order]
    return np.sum((_before(vs, start) + vs) ** 2)


def _keys40(rng, n):
    return normal(rng, n), [int(v) for v in rng.integers(0, 40, n)]


def mean_and_count_after(x, k):
    """Items 1, 3: a running mean per bucket read after each update from a sum and a count
    (two buffers, one traced id), s[k] += x; n[k] += 1; loss += (x - s[k] / n[k])**2."""
    s, n = vnp.zeros(64), vnp.zeros(64)
    loss = 0.0
    for i in range(len(k)):
        s[k[i]] += x[i]
        n[k[i]] += 1.0
        loss = loss + (x[i] - s[k[i]] / n[k[i]]) ** 2
    return loss


def mean_and_count_after_ref(x, k):
    order, start, rank = _runs(k)
    xs = x[order]
    return np.sum((xs - (_before(xs, start) + xs) / (rank + 1.0)) ** 2)


def budget_list_minus(cost, accounts):
    """Items 1, 3, 8: budgets at Python-int accounts from a list, the penalty on what is left
    before each spend, loss += softplus(-left); left[acct] -= cost**2."""
    left = vnp.full(50, 2.0)
    loss = 0.0
    for i, acct in enumerate(accounts):
        loss = loss + np.log1p(np.exp(-left[acct]))
        left[acct] -= cost[i] ** 2
    return loss


def budget_list_minus_ref(cost, k):
    order, start, _ = _runs(k)
    left = 2.0 - _before(cost[order] ** 2, start)
    return np.sum(np.log1p(np.exp(-left)))


def _accounts(rng, n):
    return normal(rng, n, scale=0.3), [int(v) for v in rng.integers(0, 50, n)]


def ema_two_rates(x, k):
    """Items 1, 3: one bucket state updated twice per sample at two constant rates, read
    between them, e[k] *= 0.9; loss += (x - e[k])**2; e[k] += 0.1 * x (traced ids)."""
    e = vnp.full(64, 0.2)
    loss = 0.0
    for i in range(len(k)):
        e[k[i]] *= 0.9
        loss = loss + (x[i] - e[k[i]]) ** 2
        e[k[i]] += 0.1 * x[i]
    return loss


def ema_two_rates_ref(x, k):
    order, start, rank = _runs(k)
    xs = x[order]
    before = _ema_before(xs, start, rank, 0.9, 0.2, 0.1)  # (e before the *=)
    return np.sum((xs - 0.9 * before) ** 2)


_T = ("variant", "rmw26")
_B = {"small": {"n": 9, "b": 4}, "default": {"n": 2000, "b": 64}}
PATTERNS = [
    Pattern("count_before_weight", 3, count_before_weight, count_before_weight_ref,
            lambda rng, n: (normal(rng, n), rng.integers(0, 64, n)),
            {"small": {"n": 9}, "default": {"n": 2000}}, (0,), tags=_T),
    Pattern("keyed_ema_list", 3, keyed_ema_list, keyed_ema_list_ref, _keys48,
            {"small": {"n": 9}, "default": {"n": 2000}}, (0,), prepare=_prep_keys, tags=_T),
    Pattern("dict_slots_before", 3, dict_slots_before, dict_slots_before_ref, _names,
            _B, (0,), prepare=_prep_names, tags=_T),
    Pattern("rows_ema_before", 3, rows_ema_before, rows_ema_before_ref, _rows,
            {"small": {"n": 9, "b": 4, "f": 3}, "default": {"n": 2000, "b": 32, "f": 16}},
            (0,), tags=_T),
    Pattern("sum_after_add", 3, sum_after_add, sum_after_add_ref,
            lambda rng, n: (normal(rng, n), rng.integers(0, 64, n)),
            {"small": {"n": 9}, "default": {"n": 2000}}, (0,), tags=_T),
    Pattern("capacity_after_spend", 3, capacity_after_spend, capacity_after_spend_ref,
            _edges, {"small": {"n": 6, "e": 12}, "default": {"n": 300, "e": 2000}}, (0,),
            prepare=_prep_edges, tags=_T),
    Pattern("product_decay_read", 3, product_decay_read, product_decay_read_ref,
            lambda rng, n: (normal(rng, n), rng.integers(0, 64, n)),
            {"small": {"n": 9}, "default": {"n": 2000}}, (0,), tags=_T),
    Pattern("learned_rows_decay", 3, learned_rows_decay, learned_rows_decay_ref, _rows_rate,
            {"small": {"n": 9, "b": 4, "f": 3}, "default": {"n": 2000, "b": 16, "f": 8}},
            (0, 1), tags=_T),
    Pattern("zip_keys_sum_after", 3, zip_keys_sum_after, zip_keys_sum_after_ref, _keys40,
            {"small": {"n": 9}, "default": {"n": 2000}}, (0,), prepare=_prep_keys, tags=_T),
    Pattern("mean_and_count_after", 3, mean_and_count_after, mean_and_count_after_ref,
            lambda rng, n: (normal(rng, n), rng.integers(0, 64, n)),
            {"small": {"n": 9}, "default": {"n": 2000}}, (0,), tags=_T),
    Pattern("budget_list_minus", 3, budget_list_minus, budget_list_minus_ref, _accounts,
            {"small": {"n": 9}, "default": {"n": 2000}}, (0,), prepare=_prep_keys, tags=_T),
    Pattern("ema_two_rates", 3, ema_two_rates, ema_two_rates_ref,
            lambda rng, n: (normal(rng, n), rng.integers(0, 64, n)),
            {"small": {"n": 9}, "default": {"n": 2000}}, (0,), tags=_T),
]
