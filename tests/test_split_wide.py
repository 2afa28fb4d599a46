"""Einsums of three to five operands in a gradient graph become pairwise contractions
(rewrite/reassociate.split_wide), ordered to reuse the pairs the graph already computes, so
that AD's n einsums of n operands share their pairs (CSE merges them).

Each loss is checked against NumPy (value) and central differences (gradient), and its final
gradient graph for what the split promises: no einsum of 3-5 operands, and each shared pair
computed once."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(0)
X, W, A, B = R.normal(size=(40, 6)), R.normal(size=(6, 6)), R.normal(size=(6, 5)), \
    R.normal(size=(5, 6))
w, v, u = R.uniform(size=40), R.normal(size=6), R.normal(size=5)


def final(fun, args, argnums):
    return vg.grad(fun, argnums=argnums).entry(*args)[0].stages["final"].eqns


def einsums(eqns):
    return [e for e in eqns if e.prim in (P.einsum, P.muladd)]


CASES = [
    ("ai,ij,aj->", (X, W, X), (0, 1)),
    ("ai,a,aj->ij", (X, w, X), (0, 1)),
    ("i,ij,jk,k->", (v, A, B, v), (0, 1, 2)),
    ("ai,ij,jk,ak->", (X, A, B, X), (0, 1, 2)),
    ("ai,ij,j,a->i", (X, A, u, w), (0, 1, 2, 3)),
    ("ai,ai,ai->a", (X, X * 2.0, np.cos(X)), (0, 1, 2)),
    ("ij,jk,ki->", (W, W.T.copy(), W * 0.5), (0, 1, 2)),
    ("ai,ij,jk,kl,al->", (X, W, W * 0.3, W.T.copy(), X), (0, 1, 2, 3)),
]


@pytest.mark.parametrize("spec,args,argnums", CASES, ids=[c[0] for c in CASES])
def test_split_gradients_match_central_differences(spec, args, argnums):
    def loss(*xs):
        return vnp.sum(vnp.sin(vnp.einsum(spec, *xs)))
    np.testing.assert_allclose(vg.jit(loss)(*args), np.sum(np.sin(np.einsum(spec, *args))),
                               rtol=1e-9)
    central_diff_check(loss, args, argnums=argnums)
    wide = [e for e in einsums(final(loss, args, argnums)) if len(e.inputs) >= 3]
    assert not wide, wide


def test_six_operands_stay_whole_and_exact():
    spec = "ai,ij,jk,kl,lm,am->"
    args = (X, W, W * 0.5, W.T.copy(), W * 0.2, X)

    def loss(*xs):
        return vnp.einsum(spec, *xs) ** 2
    central_diff_check(loss, args, argnums=(0, 1, 2))


def test_weighted_gram_scales_the_samples_once():
    # (w * X is the forward's first pair; the gradient's three einsums reuse it)
    C = R.normal(size=(6, 6))

    def loss(X, w):
        return vnp.sum((vnp.einsum("ai,a,aj->ij", X, w, X) - C) ** 2)
    g = vg.grad(loss, argnums=(0, 1)).entry(X, w)[0].stages["final"]
    eqns = einsums(g.eqns)
    scaled = [e for e in eqns if set(e.inputs) == set(g.inputs[:2])]
    assert len(scaled) == 1, eqns
    central_diff_check(loss, (X, w), argnums=(0, 1))


def test_bilinear_per_sample_reuses_the_gram_of_the_samples():
    # sum over x of x^T W x: the gradient in W is X^T X, and the value is then <W, X^T X>
    def loss(X, W):
        return sum(vnp.einsum("i,ij,j->", x, W, x) for x in X)
    eqns = einsums(final(loss, (X, W), (0, 1)))
    big = [e for e in eqns if any(a.aval.shape == (40, 6) for a in e.inputs)]
    assert len(big) == 2, eqns  # X^T X and (W + W^T) X
    central_diff_check(loss, (X, W), argnums=(0, 1))


def test_chain_of_four_shares_its_pairs():
    def loss(X, A, B):
        return sum(vnp.einsum("i,ij,jk,k->", x, A, B, x) for x in X)
    args = (X, A, B)
    eqns = einsums(final(loss, args, (0, 1, 2)))
    big = [e for e in eqns if any(a.aval.shape == (40, 6) for a in e.inputs)]
    assert len(big) <= 3, eqns
    central_diff_check(loss, args, argnums=(0, 1, 2))
