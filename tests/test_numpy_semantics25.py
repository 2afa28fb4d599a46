"""NumPy semantics fixed in session 25: np.linalg.eig's value-dependent dtype asked of it
(`w ** 1`, `w.dtype`, `w.view()`, np.iscomplexobj, .itemsize, np.zeros_like: each was the
complex answer where NumPy's is real), and np.r_ / np.c_ of traced items (refused before:
NumPy's AxisConcatenator converts each item itself)."""
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
    f = eval(f"lambda a: (lambda w: {use})(np.linalg.eigvals(a))", {"np": np})  # noqa: S307
    with pytest.raises(vg.TraceError, match=r"depends on the values.*\(at "):
        vg.jit(f)(a)  # (at <string>:1, or at this line: where w ** 1 / w.view() is returned)


@pytest.mark.parametrize("use", [
    "(w ** 1).real", "np.abs(w.view())", "np.iscomplex(w)", "np.isreal(w)", "w.real.dtype == np.float64",
    "np.zeros_like(w.real)", "np.zeros_like(w, dtype=float)", "w.astype(complex) ** 1",
    "np.linalg.eig(a)[1][:, 0].imag", "np.sort(np.abs(w ** 1))", "w.ndim", "w.shape",
])
@pytest.mark.parametrize("a", [SYM, ROT], ids=["real", "complex"])
def test_uses_of_eigs_values_with_one_dtype_are_numpys(use, a):
    f = eval(f"lambda a: (lambda w: {use})(np.linalg.eigvals(a))", {"np": np})  # noqa: S307
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
    f = eval(f"lambda x: {expr}", {"np": np})  # noqa: S307
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
