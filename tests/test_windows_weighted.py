"""Windows weighted per window and offset (`a @ V[t-r:t+r+1]` for every t) stay one product
over the window view (batch/windows.py `_weighted_rows`): split per offset, each term would
be a broadcast multiply-add of a slice, k passes over the output. Batched equals unbatched,
gradients equal central differences (float64, random directions)."""
from __future__ import annotations

import pytest
from test_batch import check, entry, rng

import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.ir import pretty
from vecgrad.primitives.linalg import parse_spec


def pooled(k, step=1):
    # each window's rows weighted by a softmax of its own scores, summed
    def f(S, V):
        out = []
        for t in range(S.shape[0]):
            a = vnp.exp(S[t] - vnp.max(S[t]))
            out.append(a @ V[step * t:step * t + k] / vnp.sum(a))
        return vnp.sum(vnp.tanh(vnp.stack(out)))
    return f


def weighted_sum(k):
    # a weight per window and offset, no normalisation, in a comprehension
    def f(Wt, V):
        return vnp.sum(vnp.stack([Wt[t] @ V[t:t + k] for t in range(Wt.shape[0])]) ** 2)
    return f


def _args(g, n, k, C, step=1):
    return g.standard_normal((n, k)), g.standard_normal((step * (n - 1) + k, C))


CASES = [
    ("pooled_k3_c8", pooled(3), lambda g: _args(g, 20, 3, 8)),
    ("pooled_k5_c2", pooled(5), lambda g: _args(g, 18, 5, 2)),
    ("pooled_k4_s2_c9", pooled(4, 2), lambda g: _args(g, 12, 4, 9, 2)),
    ("weighted_k6_c16", weighted_sum(6), lambda g: _args(g, 15, 6, 16)),
    ("weighted_k2_c1", weighted_sum(2), lambda g: _args(g, 25, 2, 1)),
]


@pytest.mark.parametrize("name,f,make", CASES, ids=[c[0] for c in CASES])
def test_weighted_windows_batched_equals_unbatched(name, f, make):
    check(f, make(rng(3)), (0, 1))


def _view_products(g, C):
    """Products of a per-window weight (n, k) with a (n, k, C) window view, to (n, C)."""
    out = []
    for e in g.eqns:
        if e.prim not in (P.einsum, P.muladd) or len(e.inputs) < 2:
            continue
        ins = parse_spec(e.params["spec"])[0]
        if len(ins[0]) == 2 and len(ins[1]) == 3 and e.out.aval.shape[-1] == C:
            out.append(e)
    return out


@pytest.mark.parametrize("f,k,C,want", [(pooled(5), 5, 16, True), (weighted_sum(4), 4, 32, True),
                                        (pooled(5), 5, 4, False), (weighted_sum(4), 4, 8, False)])
def test_weighted_windows_stay_one_product(f, k, C, want):
    # rows of 16 channels or more: one product over the view (else one per offset)
    e, _ = entry(f, _args(rng(1), 60, k, C), (0, 1))
    g = e.stages["final"]
    assert bool(_view_products(g, C)) == want, pretty(g)
