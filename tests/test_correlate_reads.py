"""Correlations read in part (the first lags of an autocorrelation, a slice of a valid
correlation) compute only what is read, and the cotangent of such a read (zeros around a run)
is correlated as the run alone (rewrite/correlate.py): the final graph has no correlation of
a zero-padded cotangent and costs fewer multiply-adds. Each program: batched = unbatched,
gradients = central differences (float64, random directions)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.rewrite import simplify as S
from vecgrad.rewrite.correlate import correlate_of_zero_padded, read_of_correlate


def lags_loop(x):
    n = len(x)
    return sum((x[:n - L] @ x[L:]) ** 2 for L in range(n // 2))


def lags_full(x):
    n = len(x)
    return vnp.sum(vnp.correlate(x, x, "full")[n - 1:n - 1 + n // 3] ** 2)


def valid_middle(x, w):
    return vnp.sum(vnp.tanh(vnp.correlate(x, w, "valid")[3:9]))


def cross_lags(x, y):
    # lags of two signals, negative and positive
    n = len(x)
    return vnp.sum(vnp.correlate(x, y, "full")[n - 4:n + 5] ** 2)


CASES = [
    ("lags_loop", lags_loop, lambda r: (r.standard_normal(40),), 0),
    ("lags_full", lags_full, lambda r: (r.standard_normal(37),), 0),
    ("valid_middle", valid_middle, lambda r: (r.standard_normal(30), r.standard_normal(5)),
     (0, 1)),
    ("cross_lags", cross_lags, lambda r: (r.standard_normal(25), r.standard_normal(25)),
     (0, 1)),
]


def macs(g) -> int:
    """np.correlate's multiply-adds over the graph's correlations."""
    n = 0
    for e in g.eqns:
        if e.prim is P.correlate:
            a, k = e.inputs[0].aval.shape[0], e.inputs[1].aval.shape[0]
            n += a * k if e.params["mode"] == "full" else (a - k + 1) * k
    return n


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_partial_correlations_compute_what_is_read(name, f, make, argnums, monkeypatch):
    args = make(rng())
    e = check(f, args, argnums)
    made = {q.out: q for q in e.stages["final"].eqns}
    for q in e.stages["final"].eqns:  # no correlation of zeros around a run
        d = made.get(q.inputs[0]) if q.prim is P.correlate else None
        assert d is None or d.prim is not P.setitem, name
    # against the same pipeline without the two rules
    rules = [r for r in S.RULES if r.rewrite not in (read_of_correlate,
                                                     correlate_of_zero_padded)]
    monkeypatch.setattr(S, "RULES", rules)
    before = vg.grad(lambda *a: f(*a), argnums=argnums).entry(*args)[0].stages["final"]
    assert macs(e.stages["final"]) < 0.75 * macs(before), name


def test_the_autocorrelation_matches_numpy():
    x = np.random.default_rng(2).standard_normal(64)
    want = np.sum(np.correlate(x, x, "full")[63:63 + 32] ** 2)
    np.testing.assert_allclose(vg.jit(lags_loop)(x), want, rtol=1e-12)
