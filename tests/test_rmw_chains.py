"""Chains of affine read-modify-writes at one position each (`ema[k] = 0.9 * ema[k] + 0.1 * x`,
`ema[k] += 0.1 * (x - ema[k])`, per-bucket decays) at traced or Python-int positions: each link
reads the position the previous links wrote, a recurrence through the buffer that ran as a
rolled loop (traced positions) or a chain of scalar steps (Python ints). batch/rmwchains.py
makes the chain one weighted scatter-add. Values equal NumPy's loop to rounding, batched equals
unbatched, gradients match central differences, the batched graph holds one scatter of values and
no write chain, and what is not such a chain (a read of the running value, another position read,
a nonlinear update, changing coefficients) keeps the loop's values."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.batch.rmwchains import _later

R = np.random.default_rng(14)


def ema_set(x, idx, xp=vnp):
    ema = xp.zeros(7)
    for i in range(len(idx)):
        ema[idx[i]] = 0.9 * ema[idx[i]] + 0.1 * x[i]
    return np.sum(ema ** 2)


def ema_iadd(x, idx, xp=vnp):
    ema = xp.ones(7)
    for i in range(len(idx)):
        ema[idx[i]] += 0.1 * (x[i] - ema[idx[i]])
    return np.sum(ema ** 3)


def rows_set(X, idx, xp=vnp):
    h = xp.zeros((6, X.shape[1]))
    for i in range(len(idx)):
        h[idx[i]] = h[idx[i]] * 0.5 + np.tanh(X[i])
    return np.sum(h * h)


def rows_iadd(X, idx, xp=vnp):
    h = xp.ones((6, X.shape[1])) * 0.5
    for i in range(len(idx)):
        h[idx[i]] += 0.25 * (X[i] * X[i] - h[idx[i]])
    return np.sum(np.sin(h))


def halved_plus(x, idx, xp=vnp):
    b = xp.zeros(5)
    for i in range(len(idx)):
        b[idx[i]] = b[idx[i]] / 2.0 + x[i] * x[i]
    return np.sum(np.log1p(b))


def negative_coefficient(x, idx, xp=vnp):
    b = xp.full(5, 0.3)
    for i in range(len(idx)):
        b[idx[i]] = x[i] - 0.5 * b[idx[i]]
    return np.sum(b ** 2)


def growing(x, idx, xp=vnp):
    b = xp.zeros(4)
    for i in range(len(idx)):
        b[idx[i]] = 1.5 * b[idx[i]] + np.exp(-x[i] ** 2)
    return np.sum(b)


def edge_messages(x, src, dst, xp=vnp):
    h = xp.zeros(x.shape[0])
    for a, b in zip(src, dst):
        h[b] = 0.5 * h[b] + x[a]
    return np.sum(h ** 2)


def from_argument(w, x, idx, xp=vnp):
    b = w * 1.0
    for i in range(len(idx)):
        b[idx[i]] = 0.8 * b[idx[i]] + 0.2 * x[i]
    return np.sum(b ** 2 * np.arange(1, len(w) + 1))


def float32_buffer(x, idx, xp=vnp):
    b = xp.zeros(5, dtype=np.float32)
    for i in range(len(idx)):
        b[idx[i]] = np.float32(0.75) * b[idx[i]] + x[i]
    return np.sum(b * b)


def learned_rate(x, a, idx, xp=vnp):
    b = xp.zeros(6)
    for i in range(len(idx)):
        b[idx[i]] = a * b[idx[i]] + x[i]
    return np.sum(b ** 2)


def learned_step(x, lr, idx, xp=vnp):
    b = xp.ones(6)
    for i in range(len(idx)):
        b[idx[i]] += lr * (x[i] - b[idx[i]])
    return np.sum(b ** 3)


def one_minus_rate(X, a, idx, xp=vnp):
    b = xp.zeros((6, X.shape[1]))
    for i in range(len(idx)):
        b[idx[i]] = (1.0 - a) * b[idx[i]] + a * np.sin(X[i])
    return np.sum(b ** 2)


def _traced(n, m=7):
    return R.integers(-m, m, n)


def _static(n, m=7):
    return [int(v) for v in R.integers(-m, m, n)]


CASES = [
    (ema_set, lambda ix: (R.standard_normal(30), ix(30))),
    (ema_iadd, lambda ix: (R.standard_normal(25), ix(25))),
    (rows_set, lambda ix: (R.standard_normal((20, 3)), ix(20, 6))),
    (rows_iadd, lambda ix: (R.standard_normal((20, 2)), ix(20, 6))),
    (halved_plus, lambda ix: (R.standard_normal(16), ix(16, 5))),
    (negative_coefficient, lambda ix: (R.standard_normal(16), ix(16, 5))),
    (growing, lambda ix: (R.standard_normal(12), ix(12, 4))),
    (edge_messages, lambda ix: (R.standard_normal(9), ix(24, 9), ix(24, 9))),
]


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
@pytest.mark.parametrize("f,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_chains_are_one_scatter(f, make, static):
    args = make(_static if static else _traced)
    e = check_batched(f, args, argnums=0)
    g = e.stages["batch"]
    # (one scatter of the values; at traced positions also the counts and the weights' order)
    scatters = count(g, P.scatter_add_along) + count(g, P.segment_sum)
    assert scatters == (1 if static else 3), g
    assert count(g, P.setitem) == count(g, P.setitem_add) == count(g, P.loop) == 0, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


RATES = [
    (learned_rate, lambda ix: (R.standard_normal(20), 0.7, ix(20, 6))),
    (learned_step, lambda ix: (R.standard_normal(20), 0.3, ix(20, 6))),
    (one_minus_rate, lambda ix: (R.standard_normal((20, 2)), 0.2, ix(20, 6))),
    (learned_rate, lambda ix: (R.standard_normal(20), -1.3, ix(20, 6))),
    (learned_rate, lambda ix: (R.standard_normal(20), 0.0, ix(20, 6))),
]


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
@pytest.mark.parametrize("k", range(len(RATES)))
def test_rates_passed_in_are_one_scatter(k, static):
    """A decay rate passed in (a traced 0-d value, differentiated): the weights are its
    powers, computed when the program runs."""
    f, make = RATES[k]
    x, a, idx = make(_static if static else _traced)
    args = (x, np.float64(a), idx)
    e = check_batched(f, args, argnums=(0, 1), fd=a != 0.0)
    g = e.stages["batch"]
    assert count(g, P.setitem) == count(g, P.setitem_add) == count(g, P.loop) == 0, g
    assert count(g, P.pow_) == 2, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


def squared_rate(x, a, idx, xp=vnp):
    b = xp.zeros(5)
    for i in range(len(idx)):
        b[idx[i]] = a * (a * b[idx[i]]) + x[i]  # (a^2: one symbol at most, not joined)
    return np.sum(b ** 2)


def rate_per_step(x, rates, idx, xp=vnp):
    b = xp.zeros(5)
    for i in range(len(idx)):
        b[idx[i]] = rates[i] * b[idx[i]] + x[i]  # (a rate per link: not one chain)
    return np.sum(b ** 2)


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
@pytest.mark.parametrize("f,make", [
    (squared_rate, lambda ix: (R.standard_normal(10), np.float64(0.8), ix(10, 5))),
    (rate_per_step, lambda ix: (R.standard_normal(10), R.uniform(0, 1, 10), ix(10, 5))),
])
def test_other_rates_keep_the_loops_values(f, make, static):
    args = make(_static if static else _traced)
    check_batched(f, args, argnums=(0, 1))
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
def test_initial_buffer_gradient(static):
    idx = (_static if static else _traced)(20, 6)
    args = (R.standard_normal(6), R.standard_normal(20), idx)
    check_batched(from_argument, args, argnums=(0, 1))
    np.testing.assert_allclose(vg.jit(from_argument)(*args), from_argument(*args, xp=np),
                               rtol=1e-12)


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
def test_float32_buffer(static):
    args = (R.standard_normal(14).astype(np.float32), (_static if static else _traced)(14, 5))
    got = vg.jit(float32_buffer)(*args)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, float32_buffer(*args, xp=np), rtol=1e-5)


def scaled_rows(X, w, xp=vnp):
    buf = xp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        buf[i] = np.tanh(X[i] @ w)
    for i in range(X.shape[0]):
        buf[i] *= 1.0 + w[0] ** 2  # (every row once: independent links)
    return np.sum(buf ** 2)


def test_links_at_distinct_python_ints_batch_as_they_are():
    """No powers of the rate where no position repeats: one multiply of the rows."""
    args = (R.standard_normal((12, 3)), R.standard_normal(3))
    e = check_batched(scaled_rows, args, argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.pow_) == count(g, P.segment_sum) == count(g, P.setitem) == 0, g
    np.testing.assert_allclose(vg.jit(scaled_rows)(*args), scaled_rows(*args, xp=np),
                               rtol=1e-12)


def test_the_graph_does_not_grow_with_the_loop():
    sizes = []
    for n in (10, 200):
        e = vg.grad(ema_set).entry(R.standard_normal(n), _traced(n))[0]
        sizes.append(len(e.stages["batch"].eqns))
    assert sizes[0] == sizes[1] < 40, sizes


# ------------------------------------------- not one chain: the loop's values all the same

def reads_running_value(x, idx, xp=vnp):
    ema, loss = xp.zeros(5), 0.0
    for i in range(len(idx)):
        loss = loss + (x[i] - ema[idx[i]]) ** 2  # (the value before each update is read)
        ema[idx[i]] = 0.9 * ema[idx[i]] + 0.1 * x[i]
    return loss + np.sum(ema)


def reads_another_position(x, src, dst, xp=vnp):
    h = xp.ones(6)
    for a, b in zip(src, dst):
        h[b] = 0.5 * h[b] + 0.5 * h[a] * x[a]
    return np.sum(h ** 2)


def nonlinear_update(x, idx, xp=vnp):
    b = xp.zeros(5)
    for i in range(len(idx)):
        b[idx[i]] = np.tanh(b[idx[i]]) + x[i]
    return np.sum(b ** 2)


def changing_coefficient(x, idx, xp=vnp):
    b = xp.zeros(5)
    for i in range(len(idx)):
        b[idx[i]] = (0.9 if i % 2 else 0.5) * b[idx[i]] + x[i]
    return np.sum(b ** 2)


def product_with_value(x, idx, xp=vnp):
    b = xp.ones(5)
    for i in range(len(idx)):
        b[idx[i]] = b[idx[i]] * x[i] + 1.0  # (the coefficient is traced: not a constant)
    return np.sum(b ** 2)


@pytest.mark.parametrize("static", [False, True], ids=["traced", "static"])
@pytest.mark.parametrize("f,make", [
    (reads_running_value, lambda ix: (R.standard_normal(10), ix(10, 5))),
    (reads_another_position, lambda ix: (R.standard_normal(6), ix(10, 6), ix(10, 6))),
    (nonlinear_update, lambda ix: (R.standard_normal(10), ix(10, 5))),
    (changing_coefficient, lambda ix: (R.standard_normal(10), ix(10, 5))),
    (product_with_value, lambda ix: (R.standard_normal(10), ix(10, 5))),
])
def test_other_updates_keep_the_loops_values(f, make, static):
    args = make(_static if static else _traced)
    check_batched(f, args, argnums=0)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-12)


@pytest.mark.parametrize("pos", [[3, 1, 3, 3, 0, 1], [], [2], [5, 5, 5], list(range(6))])
def test_later_counts(pos):
    pos = np.array(pos, np.int64)
    want = [int(np.sum(pos[t + 1:] == pos[t])) for t in range(len(pos))]
    np.testing.assert_array_equal(_later(pos), want)
