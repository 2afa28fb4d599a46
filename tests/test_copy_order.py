"""Copies that the generated NumPy code makes (backends/numpy/codegen.py `copy`): a copy of a
broadcast array is row-major, so the passes over it and its reductions walk memory in order;
other copies keep their source's memory order. Batched equals unbatched, gradients equal
central differences (float64, random directions)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad.numpy as vnp
from vecgrad.backends.numpy.codegen import copy


def test_copy_of_broadcast_is_row_major():
    b = np.broadcast_to(np.arange(12.0).reshape(1, 4, 3), (5, 4, 3))
    c = copy(b)
    assert c.flags.c_contiguous and c.flags.owndata and np.array_equal(c, b)
    # a transposed view keeps its memory order (a straight copy)
    t = np.arange(12.0).reshape(3, 4).T
    d = copy(t)
    assert d.flags.f_contiguous and not d.flags.c_contiguous and np.array_equal(d, t)
    # a 0-d array and a one-element broadcast
    assert copy(np.float64(2.0)) == 2.0
    assert copy(np.broadcast_to(np.ones(1), (1, 1))).shape == (1, 1)


def softmax_pool(k):
    # the window's own softmax weights pool it: its cotangent adds per-tap slabs onto a
    # broadcast term, a buffer that codegen copies before writing into it
    def f(x):
        out = []
        for t in range(x.shape[0] - k + 1):
            w = x[t:t + k]
            a = vnp.exp(2.0 * (w - vnp.max(w, axis=0)))  # (a sharper softmax, of tanh(w))
            out.append(vnp.sum(a * vnp.tanh(w), axis=0) / vnp.sum(a, axis=0))
        return vnp.sum(vnp.stack(out) ** 2)
    return f


@pytest.mark.parametrize("k,C", [(2, 1), (5, 8), (4, 3)])
def test_softmax_pool_windows(k, C):
    check(softmax_pool(k), (rng(k).standard_normal((30, C)),), 0)
