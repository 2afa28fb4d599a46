"""Convolution, polynomials, interpolation, integration, metadata and comparison functions,
vector products, index arithmetic, apply_along_axis/vectorize and the NumPy 2 array-API names
of `vecgrad.numpy` against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check
from test_numpy_api import assert_same, check

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(19)
V = R.standard_normal(6)
W = R.standard_normal(3)
M = R.standard_normal((3, 4))
T = R.standard_normal((2, 3, 4))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("swap", [False, True])
def test_convolve_correlate(mode, name, swap):
    a, b = (W, V) if swap else (V, W)
    check(lambda xp, a, b: getattr(xp, name)(a, b, mode), a, b, argnums=(0, 1))


@pytest.mark.parametrize("n, m", [(1, 1), (7, 1), (8, 8), (9, 4), (3, 10), (16, 5)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_sizes(n, m, mode):
    a, b = R.standard_normal(n), R.standard_normal(m)
    check(lambda xp, a, b: xp.convolve(a, b, mode), a, b, argnums=(0, 1))


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.complex128, np.bool_])
def test_convolve_dtypes(dtype):
    a, b = (R.standard_normal(9) * 3).astype(dtype), (R.standard_normal(4) * 3).astype(dtype)
    check(lambda xp, a, b: xp.convolve(a, b), a, b, grad=False, rtol=1e-6)


def test_convolve_per_channel_loop_batches():
    """One convolution per channel in a loop batches into one contraction (no per-channel
    or per-tap operation left), and equals the unbatched program with its gradient."""
    from test_batch import check as check_batched

    k = R.standard_normal(5)

    def f(x):
        return sum(vnp.sum(vnp.convolve(x[c], k, "same") ** 2) for c in range(x.shape[0]))

    e = check_batched(f, (R.standard_normal((6, 40)),))
    assert len(e.stages["batch"].eqns) < 20


@pytest.mark.parametrize("fn", [
    lambda xp, p, x: xp.polyval(p, x), lambda xp, p, x: xp.polyval(p[:1], x[0]),
    lambda xp, p, x: xp.vander(x[0]), lambda xp, p, x: xp.vander(x[0], 3, increasing=True),
    lambda xp, p, x: xp.polyadd(p, x[0, :2]), lambda xp, p, x: xp.polysub(p[:2], x[1]),
    lambda xp, p, x: xp.polymul(p, x[0]), lambda xp, p, x: xp.polyder(p),
    lambda xp, p, x: xp.polyder(p, 2), lambda xp, p, x: xp.polyint(p),
    lambda xp, p, x: xp.polyint(p, 2, k=[1.0, 2.0]),
], ids=["polyval", "polyval-const", "vander", "vander-inc", "polyadd", "polysub", "polymul",
        "polyder", "polyder2", "polyint", "polyint2"])
def test_polynomials(fn):
    check(fn, W, M, argnums=(0, 1))


@pytest.mark.parametrize("fn", [
    lambda xp, y, x: xp.trapezoid(y), lambda xp, y, x: xp.trapezoid(y, dx=0.5, axis=0),
    lambda xp, y, x: xp.trapezoid(y, xp.cumsum(x[0] ** 2)),
    lambda xp, y, x: xp.trapezoid(y, y * 0.5, axis=1),
], ids=["plain", "dx-axis", "x", "x-nd"])
def test_trapezoid(fn):
    check(fn, M, M, argnums=(0, 1))


def test_interp():
    xp_ = np.array([-1.0, 0.0, 0.5, 2.0])
    x = np.array([-2.0, -1.0, -0.3, 0.25, 0.5, 1.7, 2.0, 3.0])

    def f(m, x, fp, xs):
        return (m.interp(x, xs, fp), m.interp(x, xs, fp, left=-5.0, right=fp[0]),
                m.interp(x[2:4], xs[:1], fp[:1]))
    check(f, x, R.standard_normal(4), xp_, argnums=(1,))
    xin = np.array([-0.7, 0.3, 1.1])  # away from the knots: differentiable in x
    check(lambda m, x, fp: m.interp(x, xp_, fp), xin, R.standard_normal(4), argnums=(0, 1))
    check(lambda m, x, xs: m.interp(x, xs, xs ** 2), xin, xp_, argnums=(0, 1))


@pytest.mark.parametrize("period", [1.0, 360, -2.5])
def test_interp_periodic(period):
    """x and xp modulo |period|, xp sorted with fp, left/right ignored: NumPy's rule."""
    xs = np.array([2.2, -1.7, 0.4, 1.1, -0.2])  # (unsorted, and beyond one period)
    x = np.array([-4.15, -0.35, 0.05, 0.95, 2.65, 7.45])  # (away from the knots)
    check(lambda m, x, fp, xs: m.interp(x, xs, fp, period=period, left=9.0), x,
          R.standard_normal(5), xs, argnums=(0, 1, 2))
    with pytest.raises(ValueError, match="non-zero"):
        vg.jit(lambda x: vnp.interp(x, xs, xs, period=0))(x)


def test_metadata_and_comparisons():
    seen = {}

    def f(x):
        seen.update(size=vnp.size(x), size1=np.size(x, 1), rt=np.result_type(x, 1.0),
                    rt32=vnp.result_type(x.astype(np.float32), 2), cplx=np.iscomplexobj(x),
                    real=np.isrealobj(x), cast=np.can_cast(x, np.float32),
                    neq=vnp.array_equal(x, x[:1]), nequiv=np.array_equiv(x, x[:2]))
        return (np.isclose(x, x + 1e-9), np.isclose(x, 2 * x, rtol=0.6, equal_nan=True),
                np.allclose(x, x), np.array_equal(x, x * 1.0), np.array_equiv(x, x[0]),
                np.iscomplex(x), np.isreal(x), np.real_if_close(x) * 1.0)
    got = vg.jit(f)(M)
    assert seen == {"size": 12, "size1": 4, "rt": np.float64, "rt32": np.float32, "cplx": False,
                        "real": True, "cast": False, "neq": False, "nequiv": False}
    assert_same(got, f(M))


@pytest.mark.parametrize("fn", [
    lambda xp, a, b: xp.vdot(a, b), lambda xp, a, b: xp.vecdot(a, b),
    lambda xp, a, b: xp.vecdot(a, b[0].T, axis=1), lambda xp, a, b: xp.matvec(a, b[0, 0]),
    lambda xp, a, b: xp.vecmat(b[0, :, 0], a), lambda xp, a, b: xp.matrix_transpose(a),
    lambda xp, a, b: xp.permute_dims(a, (2, 0, 1)), lambda xp, a, b: xp.concat([a, b], axis=1),
    lambda xp, a, b: xp.unstack(a, axis=1), lambda xp, a, b: xp.acos(xp.tanh(a)),
    lambda xp, a, b: xp.atan2(a, b), lambda xp, a, b: xp.pow(xp.abs(a) + 1, b),
    lambda xp, a, b: np.vecdot(a, b), lambda xp, a, b: np.matvec(a, b[0, 0]),
], ids=["vdot", "vecdot", "vecdot-axis", "matvec", "vecmat", "matrix_transpose",
        "permute_dims", "concat", "unstack", "acos", "atan2", "pow", "np.vecdot", "np.matvec"])
def test_vector_products_and_array_api_names(fn):
    check(fn, T, T[::-1] * 0.5, argnums=(0, 1))


def test_isin_digitize_lexsort():
    x = np.round(T * 2)
    check(lambda xp, x: (xp.isin(x, [0.0, 1.0, -2.0]), xp.isin(x, np.array([1.0]), invert=True),
                         xp.digitize(x, [-1.0, 0.0, 2.0]), xp.digitize(x, [3, 0, -1], True),
                         xp.lexsort((x[0, 0], x[1, 0])), xp.lexsort([x[0], x[1]], axis=0)),
          x, grad=False)


def test_index_arithmetic():
    idx = np.array([0, 5, 11, 7])

    def f(xp, x, i):
        r, c = xp.unravel_index(i, (3, 4))
        flat = xp.ravel_multi_index((r, c), (3, 4))
        return x[r, c] if xp is np else xp.take(xp.ravel(x), flat), r, c, flat
    want = f(np, M, idx)
    assert_same(vg.jit(lambda x, i: f(vnp, x, i))(M, idx), want)
    got = vg.jit(lambda x: vnp.ravel_multi_index((x[0].astype(int), x[1].astype(int)), (5, 3),
                                                 mode="clip"))(np.array([[1, 7], [2, -1]]))
    np.testing.assert_array_equal(got, np.ravel_multi_index(([1, 7], [2, -1]), (5, 3),
                                                            mode="clip"))


def test_ix_and_fill_diagonal():
    def f(xp, x):
        sub = x[xp.ix_(np.array([0, 2]), np.array([1, 3]))]
        y = x * 1.0
        xp.fill_diagonal(y, x[0, :2])
        z = xp.zeros((5, 3))
        xp.fill_diagonal(z, 2.0, wrap=True)
        c = xp.zeros((3, 3, 3))
        xp.fill_diagonal(c, x[1, :3])
        return sub, y, z, c
    check(f, M)


def test_apply_along_axis_and_vectorize():
    def f(xp, x):
        a = xp.apply_along_axis(lambda r: r @ r, 1, x)
        b = xp.apply_along_axis(lambda r: r[::-1] * 2, 0, x)
        c = xp.apply_along_axis(lambda r: xp.outer(r, r), 2, x)
        vf = xp.vectorize(lambda u, v: u * v if True else 0.0)
        d = vf(x, x[0, 0])
        e = xp.vectorize(lambda r: xp.sum(r ** 2), signature="(n)->()")(x)
        return a, b, c, d, e
    check(f, T)


def test_data_dependent_set_functions_raise():
    for fn in (np.setdiff1d, np.union1d, np.intersect1d, np.trim_zeros, np.bincount):
        with pytest.raises(vg.TraceError, match="data-dependent"):
            vg.jit(lambda x, fn=fn: fn(x.astype(int)) if fn is not np.union1d and
                   fn is not np.setdiff1d and fn is not np.intersect1d else fn(x, x))(V)
    assert vnp.setdiff1d(np.arange(5), [1, 2]).tolist() == [0, 3, 4]


def test_interp_gradient_in_fp_is_exact():
    xp_ = np.array([0.0, 1.0, 3.0])
    x = np.array([0.5, 2.0, 3.5])
    g = vg.grad(lambda fp: vnp.sum(vnp.interp(x, xp_, fp)))(np.array([1.0, 2.0, 4.0]))
    np.testing.assert_allclose(g, [0.5, 0.5 + 0.5, 0.5 + 1.0])
    central_diff_check(lambda fp: vnp.sum(vnp.interp(x, xp_, fp) ** 2),
                       [np.array([1.0, 2.0, 4.0])])


DTYPE_NAMES = [  # NumPy's own objects in vnp, as in jax.numpy
    "bool", "bool_", "float16", "float32", "float64", "longdouble", "half", "single", "double",
    "complex64", "complex128", "clongdouble", "csingle", "cdouble", "uint8", "uint16",
    "uint32", "uint64", "intp", "uintp", "object_", "str_", "bytes_", "void", "datetime64",
    "timedelta64", "generic", "number", "integer", "signedinteger", "unsignedinteger",
    "inexact", "floating", "complexfloating", "flexible", "character", "dtype", "finfo",
    "iinfo", "promote_types", "issubdtype", "isdtype", "mintypecode", "typename", "iterable",
    "sctypeDict", "typecodes", "ScalarType", "s_", "index_exp", "newaxis", "pi", "e", "inf",
    "nan", "euler_gamma"]


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_names_are_numpys_own(name):
    assert getattr(vnp, name) is getattr(np, name)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64"])
def test_int_types_cast_traced_arrays_and_stand_for_numpys(name):
    """vnp.int64(x) casts a traced x (autograd's and JAX's int types); everywhere else it is
    np.int64: in dtypes, comparisons, hashing, isinstance and np.issubdtype."""
    ours, theirs = getattr(vnp, name), getattr(np, name)
    assert np.dtype(ours) == theirs and np.zeros(2, ours).dtype == theirs
    assert ours == theirs and theirs == ours and hash(ours) == hash(theirs)
    assert {theirs: 1}[ours] == 1
    assert np.issubdtype(theirs, ours) and np.issubdtype(np.dtype(name), ours)
    assert not np.issubdtype(np.float64, ours)
    assert isinstance(theirs(3), ours) and not isinstance(3.0, ours)
    assert np.arange(3, dtype=theirs).dtype.type == ours
    assert type(ours(7)) is theirs and ours(7) == 7
    out = vg.jit(lambda x: ours(x * 2.5))(np.ones(3))
    assert out.dtype == theirs
    np.testing.assert_array_equal(out, np.full(3, 2))


def test_dtype_queries_take_traced_arrays():
    x32 = np.ones(3, np.float32)

    def f(x):
        t = vnp.common_type(x)
        assert t is np.float32 and np.common_type(x) is np.float32  # (also dispatched)
        assert vnp.min_scalar_type(x) == np.float32
        assert vnp.isscalar(x[0]) and not vnp.isscalar(x) and not vnp.isscalar(x[None, 0])
        assert vnp.result_type(x, 1.0) == np.float32 and vnp.can_cast(x, np.float64)
        assert vnp.promote_types(x.dtype, vnp.int64) == np.float64
        return x * vnp.finfo(t).eps + x[vnp.s_[::-1]]
    np.testing.assert_allclose(vg.jit(f)(x32), x32 * np.finfo(np.float32).eps + 1)
    with pytest.raises(vg.TraceError, match="min_scalar_type"):
        vg.jit(lambda x: x * vnp.min_scalar_type(x[0]).itemsize)(x32)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.longdouble, np.clongdouble])
def test_gradients_keep_the_argument_dtype(dt):
    """autograd's test_wrappers.py::test_dtypes."""
    y = np.random.default_rng(0).standard_normal((4, 4)).astype(dt)
    g = vg.grad(lambda x: vnp.real(vnp.sum(x ** 2)))(y)
    assert g.dtype == dt
    np.testing.assert_allclose(g.astype(np.complex128), 2 * y.astype(np.complex128),
                               rtol=1e-2 if dt == np.float16 else 1e-6)


@pytest.mark.parametrize("x", [V, V.astype(np.float32), np.arange(4), 1.5])
def test_i0_as_numpy(x):
    check(lambda xp, x: xp.i0(x), x, grad=np.asarray(x).dtype == np.float64,
          rtol=1e-6 if np.asarray(x).dtype == np.float32 else 1e-10)
    with pytest.raises(TypeError, match="complex"):
        vg.jit(vnp.i0)(V + 1j)


def test_linalg_cross_as_numpy():
    a, b = R.standard_normal((4, 3)), R.standard_normal((4, 3))
    check(lambda xp, a, b: xp.linalg.cross(a, b), a, b, argnums=(0, 1))
    check(lambda xp, a, b: xp.linalg.cross(a.T, b.T, axis=0), a, b, argnums=(0, 1))
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        vg.jit(vnp.linalg.cross)(a[:, :2], b[:, :2])
