"""x ** 0.5 (and the derivative of x ** 1.5) runs as np.sqrt for float32 and float64: bit for
bit NumPy's np.power(x, 0.5), signed zeros, infinities and NaNs included; other dtypes keep
np.power (float16's -0.0 ** 0.5 is +0.0)."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
from vecgrad.primitives.elementwise import _powc


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_half_power_is_numpys_bit_for_bit(dtype):
    x = (np.random.default_rng(0).random(1000) * 100).astype(dtype)
    x[:6] = [-0.0, 0.0, np.inf, -np.inf, np.nan, -1.0]
    with np.errstate(invalid="ignore"):
        got, want = _powc(x, 0.5), np.power(x, 0.5)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_gradient_of_power_one_and_a_half():
    x = np.random.default_rng(1).random(7) + 0.1
    vg.check_grads(lambda x: np.sum(np.abs(x) ** 1.5), (x,), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(vg.jit(lambda x: x ** 0.5)(x), x ** 0.5)
