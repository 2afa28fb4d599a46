"""Reads of a buffer between the links of a read-modify-write chain (batch/rmwreads.py): a
per-bucket statistic read before each update (`avg = s[k] / n[k]; use(avg); s[k] += x;
n[k] += 1`), a prediction read before an exponential average's update. The chain is one
scatter and the reads one segmented scan over the events sorted by (position, time). Values
equal NumPy's loop, batched equals unbatched, gradients match central differences, the batched
graph holds no per-step buffer versions, and what is a true recurrence (an update that uses a
read of its own buffer, or of another chain read from this one) keeps the loop's values."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(25)


def bucket_average(x, k, xp=vnp):
    s, n = xp.zeros(6), xp.zeros(6)
    loss = 0.0
    for i in range(len(k)):
        avg = s[k[i]] / (n[k[i]] + 1.0)
        loss = loss + (x[i] - avg) ** 2
        s[k[i]] += x[i]
        n[k[i]] += 1.0
    return loss


def ema_prediction(x, k, xp=vnp):
    e = xp.full(5, 0.25)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + (x[i] - e[k[i]]) ** 2
        e[k[i]] = 0.8 * e[k[i]] + 0.2 * x[i]
    return loss + np.sum(e ** 2)


def row_means(X, k, xp=vnp):
    s = xp.zeros((4, X.shape[1]))
    loss = 0.0
    for i in range(len(k)):
        loss = loss + np.sum(np.tanh(X[i] - 0.3 * s[k[i]]))
        s[k[i]] += X[i] * X[i]
    return loss + np.sum(s)


def growing_read(x, k, xp=vnp):
    s = xp.ones(5)
    out = []
    for i in range(len(k)):
        out.append(s[k[i]] * x[i])
        s[k[i]] += 0.1 * s[k[i]] + x[i] ** 2
    return np.sum(np.sin(vnp.stack(out) if xp is vnp else np.stack(out)))


def learned_decay(x, a, k, xp=vnp):
    e = xp.zeros(4)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + e[k[i]] * x[i]
        e[k[i]] = a * e[k[i]] + x[i]
    return loss


def subtracted(x, k, xp=vnp):
    s = xp.full(5, 2.0)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + np.exp(-s[k[i]] ** 2)
        s[k[i]] -= x[i] * 0.5
    return loss


def from_argument(b, x, k, xp=vnp):
    s = b * 1.0
    loss = 0.0
    for i in range(len(k)):
        loss = loss + s[k[i]] ** 2 * x[i]
        s[k[i]] += x[i]
    return loss + np.sum(s ** 3)


def _traced(n, m=6):
    return R.integers(-m, m, n)


CASES = [
    (bucket_average, lambda: (R.standard_normal(30), _traced(30))),
    (ema_prediction, lambda: (R.standard_normal(25), _traced(25, 5))),
    (row_means, lambda: (R.standard_normal((20, 3)), _traced(20, 4))),
    (growing_read, lambda: (R.standard_normal(16), _traced(16, 5))),
    (subtracted, lambda: (R.standard_normal(18), _traced(18, 5))),
    (bucket_average, lambda: (R.standard_normal(9), np.zeros(9, np.int64))),
    (bucket_average, lambda: (R.standard_normal(12), np.arange(12) % 6)),
]


@pytest.mark.parametrize("f,make", CASES, ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CASES)])
def test_reads_between_links_are_one_scan(f, make):
    args = make()
    e = check_batched(f, args, argnums=0)
    g = e.stages["batch"]
    assert count(g, P.loop) == count(g, P.setitem) == count(g, P.setitem_add) == 0, g
    assert count(g, P.argsort) >= 1, g  # (the events' order)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


@pytest.mark.parametrize("a", [0.7, -1.3, 1.0])
def test_learned_rate(a):
    args = (R.standard_normal(20), np.float64(a), _traced(20, 4))
    e = check_batched(learned_decay, args, argnums=(0, 1))
    assert count(e.stages["batch"], P.loop) == 0
    np.testing.assert_allclose(vg.jit(learned_decay)(*args), learned_decay(*args, xp=np),
                               rtol=1e-12)


def test_initial_buffer_gradient():
    args = (R.standard_normal(6), R.standard_normal(20), _traced(20))
    check_batched(from_argument, args, argnums=(0, 1))
    np.testing.assert_allclose(vg.jit(from_argument)(*args), from_argument(*args, xp=np),
                               rtol=1e-12)


def test_the_graph_does_not_grow_with_the_loop():
    """No buffer version per step, no doubling step per power of two: one segmented scan."""
    sizes = []
    for n in (16, 512):
        e = vg.grad(bucket_average).entry(R.standard_normal(n), _traced(n))[0]
        sizes.append(len(e.stages["batch"].eqns))
    assert sizes[0] == sizes[1] < 120, sizes


def test_non_finite_values_stay_in_their_bucket():
    """An inf or a NaN added into one bucket leaves the others' reads as the loop's (the
    scan selects, never multiplies by 0)."""
    x = R.standard_normal(24)
    k = np.arange(24) % 4
    x[[1, 6]] = np.inf, np.nan
    f = vg.jit(bucket_average)
    with np.errstate(invalid="ignore"):
        got, want = f(x, k), bucket_average(x, k, xp=np)
    np.testing.assert_equal(np.isnan(got), np.isnan(want))
    lin = vg.jit(lambda x, k: _avgs(x, k))
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(lin(x, k), _avgs(x, k, xp=np), rtol=1e-12)


def _avgs(x, k, xp=vnp):
    s = xp.zeros(4)
    out = []
    for i in range(len(k)):
        out.append(s[k[i]] * 1.0)
        s[k[i]] += x[i]
    return vnp.stack(out) if xp is vnp else np.stack(out)


def test_float32_buffer():
    x = R.standard_normal(14).astype(np.float32)
    k = _traced(14, 5)

    def f(x, k, xp=vnp):
        s = xp.zeros(5, np.float32)
        loss = np.float32(0.0)
        for i in range(len(k)):
            loss = loss + s[k[i]] * x[i]
            s[k[i]] += x[i]
        return loss
    got = vg.jit(f)(x, k)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, f(x, k, xp=np), rtol=1e-5)


# ------------------------------------------- true recurrences: the loop's values all the same

def average_into_counts(x, k, xp=vnp):
    s, n = xp.zeros(5), xp.ones(5)
    loss = 0.0
    for i in range(len(k)):
        avg = s[k[i]] / n[k[i]]
        loss = loss + avg * x[i]
        s[k[i]] += x[i]
        n[k[i]] += avg ** 2  # (n's update reads s: n's chain stays as written)
    return loss + np.sum(n)


def update_from_read(x, k, xp=vnp):
    s = xp.zeros(5)
    loss = 0.0
    for i in range(len(k)):
        r = s[k[i]]
        loss = loss + r * x[i]
        s[k[i]] += np.tanh(r) + x[i]  # (nonlinear in the read: a recurrence)
    return loss


def other_position(x, k, j, xp=vnp):
    s = xp.zeros(5)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + s[j[i]] * x[i]  # (read elsewhere than written)
        s[k[i]] += x[i]
    return loss


@pytest.mark.parametrize("f,make", [
    (average_into_counts, lambda: (R.standard_normal(14), _traced(14, 5))),
    (update_from_read, lambda: (R.standard_normal(14), _traced(14, 5))),
    (other_position, lambda: (R.standard_normal(14), _traced(14, 5), _traced(14, 5))),
])
def test_recurrences_keep_the_loops_values(f, make):
    args = make()
    check_batched(f, args, argnums=0)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


# ------------------------------------------- Python-int positions, and chains of mixed rates

def keyed_average(x, keys, xp=vnp):
    s, n = xp.zeros(6), xp.zeros(6)
    loss = 0.0
    for i, key in enumerate(keys):
        avg = s[key] / (n[key] + 1.0)
        loss = loss + (x[i] - avg) ** 2
        s[key] += x[i]
        n[key] += 1.0
    return loss


def edge_tuples(x, edges, xp=vnp):
    h = xp.zeros(len(x))
    loss = 0.0
    for a, b in edges:
        loss = loss + h[b] * x[a]
        h[b] += np.tanh(x[a])
    return loss + np.sum(h ** 2)


def decay_then_add(x, k, xp=vnp):
    p = xp.ones(5)
    for i in range(len(k)):
        p[k[i]] *= 0.95
        p[k[i]] += x[i]
    return np.sum(p ** 2)


def rows_scaled_then_added(X, k, xp=vnp):
    H = xp.zeros((4, X.shape[1]))
    for i in range(len(k)):
        H[k[i]] = 0.5 * H[k[i]]
        H[k[i]] += X[i] ** 2
    return np.sum(np.sin(H))


def rows_halved_in_place(X, k, xp=vnp):
    H = xp.zeros((4, X.shape[1]))
    for i in range(len(k)):
        H[k[i]] *= 0.5  # (a view scaled in place, then written back: traced as two writes)
        H[k[i]] += X[i] ** 2
    return np.sum(np.sin(H))


def test_rows_scaled_in_place_keep_the_loops_values():
    args = (R.standard_normal((12, 3)), _traced(12, 4))
    check_batched(rows_halved_in_place, args, argnums=0)
    np.testing.assert_allclose(vg.jit(rows_halved_in_place)(*args),
                               rows_halved_in_place(*args, xp=np), rtol=1e-12)


def alternating_rates(x, k, xp=vnp):
    e = xp.full(5, 0.5)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + e[k[i]] * x[i]
        e[k[i]] = (0.9 if i % 2 else 0.5) * e[k[i]] + x[i]
    return loss + np.sum(e)


def _static(n, m=6):
    return [int(v) for v in R.integers(-m, m, n)]


def keyed_total(x, keys, xp=vnp):
    s = xp.zeros(6)
    loss = 0.0
    for i, key in enumerate(keys):
        loss = loss + (x[i] - 0.1 * s[key]) ** 2
        s[key] += x[i]
    return loss


MIXED = [
    (keyed_total, lambda: (R.standard_normal(30), _static(30))),
    (edge_tuples, lambda: (R.standard_normal(7), [(int(a), int(b)) for a, b in
                                                  R.integers(0, 7, (20, 2))])),
    (decay_then_add, lambda: (R.standard_normal(20), _traced(20, 5))),
    (decay_then_add, lambda: (R.standard_normal(20), _static(20, 5))),
    (rows_scaled_then_added, lambda: (R.standard_normal((16, 3)), _traced(16, 4))),
    (alternating_rates, lambda: (R.standard_normal(18), _traced(18, 5))),
    (alternating_rates, lambda: (R.standard_normal(18), _static(18, 5))),
]


@pytest.mark.parametrize("f,make", MIXED, ids=[f"{c[0].__name__}{i}" for i, c in enumerate(MIXED)])
def test_static_positions_and_mixed_rates(f, make):
    args = make()
    e = check_batched(f, args, argnums=0)
    g = e.stages["batch"]
    assert count(g, P.loop) == count(g, P.setitem) == count(g, P.setitem_add) == 0, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


def plain_adds(v, rows, xp=vnp):
    y = xp.zeros(6)
    for k in range(len(v)):
        y[rows[k]] += v[k] * v[k]
    return np.sum(y ** 2)


def test_plain_adds_stay_one_scatter():
    """`y[rows[k]] += v` read nowhere: no chain to scan (batching makes it one scatter)."""
    args = (R.standard_normal(20), _traced(20))
    e = check_batched(plain_adds, args, argnums=0)
    g = e.stages["batch"]
    assert count(g, P.argsort) == 0 and count(g, P.scatter_add_along) == 1, g


def test_sum_and_count_at_python_ints_are_not_stacked():
    """A sum and a count at Python-int keys, read before each update: two sibling chains
    (batch/siblings), which are not stacked into one (2, n) buffer written at two ints: each
    stays one chain that rmwchains joins."""
    args = (R.standard_normal(30), _static(30))
    e = check_batched(keyed_average, args, argnums=0)
    g = e.stages["batch"]
    assert count(g, P.setitem) == count(g, P.setitem_add) == count(g, P.loop) == 0, g
    np.testing.assert_allclose(vg.jit(keyed_average)(*args), keyed_average(*args, xp=np),
                               rtol=1e-12)


def learned_then_constant(x, a, k, xp=vnp):
    e = xp.zeros(4)
    loss = 0.0
    for i in range(len(k)):
        loss = loss + e[k[i]] * x[i]
        e[k[i]] = a * e[k[i]] + x[i]
        e[k[i]] *= 0.5  # (a rate passed in, then a constant: not one chain)
    return loss


def test_learned_and_constant_rates_keep_the_loops_values():
    args = (R.standard_normal(12), np.float64(0.8), _traced(12, 4))
    check_batched(learned_then_constant, args, argnums=(0, 1))
    np.testing.assert_allclose(vg.jit(learned_then_constant)(*args),
                               learned_then_constant(*args, xp=np), rtol=1e-12)
