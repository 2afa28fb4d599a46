"""Every user-facing error: its type, the user's own file:line, and the suggested fix.

The offending statement of each program carries the comment `# <- error`; the message must
name this file and that line.
"""
from __future__ import annotations

import inspect
import linecache
import math
import traceback
import warnings

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

A = np.random.default_rng(0).standard_normal((3, 4))
B = np.random.default_rng(1).standard_normal((2,))


def marked_line(fn) -> str:
    """'test_errors.py:<line>' of the line marked `# <- error` in fn's source."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, line in enumerate(lines) if "# <- error" in line]
    assert len(hits) == 1
    return f"test_errors.py:{hits[0]}"


def raises(exc_type, fn, *args, call=None):
    """Run vg.jit(fn)(*args) (or call()) expecting exc_type naming fn's marked line."""
    with pytest.raises(exc_type) as info:
        call() if call is not None else vg.jit(fn)(*args)
    msg = str(info.value)
    assert marked_line(fn) in msg, msg
    return msg


# --------------------------------------------------------------------- grad of non-scalars

def test_grad_of_nonscalar_output():
    def f(x):
        return x * 2.0  # <- error
    msg = raises(TypeError, f, call=lambda: vg.grad(f)(A))
    assert "(3, 4)" in msg and ".sum()" in msg and "vjp" in msg


@pytest.mark.parametrize("dtype", [np.int64, np.int32, bool])
def test_int_or_bool_array_in_argnums(dtype):
    def f(x, y):  # <- error
        return vnp.sum(y * x)
    msg = raises(TypeError, f, call=lambda: vg.grad(f, argnums=(0, 1))(A, np.ones(4, dtype)))
    assert str(np.dtype(dtype)) in msg and "argument 1" in msg and "astype" in msg


def test_static_argument_in_argnums():
    def f(x, n):  # <- error
        return vnp.sum(x) * len(n)
    msg = raises(TypeError, f, call=lambda: vg.grad(f, argnums=1)(A, "abc"))
    assert "static" in msg


def test_python_int_in_argnums():
    def f(x, n):  # <- error
        return vnp.sum(x) * n
    msg = raises(TypeError, f, call=lambda: vg.grad(f, argnums=1)(A, 3))
    assert "Python int" in msg and "3.0" in msg


# ------------------------------------------------------------ concrete values while tracing

def _if(x):
    if x[0, 0] > 0:  # <- error
        return x
    return -x


def _bool(x):
    return bool(vnp.sum(x))  # <- error


def _float(x):
    return x * float(x[0, 0])  # <- error


def _int(x):
    return x[: int(x[0, 0])]  # <- error


def _while(x):
    while vnp.sum(x) > 0:  # <- error
        x = x - 1.0
    return x


def _and(x):
    return x[0, 0] > 0 and x  # <- error


def _range(x):
    return [x * i for i in range(x[0, 0])]  # <- error


@pytest.mark.parametrize("fn", [_if, _bool, _float, _int, _while, _and, _range],
                         ids=lambda f: f.__name__)
def test_concrete_value_of_a_tracer(fn):
    msg = raises(vg.ConcretizationError, fn, A)
    assert "not known while" in msg and "vnp.where" in msg
    with pytest.raises(TypeError):  # it is also a TypeError, like JAX's
        vg.grad(lambda x: vnp.sum(fn(x)))(A)


def _pymax(x):
    return sum(max(x[i, 0], 0.0) for i in range(3))  # (traced 0-d values: Python's own fold)


def _pymax_key(x):
    return sum(max(x[i, 0], 0.0, key=abs) for i in range(3))  # <- error


def _pysorted(x):
    return sorted(x[:, 0])[1] + min(x[0, 0], x[1, 1])  # <- error


@pytest.mark.parametrize("fn,names", [(_pymax_key, "max()"), (_pysorted, "min()/sorted()")],
                         ids=["max_key", "sorted_min"])
def test_python_max_min_sorted_point_at_the_array_functions(fn, names):
    # max/min of traced 0-d values alone are Python's fold (vecgrad.pybuiltins); with a key=,
    # and sorted(), they still compare traced values with bool()
    msg = raises(vg.ConcretizationError, fn, A)
    assert f"Python's {names} compare" in msg and "vnp.maximum(a, b)" in msg


def test_python_max_of_traced_scalars_is_numpys_value():
    np.testing.assert_allclose(vg.jit(_pymax)(A), _pymax(A), rtol=1e-15)


def test_no_builtin_hint_on_a_plain_if():
    assert "vnp.maximum" not in raises(vg.ConcretizationError, _if, A)
    assert "math module" not in raises(vg.ConcretizationError, _if, A)


def _math_exp(x):
    return sum(math.exp(-x[i, 0]) for i in range(3))  # <- error


def _math_two(x):
    return math.atan2(x[0, 0], 1.0) + math.fabs(x[1, 0])  # <- error


@pytest.mark.parametrize("fn,want", [(_math_exp, ["np.exp(...) for math.exp(...)"]),
                                     (_math_two, ["np.arctan2(...) for math.atan2(...)",
                                                  "np.abs(...) for math.fabs(...)"])],
                         ids=["exp", "atan2_fabs"])
def test_math_functions_point_at_numpys(fn, want):
    # math's functions ask float() of a traced value from C: the user's line names them
    msg = raises(vg.ConcretizationError, fn, A)
    assert "The math module computes on Python floats" in msg
    assert all(w in msg for w in want), msg


# -------------------------------------------------------------------------- buffer writes

_OUTSIDE = np.zeros((3, 4))  # (not made in the traced function: it stays a NumPy array)


def test_write_traced_rows_into_plain_numpy_array():
    def f(x):
        buf = _OUTSIDE
        buf[0] = x[1]  # <- error
        return buf
    msg = raises(vg.TracedIntoNumpyError, f, A)
    assert "vnp.zeros" in msg and "vnp.empty" in msg


def test_write_traced_element_into_plain_numpy_array():
    def f(x):
        buf = _OUTSIDE[0]
        buf[1] = x[0, 0]  # <- error
        return buf
    # NumPy itself converts a single element with float() and wraps the error in its own
    # ValueError; vecgrad gives its typed explanation back (NumPy's error is the cause).
    with pytest.raises(vg.TracedIntoNumpyError) as info:
        vg.jit(f)(A)
    assert marked_line(f) in str(info.value) and "vnp.zeros" in str(info.value)


def test_buffers_made_by_numpy_in_the_traced_function_take_traced_writes():
    """The trace runs again with np.zeros / np.empty making vecgrad buffers."""
    def f(x):
        buf = np.empty(3)
        buf[1] = x[0, 0]
        rows = np.zeros((3, 4))
        rows[0] = x[1]
        return buf[1], rows
    got, want = vg.jit(f)(A), f(A)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])


def test_traced_value_into_np_array_constructor():
    """np.array / np.asarray of traced values called from the user's code make traced arrays
    (src/vecgrad/pyarrays.py); NumPy functions that convert a traced argument themselves
    still raise the typed error."""
    def f(x):
        return np.array(x) * 2 + np.asarray([x[0], x[1], x[2]]) + np.array([[1.0] * 4] * 3)
    np.testing.assert_array_equal(vg.jit(f)(A), f(A))


def _set_arg(x):
    x[0] = 1.0  # <- error
    return x


def _set_arg_view(x):
    row = x[1]
    row[2] = 0.0  # <- error
    return x


def _iadd_arg(x):
    x += 1.0  # <- error
    return x


def _imul_arg_row(x):
    x[0] *= 2.0  # <- error
    return x


@pytest.mark.parametrize("fn", [_set_arg, _set_arg_view, _iadd_arg, _imul_arg_row],
                         ids=lambda f: f.__name__)
def test_write_into_argument_is_read_only(fn):
    msg = raises(vg.ReadOnlyError, fn, A)
    assert "read-only" in msg and ".copy()" in msg
    with pytest.raises(ValueError):
        vg.grad(lambda x: vnp.sum(fn(x)))(A)


def test_write_into_copy_of_argument_is_fine():
    def f(x):
        y = x.copy()
        y[0] = 1.0
        return y
    out = vg.jit(f)(A)
    assert out[0, 0] == 1.0 and A[0, 0] != 1.0


# ------------------------------------------------------------------- unsupported NumPy

@pytest.mark.parametrize("name,fn", [
    ("numpy.roots", lambda x: np.roots(x[0])),  # <- error
    ("numpy.polydiv", lambda x: np.polydiv(x[0], x[1])),  # <- error
    ("numpy.subtract.reduceat", lambda x: np.subtract.reduceat(x, [0, 2])),  # <- error
    ("numpy.arctan2.reduce", lambda x: np.arctan2.reduce(x)),  # <- error
    ("numpy.add.reduceat with traced indices", lambda x: np.add.reduceat(x, x[0] > 0)),  # <- error
], ids=lambda v: v if isinstance(v, str) else "")
def test_numpy_function_without_traced_implementation(name, fn):
    with pytest.raises(NotImplementedError) as info:
        vg.jit(fn)(A)
    msg = str(info.value)
    assert name in msg and "no traced implementation" in msg
    assert f"test_errors.py:{fn.__code__.co_firstlineno}" in msg


def test_ufunc_out_must_be_a_traced_buffer():
    def f(x):
        return np.exp(x, out=_OUTSIDE)  # <- error
    raises(vg.TracedIntoNumpyError, f, A)
    got = vg.jit(lambda x: np.exp(x, out=np.empty((3, 4))) * 1.0)(A)  # (np.empty: a buffer)
    np.testing.assert_allclose(got, np.exp(A))
    got = vg.jit(lambda x: np.exp(x, out=vnp.zeros((3, 4))) * 1.0)(A)
    np.testing.assert_allclose(got, np.exp(A))


def test_invalid_norm_order():
    def f(x):
        return vnp.linalg.norm(x, ord=3)  # <- error (as NumPy: no such matrix norm)
    with pytest.raises(ValueError, match="Invalid norm order for matrices"):
        vg.jit(f)(A)


# ------------------------------------------------------------------------ shape mismatches

def test_shape_mismatch_in_binary_op():
    def f(x, y):
        return x + y  # <- error
    msg = raises(vg.ShapeError, f, A, B)
    assert "(3, 4)" in msg and "(2,)" in msg and "broadcast" in msg


def test_shape_mismatch_in_matmul():
    def f(x):
        return x @ x  # <- error
    msg = raises(vg.ShapeError, f, A)
    assert "(3, 4)" in msg and "matmul" in msg and "einsum" not in msg
    for sa, sb in [((6,), (5, 2)), ((3, 6), (5,)), ((2, 3, 6), (2, 5, 2))]:
        with pytest.raises(ValueError) as want:
            np.ones(sa) @ np.ones(sb)
        with pytest.raises(vg.ShapeError) as got:
            vg.jit(lambda x, y: x @ y)(np.ones(sa), np.ones(sb))
        assert str(want.value) in str(got.value)


def test_shape_mismatch_in_reshape():
    def f(x):
        return vnp.reshape(x, (5, 2))  # <- error
    assert "(5, 2)" in raises(vg.ShapeError, f, A)


def test_shape_mismatch_in_einsum():
    def f(x):
        return vnp.einsum("ij,ij->i", x, x.T)  # <- error
    assert "ij,ij->i" in raises(vg.ShapeError, f, A)


def test_shape_mismatch_in_write():
    def f(x, y):
        buf = vnp.zeros((3, 4))
        buf[0] = y  # <- error
        return buf
    msg = raises(vg.ShapeError, f, A, B)
    assert "(2,)" in msg and "(4,)" in msg


def test_shape_mismatch_in_inplace_op():
    def f(x):
        buf = vnp.zeros((3, 1))
        buf += x  # <- error
        return buf
    assert "(3, 4)" in raises(vg.ShapeError, f, A)


def test_numpy_index_and_axis_errors_keep_their_type_and_name_the_line():
    """NumPy's IndexError / AxisError, as NumPy raises them, plus the user's line."""
    def row(x):
        return x[5]  # <- error
    def in_loop(x):
        s = 0.0
        for i in range(5):
            s = s + vnp.sum(x[i])  # <- error
        return s
    def axis(x):
        return vnp.sum(x, axis=2)  # <- error
    def take(x):
        return vnp.take(x, 7, axis=1)  # <- error
    assert "out of bounds" in raises(IndexError, row, A)
    assert "index 3 is out of bounds" in raises(IndexError, in_loop, A)
    assert "axis 2" in raises(np.exceptions.AxisError, axis, A)
    raises(IndexError, take, A)
    raises(IndexError, in_loop, A, call=lambda: vg.grad(in_loop)(A))


def test_an_index_error_the_function_catches_is_its_own():
    def f(x):
        s = 0.0
        for i in range(10):
            try:
                s = s + x[i]
            except IndexError:  # (stops at the end of x, as in NumPy)
                break
        return vnp.sum(s)
    assert np.allclose(vg.grad(f)(A), np.ones_like(A))


def test_runtime_warnings_and_errors_of_compiled_code_show_the_users_line():
    """A NumPy warning or error raised when the compiled code runs prints the generated line,
    shown with the user's line it computes (linecache, display only), and the source
    compiled holds no user text."""
    def f(x):
        return vnp.sum(vnp.log(x) * 2)  # <- error
    def g(a):
        return vnp.sum(vnp.linalg.inv(a))  # <- error
    x = np.array([1.0, -1.0, 2.0])
    for t in (vg.jit, vg.grad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t(f)(x)
        shown = [linecache.getline(r.filename, r.lineno) for r in w
                 if "invalid value" in str(r.message)]
        assert shown and marked_line(f) in shown[0], shown
    with pytest.raises(np.linalg.LinAlgError) as info:
        vg.jit(g)(np.zeros((3, 3)))
    frames = [linecache.getline(fr.filename, fr.lineno) for fr in
              traceback.extract_tb(info.value.__traceback__) if fr.filename.startswith("<vec")]
    assert any(marked_line(g) in ln for ln in frames), frames
    assert marked_line(g) not in vg.jit(g).entry(np.eye(3))[0].compiled.source


def test_shape_errors_are_value_errors():
    with pytest.raises(ValueError):
        vg.jit(lambda x, y: x * y)(A, B)


def test_traced_index_is_rejected():
    def f(x):
        return x[x[0, 0]]  # <- error
    msg = raises(vg.TraceError, f, A)
    assert "data-dependent" in msg


def test_repeated_indices_in_write_follow_numpy():
    def f(x):  # (no error: NumPy's last write wins, tests/test_scatter_writes.py)
        buf = vnp.zeros(4)
        buf[np.array([0, 0])] = x[0, :2]
        return buf
    np.testing.assert_array_equal(vg.jit(f)(A), f(A))


def test_escaped_tracer_is_rejected():
    leaked = []

    def f(x):
        leaked.append(x * 2)
        return x
    vg.jit(f)(A)

    def g(y):
        return y + leaked[0]  # <- error
    assert "outside the trace" in raises(vg.TraceError, g, A)


# ------------------------------------------------------------------------------- pytrees

def test_vjp_cotangent_structure_mismatch():
    _, vjp_fn = vg.vjp(lambda x: {"a": x, "b": (x[0], x[1])}, A)
    with pytest.raises(TypeError) as info:
        vjp_fn({"a": A, "b": A[0]})  # <- error
    msg = str(info.value)
    assert "structure" in msg and "'b'" in msg
    assert marked_line(test_vjp_cotangent_structure_mismatch) in msg


def test_vjp_cotangent_shape_mismatch():
    _, vjp_fn = vg.vjp(lambda x: x * 2, A)
    with pytest.raises(ValueError) as info:
        vjp_fn(np.ones(4))  # <- error
    msg = str(info.value)
    assert "(4,)" in msg and "(3, 4)" in msg
    assert marked_line(test_vjp_cotangent_shape_mismatch) in msg


def test_has_aux_without_a_pair():
    def f(x):  # <- error
        return vnp.sum(x)
    assert "pair" in raises(TypeError, f, call=lambda: vg.grad(f, has_aux=True)(A))


# ---------------------------------------------------------------------------- NaN and Inf

def test_nan_and_inf_propagate_like_numpy():
    x = np.array([[0.0, np.nan, np.inf], [-np.inf, 1.0, -1.0]])

    def f(xp, x):
        return (xp.exp(x) * 2, xp.log(xp.abs(x)), x / (x - 1.0), xp.max(x, axis=1),
                xp.sum(x * x), xp.maximum(x, 0.0), xp.tanh(x))
    with np.errstate(all="ignore"):
        want = f(np, x)
        got = vg.jit(lambda x: f(vnp, x))(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # NaNs in the same places, same infinities


def test_nan_and_inf_in_gradients():
    x = np.array([1.0, np.nan, np.inf, -2.0])
    with np.errstate(all="ignore"):
        g = vg.grad(lambda x: vnp.sum(x * 3.0))(x)
        g2 = vg.grad(lambda x: vnp.sum(x ** 2))(x)
        g3 = vg.grad(lambda x: vnp.sum(vnp.where(x > 0, x, 0.0)))(x)
    np.testing.assert_array_equal(g, [3.0, 3.0, 3.0, 3.0])
    np.testing.assert_array_equal(g2, [2.0, np.nan, np.inf, -4.0])
    np.testing.assert_array_equal(g3, [1.0, 0.0, 1.0, 0.0])


def test_a_scalar_type_of_a_traced_value_says_astype():
    def f(x):
        out = vnp.zeros(3, dtype=np.float32)
        for i in range(3):
            out[i] = np.float32(x[i]) * 2
        return out
    with pytest.raises(vg.errors.TracedIntoNumpyError, match=r"x.astype\(np.float32\)") as info:
        vg.jit(f)(np.arange(3.0))
    assert "test_errors.py:" in str(info.value)
    with pytest.raises(vg.errors.TracedIntoNumpyError, match=r"x.astype\(np.int8\)"):
        vg.jit(lambda x: np.int8(x) + 1)(np.arange(3.0))
