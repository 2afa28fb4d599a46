"""Buffers that each loop iteration makes for itself and fills by index (batch/siblings.py):
the iterations' chains of writes become one stacked buffer, so that their writes merge across
the iterations. Batched equals unbatched, values equal NumPy's loop, gradients match central
differences, the batched graph does not grow with the trip count, and chains that depend on
each other (a recurrence) stay correct."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_size_independent, check, entry

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(25)


def two_sets(a, b, xp=vnp):
    out = xp.empty((a.shape[0], 7))
    for i in range(a.shape[0]):
        buf = xp.zeros(7)
        buf[4:7] = a[i] * 2
        buf[0:3] = b[i]
        out[i] = buf
    return xp.sum(xp.sin(out))


def adds_tiling(a, b, xp=vnp):
    out = xp.empty((a.shape[0], 7))
    for i in range(a.shape[0]):
        buf = xp.zeros(7)
        buf[4:7] += a[i] * 2
        buf[0:3] += b[i]
        buf[3] += a[i, 0] * b[i, 1]
        out[i] = buf
    return xp.sum(xp.sin(out))


def negated_then_added(a, b, xp=vnp):
    """A Jacobian's tangent buffer: filled, negated, added into again."""
    tot = 0.0
    for i in range(a.shape[0]):
        buf = xp.zeros((2, 7))
        buf[:, 4:7] += xp.outer(xp.ones(2), a[i])
        buf[:, 0:3] += b[i] * 3
        buf = -buf
        buf[:, 4:7] += b[i] * a[i]
        buf[:, 0:3] += xp.cos(a[i])
        tot = tot + xp.sum(buf[:, 3:] * buf[:, :4])
    return tot


def copied_base(a, b, xp=vnp):
    out = xp.empty((a.shape[0], 7))
    for i in range(a.shape[0]):
        buf = xp.concatenate([a[i], b[i], a[i, :1]])
        buf[4:7] += a[i] * 2
        buf[0:3] *= b[i]
        out[i] = buf
    return xp.sum(out ** 2)


def read_back(a, b, xp=vnp):
    tot = 0.0
    for i in range(a.shape[0]):
        buf = xp.zeros(3)
        buf[0] = a[i, 0]
        buf[1] = buf[0] * b[i, 1]  # (reads what this iteration wrote)
        buf[2] = xp.tanh(buf[1] + a[i, 2])
        tot = tot + buf @ b[i]
    return tot


def factor_per_component(q, l, x, xp=vnp):
    """gmm's Q_k, filled the other way: l above the diagonal row by row, then exp(q) on it."""
    tot = 0.0
    for qk, lk in zip(q, l):
        Q, upper = xp.zeros((len(qk), len(qk))), iter(lk)
        for i, qi in enumerate(qk):
            for j in range(i + 1, len(qk)):
                Q[i, j] = next(upper) * 0.5
            Q[i, i] = xp.exp(qi)
        tot = tot + xp.sum((Q @ x.T) ** 2)
    return tot


def rows_in_inner_loop(a, b, xp=vnp):
    tot = 0.0
    for i in range(a.shape[0]):
        B = xp.zeros((3, 3))
        for j in range(3):
            B[j] = a[i] * (j + 1) + b[i, j]
        tot = tot + xp.sum(xp.exp(B) * B.T)
    return tot


def recurrence(a, b, xp=vnp):
    """Each iteration's buffer is made from the last one's: the chains depend on each other."""
    prev = xp.zeros(3)
    tot = 0.0
    for i in range(a.shape[0]):
        buf = xp.zeros(3)
        buf[0] = prev[2] * 0.5 + a[i, 0]
        buf[1:] = xp.sin(prev[:2]) + b[i, 1:]
        tot = tot + xp.sum(buf * a[i])
        prev = buf
    return tot


def summed_buffers(a, b, xp=vnp):
    tot = 0.0
    for i in range(a.shape[0]):
        buf = xp.zeros(6)
        buf[3:6] += a[i] * 2
        buf[0:3] += b[i]
        tot = tot + xp.sum(xp.sin(buf))
    return tot


PAIRS = [two_sets, adds_tiling, negated_then_added, copied_base, read_back, rows_in_inner_loop,
         recurrence, summed_buffers]


@pytest.mark.parametrize("f", PAIRS, ids=lambda f: f.__name__)
def test_per_iteration_buffers_batch_and_differentiate(f):
    a, b = R.standard_normal((9, 3)), R.standard_normal((9, 3))
    check(f, (a, b), argnums=(0, 1))
    np.testing.assert_allclose(vg.jit(f)(a, b), f(a, b, xp=np), rtol=1e-12)


@pytest.mark.parametrize("f", [two_sets, adds_tiling, negated_then_added, copied_base,
                               read_back, rows_in_inner_loop, summed_buffers],
                         ids=lambda f: f.__name__)
def test_per_iteration_buffers_do_not_grow_with_the_loop(f):
    def make(n):
        return f, (R.standard_normal((n, 3)), R.standard_normal((n, 3)))
    assert_size_independent(make, sizes=(4, 11))


def test_factor_per_component():
    q, l, x = R.standard_normal((6, 4)), R.standard_normal((6, 6)), R.standard_normal((5, 4))
    e = check(factor_per_component, (q, l, x), argnums=(0, 1))
    np.testing.assert_allclose(vg.jit(factor_per_component)(q, l, x),
                               factor_per_component(q, l, x, xp=np), rtol=1e-12)
    g = e.stages["batch"]
    # the K components' entries are written together: a handful of writes, not K d (d+1) / 2
    assert sum(e.prim in (P.setitem, P.setitem_add) for e in g.eqns) <= 4, vg.ir.pretty(g)


def test_recurrence_stays_sequential_and_exact():
    a, b = R.standard_normal((12, 3)), R.standard_normal((12, 3))
    np.testing.assert_allclose(vg.jit(recurrence)(a, b), recurrence(a, b, xp=np), rtol=1e-12)
    ga = vg.grad(recurrence)(a, b)
    vg.check_grads(recurrence, (a, b), argnums=0, rtol=1e-6, atol=1e-8)
    assert ga.shape == a.shape


def project(cam, X):
    w = cam[:3]
    c = vnp.cross(w, X) * vnp.cos(cam[3]) + X * cam[4]
    return c[:2] / (c[2] + 3.0)


def test_jacobian_per_row_inlined_in_a_loop():
    """A `jacfwd` called per row inside a jitted loop: its tangent buffers (inlined once per
    row) merge across the rows (the bundle-adjustment shape)."""
    jac = vg.jacfwd(project, argnums=(0, 1))

    def blocks(cams, X, xp=vnp):
        n = cams.shape[0]
        out = xp.empty((n, 2, 8))
        for i in range(n):
            dc, dx = jac(cams[i], X[i])
            out[i, :, :5] = dc
            out[i, :, 5:] = dx
        return out

    def numeric(cams, X):
        out = np.empty((cams.shape[0], 2, 8))
        eps = 1e-6
        for i in range(cams.shape[0]):
            z = np.concatenate([cams[i], X[i]])
            for k in range(8):
                d = np.zeros(8)
                d[k] = eps
                hi, lo = z + d, z - d
                out[i, :, k] = (project(hi[:5], hi[5:]) - project(lo[:5], lo[5:])) / (2 * eps)
        return out

    for n in (3, 10):
        cams, X = R.standard_normal((n, 5)), R.standard_normal((n, 3))
        got = vg.jit(blocks)(cams, X)
        np.testing.assert_allclose(got, numeric(cams, X), rtol=1e-6, atol=1e-8)
    e, _ = entry(lambda c, x: vnp.sum(blocks(c, x) ** 2), (cams, X), 0)
    g = e.stages["batch"]
    assert sum(q.prim in (P.setitem, P.setitem_add) for q in g.eqns) <= 12, vg.ir.pretty(g)


def test_int_buffers_keep_values():
    def counts(idx, xp=vnp):
        out = xp.zeros((idx.shape[0], 4), dtype=np.int64)
        for i in range(idx.shape[0]):
            c = xp.zeros(4, dtype=np.int64)
            c[1:3] = idx[i] * 2
            c[3] = idx[i] + 1
            out[i] = c
        return out
    idx = R.integers(-5, 5, 8)
    got, want = vg.jit(counts)(idx), counts(idx, xp=np)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_adding_made_zeros_is_no_operation():
    """x + zeros(shape) (a `full` of 0, as a stacked buffer's base added into whole) is x."""
    def f(x):
        return vnp.sum(vnp.sin(x + vnp.zeros(x.shape)) + vnp.zeros((1, 3)) + x)
    x = R.standard_normal((4, 3))
    e = check(f, (x,))
    g = e.stages["simplify"]
    assert not [q for q in g.eqns if q.prim is P.add and any(
        d.prim is P.full for d in g.eqns if d.out in q.inputs)], vg.ir.pretty(g)
