"""Recurrences with several carries (batch/carries.py): a derived carry is recomputed from
the others (the first step peeled), carries split into groups that run one after another
(fission), a carry that batching stacked from several values is carried as its rows, and
selects of the carry are affine. Each program is checked against a plain NumPy loop (float64,
rtol 1e-9), against its unrolled trace (values and gradients) and by central differences in
random directions; structural checks say that no sequential loop is left."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import check, prims, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.batch.carries import narrow_reads, unstack
from vecgrad.ir import Aval, Eqn, Graph, Params, Var, typecheck

SCANS = {"affine_scan", "cumsum", "cumprod", "cummax", "cummin"}


def surprise(X):
    """A running mean whose step the cut between iterations splits: mu and x - mu carried."""
    mu = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        total += vnp.sum((X[t] - mu) ** 2)
        mu = mu + (X[t] - mu) / (t + 1)
    return total


def surprise_np(X):
    mu, total = np.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        total += np.sum((X[t] - mu) ** 2)
        mu = mu + (X[t] - mu) / (t + 1)
    return total


def ema_var(X):
    m = vnp.zeros(X.shape[1])
    v = vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        d = X[t] - m
        m = m + 0.1 * d
        v = 0.9 * (v + 0.1 * d * d)
        total = total + vnp.sum(v)
    return total


def ema_var_np(X):
    m, v, total = np.zeros(X.shape[1]), np.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        d = X[t] - m
        m = m + 0.1 * d
        v = 0.9 * (v + 0.1 * d * d)
        total += np.sum(v)
    return total


def momentum(p0, G):
    v, p, loss = vnp.zeros_like(p0), p0, 0.0
    for t in range(G.shape[0]):
        v = 0.8 * v + G[t]
        p = p - 0.1 * v
        loss = loss + vnp.sum(p ** 2)
    return loss


def momentum_np(p0, G):
    v, p, loss = np.zeros_like(p0), p0, 0.0
    for t in range(G.shape[0]):
        v = 0.8 * v + G[t]
        p = p - 0.1 * v
        loss += np.sum(p ** 2)
    return loss


def online_softmax(S, V):
    m, l_, acc = S[0], vnp.ones(S.shape[1]), V[0]
    for t in range(1, S.shape[0]):
        m_new = vnp.maximum(m, S[t])
        scale = vnp.exp(m - m_new)
        p = vnp.exp(S[t] - m_new)
        l_ = l_ * scale + p
        acc = acc * scale + p * V[t]
        m = m_new
    return vnp.sum(acc / l_)


def online_softmax_np(S, V):
    e = np.exp(S - S.max(axis=0))
    return np.sum(np.sum(e * V, axis=0) / np.sum(e, axis=0))


def min_pair(X, Y):
    m, best = X[0], Y[0]
    total = vnp.sum(best)
    for t in range(1, X.shape[0]):
        best = vnp.where(X[t] < m, Y[t], best)
        m = vnp.minimum(m, X[t])
        total = total + vnp.sum(best)
    return total


def min_pair_np(X, Y):
    m, best = X[0], Y[0]
    total = np.sum(best)
    for t in range(1, X.shape[0]):
        best = np.where(X[t] < m, Y[t], best)
        m = np.minimum(m, X[t])
        total += np.sum(best)
    return total


def compartments(X, k):
    a, b, loss = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a = 0.9 * a + X[t]
        b = k * b + 0.1 * a
        loss = loss + vnp.sum(b ** 2)
    return loss


def compartments_np(X, k):
    a, b, loss = np.zeros(X.shape[1]), np.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a = 0.9 * a + X[t]
        b = k * b + 0.1 * a
        loss += np.sum(b ** 2)
    return loss


def welford(X):
    mu, m2 = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        delta = X[t] - mu
        mu = mu + delta / (t + 1)
        m2 = m2 + delta * (X[t] - mu)
    return vnp.sum(m2) + vnp.sum(mu ** 2)


def welford_np(X):
    return np.sum(np.var(X, axis=0) * X.shape[0]) + np.sum(np.mean(X, axis=0) ** 2)


def X_(T=9, d=3, seed=0):
    return rng(seed).standard_normal((T, d))


CASES = [
    (surprise, lambda: (X_(),), surprise_np, (0,)),
    (ema_var, lambda: (X_(),), ema_var_np, (0,)),
    (momentum, lambda: (X_(1, 3)[0], X_(8, 3, 1)), momentum_np, (0, 1)),
    (online_softmax, lambda: (X_(), X_(seed=2)), online_softmax_np, (0, 1)),
    (min_pair, lambda: (X_(), X_(seed=3)), min_pair_np, (1,)),
    (compartments, lambda: (X_(), rng(4).uniform(0.5, 0.9, 3)), compartments_np, (0, 1)),
    (welford, lambda: (X_(),), welford_np, (0,)),
]


@pytest.mark.parametrize("f,make,ref,argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_several_carries_become_scans(f, make, ref, argnums):
    """Rolled == unrolled == the NumPy program; gradients by central differences; what the
    carries became is scans (and sums), no sequential loop."""
    args = make()
    e = check(f, args, argnums=argnums, ref=ref)
    names = prims(e.stages["scans"])
    assert "loop" not in names, names
    assert SCANS & set(names), names


@pytest.mark.parametrize("T", [4, 5, 33])
def test_trip_counts(T):
    """The peeled first step and the fission hold at the shortest rolled loops too."""
    check(surprise, (X_(T),), ref=surprise_np)
    check(ema_var, (X_(T),), ref=ema_var_np)
    check(online_softmax, (X_(T), X_(T, seed=5)), argnums=(0, 1), ref=online_softmax_np)


def two_ema(X):
    fast, slow, loss = X[0], X[0], 0.0
    for t in range(1, X.shape[0]):
        fast = 0.5 * fast + 0.5 * X[t]
        slow = 0.9 * slow + 0.1 * X[t]
        loss = loss + vnp.sum((fast - slow) ** 2)
    return loss


def two_ema_np(X):
    fast, slow, loss = X[0], X[0], 0.0
    for t in range(1, X.shape[0]):
        fast = 0.5 * fast + 0.5 * X[t]
        slow = 0.9 * slow + 0.1 * X[t]
        loss = loss + np.sum((fast - slow) ** 2)
    return loss


def test_float32_carries_keep_their_dtype():
    """Two float32 carries (split into two scans) give NumPy's float32 result."""
    X = X_(12).astype(np.float32)
    val, want = vg.jit(two_ema)(X), two_ema_np(X)
    assert np.asarray(val).dtype == np.asarray(want).dtype == np.float32
    np.testing.assert_allclose(val, want, rtol=1e-5)
    e, _ = vg.grad(two_ema).entry(X)
    assert "loop" not in prims(e.stages["scans"])


def rnn_with_running_mean(W, X):
    """A nonlinear carry and a linear one reading it: the tanh carry stays a loop, the mean
    of its states becomes a scan after it."""
    h, mu, loss = vnp.zeros(W.shape[0]), vnp.zeros(W.shape[0]), 0.0
    for t in range(X.shape[0]):
        h = vnp.tanh(W @ h + X[t])
        mu = 0.9 * mu + 0.1 * h
        loss = loss + vnp.sum(mu ** 2)
    return loss


def test_nonlinear_group_stays_one_loop_and_linear_one_scans():
    W, X = 0.5 * X_(3, 3, 6), X_(10, 3, 7)
    e = check(rnn_with_running_mean, (W, X), argnums=(0, 1))
    names = prims(e.stages["scans"])
    assert names.count("loop") == 1 and "affine_scan" in names, names


def coupled(X):
    """A full 2x2 coupling (each carry reads the other's old value): no group splits off,
    it stays one correct loop."""
    a, b, loss = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a, b = 0.9 * a + 0.1 * b + X[t], 0.8 * b - 0.1 * a
        loss = loss + vnp.sum(a * b)
    return loss


def test_coupled_carries_stay_correct():
    check(coupled, (X_(),))


def test_unstack_splits_rows_and_narrows_reads():
    """A carry stacked from two rows is carried as the rows, and `(a * b)[i]` reads become
    `a_i * b[i]`: no stack is left in the step."""
    a, b = Var(_aval((2, 3))), Var(_aval((2, 3)))
    e = Var(_aval((2, 3)))
    r0, r1, out = Var(_aval((3,))), Var(_aval((3,))), Var(_aval((2, 3)))
    body = Graph((a, b), (
        Eqn(P.mul, (a, b), Params(), e, None),
        Eqn(P.getitem, (e,), Params(idx=P.BasicIndex((0, P.Sl(0, 3, 1)))), r0, None),
        Eqn(P.getitem, (e,), Params(idx=P.BasicIndex((1, P.Sl(0, 3, 1)))), r1, None),
        Eqn(P.stack, (r1, r0), Params(axis=0), out, None)), (out,))
    new, rows = unstack(typecheck(body), 1, 1)
    typecheck(new)
    assert rows == [2] and len(new.inputs) == 3
    assert [x.prim.name for x in new.eqns].count("stack") == 0, new
    assert all(x.prim is not P.mul or x.out.aval.shape == (3,) for x in new.eqns)
    assert narrow_reads(body).eqns  # (a graph with no stacked carry narrows as well)


def _aval(shape):
    return Aval(shape, np.dtype("float64"))


# ------------------------------------------------------------------ coupled linear carries

def oscillators(U):
    """Two damped oscillators rotated together each step (a fully coupled 2x2 system)."""
    x = vnp.zeros(U.shape[1])
    y = vnp.zeros(U.shape[1])
    energy = 0.0
    for t in range(U.shape[0]):
        x, y = 0.9 * x - 0.2 * y + U[t], 0.2 * x + 0.9 * y
        energy = energy + vnp.sum(x * y)
    return energy + vnp.sum(x)


def holt(X):
    """Holt's level and trend, each new value reading both old ones."""
    level, trend, sse = X[0], vnp.zeros(X.shape[1]), 0.0
    for t in range(1, X.shape[0]):
        forecast = level + trend
        sse = sse + vnp.sum((X[t] - forecast) ** 2)
        new_level = 0.3 * X[t] + 0.7 * forecast
        trend = 0.1 * (new_level - level) + 0.9 * trend
        level = new_level
    return sse


def covariance(X, Y):
    """Three carries: two running means (batching merges their updates into one stacked
    operation with the co-moment's term) and the co-moment reading both."""
    mx, my, cxy = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1])
    for t in range(X.shape[0]):
        dx = X[t] - mx
        mx = mx + dx / (t + 1)
        my = my + (Y[t] - my) / (t + 1)
        cxy = cxy + dx * (Y[t] - my)
    return vnp.sum(cxy) + vnp.sum(mx * my)


@pytest.mark.parametrize("T", [30, 100])
def test_coupled_carries_are_one_linear_scan(T):
    """x, y = 0.9 x - 0.2 y + u, 0.2 x + 0.9 y: one linear_scan over 2x2 matrices, no loop,
    and a graph that does not grow with the trip count."""
    r = rng(3)
    sizes = []
    for n in (T, 2 * T):
        e = check(oscillators, (r.standard_normal((n, 3)),))
        sizes.append(e.counts["final"])
    assert sizes[0] == sizes[1], sizes
    with vg.config(keep_stages=True):
        e, _ = vg.jit(oscillators).entry(r.standard_normal((T, 3)))
    found = prims(e.stages["scans"])
    assert "linear_scan" in found and "loop" not in found, found


def test_holt_trend_is_a_linear_scan():
    check(holt, (rng(4).standard_normal((30, 4)),))
    with vg.config(keep_stages=True):
        e, _ = vg.jit(holt).entry(rng(4).standard_normal((30, 4)))
    found = prims(e.stages["scans"])
    assert "linear_scan" in found and "loop" not in found, found


def test_stacked_updates_of_several_carries_narrow_to_scans():
    """Two running means whose updates batching merged into one stacked subtraction (with
    the co-moment's term) are read row by row: two scans, no loop."""
    r = rng(5)
    args = (r.standard_normal((25, 3)), r.standard_normal((25, 3)))
    check(covariance, args, argnums=(0, 1))
    with vg.config(keep_stages=True):
        e, _ = vg.jit(covariance).entry(*args)
    found = prims(e.stages["scans"])
    assert "loop" not in found and found.count("affine_scan") + found.count("cumsum") >= 2, \
        found


def cascade(x):
    """Three scalar filters in cascade, kept in a list of floats: batching merges their
    scalar updates into short stacked vectors (read element by element: scalarize.py)."""
    s = [0.0, 0.0, 0.0]
    total = 0.0
    for t in range(x.shape[0]):
        s[0] = 0.9 * s[0] + x[t]
        s[1] = 0.8 * s[1] + 0.2 * s[0]
        s[2] = s[2] + 0.1 * s[1]
        total = total + s[2] * s[2]
    return total


def test_scalar_carries_stacked_by_batching_become_scans():
    """No loop is left, and the graph does not grow with the trip count."""
    r = rng(6)
    sizes = []
    for n in (40, 80):
        e = check(cascade, (r.standard_normal(n),))
        sizes.append(e.counts["final"])
        with vg.config(keep_stages=True):
            e, _ = vg.jit(cascade).entry(r.standard_normal(n))
        assert "loop" not in prims(e.stages["scans"]), prims(e.stages["scans"])
    assert sizes[0] == sizes[1], sizes
