"""A sign or a scalar on a product's gradient goes on its cotangent (rewrite/scalings.py
`into_linear_operand`): reduce_prod_grad(g, x) and cumprod_grad(g, c, x) are linear in g, so
-L(g, ..) = L(-g, ..) and s * L(g, ..) = L(s * g, ..), with g one value per product (or a
constant, folded) where the result is one per factor. The gradient of a survival product of
1 - p had a negation pass over every factor after the product's VJP. Checked: the final graph
has no negation as large as the factors, values against NumPy, gradients against
central differences, at zeros among the factors and in float32."""
from __future__ import annotations

import functools
import operator

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.config import config


def survival_product(P, w):
    return vnp.prod(1.0 - P, axis=0) @ w


def stacked_factors(P, w):
    return vnp.prod(vnp.stack([1.0 - p for p in P]), axis=0) @ w


def reduce_of_complements(P, w):
    return functools.reduce(operator.mul, [1.0 - p for p in P]) @ w


def per_sample_survival(H, w):
    tot = 0.0
    for h, wi in zip(H, w):
        tot = tot + wi * vnp.prod(1.0 - h)
    return tot


def survival_curve_sum(h):
    s, tot = 1.0, 0.0
    for hi in h:
        s = s * (1.0 - hi)
        tot += s
    return tot


def scaled_product(P, w):
    return vnp.sum(3.0 * vnp.prod(1.0 + P, axis=1) * w)


def _probs(r, n, d, zeros=False):
    P = r.uniform(0.0, 0.05, (n, d))
    if zeros:  # (a certain event: the factor 1 - p is exactly 0)
        P[r.integers(0, n, size=d // 2), np.arange(d // 2)] = 1.0
    return P


CASES = {
    "survival_product": (survival_product, lambda r, z: (_probs(r, 30, 8, z),
                                                         r.standard_normal(8)),
                         lambda P, w: np.prod(1 - P, 0) @ w),
    "stacked_factors": (stacked_factors, lambda r, z: (_probs(r, 30, 8, z),
                                                       r.standard_normal(8)),
                        lambda P, w: np.prod(1 - P, 0) @ w),
    "reduce_of_complements": (reduce_of_complements, lambda r, z: (_probs(r, 12, 8, z),
                                                                   r.standard_normal(8)),
                              lambda P, w: np.prod(1 - P, 0) @ w),
    "per_sample_survival": (per_sample_survival, lambda r, z: (_probs(r, 20, 8, z).T.copy(),
                                                               r.standard_normal(8)),
                            lambda H, w: np.prod(1 - H, 1) @ w),
    "scaled_product": (scaled_product, lambda r, z: (r.uniform(-0.1, 0.1, (20, 6)),
                                                     r.standard_normal(20)),
                       lambda P, w: np.sum(3.0 * np.prod(1 + P, 1) * w)),
}


def _big_negs(e, shape):
    """Negations in the final graph as large as the factors."""
    return [q for q in e.stages["final"].eqns
            if q.prim.name == "neg" and q.out.aval.shape == shape]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("zeros", [False, True])
def test_sign_on_the_cotangent(name, zeros):
    f, make, ref = CASES[name]
    args = make(np.random.default_rng(len(name)), zeros)
    np.testing.assert_allclose(vg.jit(f)(*args), ref(*args), rtol=1e-12)
    vg.check_grads(f, args, argnums=(0, 1), rtol=1e-6, atol=1e-8)
    with config(keep_stages=True):
        e, _ = vg.grad(f, argnums=(0, 1)).entry(*args)
    assert not _big_negs(e, args[0].shape), name


def test_running_product_with_certain_events():
    h = np.random.default_rng(1).uniform(0.0, 0.02, 200)
    h[[40, 120]] = 1.0
    np.testing.assert_allclose(vg.jit(survival_curve_sum)(h), np.sum(np.cumprod(1 - h)),
                               rtol=1e-12)
    vg.check_grads(survival_curve_sum, (h,), rtol=1e-6, atol=1e-8)
    with config(keep_stages=True):
        e, _ = vg.grad(survival_curve_sum).entry(h)
    names = [q.prim.name for q in e.stages["final"].eqns]
    assert "cumprod_grad" in names and "neg" not in names, names


def test_float32_factors():
    r = np.random.default_rng(2)
    P, w = _probs(r, 30, 8).astype(np.float32), r.standard_normal(8).astype(np.float32)
    g = vg.grad(survival_product)(P, w)
    assert g.dtype == np.float32
    want = -np.prod(1 - P.astype(np.float64), 0) / (1 - P.astype(np.float64)) * w
    np.testing.assert_allclose(g, want, rtol=2e-5)
