"""The NumPy backend's kernels of scatters at a runtime index: scatter_reduce_along
(np.maximum.at / minimum / multiply at a traced index, and the chains `buf[k] = max(buf[k], v)`
that batching makes one scatter), where a 1-D buffer runs NumPy's ufunc.at on a copy (or on the
buffer itself when it is dead), without the impl's bounds scans and flat positions; and the
scatter of a permutation (`unique`: sort's gradient, inverse permutations), a plain write.
They must equal the impls and NumPy's own ufunc.at bit for bit: repeated, negative and
out-of-range positions, NaNs, ints, float32, complex, and values of another dtype (which take
the impl)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends.numpy import gathers as K
from vecgrad.ir import Aval
from vecgrad.primitives.sorting import _reduce_at, _scatter_add_along, _winner_shares

R = np.random.default_rng(24)
OPS = ["maximum", "minimum", "multiply"]


def _avals(*xs):
    return [Aval(x.shape, x.dtype) for x in xs]


def _numpy(a, v, i, op):
    out = a.copy()
    getattr(np, op).at(out, i, v)
    return out


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("n,m", [(1, 5), (7, 40), (300, 3000), (50, 0)])
def test_kernel_equals_impl_and_numpy(op, dtype, n, m):
    a = (R.standard_normal(n) * 3).astype(dtype)
    v = (R.standard_normal(m) * 3).astype(dtype)
    i = R.integers(-n, n, m)  # (negative positions wrap, as NumPy's indexing)
    run = K._scatter_reduce_along(_avals(a, v, i), axis=0, op=op)
    got = run(a, v, i)
    np.testing.assert_array_equal(got, _numpy(a, v, i, op))
    np.testing.assert_array_equal(got, _reduce_at(a, v, i, 0, op))
    assert got is not a and got.dtype == a.dtype
    b = a.copy()
    assert K._scatter_reduce_inplace(b, v, i, axis=0, op=op) is b  # (dead: written in place)
    np.testing.assert_array_equal(b, got)


@pytest.mark.parametrize("op", OPS)
def test_kernel_keeps_nans_as_numpy(op):
    a = np.array([0.0, np.nan, 2.0, -1.0])
    v = np.array([np.nan, 1.0, 5.0, 3.0, -7.0, np.nan])
    i = np.array([0, 1, 2, 2, 3, 3])
    got = K._scatter_reduce_along(_avals(a, v, i), axis=0, op=op)(a, v, i)
    np.testing.assert_array_equal(got, _numpy(a, v, i, op))


@pytest.mark.parametrize("bad", [4, -5, 100])
def test_kernel_refuses_out_of_range_positions(bad):
    a, v, i = np.zeros(4), np.ones(3), np.array([0, bad, 1])
    run = K._scatter_reduce_along(_avals(a, v, i), axis=0, op="maximum")
    with pytest.raises(IndexError):
        run(a, v, i)
    with pytest.raises(IndexError):
        K._scatter_reduce_inplace(a.copy(), v, i, axis=0, op="maximum")


def test_other_shapes_and_dtypes_take_the_impl():
    a, i = np.zeros((3, 4)), R.integers(0, 3, (5, 1))
    v = R.standard_normal((5, 4))
    run = K._scatter_reduce_along(_avals(a, v, i), axis=0, op="maximum")
    np.testing.assert_array_equal(run(a, v, i), _reduce_at(a, v, i, 0, "maximum"))
    a1, v1, i1 = np.zeros(4), np.arange(6, dtype=np.float32), np.arange(6) % 4
    assert K._reduce_at_1d(_avals(a1, v1, i1), "maximum") is None
    run = K._scatter_reduce_along(_avals(a1, v1, i1), axis=0, op="maximum")
    np.testing.assert_array_equal(run(a1, v1, i1), _reduce_at(a1, v1, i1, 0, "maximum"))
    ro = np.broadcast_to(np.zeros(1), (4,))  # (a read-only view: never written)
    np.testing.assert_array_equal(K._scatter_reduce_inplace(ro, v1[:4], i1[:4], axis=0,
                                                            op="maximum"),
                                  _reduce_at(ro, v1[:4], i1[:4], 0, "maximum"))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("n", [1, 7, 2000])
def test_permutation_scatter_equals_impl(dtype, n):
    v = (R.standard_normal(n) * 5).astype(dtype)
    p = R.permutation(n) - R.integers(0, 2, n) * n  # (some positions negative: they wrap)
    run = K._scatter_add_along(_avals(v, p), axis=0, size=n, unique=True)
    got = run(v, p)
    want = _scatter_add_along(v, p, 0, n, unique=True)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    with pytest.raises(IndexError):
        run(v, np.where(np.arange(n) == 0, n, p))


def _shares_case(n, m, ties, nans, negative, op):
    """A 1-D scatter-max / min's operands: base, values (some tied with the result, some
    NaN), positions (some negative) and its result, as the forward computes it."""
    a = np.round(R.standard_normal(n), 1 if ties else 12)
    v = np.round(R.standard_normal(m), 1 if ties else 12)
    if nans and m:
        v[R.integers(0, m, 2)] = np.nan
        a[R.integers(0, n)] = np.nan
    i = R.integers(-n if negative else 0, n, m)
    with np.errstate(invalid="ignore"):  # (np.maximum.at of a NaN warns)
        return a, v, i, _reduce_at(a, v, i, 0, op)


@pytest.mark.parametrize("op", ["maximum", "minimum", "builtin_max", "builtin_min"])
@pytest.mark.parametrize("n,m", [(1, 6), (7, 40), (40, 4000), (300, 100), (5, 0)])
@pytest.mark.parametrize("ties,nans,negative", [(False, False, False), (True, False, True),
                                                (True, True, False), (False, True, True)])
def test_winner_shares_kernel_equals_impl(op, n, m, ties, nans, negative):
    a, v, i, ans = _shares_case(n, m, ties, nans, negative, op)
    g = R.standard_normal(n)
    run = K._winner_shares(_avals(g, a, v, i, ans), axis=0)
    got, want = run(g, a, v, i, ans), _winner_shares(g, a, v, i, ans, 0)
    assert got.dtype == want.dtype and got.shape == (n + m,)
    np.testing.assert_array_equal(got, want)  # (the same divisions: the same bits)
    if m:
        with pytest.raises(IndexError):
            run(g, a, v, np.where(np.arange(m) == 0, n, i), ans)


def test_winner_shares_other_shapes_take_the_impl():
    a, ans = np.zeros((3, 4)), np.ones((3, 4))
    v, i = R.standard_normal((5, 4)), R.integers(0, 3, (5, 1))
    g = R.standard_normal((3, 4))
    run = K._winner_shares(_avals(g, a, v, i, ans), axis=0)
    np.testing.assert_array_equal(run(g, a, v, i, ans), _winner_shares(g, a, v, i, ans, 0))
    g32 = g[0].astype(np.float32)  # (a float32 cotangent: the impl's float32 shares)
    a1, v1, i1 = np.zeros(4), R.standard_normal(6), np.arange(6) % 4
    ans1 = _reduce_at(a1, v1, i1, 0, "maximum")
    got = K._winner_shares(_avals(g32, a1, v1, i1, ans1), axis=0)(g32, a1, v1, i1, ans1)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, _winner_shares(g32, a1, v1, i1, ans1, 0))


def sorted_loss(x, xp=vnp):
    s = np.sort(x * x)
    return np.sum(s * np.arange(1.0, len(x) + 1))


def test_sort_gradient_through_the_permutation_scatter():
    x = R.standard_normal(40)
    vg.check_grads(sorted_loss, (x,), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(vg.jit(sorted_loss)(x), sorted_loss(x, np), rtol=1e-13)


# ------------------------------------------------------------- end to end, compiled programs

def max_into_dead_buffer(x, src, dst, xp=vnp):
    buf = xp.full(x.shape[0] // 3 + 2, -1.0)
    for a, b in zip(src, dst):
        buf[b] = np.maximum(buf[b], np.sin(x[a]))
    return np.sum(buf ** 2)


def min_at_then_read(x, idx, xp=vnp):
    buf = xp.ones(5) * 0.5
    np.minimum.at(buf, idx, x * 1.5)
    return np.sum(buf * buf[::-1]) + np.sum(np.tanh(buf))


def builtin_max_negative_dst(x, src, dst, xp=vnp):
    buf = xp.zeros(7)
    for a, b in zip(src, dst):
        buf[b] = max(buf[b], x[a] - 0.3)
    return np.sum(np.exp(buf))


def product_at(x, idx, xp=vnp):
    buf = xp.full(4, 1.5)
    np.multiply.at(buf, idx, x)
    return np.sum(buf ** 2)


@pytest.mark.parametrize("f,args", [
    (max_into_dead_buffer, (R.standard_normal(30), R.integers(0, 30, 40),
                            R.integers(0, 12, 40))),
    (min_at_then_read, (R.standard_normal(12), R.integers(-5, 5, 12))),
    (builtin_max_negative_dst, (R.standard_normal(9), R.integers(0, 9, 20),
                                R.integers(-7, 7, 20))),
    (product_at, (R.standard_normal(6) + 2.0, np.array([0, 1, 1, 3, -1, 0]))),
])
def test_programs_equal_numpy_and_gradients(f, args):
    check_batched(f, args, argnums=0)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args, xp=np), rtol=1e-13)
    e = vg.grad(f).entry(*args)[0]
    assert count(e.stages["batch"], P.scatter_reduce_along) >= 1
