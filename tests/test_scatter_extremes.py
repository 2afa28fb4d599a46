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
