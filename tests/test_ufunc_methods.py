"""NumPy's ufunc methods on traced arrays against NumPy: `reduce` with initial, where and
dtype, `reduceat` at static indices (increasing, repeated, decreasing, along any axis), and
a call with `where=` into `out=`. Values and dtypes are NumPy's; gradients are checked
against central differences in random directions."""
import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(0)
X = R.standard_normal((6, 7))
UFUNCS = ["add", "multiply", "maximum", "minimum"]


def _same(f, *args):
    want = f(np, *args)
    got = vg.jit(lambda *a: f(vnp, *a))(*args)
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _grad_ok(f, x):
    g = vg.grad(lambda x: vnp.sum(np.sin(f(vnp, x))))(x)
    for _ in range(3):
        d = R.standard_normal(x.shape)
        h = 1e-6
        fd = (np.sum(np.sin(f(np, x + h * d))) - np.sum(np.sin(f(np, x - h * d)))) / (2 * h)
        assert abs(np.sum(g * d) - fd) < 1e-6 * max(1.0, abs(fd))


@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("kw", [{"axis": 0, "initial": 0.5}, {"axis": 1, "initial": -1.0},
                                {"axis": 0, "where": X[0] > -9, "initial": 2.0},
                                {"axis": None, "where": X > 0, "initial": 1.0},
                                {"axis": 1, "keepdims": True, "initial": 0.0}])
def test_reduce_with_initial_and_where(name, kw):
    def f(xp, x):
        return getattr(np, name).reduce(x, **kw)
    _same(f, X)
    _grad_ok(f, X + 0.01 * np.arange(42).reshape(6, 7))  # (no ties for maximum/minimum)


@pytest.mark.parametrize("name", ["add", "multiply"])
def test_reduce_accumulates_in_a_narrow_dtype(name):
    x = (np.arange(42).reshape(6, 7) * 37 % 101).astype(np.int8)
    _same(lambda xp, x: getattr(np, name).reduce(x, axis=0, dtype=np.int8), x)
    _same(lambda xp, x: getattr(np, name).reduce(x, axis=1), x)


INDICES = [[0, 2, 5], [0, 3, 1, 4], [1], [2, 2, 4], [5, 0], [0, 1, 2, 3, 4, 5]]


@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("idx", INDICES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_reduceat(name, idx, axis):
    def f(xp, x):
        return getattr(np, name).reduceat(x, idx, axis=axis)
    _same(f, X)
    _grad_ok(f, X + 0.01 * np.arange(42).reshape(6, 7))


def test_reduceat_dtypes_and_errors():
    x = np.arange(12, dtype=np.int8).reshape(3, 4)
    _same(lambda xp, x: np.add.reduceat(x, [0, 2], axis=1), x)
    _same(lambda xp, x: np.add.reduceat(x, [0, 2], axis=1, dtype=np.float32), x)
    with pytest.raises(IndexError):
        vg.jit(lambda x: np.add.reduceat(x, [0, 9]))(X)
    with pytest.raises(vg.UnsupportedError, match="traced indices"):
        vg.jit(lambda x, i: np.add.reduceat(x, i))(X, np.array([0, 2]))


def test_call_with_where_into_out():
    def f(xp, x):
        o = xp.zeros((6, 7)) if xp is vnp else np.zeros((6, 7))
        np.add(x, 1.0, out=o, where=x > 0)
        np.multiply(x, o, out=o, where=x < 0.5)
        return o
    _same(f, X)
    _grad_ok(f, X)
    with pytest.raises(vg.UnsupportedError, match="out="):
        vg.jit(lambda x: np.exp(x, where=x > 0))(X)
