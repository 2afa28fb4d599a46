"""Reads of a read-modify-write chain's buffer right after a link, at the link's own position
(`s[k] += x; use(s[k])`: the state the link left there; batch/rmwchains' `_read_after`,
defined by batch/rmwreads from the chain's segmented scan). Traced and Python-int positions,
sums, counts, decays, learned rates, rows, mixed rates, reads before and after one link.
Values equal NumPy's loop, batched equals unbatched, gradients match central differences,
the batched graph keeps no per-step buffer versions; reads elsewhere than the link's position
and updates computed from an after-read (true recurrences) keep the loop's values."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(26)


def _stack(xs, xp):
    return vnp.stack(xs) if xp is vnp else np.stack(xs)


def sum_after(x, k, xp=vnp):
    s = xp.zeros(6)
    loss = 0.0
    for i in range(len(k)):
        s[k[i]] += x[i]
        loss = loss + s[k[i]] * x[i]
    return loss


def count_after(x, k, xp=vnp):
    n = xp.zeros(5)
    loss = 0.0
    for i in range(len(k)):
        n[k[i]] += 1.0
        loss = loss + x[i] ** 2 / n[k[i]]
    return loss


def mean_after(x, k, xp=vnp):
    s, n = xp.zeros(5), xp.zeros(5)
    loss = 0.0
    for i in range(len(k)):
        s[k[i]] += x[i]
        n[k[i]] += 1.0
        loss = loss + (x[i] - s[k[i]] / n[k[i]]) ** 2
    return loss + np.sum(s)


def ema_after(x, k, xp=vnp):
    e = xp.full(4, 0.3)
    out = []
    for i in range(len(k)):
        e[k[i]] = 0.7 * e[k[i]] + 0.3 * x[i]
        out.append(np.tanh(e[k[i]]))
    return np.sum(_stack(out, xp) * np.arange(len(k)))


def learned_after(x, a, k, xp=vnp):
    e = xp.zeros(4)
    loss = 0.0
    for i in range(len(k)):
        e[k[i]] = a * e[k[i]] + x[i]
        loss = loss + e[k[i]] ** 2
    return loss


def rows_after(X, k, xp=vnp):
    H = xp.zeros((4, X.shape[1]))
    loss = 0.0
    for i in range(len(k)):
        H[k[i]] += X[i] * 0.5
        loss = loss + np.sum(np.sin(H[k[i]]) * X[i])
    return loss


def before_and_after(x, k, xp=vnp):
    s = xp.full(5, 1.0)
    loss = 0.0
    for i in range(len(k)):
        old = s[k[i]]
        s[k[i]] -= 0.5 * x[i] ** 2
        loss = loss + old * s[k[i]]
    return loss


def decay_add_read(x, k, xp=vnp):
    p = xp.ones(5)
    loss = 0.0
    for i in range(len(k)):
        p[k[i]] *= 0.9
        p[k[i]] += x[i]
        loss = loss + p[k[i]] ** 2
    return loss


def keyed_after(x, keys, xp=vnp):
    t = xp.zeros(6)
    loss = 0.0
    for key, v in zip(keys, x):
        t[key] += v
        loss = loss + t[key] ** 2
    return loss


def edges_after(w, edges, xp=vnp):
    cap = xp.full(5, 2.0)
    loss = 0.0
    for e, (a, b) in enumerate(edges):
        cap[b] -= w[e] ** 2
        loss = loss + np.exp(-cap[b] ** 2) * (a + 1)
    return loss


def keyed_rows_after(X, keys, xp=vnp):
    H = xp.zeros((3, X.shape[1]))
    loss = 0.0
    for i, key in enumerate(keys):
        H[key] = 0.5 * H[key] + X[i]
        loss = loss + np.sum(H[key] ** 2)
    return loss


def _traced(n, m=6):
    return R.integers(-m, m, n)


def _static(n, m=6):
    return [int(v) for v in R.integers(-m, m, n)]


CASES = [
    (sum_after, lambda: (R.standard_normal(30), _traced(30)), 0),
    (sum_after, lambda: (R.standard_normal(9), np.zeros(9, np.int64)), 0),
    (count_after, lambda: (R.standard_normal(20), _traced(20, 5)), 0),
    (mean_after, lambda: (R.standard_normal(24), _traced(24, 5)), 0),
    (ema_after, lambda: (R.standard_normal(18), _traced(18, 4)), 0),
    (learned_after, lambda: (R.standard_normal(20), np.float64(0.8), _traced(20, 4)), (0, 1)),
    (learned_after, lambda: (R.standard_normal(16), np.float64(-1.2), _traced(16, 4)), (0, 1)),
    (rows_after, lambda: (R.standard_normal((16, 3)), _traced(16, 4)), 0),
    (before_and_after, lambda: (R.standard_normal(20), _traced(20, 5)), 0),
    (decay_add_read, lambda: (R.standard_normal(20), _traced(20, 5)), 0),
    (decay_add_read, lambda: (R.standard_normal(20), _static(20, 5)), 0),
    (keyed_after, lambda: (R.standard_normal(25), _static(25)), 0),
    (edges_after, lambda: (R.standard_normal(20) * 0.3,
                           [(int(a), int(b)) for a, b in R.integers(0, 5, (20, 2))]), 0),
    (keyed_rows_after, lambda: (R.standard_normal((14, 2)), _static(14, 3)), 0),
]


@pytest.mark.parametrize("f,make,argnums", CASES,
                         ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CASES)])
def test_reads_after_links_are_one_scan(f, make, argnums):
    args = make()
    e = check_batched(f, args, argnums=argnums)
    g = e.stages["batch"]
    # (at Python ints the first link, into the fresh buffer, may stay as written: one write)
    assert count(g, P.loop) == count(g, P.setitem) == 0 and count(g, P.setitem_add) <= 1, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


def test_the_graph_does_not_grow_with_the_loop():
    sizes = []
    for n in (16, 512):
        e = vg.grad(mean_after).entry(R.standard_normal(n), _traced(n, 5))[0]
        sizes.append(len(e.stages["batch"].eqns))
    assert sizes[0] == sizes[1], sizes


def test_non_finite_values_stay_in_their_bucket():
    x = R.standard_normal(24)
    k = np.arange(24) % 4
    x[[1, 6]] = np.inf, np.nan

    def sums(x, k, xp=vnp):
        s = xp.zeros(4)
        out = []
        for i in range(len(k)):
            s[k[i]] += x[i]
            out.append(s[k[i]] * 1.0)
        return _stack(out, xp)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(vg.jit(sums)(x, k), sums(x, k, xp=np), rtol=1e-12)


def test_float32_buffer():
    x = R.standard_normal(14).astype(np.float32)
    k = _traced(14, 5)

    def f(x, k, xp=vnp):
        s = xp.zeros(5, np.float32)
        loss = np.float32(0.0)
        for i in range(len(k)):
            s[k[i]] += x[i]
            loss = loss + s[k[i]] * x[i]
        return loss
    got = vg.jit(f)(x, k)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, f(x, k, xp=np), rtol=1e-5)


# ------------------------------------------- what is not a read after a link: the loop's values

def read_elsewhere(x, k, j, xp=vnp):
    s = xp.zeros(5)
    loss = 0.0
    for i in range(len(k)):
        s[k[i]] += x[i]
        loss = loss + s[j[i]] * x[i]  # (another position than the link's)
    return loss


def after_feeds_update(x, k, xp=vnp):
    s = xp.zeros(5)
    r = 0.0
    for i in range(len(k)):
        s[k[i]] += x[i] + 0.1 * r  # (the next link's value uses the read: a recurrence)
        r = np.tanh(s[k[i]])
    return r + np.sum(s)


def after_read_twice(x, k, xp=vnp):
    s = xp.zeros(4)
    loss = 0.0
    for i in range(len(k)):
        s[k[i]] += x[i]
        loss = loss + s[k[i]] * x[i] + np.sin(s[k[i]])
    return loss


@pytest.mark.parametrize("f,make", [
    (read_elsewhere, lambda: (R.standard_normal(14), _traced(14, 5), _traced(14, 5))),
    (after_feeds_update, lambda: (R.standard_normal(14), _traced(14, 5))),
    (after_read_twice, lambda: (R.standard_normal(14), _traced(14, 4))),
])
def test_other_reads_keep_the_loops_values(f, make):
    args = make()
    check_batched(f, args, argnums=0)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)
