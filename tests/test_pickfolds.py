"""Running selections with the other tie and NaN rules (primitives/pickfolds.py):
`max(x[t], m)` (the new value first: an equal x wins and the fold restarts after a NaN),
`np.where(x >= m, x, m)` (an equal x wins, a NaN never does), `np.where(m >= x, m, x)`,
their min twins, rows, reversed loops and lists of states. Each program must compile to one
fold_pick (no loop) and equal NumPy running it eagerly (NaNs included), its unrolled trace
(values and gradients, ties included) and central differences; the primitive itself is
checked against a Python loop of the selection on ties and NaNs."""
from __future__ import annotations

import numpy as np
import pytest
from specs_pickfolds import pick_ref, scatter_ref
from test_python_fold_scans import check_program as _check
from test_python_fold_scans import eager as _eager
from test_scans import prims, unrolled

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

RULES = [(True, False), (False, True), (True, True)]  # (latest, restart)


def _ties_nans(seed: int, shape: tuple, nan_at: tuple) -> np.ndarray:
    x = np.random.default_rng(seed).integers(-3, 4, shape).astype(float)
    for i in nan_at:
        x.reshape(-1)[i] = np.nan
    return x


CASES = [((12,), ()), ((12,), (0,)), ((12,), (5,)), ((12,), (4, 5)), ((12,), (0, 7, 11)),
         ((9, 3), (0, 4)), ((9, 3), (2, 10, 26)), ((5, 2, 3), (1, 17))]


@pytest.mark.parametrize("latest,restart", RULES)
@pytest.mark.parametrize("greater", [True, False])
@pytest.mark.parametrize("shape,nan_at", CASES)
def test_values_winners_and_scatter_are_the_loops(shape, nan_at, greater, latest, restart):
    x = _ties_nans(len(nan_at) + len(shape), shape, nan_at)
    p = {"axis": 0, "greater": greater, "latest": latest, "restart": restart}
    val, won = pick_ref(x, 0, greater, latest, restart)
    got = P.fold_pick.impl(x, **p)
    np.testing.assert_array_equal(got, val)  # (NaNs where the loop has them)
    np.testing.assert_array_equal(P.fold_pick_winner.impl(got, x, **p), won)
    g = np.random.default_rng(1).standard_normal(shape)
    want = scatter_ref(g, val, x, 0, greater, latest, restart)
    np.testing.assert_allclose(P.fold_pick_scatter.impl(g, got, x, **p), want, rtol=1e-13,
                               atol=1e-13)
    assert np.allclose(P.fold_pick_scatter.impl(g[0], got, x, **p),  # a broadcast cotangent
                       scatter_ref(np.broadcast_to(g[0], shape), val, x, 0, greater, latest,
                                   restart), rtol=1e-13, atol=1e-13)


def test_long_restarts_match_the_loop():
    x = np.random.default_rng(7).standard_normal((400, 3))
    x[np.random.default_rng(8).random((400, 3)) < 0.05] = np.nan
    for greater in (True, False):
        val, _ = pick_ref(x, 0, greater, True, True)
        np.testing.assert_array_equal(P.fold_pick.impl(x, axis=0, greater=greater,
                                                       latest=True, restart=True), val)


# ------------------------------------------------------------------ programs


def value_first(x):
    m, out = x[0], [x[0]]
    for t in range(1, len(x)):
        m = max(x[t], m)  # the new value first: it wins ties, and a NaN m
        out.append(m)
    return np.sum(np.array(out) ** 2)


def value_first_min_scaled(x, w):
    m, tot = x[0] * w, 0.0
    for t in range(1, len(x)):
        m = min(x[t] * w, m)
        tot = tot + m * t
    return tot


def where_ge_rows(X):
    m, out = X[0], []
    for t in range(1, len(X)):
        m = np.where(X[t] >= m, X[t], m)  # an equal row wins; a NaN never does
        out.append(m)
    return np.sum(np.stack(out) ** 2)


def where_keep_ge(X):
    m, out = X[0], []
    for t in range(1, len(X)):
        m = np.where(m >= X[t], m, X[t])  # the first of equal items; a NaN either side: X[t]
        out.append(np.sin(m))
    return np.sum(np.stack(out))


def low_water_backwards(x):
    m, out = x[-1], []
    for t in range(len(x) - 2, -1, -1):
        m = vnp.where(x[t] <= m, x[t], m)  # a running min from the end, latest tie wins
        out.append(m * (t + 1))
    return np.sum(np.stack(out) ** 2)


def le_flipped(x, w):
    m = w
    tot = 0.0
    for t in range(len(x)):
        m = vnp.where(m <= x[t], x[t], m)  # `m <= x`: x wins ties, as `x >= m`
        tot = tot + m * x[t]
    return tot


def min_first_value(X):
    m, out = X[0], []
    for t in range(1, len(X)):
        m = np.where(m > X[t], X[t], m)  # a min written with the carry on the left
        out.append(m)
    return np.sum(np.stack(out) ** 3)


PROGRAMS = [(value_first, 1), (value_first_min_scaled, 2), (where_ge_rows, 1),
            (where_keep_ge, 1), (low_water_backwards, 1), (le_flipped, 2),
            (min_first_value, 1)]
PICKED = {value_first, value_first_min_scaled, where_ge_rows, where_keep_ge,
          low_water_backwards, le_flipped}


def _args(f, n_args, x):
    if f in (where_ge_rows, where_keep_ge):
        return (x.reshape(-1, 3),)
    return (x,) if n_args == 1 else (x, 0.7)


@pytest.mark.parametrize("f,n_args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_selections_become_one_fold(f, n_args):
    x = np.cumsum(np.random.default_rng(0).standard_normal(24))
    found, e = _check(f, _args(f, n_args, x))
    assert "loop" not in found, found
    assert ("fold_pick" if f in PICKED else "fold_extreme") in found, found
    if f in PICKED:
        assert any("fold_pick" in str(n) for n in e.stages["scans"].notes)


@pytest.mark.parametrize("f,n_args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_ties_send_the_gradient_where_the_loop_does(f, n_args):
    x = np.random.default_rng(3).integers(-3, 4, 24).astype(float)  # many equal items
    _check(f, _args(f, n_args, x), fd=False)


def running(f):
    def states(X):
        m, out = X[0], []
        for t in range(1, len(X)):
            m = f(X[t], m)
            out.append(m)
        return vnp.stack(out)
    return states


SELECTIONS = [lambda x, m: max(x, m), lambda x, m: min(x, m),
              lambda x, m: vnp.where(x >= m, x, m), lambda x, m: vnp.where(m >= x, m, x),
              lambda x, m: vnp.where(m < x, m, x), lambda x, m: vnp.where(m > x, x, m),
              # max-plus (from N_UNSHIFTED on): the carried side shifted by a constant
              lambda x, m: max(x, m - 0.1), lambda x, m: min(m + 1, x),
              lambda x, m: vnp.where(m + 0.2 >= x, m + 0.2, x),
              lambda x, m: vnp.where(x > m - 0.3, x, m - 0.3),
              lambda x, m: max(x, m) - 0.1, lambda x, m: vnp.where(x <= m, x, m) + 0.5]


N_UNSHIFTED = 6


def _same_states(k, got, want):
    """The loop's states bit for bit (NaNs included), or for a shifted selection within
    rounding: the fold adds a at most log2(t) times where the loop adds it t times."""
    if k < N_UNSHIFTED:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0, equal_nan=True)


@pytest.mark.parametrize("k", range(len(SELECTIONS)))
@pytest.mark.parametrize("nan_at", [(0,), (5,), (5, 6), (23,), (3, 11, 17)])
def test_nans_are_the_loops(k, nan_at):
    x = _ties_nans(k, (24,), nan_at)
    f = running(SELECTIONS[k])
    _same_states(k, vg.jit(f)(x), _eager(f, (x,)))
    found = prims(vg.jit(f).entry(x)[0].stages["scans"])
    assert "loop" not in found and ("fold_pick" in found or "fold_extreme" in found), found


def test_values_hold_at_large_offsets():
    x = 1e8 + np.random.default_rng(9).integers(-3, 4, 200).astype(float)
    for f in (value_first, low_water_backwards):
        val0, grads0 = unrolled(f, (x,), (0,))
        val, g = vg.value_and_grad(f)(x)
        np.testing.assert_allclose([val, val0], _eager(f, (x,)), rtol=1e-14)  # (sum order)
        np.testing.assert_allclose(g, grads0[0], rtol=1e-12)
    for k in range(len(SELECTIONS)):  # the states themselves
        f = running(SELECTIONS[k])
        _same_states(k, vg.jit(f)(x), _eager(f, (x,)))


# ------------------------------------------------------------------ max-plus: c + a


def chamfer(x):
    y = x.copy()
    for i in range(1, len(y)):
        y[i] = max(y[i], y[i - 1] - 0.1)  # the new value first: latest tie, restart
    return np.sum(y ** 2)


def distance_both_ways(x):
    d = x.copy()
    for i in range(1, len(d)):
        d[i] = min(d[i], d[i - 1] + 1)
    for i in range(len(d) - 2, -1, -1):
        d[i] = min(d[i], d[i + 1] + 1)
    return np.sum(np.sqrt(d * d + 1.0))


def decaying_peak_list(x):
    m, out = x[0], []
    for t in range(1, len(x)):
        m = max(m - 0.05, x[t])  # Python's rule on the carry side: first tie, sticky
        out.append(m * t)
    return np.sum(np.stack(out))


def rows_where_shifted(X):
    Y, out = X[0], []
    for t in range(1, len(X)):
        Y = vnp.where(Y + 0.2 < X[t], Y + 0.2, X[t])  # min-plus per column
        out.append(vnp.exp(-Y))
    return vnp.sum(vnp.stack(out))


def keep_ge_shifted(x):
    m, tot = x[-1], 0.0
    for t in range(len(x) - 2, -1, -1):
        m = vnp.where(0.3 + m >= x[t], 0.3 + m, x[t])  # rising carry, backwards
        tot = tot + m ** 2
    return tot


MAXPLUS = [chamfer, distance_both_ways, decaying_peak_list, rows_where_shifted,
           keep_ge_shifted]


def _mp_args(f, x):
    return (x.reshape(-1, 3),) if f is rows_where_shifted else (x,)


@pytest.mark.parametrize("f", MAXPLUS, ids=[f.__name__ for f in MAXPLUS])
@pytest.mark.parametrize("seed", [0, 1])
def test_maxplus_selections_become_one_fold(f, seed):
    x = np.random.default_rng(seed).standard_normal(48)
    found, e = _check(f, _mp_args(f, x))
    assert "loop" not in found and "fold_pick" in found, found
    assert any("-plus scan" in str(n) for n in e.stages["scans"].notes)


@pytest.mark.parametrize("f", MAXPLUS, ids=[f.__name__ for f in MAXPLUS])
def test_maxplus_ties_and_nans_are_the_loops(f):
    x = np.random.default_rng(5).integers(-3, 4, 48) * 0.1  # many equal candidates
    _check(f, _mp_args(f, x), fd=False)
    x[[3, 20, 21]] = np.nan  # (the states themselves: test_nans_are_the_loops)
    np.testing.assert_allclose(vg.jit(f)(*_mp_args(f, x)), _eager(f, _mp_args(f, x)),
                               rtol=1e-13, equal_nan=True)


def test_a_learned_shift_stays_a_correct_loop():
    def f(x, c):
        y = x.copy()
        for i in range(1, len(y)):
            y[i] = max(y[i], y[i - 1] - c)
        return np.sum(y ** 2)
    args = (np.random.default_rng(2).standard_normal(24), 0.1)
    found, _ = _check(f, args)
    assert "loop" in found, found


def _exact_maxplus(x, a):
    """The loop's recurrence in exact rational arithmetic."""
    from fractions import Fraction
    y, out = None, []
    for v in x:
        v = Fraction(float(v))
        y = v if y is None else max(y + Fraction(a), v)
        out.append(y)
    return np.array([float(q) for q in out])


@pytest.mark.parametrize("offset,a", [(0.0, -0.1), (1e4, -0.01), (1e8, -0.1), (1e8, 0.37)])
def test_maxplus_values_within_the_loops_own_error(offset, a):
    x = offset + np.random.default_rng(4).standard_normal(600)
    y = P.fold_pick.impl(x, axis=0, greater=True, latest=True, restart=True, shift=a)
    loop = x.copy()
    for i in range(1, len(x)):
        loop[i] = max(loop[i], loop[i - 1] + a)
    exact = _exact_maxplus(x, a)
    assert np.max(np.abs(y - exact)) <= np.max(np.abs(loop - exact))
    np.testing.assert_allclose(y, loop, rtol=1e-12)


def test_maxplus_with_infinities_is_the_loops():
    x = np.random.default_rng(6).standard_normal(64)
    x[np.random.default_rng(7).random(64) < 0.6] = np.inf  # a distance transform's start
    x[0] = np.inf
    np.testing.assert_array_equal(vg.jit(distance_both_ways)(x), distance_both_ways(x))
    d = P.fold_pick.impl(x, axis=0, greater=False, latest=True, restart=True, shift=1.0)
    np.testing.assert_allclose(d, pick_ref(x, 0, False, True, True, 1.0)[0], rtol=1e-14)
    assert np.array_equal(np.isinf(d), np.arange(64) < np.argmax(np.isfinite(x)))
