"""Session 29 variants of scatter-adds in a loop at static index arrays (item 3): np.add.at
over chunks of a static index list (elements, rows, columns, a 2-D histogram), over ragged
groups (documents' token lists, relation-typed edge lists, boundaries from a Python list),
and a per-step index row of a static table. Each link's index is another constant array, so
before session 29 no two links batched (one np.add.at per chunk); the chain is one scatter of
the concatenated indices now (batch/addchains.py). The references call np.add.at once."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal


def chunked_add_at(v, ids):
    """Item 3: a histogram filled chunk by chunk from a static id list,
    np.add.at(acc, idx[c0:c1], v[c0:c1] ** 2) for 8 chunks."""
    idx = np.asarray(ids)
    acc = vnp.zeros(64)
    step = len(idx) // 8
    for c in range(8):
        c0, c1 = c * step, (c + 1) * step
        np.add.at(acc, idx[c0:c1], v[c0:c1] ** 2)
    return np.sum(np.tanh(acc))


def chunked_add_at_ref(v, idx):
    acc = np.zeros(64)
    np.add.at(acc, idx, v ** 2)
    return np.sum(np.tanh(acc))


def chunked_rows_add_at(H, ids):
    """Item 3: node features summed per destination over edge chunks, rows,
    np.add.at(agg, dst[c0:c1], np.tanh(H[c0:c1])) for chunks of 256."""
    dst = np.array(ids)
    agg = vnp.zeros((50, H.shape[1]))
    for c0 in range(0, len(dst), 256):
        np.add.at(agg, dst[c0:c0 + 256], np.tanh(H[c0:c0 + 256]))
    return np.sum(agg ** 2)


def chunked_rows_add_at_ref(H, dst):
    agg = np.zeros((50, H.shape[1]))
    np.add.at(agg, dst, np.tanh(H))
    return np.sum(agg ** 2)


def ragged_bounds_add_at(x, ids, bounds):
    """Item 3: segments of uneven length from a Python list of boundaries, each scaled by
    its own weight, np.add.at(acc, idx[b0:b1], x[b0:b1] * s[g])."""
    idx = np.asarray(ids)
    s = np.linspace(0.5, 1.5, len(bounds) - 1)
    acc = vnp.zeros(40)
    for g in range(len(bounds) - 1):
        b0, b1 = bounds[g], bounds[g + 1]
        np.add.at(acc, idx[b0:b1], x[b0:b1] * s[g])
    return np.sum(np.log1p(acc ** 2))


def ragged_bounds_add_at_ref(x, idx, bounds):
    lens = np.diff(bounds)
    s = np.repeat(np.linspace(0.5, 1.5, len(lens)), lens)
    acc = np.zeros(40)
    np.add.at(acc, idx, x * s)
    return np.sum(np.log1p(acc ** 2))


def docs_bag_add_at(w, docs):
    """Item 3: a weighted bag of words, one np.add.at per document (lists of token ids of
    several lengths), np.add.at(counts, doc, w[d])."""
    counts = vnp.zeros(100)
    for d, doc in enumerate(docs):
        np.add.at(counts, doc, w[d])
    return np.sum(np.sqrt(counts ** 2 + 1.0))


def docs_bag_add_at_ref(w, tok, doc_of):
    counts = np.zeros(100)
    np.add.at(counts, tok, w[doc_of])
    return np.sum(np.sqrt(counts ** 2 + 1.0))


def relation_edges_add_at(x, w, rels):
    """Item 3: messages per relation type (R-GCN style), each relation's edges as two
    Python lists, np.add.at(agg, dst, x[src] * w[r])."""
    agg = vnp.zeros(len(x))
    for r, (src, dst) in enumerate(rels):
        np.add.at(agg, dst, x[src] * w[r])
    return np.sum(agg ** 2)


def relation_edges_add_at_ref(x, w, src, dst, rel):
    agg = np.zeros(len(x))
    np.add.at(agg, dst, x[src] * w[rel])
    return np.sum(agg ** 2)


def hist2d_chunks(wt, ij):
    """Item 3: a 2-D histogram filled chunk by chunk, np.add.at(H, (i[c0:c1], j[c0:c1]),
    exp(wt[c0:c1]))."""
    i, j = np.asarray(ij[0]), np.asarray(ij[1])
    H = vnp.zeros((16, 16))
    for c0 in range(0, len(i), 500):
        np.add.at(H, (i[c0:c0 + 500], j[c0:c0 + 500]), np.exp(wt[c0:c0 + 500]))
    return np.sum(H * np.log1p(H))


def hist2d_chunks_ref(wt, i, j):
    H = np.zeros((16, 16))
    np.add.at(H, (i, j), np.exp(wt))
    return np.sum(H * np.log1p(H))


def column_chunks_add_at(V, ids):
    """Item 3: columns accumulated per static column id, in chunks,
    np.add.at(acc, (slice(None), idx[c0:c1]), V[:, c0:c1] * 2)."""
    idx = np.asarray(ids)
    acc = vnp.zeros((V.shape[0], 32))
    for c0 in range(0, len(idx), 100):
        np.add.at(acc, (slice(None), idx[c0:c0 + 100]), V[:, c0:c0 + 100] * 2.0)
    return np.sum(np.tanh(acc))


def column_chunks_add_at_ref(V, idx):
    acc = np.zeros((V.shape[0], 32))
    np.add.at(acc, (slice(None), idx), V * 2.0)
    return np.sum(np.tanh(acc))


def step_rows_add_at(X, table):
    """Item 3: each step scatters its row of values by its row of a static id table
    (a list of lists), np.add.at(acc, ids[t], X[t] * X[t])."""
    ids = np.array(table)
    acc = vnp.zeros(48)
    for t in range(len(ids)):
        np.add.at(acc, ids[t], X[t] * X[t])
    return np.sum(np.sin(acc))


def step_rows_add_at_ref(X, ids):
    acc = np.zeros(48)
    np.add.at(acc, ids.ravel(), (X * X).ravel())
    return np.sum(np.sin(acc))


def add_at_then_read(v, ids):
    """Items 1, 3: two passes of chunked np.add.at into one histogram with a read of the
    whole histogram between them (the read sees the first pass's sums), p = acc / sum(acc)."""
    idx = np.asarray(ids)
    acc = vnp.ones(32)
    half = len(idx) // 2
    for c0 in range(0, half, 250):
        np.add.at(acc, idx[c0:c0 + 250], np.exp(v[c0:c0 + 250]))
    p = acc / np.sum(acc)
    for c0 in range(half, len(idx), 250):
        np.add.at(acc, idx[c0:c0 + 250], v[c0:c0 + 250] ** 2)
    return np.sum(p * np.log(acc))


def add_at_then_read_ref(v, idx):
    half = len(idx) // 2
    acc = np.ones(32)
    np.add.at(acc, idx[:half], np.exp(v[:half]))
    p = acc / np.sum(acc)
    np.add.at(acc, idx[half:], v[half:] ** 2)
    return np.sum(p * np.log(acc))


def two_hists_add_at(v, ids):
    """Item 3: two histograms of one chunk loop, counts and sums, np.add.at(cnt, i, 1.0);
    np.add.at(tot, i, v): the mean per bin."""
    idx = np.asarray(ids)
    cnt, tot = vnp.zeros(30), vnp.zeros(30)
    for c0 in range(0, len(idx), 400):
        np.add.at(cnt, idx[c0:c0 + 400], 1.0)
        np.add.at(tot, idx[c0:c0 + 400], v[c0:c0 + 400])
    return np.sum((tot / (cnt + 1.0)) ** 2)


def two_hists_add_at_ref(v, idx):
    cnt = np.bincount(idx, minlength=30).astype(float)
    tot = np.zeros(30)
    np.add.at(tot, idx, v)
    return np.sum((tot / (cnt + 1.0)) ** 2)


def _ids(b):
    return lambda rng, n: (normal(rng, n), [int(i) for i in rng.integers(0, b, n)])


def _prep_ids(args):
    return args[0], np.asarray(args[1])


def _ragged(rng, n):
    cuts = sorted(int(c) for c in rng.choice(np.arange(1, n), 11, replace=False))
    return normal(rng, n), [int(i) for i in rng.integers(0, 40, n)], [0, *cuts, n]


def _prep_ragged(args):
    return args[0], np.asarray(args[1]), np.asarray(args[2])


def _docs(rng, d, n):
    lens = rng.integers(n // 2, 3 * n // 2, d)
    return normal(rng, d), [[int(t) for t in rng.integers(0, 100, k)] for k in lens]


def _prep_docs(args):
    w, docs = args
    tok = np.concatenate([np.asarray(d, np.int64) for d in docs])
    return w, tok, np.repeat(np.arange(len(docs)), [len(d) for d in docs])


def _rels(rng, n, r, e):
    rels = []
    for _ in range(r):
        k = int(rng.integers(e // 2, 3 * e // 2))
        rels.append(([int(s) for s in rng.integers(0, n, k)],
                     [int(t) for t in rng.integers(0, n, k)]))
    return normal(rng, n), normal(rng, r), rels


def _prep_rels(args):
    x, w, rels = args
    src = np.concatenate([np.asarray(s) for s, _ in rels])
    dst = np.concatenate([np.asarray(t) for _, t in rels])
    rel = np.repeat(np.arange(len(rels)), [len(s) for s, _ in rels])
    return x, w, src, dst, rel


def _hist2d(rng, n):
    return normal(rng, n, scale=0.3), [[int(i) for i in rng.integers(0, 16, n)],
                                       [int(j) for j in rng.integers(0, 16, n)]]


def _prep_hist2d(args):
    return args[0], np.asarray(args[1][0]), np.asarray(args[1][1])


_T = ("variant", "rmw29")
_N = {"small": {"n": 16}, "default": {"n": 4000}}
PATTERNS = [
    Pattern("chunked_add_at", 3, chunked_add_at, chunked_add_at_ref, _ids(64), _N, (0,),
            prepare=_prep_ids, tags=_T),
    Pattern("chunked_rows_add_at", 3, chunked_rows_add_at, chunked_rows_add_at_ref,
            lambda rng, n, f: (normal(rng, n, f), [int(i) for i in rng.integers(0, 50, n)]),
            {"small": {"n": 300, "f": 3}, "default": {"n": 2048, "f": 16}}, (0,),
            prepare=_prep_ids, tags=_T),
    Pattern("ragged_bounds_add_at", 3, ragged_bounds_add_at, ragged_bounds_add_at_ref,
            _ragged, {"small": {"n": 30}, "default": {"n": 4000}}, (0,),
            prepare=_prep_ragged, tags=_T),
    Pattern("docs_bag_add_at", 3, docs_bag_add_at, docs_bag_add_at_ref, _docs,
            {"small": {"d": 3, "n": 6}, "default": {"d": 40, "n": 100}}, (0,),
            prepare=_prep_docs, tags=_T),
    Pattern("relation_edges_add_at", 3, relation_edges_add_at, relation_edges_add_at_ref,
            _rels, {"small": {"n": 6, "r": 3, "e": 8}, "default": {"n": 300, "r": 6, "e": 700}},
            (0, 1), prepare=_prep_rels, tags=_T),
    Pattern("hist2d_chunks", 3, hist2d_chunks, hist2d_chunks_ref, _hist2d,
            {"small": {"n": 1000}, "default": {"n": 4000}}, (0,), prepare=_prep_hist2d,
            tags=_T),
    Pattern("column_chunks_add_at", 3, column_chunks_add_at, column_chunks_add_at_ref,
            lambda rng, r, n: (normal(rng, r, n), [int(i) for i in rng.integers(0, 32, n)]),
            {"small": {"r": 2, "n": 200}, "default": {"r": 8, "n": 1000}}, (0,),
            prepare=_prep_ids, tags=_T),
    Pattern("step_rows_add_at", 3, step_rows_add_at, step_rows_add_at_ref,
            lambda rng, t, k: (normal(rng, t, k),
                               [[int(i) for i in row] for row in rng.integers(0, 48, (t, k))]),
            {"small": {"t": 3, "k": 4}, "default": {"t": 40, "k": 100}}, (0,),
            prepare=_prep_ids, tags=_T),
    Pattern("add_at_then_read", 1, add_at_then_read, add_at_then_read_ref, _ids(32),
            {"small": {"n": 1000}, "default": {"n": 4000}}, (0,), prepare=_prep_ids, tags=_T),
    Pattern("two_hists_add_at", 3, two_hists_add_at, two_hists_add_at_ref, _ids(30),
            {"small": {"n": 800}, "default": {"n": 4000}}, (0,), prepare=_prep_ids, tags=_T),
]
