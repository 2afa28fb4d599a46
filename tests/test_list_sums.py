"""Sums over rows picked by static index lists (batch/lists.py): `x[nb].mean(0)` over a dict
of neighbour lists, `E[doc].sum(0)` over token lists, become one gather and one segment sum.
Batched equals unbatched (values and VJPs), gradients match central differences, and the
batched graph holds one segment sum, not one read per list."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(3)


def ragged_lists(n, m, k, rng=R):
    return [[int(u) for u in rng.integers(-n, n, rng.integers(1, k + 1))] for _ in range(m)]


def neighbour_means(x, W, nbrs):
    h = vnp.zeros((x.shape[0], W.shape[1]))
    for v, nb in nbrs.items():
        h[v] = vnp.tanh(x[v] @ W + x[nb].mean(axis=0))
    return vnp.sum(h ** 2)


def bags(E, w, docs):
    return vnp.mean(vnp.stack([vnp.log1p(vnp.exp(-(E[d].sum(axis=0) @ w))) for d in docs]))


def column_lists(A, cols):
    return sum(vnp.sum(vnp.sin(A[:, c].sum(axis=1))) for c in cols)


def test_neighbour_means_one_segment_sum():
    x, W = R.standard_normal((7, 3)), R.standard_normal((3, 3))
    nbrs = dict(enumerate(ragged_lists(7, 7, 4)))
    e = check_batched(neighbour_means, (x, W, nbrs), argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.segment_sum) == 1
    assert count(g, P.reduce_sum) <= 2, vg.ir.pretty(g)


def test_bags_of_equal_and_unequal_lengths():
    E, w = R.standard_normal((9, 4)), R.standard_normal(4)
    for docs in (ragged_lists(9, 6, 5), [[1, 2, 3], [0, 0, 8], [4, 5, 6], [-1, 2, 2]]):
        e = check_batched(bags, (E, w, docs), argnums=(0, 1))
        assert count(e.stages["batch"], P.segment_sum) == 1


def test_lists_along_a_later_axis():
    A = R.standard_normal((3, 8))
    cols = ragged_lists(8, 5, 4)
    e = check_batched(column_lists, (A, cols))
    assert count(e.stages["batch"], P.segment_sum) == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_dtype_as_numpy(dtype):
    x = R.standard_normal((6, 3)).astype(dtype)
    lists = ragged_lists(6, 5, 4)

    def f(x):
        return vnp.stack([x[nb].sum(axis=0) for nb in lists])
    got = vg.jit(f)(x)
    want = np.stack([x[nb].sum(axis=0) for nb in lists])
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype is np.float32 else 1e-14)


def test_a_lone_list_sum_stays():
    def f(x):
        return vnp.sum(x[[0, 2, 2]].sum(axis=0) ** 2)
    e = check_batched(f, (R.standard_normal((4, 3)),))
    assert count(e.stages["batch"], P.segment_sum) == 0


def reset_rows(X, idx, m):
    out = vnp.zeros(X.shape[0])
    for r in range(X.shape[0]):
        buf = vnp.zeros(m)  # a buffer reset per outer iteration
        for j, k in enumerate(idx):
            buf[k] += X[r, j]
        out[r] = vnp.log(vnp.sum(vnp.exp(buf)))
    return vnp.sum(out ** 2)


def test_inner_loop_groups_merge_across_the_outer_loop():
    X = R.standard_normal((10, 7))
    idx = [int(k) for k in R.integers(0, 3, 7)]
    e = check_batched(reset_rows, (X, idx, 3))
    assert count(e.stages["batch"], P.segment_sum) == 1, vg.ir.pretty(e.stages["batch"])


def copy_rows(X, W, b):
    out = vnp.zeros((X.shape[0], W.shape[1]))
    for i in range(X.shape[0]):
        r = X[i].copy()  # a temporary per iteration, written in place
        r[r < 0] = 0.0
        r[0] += b
        out[i] = r @ W
    return vnp.sum(vnp.tanh(out))


def test_writes_into_per_iteration_temporaries_batch():
    X, W, b = R.standard_normal((6, 4)), R.standard_normal((4, 3)), np.array(0.3)
    e = check_batched(copy_rows, (X, W, b), argnums=(0, 1, 2))
    g = e.stages["batch"]
    assert count(g, P.setitem_add) == 1 and count(g, P.einsum) == 1, vg.ir.pretty(g)
