"""The elementwise functions of `vecgrad.numpy` and their ufunc methods against NumPy: values
and dtypes (float64, float32, ints, Python scalars), gradients against central differences,
the `np.<ufunc>` dispatch, `out=`, and `reduce` / `accumulate` / `outer` / `at`."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check
from test_numpy_api import assert_same, check

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(7)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))
UNIT = R.uniform(-0.9, 0.9, (3, 4))
POS = R.uniform(0.5, 2.0, (3, 4))
BIG = R.uniform(1.2, 3.0, (3, 4))
AWAY = R.choice([-1.0, 1.0], (3, 4)) * R.uniform(0.5, 2.0, (3, 4))
FRAC = R.integers(-4, 4, (3, 4)) + R.uniform(0.1, 0.4, (3, 4)) * R.choice([1, 3], (3, 4))
INTS = R.integers(-6, 7, (3, 4))

UNARY = [("tan", UNIT), ("sinh", A), ("cosh", A), ("arcsin", UNIT), ("arccos", UNIT),
         ("arctan", A), ("arcsinh", A), ("arccosh", BIG), ("arctanh", UNIT), ("log2", POS),
         ("log10", POS), ("exp2", A), ("cbrt", AWAY), ("reciprocal", AWAY), ("fabs", AWAY),
         ("sinc", A), ("deg2rad", A), ("rad2deg", A), ("radians", A), ("degrees", A),
         ("nan_to_num", A)]
NOGRAD_UNARY = [("floor", FRAC), ("ceil", FRAC), ("trunc", FRAC), ("rint", FRAC),
                ("fix", FRAC), ("round", FRAC), ("around", FRAC), ("isnan", A), ("isinf", A),
                ("isfinite", A), ("signbit", A), ("isposinf", A), ("isneginf", A)]


@pytest.mark.parametrize("name,x", UNARY, ids=[n for n, _ in UNARY])
def test_unary_values_and_gradients(name, x):
    check(lambda xp, x: getattr(xp, name)(x), x)
    check(lambda xp, x: getattr(np, name)(x), x)  # np.<name> on a tracer dispatches


@pytest.mark.parametrize("name,x", NOGRAD_UNARY, ids=[n for n, _ in NOGRAD_UNARY])
def test_zero_gradient_functions(name, x):
    check(lambda xp, x: getattr(xp, name)(x), x, grad=False)
    g = vg.grad(lambda x: vnp.sum(vnp.where(getattr(vnp, name)(x), 1.0, 2.0) * x
                                  if getattr(np, name)(x).dtype == bool
                                  else getattr(vnp, name)(x) * x))(x)
    want = np.where(getattr(np, name)(x), 1.0, 2.0) if getattr(np, name)(x).dtype == bool \
        else getattr(np, name)(x)  # d/dx (f(x) x) = f(x): f contributes nothing
    np.testing.assert_allclose(g, want)


@pytest.mark.parametrize("name", ["tan", "sinh", "arctan", "exp2", "cbrt", "floor", "rint",
                                  "sinc", "deg2rad", "log2", "isnan", "signbit"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.bool_])
def test_unary_dtypes_follow_numpy(name, dtype):
    x = (np.abs(A) * 3 + 1).astype(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    assert_same(vg.jit(getattr(vnp, name))(x), want, rtol=1e-6)


BINARY = [("logaddexp", A, B), ("logaddexp2", A, B), ("arctan2", A, AWAY), ("hypot", AWAY, B),
          ("remainder", A, R.uniform(0.7, 0.9, (3, 4))), ("mod", A * 3, AWAY),
          ("fmod", A * 3, AWAY), ("copysign", AWAY, AWAY[::-1]), ("fmax", A, B),
          ("fmin", A, B), ("float_power", POS, A), ("ldexp", A, INTS)]


@pytest.mark.parametrize("name,x,y", BINARY, ids=[n for n, *_ in BINARY])
def test_binary_values_and_gradients(name, x, y):
    argnums = (0,) if y.dtype.kind == "i" else (0, 1)
    check(lambda xp, x, y: getattr(xp, name)(x, y), x, y, argnums=argnums)
    check(lambda xp, x, y: getattr(np, name)(x, y[0]), x, y, argnums=argnums)  # broadcast


@pytest.mark.parametrize("name", ["floor_divide", "logical_xor", "bitwise_and", "bitwise_or",
                                  "bitwise_xor", "left_shift", "right_shift", "heaviside"])
def test_binary_without_gradient(name):
    x, y = (INTS, np.abs(INTS) % 4) if "shift" in name or "bitwise" in name else (A * 3, AWAY)
    check(lambda xp, x, y: getattr(xp, name)(x, y), x, y, grad=False)


def test_remainder_gradient_in_both_arguments():
    x, y = np.array([5.5, -5.5, 7.0]), np.array([2.0, 2.0, -3.0])
    gx, gy = vg.grad(lambda x, y: vnp.sum(x % y), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gy, -np.floor_divide(x, y))
    gx, gy = vg.grad(lambda x, y: vnp.sum(vnp.fmod(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gy, -np.trunc(x / y))


def test_weak_python_scalars_keep_float32():
    x = A.astype(np.float32)
    for fn in [lambda x: vnp.arctan2(x, 2.0), lambda x: vnp.hypot(1, x),
               lambda x: vnp.logaddexp(x, 0.5), lambda x: x % 0.7, lambda x: x // 2,
               lambda x: vnp.copysign(1.0, x), lambda x: vnp.round(x, 2),
               lambda x: vnp.deg2rad(x)]:
        want = fn(x)  # eager: NumPy's own promotion
        got = vg.jit(fn)(x)
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_round_decimals_and_sinc_gradient_at_zero():
    check(lambda xp, x: xp.round(x * 100, 1) + xp.around(x, -1), FRAC, grad=False)
    np.testing.assert_allclose(vg.grad(lambda x: vnp.sum(vnp.sinc(x)))(np.zeros(3)), 0.0)


def test_nan_to_num_gradient_only_where_finite():
    y = np.array([0.0, np.nan, np.inf, -np.inf])

    def f(x):
        return vnp.sum(vnp.sin(vnp.nan_to_num(x + y, nan=2.0, posinf=5.0)))
    x = R.standard_normal(4)
    np.testing.assert_allclose(vg.jit(f)(x), np.sum(np.sin(np.nan_to_num(x + y, nan=2.0,
                                                                          posinf=5.0))))
    np.testing.assert_allclose(vg.grad(f)(x), [np.cos(x[0]), 0, 0, 0])


def test_fmax_ignores_nan_in_value_and_gradient():
    x, y = np.array([1.0, np.nan, 2.0, 3.0]), np.array([np.nan, 4.0, 2.0, 1.0])
    out = vg.jit(vnp.fmax)(x, y)
    np.testing.assert_array_equal(out, np.fmax(x, y))
    gx, gy = vg.grad(lambda x, y: vnp.sum(vnp.fmax(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.5, 1.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 0.5, 0.0])


@pytest.mark.parametrize("f", [np.logaddexp, np.logaddexp2])
def test_logaddexp_gradient_at_infinities_is_each_operands_share(f):
    """log-space programs meet logaddexp(-inf, -inf) at masked entries: each operand's share
    of the sum, 1 where it is the result (also for each of two equal infinities, as JAX),
    never inf - inf = nan."""
    inf = np.inf
    x = np.array([-inf, inf, inf, 1.0, -inf, 2.0, 50.0, 0.3])
    y = np.array([-inf, inf, 1.0, -inf, 3.0, 2.0, -50.0, -1.2])
    with np.errstate(invalid="ignore"):  # (inf - inf at the two ties)
        _, pullback = vg.vjp(f, x, y)
        gx, gy = pullback(np.ones(8))
    fin = slice(5, None)  # finite: b^(x - ans) as NumPy computes it
    pow_ = np.exp if f is np.logaddexp else np.exp2
    np.testing.assert_allclose(gx[fin], pow_(x[fin] - f(x, y)[fin]), rtol=1e-14)
    np.testing.assert_allclose(gy[fin], pow_(y[fin] - f(x, y)[fin]), rtol=1e-14)
    np.testing.assert_array_equal(gx[:5], [1.0, 1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(gy[:5], [1.0, 1.0, 0.0, 0.0, 1.0])


def test_divmod_modf_frexp():
    check(lambda xp, x, y: divmod(x, y), A * 3, AWAY, grad=False)
    check(lambda xp, x, y: xp.divmod(x, y), A * 3, AWAY, grad=False)
    check(lambda xp, x, y: np.divmod(x, y)[1], A * 3, AWAY, argnums=(0, 1))
    check(lambda xp, x: xp.modf(x * 3)[0], A)
    check(lambda xp, x: xp.frexp(x)[0], AWAY)
    check(lambda xp, x: np.frexp(x), AWAY, grad=False)


# -------------------------------------------------------------------------------- operators

@pytest.mark.parametrize("op", [
    lambda x, y: x % y, lambda x, y: x // y, lambda x, y: 3.5 % y, lambda x, y: 7 // y,
    lambda x, y: divmod(x, 2.0)[0], lambda x, y: divmod(3.0, y)[1],
], ids=["mod", "floordiv", "rmod", "rfloordiv", "divmod", "rdivmod"])
def test_arithmetic_operators(op):
    check(lambda xp, x, y: op(x, y), A * 3, AWAY, grad=False)


def test_mod_operator_gradient():
    check(lambda xp, x, y: x % y + 1.5 % y, A * 3, AWAY, argnums=(0, 1))


@pytest.mark.parametrize("op", [
    lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y, lambda x, y: ~x,
    lambda x, y: (x > 0) & (y < 0), lambda x, y: ~(x > 0) | (y == 2), lambda x, y: x << 2,
    lambda x, y: x >> (y % 3), lambda x, y: 5 & y, lambda x, y: True ^ (x > 1),
], ids=["and", "or", "xor", "invert", "bool-and", "bool-or", "lshift", "rshift", "rand",
        "rxor"])
def test_bitwise_operators(op):
    check(lambda xp, x, y: op(x, y), INTS, np.abs(INTS), grad=False)


def test_inplace_operators():
    def f(xp, x, y):
        z, i = x * 1.0, (y * 1).astype(np.int64)
        z %= 1.5
        z **= 2
        z //= 0.25
        i &= 6
        i |= 1
        i ^= 3
        i <<= 1
        i >>= 1
        m = x[:, :3] * 1.0
        m @= y.T.astype(np.float64)
        return z, i, m
    check(f, A, INTS[:, :3].T, grad=False)


def test_bitwise_on_floats_is_a_type_error():
    with pytest.raises(TypeError):
        vg.jit(lambda x: x & x)(A)


# ---------------------------------------------------------------------- ufunc methods

@pytest.mark.parametrize("fn", [
    lambda m, x: m.add.reduce(x), lambda m, x: m.add.reduce(x, axis=1),
    lambda m, x: m.multiply.reduce(x, axis=(0, 2)), lambda m, x: m.maximum.reduce(x, 1),
    lambda m, x: m.minimum.reduce(x, axis=None, keepdims=True),
    lambda m, x: m.logical_and.reduce(x > 0, 2), lambda m, x: m.logical_or.reduce(x > 1),
    lambda m, x: m.add.accumulate(x), lambda m, x: m.add.accumulate(x, axis=2),
    lambda m, x: m.multiply.accumulate(x, 1), lambda m, x: m.maximum.accumulate(x, 1),
    lambda m, x: m.minimum.accumulate(x, axis=2), lambda m, x: m.logical_or.accumulate(x > 1),
    lambda m, x: m.multiply.outer(x[0, 0], x[1, :, 0]), lambda m, x: m.add.outer(x[0], x[1, 0]),
    lambda m, x: m.subtract.outer(x[0, 0], x[1]), lambda m, x: m.maximum.outer(x[0, 0], x[1, 1]),
    lambda m, x: m.logaddexp.reduce(x, axis=0), lambda m, x: m.fmax.reduce(x, axis=2),
    lambda m, x: m.greater.outer(x[0, 0], x[1, 1]),
], ids=lambda f: None)
@pytest.mark.parametrize("mod", ["np", "vnp"])
def test_ufunc_methods(fn, mod):
    T = R.standard_normal((2, 3, 4))
    m = np if mod == "np" else None
    want = fn(np, T)
    got = vg.jit(lambda x: fn(m or vnp, x))(T)
    assert_same(got, want, rtol=1e-10)
    if want.dtype.kind == "f":
        w = R.standard_normal(want.shape)
        central_diff_check(lambda x: vnp.sum(fn(m or vnp, x) * w), [T])


def test_add_at_accumulates_repeated_indices():
    idx = np.array([0, 2, 2, 1, 2])

    def f(xp, x):
        buf = xp.zeros((3, 4))
        np.add.at(buf, idx, x[:5 % 3 + 3, :] if False else x[[0, 1, 2, 0, 1]])
        xp.add.at(buf, (idx, 1), x[0, 0])
        np.subtract.at(buf, (slice(None), [3, 3]), x[:, :2])
        return buf
    check(f, A)


def test_add_at_matches_numpy_and_buffered_add_does_not_accumulate():
    idx = np.array([1, 1, 3])

    def f(x):
        buf = vnp.zeros(5)
        np.add.at(buf, idx, x)
        return buf
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_array_equal(vg.jit(f)(x), [0, 3, 0, 4, 0])
    np.testing.assert_array_equal(vg.grad(lambda x: vnp.sum(f(x) * np.arange(5.0)))(x),
                                  [1, 1, 3])

    def g(x):  # buffered: at a repeated position the last write wins, as in NumPy
        buf = vnp.zeros(5)
        buf[idx] += x
        buf[idx] = buf[idx] * 2.0
        return buf
    want = np.zeros(5)
    want[idx] += x
    want[idx] = want[idx] * 2.0
    np.testing.assert_array_equal(vg.jit(g)(x), want)
    np.testing.assert_array_equal(vg.grad(lambda x: vnp.sum(g(x) * np.arange(5.0)))(x),
                                  [0, 2, 6])


def test_multiply_at_unique_and_repeated():
    def f(x):
        buf = vnp.ones(4)
        np.multiply.at(buf, [0, 2], x[:2])
        np.negative.at(buf, [1])
        return buf
    x = np.array([2.0, 3.0, 5.0])
    want = np.ones(4)
    np.multiply.at(want, [0, 2], x[:2])
    np.negative.at(want, [1])
    np.testing.assert_array_equal(vg.jit(f)(x), want)

    def rep(x):  # repeated positions multiply in, as NumPy's unbuffered ufunc.at
        buf = vnp.ones(4)
        np.multiply.at(buf, [0, 0, 3], x)
        return buf
    want = np.ones(4)
    np.multiply.at(want, [0, 0, 3], x)
    np.testing.assert_array_equal(vg.jit(rep)(x), want)


def test_ufunc_out_and_dtype_keywords():
    def f(xp, x):
        buf = xp.zeros((3, 4))
        np.exp(x, out=buf)
        r = np.add(x, 1.0, dtype=np.float32)
        return buf * 1.0, r
    check(f, A, rtol=1e-6, grad=False)


def test_ufunc_objects_have_numpy_attributes():
    assert vnp.add.nin == 2 and vnp.add.nout == 1 and vnp.exp.nin == 1
    assert vnp.divmod.nout == 2 and vnp.add.__name__ == "add"
    assert vnp.true_divide is vnp.divide and vnp.mod is vnp.remainder
