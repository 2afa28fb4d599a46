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
from test_passes import assert_equivalent, graph, strip

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.ir import pretty
from vecgrad.primitives.linalg import make_spec
from vecgrad.rewrite.reassociate import split_wide

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


# ------------------------------------------------------------------ the pass on small graphs

def _weighted_gram(X, w, C):
    G = P.einsum(X, w, X, spec="ai,a,aj->ij")
    return P.einsum(G - C, G - C, spec="ij,ij->"), P.einsum(C, w, X, spec="ij,a,aj->ai")


SPLIT_GOLDEN = """{ lambda a:f64[5,3] b:f64[5] c:f64[3,3] .
  d:f64[5,3] = einsum[spec=ai,a->ai] a b
  e:f64[3,3] = einsum[spec=aj,ai->ij] a d
  f:f64[3,3] = sub e c
  g:f64[] = einsum[spec=ij,ij->] f f
  h:f64[5,3] = einsum[spec=ij,aj->ai] c d
  in (g, h) }"""


def test_split_wide_golden_and_equivalent():
    # (w * X: the first pair of the Gram, free for the second einsum, which reuses it)
    g0 = graph(_weighted_gram, (5, 3), (5,), (3, 3))
    g1 = split_wide(g0)
    assert strip(pretty(g1)) == SPLIT_GOLDEN
    assert_equivalent(g0, g1)


@pytest.mark.parametrize("seed", range(6))
def test_split_wide_on_random_contractions(seed):
    # random einsums of 3-5 operands over letters of sizes 2-4 (sums, outer products, traces
    # of chains, letters in one operand only): the split graph computes the same values and
    # VJPs, with no einsum of 3+ operands left
    rnd = np.random.default_rng(seed)
    n = int(rnd.integers(3, 6))
    sizes = dict(zip("abcdef", rnd.integers(2, 5, 6).tolist()))
    subs = ["".join(rnd.choice(list("abcdef"), int(rnd.integers(1, 4)), replace=False))
            for _ in range(n)]
    letters = sorted(set("".join(subs)))
    out = "".join(rnd.choice(letters, int(rnd.integers(0, min(3, len(letters)) + 1)),
                             replace=False))
    spec = make_spec(subs, out)

    def f(*xs):
        return vnp.sin(P.einsum(*xs, spec=spec))
    g0 = graph(f, *[tuple(sizes[c] for c in s) for s in subs])
    g1 = split_wide(g0)
    assert all(len(e.inputs) <= 2 for e in g1.eqns if e.prim is P.einsum), (spec, pretty(g1))
    assert_equivalent(g0, g1)
