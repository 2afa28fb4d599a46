"""logaddexp against a constant (softplus, -log sigmoid, a hinge smoothed in log space): its VJP,
x's share exp(x - logaddexp(x, k)) with 1 where x is the result, is logistic(x - k)
(rewrite/softmax.py): one pass instead of four. Each variant: batched = unbatched, gradients =
central differences (float64, random directions), the share a logistic exactly where the other
operand is a finite constant, and the same gradient at infinities."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp


def softplus_regression(X, w):
    return vnp.sum(vnp.logaddexp(0.0, X @ w))


def shifted_softplus(x):
    return vnp.sum(vnp.logaddexp(x, 2.0) * x)


def constant_row(X):
    return vnp.sum(vnp.logaddexp(np.array([-1.0, 0.5, 3.0]), X) ** 2)


def neg_log_sigmoid_pairs(Win, Wout, pairs):
    loss = 0.0
    for c, o in pairs:
        loss += -vnp.log(vg.nn.sigmoid(Wout[o] @ Win[c]))
        loss += -vnp.log(vg.nn.sigmoid(-(Wout[(o + 1) % len(Wout)] @ Win[c])))
    return loss


def two_arrays(x, y):
    # no constant operand: the share stays exp(x - L)
    return vnp.sum(vnp.logaddexp(x, y) * x)


def infinite_constant(x):
    # -inf is no finite constant: left as written
    return vnp.sum(vnp.logaddexp(x, -np.inf) * x)


CASES = [
    ("softplus_regression", softplus_regression,
     lambda r: (r.standard_normal((30, 4)), r.standard_normal(4)), (0, 1), 1),
    ("shifted_softplus", shifted_softplus, lambda r: (r.standard_normal(25) * 3,), 0, 1),
    ("constant_row", constant_row, lambda r: (r.standard_normal((6, 3)),), 0, 1),
    ("neg_log_sigmoid_pairs", neg_log_sigmoid_pairs,
     lambda r: (r.standard_normal((7, 3)), r.standard_normal((5, 3)),
                [(int(a), int(b)) for a, b in r.integers(0, 5, (12, 2))]), (0, 1), 2),
    ("two_arrays", two_arrays, lambda r: (r.standard_normal(9), r.standard_normal(9)), (0, 1), 0),
    ("infinite_constant", infinite_constant, lambda r: (r.standard_normal(9),), 0, 0),
]


@pytest.mark.parametrize("name,f,make,argnums,n_logistic", CASES, ids=[c[0] for c in CASES])
def test_shares_of_logaddexp(name, f, make, argnums, n_logistic):
    e = check(f, make(rng()), argnums)
    final = [q.prim.name for q in e.stages["final"].eqns]
    assert final.count("logistic") == n_logistic, final
    if n_logistic:
        assert "exp" not in final, final


def test_gradient_at_infinities_as_before():
    # d softplus(x) / dx: 1 at inf, 0 at -inf, as logaddexp's select gave it
    x = np.array([np.inf, -np.inf, 800.0, -800.0, 0.0])
    with np.errstate(all="ignore"):
        g = vg.grad(lambda x: vnp.sum(vnp.logaddexp(0.0, x)))(x)
    np.testing.assert_array_equal(g, [1.0, 0.0, 1.0, 0.0, 0.5])
