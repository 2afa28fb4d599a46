"""Windows split per tap or copied once (im2col), by how each tap's term would read them
(batch/windows.py `_strided_terms`): taps that read their view in short strided pieces (a
strided or dilated 2-D convolution, channels-last taps whose positions do not merge into one
axis) are one copy and one product; taps that are matrix products at a leading dimension
(`x[a*d::s] @ w[a]`, or channels first) stay split. Batched equals unbatched, gradients equal
central differences (float64, random directions)."""
from __future__ import annotations

import pytest
from test_batch import check, count, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def dilated_conv2d(img, W, s=2, d=2):
    # (C, H, W) image, an (F, C, p, p) filter bank, stride 2 and dilation 2
    F, p = W.shape[0], W.shape[2]
    span = (p - 1) * d + 1
    H = (img.shape[1] - span) // s + 1
    out = vnp.zeros((F, H, H))
    for i in range(H):
        for j in range(H):
            out[:, i, j] = vnp.tensordot(W, img[:, i * s:i * s + span:d, j * s:j * s + span:d],
                                         axes=3)
    return vnp.sum(vnp.tanh(out))


def strided_patches(img, K):
    # one channel, patches at stride 2: each tap a scalar times a stride-2 view
    p = K.shape[0]
    n = (img.shape[0] - p) // 2 + 1
    return vnp.sum(vnp.stack([vnp.sum(img[2 * i:2 * i + p, 2 * j:2 * j + p] * K)
                              for i in range(n) for j in range(n)]) ** 2)


def mid_axis(X, W):
    # windows along the middle axis of (B, T, C) at stride 2: positions (b, t) do not merge
    k = W.shape[0]
    n = (X.shape[1] - k) // 2 + 1
    ys = [vnp.tensordot(X[:, 2 * t:2 * t + k], W, axes=([1, 2], [0, 1])) for t in range(n)]
    return vnp.sum(vnp.tanh(vnp.stack(ys, axis=1)))


def strided_dilated_1d(x, w):
    # (T, C) windows at stride 3, dilation 2: each tap x[2a::3] @ w[a], a matrix product
    k, s, d = w.shape[0], 3, 2
    span = (k - 1) * d + 1
    n = (x.shape[0] - span) // s + 1
    return vnp.sum(vnp.stack([vnp.sum(x[t * s:t * s + span:d] * w) for t in range(n)]) ** 2)


def channels_first(x, w):
    # (C, T) windows at stride 3 along the last axis: each tap w[:, a] @ x[:, a::3]
    k = w.shape[1]
    ys = [vnp.sum(x[:, 3 * t:3 * t + k] * w) for t in range((x.shape[1] - k) // 3 + 1)]
    return vnp.sum(vnp.stack(ys) ** 2)


def unit_patches(img, K):
    # one channel, patches at stride 1: each tap a contiguous pass (rows of the image)
    p = K.shape[0]
    n = img.shape[0] - p + 1
    out = vnp.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = vnp.sum(img[i:i + p, j:j + p] * K)
    return vnp.sum(out ** 2)


COPIED = [
    ("dilated_conv2d", dilated_conv2d, lambda r: (r.standard_normal((3, 17, 17)),
                                                  r.standard_normal((4, 3, 3, 3)))),
    ("strided_patches", strided_patches, lambda r: (r.standard_normal((21, 21)),
                                                    r.standard_normal((4, 4)))),
    ("mid_axis", mid_axis, lambda r: (r.standard_normal((3, 41, 8)),
                                      r.standard_normal((5, 8, 4)))),
]
SPLIT = [
    ("strided_dilated_1d", strided_dilated_1d, lambda r: (r.standard_normal((70, 6)),
                                                          r.standard_normal((4, 6)))),
    ("channels_first", channels_first, lambda r: (r.standard_normal((6, 80)),
                                                  r.standard_normal((6, 4)))),
    ("unit_patches", unit_patches, lambda r: (r.standard_normal((24, 24)),
                                              r.standard_normal((3, 3)))),
]


@pytest.mark.parametrize("name,f,make", COPIED, ids=[c[0] for c in COPIED])
def test_strided_taps_copy_the_windows_once(name, f, make):
    e = check(f, make(rng(4)), (0, 1))
    g = e.stages["final"]
    assert count(g, P.relayout) == 1, vg.ir.pretty(g)
    assert count(g, P.einsum) <= 6, vg.ir.pretty(g)  # (no product per tap)


@pytest.mark.parametrize("name,f,make", SPLIT, ids=[c[0] for c in SPLIT])
def test_matrix_taps_stay_split(name, f, make):
    e = check(f, make(rng(5)), (0, 1))
    g = e.stages["final"]
    assert count(g, P.relayout) == 0, vg.ir.pretty(g)


def conv1d_taps(x, w):
    # (T, c) windows contracted with a (k, c, o) filter bank: the input's cotangent reads
    # the output cotangent's windows, copied once
    k = w.shape[0]
    ys = [vnp.tensordot(x[t:t + k], w, axes=2) for t in range(x.shape[0] - k + 1)]
    return vnp.sum(vnp.tanh(vnp.stack(ys)))


@pytest.mark.parametrize("k,c,o", [(5, 16, 8), (7, 16, 4), (6, 10, 3), (4, 12, 3)])
def test_copied_windows_are_written_tap_then_channel(k, c, o):
    # the copy walks each window's k rows of o channels in memory order (a window is one
    # run of k * o elements), not the view's (position, channel, tap) order
    e = check(conv1d_taps, (rng(6).standard_normal((60, c)),
                            rng(7).standard_normal((k, c, o))), (0, 1))
    g = e.stages["final"]
    copies = [x for x in g.eqns if x.prim is P.relayout]
    assert copies and all(x.out.aval.shape[1:] == (k, o) for x in copies), vg.ir.pretty(g)
