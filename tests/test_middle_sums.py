"""Sums over middle axes in the NumPy backend (backends/numpy/reductions.middle_sum): the
einsum walk where the kept last axis is short, the slices added in place for a pooling's
block axes; equal to np.sum on contiguous arrays, slices and transposed views, float64 and
float32; NumPy's reduce where it is as good."""
from __future__ import annotations

import numpy as np
import pytest

from vecgrad.backends.numpy.reductions import middle_sum
from vecgrad.ir import Aval


@pytest.mark.parametrize("shape, axes", [
    ((300, 7, 16), (1,)), ((64, 3, 5, 8), (1, 2)), ((80, 6, 4, 3), (1,)),
    ((12, 2, 12, 2, 12, 2), (1, 3, 5)), ((32, 3, 64, 3), (1, 3)), ((4, 50, 2, 30, 2), (2, 4)),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_middle_sums_equal_numpy(shape, axes, dtype):
    r = np.random.default_rng(1)
    fn = middle_sum(Aval(shape, np.dtype(dtype)), axes)
    assert fn is not None
    x = r.standard_normal(shape).astype(dtype)
    big = r.standard_normal(tuple(n + 2 for n in shape)).astype(dtype)
    view = big[tuple(slice(1, n + 1) for n in shape)]  # (not contiguous)
    flipped = np.asfortranarray(x)  # (stored in the other order)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for a in (x, view, flipped):
        got = fn(a)
        assert got.dtype == dtype and got.shape == np.sum(a, axis=axes).shape
        np.testing.assert_allclose(got, np.sum(a.astype(np.float64), axis=axes), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("shape, axes", [
    ((300, 7, 64), (1,)),  # a long kept last axis: NumPy's reduce is as good
    ((300, 7, 16), (2,)),  # the last axis alone (row_sum's case)
    ((300, 7, 16), (0, 1)),  # leading axes (column_sum's case)
    ((300, 2, 2, 2), (1, 2, 3)),  # a trailing block: one inner loop
    ((10, 7, 16), (1,)),  # small: the call costs more than it saves
    ((64, 6, 64, 6), (1, 3)),  # 36 reduced positions: too many slices
])
def test_no_middle_sum_where_numpys_reduce_is_as_good(shape, axes):
    assert middle_sum(Aval(shape, np.dtype(np.float64)), axes) is None


def test_no_middle_sum_for_integers():
    assert middle_sum(Aval((300, 7, 16), np.dtype(np.int64)), (1,)) is None
