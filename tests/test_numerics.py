"""Gradients at the edges of a primitive's domain: x ** y at x = 0."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check

import vecgrad as vg
import vecgrad.numpy as vnp


def test_polynomial_features_gradient_at_zero_is_finite():
    def f(x):
        return vnp.sum(x[:, None] ** np.arange(4) * np.array([1.0, 2.0, 3.0, 4.0]))
    x = np.array([0.0, 0.5, -1.5, 0.0])
    g = vg.grad(f)(x)
    np.testing.assert_allclose(g, 2 + 6 * x + 12 * x ** 2)  # d/dx (1 + 2x + 3x^2 + 4x^3)
    central_diff_check(f, [x])


@pytest.mark.parametrize("y", [0, 1, 2, 3, 1.0, 2.0, 2.5])
@pytest.mark.parametrize("form", ["scalar", "array", "traced"])
def test_pow_gradient_at_zero_base(y, form):
    """x ** y at x = 0: d/dx is y * 0 ** (y - 1) (0 for y = 0 or y > 1, 1 for y = 1), the
    limit of the central difference; never nan."""
    x = np.array([0.0, 0.0, 0.7, -1.3]) if float(y).is_integer() else np.array([0.0, 0.7])
    yy = np.full(x.shape, float(y))

    def f(x, yv):
        e = y if form == "scalar" else (np.full(x.shape, y) if form == "array" else yv)
        return vnp.sum(x ** e * np.arange(1.0, x.size + 1))
    g = vg.grad(f)(x, yy)
    with np.errstate(all="ignore"):  # (the reference formula itself divides by zero)
        d = y * np.abs(x) ** (y - 1) * np.sign(x) ** (y - 1)
    want = np.where(x == 0, 1.0 if y == 1 else 0.0, d) * np.arange(1.0, x.size + 1)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, want, atol=1e-12)
    if float(y).is_integer():  # (x ** 2.5 has no central difference at 0: nan for x < 0)
        central_diff_check(lambda x: f(x, yy), [x], rtol=1e-5)


def test_pow_exponent_gradient_at_zero_base_and_negative_base():
    """d/dy x ** y = log(x) x ** y: 0 at x = 0 (its limit for y > 0), nan for x < 0, where
    x ** y is not differentiable in y (as JAX and autograd)."""
    x = np.array([0.0, 2.0, -2.0])
    with np.errstate(invalid="ignore"):
        g = vg.grad(lambda y: vnp.sum(x ** y), argnums=0)(np.array([1.5, 1.5, 2.0]))
    np.testing.assert_allclose(g[:2], [0.0, np.log(2.0) * 2.0 ** 1.5])
    assert np.isnan(g[2])


def test_pow_of_zero_to_traced_exponent():
    g = vg.grad(lambda y: vnp.sum(0.0 ** y))(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, 0.0)
