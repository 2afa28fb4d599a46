"""The NumPy backend's float64 scatter_add_along (backends/numpy/gathers.py): 1-D at every
size and N-d with its off-axis positions computed once give the impl's result bit for bit
(the same additions in the same order), wrap negative positions, and raise IndexError on
positions out of bounds as the impl does."""
from __future__ import annotations

import numpy as np
import pytest

from vecgrad.backends.numpy.gathers import _scatter_add_along as lowered
from vecgrad.ir import Aval
from vecgrad.primitives.sorting import _scatter_add_along as impl

CASES = [((1,), (1,), 0, 64), ((7,), (7,), 0, 3), ((2, 1), (2, 1), 1, 64), ((3, 4), (3, 4), 0, 5),
         ((3, 1), (3, 4), 1, 6), ((1, 4), (3, 4), 0, 7), ((2, 3, 1), (2, 3, 4), 2, 9),
         ((2, 1, 3), (1, 4, 3), 1, 5), ((1, 2), (5, 2), 0, 3), ((40, 30), (40, 30), 1, 30)]


@pytest.mark.parametrize("gs,ish,axis,size", CASES)
def test_lowered_scatter_is_the_impl(gs, ish, axis, size):
    r = np.random.default_rng(len(gs) + size)
    g, idx = r.standard_normal(gs), r.integers(-size, size, ish)
    f = lowered([Aval(g.shape, g.dtype), Aval(idx.shape, idx.dtype)], axis=axis, size=size)
    got, want = f(g, idx), impl(g, idx, axis=axis, size=size)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want)
    bad = idx.copy()
    bad.flat[-1] = size
    with pytest.raises(IndexError):
        f(g, bad)
    bad.flat[-1] = -size - 1
    with pytest.raises(IndexError):
        f(g, bad)
