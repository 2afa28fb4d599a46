"""Python numbers in traced operations (`x[i] * 2.0` in a loop) become constants shared by
value (ir.number_const): the values, dtypes and signed zeros must be NumPy's, whatever number
was seen before with another dtype or sign."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
from vecgrad.ir import Const, number_const


def _loop(c):
    def f(x):
        out = x[0] * c
        for i in range(1, len(x)):
            out = out + x[i] * c - c * x[i - 1]
        return out
    return f


@pytest.mark.parametrize("c", [2.0, 2, -0.0, 0.0, float("nan"), float("inf"), True, 1, 1.0,
                               3 + 0j, 0.5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8])
def test_a_number_in_a_loop_is_numpys(c, dtype):
    x = (np.arange(1, 7) * 3).astype(dtype)
    with np.errstate(all="ignore"):
        want = _loop(c)(x)
        got = vg.jit(_loop(c))(x)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)
    assert np.signbit(np.real(got)) == np.signbit(np.real(want))


def test_signed_zeros_keep_their_sign():
    x = np.array([1.0, 2.0])
    for c in (0.0, -0.0, 0.0):
        got = vg.jit(lambda x, c=c: x * c)(x)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(x * c))


def test_one_value_per_dtype_and_type():
    f64, f32 = np.dtype(np.float64), np.dtype(np.float32)
    a = number_const(2.0, [f64])
    b = number_const(2.0, [f32])
    c = number_const(2, [np.dtype(np.int64)])
    d = number_const(True, [np.dtype(np.int64)])
    assert (a.aval.dtype, b.aval.dtype, c.aval.dtype) == (f64, f32, np.dtype(np.int64))
    assert d.value.dtype == np.int64 and c is not d
    again = number_const(2.0, [f64])
    assert isinstance(again, Const) and again is not a  # (batching tells operands apart by
    assert again.value is a.value and again.key() == a.key()  # identity: a new Const each)
    assert not again.value.flags.writeable
    with pytest.raises(ValueError):
        again.value[...] = 3.0


def test_zeros_and_nans_are_made_afresh():
    f64 = [np.dtype(np.float64)]
    for x in (0.0, -0.0, float("nan"), 0, 1j):
        assert number_const(x, f64).value is not number_const(x, f64).value
