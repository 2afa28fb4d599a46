"""Dot products of row pairs over dense pair sets (rewrite/hoist.einsum_of_pair_gathers):
`np.dot(X[i], X[j])` over the pairs a mask or a branch keeps is a gather from the Gram matrix
X @ X.T where the pairs fill enough of the grid, and stays a product of gathered rows where
they are few. Values against NumPy, batched against unbatched, gradients against central
differences in float64."""
from __future__ import annotations

import itertools

import numpy as np
from test_batch import check, entry

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def masked_pairs(X, mask):
    loss = 0.0
    for i, j in itertools.product(range(X.shape[0]), repeat=2):
        if i < j and mask[i][j]:
            loss = loss + np.dot(X[i], X[j]) ** 2
    return loss


def two_kinds_of_pairs(X, Y, same):
    loss = 0.0
    for i, j in itertools.product(range(X.shape[0]), range(Y.shape[0])):
        d = np.dot(X[i], Y[j])
        loss = loss + ((d - 1.0) ** 2 if same[i][j] else np.maximum(d - 0.2, 0.0) ** 2)
    return loss


def _gram(g):
    """The Gram matrices a graph makes (one product of two row sets), when it gathers no
    rows of pairs."""
    if any(e.prim is P.take and e.out.aval.ndim == 2 for e in g.eqns):
        return []
    return [e for e in g.eqns if e.prim is P.einsum and e.out.aval.ndim == 2 and
            all(a.aval.ndim == 2 for a in e.inputs)]


def test_dense_pair_sets_read_the_gram_matrix():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 5))
    mask = (rng.random((12, 12)) < 0.5).tolist()
    np.testing.assert_allclose(vg.jit(masked_pairs)(X, mask), masked_pairs(X, mask),
                               rtol=1e-12)
    e = check(lambda X: masked_pairs(X, mask), (X,))
    assert _gram(e.stages["simplify"]), vg.ir.pretty(e.stages["simplify"])


def test_two_branches_over_the_pairs_of_two_arrays():
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((7, 4)), rng.standard_normal((9, 4))
    same = (rng.random((7, 9)) < 0.4).tolist()
    np.testing.assert_allclose(vg.jit(two_kinds_of_pairs)(X, Y, same),
                               two_kinds_of_pairs(X, Y, same), rtol=1e-12)
    e = check(lambda X, Y: two_kinds_of_pairs(X, Y, same), (X, Y), argnums=(0, 1))
    assert _gram(e.stages["simplify"]), vg.ir.pretty(e.stages["simplify"])


def test_sparse_pair_sets_stay_gathers():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 3))
    mask = np.zeros((300, 300), bool)
    mask[np.arange(0, 299), np.arange(1, 300)] = True  # 299 of 90,000 pairs
    e, _ = entry(lambda X: masked_pairs(X, mask.tolist()), (X,))
    assert not _gram(e.stages["simplify"])


def grid_scatter(v, M, rows, cols):
    G = vnp.zeros(M.shape)
    for k, (r, c) in enumerate(zip(rows, cols)):
        G[r, c] += v[k]
    return np.sum(G * M) + np.sum(G[rows, cols] ** 2)


def add_at_cells(G0, v, rows, cols):
    G = G0.copy()
    np.add.at(G, (rows, cols), v)
    return np.sum(np.sin(G) * G)


def test_scatter_into_a_grid_by_row_and_column_lists():
    """(rewrite/segments.scatter_into_cells, gather_of_cells): one scatter into the flattened
    grid, one gather from it, repeated cells accumulating."""
    rng = np.random.default_rng(3)
    M = rng.standard_normal((6, 5))
    rows, cols = rng.integers(0, 6, 40).tolist(), rng.integers(0, 5, 40).tolist()
    v = rng.standard_normal(40)
    np.testing.assert_allclose(vg.jit(grid_scatter)(v, M, rows, cols),
                               grid_scatter(v, M, rows, cols), rtol=1e-12)
    e = check(lambda v: grid_scatter(v, M, rows, cols), (v,))
    g = e.stages["simplify"]
    assert not any(q.prim is P.setitem_add for q in g.eqns), vg.ir.pretty(g)
    G0 = rng.standard_normal((6, 5))
    np.testing.assert_allclose(vg.jit(add_at_cells)(G0, v, rows, cols),
                               add_at_cells(G0, v, rows, cols), rtol=1e-12)
    e = check(lambda G0, v: add_at_cells(G0, v, rows, cols), (G0, v), argnums=(0, 1))
    assert not any(q.prim is P.setitem_add for q in e.stages["simplify"].eqns)
