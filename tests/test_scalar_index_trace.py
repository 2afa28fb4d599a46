"""Reads and accumulations at one traced integer (`x[k[i]]`, `y[k[i]] += v`): tracing takes
them straight to the gather or scatter they are, without the general look at the key, and
records exactly what the general path records for the same index written as a tuple
(`x[(k[i],)]`). Values equal NumPy's loop, batched equals unbatched, gradients match central
differences; the views NumPy makes (a row read at k[i], written through) behave as NumPy's;
index dtypes, negative positions and errors as before."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import entry

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import TraceError

R = np.random.default_rng(27)


def _one(t):
    return t


def _tup(t):
    return (t,)


def gather_vec(x, k, w, key=_one, xp=vnp):
    loss = 0.0
    for i in range(len(k)):
        loss = loss + np.tanh(x[key(k[i])]) * w[i]
    return loss


def gather_rows(X, k, w, key=_one, xp=vnp):
    loss = 0.0
    for i in range(len(k)):
        loss = loss + np.sum(np.sin(X[key(k[i])]) * w)
    return loss


def gather_planes(X, k, w, key=_one, xp=vnp):
    loss = 0.0
    for i in range(len(k)):
        loss = loss + np.sum(X[key(k[i])][1] * w[: X.shape[2]]) ** 2
    return loss


def scatter_add(x, k, w, key=_one, xp=vnp):
    y = xp.zeros(7)
    for i in range(len(k)):
        y[key(k[i])] += x[i] * w[i]
    return np.sum(np.tanh(y) ** 2)


def scatter_sub(x, k, w, key=_one, xp=vnp):
    y = xp.ones(7)
    for i in range(len(k)):
        y[key(k[i])] -= x[i] ** 2 * w[i]
    return np.sum(y * np.arange(7.0))


def scatter_rows(X, k, w, key=_one, xp=vnp):
    Y = xp.zeros((5, X.shape[1]))
    for i in range(len(k)):
        Y[key(k[i])] += X[i] * w[i]
    return np.sum(np.cos(Y) * np.arange(5.0)[:, None])


def row_view_write(X, k, w, key=_one, xp=vnp):
    B = X.copy()
    loss = 0.0
    for i in range(len(k)):
        r = B[key(k[i])]  # (a view of B, as NumPy's basic indexing)
        r *= 0.5
        loss = loss + np.sum(B * w[i])
    return loss


def element_copy(x, k, w, key=_one, xp=vnp):
    loss = 0.0
    for i in range(len(k)):
        t = x[key(k[i])]  # (a NumPy scalar: a copy, never written back)
        t += w[i]
        loss = loss + t * np.sum(x)
    return loss


def add_at(x, k, w, key=_one, xp=vnp):
    y = xp.zeros(6)
    for i in range(len(k)):
        np.add.at(y, key(k[i]), x[i] * w[i])
    return np.sum(y ** 2)


def add_at_rows(X, k, w, key=_one, xp=vnp):
    Y = xp.zeros((5, X.shape[1]))
    for i in range(len(k)):
        np.add.at(Y, key(k[i]), np.sin(X[i]) * w[i])
    return np.sum(Y ** 2 * np.arange(5.0)[:, None])


def _args(name, dtype):
    n = 9
    if name in ("gather_vec", "element_copy"):
        return R.standard_normal(7), R.integers(0, 7, n).astype(dtype), R.standard_normal(n)
    if name in ("gather_rows", "row_view_write"):
        return R.standard_normal((6, 4)), R.integers(0, 6, n).astype(dtype), \
            R.standard_normal(4) if name == "gather_rows" else R.standard_normal(n)
    if name == "gather_planes":
        return R.standard_normal((5, 3, 4)), R.integers(0, 5, n).astype(dtype), \
            R.standard_normal(4)
    if name in ("scatter_rows", "add_at_rows"):
        return R.standard_normal((n, 3)), R.integers(0, 5, n).astype(dtype), \
            R.standard_normal(n)
    hi = 6 if name == "add_at" else 7
    return R.standard_normal(n), R.integers(0, hi, n).astype(dtype), R.standard_normal(n)


PROGRAMS = [gather_vec, gather_rows, gather_planes, scatter_add, scatter_sub, scatter_rows,
            row_view_write, element_copy, add_at, add_at_rows]

SAME_AS_TUPLE = [gather_vec, gather_rows, gather_planes, add_at, add_at_rows]


def _listing(f, args):
    """The traced graph's listing without ids (equal for equal traces)."""
    e, _ = entry(f, args, 0)
    g = e.stages["traced"]
    return [(q.prim.name, tuple(sorted(q.params.items(), key=str)).__repr__(),
             tuple(a.aval for a in q.inputs), q.out.aval, q.src.line if q.src else None)
            for q in g.eqns]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16])
def test_values_gradients_and_same_trace(fn, dtype):
    args = _args(fn.__name__, dtype)
    want = fn(*[a.copy() for a in args], xp=np)
    got = vg.jit(fn)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check_batched(fn, args, argnums=(0, 2))

    def as_tuple(*a):
        return fn(*a, key=_tup)
    np.testing.assert_allclose(vg.jit(as_tuple)(*args), want, rtol=1e-12, atol=1e-12)
    if fn in SAME_AS_TUPLE:  # (a tuple key records the same operations, line for line;
        assert _listing(fn, args) == _listing(as_tuple, args)  # `+=` at one int reads
        # and writes once, noted on the builder, at a tuple as a read and a write)


@pytest.mark.parametrize("fn", [gather_vec, gather_rows, scatter_add, scatter_rows],
                         ids=lambda f: f.__name__)
def test_negative_positions_wrap(fn):
    x, k, w = _args(fn.__name__, np.int64)
    n = {"gather_vec": 7, "gather_rows": 6, "scatter_add": 7, "scatter_rows": 5}[fn.__name__]
    k = k - n  # (every position negative: NumPy counts from the end)
    np.testing.assert_allclose(vg.jit(fn)(x, k, w), fn(x, k, w, xp=np), rtol=1e-12)
    g = vg.grad(fn)(x, k, w)
    g_pos = vg.grad(fn)(x, k + n, w)
    np.testing.assert_allclose(g, g_pos, rtol=1e-12, atol=1e-14)


def test_float_index_refused():
    def f(x, t):
        return x[t[0]] * 2.0
    with pytest.raises(TraceError, match="integer"):
        vg.grad(f)(np.ones(4), np.zeros(3))


def test_bool_index_refused():
    def f(x, t):
        return np.sum(x[t[0]])
    with pytest.raises(TraceError):
        vg.grad(f)(np.ones(4), np.zeros(3, bool))


def test_scalar_indexed_refused():
    def f(x, k):
        s = np.sum(x)
        return s[k[0]]
    with pytest.raises((TraceError, IndexError)):
        vg.grad(f)(np.ones(4), np.zeros(3, np.int64))
