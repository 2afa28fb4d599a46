"""Consecutive read-modify-writes at one position with nothing reading the buffer between them
(`p[k] *= 0.95; p[k] += x`) composed into one link (batch/rmwchains `_fused`: a_q (a_p x + b_p)
+ b_q), so a chain of a decay and an add per step is one rate and takes the closed form (one
weighted scatter) instead of a segmented scan of two rates. Traced and Python-int positions,
`*=` / `+=` / `-=` / set links, three links per step, a rate passed in, rows. Values equal
NumPy's loop, batched equals unbatched, gradients match central differences; links at other
positions, a read between links and rates of two symbols keep the loop's values."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(2711)


def decay_add(x, k, xp=vnp):
    p = xp.ones(6)
    for i in range(len(k)):
        p[k[i]] *= 0.95
        p[k[i]] += x[i]
    return np.sum(p ** 2)


def add_then_halve(x, k, xp=vnp):
    p = xp.full(6, 0.5)
    for i in range(len(k)):
        p[k[i]] += np.sin(x[i])
        p[k[i]] *= 0.5
    return np.sum(p * np.arange(6.0))


def set_links(x, k, xp=vnp):
    e = xp.zeros(5)
    for i in range(len(k)):
        e[k[i]] = 0.7 * e[k[i]]
        e[k[i]] = e[k[i]] + 0.3 * x[i] ** 2
    return np.sum(np.sqrt(e + 1.0))


def three_links(x, k, xp=vnp):
    p = xp.zeros(6)
    for i in range(len(k)):
        p[k[i]] *= 0.9
        p[k[i]] -= x[i]
        p[k[i]] *= 1.5
    return np.sum(np.tanh(p))


def rows_decay_add(X, k, xp=vnp):
    H = xp.zeros((4, X.shape[1]))
    for i in range(len(k)):
        H[k[i]] = 0.8 * H[k[i]]
        H[k[i]] += X[i] * 2.0
    return np.sum(H ** 2)


def rows_imul_add(X, k, xp=vnp):
    H = xp.ones((4, X.shape[1]))
    for i in range(len(k)):
        H[k[i]] *= 0.8
        H[k[i]] += X[i] * 2.0
    return np.sum(H ** 2)


CASES = [(decay_add, 5), (add_then_halve, 5), (set_links, 5), (three_links, 6),
         (rows_decay_add, 3)]


def _traced(n, m):
    return R.integers(0, m, n)


def _static(n, m):
    return [int(v) for v in R.integers(0, m, n)]


def _args(f, m, keys):
    n = 24
    x = R.standard_normal((n, 3)) if f is rows_decay_add else R.standard_normal(n)
    return x, keys(n, m if f is not rows_decay_add else 4)


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
@pytest.mark.parametrize("f, m", CASES, ids=[c[0].__name__ for c in CASES])
def test_composed_links_take_the_closed_form(f, m, static):
    args = _args(f, m, _static if static else _traced)
    e = check_batched(f, args)
    g = e.stages["batch"]
    assert count(g, P.segment_affine) == count(g, P.segment_cumsum) == 0, g
    assert count(g, P.setitem) == count(g, P.setitem_add) == count(g, P.loop) == 0, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


def learned_decay_add(x, a, k, xp=vnp):
    p = xp.ones(5)
    for i in range(len(k)):
        p[k[i]] *= a
        p[k[i]] += x[i]
    return np.sum(p ** 2)


def decay_add_learned(x, a, k, xp=vnp):
    p = xp.ones(5)
    for i in range(len(k)):
        p[k[i]] *= 0.9
        p[k[i]] = a * p[k[i]] + x[i]
    return np.sum(p ** 2)


def learned_then_counted(x, a, k, xp=vnp):
    p = xp.ones(5)
    for i in range(len(k) // 2):
        p[k[i]] = a * p[k[i]] + x[i]
    for i in range(len(k) // 2, len(k)):
        p[k[i]] += 1.0
    return np.sum(p ** 2)


@pytest.mark.parametrize("f", [learned_decay_add, decay_add_learned, learned_then_counted])
@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
def test_a_rate_passed_in(f, static):
    """A rate passed in beside a constant one: one chain of one composed rate (the second
    program: two chains, one per rate); the batched graph does not grow with the loop."""
    keys = _static if static else _traced
    args = (R.standard_normal(20), np.float64(0.8), keys(20, 5))
    e = check_batched(f, args, argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.segment_affine) == count(g, P.loop) == 0, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)
    more = (R.standard_normal(60), np.float64(0.8), keys(60, 5))
    assert len(vg.grad(f, argnums=(0, 1)).entry(*more)[0].stages["batch"].eqns) == len(g.eqns)


def other_positions(x, k, j, xp=vnp):
    p = xp.ones(6)
    for i in range(len(k)):
        p[k[i]] *= 0.9
        p[j[i]] += x[i]
    return np.sum(p ** 2)


def read_between(x, k, xp=vnp):
    p = xp.ones(6)
    loss = 0.0
    for i in range(len(k)):
        p[k[i]] *= 0.9
        loss = loss + p[k[i]] * x[i]
        p[k[i]] += x[i]
    return loss + np.sum(p ** 2)


def two_symbols(x, a, k, xp=vnp):
    p = xp.ones(5)
    for i in range(len(k)):
        p[k[i]] *= a
        p[k[i]] *= a + 0.1
        p[k[i]] += x[i]
    return np.sum(p ** 2)


def rate_one(x, k, xp=vnp):
    p = xp.ones(5)
    for i in range(len(k)):
        p[k[i]] *= 2.0
        p[k[i]] *= 0.5
        p[k[i]] += x[i]
    return np.sum(p ** 2)


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
def test_other_chains_keep_the_loops_values(static):
    keys = _static if static else _traced
    x = R.standard_normal(20)
    for f, args, nums in [(other_positions, (x, keys(20, 6), keys(20, 6)), 0),
                          (read_between, (x, keys(20, 6)), 0),
                          (two_symbols, (x, np.float64(0.7), keys(20, 5)), (0, 1)),
                          (rate_one, (x, keys(20, 5)), 0),
                          (rows_imul_add, (R.standard_normal((20, 3)), keys(20, 4)), 0)]:
        check_batched(f, args, argnums=nums)
        np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


# ------------------------------------------ reads between composed links (rmwreads `mid`)

def decay_read_add(x, k, xp=vnp):
    e = xp.full(5, 0.2)
    loss = 0.0
    for i in range(len(k)):
        e[k[i]] *= 0.9
        loss = loss + (x[i] - e[k[i]]) ** 2
        e[k[i]] += 0.1 * x[i]
    return loss + np.sum(e)


def reads_between_three(x, k, xp=vnp):
    p = xp.ones(5)
    loss = 0.0
    for i in range(len(k)):
        p[k[i]] *= 0.9
        loss = loss + p[k[i]] * x[i]
        p[k[i]] += x[i]
        loss = loss + np.sin(p[k[i]])
        p[k[i]] *= 1.1
    return loss + np.sum(p ** 2)


def rows_read_between(X, k, xp=vnp):
    H = xp.zeros((4, X.shape[1]))
    loss = 0.0
    for i in range(len(k)):
        H[k[i]] = 0.8 * H[k[i]]
        loss = loss + np.sum(np.tanh(H[k[i]]) * X[i])
        H[k[i]] += X[i]
    return loss


def learned_read_between(x, a, k, xp=vnp):
    p = xp.ones(5)
    loss = 0.0
    for i in range(len(k)):
        p[k[i]] *= a
        loss = loss + p[k[i]] ** 2
        p[k[i]] += x[i]
    return loss


BETWEEN = [(decay_read_add, 0), (reads_between_three, 0), (rows_read_between, 0),
           (learned_read_between, (0, 1))]


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
@pytest.mark.parametrize("f, nums", BETWEEN, ids=[c[0].__name__ for c in BETWEEN])
def test_reads_between_composed_links(f, nums, static):
    """One scan over the steps (not over each step's links), the reads between a step's
    links computed from the state before it."""
    keys = _static if static else _traced
    n = 24
    x = R.standard_normal((n, 3)) if f is rows_read_between else R.standard_normal(n)
    args = (x, np.float64(0.8), keys(n, 4)) if nums != 0 else (x, keys(n, 4))
    e = check_batched(f, args, argnums=nums)
    g = e.stages["batch"]
    scans = [q for q in g.eqns if q.prim in (P.segment_affine, P.segment_cumsum)]
    assert scans and all(q.out.aval.shape[0] == n for q in scans), g
    assert count(g, P.setitem) == count(g, P.setitem_add) == count(g, P.loop) == 0, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)
