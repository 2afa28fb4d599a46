"""np.where(c, 0.0, x) and np.where(c, x, 0.0) run as a bit mask in the NumPy backend
(backends/numpy/select.py): bit for bit np.where's result (NaN, infinities, -0.0 of x kept),
for float32 and float64; other selections keep np.where."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends.numpy.select import zero_select
from vecgrad.ir import Aval, Const, Eqn, Params, Var

R = np.random.default_rng(2)


def _eqn(c, a, b):
    ins = tuple(x if isinstance(x, Const) else Var(Aval(x.shape, x.dtype)) for x in (c, a, b))
    out = Var(Aval(np.broadcast_shapes(c.shape, np.shape(getattr(a, "value", a)),
                                       np.shape(getattr(b, "value", b))),
                   np.result_type(getattr(a, "value", a), getattr(b, "value", b))))
    return Eqn(P.where, ins, Params(), out, None)


def _check_bits(c, x, kept, zero_first):
    """zero_select's run of where(c, 0, x) or where(c, x, 0) (x given to the equation as
    `kept`) equals np.where's bit for bit."""
    z = Const(np.zeros((), x.dtype))
    fn = zero_select(_eqn(c, z, kept) if zero_first else _eqn(c, kept, z))
    assert fn is not None
    got = fn(c, z.value, x) if zero_first else fn(c, x, z.value)
    want = np.where(c, z.value, x) if zero_first else np.where(c, x, z.value)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("zero_first", [True, False])
def test_bits_equal_numpys_where(dtype, zero_first):
    x = R.standard_normal((50, 7)).astype(dtype)
    x.ravel()[:6] = [-0.0, 0.0, np.nan, -np.inf, np.inf, -np.nan]
    _check_bits(R.random((50, 7)) < 0.5, x, x, zero_first)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kept_shape", [(), (1,), (7,), (1, 7), (50, 1)])
def test_a_kept_branch_that_broadcasts(dtype, kept_shape):
    x = R.standard_normal(kept_shape).astype(dtype)
    if x.size:
        x.ravel()[:1] = -0.0
    for zero_first in (True, False):
        _check_bits(R.random((50, 7)) < 0.5, x, Const(x), zero_first)


def test_other_selections_keep_np_where():
    x = R.standard_normal(5)
    c = x < 0
    assert zero_select(_eqn(c, Const(np.array(-0.0)), x)) is None  # (-0.0's sign bit)
    assert zero_select(_eqn(c, Const(np.array(2.0)), x)) is None
    assert zero_select(_eqn(c, Const(np.zeros((), np.float16)), x.astype(np.float16))) is None
    assert zero_select(_eqn(np.array(True), Const(np.array(0.0)), x)) is None  # (broadcast)
    assert zero_select(_eqn(c, Const(np.array(0.0)), np.ones(5, np.float32))) is None  # dtype
    assert zero_select(_eqn(c[:, None], Const(np.array(0.0)), np.ones((5, 2)))) is None


def masked(x, w):
    y = x * w
    y[y < 0] = 0.0
    y[x > 2] = 2.0
    return np.sum(y ** 2)


def test_masked_writes_equal_numpy_and_their_gradient_is_right():
    x, w = R.standard_normal((30, 4)) * 1.5, R.standard_normal(4)
    x[0, 0] = -0.0
    np.testing.assert_array_equal(vg.jit(lambda x, w: vnp.where(x * w < 0, 0.0, x * w))(x, w),
                                  np.where(x * w < 0, 0.0, x * w))
    np.testing.assert_allclose(vg.jit(masked)(x, w), masked(x.copy(), w), rtol=1e-14)
    vg.check_grads(masked, (x, w), argnums=(0, 1), rtol=1e-6, atol=1e-8)
