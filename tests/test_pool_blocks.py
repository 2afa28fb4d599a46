"""Pooling at its own stride (non-overlapping blocks, which batching reads as a transposed
reshape of the array): the sum over each block is taken on that view (rewrite/layout
.sum_of_reshaped_view), not on a copy of every block; the NumPy backend adds the blocks'
few slices (reductions.middle_sum). Batched = unbatched, central differences. Grouped
convolutions' taps (which may run as one broadcast matmul, the planner's 'bmm')."""
from __future__ import annotations

import numpy as np
from test_batch import check, count, gathers, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def avg_pool_3d(vol):
    D, H, W = (n // 2 for n in vol.shape)
    total = 0.0
    for d in range(D):
        for i in range(H):
            for j in range(W):
                m = vnp.mean(vol[2 * d:2 * d + 2, 2 * i:2 * i + 2, 2 * j:2 * j + 2])
                total = total + vnp.log1p(vnp.exp(m))
    return total


def avg_pool_2d_rows(img, s):
    H, W = img.shape[0] // s, img.shape[1] // s
    p = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            p[i, j] = vnp.sum(img[i * s:(i + 1) * s, j * s:(j + 1) * s]) / (s * s)
    return vnp.sum(vnp.tanh(p) * p)


def test_block_pooling_batched_and_numeric():
    r = rng()
    for vol in (r.standard_normal((4, 6, 4)), r.standard_normal((6, 4, 8))):
        e = check(avg_pool_3d, (vol,))
        v = vol.reshape(vol.shape[0] // 2, 2, vol.shape[1] // 2, 2, vol.shape[2] // 2, 2)
        m = v.mean((1, 3, 5))
        np.testing.assert_allclose(vg.jit(avg_pool_3d)(vol), np.sum(np.log1p(np.exp(m))),
                                   rtol=1e-12)
        g = e.stages["final"]
        assert not gathers(g) and count(g, P.transpose) == 0, g
    for s in (2, 3):
        check(lambda im, s=s: avg_pool_2d_rows(im, s), (r.standard_normal((3 * s, 2 * s + 1)),))


def grouped_taps(x, W):
    G, og, cg, k = W.shape
    B, _, T = x.shape
    out = vnp.zeros((B, G * og, T - k + 1))
    for g in range(G):
        for t in range(T - k + 1):
            out[:, g * og:(g + 1) * og, t] = vnp.einsum(
                "bck,ock->bo", x[:, g * cg:(g + 1) * cg, t:t + k], W[g])
    return vnp.sum(vnp.tanh(out))


def test_grouped_convolution_taps_batched_and_numeric():
    """Grouped windows over the last axis of (B, C, T): batched = unbatched, central
    differences (the taps' contractions may run as broadcast matmuls)."""
    r = rng()
    x, W = r.standard_normal((2, 6, 9)), 0.4 * r.standard_normal((3, 2, 2, 3))
    check(grouped_taps, (x, W), argnums=(0, 1))
