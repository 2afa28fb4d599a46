"""Logistic losses as users write them (rewrite/logistic.py): the written sigmoid
1 / (1 + exp(-z)) becomes the logistic primitive (NumPy's values bit for bit, a finite
gradient where exp(-z) overflows), log(1 - s) and log1p(-s) become -logaddexp(0, z) (finite
where NumPy's cancels to -inf). Each program: batched = unbatched, gradients = central
differences (float64, random directions), the forms found in the final graph; then values
and gradients at extreme scores."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp


def sigmoid_regression(w, X, y):
    return sum((1 / (1 + np.exp(-(x @ w))) - t) ** 2 for x, t in zip(X, y))


def bce_loop(w, X, y):
    loss = 0.0
    for i in range(len(y)):
        s = 1.0 / (1.0 + np.exp(-(X[i] @ w)))
        loss += -(y[i] * np.log(s) + (1 - y[i]) * np.log(1 - s))
    return loss


def bce_log1p(w, X, y):
    s = 1 / (np.exp(-(X @ w)) + 1)
    return -np.sum(y * np.log(s) + (1 - y) * np.log1p(-s))


def neg_log_sigmoid_pairs(E, pairs):
    return sum(-np.log(1 / (1 + np.exp(-(E[a] @ E[b])))) for a, b in pairs)


def gated_rows(X, W):
    return vnp.sum(np.stack([x * (1 / (1 + np.exp(-(x @ W)))) for x in X]) ** 2)


def map_two_iterables(X, w, b):
    def kernel(x, bias):
        return 1 / (1 + np.exp(x @ w + bias))  # (a sigmoid of the negated score)
    return sum(map(kernel, X, b))


def _lin(r, n, d):
    return (r.standard_normal(d), r.standard_normal((n, d)),
            (r.random(n) < 0.5).astype(float))


CASES = [
    ("sigmoid_regression", sigmoid_regression, lambda r: _lin(r, 12, 3), (0, 1),
     {"logistic": 1}),
    ("bce_loop", bce_loop, lambda r: _lin(r, 10, 4), (0, 1), {"logaddexp": 1}),
    ("bce_log1p", bce_log1p, lambda r: _lin(r, 15, 3), (0, 1), {"logaddexp": 1}),
    ("neg_log_sigmoid_pairs", neg_log_sigmoid_pairs,
     lambda r: (r.standard_normal((6, 3)), [(int(a), int(b)) for a, b in
                                            r.integers(0, 6, (9, 2))]), 0, {"logaddexp": 1}),
    ("gated_rows", gated_rows, lambda r: (r.standard_normal((7, 4)), r.standard_normal(4)),
     (0, 1), {"logistic": 1}),
    ("map_two_iterables", map_two_iterables,
     lambda r: (r.standard_normal((8, 3)), r.standard_normal(3), list(r.standard_normal(8))),
     (0, 1), {"logistic": 1}),
]


@pytest.mark.parametrize("name,f,make,argnums,found", CASES, ids=[c[0] for c in CASES])
def test_written_logistic_losses(name, f, make, argnums, found):
    args = make(rng(3))
    e = check(f, args, argnums)
    forward = [q.prim.name for q in e.stages["simplify"].eqns]
    for prim, n in found.items():
        assert forward.count(prim) == n, forward
    assert "exp" not in forward and "div" not in forward, forward  # (no written form left)


def test_written_sigmoid_values_bit_for_bit_and_finite_gradient():
    z = np.concatenate([np.linspace(-900, 900, 181), [0.0, -0.0, 36.0, -36.0, 745.0]])
    f = vg.jit(lambda z: 1 / (1 + vnp.exp(-z)))
    with np.errstate(over="ignore"):
        want = 1 / (1 + np.exp(-z))
    np.testing.assert_array_equal(f(z), want)
    g = vg.grad(lambda z: vnp.sum(1 / (1 + vnp.exp(-z)) * z))(z)
    assert np.isfinite(g).all()  # (the written form's gradient was inf * 0 = NaN below -709)
    np.testing.assert_allclose(g, want + z * want * (1 - want), rtol=1e-13, atol=1e-300)


def test_bce_finite_where_numpy_cancels():
    z = np.array([-700.0, -40.0, -3.0, 0.0, 3.0, 40.0, 700.0])
    y = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    val, g = vg.value_and_grad(bce_log1p)(np.ones(1), z[:, None], y)
    exact = np.sum(y * np.logaddexp(0.0, -z) + (1 - y) * np.logaddexp(0.0, z))
    np.testing.assert_allclose(val, exact, rtol=1e-14)
    sig = np.array([0.0, 1 / (1 + np.exp(40.0)), *(1 / (1 + np.exp(-z[2:-1]))), 1.0])
    np.testing.assert_allclose(g, [np.sum((sig - y) * z)], rtol=1e-12)
    with np.errstate(all="ignore"):  # (NumPy's own: -inf terms, an inf loss)
        assert not np.isfinite(-np.sum(y * np.log(sig) + (1 - y) * np.log1p(-sig)))


def test_sigmoid_is_exact_in_its_tails():
    # logistic's impl is the written formula: tiny values kept (a tanh form rounded them to 0)
    z = np.array([-40.0, -100.0, -700.0])
    np.testing.assert_array_equal(vg.nn.sigmoid(z), 1 / (1 + np.exp(-z)))
    assert (vg.nn.sigmoid(z) > 0).all()
