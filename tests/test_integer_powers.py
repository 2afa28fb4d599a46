"""x ** p for small integer p (3..8) on real floats runs by squaring (primitives/elementwise.py,
as lax.integer_pow does): the C library's pow took microseconds per element for a negative
base. Same values as np.power within a few roundings, the same inf, nan and signed zeros, the
same dtypes; integers and other exponents still go to np.power; gradients as before."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


@pytest.mark.parametrize("p", [3, 4, 5, 6, 7, 8, 3.0, 8.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_as_np_power(p, dtype):
    x = (rng(int(p)).standard_normal((7, 9)) * 3).astype(dtype)
    got = P.powc.impl(x, p=p)
    assert got.dtype == np.power(x, p).dtype == dtype
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(got, np.power(x, p), rtol=4 * eps, atol=0)


@pytest.mark.parametrize("p", [3, 4, 5, 8])
def test_special_values_as_np_power(p):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e200, -1e200, 1e-200, -1e-200, 1.0,
                  -1.0])
    with np.errstate(all="ignore"):
        got, want = P.powc.impl(x, p=p), np.power(x, p)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()


def test_zero_d_and_other_exponents_and_integers_keep_np_power():
    np.testing.assert_allclose(P.powc.impl(np.float64(-1.5), p=3), -3.375, rtol=1e-15)
    x = rng().standard_normal(11)
    for p in (1.5, -3, 9, 2.5, 0, 1):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(P.powc.impl(np.abs(x) + 0.1, p=p),
                                          np.power(np.abs(x) + 0.1, p))
    n = np.arange(-5, 6)
    out = P.powc.impl(n, p=3)
    assert out.dtype == n.dtype
    np.testing.assert_array_equal(out, n ** 3)


def cubic_energy(X, w):
    return vnp.sum(w * X ** 3 - 0.25 * X ** 4)


def rows_to_the_fifth(X):
    return sum(vnp.sum(x ** 5) / (i + 1) for i, x in enumerate(X))


@pytest.mark.parametrize("f,make,argnums", [
    (cubic_energy, lambda r: (r.standard_normal((12, 5)), r.standard_normal(5)), (0, 1)),
    (rows_to_the_fifth, lambda r: (r.standard_normal((9, 4)),), 0)])
def test_gradients_batched_and_central_differences(f, make, argnums):
    args = make(rng(4))
    check(f, args, argnums)
    X = args[0]
    want = 3 * args[1] * X ** 2 - X ** 3 if f is cubic_energy else \
        5 * X ** 4 / np.arange(1, len(X) + 1)[:, None]
    g = vg.grad(f, argnums=argnums)(*args)
    np.testing.assert_allclose(g[0] if isinstance(g, tuple) else g, want, rtol=1e-13)
