"""np.add.at in a loop at static index arrays that differ per iteration (chunks of an index
list, documents' token lists, relation-typed edge lists, a row of an id table per step): the
chain of scatter-adds is one scatter of the concatenated indices and values
(batch/addchains.py). Values equal the loop's, batched equals unbatched, gradients match
central differences; a read between two links ends the chain there."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(2029)
IDX = [int(i) for i in R.integers(-3, 9, 60)]  # (negative ids count from the end)
BOUNDS = [0, 7, 8, 20, 33, 45, 60]


def even_chunks(v):
    idx = np.asarray(IDX)
    acc = vnp.zeros(9)
    for c in range(0, 60, 12):
        np.add.at(acc, idx[c:c + 12], v[c:c + 12] ** 2)
    return np.sum(np.tanh(acc))


def uneven_scaled(v):
    idx = np.asarray(IDX)
    acc = vnp.ones(9)
    for g in range(len(BOUNDS) - 1):
        b0, b1 = BOUNDS[g], BOUNDS[g + 1]
        np.add.at(acc, idx[b0:b1], v[b0:b1] * (g + 0.5))
    return np.sum(np.log(acc ** 2 + 1.0))


def per_chunk_weight(v):
    idx = np.asarray(IDX)
    acc = vnp.zeros(9)
    for g in range(len(BOUNDS) - 1):
        np.add.at(acc, idx[BOUNDS[g]:BOUNDS[g + 1]], v[g] * v[g + 1])
    return np.sum(np.sin(acc))


def equal_chunk_weight(v):
    idx = np.asarray(IDX)
    acc = vnp.zeros(9)
    for c in range(5):
        np.add.at(acc, idx[c * 12:(c + 1) * 12], np.exp(v[c]))
    return np.sum(acc * acc)


def counts_and_sums(v):
    idx = np.asarray(IDX)
    cnt, tot = vnp.zeros(9), vnp.zeros(9)
    for c in range(0, 60, 15):
        np.add.at(cnt, idx[c:c + 15], 1.0)
        np.add.at(tot, idx[c:c + 15], v[c:c + 15])
    return np.sum((tot / (cnt + 1.0)) ** 2)


def rows(H):
    idx = np.asarray(IDX)
    agg = vnp.zeros((9, H.shape[1]))
    for c in range(0, 60, 25):  # (a last chunk of 10)
        np.add.at(agg, idx[c:c + 25], np.tanh(H[c:c + 25]))
    return np.sum(agg ** 2)


def rows_scalar_and_row(H):
    idx = np.asarray(IDX)
    agg = vnp.zeros((9, H.shape[1]))
    for g in range(len(BOUNDS) - 1):
        sl = idx[BOUNDS[g]:BOUNDS[g + 1]]
        np.add.at(agg, sl, H[g, 0])  # (one number per chunk, spread over rows and columns)
        np.add.at(agg, sl, H[g + 1])  # (one row per chunk, spread over the chunk's rows)
    return np.sum(np.sin(agg))


def columns(V):
    idx = np.asarray(IDX) % 9
    acc = vnp.zeros((V.shape[0], 9))
    for c in range(0, 60, 20):
        np.add.at(acc, (slice(None), idx[c:c + 20]), V[:, c:c + 20] * 2.0)
    return np.sum(np.tanh(acc))


def hist2d(v):
    i, j = np.asarray(IDX) % 9, (np.asarray(IDX[::-1]) + 1) % 4
    H = vnp.zeros((9, 4))
    for c in range(0, 60, 20):
        np.add.at(H, (i[c:c + 20], j[c:c + 20]), np.exp(v[c:c + 20]))
    return np.sum(H * np.log1p(H))


def arrays_apart(V):
    i, j = np.asarray(IDX) % 9, (np.asarray(IDX[::-1]) + 1) % 4
    T = vnp.zeros((9, V.shape[1], 4))
    for c in range(0, 60, 30):  # (NumPy puts the arrays' axis first: (30, 3) values)
        np.add.at(T, (i[c:c + 30], slice(None), j[c:c + 30]), V[c:c + 30] ** 2)
    return np.sum(np.sqrt(T + 1.0))


def docs(w, ds):
    counts = vnp.zeros(9)
    for d, doc in enumerate(ds):
        np.add.at(counts, doc, w[d])
    return np.sum(np.sqrt(counts ** 2 + 1.0))


def relations(x, w, rels):
    agg = vnp.zeros(len(x))
    for r, (src, dst) in enumerate(rels):
        np.add.at(agg, dst, x[src] * w[r])
    return np.sum(agg ** 2)


def read_between(v):
    idx = np.asarray(IDX)
    acc = vnp.ones(9)
    for c in range(0, 30, 10):
        np.add.at(acc, idx[c:c + 10], np.exp(v[c:c + 10]))
    p = acc / np.sum(acc)  # (the first three chunks' sums)
    for c in range(30, 60, 10):
        np.add.at(acc, idx[c:c + 10], v[c:c + 10] ** 2)
    return np.sum(p * np.log(acc))


def one_index_each_step(v):
    idx = np.asarray(IDX[:12])
    acc = vnp.zeros(9)
    for c in range(5):
        np.add.at(acc, idx, v[c * 12:(c + 1) * 12] * (c + 1.0))
    return np.sum(acc ** 2)


DOCS = [[int(t) for t in R.integers(0, 9, k)] for k in (3, 7, 1, 12, 5)]
RELS = [([int(s) for s in R.integers(0, 8, k)], [int(t) for t in R.integers(0, 8, k)])
        for k in (6, 11, 4)]
CASES = {
    "even_chunks": (even_chunks, lambda: (R.standard_normal(60),), 0, 1),
    "uneven_scaled": (uneven_scaled, lambda: (R.standard_normal(60),), 0, 1),
    "per_chunk_weight": (per_chunk_weight, lambda: (R.standard_normal(7),), 0, 1),
    "equal_chunk_weight": (equal_chunk_weight, lambda: (R.standard_normal(5),), 0, 1),
    "counts_and_sums": (counts_and_sums, lambda: (R.standard_normal(60),), 0, 1),
    "rows": (rows, lambda: (R.standard_normal((60, 3)),), 0, 1),
    "rows_scalar_and_row": (rows_scalar_and_row, lambda: (R.standard_normal((7, 3)),), 0, 1),
    "columns": (columns, lambda: (R.standard_normal((2, 60)),), 0, 1),
    "hist2d": (hist2d, lambda: (R.standard_normal(60) * 0.3,), 0, 1),
    "arrays_apart": (arrays_apart, lambda: (R.standard_normal((60, 3)),), 0, 1),
    "docs": (docs, lambda: (R.standard_normal(5), DOCS), 0, 1),
    "relations": (relations, lambda: (R.standard_normal(8), R.standard_normal(3), RELS),
                  (0, 1), 1),
    "read_between": (read_between, lambda: (R.standard_normal(60),), 0, 2),
}


def _scatters(e):
    """The scatters of the entry's forward graph after simplifying (a scatter-add at
    static index arrays, or the segment sum the simplifier may make of one)."""
    return sum(1 for q in e.stages["simplify"].eqns
               if q.prim is P.setitem_add and not P.is_basic(q.params["idx"]) or
               q.prim in (P.segment_sum, P.scatter_add_along))


@pytest.mark.parametrize("name", list(CASES))
def test_chunked_add_at_is_one_scatter(name):
    f, make, argnums, n_scatters = CASES[name]
    args = make()
    e = check_batched(f, args, argnums=argnums)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)
    assert _scatters(e) == n_scatters


def test_one_index_every_step_is_one_scatter():
    """Links that all hold one index array join too (the batch pass alone left a rolled
    loop of scatters)."""
    args = (R.standard_normal(60),)
    assert _scatters(check_batched(one_index_each_step, args)) == 1


def test_integer_counts_join_exactly():
    """np.add.at into an integer buffer (counts per id, chunk by chunk): exact."""
    def f(x):
        idx = np.asarray(IDX)
        cnt = vnp.zeros(9, dtype=np.int64)
        for c in range(0, 60, 12):
            np.add.at(cnt, idx[c:c + 12], 1)
        return np.sum(x * cnt)
    x = R.standard_normal(9)
    np.testing.assert_allclose(vg.jit(f)(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(vg.grad(f)(x), np.bincount(np.asarray(IDX) % 9, minlength=9))
