"""The `vecgrad.numpy` namespace and Tracer methods against NumPy.

Most programs are written once against a module `xp`: run with `xp=numpy` they are the
reference, run with `xp=vecgrad.numpy` under `vg.jit` they are traced and compiled. Gradients
are checked against central differences with `vg.check_grads`.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(0)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))
C = R.standard_normal((4, 5))
V = R.standard_normal(4)
T3 = R.standard_normal((2, 3, 4))
POS = R.uniform(0.5, 2.0, (3, 4))


def leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def assert_same(got, want, rtol=1e-10, atol=1e-12):
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert isinstance(g, np.ndarray), f"expected a NumPy array, got {type(g).__name__}"
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if w.dtype == bool:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def check(f, *args, grad=True, argnums=0, rtol=1e-10):
    """f(xp, *args) under vg.jit with xp=vnp equals f(np, *args); its gradient (of a random
    weighting of the outputs) matches central differences."""
    want = f(np, *args)
    got = vg.jit(lambda *a: f(vnp, *a))(*args)
    assert_same(got, want, rtol=rtol)
    if grad:
        ws = [np.random.default_rng(1).standard_normal(np.shape(w)) for w in leaves(want)]

        def loss(*a):
            return sum(vnp.sum(o * w) for o, w in zip(leaves(f(vnp, *a)), ws))
        central_diff_check(loss, list(args), argnums=argnums, rtol=1e-6, atol=1e-7)
    return got


# ---------------------------------------------------------------------------- operators

@pytest.mark.parametrize("op", [
    lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / (y + 3),
    lambda x, y: x ** 2, lambda x, y: (x + 3) ** y, lambda x, y: x @ y.T, lambda x, y: -x,
    lambda x, y: 2 - x, lambda x, y: 1 / (y + 3), lambda x, y: 2 ** x, lambda x, y: +x * y,
    lambda x, y: x ** 3 - abs(y) ** 0.5, lambda x, y: x[0] @ y[1],
    lambda x, y: x @ y[0],
], ids=["add", "sub", "mul", "div", "pow2", "pow", "matmul", "neg", "rsub", "rdiv", "rpow",
        "pos", "pow3-abs", "vecvec", "matvec"])
def test_operators(op):
    check(lambda xp, x, y: op(x, y), A, B + 0.1, argnums=(0, 1))


@pytest.mark.parametrize("op", [
    lambda x, y: x < y, lambda x, y: x <= y, lambda x, y: x > y, lambda x, y: x >= y,
    lambda x, y: x == y, lambda x, y: x != y, lambda x, y: x > 0.5,
], ids=["lt", "le", "gt", "ge", "eq", "ne", "gt-scalar"])
def test_comparisons(op):
    y = np.where(R.random((3, 4)) > 0.5, A, B)  # some ties
    check(lambda xp, x, y: op(x, y), A, y, grad=False)


def test_comparison_masks_select_values():
    check(lambda xp, x: xp.where(x > 0, x, 0.1 * x) + (x < 0) * 2.0, A)


def test_inplace_operators_on_a_copy():
    def f(xp, x, y):
        z = x.copy()
        z += y
        z *= x
        z -= 1.0
        z /= 2.0
        return z
    check(f, A, B, argnums=(0, 1))


# ------------------------------------------------------------------ attributes, methods

def test_attributes_and_len():
    seen = []

    def f(xp, x):
        seen.append((x.shape, x.ndim, x.dtype, x.size, len(x), x.T.shape))
        return x.T * x.ndim + x.size + len(x)
    check(f, T3)
    assert seen[0] == seen[1] == ((2, 3, 4), 3, np.dtype(np.float64), 24, 2, (4, 3, 2))


def test_len_of_0d_raises():
    with pytest.raises(TypeError):
        vg.jit(lambda x: len(x))(np.float64(1.0))


def test_iteration_over_first_axis():
    check(lambda xp, x: xp.stack([r * (i + 1) for i, r in enumerate(x)]), A)
    check(lambda xp, x: sum(r * r for r in x), T3)


@pytest.mark.parametrize("method", [
    lambda x: x.sum(), lambda x: x.sum(axis=0), lambda x: x.sum(1, keepdims=True),
    lambda x: x.mean(), lambda x: x.mean(axis=(0, 2)), lambda x: x.max(),
    lambda x: x.max(axis=1), lambda x: x.min(axis=-1, keepdims=True), lambda x: x.min(),
    lambda x: x.reshape(6, -1), lambda x: x.reshape((4, 6)), lambda x: x.reshape(-1),
    lambda x: x.transpose(), lambda x: x.transpose(1, 0, 2), lambda x: x.transpose((2, 0, 1)),
    lambda x: x.copy(), lambda x: x.T, lambda x: x.ravel(), lambda x: x.prod(axis=0),
    lambda x: x.swapaxes(0, 2), lambda x: x.clip(-0.5, 0.5),
], ids=["sum", "sum0", "sum1kd", "mean", "mean02", "max", "max1", "min-1kd", "min",
        "reshape6", "reshape-tuple", "reshape-flat", "transpose", "transpose102",
        "transpose-tuple", "copy", "T", "ravel", "prod0", "swapaxes", "clip"])
def test_methods(method):
    check(lambda xp, x: method(x), T3, rtol=1e-6)


def test_copy_is_independent_of_later_writes():
    def f(xp, x):
        buf = xp.zeros((3, 4))
        buf[:] = x
        c = buf.copy()
        buf[0] = 7.0
        return c, buf
    check(f, A)


# ----------------------------------------------------------------------------- indexing

@pytest.mark.parametrize("key", [
    1, -1, (0, -2), slice(1, None), slice(None, None, 2), slice(None, None, -1),
    slice(-1, 0, -2), (slice(None), 2), (None, 1), (Ellipsis, 1), (1, Ellipsis, None),
    (slice(None, None, -2), None, slice(1, 4, 2)), np.array([2, 0, 2]), [0, -1],
    (np.array([0, 2]), np.array([1, 3])), (slice(None), np.array([3, 1, 1])),
    np.array([True, False, True]), A > 0, (np.array([[0], [2]]), np.array([1, 3])),
], ids=["int", "negint", "ints", "slice", "step", "negstep", "negstep2", "col", "none",
        "ellipsis", "int-ell-none", "mixed", "intarr", "list", "two-arrays", "slice-arr",
        "boolrow", "boolmask", "bcast-arrays"])
def test_indexing(key):
    check(lambda xp, x: x[key], A)


def test_out_of_bounds_index_raises():
    with pytest.raises(IndexError):
        vg.jit(lambda x: x[3])(A)
    with pytest.raises(IndexError):
        vg.jit(lambda x: x[:, np.array([0, 4])])(A)


def test_chained_indexing_and_repeated_reads():
    check(lambda xp, x: x[1:][::-1][0, ::2] + x[2, ::2] + x[-1, 1:4:2] + x[np.array([2, 2])][0, :2],
          A)


# ------------------------------------------------------------------------ in-place writes

def test_writes_into_created_buffer():
    def f(xp, x, y):
        buf = xp.zeros((3, 4))
        buf[0] = x[1]
        buf[1:, ::2] = y[:2, :2]
        buf[-1, 1] += 3 * x[0, 0]
        buf[:, 3] += x[:, 0]
        buf[np.array([1, 2]), 1] = x[0, :2]
        return buf
    check(f, A, B, argnums=(0, 1))


def test_setitem_with_static_boolean_mask():
    mask = A > 0

    def f(xp, x):
        buf = xp.ones((3, 4))
        buf[mask] = x[mask] * 2
        buf[~mask] += x[~mask]
        return buf
    check(f, A)


@pytest.mark.parametrize("make", [
    lambda xp, x: xp.zeros(x.shape), lambda xp, x: xp.ones((3, 4)),
    lambda xp, x: xp.full((3, 4), 2.0), lambda xp, x: xp.zeros_like(x),
    lambda xp, x: xp.ones_like(x), lambda xp, x: xp.full_like(x, -1.0),
    lambda xp, x: x.copy(), lambda xp, x: xp.array(x), lambda xp, x: x * 1.0,
], ids=["zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "copy", "array",
        "result"])
def test_writable_buffers(make):
    def f(xp, x):
        buf = make(xp, x)
        buf[1] = x[0] ** 2
        buf[:, 0] += x[:, 1]
        return buf
    check(f, A)


@pytest.mark.parametrize("make", [lambda xp: xp.empty((3, 4)), lambda xp: xp.empty_like(A)],
                         ids=["empty", "empty_like"])
def test_empty_buffers_fully_written(make):
    def f(xp, x):
        buf = make(xp)
        buf[0] = x[1]
        buf[1:] = x[:2] ** 2
        buf[:, 0] += x[:, 1]
        return buf
    check(f, A)


def test_astype_float32_roundtrip():
    out = vg.jit(lambda x: x.astype(np.float32))(A)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, A.astype(np.float32))
    g = vg.grad(lambda x: vnp.sum(x.astype(np.float32) * 3))(A)
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, 3.0)


def test_write_through_view_reaches_base():
    def f(xp, x):
        buf = xp.zeros((3, 4))
        row = buf[1]
        row[2:] = x[0, :2]
        col = buf[:, 0]
        col[::2] = x[1, :2]
        sub = buf[1:][:, 1:]  # a view of a view
        sub[1, 1] = x[2, 3]
        buf[::-1][0, 3] = x[2, 2]  # a write through a temporary reversed view
        return buf
    check(f, A)


def test_write_through_transpose_and_reshape_views_reaches_base():
    def f(xp, x):
        buf = xp.zeros((3, 4))
        t = buf.T
        t[0] = x[:, 0]
        flat = buf.reshape(-1)
        flat[5] = x[1, 1]
        return buf
    check(f, A, grad=False)


def test_inplace_ops_through_views_reach_base():
    def f(xp, x):
        buf = xp.ones((3, 4))
        row = buf[1]
        row += x[0]
        row *= x[1]
        col = buf[:, 2]
        col -= x[:, 3]
        buf[2, :2] += x[2, :2]
        return buf, row, col
    check(f, A)


def test_view_read_after_base_write_sees_it():
    def f(xp, x):
        buf = xp.zeros((3, 4))
        row = buf[1]
        col = buf[:, 0]
        inner = row[1:]
        buf[1, :] = x[0]
        before = row * 1.0  # NumPy: row aliases buf, so it sees the write
        buf[0, 0] = x[2, 2]
        row[2] = x[1, 1]  # through one view, visible in the others
        return before, row * 1.0, col * 1.0, inner * 1.0, buf
    check(f, A)


def test_advanced_index_read_is_a_copy():
    def f(xp, x):
        buf = xp.zeros((3, 4))
        buf[np.array([0, 2])][0] = 5.0  # NumPy: writes into a temporary copy only
        buf[[1]] = x[:1]
        tmp = buf[np.array([1, 2])]
        buf[1] = x[2]
        return buf, tmp
    check(f, A)


def test_overwritten_values_get_zero_cotangent():
    def f(x):
        buf = vnp.zeros(4)
        buf[0] = x[0] * 5.0
        buf[1:3] = x[1:3] ** 2
        buf[0] = x[3]  # overwrites the first write
        buf[1] = 0.0
        return vnp.sum(buf * np.arange(1.0, 5.0))
    x = np.array([1.0, 2.0, 3.0, 4.0])
    g = vg.grad(f)(x)
    np.testing.assert_allclose(g, [0.0, 0.0, 3 * 2 * 3.0, 1.0])
    central_diff_check(f, [x])


def test_accumulating_writes_gradient():
    def f(x):
        buf = vnp.zeros(3)
        for i in range(4):
            buf[i % 3] += x[i] * x[i]
        buf[np.array([0, 2])] += x[:2]
        return vnp.sum(buf * np.array([1.0, 10.0, 100.0]))
    x = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(vg.grad(f)(x), [2 * 1 + 1, 2 * 2 * 10 + 100, 2 * 3 * 100, 8])
    central_diff_check(f, [x])


def test_gradient_through_writes_and_views():
    def f(x, y):
        buf = vnp.zeros((3, 4))
        row = buf[0]
        row[:] = x[0] * y[0]
        buf[1:] = vnp.tanh(x[1:])
        col = buf[:, 1]
        col *= y[:, 1]
        buf[2] = buf[2] + buf[0]
        return vnp.sum(vnp.sin(buf) * B) + vnp.sum(row)
    central_diff_check(f, [A, B], argnums=(0, 1))


# --------------------------------------------------------------------------- creation

def test_creation_constants():
    def f(xp, x):
        return (x + xp.arange(4) + xp.linspace(0, 1, 4), x[:, :3] @ xp.eye(3),
                xp.zeros((2,)), xp.ones(3, dtype=np.float32), xp.full((2, 2), 3),
                xp.eye(3, 4, 1), xp.arange(0.0, 1.0, 0.25) * x[0])
    check(f, A)


def test_array_of_traced_scalars_and_arrays():
    def f(xp, x):
        s = xp.array([x[0, 0], x[1, 1] * 2, 3.0])
        m = xp.asarray([x[0], x[2] * x[1]])
        n = xp.array([[x[0, 0], x[0, 1]], [x[1, 0], 1.0]])
        return s, m, n, xp.asarray(x), xp.array((x[0], x[1]), dtype=np.float32) * 1.0
    check(f, A, rtol=1e-6, grad=False)
    check(lambda xp, x: f(xp, x)[:4], A)


def test_full_with_traced_fill_value_is_writable():
    def f(xp, x):
        buf = xp.full((2, 3), x[0, 0])
        buf[0, 1] = x[1, 1]
        return buf, xp.full_like(x, x[2, 2])
    check(f, A)


# ---------------------------------------------------------------------- shape functions

@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.reshape(x, (4, 6)), lambda xp, x: xp.reshape(x, -1),
    lambda xp, x: xp.transpose(x), lambda xp, x: xp.transpose(x, (0, 2, 1)),
    lambda xp, x: xp.swapaxes(x, 0, -1), lambda xp, x: xp.moveaxis(x, 0, -1),
    lambda xp, x: xp.moveaxis(x, (0, 1), (2, 0)), lambda xp, x: xp.expand_dims(x, 1),
    lambda xp, x: xp.expand_dims(x, (0, -1)), lambda xp, x: xp.squeeze(x[:, :1]),
    lambda xp, x: xp.squeeze(x[:1, :, :1], axis=0), lambda xp, x: xp.broadcast_to(x[0], (5, 3, 4)),
    lambda xp, x: xp.broadcast_to(x[:, :1], (2, 3, 4)),
    lambda xp, x: xp.concatenate([x, x * 2], axis=1),
    lambda xp, x: xp.concatenate([x[0], x[1], x[0, :1]], axis=0),
    lambda xp, x: xp.concatenate((x[:, 0], x[:, 1]), axis=-1),
    lambda xp, x: xp.stack([x[0], x[1] * 3]), lambda xp, x: xp.stack([x[0], x[1]], axis=-1),
    lambda xp, x: xp.stack([x[0, 0], x[1, 1]]), lambda xp, x: xp.split(x, 2),
    lambda xp, x: xp.split(x, [1, 3], axis=2), lambda xp, x: xp.split(x, 3, axis=-2),
    lambda xp, x: xp.ravel(x),
], ids=["reshape", "reshape-1", "transpose", "transpose-axes", "swapaxes", "moveaxis",
        "moveaxis-multi", "expand_dims", "expand_dims-multi", "squeeze", "squeeze-axis",
        "broadcast_to", "broadcast_to-mid", "concat1", "concat0", "concat-neg", "stack",
        "stack-1", "stack-scalars", "split", "split-indices", "split-neg", "ravel"])
def test_shape_functions(fn):
    check(fn, T3)


def test_shape_function_errors():
    with pytest.raises(ValueError):
        vg.jit(lambda x: vnp.squeeze(x, axis=0))(A)
    with pytest.raises(ValueError):
        vg.jit(lambda x: vnp.reshape(x, (5, -1)))(A)
    with pytest.raises(ValueError):
        vg.jit(lambda x: vnp.split(x, 2, axis=0))(A)


# -------------------------------------------------------------------------- elementwise

@pytest.mark.parametrize("name,x", [
    ("exp", A), ("log", POS), ("log1p", POS - 0.4), ("expm1", A), ("sqrt", POS),
    ("square", A), ("abs", A), ("sign", A), ("tanh", A), ("sin", A), ("cos", A),
    ("absolute", A), ("negative", A), ("positive", A),
])
def test_unary_elementwise(name, x):
    check(lambda xp, x: getattr(xp, name)(x), x)


@pytest.mark.parametrize("fn", [
    lambda xp, x, y: xp.maximum(x, y), lambda xp, x, y: xp.minimum(x, y[0]),
    lambda xp, x, y: xp.maximum(x, 0.0), lambda xp, x, y: xp.clip(x, -0.5, 0.5),
    lambda xp, x, y: xp.clip(x, y, None), lambda xp, x, y: xp.clip(x, None, y[:, :1]),
    lambda xp, x, y: xp.where(x > y, x * y, y), lambda xp, x, y: xp.where(x[0] > 0, 1.0, y),
    lambda xp, x, y: xp.add(x, y), lambda xp, x, y: xp.subtract(x, 1),
    lambda xp, x, y: xp.multiply(2, y), lambda xp, x, y: xp.divide(x, y + 5),
    lambda xp, x, y: xp.true_divide(x, 4), lambda xp, x, y: xp.power(y + 5, x),
    lambda xp, x, y: xp.power(x, 3),
], ids=["maximum", "minimum-bcast", "maximum-scalar", "clip", "clip-lo-array",
        "clip-hi-bcast", "where", "where-bcast", "add", "subtract", "multiply", "divide",
        "true_divide", "power", "power-int"])
def test_binary_elementwise(fn):
    check(fn, A, B, argnums=(0, 1))


def test_maximum_tie_splits_gradient():
    g = vg.grad(lambda x, y: vnp.sum(vnp.maximum(x, y)), argnums=(0, 1))(
        np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    np.testing.assert_allclose(g[0], [0.5, 0.0])
    np.testing.assert_allclose(g[1], [0.5, 1.0])


def test_logical_functions():
    check(lambda xp, x, y: (xp.logical_and(x > 0, y > 0), xp.logical_or(x > 0, y > 0),
                            xp.logical_not(x > 0), xp.equal(x, y), xp.less_equal(x, 0)),
          A, B, grad=False)


# --------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims):
    check(lambda xp, x: getattr(xp, name)(x, axis=axis, keepdims=keepdims), T3)


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (0, 3)], [(0, 1), (1, 1)]],
                         ids=["one", "two-in-row", "spread"])
def test_prod_with_zeros(zeros):
    x = A.copy()
    for z in zeros:
        x[z] = 0.0
    for axis in (None, 0, 1):
        check(lambda xp, x, axis=axis: xp.prod(x, axis=axis), x)
    # exact gradient: d prod / dx_i = product of the others
    g = vg.grad(lambda x: vnp.prod(x[0]))(x)
    want = np.array([np.prod(np.delete(x[0], i)) for i in range(4)])
    np.testing.assert_allclose(g[0], want, atol=1e-15)


def test_mean_of_ints_is_float64():
    out = vg.jit(lambda x: vnp.mean(x))(np.arange(6).reshape(2, 3))
    assert out.dtype == np.float64 and out == 2.5


@pytest.mark.parametrize("fn", [
    lambda xp, x: xp.linalg.norm(x[0, 0]), lambda xp, x: xp.linalg.norm(x[0]),
    lambda xp, x: xp.linalg.norm(x[0], "fro"), lambda xp, x: xp.linalg.norm(x),
    lambda xp, x: xp.linalg.norm(x, axis=-1), lambda xp, x: xp.linalg.norm(x, axis=1,
                                                                              keepdims=True),
    lambda xp, x: xp.linalg.norm(x[1, 1], ord=2), lambda xp, x: xp.linalg.norm(x, axis=(1, 2)),
], ids=["vector", "frobenius", "fro", "all", "axis", "keepdims", "ord2", "matrix-axes"])
def test_linalg_norm(fn):
    check(fn, T3)


# ------------------------------------------------------------------------ linear algebra

@pytest.mark.parametrize("fn,args", [
    (lambda xp, a, b: xp.dot(a, b), (V, V)),
    (lambda xp, a, b: xp.dot(a, b), (A, C)),
    (lambda xp, a, b: xp.dot(a, b), (A, V)),
    (lambda xp, a, b: xp.dot(a, b), (V, C)),
    (lambda xp, a, b: xp.dot(a, b), (T3, C)),
    (lambda xp, a, b: xp.dot(a, b), (A, R.standard_normal((2, 4, 3)))),
    (lambda xp, a, b: xp.dot(a, b[0, 0]), (V, A)),
    (lambda xp, a, b: xp.matmul(a, b), (V, V)),
    (lambda xp, a, b: xp.matmul(a, b), (A, C)),
    (lambda xp, a, b: xp.matmul(a, b), (V, C)),
    (lambda xp, a, b: xp.matmul(a, b), (A, V)),
    (lambda xp, a, b: xp.matmul(a, b), (T3, C)),
    (lambda xp, a, b: xp.matmul(a, b), (V, T3.transpose(0, 2, 1))),
    (lambda xp, a, b: xp.matmul(a, b), (T3, V)),
    (lambda xp, a, b: a @ b, (R.standard_normal((2, 1, 3, 4)), R.standard_normal((5, 4, 2)))),
    (lambda xp, a, b: xp.einsum("ij,jk->ik", a, b), (A, C)),
    (lambda xp, a, b: xp.einsum("ij,jk", a, b), (A, C)),
    (lambda xp, a, b: xp.einsum("bij,jk->bki", a, b), (T3, C)),
    (lambda xp, a, b: xp.einsum("...j,j->...", a, b), (T3, V)),
    (lambda xp, a, b: xp.einsum("i...,i...->...", a, b), (T3, T3 * 2)),
    (lambda xp, a, b: xp.einsum("ii", a[:3, :3] + b[0, 0]), (A, B)),
    (lambda xp, a, b: xp.einsum("i j , j", a, b), (A, V)),
    (lambda xp, a, b: xp.tensordot(a, b, 1), (A, C)),
    (lambda xp, a, b: xp.tensordot(a, b, axes=([1, 2], [0, 1])), (T3, R.standard_normal((3, 4, 2)))),
    (lambda xp, a, b: xp.tensordot(a, b, axes=(0, 1)), (A, R.standard_normal((2, 3)))),
    (lambda xp, a, b: xp.tensordot(a, b, 0), (V, V)),
    (lambda xp, a, b: xp.outer(a, b), (V, A)),
    (lambda xp, a, b: xp.inner(a, b), (A, B)),
    (lambda xp, a, b: xp.inner(a, b), (V, V)),
    (lambda xp, a, b: xp.inner(a, b), (T3, V)),
    (lambda xp, a, b: xp.diag(a[:, :3]) * b[0, 0], (A, B)),
    (lambda xp, a, b: xp.diag(a) + b[0], (V, A)),
    (lambda xp, a, b: xp.diag(a) + b[0, 0], (A, B)),
    (lambda xp, a, b: xp.trace(a[:, :3]) + xp.trace(b), (A, B)),
], ids=["dot-vv", "dot-mm", "dot-mv", "dot-vm", "dot-3m", "dot-m3", "dot-vs", "matmul-vv",
        "matmul-mm", "matmul-vm", "matmul-mv", "matmul-3m", "matmul-v3", "matmul-3v",
        "matmul-bcast", "einsum", "einsum-implicit", "einsum-perm", "einsum-ell",
        "einsum-ell-lead", "einsum-trace", "einsum-spaces", "tensordot1", "tensordot-pairs",
        "tensordot-ints", "tensordot0", "outer", "inner-mm", "inner-vv", "inner-3v", "diag-m",
        "diag-v", "diag-rect", "trace"])
def test_linear_algebra(fn, args):
    check(fn, *args, argnums=(0, 1))


def test_matmul_shape_mismatch():
    with pytest.raises(ValueError):
        vg.jit(lambda a, b: a @ b)(A, B)


# ------------------------------------------------------------------------------- vg.nn

def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _lse(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


NN = {
    "softmax": (lambda x: vg.nn.softmax(x), lambda x: _softmax(x, -1)),
    "softmax0": (lambda x: vg.nn.softmax(x, axis=0), lambda x: _softmax(x, 0)),
    "log_softmax": (lambda x: vg.nn.log_softmax(x), lambda x: x - _lse(x, -1, True)),
    "log_softmax0": (lambda x: vg.nn.log_softmax(x, 0), lambda x: x - _lse(x, 0, True)),
    "logsumexp": (lambda x: vg.nn.logsumexp(x), lambda x: _lse(x)),
    "logsumexp1": (lambda x: vg.nn.logsumexp(x, axis=1), lambda x: _lse(x, 1)),
    "logsumexp-kd": (lambda x: vg.nn.logsumexp(x, axis=0, keepdims=True),
                     lambda x: _lse(x, 0, True)),
    "relu": (vg.nn.relu, lambda x: np.maximum(x, 0)),
    "sigmoid": (vg.nn.sigmoid, lambda x: np.exp(-np.logaddexp(0, -x))),
    "softplus": (vg.nn.softplus, lambda x: np.logaddexp(0, x)),
}


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_functions(name):
    f, ref = NN[name]
    assert_same(vg.jit(f)(A), ref(A))
    w = np.random.default_rng(2).standard_normal(np.shape(ref(A)))
    central_diff_check(lambda x: vnp.sum(f(x) * w), [A], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_stable_at_large_inputs(name):
    f, ref = NN[name]
    x = np.array([[1000.0, 0.1, -1000.0, 999.0], [-1000.0, -999.0, -1001.0, 1.0],
                  [800.0, 800.0, 800.0, 800.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        want = ref(x)
    got = vg.jit(f)(x)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    w = np.random.default_rng(2).standard_normal(np.shape(want))
    g = vg.grad(lambda x: vnp.sum(f(x) * w))(x)
    assert np.all(np.isfinite(g))
    central_diff_check(lambda x: vnp.sum(f(x) * w), [x], rtol=1e-5, atol=1e-6)


def test_nn_large_input_values():
    x = np.array([1000.0, -1000.0])
    np.testing.assert_allclose(vg.jit(vg.nn.softplus)(x), [1000.0, 0.0])
    np.testing.assert_allclose(vg.grad(lambda x: vnp.sum(vg.nn.softplus(x)))(x), [1.0, 0.0])
    np.testing.assert_allclose(vg.jit(vg.nn.sigmoid)(x), [1.0, 0.0])
    np.testing.assert_allclose(vg.grad(lambda x: vnp.sum(vg.nn.sigmoid(x)))(x), [0.0, 0.0])
    np.testing.assert_allclose(vg.jit(vg.nn.logsumexp)(np.array([1000.0, 1000.0])),
                               1000.0 + np.log(2.0))
    np.testing.assert_allclose(vg.jit(vg.nn.log_softmax)(np.array([1000.0, 0.0])),
                               [0.0, -1000.0])
    np.testing.assert_allclose(vg.grad(lambda x: vg.nn.log_softmax(x)[1])(
        np.array([1000.0, 0.0])), [-1.0, 1.0])


def test_relu_gradient_at_zero_is_zero():
    np.testing.assert_array_equal(
        vg.grad(lambda x: vnp.sum(vg.nn.relu(x)))(np.array([-1.0, 0.0, 2.0])), [0.0, 0.0, 1.0])


# -------------------------------------------------------------------- plain NumPy calls

@pytest.mark.parametrize("fn", [
    lambda x, y: np.exp(x), lambda x, y: np.sum(x), lambda x, y: np.sum(x, axis=0),
    lambda x, y: np.dot(x, y.T), lambda x, y: np.linalg.norm(x),
    lambda x, y: np.linalg.norm(x, axis=1), lambda x, y: np.maximum(x, y),
    lambda x, y: np.minimum(x, 0.0), lambda x, y: np.mean(x, axis=1, keepdims=True),
    lambda x, y: np.where(x > y, x, y), lambda x, y: np.concatenate([x, y]),
    lambda x, y: np.stack([x, y], axis=1), lambda x, y: np.transpose(x),
    lambda x, y: np.reshape(x, (2, 6)), lambda x, y: np.einsum("ij,kj->ik", x, y),
    lambda x, y: np.matmul(x, y.T), lambda x, y: np.tanh(x) * np.sqrt(np.abs(y) + 1),
    lambda x, y: np.max(x, axis=0), lambda x, y: np.square(x) - np.log1p(y ** 2),
    lambda x, y: np.add(x, y), lambda x, y: np.multiply(np.sin(x), np.cos(y)),
    lambda x, y: np.clip(x, -0.5, 0.5), lambda x, y: np.outer(x[0], y[1]),
    lambda x, y: np.prod(x, axis=1), lambda x, y: np.expand_dims(x, 0),
    lambda x, y: np.squeeze(x[:1]), lambda x, y: np.swapaxes(x, 0, 1),
    lambda x, y: np.broadcast_to(x[0], (2, 4)), lambda x, y: np.trace(x[:, :3]),
    lambda x, y: np.tensordot(x, y, 2), lambda x, y: np.inner(x, y),
    lambda x, y: np.split(x, 2, axis=1), lambda x, y: np.exp(x) / np.sum(np.exp(x)),
    lambda x, y: x * np.float64(2.0) + np.pi, lambda x, y: np.negative(x) ** 2,
    lambda x, y: np.amax(x), lambda x, y: np.sign(x) * y, lambda x, y: np.expm1(x),
], ids=lambda f: None)
def test_plain_numpy_calls(fn):
    check(lambda xp, x, y: fn(x, y), A, B, argnums=(0, 1))


# ------------------------------------------------------------------------------- dtypes

X32 = A.astype(np.float32)


@pytest.mark.parametrize("fn", [
    lambda x: x * 2.0, lambda x: x + 1, lambda x: x / 3, lambda x: 2.5 - x,
    lambda x: x ** 2, lambda x: abs(x) ** 0.5 + x ** 3, lambda x: np.exp(x), lambda x: vnp.mean(x),
    lambda x: vnp.sum(x, axis=0), lambda x: vnp.maximum(x, 0.5), lambda x: vnp.where(x > 0, x, 0),
    lambda x: vg.nn.softmax(x), lambda x: vg.nn.logsumexp(x), lambda x: vg.nn.sigmoid(x),
    lambda x: vg.nn.softplus(x), lambda x: x @ x.T, lambda x: vnp.linalg.norm(x),
    lambda x: vnp.clip(x, -1, 1), lambda x: 2 ** x, lambda x: vnp.prod(x, 1),
], ids=lambda f: None)
def test_float32_stays_float32(fn):
    want = np.asarray(fn(X32))  # eager: NumPy's own promotion (vnp computes eagerly off-trace)
    out = vg.jit(fn)(X32)
    assert out.dtype == want.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert vg.grad(lambda x: vnp.sum(fn(x)))(X32).dtype == np.float32


def test_float32_times_float64_array_is_float64():
    out = vg.jit(lambda x, y: x * y)(X32, B)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, X32 * B)
    assert vg.jit(lambda x: x * B)(X32).dtype == np.float64  # a captured float64 constant


def test_float64_stays_float64_and_ints_promote():
    assert vg.jit(lambda x: x * np.float32(2) + 1)(A).dtype == np.float64
    ints = np.arange(12).reshape(3, 4)
    assert vg.jit(lambda i: i * 2)(ints).dtype == ints.dtype
    out = vg.jit(lambda i, x: i * x + i / 2)(ints, X32)
    want = ints * X32 + ints / 2
    assert out.dtype == want.dtype
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_grads_of_float32_inputs_are_float32():
    def f(x, y):
        return vnp.sum(vnp.tanh(x) * y) + vnp.sum(x ** 2) / 2
    gx, gy = vg.grad(f, argnums=(0, 1))(X32, B)
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    np.testing.assert_allclose(gx, (1 - np.tanh(A) ** 2) * B + A, rtol=1e-5)
    v, g = vg.value_and_grad(lambda x: vnp.sum(x * x))(X32)
    assert v.dtype == np.float32 and g.dtype == np.float32
