"""A reduction of windows (or patches) over axes that run along whole axes of the windowed
array (the channels of windows of rows) reduces the array once and windows the result
(batch/windows.py reduce_of_view_rows): values and gradients equal central differences
(float64, random directions) and the unbatched graph's; partial axes are left alone."""
from __future__ import annotations

import pytest
from test_batch import check, entry, rng

import vecgrad.numpy as vnp
from vecgrad import primitives as P


def window_norms(k, dilation=1, step=1, red="sum"):
    # each row's score against the norms of the k rows before it (dilated, strided)
    def f(X):
        total = 0.0
        span = (k - 1) * dilation + 1
        for t in range(span, X.shape[0], step):
            W = X[t - span:t:dilation]
            if red == "sum":
                n = vnp.sqrt(vnp.sum(W * W, axis=1))
            elif red == "max":
                n = vnp.max(vnp.abs(W), axis=1)
            else:
                n = vnp.min(W * W + 1.0, axis=1)
            total = total + vnp.sum(vnp.tanh(W @ X[t]) / n)
        return total
    return f


@pytest.mark.parametrize("k, dilation, step, red", [
    (3, 1, 1, "sum"), (4, 2, 1, "sum"), (3, 1, 2, "sum"), (3, 1, 1, "max"), (5, 1, 1, "min"),
])
def test_window_reductions_over_whole_rows(k, dilation, step, red):
    X = rng(k + dilation + step).standard_normal((30, 6)) + 0.1
    check(window_norms(k, dilation, step, red), (X,))
    e, _ = entry(window_norms(k, dilation, step, red), (X,), 0)
    reds = [q for q in e.stages["final"].eqns
            if q.prim in (P.reduce_sum, P.reduce_max, P.reduce_min) and q.inputs[0].aval.ndim == 3]
    assert not reds  # no reduction over the (windows, k, channels) view


def test_patch_channel_sums():
    # 2 x 2 patches of a channels-last image, each patch's pixels summed over the channels
    def f(F):
        total = 0.0
        for i in range(F.shape[0] - 1):
            for j in range(F.shape[1] - 1):
                total = total + vnp.sum(vnp.tanh(vnp.sum(F[i:i + 2, j:j + 2] ** 2, axis=2)))
        return total
    check(f, (rng(3).standard_normal((7, 8, 3)),))


def test_partial_rows_are_left_alone():
    # the sum runs over half the channels: not a whole axis of X
    def f(X):
        total = 0.0
        for t in range(3, X.shape[0]):
            total = total + vnp.sum(vnp.sqrt(vnp.sum(X[t - 3:t, :3] ** 2, axis=1) + 1.0))
        return total
    check(f, (rng(4).standard_normal((20, 6)),))
