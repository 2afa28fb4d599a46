"""np.maximum(x, c) / np.minimum(x, c), c a finite nonzero scalar constant, run as the clip
ufunc in the NumPy backend (backends/numpy/clamp.py): bit for bit NumPy's result (NaN,
infinities, zeros and ties of x), for float32 and float64, either operand order, computed
into a fresh buffer, a dead operand's buffer or a write's region; other forms keep the ufunc.
The gradient of np.clip keeps JAX's convention: 1/2 at a bound, 0 at NaN."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends.numpy.clamp import SMALL, Clamp, clamp
from vecgrad.ir import Aval, Const, Eqn, Params, Var

R = np.random.default_rng(5)


def _eqn(prim, a, b):
    ins = tuple(x if isinstance(x, Const) else Var(Aval(x.shape, x.dtype)) for x in (a, b))
    va, vb = (getattr(x, "value", x) for x in (a, b))
    out = Var(Aval(np.broadcast_shapes(np.shape(va), np.shape(vb)), np.result_type(va, vb)))
    return Eqn(prim, ins, Params(), out, None)


def _special(shape, dtype, c):
    x = R.standard_normal(shape).astype(dtype)
    x.ravel()[:9] = [-0.0, 0.0, np.nan, -np.inf, np.inf, c, -c, np.nextafter(c, 0), -np.nan]
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("prim", [P.maximum, P.minimum], ids=["maximum", "minimum"])
@pytest.mark.parametrize("c", [-0.5, 0.5, 2.0, 1e-30, -7.0])
def test_bits_equal_numpys_ufunc(dtype, prim, c):
    c = dtype(c)
    x = _special((40, 9), dtype, c)
    for k in (0, 1):
        a, b = (x, Const(np.array(c))) if k == 0 else (Const(np.array(c)), x)
        fn = clamp(_eqn(prim, a, b))
        assert isinstance(fn, Clamp)
        args = (x, c) if k == 0 else (c, x)
        want = prim.impl(*args)
        for got in (fn(*args), fn(*args, out=np.empty_like(x))):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_other_forms_keep_the_ufunc():
    x = R.standard_normal((40, 9))
    for c in (0.0, -0.0, np.inf, np.nan):  # (zeros: which zero a tie returns is NumPy's loop's)
        assert clamp(_eqn(P.maximum, x, Const(np.array(c)))) is None
    assert clamp(_eqn(P.maximum, x, Const(np.full((9,), 0.5)))) is None  # not a scalar
    assert clamp(_eqn(P.maximum, x, x)) is None  # no constant
    assert clamp(_eqn(P.maximum, x[:2, :2], Const(np.array(0.5)))) is None  # (under SMALL)
    assert clamp(_eqn(P.maximum, x.astype(np.int64), Const(np.array(3)))) is None
    assert clamp(_eqn(P.maximum, x.astype(np.float32), Const(np.array(0.5)))) is None  # f64
    assert clamp(_eqn(P.add, x, Const(np.array(0.5)))) is None
    assert SMALL <= x.size


def clip_sum(x, w):
    return vnp.sum(vnp.clip(x * w, -0.5, 0.5) ** 2)


def bounds_into_buffers(x):
    y = vnp.minimum(x * 2.0, 1.5)  # into x * 2's dead buffer
    buf = vnp.zeros((x.shape[0] + 4, x.shape[1]))
    buf[2:-2] = vnp.maximum(x, -0.25)  # into the write's region
    return y, buf, vnp.maximum(0.75, y)


def numpy_bounds(x):
    y = np.minimum(x * 2.0, 1.5)
    buf = np.zeros((x.shape[0] + 4, x.shape[1]))
    buf[2:-2] = np.maximum(x, -0.25)
    return y, buf, np.maximum(0.75, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_programs_equal_numpy_bit_for_bit(dtype):
    x = _special((30, 12), dtype, dtype(0.75))
    for got, want in zip(vg.jit(bounds_into_buffers)(x), numpy_bounds(x)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    w = R.standard_normal(12).astype(dtype)
    got, want = vg.jit(lambda x, w: vnp.clip(x * w, -0.5, 0.5))(x, w), \
        np.clip(x * w, -0.5, 0.5)
    np.testing.assert_array_equal(got, want)


C = R.standard_normal((20, 16))


def clip_lin(x, w):
    return vnp.sum(vnp.clip(x * w, -0.5, 0.5) * C)


def test_clip_gradient_splits_ties_and_is_zero_at_nan():
    x = R.standard_normal((20, 16))
    x.ravel()[:5] = [-0.5, 0.5, np.nan, -3.0, 0.25]
    gx = vg.grad(clip_lin)(x, np.ones(16))
    share = np.where((x > -0.5) & (x < 0.5), 1.0, np.where((x == -0.5) | (x == 0.5), 0.5, 0.0))
    np.testing.assert_array_equal(gx, C * share)
    assert gx.ravel()[2] == 0.0 and gx.ravel()[0] == 0.5 * C.ravel()[0]
    x = R.standard_normal((20, 16))
    vg.check_grads(clip_sum, (x, R.standard_normal(16)), argnums=(0, 1), rtol=1e-6,
                   atol=1e-8)
    vg.check_grads(clip_lin, (x, R.standard_normal(16)), argnums=(0, 1), rtol=1e-6,
                   atol=1e-8)
