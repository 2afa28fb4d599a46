"""A large factor shared by the terms of a sum taken out (rewrite/factors.py): the gradient of
a value reached through several paths adds one upstream cotangent times each path's factors,
`n * b + 2 * (a * (n * c))`; factored, `n * (b + (2 * c) * a)` makes fewer passes over the
large arrays. Each program: batched = unbatched, gradients = central differences (float64,
random directions), and fewer large elementwise passes in the final graph than without the
rule (never more)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.rewrite import simplify as S


def scaled_rows(X, a, b, c):
    # the patterns suite's scaled_accumulate written with in-place adds: d/dX = n * a +
    # 2 * X * (n * b), n = cos * c
    buf = vnp.zeros(X.shape)
    for i in range(len(X)):
        buf[i] += X[i] * a
        buf[i] += (X[i] ** 2) * b
        buf[i] *= c[i]
    return vnp.sum(vnp.sin(buf))


def cubic(X, a, b, c):
    # three paths from X: a, 2 b X, 3 c X^2 times one cotangent
    return vnp.sum(vnp.tanh(a * X + b * X ** 2 + c * X ** 3))


def product_rule(X, w):
    # d/dX sin(X) cos(X) w = w cos^2 - w sin^2: the row weights w shared by both terms
    return vnp.sum(vnp.sin(X) * vnp.cos(X) * w)


def difference_of_paths(X, Y, s):
    # exp(X) * (Y - X) * s: d/dX = s e (Y - X) - s e, with the sign on a term
    return vnp.sum(vnp.exp(X) * (Y - X) * s)


def both_negated(X, Y):
    return vnp.sum(vnp.sqrt(1.0 + X * X) * -(Y * X) - vnp.sin(X) * Y)


def listed_terms(X, w):
    # a comprehension over rows, each row's value reached through two products
    return sum(vnp.sum(vnp.tanh(x * w) * (x * w) * 0.5) for x in X)


def _inputs(r, n=96, d=64):
    return r.standard_normal((n, d)) * 0.5


CASES = [
    ("scaled_rows", scaled_rows,
     lambda r: (_inputs(r), r.standard_normal(64), r.standard_normal(64) * 0.3,
                r.standard_normal(96)), (0, 1, 2, 3)),
    ("cubic", cubic, lambda r: (_inputs(r), r.standard_normal(64), r.standard_normal(64),
                                r.standard_normal(64) * 0.2), (0, 1, 2, 3)),
    ("product_rule", product_rule,
     lambda r: (_inputs(r), r.standard_normal((96, 1))), (0, 1)),
    ("difference_of_paths", difference_of_paths,
     lambda r: (_inputs(r), _inputs(r), r.standard_normal(64)), (0, 1, 2)),
    ("both_negated", both_negated, lambda r: (_inputs(r), _inputs(r)), (0, 1)),
    ("listed_terms", listed_terms, lambda r: (_inputs(r, 80), r.standard_normal(64)), (0, 1)),
]


def _large_passes(f, args, argnums) -> int:
    """Elementwise equations of the compiled gradient whose result has X's size or more."""
    vg.clear_cache()
    e = vg.grad(f, argnums=argnums).entry(*args)[0]
    n = args[0].size
    return sum(q.prim.elementwise and q.out.aval.size >= n for q in e.stages["final"].eqns)


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_shared_factor_taken_out(name, f, make, argnums, monkeypatch):
    args = make(rng())
    check(f, args, argnums)
    with_rule = _large_passes(f, args, argnums)
    rules = [r for r in S.RULES if r.rewrite is not S.factor_out_of_sum]
    monkeypatch.setattr(S, "RULES", rules)
    without = _large_passes(f, args, argnums)
    monkeypatch.undo()
    vg.clear_cache()
    assert with_rule <= without, (with_rule, without)
    if name in ("scaled_rows", "cubic", "difference_of_paths"):
        assert with_rule < without, (with_rule, without)


def test_scaled_rows_matches_numpy():
    r = rng(2)
    X, a, b, c = _inputs(r), r.standard_normal(64), r.standard_normal(64), r.standard_normal(96)
    gx = vg.grad(scaled_rows)(X, a, b, c)
    n = np.cos((a * X + b * X ** 2) * c[:, None]) * c[:, None]
    np.testing.assert_allclose(gx, n * (a + 2 * b * X), rtol=1e-12, atol=1e-14)


def test_small_sums_are_left_alone(monkeypatch):
    # below 4096 elements a pass costs about a call: the final graph is the one without it
    r = rng(3)
    args = (_inputs(r, 8, 8), r.standard_normal(8), r.standard_normal(8), r.standard_normal(8))
    check(scaled_rows, args, (0, 1, 2, 3))

    def final(rules):
        monkeypatch.setattr(S, "RULES", rules)
        vg.clear_cache()
        e = vg.grad(scaled_rows, argnums=(0, 1, 2, 3)).entry(*args)[0]
        return [(q.prim.name, q.out.aval.shape) for q in e.stages["final"].eqns]
    assert final(S.RULES) == final([r for r in S.RULES if r.rewrite is not S.factor_out_of_sum])
