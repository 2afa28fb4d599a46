"""Natural variants of read-modify-writes at repeated positions (items 1, 3 and 4): per-bucket
running averages and decays (at a constant or a learned rate) (`ema[k] = 0.9 * ema[k] + 0.1 * x`, `ema[k] += a * (x - ema[k])`)
at traced and Python-int positions, decayed histograms, node states leaking along edges,
histograms and sparse products through traced index arrays, per-node softmax over incoming
edges, degree-normalised messages with duplicate destinations, scatter means."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges
from .variants_natural4 import edge_softmax_two_pass_ref  # (the same loss over tuples)


def _weights(pos: np.ndarray, a: float) -> tuple[np.ndarray, np.ndarray]:
    """The hand-vectorized per-bucket decay: a^(later writes to the same bucket) per write, and
    a^(writes) per bucket (a stable argsort and `searchsorted` of the sorted buckets)."""
    order = np.argsort(pos, kind="stable")
    srt = pos[order]
    w = np.empty(len(pos))
    w[order] = a ** (np.searchsorted(srt, srt, side="right") - 1 - np.arange(len(pos)))
    return w, a ** np.bincount(pos, minlength=0)


def bucket_ema_traced(x, idx):
    """Items 1, 3: a running average per bucket at a traced bucket id,
    ema[idx[i]] = 0.9 * ema[idx[i]] + 0.1 * x[i], then a loss of the averages."""
    ema = vnp.zeros(64)
    for i in range(len(idx)):
        ema[idx[i]] = 0.9 * ema[idx[i]] + 0.1 * x[i]
    return np.sum(ema ** 2)


def bucket_ema_traced_ref(x, idx):
    """(the weights from the traced ids, in the timed forward)"""
    return np.sum(np.bincount(idx, 0.1 * x * _weights(idx, 0.9)[0], 64) ** 2)


def _ema_inputs(rng, n, b):
    return normal(rng, n), rng.integers(0, b, n)


def bucket_ema_ref(x, pos, w, n):
    return np.sum(np.bincount(pos, 0.1 * x * w, n) ** 2)


def _prep_ema(args):
    x, idx = args
    pos = np.asarray(idx)
    return x, pos, _weights(pos, 0.9)[0], 64


def learned_bucket_decay(x, a, idx):
    """Items 1, 3: per-bucket decay at a learned rate (a 0-d argument, differentiated) and a
    traced bucket id, acc[idx[i]] = a * acc[idx[i]] + x[i]."""
    acc = vnp.zeros(64)
    for i in range(len(idx)):
        acc[idx[i]] = a * acc[idx[i]] + x[i]
    return np.sum(acc ** 2)


def learned_bucket_decay_ref(x, a, idx):
    """(the weights from the traced ids and the rate, in the timed forward)"""
    order = np.argsort(idx, kind="stable")
    srt = idx[order]
    later = np.empty(len(idx))
    later[order] = np.searchsorted(srt, srt, side="right") - 1 - np.arange(len(idx))
    return np.sum(np.bincount(idx, x * a ** later, 64) ** 2)


def _learned_inputs(rng, n, b):
    return normal(rng, n), np.float64(0.9), rng.integers(0, b, n)


def bucket_ema_static(x, idx):
    """Items 1, 3: the same running average with the bucket ids a Python list."""
    ema = vnp.zeros(64)
    for i, k in enumerate(idx):
        ema[k] = 0.9 * ema[k] + 0.1 * x[i]
    return np.sum(ema ** 2)


def _ema_static_inputs(rng, n, b):
    return normal(rng, n), [int(v) for v in rng.integers(0, b, n)]


def bucket_rows_iadd(X, idx):
    """Items 1, 3: per-bucket running means of feature rows written with `+=`,
    h[k] += 0.2 * (X[i] - h[k]) at a traced k, from a buffer of ones."""
    h = vnp.ones((32, X.shape[1]))
    for i in range(len(idx)):
        h[idx[i]] += 0.2 * (X[i] - h[idx[i]])
    return np.sum(np.tanh(h))


def bucket_rows_iadd_ref(X, idx):
    """(the weights from the traced ids, in the timed forward)"""
    w, decay = _weights(idx, 0.8)
    h = np.ones((32, X.shape[1]))
    h[:len(decay)] *= decay[:, None]
    h += segment_sum(0.2 * X * w[:, None], segments(idx, 32))
    return np.sum(np.tanh(h))


def _rows_inputs(rng, n, b, f):
    return normal(rng, n, f), rng.integers(0, b, n)


def leaky_node_state(x, v, edges):
    """Items 1, 3: node states leaking along an edge list of tuples,
    h[b] = 0.5 * h[b] + tanh(x[a] @ v) for (a, b) in edges (repeated destinations)."""
    h = vnp.zeros(x.shape[0])
    for a, b in edges:
        h[b] = 0.5 * h[b] + np.tanh(x[a] @ v)
    return np.sum(h ** 2)


def leaky_node_state_ref(x, v, src, dst, w):
    return np.sum(np.bincount(dst, np.tanh(x @ v)[src] * w, len(x)) ** 2)


def _leaky_inputs(rng, n, e, f):
    return normal(rng, n, f), normal(rng, f, scale=f ** -0.5), random_edges(rng, n, e)


def _prep_leaky(args):
    x, v, edges = args
    src, dst = np.array(edges).T
    return x, v, src, dst, _weights(dst, 0.5)[0]


def decayed_histogram(vals, bins):
    """Items 1, 3: a histogram that forgets, hist[b] = 0.95 * hist[b] + exp(-v^2) per sample,
    over Python-int bins."""
    hist = vnp.full(40, 1.0)
    for v, b in zip(vals, bins):
        hist[b] = 0.95 * hist[b] + np.exp(-v * v)
    return np.sum(np.log(hist))


def decayed_histogram_ref(vals, bins, w, decay):
    return np.sum(np.log(decay + np.bincount(bins, np.exp(-vals * vals) * w, 40)))


def _hist_inputs(rng, n, b):
    return normal(rng, n), [int(v) for v in rng.integers(0, b, n)]


def _prep_decayed(args):
    vals, bins = args
    pos = np.asarray(bins)
    w, decay = _weights(pos, 0.95)
    return vals, pos, w, np.concatenate([decay, np.ones(40 - len(decay))])


def traced_histogram(w, bins):
    """Item 3: a weighted histogram over a traced bin array, hist[bins[k]] += w[k] ** 2."""
    hist = vnp.zeros(100)
    for k in range(len(bins)):
        hist[bins[k]] += w[k] ** 2
    return np.sum(np.sqrt(hist + 1.0))


def traced_histogram_ref(w, bins):
    return np.sum(np.sqrt(np.bincount(bins, w ** 2, 100) + 1.0))


def _traced_hist_inputs(rng, n, b):
    return normal(rng, n), rng.integers(0, b, n)


def coo_triples(x, vals, triples):
    """Item 3: a sparse product over (row, col) tuples with duplicates, the values an array,
    y[r] = y[r] + vals[k] * x[c] for k, (r, c) in enumerate(triples)."""
    y = vnp.zeros(x.shape[0])
    for k, (r, c) in enumerate(triples):
        y[r] = y[r] + vals[k] * x[c]
    return np.sum(np.tanh(y) ** 2)


def coo_triples_ref(x, vals, rows, cols):
    return np.sum(np.tanh(np.bincount(rows, vals * x[cols], len(x))) ** 2)


def _coo_inputs(rng, n, e):
    return normal(rng, n), normal(rng, e), random_edges(rng, n, e)


def _prep_coo(args):
    x, vals, triples = args
    rows, cols = np.array(triples).T
    return x, vals, rows, cols


def edge_softmax_arrays(x, a, src, dst):
    """Item 3: attention over incoming edges given as traced int arrays: the exponentiated
    scores summed per node, then each message weighted by its share."""
    z = vnp.zeros(x.shape[0])
    for e in range(len(src)):
        z[dst[e]] += np.exp(np.dot(x[src[e]], a))
    out = vnp.zeros_like(x)
    for e in range(len(src)):
        out[dst[e]] += np.exp(np.dot(x[src[e]], a)) / z[dst[e]] * x[src[e]]
    return np.sum(out ** 2)


def _softmax_inputs(rng, n, e, f):
    s, d = rng.integers(0, n, (2, e))
    return normal(rng, n, f), normal(rng, f, scale=0.3), s, d


def _prep_softmax(args):
    x, a, src, dst = args
    return x, a, src, dst, segments(dst, len(x))


def degree_scaled_messages(x, W, src, dst, deg):
    """Items 3, 4: messages divided by the destination's degree (a traced array), duplicate
    destinations, agg[dst[e]] += (x[src[e]] @ W) / deg[dst[e]]."""
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for e in range(len(src)):
        agg[dst[e]] += (x[src[e]] @ W) / deg[dst[e]]
    return np.sum(np.tanh(agg) ** 2)


def degree_scaled_messages_ref(x, W, src, dst, deg, plan):
    return np.sum(np.tanh(segment_sum((x @ W)[src] / deg[dst][:, None], plan)) ** 2)


def _degree_inputs(rng, n, e, f):
    s, d = rng.integers(0, n, (2, e))
    deg = np.maximum(np.bincount(d, minlength=n), 1).astype(float)
    return normal(rng, n, f), normal(rng, f, f, scale=f ** -0.5), s, d, deg


def _prep_degree(args):
    x, W, src, dst, deg = args
    return x, W, src, dst, deg, segments(dst, len(x))


def scatter_mean_traced(X, c):
    """Items 3, 4: cluster means through a traced cluster array: sums and counts scattered
    by sums[c[i]] += X[i] and cnt[c[i]] += 1, then the squared means."""
    sums = vnp.zeros((20, X.shape[1]))
    cnt = vnp.zeros(20)
    for i in range(X.shape[0]):
        sums[c[i]] += X[i]
        cnt[c[i]] += 1.0
    return np.sum((sums / np.maximum(cnt, 1.0)[:, None]) ** 2)


def scatter_mean_traced_ref(X, c, plan):
    cnt = np.bincount(c, minlength=20).astype(float)
    return np.sum((segment_sum(X, plan) / np.maximum(cnt, 1.0)[:, None]) ** 2)


def _mean_inputs(rng, n, f):
    return normal(rng, n, f), rng.integers(0, 20, n)


def _prep_mean(args):
    X, c = args
    return X, c, segments(c, 20)


def memory_rows_static(X, W, slots):
    """Items 1, 3, 7: a slot memory written with Python-int slots, each write mixing in a
    projected row, mem[s] = 0.9 * mem[s] + 0.1 * (X[i] @ W)."""
    mem = vnp.zeros((16, W.shape[1]))
    for i, s in enumerate(slots):
        mem[s] = 0.9 * mem[s] + 0.1 * (X[i] @ W)
    return np.sum(mem ** 2)


def memory_rows_static_ref(X, W, pos, w, plan):
    return np.sum(segment_sum((0.1 * w)[:, None] * (X @ W), plan) ** 2)


def _memory_inputs(rng, n, f, h):
    return normal(rng, n, f), normal(rng, f, h, scale=f ** -0.5), \
        [int(v) for v in rng.integers(0, 16, n)]


def _prep_memory(args):
    X, W, slots = args
    pos = np.asarray(slots)
    return X, W, pos, _weights(pos, 0.9)[0], segments(pos, 16)


_T = ("variant", "rmw24")
PATTERNS = [
    Pattern("bucket_ema_traced", 3, bucket_ema_traced, bucket_ema_traced_ref, _ema_inputs,
            {"small": {"n": 9, "b": 5}, "default": {"n": 2000, "b": 64}}, (0,), tags=_T),
    Pattern("learned_bucket_decay", 3, learned_bucket_decay, learned_bucket_decay_ref,
            _learned_inputs, {"small": {"n": 9, "b": 5}, "default": {"n": 2000, "b": 64}},
            (0, 1), tags=_T),
    Pattern("bucket_ema_static", 3, bucket_ema_static, bucket_ema_ref, _ema_static_inputs,
            {"small": {"n": 9, "b": 5}, "default": {"n": 2000, "b": 64}}, (0,),
            prepare=_prep_ema, tags=_T),
    Pattern("bucket_rows_iadd", 1, bucket_rows_iadd, bucket_rows_iadd_ref, _rows_inputs,
            {"small": {"n": 9, "b": 5, "f": 3}, "default": {"n": 2000, "b": 32, "f": 16}},
            (0,), tags=_T),
    Pattern("leaky_node_state", 3, leaky_node_state, leaky_node_state_ref, _leaky_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 2000, "f": 16}},
            (0, 1), prepare=_prep_leaky, tags=_T),
    Pattern("decayed_histogram", 3, decayed_histogram, decayed_histogram_ref, _hist_inputs,
            {"small": {"n": 9, "b": 4}, "default": {"n": 3000, "b": 40}}, (0,),
            prepare=_prep_decayed, tags=_T),
    Pattern("traced_histogram", 3, traced_histogram, traced_histogram_ref,
            _traced_hist_inputs, {"small": {"n": 9, "b": 4}, "default": {"n": 3000, "b": 100}},
            (0,), tags=_T),
    Pattern("coo_triples", 3, coo_triples, coo_triples_ref, _coo_inputs,
            {"small": {"n": 5, "e": 9}, "default": {"n": 1000, "e": 3000}}, (0, 1),
            prepare=_prep_coo, tags=_T),
    Pattern("edge_softmax_arrays", 3, edge_softmax_arrays, edge_softmax_two_pass_ref,
            _softmax_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 300, "e": 1500, "f": 16}},
            (0, 1), prepare=_prep_softmax, tags=_T),
    Pattern("degree_scaled_messages", 4, degree_scaled_messages, degree_scaled_messages_ref,
            _degree_inputs,
            {"small": {"n": 5, "e": 9, "f": 3}, "default": {"n": 500, "e": 2000, "f": 16}},
            (0, 1), prepare=_prep_degree, tags=_T),
    Pattern("scatter_mean_traced", 3, scatter_mean_traced, scatter_mean_traced_ref,
            _mean_inputs, {"small": {"n": 9, "f": 3}, "default": {"n": 2000, "f": 16}}, (0,),
            prepare=_prep_mean, tags=_T),
    Pattern("memory_rows_static", 1, memory_rows_static, memory_rows_static_ref,
            _memory_inputs,
            {"small": {"n": 9, "f": 3, "h": 2}, "default": {"n": 2000, "f": 16, "h": 16}},
            (0, 1), prepare=_prep_memory, tags=_T),
]
