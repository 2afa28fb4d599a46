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


def test_mostly_zero_coefficients_stay_per_tap():
    # 5x5 patches at stride 3 of one channel: Z would hold 9 zeros per written entry
    def patches(img, K):
        p, s = K.shape[0], 3
        n = (img.shape[0] - p) // s + 1
        return vnp.sum(vnp.stack([vnp.sum(img[i * s:i * s + p, j * s:j * s + p] * K)
                                  for i in range(n) for j in range(n)]) ** 2)

    r = rng(1)
    e = check(patches, (r.standard_normal((23, 23)), r.standard_normal((5, 5))), (0, 1))
    g = e.stages["final"]
    assert not any(e.prim is P.full and len(e.out.aval.shape) == 3 for e in g.eqns)
    assert count(g, P.setitem_add) >= 9, vg.ir.pretty(g)


def test_value_matches_numpy_reference():
    r = rng(2)
    x, w = r.standard_normal((70, 6)), r.standard_normal((4, 6))
    n = (70 - 7) // 3 + 1
    y = sum(x[a * 2:a * 2 + 3 * (n - 1) + 1:3] @ w[a] for a in range(4))
    gx = np.zeros_like(x)
    for a in range(4):
        gx[a * 2:a * 2 + 3 * (n - 1) + 1:3] += np.outer(2 * y, w[a])
    np.testing.assert_allclose(vg.grad(strided_dilated)(x, w), gx, rtol=1e-12, atol=1e-12)
