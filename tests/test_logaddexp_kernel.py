"""np.logaddexp run as NumPy's SIMD exp and log1p loops in the NumPy backend
(backends/numpy/logaddexp.py): NumPy's result to rounding (a few units in the last place of
the larger operand), the same at infinities, NaN and ties, for float32 and float64, against a
scalar constant on either side or between two arrays (broadcast too), computed into a fresh
buffer or a dead operand's; other forms keep the ufunc. Programs through it: values equal
NumPy's, gradients equal central differences."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends.numpy.logaddexp import PAIR_SMALL, SMALL, LogAddExp, logaddexp
from vecgrad.ir import Aval, Const, Eqn, Params, Var

R = np.random.default_rng(11)
SPECIAL = [-0.0, 0.0, np.nan, -np.inf, np.inf, 800.0, -800.0, 1e308, -1e308, 5e-324, 40.0,
           -40.0]


def _eqn(a, b):
    ins = tuple(x if isinstance(x, Const) else Var(Aval(x.shape, x.dtype)) for x in (a, b))
    va, vb = (getattr(x, "value", x) for x in (a, b))
    out = Var(Aval(np.broadcast_shapes(np.shape(va), np.shape(vb)), np.result_type(va, vb)))
    return Eqn(P.logaddexp, ins, Params(), out, None)


def _special(shape, dtype, scale=6.0):
    x = (scale * R.standard_normal(shape)).astype(dtype)
    with np.errstate(over="ignore"):
        x.ravel()[:len(SPECIAL)] = np.array(SPECIAL).astype(dtype)
    return x


def _close(got, want, *operands):
    """Equal to rounding: the same non-finite entries, each finite one within a few units in
    the last place of the larger operand's magnitude (the scale of the terms it sums)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    fin = np.isfinite(want)
    np.testing.assert_array_equal(got[~fin], want[~fin])
    scale = np.maximum(np.abs(want), 1.0)
    for a in operands:
        scale = np.maximum(scale, np.abs(np.broadcast_to(a, want.shape)))
    err = np.abs(got[fin].astype(np.float64) - want[fin])
    assert np.all(err <= 8 * np.finfo(want.dtype).eps * scale[fin]), np.max(err / scale[fin])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("c", [0.0, 1.5, -3.0, 1e-30, 300.0])
def test_against_a_constant_equals_numpys_ufunc(dtype, c):
    c = dtype(c)
    x = _special((40, 30), dtype)
    for k in (0, 1):
        a, b = (x, Const(np.array(c))) if k == 0 else (Const(np.array(c)), x)
        fn = logaddexp(_eqn(a, b))
        assert isinstance(fn, LogAddExp)
        args = (x, c) if k == 0 else (c, x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.logaddexp(*args)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (no warning where NumPy's loop gives none)
            got = fn(*args)
        _close(got, want, x, c)
        xc = x.copy()
        _close(fn(*((xc, c) if k == 0 else (c, xc)), out=xc), want, x, c)  # (into x's own buffer)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_arrays_equal_numpys_ufunc(dtype):
    x, y = _special((40, 30), dtype), _special((40, 30), dtype)
    y[:3] = x[:3]  # (ties, the same infinities among them)
    y.ravel()[:5] = x.ravel()[:5]
    fn = logaddexp(_eqn(x, y))
    assert isinstance(fn, LogAddExp)
    with np.errstate(all="ignore"):
        want = np.logaddexp(x, y)
    _close(fn(x, y), want, x, y)
    _close(fn(x, y, out=x.copy()), want, x, y)
    col, row = x[:, :1].copy(), y[:1].copy()  # (broadcast)
    with np.errstate(all="ignore"):
        _close(logaddexp(_eqn(col, row))(col, row), np.logaddexp(col, row), col, row)


def test_other_forms_keep_the_ufunc():
    x = R.standard_normal((40, 30))
    for c in (np.inf, -np.inf, np.nan):  # (not finite)
        assert logaddexp(_eqn(x, Const(np.array(c)))) is None
    assert logaddexp(_eqn(x, Const(np.full((30,), 0.5)))) is None  # not a scalar
    assert logaddexp(_eqn(x[:2, :2], Const(np.array(0.5)))) is None  # (under SMALL)
    assert logaddexp(_eqn(x.astype(np.float32), Const(np.array(0.5)))) is None  # f64 result
    assert logaddexp(_eqn(x.astype(np.float32), x)) is None  # mixed dtypes
    assert logaddexp(_eqn(x.astype(np.int64), x.astype(np.int64))) is None
    assert logaddexp(_eqn(x[:20], x[20:])) is None  # (two arrays: under PAIR_SMALL)
    assert SMALL <= x[:20].size < PAIR_SMALL <= x.size


def pair_losses(w, X, y):
    m = y * (X @ w)
    return vnp.sum(vnp.logaddexp(0.0, -m)) + vnp.sum(vnp.logaddexp(m, 0.5 * m) ** 2)


def per_sample(w, X, y):
    total = 0.0
    for x, t in zip(X, y):
        total += vnp.logaddexp(0.0, -t * (x @ w)) + 0.1 * vnp.logaddexp(x @ w, 1.0)
    return total


def log_space_rows(A, B):
    return vnp.sum(vnp.logaddexp(A, B) * A)


@pytest.mark.parametrize("f,make,argnums", [
    (pair_losses, lambda: (R.standard_normal(8), R.standard_normal((600, 8)),
                           np.sign(R.standard_normal(600))), (0, 1)),
    (per_sample, lambda: (R.standard_normal(5), R.standard_normal((600, 5)),
                          np.sign(R.standard_normal(600))), (0, 1)),
    (log_space_rows, lambda: (R.standard_normal((40, 30)), R.standard_normal((40, 30))),
     (0, 1)),
], ids=["pair_losses", "per_sample", "log_space_rows"])
def test_programs_equal_numpy_and_central_differences(f, make, argnums):
    args = make()
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)
    entry, _ = vg.grad(f, argnums=argnums).entry(*args)
    assert any(isinstance(v, LogAddExp) for v in entry.compiled.fn.__globals__.values())
    vg.check_grads(f, args, argnums=argnums, rtol=1e-6, atol=1e-8)


def test_softplus_at_extremes_through_the_kernel():
    # finite where exp(z) overflows, and its gradient logistic(z) * z + softplus(z) too
    z = np.linspace(-900, 900, 601)
    val, g = vg.value_and_grad(lambda z: vnp.sum(vnp.logaddexp(0.0, z) * z))(z)
    np.testing.assert_allclose(val, np.sum(np.logaddexp(0.0, z) * z), rtol=1e-14)
    sig = np.where(z >= 0, 1 / (1 + np.exp(-np.abs(z))), np.exp(-np.abs(z)) /
                   (1 + np.exp(-np.abs(z))))
    np.testing.assert_allclose(g, np.logaddexp(0.0, z) + z * sig, rtol=1e-12, atol=1e-300)
    assert np.isfinite(g).all()
    inf = np.array([np.inf, -np.inf, np.nan] + [0.0] * SMALL)
    got = vg.jit(lambda z: vnp.logaddexp(0.0, z))(inf)
    np.testing.assert_array_equal(got[:4], [np.inf, 0.0, np.nan, np.log(2.0)])
