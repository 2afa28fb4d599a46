"""Scatter-maxima and -minima written in a loop at traced positions
(`buf[b] = np.maximum(buf[b], v)` for a, b in zip(src, dst)): the tracer writes each as a
scatter_reduce_along, and chains of them are one scatter of the concatenated values and
positions (batch/extremes.py); they ran as a rolled loop of one step per iteration. Values
equal NumPy's loop exactly (NaNs too), batched equals unbatched, gradients match central
differences, and the batched graph holds one scatter."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(11)


def scatter_max(x, src, dst, xp=vnp):
    buf = xp.full(x.shape[0] // 2 + 1, -2.0)
    for a, b in zip(src, dst):
        buf[b] = np.maximum(buf[b], x[a] * 2.0)
    return np.sum(buf ** 2)


def scatter_min_rows(X, dst, xp=vnp):
    buf = xp.ones((4, X.shape[1]))
    for i in range(X.shape[0]):
        buf[dst[i]] = np.minimum(np.tanh(X[i]), buf[dst[i]])
    return np.sum(buf * X[:4])


@pytest.mark.parametrize("f,args", [
    (scatter_max, (R.standard_normal(10), R.integers(0, 10, 17), R.integers(-6, 6, 17))),
    (scatter_min_rows, (R.standard_normal((9, 3)), R.integers(0, 4, 9))),
])
def test_chains_of_scatter_extremes_are_one_scatter(f, args):
    e = check_batched(f, args, argnums=0)
    g = e.stages["batch"]
    assert count(g, P.scatter_reduce_along) == 1, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-14)


def max_buffer(x, src, dst, xp=vnp):
    buf = xp.full(x.shape[0] // 2 + 1, -2.0)
    for a, b in zip(src, dst):
        buf[b] = np.maximum(buf[b], x[a] * 2.0)
    return buf


def test_nan_propagates_as_numpy():
    x = R.standard_normal(10)
    x[3] = np.nan
    src, dst = np.arange(10), R.integers(0, 6, 10)
    for f in (max_buffer, scatter_max):  # (the buffer exactly, NaN where NumPy's has one)
        np.testing.assert_array_equal(vg.jit(f)(x, src, dst), f(x, src, dst, np))


def cluster_max(h, W, cluster, xp=vnp):
    pooled = xp.full((max(cluster) + 1, W.shape[1]), -np.inf)
    for i, c in enumerate(cluster):
        pooled[c] = np.maximum(pooled[c], h[i] @ W)
    return np.sum(np.tanh(pooled) ** 2)


def test_writes_of_maxima_at_repeated_rows_are_one_scatter():
    h, W = R.standard_normal((11, 3)), R.standard_normal((3, 2))
    cluster = [0, 1, 2, 1, 0, 3, 3, 2, 0, 1, 3]
    e = check_batched(cluster_max, (h, W, cluster), argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.scatter_reduce_along) == 1 and count(g, P.einsum) == 1, g


def test_writes_of_maxima_at_distinct_rows_stay_elementwise():
    h, W = R.standard_normal((6, 3)), R.standard_normal((3, 2))
    e = check_batched(cluster_max, (h, W, [3, 1, 0, 5, 2, 4]), argnums=(0, 1))
    assert count(e.stages["batch"], P.scatter_reduce_along) == 0


# Python's builtin max / min read and written back at one position (`buf[k] = max(buf[k], v)`):
# traced as where(v > buf[k], v, buf[k]) (pybuiltins), a scatter-max whose values are v with
# NaNs made -inf (a NaN v never wins Python's comparison; a NaN already there stays).

def builtin_max_traced(x, idx, xp=vnp):
    buf = xp.zeros(7) - 10.0
    for i in range(len(x)):
        buf[idx[i]] = max(buf[idx[i]], x[i] * 1.5)
    return buf


def builtin_min_traced(x, idx, xp=vnp):
    buf = xp.ones(5)
    for i in range(len(x)):
        k = idx[i]
        buf[k] = min(buf[k], np.tanh(x[i]))
    return buf


def builtin_max_static(x, xp=vnp, idx=(3, 1, 3, 0, 1, 1, 3, 2, 0, 3, 2, 1)):
    buf = xp.full(4, -1.0)
    for i, k in enumerate(idx):
        buf[k] = max(buf[k], x[i] - 0.25)
    return buf


def builtin_min_static_ints(x, xp=vnp, idx=(2, 0, 2, 2, 1, 0, 2)):
    buf = xp.full(3, 5.0)
    for i, k in enumerate(idx):
        buf[k] = min(buf[k], x[i] * x[i])
    return buf


def _loss(f):
    def loss(*a):
        return np.sum(f(*a) ** 2 * np.arange(1.0, 1.0 + f(*a).size).reshape(f(*a).shape))
    return loss


@pytest.mark.parametrize("f,args", [
    (builtin_max_traced, (R.standard_normal(23), R.integers(-7, 7, 23))),
    (builtin_min_traced, (R.standard_normal(17), R.integers(0, 5, 17))),
    (builtin_max_static, (R.standard_normal(12),)),
    (builtin_min_static_ints, (R.standard_normal(7),)),
])
def test_builtin_extremes_at_one_position_are_one_scatter(f, args):
    e = check_batched(_loss(f), args, argnums=0)
    assert count(e.stages["batch"], P.scatter_reduce_along) == 1, e.stages["batch"]
    assert count(e.stages["batch"], P.setitem) == 0, e.stages["batch"]
    got, want = vg.jit(f)(*args), f(*args, xp=np)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("f,n", [(builtin_max_traced, 23), (builtin_min_traced, 17),
                                 (builtin_max_static, 12), (builtin_min_static_ints, 7)])
def test_builtin_extremes_keep_pythons_nans(f, n):
    """A NaN value never replaces what the buffer holds (Python's `v > m` is False), and a
    NaN the buffer holds stays (nothing compares greater than it)."""
    x = R.standard_normal(n)
    x[[1, 4]] = np.nan
    idx = (R.integers(0, 5, n),) if f.__name__.endswith("traced") else ()
    np.testing.assert_array_equal(vg.jit(f)(x, *idx), f(x, *idx, xp=np))
    x[0] = np.nan  # (the first write at a position: NaN there only if the loop's is)
    np.testing.assert_array_equal(vg.jit(f)(x, *idx), f(x, *idx, xp=np))


def builtin_max_ints(v, idx, xp=vnp):
    buf = xp.zeros(6, dtype=np.int64) - 3
    for i in range(len(v)):
        buf[idx[i]] = max(buf[idx[i]], v[i])
    return buf


def test_builtin_max_of_ints_is_numpys():
    v, idx = R.integers(-9, 9, 30), R.integers(0, 6, 30)
    got, want = vg.jit(builtin_max_ints)(v, idx), builtin_max_ints(v, idx, xp=np)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def max_value_first(x, idx, xp=vnp):
    buf = xp.zeros(4)
    for i in range(len(x)):
        buf[idx[i]] = max(x[i], buf[idx[i]])  # (the read second: a NaN in buf is replaced)
    return buf


def test_builtin_max_with_the_value_first_stays_exact():
    """max(v, buf[k]) keeps a NaN v and replaces a NaN buf[k] by the next value: no
    scatter-max has those semantics, so it stays a chain of selections (exact)."""
    x, idx = R.standard_normal(9), R.integers(0, 4, 9)
    x[2] = np.nan
    np.testing.assert_array_equal(vg.jit(max_value_first)(x, idx),
                                  max_value_first(x, idx, xp=np))
