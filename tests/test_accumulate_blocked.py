"""cumsum, cummax and cummin over blocks of steps in the NumPy backend
(backends/numpy/accumulate.py): running maxima and minima bit for bit NumPy's (NaN,
infinities, signed zeros, ties), int64 sums exact, float sums within NumPy's own rounding
(data far from zero included), for every axis, reverse scans and tails shorter than a block;
small, narrow or strided operands keep NumPy's loop; and programs whose gradients run the
kernels match NumPy and central differences."""
from __future__ import annotations

import math

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.backends.numpy.accumulate import LOWERINGS, MIN_ROW, blocked
from vecgrad.ir import Aval

R = np.random.default_rng(26)
REFS = {"cumsum": np.cumsum, "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}
SHAPES = [((300, 40), 0), ((999, 32), 0), ((97, 5, 33), 0), ((6, 250, 40), 1), ((130, 64), 0)]


def _kernel(name, x, axis, reverse=False):
    kw = {"reverse": reverse} if name == "cumsum" else {}
    return LOWERINGS[name].lower([Aval(x.shape, x.dtype)], axis=axis, **kw)


def _numpy(name, x, axis, reverse=False):
    if reverse:
        return np.flip(REFS[name](np.flip(x, axis), axis=axis), axis)
    return REFS[name](x, axis=axis)


def _special(shape, dtype):
    vals = np.array([-0.0, 0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 0.5], dtype)
    return R.choice(vals, size=shape, p=[.3, .3, .1, .1, .02, .06, .06, .06]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("shape,axis", SHAPES)
def test_extremes_bit_for_bit(dtype, name, shape, axis):
    for x in (R.integers(-50, 50, shape).astype(dtype),
              *([_special(shape, dtype), R.standard_normal(shape).astype(dtype)]
                if np.dtype(dtype).kind == "f" else [])):
        got, want = _kernel(name, x, axis)(x), _numpy(name, x, axis)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", SHAPES)
def test_int64_sums_exact(shape, axis, reverse):
    x = R.integers(-2**40, 2**40, shape)
    np.testing.assert_array_equal(_kernel("cumsum", x, axis, reverse)(x),
                                  _numpy("cumsum", x, axis, reverse))


@pytest.mark.parametrize("offset", [0.0, 1e4, 1e8])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", SHAPES)
def test_float_sums_within_numpys_rounding(shape, axis, reverse, dtype, offset):
    """The largest error against the exact sums (math.fsum) is within twice NumPy's loop's
    largest, up to a few units of the last place of the largest sum."""
    x = (R.standard_normal(shape) + offset).astype(dtype)
    got = _kernel("cumsum", x, axis, reverse)(x)
    want = _numpy("cumsum", x, axis, reverse)
    assert got.dtype == want.dtype and got.shape == want.shape
    xs = np.moveaxis(x.astype(np.float64), axis, 0)
    xs = xs[::-1] if reverse else xs
    exact = np.array([[math.fsum(c) for c in xs[:t + 1].reshape(t + 1, -1).T]
                      for t in range(0, len(xs), 7)])
    pick = slice(None, None, -1) if reverse else slice(None)
    g = np.moveaxis(got, axis, 0)[pick][::7].reshape(exact.shape)
    w = np.moveaxis(want, axis, 0)[pick][::7].reshape(exact.shape)
    top = float(np.spacing(dtype(np.abs(exact).max())))
    assert np.abs(g - exact).max() <= 2 * np.abs(w - exact).max() + 8 * top


def test_infinities_and_nan_in_sums():
    x = R.standard_normal((300, 40))
    x[50, 3], x[120, 7], x[200, 7], x[10, 9] = np.inf, np.inf, -np.inf, np.nan
    with np.errstate(invalid="ignore"):  # (inf - inf, as NumPy's loop meets it too)
        got, want = _kernel("cumsum", x, 0)(x), np.cumsum(x, axis=0)
    for test in (np.isnan, np.isposinf, np.isneginf):
        np.testing.assert_array_equal(test(got), test(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [64, 65, 79, 128, 131])
def test_tails_and_block_lengths(n):
    x = R.standard_normal((n, 200))
    for L in (4, 7, 16, n // 4):
        out = np.empty_like(x)
        blocked(np.maximum, x, out, L)
        np.testing.assert_array_equal(out, np.maximum.accumulate(x, axis=0))
        blocked(np.add, x, out, L)
        np.testing.assert_allclose(out, np.cumsum(x, axis=0), rtol=1e-12, atol=1e-12)


def test_small_narrow_and_strided_operands_keep_numpys_loop():
    for shape, axis in [((63, 200), 0), ((100, 50), 0), ((2000, MIN_ROW - 1), 0),
                        ((40, 999), 1)]:
        x = R.standard_normal(shape)
        fn = _kernel("cumsum", x, axis)
        np.testing.assert_array_equal(fn(x), np.cumsum(x, axis=axis))
    x = R.standard_normal((400, 80))
    fn = _kernel("cummax", x[:, ::2], 0)
    np.testing.assert_array_equal(fn(x[:, ::2]), np.maximum.accumulate(x[:, ::2], axis=0))
    fn = _kernel("cumsum", x.T.T, 0)  # (a transposed view is not C-contiguous)
    np.testing.assert_array_equal(fn(np.asfortranarray(x)), np.cumsum(x, axis=0))


def _running_stats(X):
    """A running mean (a cumsum), a running maximum and minimum, read at every step."""
    m = vnp.zeros(X.shape[1])
    hi, lo = X[0], X[0]
    total = 0.0
    for t in range(X.shape[0]):
        m = m + (X[t] - m) / (t + 1)
        hi = np.maximum(hi, X[t])
        lo = np.minimum(lo, X[t])
        total = total + np.sum((X[t] - m) ** 2) + np.sum(hi * lo)
    return total


def _running_stats_np(X):
    m = np.cumsum(X, axis=0) / np.arange(1, X.shape[0] + 1)[:, None]
    hi, lo = np.maximum.accumulate(X, axis=0), np.minimum.accumulate(X, axis=0)
    return np.sum((X - m) ** 2) + np.sum(hi * lo)


@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_program_value_and_gradient(offset):
    X = R.standard_normal((200, 48)) + offset
    value, g = vg.value_and_grad(_running_stats)(X)
    assert np.isclose(value, _running_stats_np(X), rtol=1e-9)
    assert np.isclose(value, _running_stats(X), rtol=1e-9)  # NumPy running the loop
    for _ in range(3):
        d = R.standard_normal(X.shape)
        eps = 1e-6 * max(1.0, offset)
        num = (_running_stats_np(X + eps * d) - _running_stats_np(X - eps * d)) / (2 * eps)
        assert np.isclose(np.sum(g * d), num, rtol=1e-6, atol=1e-6 * abs(value))


@pytest.mark.parametrize("axis", [0, 1])
def test_cumsum_call_gradient_any_axis(axis):
    X = R.standard_normal((7, 150, 40))

    def f(x):
        return vnp.sum(vnp.cumsum(x, axis=axis) ** 2)
    g = vg.grad(f)(X)
    c = np.cumsum(X, axis=axis)
    want = 2 * np.flip(np.cumsum(np.flip(c, axis), axis=axis), axis)
    np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-10)
