"""Welford's co-moment read at its end (rewrite/comoments.py): the contraction over the steps
of (x - mx_old)(y - my_new), or of t/(t+1) (x - mx_old)(y - my_old), with mx, my the running
means, is sum_t (x_t - mean x)(y_t - mean y): no running means, no cumsum and no reverse
cumsum in the gradient.

Each program is checked against a plain NumPy loop (float64, rtol 1e-9), its unrolled trace
and central differences (test_scans.check); far from zero against long double, never less
accurate than the loop; and programs that only look like Welford's (a decayed mean, a mean
with a phantom first sample, M2 read at every step) keep their value and their scan."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import check, prims, rng

import vecgrad as vg
import vecgrad.numpy as vnp


def m2_new_right(X, Y):
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        d = X[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (X[t] - mu)
    return m2


def m2_new_left(X, Y):
    """The factors swapped, the mean written as a weighted average."""
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        old = mu
        mu = old * (t / (t + 1)) + X[t] / (t + 1)
        m2 = m2 + (X[t] - mu) * (X[t] - old)
    return m2


def m2_weighted_old(X, Y):
    """Both deviations from the old mean, the weight t/(t+1) written out, M2 first."""
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        d = X[t] - mu
        m2 = m2 + d * d * t / (t + 1)
        mu = mu + d / (t + 1)
    return m2


def m2_negated(X, Y):
    """mean - x on both sides, the count a carry."""
    n, mu, m2 = 0, vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        n = t + 1
        back = mu - X[t]
        mu = (mu * (n - 1) + X[t]) / n
        m2 = m2 + back * (mu - X[t])
    return m2


def covariance_new_y(X, Y):
    mx, my, c = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        dx = X[t] - mx
        mx = mx + dx / (t + 1)
        my = my + (Y[t] - my) / (t + 1)
        c = c + dx * (Y[t] - my)
    return c


def comoment_old_scaled(X, Y):
    """Both old means, the weight and 1/(n-1) folded into each step, state in a dict."""
    k = 1.0 / (X.shape[0] - 1)
    st = {"mx": vnp.zeros(X.shape[1]), "my": vnp.zeros(X.shape[1]), "c": vnp.zeros(X.shape[1])}
    for t in range(X.shape[0]):
        dx, dy = X[t] - st["mx"], Y[t] - st["my"]
        st["c"] = st["c"] + k * (t / (t + 1)) * dx * dy
        st["mx"] = st["mx"] + dx / (t + 1)
        st["my"] = st["my"] + dy / (t + 1)
    return st["c"]


def m2_tuple_with_mean(X, Y):
    """A (n, mean, m2) tuple; the mean is read at the end too."""
    st = (0, vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]))
    for t in range(X.shape[0]):
        n, mu, m2 = st
        n += 1
        d = X[t] - mu
        mu = mu + d / n
        st = (n, mu, m2 + d * (X[t] - mu))
    return st[2] / (st[0] - 1) + 3.0 * st[1]


def m2_of_transformed(X, Y):
    """The data a function of the inputs (the probe's leaf is the product's value)."""
    Z = X * Y + 0.5 * X
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        d = Z[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (Z[t] - mu)
    return m2


def m2_scalar_series(X, Y):
    """One series, scalar state."""
    x = X[:, 0]
    mu, m2 = 0.0, 0.0
    for t in range(x.shape[0]):
        d = x[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (x[t] - mu)
    return m2 * vnp.ones(X.shape[1])


def m2_channels_2d(X, Y):
    """State of two axes (rows of a (T, 2, d//2) reshape)."""
    Z = vnp.reshape(X[:, :4], (X.shape[0], 2, 2))
    mu, m2 = vnp.zeros((2, 2)), vnp.zeros((2, 2))
    for t in range(Z.shape[0]):
        d = Z[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (Z[t] - mu)
    return vnp.concatenate([vnp.reshape(m2, (4,)), m2[0, :1], m2[1, 1:]])


def _loop_np(f):
    """The same loop run by NumPy (the vnp names it uses are NumPy's)."""
    glob = dict(f.__globals__)
    glob["vnp"] = np
    return type(f)(f.__code__, glob, f.__name__)


def m2_from_first(X, Y):
    """The mean started at the first row, the loop from the second."""
    mu, m2 = X[0], vnp.zeros(X.shape[1])
    for t in range(1, X.shape[0]):
        d = X[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (X[t] - mu)
    return m2


def correlation_five_carries(X, Y):
    """Two M2s and a co-moment of one loop (batching joins their sums into one segment sum:
    rewrite/blocksums.py parts it again), the correlation out."""
    mx, my = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    sxx, syy, sxy = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        dx, dy = X[t] - mx, Y[t] - my
        mx = mx + dx / (t + 1)
        my = my + dy / (t + 1)
        sxx = sxx + dx * (X[t] - mx)
        syy = syy + dy * (Y[t] - my)
        sxy = sxy + dx * (Y[t] - my)
    return sxy / vnp.sqrt(sxx * syy)


PROGRAMS = [m2_new_right, m2_new_left, m2_weighted_old, m2_negated, covariance_new_y,
            comoment_old_scaled, m2_tuple_with_mean, m2_of_transformed, m2_scalar_series,
            m2_channels_2d, m2_from_first, correlation_five_carries]
REFS = {f: _loop_np(f) for f in PROGRAMS}


def _args(T, d=6, seed=5, offset=0.0, spread=1.0):
    r = rng(seed)
    return (offset + spread * r.standard_normal((T, d)),
            0.5 * offset + spread * r.standard_normal((T, d)))


def _scalar(f):
    def loss(X, Y):
        v = f(X, Y)
        return vnp.sum(v * vnp.cos(vnp.arange(v.shape[0]) + 1.0))
    loss.__name__ = f.__name__
    return loss


def _scalar_np(f):
    def loss(X, Y):
        v = f(X, Y)
        return np.sum(v * np.cos(np.arange(v.shape[0]) + 1.0))
    return loss


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("T", [7, 40])
def test_values_and_gradients(f, T):
    check(_scalar(f), _args(T), argnums=(0, 1), ref=_scalar_np(REFS[f]))


def _stages(f, T=200, **kw):
    with vg.config(keep_stages=True):
        e, _ = vg.grad(_scalar(f), argnums=(0, 1)).entry(*_args(T, **kw))
    return e.stages


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_two_pass_no_running_mean(f):
    """The simplified forward graph keeps no cumsum (nor scan) over the steps: the means are
    totals, the co-moment one contraction of centred data."""
    g = _stages(f)["simplify"]
    long_scans = [q for q in g.eqns if q.prim.name in ("cumsum", "affine_scan", "linear_scan",
                                                       "loop") and q.out.aval.shape[0] > 20]
    assert not long_scans, long_scans


@pytest.mark.parametrize("offset,spread", [(1e3, 1.0), (1e6, 1.0), (1e6, 1e-3), (1e8, 1.0),
                                           (-1e8, 1.0), (3e8, 1e-2)])
@pytest.mark.parametrize("f", [m2_new_right, m2_weighted_old, covariance_new_y,
                               comoment_old_scaled], ids=lambda f: f.__name__)
@pytest.mark.parametrize("T", [40, 600])
def test_far_from_zero(f, offset, spread, T):
    """Against long double: never less accurate than the loop (whose rounded means drift by
    ~eps |offset| / spread relative: at 1e8 it is itself ~1e-8 from the exact co-moment),
    and within 1e-9 of the loop wherever the loop holds 1e-10 of the exact value. A raw sum
    of squares minus n mean^2 would lose every digit here."""
    X, Y = _args(T, offset=offset, spread=spread)
    got, loop = vg.jit(f)(X, Y), REFS[f](X, Y)
    exact = _exact(f, X, Y)
    scale = np.abs(exact) + 1e-300
    assert np.all(np.abs(got - exact) <= 2 * np.abs(loop - exact) + 1e-12 * scale)
    close = np.abs(loop - exact) <= 1e-10 * scale
    np.testing.assert_allclose(got[close], loop[close], rtol=1e-9)


def _exact(f, X, Y):
    """f's co-moment in long double, two-pass (f's own scale: 1 or 1/(n-1))."""
    xl, yl = X.astype(np.longdouble), Y.astype(np.longdouble)
    yl = xl if f in (m2_new_right, m2_weighted_old) else yl
    c = np.sum((xl - xl.mean(0)) * (yl - yl.mean(0)), axis=0)
    if f is comoment_old_scaled:
        c = c / (X.shape[0] - 1)
    return c.astype(np.float64)


def test_raw_sums_of_squares_would_fail():
    """The offsets above defeat the naive closed form (sum x^2 - n mean^2): the test can
    tell."""
    X, _ = _args(600, offset=1e8, spread=1.0)
    naive = np.sum(X * X, axis=0) - X.shape[0] * np.mean(X, axis=0) ** 2
    exact = _exact(m2_new_right, X, X)
    assert np.max(np.abs(naive - exact) / exact) > 1e-3


def decayed_mean(X, Y):
    """A constant gain is no running mean: M2-like sums of it stay as they were."""
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        d = X[t] - mu
        mu = mu + 0.1 * d
        m2 = m2 + d * (X[t] - mu)
    return m2


def phantom_first(X, Y):
    """A mean started at 1 as if one sample had been seen (gain 1/(t+2)): not X's mean."""
    mu, m2 = vnp.ones(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        d = X[t] - mu
        mu = mu + d / (t + 2)
        m2 = m2 + d * (X[t] - mu)
    return m2


def weight_off_by_one(X, Y):
    """Old deviations weighted (t+1)/(t+2), not t/(t+1): no co-moment."""
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        d = X[t] - mu
        m2 = m2 + d * d * ((t + 1) / (t + 2))
        mu = mu + d / (t + 1)
    return m2


def m2_every_step(X, Y):
    """M2 read at every step: a running co-moment, not its end."""
    mu, m2, total = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        d = X[t] - mu
        mu = mu + d / (t + 1)
        m2 = m2 + d * (X[t] - mu)
        total = total + m2
    return total


OTHERS = [decayed_mean, phantom_first, weight_off_by_one, m2_every_step]


@pytest.mark.parametrize("f", OTHERS, ids=lambda f: f.__name__)
def test_lookalikes_keep_their_value(f):
    check(_scalar(f), _args(30), argnums=(0, 1), ref=_scalar_np(_loop_np(f)))
    X, Y = _args(30, offset=1e3)
    np.testing.assert_allclose(vg.jit(f)(X, Y), _loop_np(f)(X, Y), rtol=1e-9)


@pytest.mark.parametrize("f", OTHERS, ids=lambda f: f.__name__)
def test_lookalikes_not_rewritten(f):
    """No centred contraction is made: the rule's two-pass form (a reduce_sum of the data,
    divided by the step count) is absent."""
    g = _stages(f, T=60)["simplify"]
    totals = [q for q in g.eqns if q.prim.name == "reduce_sum" and q.out.aval.shape == (6,)
              and q.inputs[0].aval.shape[0] == 60]
    assert "cumsum" in prims(g) or "affine_scan" in prims(g) or "linear_scan" in prims(g)
    assert not totals, totals


def test_float32_left_alone():
    """float32 data: the rule does not fire (its tolerance is float64's), values as the loop."""
    X, Y = (a.astype(np.float32) for a in _args(50))
    got = vg.jit(m2_new_right)(X, Y)
    np.testing.assert_allclose(got, REFS[m2_new_right](X, Y), rtol=1e-4)

