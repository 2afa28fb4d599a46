"""Loops of writes at traced positions (`out[perm[i]] = v_i`): each write is traced as a
selection over the region the index runs along, and a chain of them into one buffer is one
last-writer write (batch/setchains.py), with NumPy's semantics for repeated positions (the
last write wins) exactly. Batched equals unbatched, values and dtypes equal NumPy's loop,
gradients match central differences, and the batched graph holds no chain."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(23)


def perm_scatter(x, idx, xp=vnp):
    perm = np.argsort(idx, kind="stable")
    out = xp.zeros(len(x))
    for i in range(len(x)):
        out[perm[i]] = x[i] * 2.0
    return out


def repeated(x, idx, xp=vnp):
    out = xp.full(6, -1.0)
    for i in range(len(x)):
        out[idx[i]] = np.sin(x[i])  # (idx repeats, negative ones too: the last write wins)
    return out


def rows(X, idx, xp=vnp):
    out = xp.ones((5, X.shape[1]))
    for i in range(X.shape[0]):
        out[idx[i]] = X[i] * X[i].sum()
    return out


def cols(X, idx, xp=vnp):
    out = xp.zeros((X.shape[1], 4))
    for i in range(X.shape[0]):
        out[:, idx[i]] = np.tanh(X[i])
    return out


def _loss(f):
    def loss(*a):
        y = f(*a)
        return np.sum(y ** 2 * np.arange(1.0, 1.0 + y.size).reshape(y.shape))
    return loss


CASES = [
    (perm_scatter, (R.standard_normal(13), R.integers(0, 5, 13))),
    (repeated, (R.standard_normal(15), R.integers(-6, 6, 15))),
    (rows, (R.standard_normal((9, 3)), R.integers(0, 5, 9))),
    (cols, (R.standard_normal((7, 3)), R.integers(-4, 4, 7))),
]


@pytest.mark.parametrize("f,args", CASES)
def test_writes_at_traced_positions_are_one_write(f, args):
    e = check_batched(_loss(f), args, argnums=0)
    g = e.stages["batch"]
    assert count(g, P.scatter_reduce_along) == 1 and count(g, P.setitem) <= 1, g
    got, want = vg.jit(f)(*args), f(*args, xp=np)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_the_last_write_wins_bit_for_bit():
    """NaNs and signed zeros are written as they are: a gather, no arithmetic."""
    x = np.array([0.0, -0.0, np.nan, 1.5, -0.0, np.inf, 2.0, np.nan])
    for idx in (np.array([0, 0, 1, 1, 2, 3, 3, 2]), np.array([5, 5, 5, 4, 4, -1, 0, 1])):
        got, want = vg.jit(_copies)(x, idx), _copies(x, idx, np)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def _copies(x, idx, xp=vnp):
    out = xp.full(6, 7.0)
    for i in range(len(x)):
        out[idx[i]] = x[i]
    return out


def ints(v, idx, xp=vnp):
    out = xp.zeros(5, dtype=np.int32)
    for i in range(len(v)):
        out[idx[i]] = v[i] * 3
    return out


def test_int_buffers_keep_their_dtype():
    v, idx = R.integers(-50, 50, 12).astype(np.int32), R.integers(0, 5, 12)
    got, want = vg.jit(ints)(v, idx), ints(v, idx, np)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def read_between(x, idx, xp=vnp):
    out = xp.zeros(5)
    for i in range(len(x)):
        out[idx[i]] = x[i] + out[0]  # (each write reads the buffer: not one write)
    return out


def test_a_chain_read_between_writes_stays_exact():
    x, idx = R.standard_normal(11), R.integers(0, 5, 11)
    np.testing.assert_allclose(vg.jit(read_between)(x, idx), read_between(x, idx, np),
                               rtol=1e-14)
    vg.check_grads(_loss(read_between), (x, idx), argnums=0, rtol=1e-6, atol=1e-8)


def test_a_position_out_of_bounds_raises_as_numpy():
    x, idx = R.standard_normal(6), np.array([0, 1, 2, 9, 1, 0])
    with pytest.raises(IndexError):
        perm = repeated(x, idx, np)  # noqa: F841 (NumPy's own error)
    with pytest.raises(IndexError):
        vg.jit(repeated)(x, idx)
