"""Writes at integer index arrays whose positions repeat, with NumPy's exact semantics
(numpy/_scatter.py): `x[idx] = v` and `x[idx] += v` (the last write to a position wins),
and `np.maximum.at` / `np.minimum.at` / `np.multiply.at` (repeated positions combine), at
traced index arrays and at NumPy ones. Each is checked against NumPy itself (values and
dtypes), its gradient against central differences in float64 along random directions, and
inside loops its batched graph against the unbatched one."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(0)


def fd_check(f, args, argnums, dirs=3, eps=1e-6, seed=1):
    """<grad f, d> against central differences of f run by NumPy on plain arrays."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    g = vg.grad(f, argnums=nums)(*args)
    rng = np.random.default_rng(seed)
    for _ in range(dirs):
        ds = {a: rng.standard_normal(np.shape(args[a])) for a in nums}

        def at(s, ds=ds):
            return f(*[a + s * ds[i] if i in ds else a for i, a in enumerate(args)])
        fd = (at(eps) - at(-eps)) / (2 * eps)
        an = sum(float(np.vdot(gi, ds[a])) for gi, a in zip(g, nums))
        assert abs(an - fd) <= 1e-6 * max(1.0, abs(fd)), (an, fd)


def same_as_numpy(f, *args):
    got, want = vg.jit(f)(*args), f(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------ x[idx] = v, x[idx] += v

def iadd_rows(v, idx):
    buf = vnp.zeros((4, v.shape[1]))
    buf[idx] += v ** 2
    return np.sum(np.sqrt(buf + 1.0) * np.arange(1, 4))


def assign_cols(x, v, idx):
    y = x * 1.5
    y[:, idx] = np.tanh(v)
    return np.sum(y * np.cos(y))


def iadd_static(v):
    buf = vnp.ones(5)
    buf[[0, 3, 0, 1, 3, 3]] += v
    return np.sum(buf ** 3)


@pytest.mark.parametrize("traced", [True, False])
def test_iadd_at_repeated_index_array_is_numpys(traced):
    v, idx = R.standard_normal((9, 3)), R.integers(-4, 4, 9)

    def f(v, idx):
        buf = vnp.zeros((4, 3))
        buf[idx] += v ** 2
        return buf
    if traced:
        same_as_numpy(f, v, idx)
    else:
        got = vg.jit(lambda v: f(v, idx))(v)
        np.testing.assert_array_equal(got, f(v, idx))
    fd_check(iadd_rows, (v, idx), 0)


def test_assign_at_repeated_columns_last_write_wins():
    x, v, idx = R.standard_normal((3, 5)), R.standard_normal((3, 7)), R.integers(0, 5, 7)
    assert len(set(idx.tolist())) < 7
    np.testing.assert_allclose(vg.jit(assign_cols)(x, v, idx), assign_cols(x, v, idx),
                               rtol=1e-14)
    fd_check(assign_cols, (x, v, idx), (0, 1))


def test_assign_keeps_signed_zeros_and_nans_exactly():
    def f(x, v, idx):
        x = x.copy()
        x[idx] = v
        return x
    x = np.array([1.0, -0.0, 2.0, 3.0])
    v = np.array([np.nan, -0.0, 5.0, -0.0])
    idx = np.array([0, 1, 0, 1])
    got = vg.jit(f)(x, v, idx)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(f(x, v, idx)))
    np.testing.assert_array_equal(got, f(x, v, idx))


def test_iadd_at_static_repeated_list():
    v = R.standard_normal(6)
    # (cubes of order-1 entries that may cancel: an ulp of a term, not of the sum; x ** 3 runs
    # as x * x * x where np.power's result for a negative base differs in the last bit)
    b = np.ones(5)
    np.add.at(b, [0, 3, 0, 1, 3, 3], v)
    np.testing.assert_allclose(vg.jit(iadd_static)(v), iadd_static(v), rtol=1e-15,
                               atol=4 * np.finfo(float).eps * np.sum(np.abs(b) ** 3))
    fd_check(iadd_static, (v,), 0)


def test_int_buffer_and_out_of_bounds_like_numpy():
    def f(v, idx):
        buf = vnp.zeros(4, dtype=np.int64)
        buf[idx] = v
        return buf
    v, idx = R.integers(0, 9, 6), np.array([1, 1, 3, -1, 0, 1])
    same_as_numpy(f, v, idx)
    with pytest.raises(IndexError):
        vg.jit(f)(v, np.array([0, 4, 1, 1, 1, 1]))


# ----------------------------------------------------- np.maximum/minimum/multiply.at

def at_op(op, base):
    def f(x, v, idx):
        buf = vnp.full((4, 3), base)
        buf = buf + 0.1 * x
        getattr(np, op).at(buf, idx, v)
        return np.sum(buf * np.arange(1, 4) + buf ** 2)
    return f


@pytest.mark.parametrize("op,base", [("maximum", 0.0), ("minimum", 0.0), ("multiply", 1.0)])
@pytest.mark.parametrize("traced", [True, False])
def test_ufunc_at_repeated(op, base, traced):
    x, v = R.standard_normal((4, 3)), R.standard_normal((9, 3))
    idx = R.integers(0, 4, 9)
    f = at_op(op, base)
    if traced:
        np.testing.assert_allclose(vg.jit(f)(x, v, idx), f(x, v, idx), rtol=1e-14)
        fd_check(f, (x, v, idx), (0, 1))
    else:
        def g(x, v):
            return f(x, v, idx)
        np.testing.assert_allclose(vg.jit(g)(x, v), g(x, v), rtol=1e-14)
        fd_check(g, (x, v), (0, 1))


def test_multiply_at_gradient_exact_with_zero_factors():
    def f(a, v, idx):
        a = a * 1.0
        np.multiply.at(a, idx, v)
        return np.sum(a * np.arange(1.0, 5.0))
    a = np.array([2.0, 0.0, 3.0, 1.5])
    v = np.array([0.0, 2.0, 0.0, 0.0, 4.0, 5.0])
    idx = np.array([0, 0, 1, 2, 2, 3])  # one zero at 0 and at 2, two at 1 (a's and v's)
    ga, gv = vg.grad(f, argnums=(0, 1))(a, v, idx)
    # d/da_i = prod of v at i; d/dv_k = a_i * prod of the other v at i (all multilinear)
    np.testing.assert_allclose(ga, [0.0, 0.0, 0.0, 5.0 * 4])
    np.testing.assert_allclose(gv, [2.0 * 2.0, 0.0, 0.0, 3.0 * 4.0 * 3, 0.0, 1.5 * 4])
    fd_check(f, (a, v, idx), (0, 1))


def test_ufunc_at_cannot_upcast_the_buffer():
    def f(v, idx):
        buf = vnp.zeros(4, dtype=np.float32)
        np.maximum.at(buf, idx, v)
        return buf
    with pytest.raises(Exception):  # noqa: B017 (NumPy's error, or vecgrad's typed one)
        vg.jit(f)(R.standard_normal(5), np.array([0, 1, 1, 2, 3]))


# ------------------------------------------------------------------ inside loops

def rows_max(X, idx):
    out = vnp.zeros((X.shape[0], 4))
    for r in range(X.shape[0]):
        buf = vnp.full(4, -5.0)
        np.maximum.at(buf, idx[r], X[r])
        out[r] = buf
    return vnp.sum(out ** 2)


def rows_last_write(X, idx):
    out = vnp.zeros((X.shape[0], 4))
    for r in range(X.shape[0]):
        buf = vnp.zeros(4)
        buf[idx[r]] += X[r] ** 2
        out[r] = buf
    return vnp.sum(vnp.sin(out))


@pytest.mark.parametrize("f", [rows_max, rows_last_write])
def test_batched_equals_unbatched_in_loops(f):
    X, idx = R.standard_normal((5, 6)), R.integers(0, 4, (5, 6))
    e = check_batched(f, (X, idx))
    g = e.stages["batch"]
    loops = [q for q in g.eqns if q.prim is P.scatter_reduce_along]
    assert len(loops) == 1, "the loop's five scatters are one batched scatter"


def test_segment_max_through_edges_matches_numpy():
    def f(x, W, src, dst):
        out = vnp.zeros((x.shape[0], W.shape[1]))
        np.maximum.at(out, dst, x[src] @ W)
        return np.sum(out ** 2)

    def ref(x, W, src, dst):
        out = np.zeros((x.shape[0], W.shape[1]))
        np.maximum.at(out, dst, (x @ W)[src])
        return np.sum(out ** 2)
    x, W = R.standard_normal((6, 3)), R.standard_normal((3, 2))
    src, dst = R.integers(0, 6, (2, 15))
    np.testing.assert_allclose(vg.jit(f)(x, W, src, dst), ref(x, W, src, dst), rtol=1e-14)
    fd_check(f, (x, W, src, dst), (0, 1))


# ------------------------------------------ the NumPy backend's take_along / scatter_add_along

@pytest.mark.parametrize("n", [7, 1000, 3000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lowered_scatter_add_along_is_the_impl(n, dtype):
    # the backend decides its kernel once, when compiling (np.add.at for a 1-D float64
    # histogram of at least 1,000 values); every case must equal the impl's sums and raise
    # NumPy's IndexError out of bounds, negative positions wrapping
    from vecgrad.backends.numpy.table import lower
    from vecgrad.ir import Aval
    rng = np.random.default_rng(n)
    v, idx = rng.standard_normal(n).astype(dtype), rng.integers(-64, 64, n)
    f = lower(P.scatter_add_along, {"axis": 0, "size": 64},
              [Aval(v.shape, v.dtype), Aval(idx.shape, idx.dtype)])
    want = np.zeros(64)
    np.add.at(want, idx, v.astype(np.float64))  # (float32 values summed in float64)
    got = f(v, idx)
    assert got.dtype == dtype and got.shape == (64,)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-4 if dtype == np.float32 else 0)
    np.testing.assert_array_equal(got, P.scatter_add_along.impl(v, idx, axis=0, size=64))
    bad = idx.copy()
    bad[n // 2] = 64
    with pytest.raises(IndexError):
        f(v, bad)


@pytest.mark.parametrize("xs,ids,axis", [((9,), (30,), 0), ((4, 9), (1, 5), 1),
                                         ((4, 9), (4, 5), 1), ((9, 3), (6, 1), 0)])
def test_lowered_take_along_is_the_impl(xs, ids, axis):
    from vecgrad.backends.numpy.table import lower
    from vecgrad.ir import Aval
    rng = np.random.default_rng(0)
    x, idx = rng.standard_normal(xs), rng.integers(-xs[axis], xs[axis], ids)
    f = lower(P.take_along, {"axis": axis}, [Aval(x.shape, x.dtype), Aval(idx.shape, idx.dtype)])
    np.testing.assert_array_equal(f(x, idx), np.take_along_axis(x, idx, axis))


def test_histogram_rmw_gradient_through_the_lowered_kernels():
    def f(v, idx):
        h = vnp.zeros(40)
        for k in range(len(v)):
            h[idx[k]] = h[idx[k]] + v[k] ** 2
        return np.sum(np.sqrt(h + 1.0))

    v, idx = R.standard_normal(1200), R.integers(0, 40, 1200)
    want = np.sum(np.sqrt(np.bincount(idx, v ** 2, 40) + 1.0))
    np.testing.assert_allclose(vg.jit(f)(v, idx), want, rtol=1e-12)
    fd_check(f, (v, idx), 0)


def test_fused_softmax_and_logsumexp_leave_a_transposed_view_input_alone():
    # their short-last-axis paths work in place on a transposed copy: where x is itself the
    # transpose of a C-contiguous array, that "copy" must not be x's memory
    from vecgrad.primitives.nn import _logsumexp, _softmax
    y = np.random.default_rng(0).standard_normal((16, 200))
    y0 = y.copy()
    lse = np.log(np.sum(np.exp(y0.T), axis=1))
    np.testing.assert_allclose(_softmax(y.T, 1), np.exp(y0.T - lse[:, None]), rtol=1e-12)
    np.testing.assert_allclose(_logsumexp(y.T, 1), lse, rtol=1e-12)
    np.testing.assert_array_equal(y, y0)


def reset_rows(X, idx=(3, 0, 2, 3, 1, 0, 2, 2, 1, 3)):
    out = vnp.zeros(X.shape[0])
    for r in range(X.shape[0]):
        buf = vnp.zeros(4)
        for j, k in enumerate(idx):
            buf[k] += X[r, j]
        out[r] = np.log(np.sum(np.exp(buf)))
    return np.sum(out ** 2)


def test_buffer_reset_per_row_batches_and_its_gradient_is_a_view_not_a_buffer():
    # the rows' segment sums batch in a second pass, in the reverse of the rows' order; the
    # cotangent written back through that reversed slice is a reversed view (x.at[::-1].add(v)
    # into zeros), with no zeros buffer and no add-into
    X = R.standard_normal((24, 10))
    M = np.zeros((10, 4))
    M[np.arange(10), (3, 0, 2, 3, 1, 0, 2, 2, 1, 3)] = 1.0
    np.testing.assert_allclose(vg.jit(reset_rows)(X),
                               np.sum(np.log(np.sum(np.exp(X @ M), 1)) ** 2), rtol=1e-12)
    fd_check(reset_rows, (X,), 0)
    final = vg.show(reset_rows, X, argnums=0)
    final = final[final.index("=== final"):final.index("=== generated")]
    assert "setitem_add" not in final and "full[" not in final, final
