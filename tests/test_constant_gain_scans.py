"""Array states scaled by constants (a running mean's 1 / (t + 1), a decay) are rolled before
batching, so that batching cannot merge their steps' work across the cut between two steps
(Welford's x[t + 1] - mu and x[t] - mu); and an affine_scan whose first coefficient is zero
(a running mean's 0 / 1, a reverse scan's end) restarts at its second step, whose
coefficients' product is in range: both scans end as cumulative sums. Each program against
NumPy running it eagerly, its unrolled trace (values and gradients) and central differences;
data far from zero must keep the loop's digits."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import prims, unrolled

import vecgrad as vg
import vecgrad.numpy as vnp


def welford(X):
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        d = X[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (X[t] - mu)
    return np.sum(m2) + np.sum(mu)


def welford_squared_first(X):
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        d = X[t] - mu
        m2 = m2 + d * d * (t / (t + 1))
        mu = mu + d / (t + 1)
        total = total + np.sum(m2 / (t + 1))
    return total


def mean_from_first_row(X):
    mu = X[0]
    out = []
    for t in range(1, X.shape[0]):
        mu = mu + (X[t] - mu) / (t + 1)
        out.append(mu * X[t])
    return np.sum(np.stack(out))


def covariance(X, Y):
    mx, my, c = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        dx = X[t] - mx
        mx = mx + dx / (t + 1)
        my = my + (Y[t] - my) / (t + 1)
        c = c + dx * (Y[t] - my)
    return np.sum(c) + np.sum(mx * my)


def decayed_pair(X):
    m, v = X[0], vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(1, X.shape[0]):
        d = X[t] - m
        m = m + 0.1 * d
        v = 0.9 * (v + 0.1 * d * d)
        total = total + np.sum(v * X[t])
    return total


def backwards_mean(X):
    mu = vnp.zeros(X.shape[1])
    total = 0.0
    for k, t in enumerate(range(X.shape[0] - 1, -1, -1)):
        mu = mu + (X[t] - mu) / (k + 1)
        total = total + np.sum((X[t] - mu) ** 2)
    return total


PROGRAMS = [welford, welford_squared_first, mean_from_first_row, decayed_pair, backwards_mean]


def _eager(f, *args):
    return f(*[np.asarray(a) for a in args])


def _check(f, args, fd=True):
    argnums = tuple(range(len(args)))
    val0, grads0 = unrolled(f, args, argnums)
    val, grads = vg.value_and_grad(f, argnums=argnums)(*args)
    np.testing.assert_allclose(val, _eager(f, *args), rtol=1e-10)
    np.testing.assert_allclose(val, val0, rtol=1e-10)
    for a, b in zip(grads, grads0):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    if fd:
        vg.check_grads(f, args, argnums=argnums, rtol=1e-6, atol=1e-7)
    e, _ = vg.grad(f, argnums=argnums).entry(*args)
    return prims(e.stages["final"])


@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
@pytest.mark.parametrize("shape", [(40, 3), (64, 1)])
def test_constant_gains_become_cumulative_sums(f, shape):
    X = np.random.default_rng(shape[0]).standard_normal(shape)
    found = _check(f, (X,))
    assert "loop" not in found and "take" not in found, found
    # (Welford's M2 and mean read at their end are totals: rewrite/comoments.py)
    assert ("cumsum" in found) != (f is welford), found


@pytest.mark.parametrize("seed", [0, 1])
def test_two_running_means_and_a_comoment(seed):
    r = np.random.default_rng(seed)
    X, Y = r.standard_normal((40, 4)), r.standard_normal((40, 4)) + 2.0
    found = _check(covariance, (X, Y))
    assert "loop" not in found and "take" not in found, found


@pytest.mark.parametrize("offset,rtol", [(1e4, 1e-10), (1e6, 1e-9), (1e8, 1e-7)])
@pytest.mark.parametrize("f", [welford, welford_squared_first, mean_from_first_row])
def test_far_from_zero_keeps_the_loops_digits(f, offset, rtol):
    # (raw sums of squares would cancel here, to errors of order one at 1e8: the result
    # must be the loop's, within what the loop itself loses, 1e-9 of the exact value there)
    X = np.random.default_rng(5).standard_normal((200, 3)) + offset
    want = _eager(f, X)
    np.testing.assert_allclose(vg.jit(f)(X), want, rtol=rtol)
    g0 = unrolled(f, (X,), (0,))[1][0]
    np.testing.assert_allclose(vg.grad(f)(X), g0, rtol=1e-7, atol=1e-7 * np.abs(g0).max())


def test_a_gain_computed_from_data_is_left_to_batching():
    # (an online softmax's exp(m - m'): the running max it telescopes with is found after
    # batching; rolled first, it ran twice as slow)
    def online(S):
        m, s = S[0], vnp.ones(S.shape[1])
        for t in range(1, S.shape[0]):
            m2 = np.maximum(m, S[t])
            s = s * np.exp(m - m2) + np.exp(S[t] - m2)
            m = m2
        return np.sum(np.log(s) + m)
    S = np.random.default_rng(3).standard_normal((40, 3))
    found = _check(online, (S,))
    assert "loop" not in found, found
