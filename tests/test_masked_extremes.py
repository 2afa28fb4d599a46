"""np.max / np.min of x[mask] without initial= (a traced boolean mask): NumPy's values, dtypes
and gradients where something is selected, NumPy's ValueError naming the line where nothing is
(checked when the compiled code runs: P.nonempty), also per sample in loops (batched =
unbatched); `Y[m, 1:] = v`, `Y[m, 0] = v` (basic indices after the mask) and `X[..., m]`
(an Ellipsis before or after the mask) read and written as NumPy does."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(27)
x0, y0 = R.standard_normal(9), R.standard_normal(9)
X0, T0 = R.standard_normal((6, 4)), R.standard_normal((3, 4, 5))
I8 = R.integers(-3, 4, 9).astype(np.int8)
F32 = R.standard_normal(9).astype(np.float32)

# (each a function of x, y (9,), X (6, 4), T (3, 4, 5), i8 (9,) int8, f32 (9,) float32)
EXTREMES = [
    "np.max(x[x > 0])", "np.min(x[x > 0])", "x[y > 0].max()", "x[y < 0].min()",
    "np.amax(x[x > -1])", "np.amin(x[x < 1])", "np.max(x[x > 0] ** 2 - y[x > 0])",
    "np.max(np.exp(x[y > 0]))", "np.max(X[X[:, 0] > 0], axis=0)", "X[X[:, 1] < 0].min(axis=0)",
    "np.max(X[X[:, 0] > 0])", "np.max(X[X > 0])", "np.max(X[:, x[:4] > 0], axis=1)",
    "np.min(X[:, x[:4] > -0.5])", "np.max(X[X[:, 0] > 0], axis=(0, 1))",
    "np.max(x[x > 0], keepdims=True)", "np.max(X[X[:, 0] > 0], axis=0, keepdims=True)",
    "np.max(X[X[:, 0] > 0, 1:], axis=0)", "np.min(X[X[:, 2] > 0, 0])", "np.max(i8[i8 > 0])",
    "np.min(i8[x > 0])", "np.max(f32[f32 > 0])", "np.max((x > 1)[y > 0])",
    "np.min((x > -2)[y > 0])", "np.max(T[:, T[0, :, 0] > 0], axis=(0, 1))",
    "np.max(x[x > 0]) - np.min(x[x > 0])", "np.max(x[(x > 0) & (y > 0)], initial=-3.0)",
    "np.max(X[..., X[0] > 0], axis=-1)", "np.max(np.abs(x[x < 0.5]))",
]
EMPTY = ["np.max(x[x > 9])", "x[y > 9].min()", "np.max(X[X[:, 0] > 9], axis=0)",
         "np.min(X[:, x[:4] > 9], axis=1)", "np.max(i8[i8 > 9])"]
SURE = "np.max(x[x > 0])"  # (x0 has positive entries; an all-negative call selects nothing)


def _fn(expr):
    return eval(f"lambda x, y, X, T, i8, f32: {expr}", {"np": np})


def _args(x=x0):
    return x, y0, X0, T0, I8, F32


@pytest.mark.parametrize("expr", EXTREMES)
def test_max_and_min_of_a_selection_are_numpys(expr):
    f = _fn(expr)
    assert_same(vg.jit(f)(*_args()), f(*_args()), rtol=1e-13)


@pytest.mark.parametrize("expr", [e for e in EXTREMES if "i8" not in e and "f32" not in e
                                  and ">" not in e.split("[")[0]])
def test_their_gradients_match_central_differences(expr):
    f = _fn(expr)

    def loss(x, y, X, T):
        return vnp.sum(f(x, y, X, T, I8, F32) * 1.5)
    vg.check_grads(loss, (x0, y0, X0, T0), argnums=(0, 1, 2, 3), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("expr", EMPTY)
def test_an_empty_selection_raises_numpys_error_naming_the_line(expr):
    f = _fn(expr)
    with pytest.raises(ValueError) as want:
        f(*_args())
    with pytest.raises(ValueError, match="zero-size array to reduction operation") as got:
        vg.jit(f)(*_args())
    assert str(want.value) in str(got.value)
    assert "(np.max of x[mask] at <string>:1)" in str(got.value) or \
        "(np.min of x[mask] at <string>:1)" in str(got.value)


def test_the_check_runs_each_call_of_the_compiled_function():
    """The emptiness is the values', not the trace's: a call whose mask selects nothing raises,
    the calls around it compute NumPy's values."""
    f = vg.jit(_fn(SURE))
    for x in (x0, -np.abs(x0), x0[::-1], np.full(9, -1.0), np.abs(x0)):
        if np.any(x > 0):
            assert_same(f(*_args(x)), _fn(SURE)(*_args(x)), rtol=0)
        else:
            with pytest.raises(ValueError, match="reduction operation maximum"):
                f(*_args(x))
    g = vg.grad(lambda x: np.max(x[x > 0]) * 2.0)
    np.testing.assert_array_equal(g(x0), np.where(x0 == x0[x0 > 0].max(), 2.0, 0.0))
    with pytest.raises(ValueError, match="reduction operation maximum"):
        g(-np.abs(x0))


def _loop(xp, X, Y):
    out = xp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = np.max(X[i][Y[i] > 0]) - np.min(X[i][X[i] > -1.0] ** 2)
    return out


def _comprehension(xp, X, Y):
    return np.array([r[r > s.mean()].max() * s[r > 0].min() for r, s in zip(X, Y)])


def _rows(xp, X, Y):
    tot = 0.0
    for i in range(X.shape[0]):
        M = X[i].reshape(3, 4)
        tot = tot + np.sum(np.max(M[M[:, 0] > -2.0], axis=0) * Y[i, :4])
    return tot


@pytest.mark.parametrize("f", [_loop, _comprehension, _rows])
def test_per_sample_extremes_in_loops_batch_to_numpy(f):
    X, Y = R.standard_normal((7, 12)), R.standard_normal((7, 12))
    X[:, :2], Y[:, :2] = [1.5, 2.5], [1.0, 1.0]  # (every sample selects something)
    assert_same(vg.jit(lambda a, b: f(vnp, a, b))(X, Y), f(np, X, Y), rtol=1e-12)

    def flat(a, b):
        return vnp.sum(f(vnp, a, b) * 1.5)
    vg.check_grads(flat, (X, Y), argnums=(0, 1), rtol=1e-6, atol=1e-8)
    e, leaves = entry(flat, (X, Y), argnums=(0, 1))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    assert any(q.prim is P.nonempty for q in e.stages["final"].eqns)
    Y2 = Y.copy()
    Y2[3] = -1.0  # (one sample selects nothing: NumPy raises, so does the batched code)
    X2 = X.copy()
    X2[3] = -5.0
    with pytest.raises(ValueError):
        f(np, X2, Y2)
    with pytest.raises(ValueError, match="zero-size array to reduction operation"):
        vg.jit(lambda a, b: f(vnp, a, b))(X2, Y2)


def test_the_check_primitive_and_its_batching_rule():
    m = np.array([[True, False], [True, False]])  # (each row selects; column 1 does not)
    for axes in ((1,), (0, 1)):
        np.testing.assert_array_equal(P.nonempty.impl(m, axes=axes, error="ValueError",
                                                      msg=""), m)
    with pytest.raises(ZeroDivisionError, match="^no identity here$"):
        P.nonempty.impl(m, axes=(0,), error="ZeroDivisionError", msg="no identity here")
    with pytest.raises(TypeError, match="every entry"):
        P.nonempty.impl(m, axes=(), error="TypeError", msg="every entry")
    b = vg.jit(lambda M: P.nonempty.batch(2, (True,), M, axes=(1,), error="ValueError",
                                          msg=""))
    np.testing.assert_array_equal(b(np.stack([m, m])), np.stack([m, m]))
    with pytest.raises(ValueError):
        b(np.stack([m, m.T]))


# ------------------------------------------------------------------ writes and Ellipsis keys
WRITES = [
    "Y[X[:, 0] > 0, 1:] = 0.0", "Y[X[:, 0] > 0, 1:] = X[0, 1:] * 2", "Y[X[:, 1] < 0, 0] = -1.0",
    "Y[X[:, 0] > 0, 1:] *= 3.0", "Y[X[:, 0] > 0, 1:] = X[X[:, 0] > 0, 1:] ** 2",
    "Y[X[:, 0] > 0, ::2] += 1.0", "Y[X[:, 0] > 0, 2] = X[X[:, 0] > 0, 3]",
    "Y[..., X[0] > 0] = 0.5", "Y[..., X[0] > 0] *= X[:, :1]", "Y[X[:, 0] > 0, ...] = X[1]",
    "Y[X[:, 0] > 0, 1:-1] = np.arange(2.0)", "Y[X[:, 0] > 9, 1:] = 7.0",
    "Y[X[:, 2] > 0, -1] -= X[X[:, 2] > 0, 0]",
]
READS = [
    "np.sum(X[..., X[0] > 0], axis=-1)", "(X[..., X[0] > 0] * 2).sum()",
    "np.mean(T[..., T[0, 0] > 0], axis=2)", "np.sum(T[..., T[0] > 0], axis=-1)",
    "np.sum(X[X[:, 0] > 0, ...], axis=0)", "np.sum(T[..., T[0, :, 1] > 0, :] ** 2)",
    "np.sum(T[T[:, 0, 0] > 0, ..., 1:])",
]


def _write(stmt):
    ns = {"np": np}
    exec(f"def f(X, T):\n    Y = X * 1.0\n    {stmt}\n    return Y", ns)  # noqa: S102
    return ns["f"]


@pytest.mark.parametrize("stmt", WRITES)
def test_writes_through_a_mask_and_basic_indices_are_numpys(stmt):
    f = _write(stmt)
    assert_same(vg.jit(f)(X0, T0), f(X0.copy(), T0), rtol=1e-13)
    w = R.standard_normal(X0.shape)
    vg.check_grads(lambda X, T: vnp.sum(f(X, T) * w), (X0, T0), argnums=(0, 1), rtol=1e-6,
                   atol=1e-8)


@pytest.mark.parametrize("expr", READS)
def test_reads_with_an_ellipsis_are_numpys(expr):
    f = eval(f"lambda X, T: {expr}", {"np": np})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(vg.jit(f)(X0, T0), f(X0, T0), rtol=1e-12)
    vg.check_grads(lambda X, T: vnp.sum(f(X, T) * 1.5), (X0, T0), argnums=(0, 1), rtol=1e-6,
                   atol=1e-8)


def _write_loop(xp, X, Y):
    out = X * 1.0
    for i in range(X.shape[0]):
        B = out[i].reshape(3, 4)
        B[B[:, 0] > 0, 1:] = Y[i, :3]
        B[..., B[0] < 0] *= 0.5
        out[i] = B.reshape(12)
    return xp.sum(out ** 2, axis=1)


def test_masked_writes_in_a_loop_batch_to_numpy():
    X, Y = R.standard_normal((6, 12)), R.standard_normal((6, 12))
    assert_same(vg.jit(lambda a, b: _write_loop(vnp, a, b))(X, Y), _write_loop(np, X, Y),
                rtol=1e-12)
    vg.check_grads(lambda a, b: vnp.sum(_write_loop(vnp, a, b)), (X, Y), argnums=(0, 1),
                   rtol=1e-6, atol=1e-8)
    e, leaves = entry(lambda a, b: vnp.sum(_write_loop(vnp, a, b)), (X, Y), argnums=(0, 1))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


@pytest.mark.parametrize("stmt", ["Y[X[:, 0] > 0, 1:] = X[:2, 1:]",
                                  "Y[X[:, 0] > 0, 1:] = X[X[:, 1] > 0, 1:]",
                                  "Y[..., X[0] > 0] = X[:, :2]"])
def test_writes_that_pair_by_the_selections_length_are_refused(stmt):
    with pytest.raises((vg.TraceError, vg.ShapeError, IndexError)):
        vg.jit(_write(stmt))(X0, T0)
