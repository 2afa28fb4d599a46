"""The image's cotangent of 2-D and 3-D patches scored against each pixel's query is
gathered per pixel (one contraction over the offsets of the zero-padded query's copied
patches) instead of added one offset at a time (batch/patchgrads.py). Gradients equal
central differences (float64, random directions) and the unbatched graph's; the rule fires
where the patches were copied for the forward (COPY_TERMS offsets or more) and the query
has MIN_CHANNELS channels or more, and leaves the per-offset adds elsewhere."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.batch import patchgrads


def patch_scores(ph, pw, d=1, pool="lse"):
    # each pixel's query against its ph x pw patch of features d pixels apart
    def f(F, Q):
        total = 0.0
        for i in range(Q.shape[0]):
            for j in range(Q.shape[1]):
                s = vnp.einsum("abc,c->ab", F[i:i + (ph - 1) * d + 1:d,
                                              j:j + (pw - 1) * d + 1:d], Q[i, j])
                if pool == "lse":
                    total = total + vnp.log(vnp.sum(vnp.exp(s)))
                else:
                    total = total + vnp.sum(vnp.tanh(s) ** 2)
        return total
    return f


def volume_scores(p, d=1):
    def f(V, Q):
        total = 0.0
        for i in range(Q.shape[0]):
            for j in range(Q.shape[1]):
                for k in range(Q.shape[2]):
                    w = V[i:i + (p - 1) * d + 1:d, j:j + (p - 1) * d + 1:d,
                          k:k + (p - 1) * d + 1:d]
                    total = total + vnp.sum(vnp.tanh(vnp.einsum("abcd,d->abc", w, Q[i, j, k])))
        return total
    return f


def backward_counts(f, args):
    e, _ = vg.grad(f, argnums=(0, 1)).entry(*args)
    names = [q.prim.name for q in e.compiled.graph.eqns]
    return names.count("strided_add"), names.count("relayout")


@pytest.mark.parametrize("ph, pw, d, pool, C", [
    (3, 3, 1, "lse", 16), (2, 3, 1, "tanh", 16), (3, 3, 2, "lse", 16), (3, 2, 1, "lse", 8),
    (4, 4, 1, "tanh", 8),
])
def test_patch_gradients_gathered(ph, pw, d, pool, C):
    n = 20
    g = rng(ph * 10 + pw + d)
    F = g.standard_normal((n + (ph - 1) * d, n + (pw - 1) * d, C)) * 0.5
    Q = g.standard_normal((n, n, C)) * 0.5
    f = patch_scores(ph, pw, d, pool)
    check(f, (F, Q), argnums=(0, 1))
    adds, copies = backward_counts(f, (F, Q))
    assert adds == 0 and copies >= 2  # Q's padded patches, G's anti-diagonals (and F's)


def test_neighbourhood_of_32_channels_gathers_with_no_window_product():
    # (18, 18, 32) features, 3 x 3 patches flattened to rows: no add of a (16, 16, 3, 3, 32)
    # product into the patches, and none per offset either
    g = rng(2)
    F, Q = g.standard_normal((18, 18, 32)), g.standard_normal((16, 16, 32))

    def f(F, Q):
        total = 0.0
        for i in range(16):
            for j in range(16):
                s = F[i:i + 3, j:j + 3].reshape(9, 32) @ Q[i, j]
                total = total + vnp.sum(vnp.tanh(s) ** 2)
        return total
    assert backward_counts(f, (F, Q))[0] == 0
    vg.check_grads(f, (F, Q), argnums=(0, 1), rtol=1e-6, atol=1e-8)


def test_volume_gradients_gathered():
    g = rng(5)
    V, Q = g.standard_normal((11, 11, 11, 8)) * 0.5, g.standard_normal((10, 10, 10, 8)) * 0.5
    f = volume_scores(2)
    check(f, (V, Q), argnums=(0, 1))
    assert backward_counts(f, (V, Q)) == (0, 3)


def test_few_channels_keep_the_adds_per_offset():
    g = rng(6)
    C = patchgrads.MIN_CHANNELS - 4
    F, Q = g.standard_normal((42, 42, C)), g.standard_normal((40, 40, C))
    f = patch_scores(3, 3)
    check(f, (F, Q), argnums=(0, 1))
    adds, copies = backward_counts(f, (F, Q))
    assert adds >= 1 and copies == 1  # added into the patches, the forward's copy only


def test_rule_declines_strided_positions():
    # patches every second pixel: each pixel of F is covered by a pattern of residues, not
    # by a contiguous run of positions; the rule leaves those to the per-offset adds
    g = rng(7)
    F, Q = g.standard_normal((41, 41, 16)) * 0.5, g.standard_normal((20, 20, 16)) * 0.5

    def f(F, Q):
        total = 0.0
        for i in range(20):
            for j in range(20):
                s = vnp.einsum("abc,c->ab", F[2 * i:2 * i + 3, 2 * j:2 * j + 3], Q[i, j])
                total = total + vnp.log(vnp.sum(vnp.exp(s)))
        return total
    check(f, (F, Q), argnums=(0, 1))


def test_gathered_equals_added():
    # the same gradient as the adds into the patches (rule off), to rounding
    g = rng(8)
    F, Q = g.standard_normal((24, 24, 16)), g.standard_normal((20, 20, 16))
    f = patch_scores(3, 3, 2)
    got = vg.grad(f, argnums=(0, 1))(F, Q)
    saved = patchgrads.MIN_CHANNELS
    patchgrads.MIN_CHANNELS = 10 ** 9
    try:
        want = vg.grad(lambda F, Q: f(F, Q) * 1.0, argnums=(0, 1))(F, Q)
        assert backward_counts(lambda F, Q: f(F, Q) * 1.0, (F, Q)) == (1, 1)  # not gathered
    finally:
        patchgrads.MIN_CHANNELS = saved
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
