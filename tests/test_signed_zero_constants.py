"""Constants that mix 0.0 and -0.0 are not one value (rewrite/identities.uniform_operand).

The rule that makes a constant of equal elements one 0-d constant compared them with ==, so
[0.0, -0.0, 0.0] became the scalar 0.0, and arctan2, copysign and 1 / x gave other numbers
than NumPy's (a silent wrong answer on main: 18.85 against 12.57 for the loop below)."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
from vecgrad.config import config


def arctan2_const(x):
    return np.sum(np.arctan2(np.array([0.0, -0.0, 0.0]), x))


def copysign_rows(X):
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.copysign(x, np.array([-0.0, 0.0, 0.0, -0.0])) * x)
    return tot


def reciprocal_signs(X):
    with np.errstate(divide="ignore"):
        inv = 1.0 / np.array([0.0, 0.0, -0.0, 0.0])
    return sum(np.sum(np.tanh(inv) * x) for x in X)


def alternating_zero_rows(X):
    tot = 0.0
    for k, x in enumerate(X):
        z = np.zeros(4) if k % 2 else -np.zeros(4)
        tot = tot + np.sum(np.arctan2(z, x) * x)
    return tot


@pytest.mark.parametrize("f", [arctan2_const, copysign_rows, reciprocal_signs,
                               alternating_zero_rows])
def test_signed_zeros_as_numpy(f):
    X = np.random.default_rng(5).standard_normal((5, 4))
    x = X[0, :3] if f is arctan2_const else X
    np.testing.assert_allclose(vg.jit(f)(x), f(x), rtol=1e-12, atol=0)
    if f is not arctan2_const:  # (its derivative at x < 0, on the branch cut: not smooth)
        vg.check_grads(f, (x,), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("value", [2.0, 0.0, -0.0])
def test_equal_elements_still_one_constant(value):
    def f(x):
        return np.arctan2(np.full(3, value), x)
    with config(keep_stages=True):
        e, _ = vg.jit(f).entry(np.ones(3))
    consts = [a for q in e.stages["final"].eqns for a in q.inputs
              if type(a).__name__ == "Const"]
    assert [a.value.ndim for a in consts] == [0]
    assert np.signbit(consts[0].value) == np.signbit(value)
    x = -np.arange(1.0, 4.0)
    np.testing.assert_array_equal(vg.jit(f)(x), f(x))
