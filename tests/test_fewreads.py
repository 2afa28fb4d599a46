"""Values read only at a few small places (rewrite/fewreads.py, in the sweeps of
rewrite/runrows.py): each read is computed from the parts it needs, through elementwise
operations and views, so that a running maximum whose steady steps became a closed form is
left read at its ends only and becomes a reduction. The online softmax (two sums kept
relative to one running maximum, the state stacked by batching) is the program; the others
put each kind of view between the scan and the few reads.

Values equal the NumPy loop's (rtol 1e-9), gradients the unrolled trace's and central
differences (test_scans.check)."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import check, rng
from test_telescope import online_softmax, online_softmax_np
from test_telescope_merge import _long_running_extremes

import vecgrad as vg
import vecgrad.numpy as vnp


def softmax_pool_dict(S, V):
    """The same as a dict of three carries, the weighted values squared."""
    st = {"m": S[0], "l": vnp.ones(S.shape[1]), "a": V[0] ** 2}
    for t in range(1, S.shape[0]):
        m_new = vnp.maximum(st["m"], S[t])
        scale = vnp.exp(st["m"] - m_new)
        p = vnp.exp(S[t] - m_new)
        st = {"m": m_new, "l": st["l"] * scale + p, "a": st["a"] * scale + p * V[t] ** 2}
    return vnp.sum(vnp.log(st["a"] / st["l"]))


def softmax_pool_dict_np(S, V):
    m, l_, a = S[0], np.ones(S.shape[1]), V[0] ** 2
    for t in range(1, S.shape[0]):
        m_new = np.maximum(m, S[t])
        scale, p = np.exp(m - m_new), np.exp(S[t] - m_new)
        l_, a, m = l_ * scale + p, a * scale + p * V[t] ** 2, m_new
    return np.sum(np.log(a / l_))


def softmin_pool(S, V):
    """A running minimum and two sums relative to it (the other sign)."""
    m, l_, acc = S[0], vnp.ones(S.shape[1]), V[0]
    for t in range(1, S.shape[0]):
        m_new = vnp.minimum(m, S[t])
        scale = vnp.exp(m_new - m)
        p = vnp.exp(m_new - S[t])
        l_ = l_ * scale + p
        acc = acc * scale + p * V[t]
        m = m_new
    return vnp.sum(acc / l_) + vnp.sum(m)


def softmin_pool_np(S, V):
    m, l_, acc = S[0], np.ones(S.shape[1]), V[0]
    for t in range(1, S.shape[0]):
        m_new = np.minimum(m, S[t])
        scale, p = np.exp(m_new - m), np.exp(m_new - S[t])
        l_, acc, m = l_ * scale + p, acc * scale + p * V[t], m_new
    return np.sum(acc / l_) + np.sum(m)


PROGRAMS = [online_softmax, softmax_pool_dict, softmin_pool]
REFS = {online_softmax: online_softmax_np, softmax_pool_dict: softmax_pool_dict_np,
        softmin_pool: softmin_pool_np}


def _args(T, d=3, seed=11, offset=0.0):
    r = rng(seed)
    return r.standard_normal((T, d)) + offset, 0.5 * r.standard_normal((T, d)) + 1.0


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("T", [9, 40])
def test_values_and_gradients(f, T):
    check(f, _args(T), argnums=(0, 1), ref=REFS[f])


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_no_running_extreme_left(f):
    X, V = _args(60)
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f, argnums=(0, 1)).entry(X, V)
    g = e.stages["simplify"]
    assert not _long_running_extremes(g, 40)
    big = [q for q in g.eqns if q.prim.name == "exp" and q.out.aval.shape[0] > 40]
    assert len(big) == 1, big


@pytest.mark.parametrize("offset", [1e4, 1e8])
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_far_from_zero(f, offset):
    X, V = _args(50, d=4, offset=offset)
    np.testing.assert_allclose(vg.jit(f)(X, V), REFS[f](X, V), rtol=1e-9)


def _perm(n):
    """Rows permuted, the first few from the end."""
    return np.concatenate([np.arange(n - 1, n - 5, -1), (np.arange(n - 4) * 7) % (n - 4)])


def ends_through_views(x):
    """A running maximum's exp read at a few rows through a concatenation, a take, a
    window view and unit-axis reshapes."""
    c = vnp.maximum.accumulate(x, axis=0)
    z = vnp.exp(c - x[-1])
    w = vnp.concatenate([z, x * 2.0], axis=1)[:, None, :]
    u = vnp.take(w, _perm(x.shape[0]), axis=0)
    return vnp.sum(u[0] ** 2) + vnp.sum(u[2:4, :, 3:]) + vnp.sum(w[1:3, 0, 1:]) + \
        vnp.sum(z[-2]) + vnp.sum(vnp.cos(u[3:0:-1, 0, 2])) + vnp.sum(w[-2::-1][0, 0, 1:])


def ends_through_views_np(x):
    c = np.maximum.accumulate(x, axis=0)
    z = np.exp(c - x[-1])
    w = np.concatenate([z, x * 2.0], axis=1)[:, None, :]
    u = np.take(w, _perm(x.shape[0]), axis=0)
    return np.sum(u[0] ** 2) + np.sum(u[2:4, :, 3:]) + np.sum(w[1:3, 0, 1:]) + \
        np.sum(z[-2]) + np.sum(np.cos(u[3:0:-1, 0, 2])) + np.sum(w[-2::-1][0, 0, 1:])


def test_few_reads_through_views():
    x = rng(4).standard_normal((96, 5))
    np.testing.assert_allclose(vg.jit(ends_through_views)(x), ends_through_views_np(x),
                               rtol=1e-12)
    vg.check_grads(ends_through_views, (x,), rtol=1e-6, atol=1e-8)
    with vg.config(keep_stages=True):
        e, _ = vg.grad(ends_through_views).entry(x)
    assert not _long_running_extremes(e.stages["simplify"], 16)
