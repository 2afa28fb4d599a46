"""vecgrad.numpy.lib.stride_tricks.sliding_window_view: NumPy's values, shapes, errors and
read-only view semantics, gradients against central differences, and batching over a loop."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_numpy_api import check

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import ReadOnlyError

R = np.random.default_rng(0)
X1, X2, X3 = R.standard_normal(11), R.standard_normal((5, 7)), R.standard_normal((3, 4, 6))


def swv(xp, *a, **kw):
    return xp.lib.stride_tricks.sliding_window_view(*a, **kw)


@pytest.mark.parametrize("x, window, axis", [
    (X1, 3, None), (X1, 1, None), (X1, 11, None), (X1, (4,), 0), (X1, 2, -1),
    (X2, (2, 3), None), (X2, 3, 1), (X2, 2, 0), (X2, (2, 2), (1, 1)), (X2, (3, 2), (1, 0)),
    (X3, (2, 3), (-1, 1)), (X3, 1, 2), (X3, (2, 2, 2), None), (X3, (2, 3), (2, 2)),
], ids=lambda v: str(v) if not isinstance(v, np.ndarray) else f"x{v.ndim}")
def test_values_shapes_and_gradients_as_numpy(x, window, axis):
    w = R.standard_normal(np.lib.stride_tricks.sliding_window_view(x, window, axis).shape)
    check(lambda xp, x: swv(xp, x, window, axis) * w, x)
    # reductions and products over the window axes, as windowed code uses them
    check(lambda xp, x: xp.sum(swv(xp, x, window, axis) ** 2, axis=-1), x)


def test_plain_numpy_call_on_a_traced_array_dispatches():
    def f(x):
        return np.sum(np.lib.stride_tricks.sliding_window_view(x, 4) @ np.arange(4.0))

    np.testing.assert_allclose(vg.jit(f)(X1), f(X1), rtol=1e-12)
    np.testing.assert_allclose(vg.grad(f)(X1), np.convolve(np.ones(8), np.arange(4.0)),
                               rtol=1e-12)


@pytest.mark.parametrize("use", [
    lambda w: w.reshape(-1), lambda w: w.ravel(), lambda w: w.T.copy(), lambda w: w[::2, 1:],
    lambda w: w.reshape(w.shape[0], -1), lambda w: w.flatten(),
])
def test_reshapes_copy_where_numpy_copies(use):
    check(lambda xp, x: use(swv(xp, x, (2, 3))), X2)


def test_read_only_like_numpy():
    with pytest.raises(ValueError):  # NumPy: assignment destination is read-only
        swv(np, X1, 3)[0, 0] = 1.0

    def f(x):
        w = vnp.lib.stride_tricks.sliding_window_view(x, 3)
        w[0] = 0.0
        return vnp.sum(w)

    with pytest.raises(ReadOnlyError, match="sliding_window_view"):
        vg.jit(f)(X1)
    with pytest.raises(vg.UnsupportedError, match="writeable=True"):
        vg.jit(lambda x: vnp.lib.stride_tricks.sliding_window_view(x, 3, writeable=True))(X1)


@pytest.mark.parametrize("window, axis, message", [
    (-1, None, "cannot contain negative values"),
    (12, None, "window shape cannot be larger than input array shape"),
    ((2, 2), None, "must provide window_shape for all dimensions"),
    ((2, 2), 0, "Must provide matching length window_shape and axis"),
])
def test_errors_as_numpy(window, axis, message):
    with pytest.raises(ValueError, match=message):
        swv(np, X1, window, axis)
    with pytest.raises(ValueError, match=message):
        vg.jit(lambda x: swv(vnp, x, window, axis))(X1)


def test_windows_of_each_row_in_a_loop_batch():
    """One window view per row, in a Python loop: batched equals unbatched, and both equal
    central differences."""
    k = R.standard_normal(3)

    def f(x):
        tot = 0.0
        for r in range(x.shape[0]):
            tot = tot + vnp.sum(vnp.tanh(vnp.lib.stride_tricks.sliding_window_view(x[r], 3) @ k))
        return tot

    check_batched(f, (X2,))
