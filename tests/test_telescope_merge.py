"""Sums kept relative to a running extreme, read at their end (rewrite/telescope.py's
_merged_terms, rewrite/runrows.py): an online log-sum-exp's terms exp(m_j - m_T) e^(x_j - m_j)
are one exp(x_j - m_T) each, and the running maximum, read then only at a few rows near its
ends, is one reduction: no scan, no running argmax, no scatter.

Each program is checked against a plain NumPy loop (float64, rtol 1e-9), its unrolled trace
and central differences (test_scans.check); far from zero (offsets to 1e8) and with -inf,
+inf and NaN items, the values equal the loop's, NaNs where the loop has them."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import check, prims, rng

import vecgrad as vg
import vecgrad.numpy as vnp


def lse_first_row(X, V):
    m, s = X[0], vnp.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = vnp.maximum(m, X[t])
        s = s * vnp.exp(m - m_new) + vnp.exp(X[t] - m_new)
        m = m_new
    return m + vnp.log(s)


def lse_first_row_np(X, V):
    m, s = X[0], np.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = np.maximum(m, X[t])
        s, m = s * np.exp(m - m_new) + np.exp(X[t] - m_new), m_new
    return m + np.log(s)


def lse_weighted_other_order(X, V):
    """Positive weights on the terms, the update written p * w + s * scale."""
    m, s = X[0], V[0] ** 2 + 0.5
    for t in range(1, X.shape[0]):
        m_new = vnp.maximum(m, X[t])
        s = vnp.exp(X[t] - m_new) * (V[t] ** 2 + 0.5) + s * vnp.exp(m - m_new)
        m = m_new
    return m + vnp.log(s)


def lse_weighted_other_order_np(X, V):
    m, s = X[0], V[0] ** 2 + 0.5
    for t in range(1, X.shape[0]):
        m_new = np.maximum(m, X[t])
        s, m = np.exp(X[t] - m_new) * (V[t] ** 2 + 0.5) + s * np.exp(m - m_new), m_new
    return m + np.log(s)


def soft_min(X, V):
    """A running minimum: the coefficient exp(m_new - m), the terms exp(m_new - x)."""
    m, s = X[0], vnp.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = vnp.minimum(m, X[t])
        s = s * vnp.exp(m_new - m) + vnp.exp(m_new - X[t])
        m = m_new
    return m - vnp.log(s)


def soft_min_np(X, V):
    m, s = X[0], np.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = np.minimum(m, X[t])
        s, m = s * np.exp(m_new - m) + np.exp(m_new - X[t]), m_new
    return m - np.log(s)


def tempered_dict(X, V):
    """Scores computed before the loop (a new array), the state in a dict."""
    Z = X * 1.5 + V
    st = {"m": Z[0], "s": vnp.ones(X.shape[1])}
    for t in range(1, X.shape[0]):
        m_new = vnp.maximum(st["m"], Z[t])
        st["s"] = st["s"] * vnp.exp(st["m"] - m_new) + vnp.exp(Z[t] - m_new)
        st["m"] = m_new
    return st["m"] + vnp.log(st["s"])


def tempered_dict_np(X, V):
    Z = X * 1.5 + V
    m, s = Z[0], np.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = np.maximum(m, Z[t])
        s, m = s * np.exp(m - m_new) + np.exp(Z[t] - m_new), m_new
    return m + np.log(s)


def tuple_state(X, V):
    """The (max, sum) pair as a tuple, and the maximum also read at its end."""
    st = (X[0], vnp.ones(X.shape[1]))
    for t in range(1, X.shape[0]):
        m, s = st
        m_new = vnp.maximum(m, X[t])
        st = (m_new, s * vnp.exp(m - m_new) + vnp.exp(X[t] - m_new))
    return vnp.log(st[1]) + 2.0 * st[0]


def tuple_state_np(X, V):
    m, s = X[0], np.ones(X.shape[1])
    for t in range(1, X.shape[0]):
        m_new = np.maximum(m, X[t])
        s, m = s * np.exp(m - m_new) + np.exp(X[t] - m_new), m_new
    return np.log(s) + 2.0 * m


PROGRAMS = [lse_first_row, lse_weighted_other_order, soft_min, tempered_dict, tuple_state]
REFS = {f: globals()[f.__name__ + "_np"] for f in PROGRAMS}


def _args(T, d=3, seed=7, offset=0.0):
    r = rng(seed)
    return r.standard_normal((T, d)) + offset, 0.5 * r.standard_normal((T, d))


def _scalar(f):
    def loss(X, V):
        return vnp.sum(f(X, V) * vnp.cos(vnp.arange(X.shape[1]) + 1.0))
    loss.__name__ = f.__name__
    return loss


def _scalar_np(f):
    return lambda X, V: np.sum(f(X, V) * np.cos(np.arange(X.shape[1]) + 1.0))


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("T", [9, 40])
def test_values_and_gradients(f, T):
    check(_scalar(f), _args(T), argnums=(0, 1), ref=_scalar_np(REFS[f]))


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_one_exp_no_running_extreme(f):
    """The simplified graph: no scan, no running extreme, one exp over the steps."""
    X, V = _args(60)
    with vg.config(keep_stages=True):
        e, _ = vg.grad(_scalar(f), argnums=(0, 1)).entry(X, V)
    g = e.stages["simplify"]
    assert not {"affine_scan", "loop"} & set(prims(g)), prims(g)
    assert not _long_running_extremes(g, 40)
    big = [q for q in g.eqns if q.prim.name == "exp" and q.out.aval.shape[0] > 40]
    assert len(big) == 1, big


def _long_running_extremes(g, n):
    """The cummax and cummin equations of g over more than n rows (those over a few rows
    near an end are what rewrite/runrows.py leaves)."""
    return [q for q in g.eqns if q.prim.name in ("cummax", "cummin") and
            q.out.aval.shape[q.params["axis"]] > n]


@pytest.mark.parametrize("offset", [1e3, 1e6, 1e8, -1e8])
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_far_from_zero(f, offset):
    """Each difference x - m is exact or within an ulp of its own size: the values equal
    the loop's at any offset."""
    X, V = _args(50, d=5, offset=offset)
    np.testing.assert_allclose(vg.jit(f)(X, V), REFS[f](X, V), rtol=1e-9)


def _special(kind, T=30, d=7):
    X, V = _args(T, d=d, seed=3)
    X[:2, 0] = -np.inf           # a NaN in the loop (-inf - -inf): a leading run of -inf,
    X[:12, 6] = -np.inf          # and one into the steady steps
    X[0, 1] = -np.inf            # a single -inf first: finite
    X[5, 2] = -np.inf            # -inf later: finite
    X[7, 3] = np.inf if kind == "inf" else np.nan
    X[T - 1, 4] = np.inf if kind == "inf" else -np.inf
    X[:, 5] = -np.inf            # every item -inf: NaN
    return X, V


@pytest.mark.parametrize("kind", ["inf", "nan"])
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_infinities_and_nans_as_the_loop(f, kind):
    X, V = _special(kind)
    if f is soft_min:
        X = -X
    with np.errstate(all="ignore"):
        want = REFS[f](X, V)
        got = vg.jit(f)(X, V)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_unbounded_terms_keep_the_product():
    """Terms exp(y - m) with y not the sequence m runs over (here 2x) may exceed 1: the
    product stays (no merge), the value the loop's."""
    def f(X, V):
        m, s = X[0], vnp.ones(X.shape[1])
        for t in range(1, X.shape[0]):
            m_new = vnp.maximum(m, X[t])
            s = s * vnp.exp(m - m_new) + vnp.exp(2.0 * X[t] - m_new)
            m = m_new
        return vnp.sum(vnp.log(s))

    def f_np(X, V):
        m, s = X[0], np.ones(X.shape[1])
        for t in range(1, X.shape[0]):
            m_new = np.maximum(m, X[t])
            s, m = s * np.exp(m - m_new) + np.exp(2.0 * X[t] - m_new), m_new
        return np.sum(np.log(s))
    check(f, _args(30), argnums=(0,), ref=f_np)


# ------------------------------------------------------------------ runrows

def ends_of_running_max(x):
    c = vnp.maximum.accumulate(x, axis=0)
    return vnp.sum(c[1] * c[0]) + vnp.sum(c[-3:] ** 2) + vnp.sum(c[-1]) + vnp.sum(c[:2, 0])


def ends_of_running_max_np(x):
    c = np.maximum.accumulate(x, axis=0)
    return np.sum(c[1] * c[0]) + np.sum(c[-3:] ** 2) + np.sum(c[-1]) + np.sum(c[:2, 0])


def ends_of_running_min_axis1(x):
    c = vnp.minimum.accumulate(x, axis=1)
    return vnp.sum(vnp.sin(c[:, -2:])) + vnp.sum(c[:, 3])


def ends_of_running_min_axis1_np(x):
    c = np.minimum.accumulate(x, axis=1)
    return np.sum(np.sin(c[:, -2:])) + np.sum(c[:, 3])


@pytest.mark.parametrize("f", [ends_of_running_max, ends_of_running_min_axis1],
                         ids=lambda f: f.__name__)
def test_running_extreme_read_at_its_ends(f):
    x = rng(5).standard_normal((40, 40))
    ref = globals()[f.__name__ + "_np"]
    assert vg.jit(f)(x) == ref(x)  # (the same comparisons: bit for bit)
    vg.check_grads(f, (x,), rtol=1e-6, atol=1e-8)
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f).entry(x)
    assert not _long_running_extremes(e.stages["simplify"], 16)
    x[3, :] = np.nan
    x[:, 7] = np.inf
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(vg.jit(f)(x), ref(x))


def test_running_extreme_read_in_the_middle_stays():
    def f(x):
        c = vnp.maximum.accumulate(x, axis=0)
        return vnp.sum(c[20]) + vnp.sum(c[-1] ** 2)
    x = rng(6).standard_normal((40, 5))
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f).entry(x)
    assert _long_running_extremes(e.stages["simplify"], 16)
    c = np.maximum.accumulate(x, axis=0)
    np.testing.assert_allclose(vg.jit(f)(x), np.sum(c[20]) + np.sum(c[-1] ** 2), rtol=1e-12)
