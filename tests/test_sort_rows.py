"""Per-row sorts in loops (rewrite/orderings.py, the numpy backend's flat gathers): a sort,
argsort or partition of each row in a loop or comprehension batches into one along the last
axis; its gradient computes the ordering once (sort(x) is read as take_along(x, argsort(x))
where the gradient's argsort is there anyway) and scatters only the values that were read
(a top-k's k per row). Every program: NumPy's values (also with ties), gradients that match
central differences, the batched graph equal to the unbatched one."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.backends.numpy import gathers as NG
from vecgrad.ir import Aval

R = np.random.default_rng(26)
W8 = np.linspace(0.1, 0.8, 8)


def topk_sum(X):
    return sum(np.sum(np.sort(r)[-3:]) for r in X)


def topk_reversed(X):
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.sort(x)[::-1][:2] * np.array([2.0, 1.0]))
    return tot


def median_rows(X):
    return np.array([np.sort(r)[r.shape[0] // 2] for r in X])


def trimmed_mean(X):
    out = vnp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = np.mean(np.sort(X[i])[1:-1])
    return out


def ordered_weights(X):
    return sum(np.dot(np.sort(r), W8) for r in X)


def spread(X):
    tot = 0.0
    for r in X:
        s = np.sort(r)
        tot = tot + (s[-1] - s[0]) + 0.5 * (s[-2] - s[1])
    return tot


def partition_topk(X):
    return sum(np.sum(np.partition(r, -3)[-3:]) for r in X)


def argsort_topk(X):
    tot = 0.0
    for r in X:
        tot = tot + np.sum(r[np.argsort(r)[-2:]] ** 2)
    return tot


def argpartition_topk(X):
    return sum(np.sum(r[np.argpartition(r, -3)[-3:]]) for r in X)


def sorted_cumsum(X):
    """A Lorenz curve per row: cumulative sums of the sorted values."""
    return sum(np.sum(np.cumsum(np.sort(np.abs(r))) / (np.sum(np.abs(r)) + 1.0)) for r in X)


def wasserstein_rows(X, Y):
    return sum(np.mean(np.abs(np.sort(a) - np.sort(b))) for a, b in zip(X, Y))


def sort_by_key(X, Y):
    tot = 0.0
    for a, b in zip(X, Y):
        tot = tot + np.sum(a[np.argsort(b)] * W8)
    return tot


def sort_and_argsort(X):
    """Both the sorted values and the order in one loop body (the user's own argsort)."""
    tot = 0.0
    for r in X:
        o = np.argsort(r)
        tot = tot + np.sum(np.sort(r)[-2:]) + np.sum(r[o[:2]] * 0.5)
    return tot


def sort_columns(X):
    return sum(np.sum(np.sort(X[:, j])[-2:]) for j in range(X.shape[1]))


def sorted_method(X):
    tot = 0.0
    for r in X:
        s = r.copy()
        s.sort()
        tot = tot + s[-1] * 2.0 + s[-2]
    return tot


def quantile_by_sort(X):
    return np.array([np.sort(r)[int(0.75 * (r.shape[0] - 1))] for r in X])


ONE = [topk_sum, topk_reversed, median_rows, trimmed_mean, ordered_weights, spread,
       partition_topk, argsort_topk, argpartition_topk, sorted_cumsum, sort_and_argsort,
       sort_columns, sorted_method, quantile_by_sort]
TWO = [wasserstein_rows, sort_by_key]


def _loss(f, n):
    def loss(*a):
        return vnp.sum(vnp.asarray(f(*a[:n])) * 1.25)
    return loss


@pytest.mark.parametrize("f", ONE + TWO, ids=lambda f: f.__name__)
def test_per_row_sorts_are_numpys_with_ties_and_batch(f):
    n = 2 if f in TWO else 1
    args = [R.standard_normal((6, 8)) for _ in range(n)]
    ties = [np.round(a * 2) / 2 for a in args]  # (many equal values in each row)
    for a in (args, ties):
        assert_same(vg.jit(f)(*a), f(*a), rtol=1e-12)
    loss = _loss(f, n)
    vg.check_grads(loss, tuple(args), argnums=tuple(range(n)), rtol=1e-6, atol=1e-8)
    e, leaves = entry(loss, tuple(args), argnums=tuple(range(n)))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


def _orderings(f, n):
    e, _ = entry(_loss(f, n), tuple(R.standard_normal((6, 8)) for _ in range(n)),
                 argnums=tuple(range(n)))
    return [q.prim.name for q in e.stages["final"].eqns
            if q.prim.name in ("sort", "argsort", "partition", "argpartition")]


@pytest.mark.parametrize("f", [topk_sum, topk_reversed, median_rows, trimmed_mean,
                               ordered_weights, spread, partition_topk, sorted_cumsum,
                               sort_and_argsort, sorted_method, quantile_by_sort],
                         ids=lambda f: f.__name__)
def test_the_gradient_orders_each_batched_row_once(f):
    """The sort and the argsort of its gradient are one argsort (one per sorted operand)."""
    assert len(_orderings(f, 1)) == 1
    assert len(_orderings(wasserstein_rows, 2)) == 2


def test_a_top_k_gradient_scatters_only_the_k_values_read():
    e, _ = entry(_loss(topk_sum, 1), (R.standard_normal((6, 8)),))
    sc = [q for q in e.stages["final"].eqns if q.prim.name == "scatter_add_along"]
    assert len(sc) == 1 and sc[0].inputs[0].aval.shape == (6, 3)


def test_jit_of_a_sort_alone_keeps_the_sort():
    """No argsort is computed where nothing asks for the permutation."""
    X = R.standard_normal((6, 8))
    e, _ = entry(_loss(topk_sum, 1), (X,))
    assert vg.jit(topk_sum)(X) == pytest.approx(topk_sum(X), rel=1e-13)
    assert "argsort" not in [q.prim.name for q in e.stages["batch"].eqns]


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_flat_gather_and_unique_scatter_equal_the_impls(axis):
    """The backend's flat-position take_along and unique scatter, on every axis, with
    negative indices (wrapped), out-of-range ones (IndexError) and a strided operand."""
    from vecgrad.primitives import sorting as S
    x = R.standard_normal((3, 4, 5))
    perm = np.argsort(x, axis=axis)
    k = x.shape[axis] - 1
    idx = np.take(perm, range(k), axis=axis)
    take = NG._take_along([Aval(x.shape, x.dtype), Aval(idx.shape, idx.dtype)], axis)
    np.testing.assert_array_equal(take(x, idx), np.take_along_axis(x, idx, axis))
    np.testing.assert_array_equal(take(x, idx - x.shape[axis]), np.take_along_axis(x, idx, axis))
    xt = np.asfortranarray(x)
    np.testing.assert_array_equal(take(xt, idx), np.take_along_axis(x, idx, axis))
    with pytest.raises(IndexError):
        take(x, idx + x.shape[axis])
    v = R.standard_normal(idx.shape)
    put = NG._scatter_add_along([Aval(v.shape, v.dtype), Aval(idx.shape, idx.dtype)], axis,
                                x.shape[axis], True)
    want = S._scatter_add_along(v, idx, axis, x.shape[axis], True)
    np.testing.assert_array_equal(put(v, idx), want)
    np.testing.assert_array_equal(put(v, idx - x.shape[axis]), want)
    with pytest.raises(IndexError):
        put(v, idx + x.shape[axis])
