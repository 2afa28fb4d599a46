"""The NumPy backend's `strided` view (backends/numpy/gathers.py `_strided_lower`): one
np.ndarray call on a row-major operand's buffer, equal to the reference impl's view for
windows, patches, reversed and broadcast axes, read-only as it; other operands take the
impl. And a windowed program through it, batched equal to unbatched with central
differences."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad.numpy as vnp
from vecgrad.backends.numpy.gathers import _strided_lower
from vecgrad.ir import Aval
from vecgrad.primitives.gathers import _strided_impl

VIEWS = [
    # sliding windows of a (T, C) array
    ((30, 4), (0, 0), ((26, (1, 0)), (5, (1, 0)), (4, (0, 1)))),
    # strided, dilated windows from an offset
    ((40, 3), (2, 1), ((9, (4, 0)), (3, (2, 0)), (2, (0, 1)))),
    # 2-D patches of (H, W, C)
    ((9, 10, 2), (0, 0, 0), ((7, (1, 0, 0)), (8, (0, 1, 0)), (3, (1, 0, 0)), (3, (0, 1, 0)),
                             (2, (0, 0, 1)))),
    # windows read backwards
    ((20, 3), (19, 0), ((15, (-1, 0)), (5, (-1, 0)), (3, (0, 1)))),
    # a broadcast (step-0) axis and a 1-D base
    ((12,), (3,), ((4, (0,)), (6, (1,)))),
]


@pytest.mark.parametrize("shape,start,dims", VIEWS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_strided_view_equals_impl(shape, start, dims, dtype):
    x = (np.arange(int(np.prod(shape))) % 17).astype(dtype).reshape(shape)
    run = _strided_lower([Aval(shape, np.dtype(dtype))], start=start, dims=dims)
    v, ref = run(x), _strided_impl(x, start, dims)
    assert v.shape == ref.shape and v.dtype == ref.dtype and np.array_equal(v, ref)
    assert not v.flags.writeable and np.shares_memory(v, x)
    # not row-major (a transposed operand of the same shape): the impl's view
    y = np.asfortranarray(x)
    assert np.array_equal(run(y), _strided_impl(y, start, dims))


def test_strided_view_of_empty_and_other_dtype():
    run = _strided_lower([Aval((4, 3), np.dtype(np.float64))], start=(0, 0),
                         dims=((2, (1, 0)), (3, (1, 0)), (3, (0, 1))))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)  # (a narrower dtype at run time)
    assert np.array_equal(run(x), _strided_impl(x, (0, 0), ((2, (1, 0)), (3, (1, 0)),
                                                            (3, (0, 1)))))
    e = _strided_lower([Aval((0, 3), np.dtype(np.float64))], start=(0, 0),
                       dims=((0, (1, 0)), (3, (0, 1))))
    assert e(np.zeros((0, 3))).shape == (0, 3)


def row_strided_patches(p, s):
    # p x p patches at stride s down the rows and 1 across, each against its maximum
    def f(img):
        out = []
        for i in range((img.shape[0] - p) // s + 1):
            out.append(vnp.stack([vnp.sum(vnp.sin(w - vnp.max(w)) * w) for w in
                                  [img[s * i:s * i + p, j:j + p]
                                   for j in range(img.shape[1] - p + 1)]]))
        return vnp.sum(vnp.stack(out) ** 2)
    return f


@pytest.mark.parametrize("p,s", [(3, 1), (2, 2)])
def test_patch_program_through_the_view(p, s):
    check(row_strided_patches(p, s), (rng(8).standard_normal((9, 11)),), 0)
