"""Elementwise work on overlapping windows runs in the windows' memory order (batch/taps.py):
`x[t:t+k] - mean(x[t:t+k])` batched is a (n, k, C) view walked in runs of C elements; read
tap-major, (k, n, C), it is k runs of n * C, and the transpose back vanishes into the sums
after it (rewrite/layout.py moves it through elementwise work with broadcast operands).
Batched equals unbatched, gradients equal central differences (float64, random directions)."""
from __future__ import annotations

import pytest
from test_batch import check, rng

import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.batch.taps import run_order
from vecgrad.ir import pretty


def clipped(k, c=0.7):
    def f(x):
        total = 0.0
        for t in range(x.shape[0] - k + 1):
            w = x[t:t + k]
            total = total + vnp.sum(vnp.clip(w - vnp.mean(w, axis=0), -c, c) ** 2)
        return total
    return f


def standardized(k):
    # two broadcast operands: the window's mean and its standard deviation
    def f(x):
        total = 0.0
        for t in range(x.shape[0] - k + 1):
            w = x[t:t + k]
            z = (w - vnp.mean(w, axis=0)) / vnp.sqrt(vnp.var(w, axis=0) + 1.0)
            total = total + vnp.sum(vnp.tanh(z) * z)
        return total
    return f


def dilated(k, d):
    def f(x):
        total = 0.0
        span = (k - 1) * d + 1
        for t in range(x.shape[0] - span + 1):
            w = x[t:t + span:d]
            total = total + vnp.sum((w - vnp.max(w, axis=0)) ** 2)
        return total
    return f


def reversed_windows(k):
    # each window read backwards, weighted by a per-channel scale
    def f(x, s):
        total = 0.0
        for t in range(k, x.shape[0]):
            w = x[t:t - k:-1]
            total = total + vnp.sum(vnp.exp(-(w - w[0]) ** 2) * s)
        return total
    return f


def batch_axis(k):
    # windows along the middle axis of (B, T, C)
    def f(x):
        total = 0.0
        for t in range(x.shape[1] - k + 1):
            w = x[:, t:t + k]
            total = total + vnp.sum(vnp.abs(w - vnp.mean(w, axis=1, keepdims=True)))
        return total
    return f


def patches(p):
    # 2-D patches centred on their mean: inner runs of one patch row, p, become image rows
    def f(img):
        total = 0.0
        for i in range(img.shape[0] - p + 1):
            for j in range(img.shape[1] - p + 1):
                w = img[i:i + p, j:j + p]
                total = total + vnp.sum(vnp.log1p((w - vnp.mean(w)) ** 2))
        return total
    return f


def per_window_scale(k):
    # a scalar per window (its own norm) scales the whole window
    def f(x):
        out = []
        for t in range(x.shape[0] - k + 1):
            w = x[t:t + k]
            out.append(vnp.sum(w * w / (1.0 + vnp.sum(w * w))))
        return vnp.sum(vnp.stack(out))
    return f


def max_gap(k, reduce=vnp.max):
    # each window's entries against the window's maximum (or minimum)
    def f(x):
        total = 0.0
        for t in range(x.shape[0] - k + 1):
            w = x[t:t + k]
            total = total + vnp.sum(vnp.log1p((reduce(w, axis=0) - w) ** 2))
        return total
    return f


def window_range(k):
    # max minus min of each window, summed: no elementwise work on the windows at all
    def f(x):
        return vnp.sum(vnp.stack([vnp.max(x[t:t + k], axis=0) - vnp.min(x[t:t + k], axis=0)
                                  for t in range(x.shape[0] - k + 1)]) ** 2)
    return f


CASES = [
    ("clipped_k2_c1", clipped(2), lambda r: (r.standard_normal((30, 1)),), 0),
    ("clipped_k5_c4", clipped(5), lambda r: (r.standard_normal((40, 4)),), 0),
    ("clipped_k7_c16", clipped(7), lambda r: (r.standard_normal((50, 16)),), 0),
    ("standardized_k4", standardized(4), lambda r: (r.standard_normal((35, 6)),), 0),
    ("dilated_k3_d2", dilated(3, 2), lambda r: (r.standard_normal((40, 5)),), 0),
    ("dilated_k4_d3", dilated(4, 3), lambda r: (r.standard_normal((45, 8)),), 0),
    ("reversed_k3", reversed_windows(3),
     lambda r: (r.standard_normal((30, 5)), r.standard_normal(5)), (0, 1)),
    ("batch_axis_k3", batch_axis(3), lambda r: (r.standard_normal((3, 30, 4)),), 0),
    ("patches_p3", patches(3), lambda r: (r.standard_normal((14, 15)),), 0),
    ("per_window_scale_k6", per_window_scale(6), lambda r: (r.standard_normal((40, 3)),), 0),
    ("max_gap_k4", max_gap(4), lambda r: (r.standard_normal((40, 6)),), 0),
    ("min_gap_k6_c1", max_gap(6, vnp.min), lambda r: (r.standard_normal((50, 1)),), 0),
    ("window_range_k5", window_range(5), lambda r: (r.standard_normal((45, 4)),), 0),
]


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_window_elementwise_batched_equals_unbatched(name, f, make, argnums):
    check(f, make(rng(7)), argnums)


@pytest.mark.parametrize("k,C", [(3, 4), (7, 16), (5, 1)])
def test_clipped_windows_run_tap_major(k, C):
    T = 60
    e = check(clipped(k), (rng(3).standard_normal((T, C)),), 0)
    g = e.stages["final"]
    n = T - k + 1
    shapes = {tuple(d for d in x.out.aval.shape if d > 1) for x in g.eqns
              if x.prim.elementwise and x.out.aval.size == n * k * C}
    want, old = tuple(d for d in (k, n, C) if d > 1), tuple(d for d in (n, k, C) if d > 1)
    assert want in shapes and old not in shapes, pretty(g)
    # the windows' cotangent: adds of contiguous tap slices, no position-major view
    adds = [x for x in g.eqns if x.prim is P.strided_add]
    assert adds and all(x.inputs[1].aval.shape[0] == k for x in adds), pretty(g)


@pytest.mark.parametrize("k,C,reduce", [(4, 6, vnp.max), (7, 16, vnp.min), (3, 2, vnp.max)])
def test_window_extremes_reduce_the_tap_axis_first(k, C, reduce):
    T = 60
    e = check(max_gap(k, reduce), (rng(5).standard_normal((T, C)),), 0)
    g = e.stages["final"]
    red = [x for x in g.eqns if x.prim in (P.reduce_max, P.reduce_min)]
    assert red and all(x.inputs[0].aval.shape == (k, T - k + 1, C) and
                       x.params["axes"] == (0,) for x in red), pretty(g)


@pytest.mark.parametrize("shape,dims,want", [
    # (n, k, C) windows of a (T, C) array: tap-major
    ((50, 16), ((44, (1, 0)), (7, (1, 0)), (16, (0, 1))), (1, 0, 2)),
    # strided windows x[2t:2t+k]: each window is one contiguous run already
    ((50, 4), ((20, (2, 0)), (5, (1, 0)), (4, (0, 1))), None),
    # dilated windows x[t:t+2k:2]: the positions merge with the channels
    ((50, 4), ((40, (1, 0)), (5, (2, 0)), (4, (0, 1))), (1, 0, 2)),
    # 2-D patches (i, j, a, b) of an (H, W) image: runs along the image rows
    ((16, 32), ((13, (1, 0)), (29, (0, 1)), (4, (1, 0)), (4, (0, 1))), (0, 2, 3, 1)),
    # ... but not where the image rows are hardly longer than the patch rows
    ((16, 18), ((13, (1, 0)), (15, (0, 1)), (4, (1, 0)), (4, (0, 1))), None),
    # non-overlapping blocks, already in memory order
    ((8, 6), ((4, (2, 0)), (2, (1, 0)), (6, (0, 1))), None),
    # a window axis read backwards stays outside the run
    ((30, 5), ((26, (1, 0)), (5, (-1, 0)), (5, (0, 1))), (1, 0, 2)),
])
def test_run_order(shape, dims, want):
    assert run_order(shape, dims) == want


def test_run_order_one_column_windows():
    # one channel: (n, k) windows of a vector; runs along the positions
    assert run_order((100,), ((96, (1,)), (5, (1,)))) == (1, 0)


def _transposed_less_broadcasts(x, y):
    # (3, 4, 2) data read as (4, 3, 2), less a (3, 1) term, times a (2,) scale, and a
    # (4, 1, 1) one that cannot be read in x's order by a reshape (it would need a transpose)
    t = vnp.transpose(x, (1, 0, 2))
    u = (t - vnp.sum(y, axis=1).reshape(3, 1)) * y[0, :2]
    return u, u * vnp.arange(4.0).reshape(4, 1, 1) + 0 * t


def test_transposes_move_past_broadcast_operands():
    from test_passes import assert_equivalent, graph

    from vecgrad.rewrite.simplify import simplify
    g0 = graph(_transposed_less_broadcasts, (3, 4, 2), (3, 4))
    g1 = simplify(g0)
    assert_equivalent(g0, g1)
    sub = next(e for e in g1.eqns if e.prim is P.sub)
    assert sub.out.aval.shape == (3, 4, 2) and sub.inputs[1].aval.shape == (3, 1, 1), pretty(g1)
    mul = [e for e in g1.eqns if e.prim is P.mul and e.out.aval.ndim == 3]
    assert mul[0].out.aval.shape == (3, 4, 2), pretty(g1)
