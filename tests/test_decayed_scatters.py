"""A buffer scaled by a constant between scatters into it (an eligibility trace: `buf *= 0.99;
buf[idx[i]] += x[i]`): the scalings move onto the scatters' values (batch/decays.py), so the
scatters batch as one segment sum instead of a chain through the whole buffer. Batched equals
unbatched, values and dtypes equal NumPy's loop (to rounding: the sum is reordered),
gradients match central differences in random directions."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(5)


def trace_traced(x, idx, xp=vnp):
    buf = xp.zeros(6)
    for i in range(len(x)):
        buf *= 0.9
        buf[idx[i]] += x[i]
    return buf


def trace_static(x, xp=vnp, idx=(4, 1, 1, 0, 3, 4, 2, 2, 0, 1, 4, 3, 3)):
    buf = xp.ones(5)
    for i, k in enumerate(idx):
        buf[k] += np.tanh(x[i])  # (the add first, then the decay)
        buf = buf * 0.8
    return buf


def two_rates(x, idx, xp=vnp):
    buf = xp.zeros(4)
    for i in range(len(x)):
        buf *= 0.95 if i % 2 else 1.25
        buf[idx[i]] -= x[i] * 2.0
    return buf


def add_at_pairs(x, idx, xp=vnp):
    buf = xp.zeros(5)
    for i in range(len(x) - 1):
        buf *= 0.7
        np.add.at(buf, idx[i:i + 2], x[i:i + 2])
    return buf


def rows(X, idx, xp=vnp):
    buf = xp.zeros((4, X.shape[1]))
    for i in range(X.shape[0]):
        buf *= 0.5
        buf[idx[i]] += X[i] * X[i]
    return buf


def _loss(f):
    def loss(*a):
        y = f(*a)
        return np.sum(y ** 2 * np.arange(1.0, 1.0 + y.size).reshape(y.shape))
    return loss


CASES = [
    (trace_traced, (R.standard_normal(17), R.integers(-6, 6, 17))),
    (trace_static, (R.standard_normal(13),)),
    (two_rates, (R.standard_normal(12), R.integers(0, 4, 12))),
    (add_at_pairs, (R.standard_normal(9), R.integers(0, 5, 9))),
    (rows, (R.standard_normal((11, 3)), R.integers(0, 4, 11))),
]


@pytest.mark.parametrize("f,args", CASES)
def test_decayed_scatters_batch(f, args):
    e = check_batched(_loss(f), args, argnums=0)
    g = e.stages["batch"]
    assert count(g, P.mul) <= 4 and len(g.eqns) < 40, g  # (no chain through the buffer)
    got, want = vg.jit(f)(*args), f(*args, xp=np)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    assert got.dtype == want.dtype


def test_long_trace_is_constant_in_size():
    sizes = []
    for n in (200, 400):
        x, idx = R.standard_normal(n), R.integers(-6, 6, n)
        sizes.append(len(vg.grad(_loss(trace_traced)).entry(x, idx)[0].stages["batch"].eqns))
        np.testing.assert_allclose(vg.jit(trace_traced)(x, idx), trace_traced(x, idx, np),
                                   rtol=1e-12, atol=1e-14)
    assert sizes[0] == sizes[1], sizes


def test_infinities_and_nans_propagate_as_in_the_loop():
    x, idx = R.standard_normal(12), R.integers(0, 6, 12)
    x[[2, 7]] = np.inf, -np.inf  # (inf - inf at a position: NaN, as the loop's)
    idx[[2, 7]] = 3
    x[9] = np.nan
    np.testing.assert_allclose(vg.jit(trace_traced)(x, idx), trace_traced(x, idx, np),
                               rtol=1e-13)


def float32_trace(x, idx, xp=vnp):
    buf = xp.zeros(5, dtype=np.float32)
    for i in range(len(x)):
        buf *= np.float32(0.5)
        buf[idx[i]] += x[i]
    return buf


def test_float32_buffers_stay_float32():
    x, idx = R.standard_normal(10).astype(np.float32), R.integers(0, 5, 10)
    got, want = vg.jit(float32_trace)(x, idx), float32_trace(x, idx, np)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def read_each_step(x, idx, xp=vnp):
    buf = xp.zeros(4)
    total = 0.0
    for i in range(len(x)):
        buf *= 0.9
        buf[idx[i]] += x[i]
        total = total + buf[0] * x[i]  # (a read of every version: no rewrite)
    return total + np.sum(buf)


def test_a_buffer_read_between_steps_stays_exact():
    args = (R.standard_normal(9), R.integers(0, 4, 9))
    check_batched(read_each_step, args, argnums=0)
    np.testing.assert_allclose(vg.jit(read_each_step)(*args), read_each_step(*args, xp=np),
                               rtol=1e-13)
