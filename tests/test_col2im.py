"""The cotangent of windows read one tap at a time (strided, dilated, several channels, one
output per window) is one coefficient matrix and one product (batch/col2im.py), not one outer
product and one strided add per tap: batched equals unbatched, gradients equal central
differences (float64, random directions), and the cost model keeps the per-tap adds where
the coefficients would be mostly zeros."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, count, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.primitives.linalg import parse_spec


def strided_dilated(x, w):
    k, s, d = w.shape[0], 3, 2
    span = (k - 1) * d + 1
    n = (x.shape[0] - span) // s + 1
    return vnp.sum(vnp.stack([vnp.sum(x[t * s:t * s + span:d] * w) for t in range(n)]) ** 2)


def while_hop(x, w):
    k, t, total = w.shape[0], 0, 0.0
    while t + k <= x.shape[0]:
        total = total + vnp.tanh(vnp.sum(x[t:t + k] * w))
        t += 2
    return total


def channel_subset(x, w):
    # the windows read columns 1..4 of x only, and x is used elsewhere too
    k = w.shape[0]
    ys = [vnp.sum(x[t:t + 2 * k - 1:2, 1:5] * w) for t in range(0, x.shape[0] - 2 * k + 2, 2)]
    return vnp.sum(vnp.sin(vnp.stack(ys))) + 0.1 * vnp.sum(x ** 2)


def columns_first(x, w):
    # windows along axis 1 (channels first): x[:, t*s : t*s + k]
    k = w.shape[1]
    ys = [vnp.sum(x[:, 3 * t:3 * t + k] * w) for t in range((x.shape[1] - k) // 3 + 1)]
    return vnp.sum(vnp.stack(ys) ** 2)


CASES = [
    ("strided_dilated", strided_dilated, lambda r: (r.standard_normal((70, 6)),
                                                    r.standard_normal((4, 6))), (0, 1)),
    ("while_hop", while_hop, lambda r: (r.standard_normal((61, 5)), r.standard_normal((3, 5))),
     (0, 1)),
    ("channel_subset", channel_subset, lambda r: (r.standard_normal((64, 6)),
                                                  r.standard_normal((3, 4))), (0, 1)),
    ("columns_first", columns_first, lambda r: (r.standard_normal((6, 80)),
                                                r.standard_normal((6, 4))), (0, 1)),
]


def outer_products(g) -> int:
    """Products of two operands that contract nothing ('a,c->ac')."""
    n = 0
    for e in g.eqns:
        if e.prim is P.einsum and len(e.inputs) == 2:
            (a, b), out = parse_spec(e.params["spec"])
            n += bool(a and b and len(a) + len(b) == len(out))
    return n


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_tap_cotangents_are_one_product(name, f, make, argnums):
    e = check(f, make(rng()), argnums)
    g = e.stages["final"]
    assert outer_products(g) == 0, vg.ir.pretty(g)
    assert count(g, P.setitem_add) <= 1, vg.ir.pretty(g)
    # the coefficients: one (positions, taps) array, written once per tap
    assert any(e.prim is P.full and len(e.out.aval.shape) == 2 for e in g.eqns)


def patches(img, K, s=3):
    # p x p patches at stride s of one channel: Z would hold s*s - 1 zeros per written entry
    p = K.shape[0]
    n = (img.shape[0] - p) // s + 1
    m = (img.shape[1] - p) // s + 1
    return vnp.sum(vnp.stack([vnp.sum(img[i * s:i * s + p, j * s:j * s + p] * K)
                              for i in range(n) for j in range(m)]) ** 2)


def dilated_patches(img, K):
    # 3x3 taps at dilation 2, stride 3 (taps 0, 2, 4: residues 0, 2, 1)
    n = (img.shape[0] - 5) // 3 + 1
    return vnp.sum(vnp.stack([vnp.sum(img[3 * i:3 * i + 5:2, 3 * j:3 * j + 5:2] * K)
                              for i in range(n) for j in range(n)]) ** 2)


def channel_patches(img, W):
    # (H, W, C) patches at stride 2 against a (p, p, C, F) filter bank
    p = W.shape[0]
    n = (img.shape[0] - p) // 2 + 1
    ys = [vnp.tensordot(img[2 * i:2 * i + p, 2 * j:2 * j + p], W, axes=3)
          for i in range(n) for j in range(n)]
    return vnp.sum(vnp.tanh(vnp.stack(ys)))


def strided_conv1d(x, w):
    # 1-D windows of 7 taps at stride 4 over 3 channels, one output per window
    k = w.shape[0]
    n = (x.shape[0] - k) // 4 + 1
    return vnp.sum(vnp.stack([vnp.sum(x[4 * t:4 * t + k] * w) for t in range(n)]) ** 2)


def strided_mid_axis(X, W):
    # windows along the middle axis of (B, T, C) at stride 2, a (k, C, F) filter bank
    k = W.shape[0]
    n = (X.shape[1] - k) // 2 + 1
    ys = [vnp.tensordot(X[:, 2 * t:2 * t + k], W, axes=([1, 2], [0, 1])) for t in range(n)]
    return vnp.sum(vnp.tanh(vnp.stack(ys, axis=1)))


RESIDUE_CASES = [
    ("strided_mid_axis", strided_mid_axis, lambda r: (r.standard_normal((4, 201, 8)),
                                                      r.standard_normal((5, 8, 8)))),
    ("odd_patches", patches, lambda r: (r.standard_normal((23, 23)),
                                        r.standard_normal((5, 5)))),
    ("uneven_rows_cols", patches, lambda r: (r.standard_normal((20, 26)),
                                             r.standard_normal((4, 4)))),
    ("stride_above_patch", lambda x, K: patches(x, K, 4), lambda r: (
        r.standard_normal((19, 19)), r.standard_normal((3, 3)))),
    ("dilated_patches", dilated_patches, lambda r: (r.standard_normal((26, 26)),
                                                    r.standard_normal((3, 3)))),
    ("channel_patches", channel_patches, lambda r: (r.standard_normal((17, 17, 3)),
                                                    r.standard_normal((3, 3, 3, 4)))),
    ("strided_conv1d", strided_conv1d, lambda r: (r.standard_normal((90, 3)),
                                                  r.standard_normal((7, 3)))),
]


@pytest.mark.parametrize("name,f,make", RESIDUE_CASES, ids=[c[0] for c in RESIDUE_CASES])
def test_strided_taps_by_residue_classes(name, f, make):
    # taps at a stride: x's positions split by (y mod s), each class one shifted sum of g,
    # all of them one product of g's windows (sub-pixel col2im), not a strided add per tap
    e = check(f, make(rng(1)), (0, 1))
    g = e.stages["final"]
    assert count(g, P.setitem_add) <= 1, vg.ir.pretty(g)
    if name in COPIED:
        # one-channel patches at a stride: each tap would be a pass over a strided view of
        # the image, so the windows are copied once (im2col) and contracted by one product;
        # their cotangent is one product and one add through the windows view
        assert count(g, P.relayout) == 1 and count(g, P.strided_add) == 1, vg.ir.pretty(g)
        assert count(g, P.einsum) <= 4 and not count(g, P.setitem_add), vg.ir.pretty(g)
        return
    assert outer_products(g) == 0 or name == "stride_above_patch", vg.ir.pretty(g)


COPIED = {"odd_patches", "uneven_rows_cols", "dilated_patches"}


def test_residue_classes_match_numpy():
    r = rng(3)
    img, K = r.standard_normal((23, 23)), r.standard_normal((5, 5))
    n = (23 - 5) // 3 + 1
    sc = np.array([[np.sum(img[3 * i:3 * i + 5, 3 * j:3 * j + 5] * K) for j in range(n)]
                   for i in range(n)])
    gi = np.zeros_like(img)
    for i in range(n):
        for j in range(n):
            gi[3 * i:3 * i + 5, 3 * j:3 * j + 5] += 2 * sc[i, j] * K
    np.testing.assert_allclose(vg.grad(patches)(img, K), gi, rtol=1e-12, atol=1e-12)


def test_value_matches_numpy_reference():
    r = rng(2)
    x, w = r.standard_normal((70, 6)), r.standard_normal((4, 6))
    n = (70 - 7) // 3 + 1
    y = sum(x[a * 2:a * 2 + 3 * (n - 1) + 1:3] @ w[a] for a in range(4))
    gx = np.zeros_like(x)
    for a in range(4):
        gx[a * 2:a * 2 + 3 * (n - 1) + 1:3] += np.outer(2 * y, w[a])
    np.testing.assert_allclose(vg.grad(strided_dilated)(x, w), gx, rtol=1e-12, atol=1e-12)
