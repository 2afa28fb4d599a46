"""NumPy semantics fixed in session 25: np.linalg.eig's value-dependent dtype asked of it
(`w ** 1`, `w.dtype`, `w.view()`, np.iscomplexobj, .itemsize, np.zeros_like: each was the
complex answer where NumPy's is real), and np.r_ / np.c_ of traced items (refused before:
NumPy's AxisConcatenator converts each item itself), and np.gradient with coordinate arrays."""
from __future__ import annotations

import numpy as np
import pytest
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp

SYM = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 1.0]])  # real spectrum
ROT = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])  # complex pair


@pytest.mark.parametrize("use", [
    "w ** 1", "w.dtype", "w.dtype == np.float64", "w.view()", "np.iscomplexobj(w)",
    "np.isrealobj(w)", "w.itemsize", "w.nbytes", "np.result_type(w)", "np.zeros_like(w)",
    "np.ones_like(w)", "np.empty_like(w)", "np.full_like(w, 2)", "w.view(np.complex128)",
    "np.linalg.eig(a)[1].dtype", "np.can_cast(w, np.float64)",
])
@pytest.mark.parametrize("a", [SYM, ROT], ids=["real", "complex"])
def test_a_dtype_asked_of_eigs_values_is_refused_naming_the_line(use, a):
    f = eval(f"lambda a: (lambda w: {use})(np.linalg.eigvals(a))", {"np": np})
    with pytest.raises(vg.TraceError, match=r"depends on the values.*\(at "):
        vg.jit(f)(a)  # (at <string>:1, or at this line: where w ** 1 / w.view() is returned)


@pytest.mark.parametrize("use", [
    "(w ** 1).real", "np.abs(w.view())", "np.iscomplex(w)", "np.isreal(w)", "w.real.dtype == np.float64",
    "np.zeros_like(w.real)", "np.zeros_like(w, dtype=float)", "w.astype(complex) ** 1",
    "np.linalg.eig(a)[1][:, 0].imag", "np.sort(np.abs(w ** 1))", "w.ndim", "w.shape",
])
@pytest.mark.parametrize("a", [SYM, ROT], ids=["real", "complex"])
def test_uses_of_eigs_values_with_one_dtype_are_numpys(use, a):
    f = eval(f"lambda a: (lambda w: {use})(np.linalg.eigvals(a))", {"np": np})
    got, want = vg.jit(f)(a), f(a)
    if isinstance(want, (tuple, bool)):
        assert got == want
    else:
        w = np.asarray(want)
        if w.dtype.kind != "b":  # (eig's order: compare sorted values)
            got, want = np.sort_complex(np.ravel(got)), np.sort_complex(np.ravel(want))
        assert_same(got, want, rtol=1e-10)


@pytest.mark.parametrize("expr", [
    "np.r_[x, 0.0]", "np.r_[0:2, x, [1.0, 2.0]]", "np.c_[x, x ** 2]", "np.r_['0,2', x, x]",
    "np.r_[x[1:], x[:1]] * 2", "np.r_[np.ones(2), np.zeros(1)] * x[0]",
    "np.c_[np.ones(4), x] @ np.ones(2)", "np.r_[x[0], x[1], 3]", "np.r_[x, x.astype(np.float32)]",
    "np.r_[x.astype(np.int8), 1]", "np.c_[x[:, None], np.exp(x)[:, None]]", "np.r_[-1:2, 7]",
    "np.r_['-1', x[None], x[None]]", "np.r_[x, np.float32(1.5)]", "np.r_[x.astype(np.float32), 0.1]",
    "np.r_[x.astype(np.float32), np.float64(2)]", 
    "np.r_[x.astype(np.uint8), True]", "np.c_[x.astype(np.int16), 2.5 * x]",
])
def test_np_r_and_np_c_of_traced_items_are_numpys(expr):
    x = np.array([0.5, -1.0, 2.0, 0.25])
    f = eval(f"lambda x: {expr}", {"np": np})
    assert_same(vg.jit(f)(x), f(x))
    if np.asarray(f(x)).dtype == np.float64 and "float32" not in expr and "np.int" not in expr:
        vg.check_grads(lambda x: vnp.sum(f(x) ** 2), (x,))


def test_np_r_of_a_python_int_out_of_the_arrays_range_raises_as_numpys():
    with pytest.raises(OverflowError):
        vg.jit(lambda x: np.r_[x.astype(np.int8), 300])(np.ones(3))


def test_np_r_outside_a_trace_and_of_constants_is_numpys_own():
    assert np.r_.__class__.__name__ == "RClass"  # (NumPy's object, untouched outside a trace)
    f = vg.jit(lambda x: x * np.r_[1:4, 10.0].sum())
    assert_same(f(np.ones(2)), np.ones(2) * np.r_[1:4, 10.0].sum())


_T = np.cumsum(np.random.default_rng(3).random(7) + 0.1)  # (non-uniform coordinates)


@pytest.mark.parametrize("expr", [
    "np.gradient(y, t)", "np.gradient(y, t, edge_order=2)", "np.gradient(Y, np.arange(4.0), t)[1]",
    "np.gradient(Y, t, axis=1)", "np.gradient(Y, 2.0, t)[0]", "np.gradient(y, T)",
    "np.gradient(y, np.array([0, 1, 3, 4, 7, 8, 10]))", "np.gradient(y, np.arange(7) * 0.5, edge_order=2)",
    "np.gradient(Y, np.linspace(0, 1, 4), axis=0, edge_order=2)", "np.gradient(Y, t, axis=-1, edge_order=2)",
    "np.gradient(y.astype(np.float32), t)", "np.gradient(y, T ** 2, edge_order=2)",
])
def test_np_gradient_with_coordinate_arrays_is_numpys(expr):
    """np.gradient(f, x) with coordinates (traced t or constant T; was refused): NumPy's
    non-uniform formulas, values, dtype and gradients (also with respect to t)."""
    r = np.random.default_rng(4)
    y, Y = r.standard_normal(7), r.standard_normal((4, 7))
    f = eval(f"lambda y, Y, t: {expr}", {"np": np, "T": _T})
    assert_same(vg.jit(f)(y, Y, _T), f(y, Y, _T), rtol=1e-12)
    if "float32" not in expr:
        vg.check_grads(lambda y, Y, t: vnp.sum(f(y, Y, t) ** 2), (y, Y, _T), argnums=(0, 1, 2))


def test_np_gradient_with_coordinates_in_a_loop_batches():
    """Per-row derivatives on one traced time grid, in a loop: batched equals unbatched."""
    from test_batch import assert_same_function, entry

    def f(Y, t):
        out = vnp.zeros_like(Y)
        for i in range(Y.shape[0]):
            out[i] = np.gradient(Y[i], t, edge_order=1 + i % 2)
        return vnp.sum(out ** 2)
    Y = np.random.default_rng(5).standard_normal((5, 7))
    assert_same(vg.jit(f)(Y, _T), f(Y, _T), rtol=1e-12)
    e, leaves = entry(f, (Y, _T), argnums=(0, 1))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


@pytest.mark.parametrize("bad", ["np.gradient(y, t[:3])", "np.gradient(y, Y)", "np.gradient(Y, t)"])
def test_np_gradient_with_bad_coordinates_raises_as_numpy(bad):
    y, Y = np.ones(7), np.ones((4, 7))
    f = eval(f"lambda y, Y, t: {bad}", {"np": np})
    with pytest.raises((ValueError, TypeError)):
        f(y, Y, _T)
    with pytest.raises((ValueError, TypeError)):
        vg.jit(f)(y, Y, _T)


@pytest.mark.parametrize("expr", [
    "np.sum(min(v[0], 0) * 2.0)", "min(v[0], 2) / 3", "3 / max(v[0], 1)", "min(v[0], 2) * 0.5 + 1",
    "2.5 - min(v[0], 2)", "max(v[0], 2) ** 0.5", "max(v[0], 2) // 2.0", "min(v[1], 1) * 1j",
])
@pytest.mark.parametrize("dt", ["uint8", "int8", "int16"])
def test_either_of_narrow_ints_with_python_floats_is_numpys(expr, dt):
    """`min(u8[i], 0) * 2.0`: float64 where the traced item wins and a Python float where the
    number does, equal values (it was refused as if it wrapped around like `- 3`)."""
    f = eval(f"lambda v: {expr}", {"np": np})
    jf = vg.jit(f)
    for vals in ([5, -4, 7], [-9, -8, -7], [1, 1, 1], [0, 0, 0]):
        v = np.array(np.abs(vals) if dt == "uint8" else vals, dtype=dt)
        got, want = jf(v), f(v)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-15)


@pytest.mark.parametrize("expr", ["min(v[0], 2) - 3", "-min(v[0], 2)", "max(v[0], 1) * 3"])
def test_either_of_narrow_ints_with_python_ints_stays_refused(expr):
    with pytest.raises(vg.TraceError, match="wraps around"):
        vg.jit(eval(f"lambda v: {expr}"))(np.array([5, 4], np.uint8))
