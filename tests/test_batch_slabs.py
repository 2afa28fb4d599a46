"""Operands from several sources, as a mixture model's loop writes them (issue 13: gmm; issue
14 item 7): a value an inner loop indexes (`Qs[k]` for every point i) is stacked once and read
as a broadcast view, and per-iteration buffers filled by index (`beta[k] = ...` for each point)
are read as rows of the group that filled them, even beside other operands (`logsumexp(alpha)`
batched with the points' `logsumexp(beta)`)."""
from __future__ import annotations

import pytest
from test_batch import assert_size_independent, check, count, eqns, rng

import vecgrad.numpy as vnp
from vecgrad import primitives as P


def _lse(v):
    mx = vnp.max(v)
    return mx + vnp.log(vnp.sum(vnp.exp(v - mx)))


def _factors(q, K, d):
    """K matrices, each built by filling a buffer (distinct values, no batched source)."""
    Qs = []
    for k in range(K):
        Q = vnp.zeros((d, d))
        for j in range(d):
            Q[j, j] = vnp.exp(q[k, j])
        Qs.append(Q)
    return Qs


def mixture(alpha, mu, q, x):
    n, d = x.shape
    K = alpha.shape[0]
    Qs = _factors(q, K, d)
    total = 0.0
    for i in range(n):
        beta = vnp.empty(K)
        for k in range(K):
            z = Qs[k] @ (x[i] - mu[k])
            beta[k] = alpha[k] - 0.5 * vnp.sum(z * z)
        total = total + _lse(beta)
    return total - n * _lse(alpha)


def _mixture_args(n, K=6, d=3):
    r = rng(n)
    return (r.standard_normal(K), r.standard_normal((K, d)), 0.1 * r.standard_normal((K, d)),
            r.standard_normal((n, d)))


def _stack_operands(g) -> int:
    return max([len(e.inputs) for e in eqns(g, P.stack) + eqns(g, P.concatenate)] or [0])


def test_inner_loop_invariant_is_stacked_once_and_broadcast():
    args = _mixture_args(5)
    e = check(mixture, args, argnums=(0, 1, 2))
    g = e.stages["batch"]
    # the K factors: one (K, 3, 3) array, a stack of K values or one buffer the K chains of
    # writes share (batch/siblings.py); no copy of them per point
    stacks = [s for s in eqns(g, P.stack) if s.out.aval.shape[1:] == (3, 3)]
    shared = [s for s in eqns(g, P.full) if s.out.aval.shape == (6, 3, 3)]
    assert len(stacks) + len(shared) == 1 and all(s.out.aval.shape[0] == 6 for s in stacks)
    assert not [s for s in eqns(g, P.concatenate) if s.out.aval.shape[1:] == (3, 3)]
    assert _stack_operands(g) <= 6
    assert_size_independent(lambda n: (mixture, _mixture_args(n)))


def test_per_point_buffers_are_rows_of_their_group():
    e = check(mixture, _mixture_args(7), argnums=(0, 1, 2))
    # the 7 points' buffers and alpha: one concatenation of two pieces, not a stack of 8
    for g in (e.stages["batch"], e.stages["grad.simplify"]):
        assert _stack_operands(g) <= 6, max(len(s.inputs) for s in g.eqns)


@pytest.mark.parametrize("variant", ["reversed", "two_rows", "shared_scale", "no_extra"])
def test_buffers_filled_by_index_variants(variant):
    K, d = 5, 2

    def f(w, x, s):
        n = x.shape[0]
        total = 0.0
        for i in range(n):
            if variant == "two_rows":
                buf = vnp.zeros((2, K))
                for k in range(K):
                    buf[0, k] = vnp.sum(w[k] * x[i])
                    buf[1, k] = vnp.sum(w[k] * x[i] ** 2)
                total = total + vnp.sum(vnp.tanh(buf) * s[: 2, None])
                continue
            buf = vnp.empty(K)
            ks = range(K - 1, -1, -1) if variant == "reversed" else range(K)
            for k in ks:
                buf[k] = vnp.sum(w[k] * x[i]) * (s[k] if variant == "shared_scale" else 1.0)
            total = total + _lse(buf)
        return total if variant == "no_extra" else total + _lse(s[:K])

    r = rng(3)
    args = (r.standard_normal((K, d)), r.standard_normal((6, d)), r.standard_normal(K))
    e = check(f, args, argnums=(0, 1, 2))
    if variant != "two_rows":  # (a buffer filled row by row from two groups: not yet a slab)
        assert _stack_operands(e.stages["batch"]) <= 4
    assert count(e.stages["simplify"], P.exp) + count(e.stages["simplify"], P.tanh) <= 2


def test_values_shared_by_some_members_in_a_cycle():
    # members read M[i % 6] (more values than runs worth splitting): one stack of the six,
    # read as a broadcast view, never a copy per member
    def f(Ms, xs):
        total = 0.0
        for i in range(xs.shape[0]):
            total = total + vnp.sum(vnp.tanh(Ms[i % 6] @ xs[i]))
        return total

    r = rng(4)
    Ms = [r.standard_normal((3, 3)) for _ in range(6)]
    e = check(lambda *a: f(a[:6], a[6]), (*Ms, r.standard_normal((12, 3))),
              argnums=tuple(range(7)))
    g = e.stages["batch"]
    assert count(e.stages["simplify"], P.tanh) == 1
    assert [s.out.aval.shape for s in eqns(g, P.stack) if s.out.aval.ndim == 3] == [(6, 3, 3)]
    assert not [c for c in eqns(g, P.concatenate) if c.out.aval.ndim == 3]
