"""A window filter's cotangent, sum over windows t of g[t] * x[s*t : s*t + k], is one product
over the windows' view at every trip count: it was split into one k-vector product per window
(a graph growing with the number of windows up to batch/windows.py's MAX_OFFSETS, 64), and
only past 64 windows became one product. Each variant: the final gradient graph has the same
number of equations at 6, 20, 40 and 90 windows; batched equals unbatched and the gradient
equals central differences (float64, random directions)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad.numpy as vnp


def accumulate(x, w, s=3):
    # out[t] += w[j] * x[s*t + j], tap by tap into a buffer (the fuzzer's reproducer)
    k = w.shape[0]
    n = (x.shape[0] - k) // s + 1
    out = vnp.zeros(n)
    for t in range(n):
        for j in range(k):
            out[t] += w[j] * x[s * t + j]
    return vnp.sum(vnp.tanh(out))


def window_dot(x, w, s=2):
    k = w.shape[0]
    ys = [vnp.sum(x[t:t + k] * w) for t in range(0, x.shape[0] - k + 1, s)]
    return vnp.sum(vnp.stack(ys) ** 2)


def window_matvec(x, w):
    # windows of a (n, c) signal against a (k, c) filter, a 1-D convolution with channels
    k = w.shape[0]
    ys = [vnp.sum(x[t:t + k] * w) for t in range(x.shape[0] - k + 1)]
    return vnp.sum(vnp.sin(vnp.stack(ys)))


def dilated(x, w):
    k = w.shape[0]
    span = 2 * (k - 1) + 1
    total = 0.0
    for t in range(0, x.shape[0] - span + 1, 2):
        total = total + vnp.exp(-vnp.dot(x[t:t + span:2], w) ** 2)
    return total


# (program, x's shape for n windows, w's shape)
CASES = [
    ("accumulate", accumulate, lambda n: (3 * (n - 1) + 4,), (4,)),
    ("window_dot", window_dot, lambda n: (2 * (n - 1) + 5,), (5,)),
    ("window_matvec", window_matvec, lambda n: (n + 2, 2), (3, 2)),
    ("dilated", dilated, lambda n: (2 * (n - 1) + 7,), (4,)),
]


@pytest.mark.parametrize("name,f,xshape,wshape", CASES, ids=[c[0] for c in CASES])
def test_filter_cotangent_size_does_not_grow_with_windows(name, f, xshape, wshape):
    sizes = {}
    for n in (6, 20, 40, 90):
        r = rng(n)
        args = (r.standard_normal(xshape(n)), 0.5 * r.standard_normal(wshape))
        e = check(f, args, (0, 1), fd=n <= 20)
        sizes[n] = len(e.stages["final"].eqns)
    assert len(set(sizes.values())) == 1, sizes


def test_filter_cotangent_matches_numpy():
    # the filter cotangent of `accumulate` by hand: sum_t (1 - tanh(y_t)^2) x[3t + j]
    r = rng(3)
    x, w = r.standard_normal(3 * 29 + 4), r.standard_normal(4)
    import vecgrad as vg
    gx, gw = vg.grad(accumulate, argnums=(0, 1))(x, w)
    win = np.lib.stride_tricks.sliding_window_view(x, 4)[::3]
    d = 1 - np.tanh(win @ w) ** 2
    np.testing.assert_allclose(gw, d @ win, rtol=1e-12)
    ref = np.zeros_like(x)
    for j in range(4):
        ref[j:j + 3 * len(d):3] += d * w[j]
    np.testing.assert_allclose(gx, ref, rtol=1e-12, atol=1e-15)
