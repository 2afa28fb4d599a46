"""A product added into overlapping windows runs one window offset at a time
(batch/winadds.py): the cotangent of `K[t-r:t+r+1] @ q[t]` for every t is, per offset i,
`dK[i : i + n] += g[:, i, None] * q`, never the (k, n, C) product; and the per-tap
products of windows keep the windows' memory order (batch/windows.py). Batched equals
unbatched, gradients equal central differences (float64, random directions)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, entry, rng

import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.batch.winadds import _run, _split_pays
from vecgrad.ir import pretty


def banded(r, scale=True):
    # attention over the 2r + 1 keys around each query
    def f(K, Q, V):
        out = []
        for t in range(r, K.shape[0] - r):
            s = K[t - r:t + r + 1] @ Q[t]
            if scale:
                s = s / np.sqrt(K.shape[1])
            a = vnp.exp(s - vnp.max(s))
            out.append((a / vnp.sum(a)) @ V[t - r:t + r + 1])
        return vnp.sum(vnp.stack(out) ** 2)
    return f


def causal_scores(k):
    # each query against its k previous keys, a log-sum-exp per query
    def f(K, Q):
        total = 0.0
        for t in range(k, K.shape[0]):
            total = total + vnp.log(vnp.sum(vnp.exp(K[t - k:t] @ Q[t])))
        return total
    return f


def strided_scores(k, s):
    # windows at a stride, each against its own query row
    def f(K, Q):
        n = (K.shape[0] - k) // s + 1
        return vnp.sum(vnp.stack([vnp.tanh(K[t * s:t * s + k] @ Q[t]) for t in range(n)]))
    return f


def window_outer(k):
    # each window times one row (no contraction): a product per window entry
    def f(x, q):
        total = 0.0
        for t in range(x.shape[0] - k + 1):
            total = total + vnp.sum(vnp.sin(x[t:t + k] * q[t]))
        return total
    return f


def shifted_patches(r):
    # a fixed patch against every shift of another image (short rows: no split)
    def f(a, b):
        H, W = a.shape[0] - 2 * r, a.shape[1] - 2 * r
        costs = [vnp.mean(a[r:r + H, r:r + W] * b[dy:dy + H, dx:dx + W], axis=1)
                 for dy in range(2 * r + 1) for dx in range(2 * r + 1)]
        return vnp.sum(vnp.stack(costs) ** 2)
    return f


def neighbourhood_scores(r):
    # channels-last features: each pixel's query against its (2r+1)^2 neighbours
    def f(F, Q):
        w = 2 * r + 1
        total = 0.0
        for i in range(F.shape[0] - 2 * r):
            for j in range(F.shape[1] - 2 * r):
                s = F[i:i + w, j:j + w].reshape(w * w, F.shape[2]) @ Q[i, j]
                total = total + vnp.sum(vnp.tanh(s) ** 2)
        return total
    return f


def _n(r):
    return rng(r)


CASES = [
    ("banded_r1", banded(1), lambda g: tuple(g.standard_normal((40, 6)) for _ in range(3)),
     (0, 1, 2)),
    ("banded_r3_unscaled", banded(3, False),
     lambda g: tuple(g.standard_normal((50, 4)) for _ in range(3)), (0, 1, 2)),
    ("causal_k4", causal_scores(4), lambda g: (g.standard_normal((40, 5)),
                                               g.standard_normal((40, 5))), (0, 1)),
    ("strided_k5_s2", strided_scores(5, 2), lambda g: (g.standard_normal((41, 3)),
                                                       g.standard_normal((19, 3))), (0, 1)),
    ("window_outer_k3", window_outer(3), lambda g: (g.standard_normal((30, 4)),
                                                    g.standard_normal((28, 4))), (0, 1)),
    ("neighbourhood_r1", neighbourhood_scores(1), lambda g: (g.standard_normal((8, 9, 3)),
                                                             g.standard_normal((6, 7, 3))),
     (0, 1)),
    ("shifted_patches_r1", shifted_patches(1), lambda g: (g.standard_normal((12, 12)),
                                                          g.standard_normal((12, 12))), (0, 1)),
]


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_windows_added_products_batched_equals_unbatched(name, f, make, argnums):
    check(f, make(_n(11)), argnums)


def _window_adds(g):
    """The adds into windows whose value still has an overlapping window axis."""
    return [e for e in g.eqns if e.prim is P.strided_add and
            e.inputs[1].aval.size > e.out.aval.size]


@pytest.mark.parametrize("f,shapes,k", [
    (banded(4), [(200, 40)] * 3, 9),
    (causal_scores(6), [(206, 40), (206, 40)], 6),
])  # (2-D patches of many channels gather per pixel instead: tests/test_patch_grads.py)
def test_large_windows_add_one_offset_at_a_time(f, shapes, k):
    # (the small CASES above check the values; at these sizes the structure only)
    g0 = rng(2)
    args = tuple(g0.standard_normal(s) for s in shapes)
    e, _ = entry(f, args, tuple(range(len(args))))
    g = e.stages["final"]
    assert not _window_adds(g), pretty(g)
    # one add per offset into the key matrix, each a slice of it
    adds = [x for x in g.eqns if x.prim in (P.strided_add, P.setitem_add, P.setitem) and
            x.out.aval.shape == shapes[0]]
    assert len(adds) >= k, pretty(g)


def test_short_rows_keep_one_product():
    # 25 shifts of a 30 x 30 patch: rows of 30 elements, the product stays whole
    e, _ = entry(shifted_patches(2), (rng(4).standard_normal((34, 34)),
                                      rng(5).standard_normal((34, 34))), (0, 1))
    g = e.stages["final"]
    assert _window_adds(g), pretty(g)


def test_split_cost_model():
    # 9 offsets of (992, 16) contiguous rows: split
    assert _split_pays(9, 9 * 992 * 16, 9 * 992 * 16, 992 * 16)
    # 27 offsets of 32 x 32 (a 3x3x3 filter bank's image cotangent): one product
    assert not _split_pays(27, 27 * 1024, 27 * 1024 * 8, 32)
    # large terms but 120-element rows: one product
    assert not _split_pays(25, 25 * 14400, 25 * 14400, 120)
    assert _run((1000, 16), ((992, (1, 0)), (16, (0, 1)))) == 992 * 16
    assert _run((124, 124), ((120, (1, 0)), (120, (0, 1)))) == 120
    assert _run((8, 601, 8), ((8, (1, 0, 0)), (299, (0, 2, 0)), (8, (0, 0, 1)))) == 8


def depthwise_btc(k, s):
    # depthwise windows of (B, T, C) at stride s, the steps stacked on axis 1
    def f(X, w):
        n = (X.shape[1] - k) // s + 1
        ys = [vnp.einsum("bkc,kc->bc", X[:, t * s:t * s + k], w) for t in range(n)]
        return vnp.sum(vnp.stack(ys, axis=1) ** 2)
    return f


@pytest.mark.parametrize("k,s", [(3, 1), (5, 2), (4, 3)])
def test_depthwise_taps_run_in_the_windows_order(k, s):
    # each tap's product keeps the view's (B, T, C) order: no per-tap transpose
    B, T, C = 3, 40, 5
    e = check(depthwise_btc(k, s), (rng(k).standard_normal((B, T, C)),
                                    rng(s).standard_normal((k, C))), (0, 1))
    g = e.stages["final"]
    n = (T - k) // s + 1
    prods = [x for x in g.eqns if x.prim in (P.einsum, P.muladd) and
             x.out.aval.size == B * n * C]
    assert prods and all(x.out.aval.shape == (B, n, C) for x in prods), pretty(g)


def filter_bank_btc(k):
    # windows along the time axis of (B, T, C), each one einsum with a (k, C, F) bank
    def f(X, W):
        ys = [vnp.einsum("bkc,kcf->bf", X[:, t:t + k], W) for t in range(X.shape[1] - k + 1)]
        return vnp.sum(vnp.tanh(vnp.stack(ys, axis=1)))
    return f


@pytest.mark.parametrize("k,C,F", [(4, 8, 8), (3, 5, 7)])
def test_filter_bank_cotangent_keeps_time_before_channels(k, C, F):
    # the input's cotangent is per-tap products of the padded output cotangent; a unit axis
    # of the padded windows (a batch axis at no stride) must not put the channels first
    B, T = 6, 60
    e = check(filter_bank_btc(k), (rng(1).standard_normal((B, T, C)),
                                   rng(2).standard_normal((k, C, F))), (0, 1), fd=False)
    g = e.stages["final"]
    big = [x for x in g.eqns if x.prim in (P.einsum, P.muladd) and
           x.out.aval.size >= B * (T - k + 1) * min(C, F)]
    assert big and all([d for d in x.out.aval.shape if d > 1][1] >= T - k + 1
                       for x in big), pretty(g)
