"""Buffers made by plain NumPy (np.zeros, np.empty, np.ones, np.full and their *_like, through
`np.`, `numpy.` or imported by name) and written with traced values: the trace that fails
storing a traced value into a NumPy array runs again with them made as vecgrad buffers
(numpy/_buffers.py). NumPy's values and dtypes, gradients that match central differences,
the batched graph equal to the unbatched one; what still cannot be traced keeps its typed
error at the user's line; the module's globals are restored."""
from __future__ import annotations

import numpy
import numpy as np
import pytest
from numpy import empty, zeros
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import TracedIntoNumpyError

R = np.random.default_rng(5)
GLOBAL_BUF = np.zeros(4)


def row_norms(X):
    out = np.zeros(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = np.sum(X[i] ** 2)
    return out


def tanh_rows(X):
    buf = np.empty_like(X)
    for i in range(X.shape[0]):
        buf[i] = np.tanh(X[i])
    return buf


def by_name(X):
    out = zeros((X.shape[0], 2), dtype=np.float32)
    for i in range(X.shape[0]):
        out[i, 0] = X[i, 0]
        out[i, 1] = X[i].max()
    return out


def full_recurrence(X):
    out = numpy.full(X.shape[0], 1.5)
    for i in range(1, X.shape[0]):
        out[i] = out[i - 1] * 0.5 + X[i, 0]
    return out


def int_buffer(X):
    out = np.zeros(3, dtype=int)
    out[0] = X.shape[0]
    out[1] = np.argmax(X[0])
    out[2] += np.argmin(X[1])
    return out


def like_with_shape(X):
    out = np.zeros_like(X[0], shape=(5,))
    out[:3] = X[0] * 2.0
    out[3:] = np.ones_like(GLOBAL_BUF[:2]) * X[1, 0]
    return out


def ones_columns(X):
    out = np.ones((X.shape[1], X.shape[0]))
    for j in range(X.shape[1]):
        out[j] *= np.exp(X[:, j])
    return out


def per_sample_buffers(X):
    rows = []
    for x in X:
        b = empty(4)
        b[0], b[1] = x[0], x[1] * x[2]
        b[2:] = np.cumsum(x[:2])
        rows.append(b)
    return np.stack(rows)


def _helper(x):
    acc = np.zeros(2)
    acc[0] = x.sum()
    acc[1] = x.prod()
    return acc


def through_helper(X):
    return np.array([_helper(x) for x in X]).sum(axis=0)


def float32_accumulates(X):
    acc = np.zeros(X.shape[1], np.float32)
    for x in X:
        acc += x  # (float64 values added into a float32 buffer: float32, as NumPy)
    return acc


PROGRAMS = [row_norms, tanh_rows, by_name, full_recurrence, int_buffer, like_with_shape,
            ones_columns, per_sample_buffers, through_helper, float32_accumulates]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_numpy_buffers_written_with_traced_values_are_numpys(f):
    X = R.standard_normal((6, 3))
    assert_same(vg.jit(f)(X), f(X), rtol=1e-12)
    assert np.zeros is numpy.zeros and globals()["np"] is numpy and zeros is numpy.zeros
    got = f(X)
    if got.dtype != np.float64:  # (float32 results: no float64 central differences)
        return
    w = R.standard_normal(got.shape)

    def loss(X):
        return (f(X) * w).sum()
    vg.check_grads(loss, (X,), rtol=1e-6, atol=1e-8)
    e, leaves = entry(loss, (X,))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


def writes_global(X):
    for i in range(4):
        GLOBAL_BUF[i] = X[i, 0]
    return GLOBAL_BUF.sum()


def numpy_scalar(X):
    out = np.zeros(2)
    out[0] = np.float32(X[0, 0])
    return out


@pytest.mark.parametrize("f", [writes_global, numpy_scalar], ids=lambda f: f.__name__)
def test_what_a_buffer_does_not_cure_keeps_its_error_at_the_users_line(f):
    with pytest.raises(TracedIntoNumpyError, match="test_numpy_buffers.py"):
        vg.jit(f)(R.standard_normal((6, 3)))
    assert globals()["np"] is numpy and np.zeros is numpy.zeros and GLOBAL_BUF.sum() == 0


def test_numpy_keywords_of_the_creation_functions():
    """order=, like=None, device='cpu', shape= (the *_like), fill_value= by keyword."""
    def f(X):
        a = np.zeros((2, 3), order="F")
        b = np.full(shape=3, fill_value=2, dtype=np.int32)
        c = np.empty_like(X, shape=(2,), dtype=np.float32)
        d = np.full_like(X[0], 7.0, shape=(3,))
        a[0] = X[0]
        c[:] = X[1, :2]
        d[1] = X[0, 0]
        return a, b, c, d
    X = R.standard_normal((2, 3))
    for got, want in zip(vg.jit(f)(X), f(X)):
        assert_same(got, want, rtol=1e-15)


_OTHER = {"np": np}  # (another module's globals: a model defined there, passed in)
exec("def model(x):\n    h = np.zeros(2)\n    h[0] = x.sum()\n    h[1] = x.max()\n"  # noqa: S102
     "    return h", _OTHER)


def test_a_function_closed_over_from_another_module_makes_buffers_too():
    model = _OTHER["model"]

    def loss(X):
        return sum(np.sum(model(x) ** 2) for x in X)
    X = R.standard_normal((5, 3))
    assert_same(vg.jit(loss)(X), loss(X), rtol=1e-12)
    vg.check_grads(loss, (X,), rtol=1e-6, atol=1e-8)
    assert _OTHER["np"] is numpy


def test_explain_traces_numpy_buffers_as_jit_does():
    X = R.standard_normal((6, 3))
    report = vg.explain(lambda X: row_norms(X).sum(), X)
    assert "Not batched" in str(report) or report is not None
    assert np.zeros is numpy.zeros


def arange_buffer(X):
    o = np.arange(X.shape[1])
    for i in range(X.shape[1]):
        o[i] = o[i] // 2 + (X[0, i] > 0)
    return o


def linspace_buffer(X):
    b = np.linspace(0.0, 1.0, X.shape[1])
    b[1:] += X[1, 1:] * 2.0
    e = np.eye(X.shape[1])
    e[0] = X[2]
    return b, e


def vnp_arange_buffer(X):
    o = vnp.arange(float(X.shape[1]))  # (vecgrad.numpy's: a NumPy array, made a buffer too)
    o[1] = X[0, 0] * 3.0
    return o


@pytest.mark.parametrize("f", [arange_buffer, linspace_buffer, vnp_arange_buffer],
                         ids=lambda f: f.__name__)
def test_constant_arrays_written_with_traced_values_are_numpys(f):
    X = R.standard_normal((4, 3))
    want = f(X) if f is not vnp_arange_buffer else np.array([0.0, X[0, 0] * 3.0, 2.0])
    got = vg.jit(f)(X)
    for a, b in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert_same(a, b, rtol=1e-13)
    assert np.arange is numpy.arange and vnp.arange(2).__class__ is np.ndarray


def iterates_an_arange(X):
    buf = np.zeros(3)
    for i in np.arange(3):  # (a buffer on the retry: traced i, then a branch on it)
        if i > 0:
            buf[i] = X[0, i]
    return buf


def test_a_retry_that_fails_otherwise_keeps_the_first_error():
    with pytest.raises(TracedIntoNumpyError, match="test_numpy_buffers.py"):
        vg.jit(iterates_an_arange)(R.standard_normal((4, 3)))


def int_adds_floats(X):
    acc = np.zeros(X.shape[1], dtype=int)
    acc += X[0]
    return acc


def int32_scaled(X):
    out = np.ones((2, X.shape[1]), dtype=np.int32)
    out *= X[:2] * 1.5
    return out


def full_int_slice(X):
    out = np.full(X.shape[1], 3)
    out[1:] -= X[0, 1:]
    return out


def bool_ored(X):
    out = np.zeros(X.shape[1], dtype=bool)
    out |= X[0] * 2.0 > 0  # (bool | bool: fine in NumPy; the next line is not)
    out += X[1]
    return out


@pytest.mark.parametrize("f", [int_adds_floats, int32_scaled, full_int_slice, bool_ored],
                         ids=lambda f: f.__name__)
def test_an_int_buffer_updated_in_place_with_floats_raises_numpys_casting_error(f):
    """NumPy's UFuncTypeError (a TypeError): vecgrad's CastingError at the same line, not
    the first trace's TracedIntoNumpyError."""
    X = R.standard_normal((6, 3))
    with pytest.raises(TypeError) as want:
        f(X)
    with pytest.raises(vg.errors.CastingError, match="test_numpy_buffers.py") as got:
        vg.jit(f)(X)
    assert isinstance(want.value, np._core._exceptions.UFuncTypeError)
    assert str(want.value).split(" with casting")[0] in str(got.value)


def item_writes(X):
    acc = np.zeros(X.shape[1], dtype=int)
    for j in range(X.shape[1]):
        acc[j] += X[0, j] * 3  # (a NumPy scalar sum written back: cast, as NumPy's write)
    return acc


def test_item_updates_of_an_int_buffer_are_numpys():
    X = R.standard_normal((6, 3))
    assert_same(vg.jit(item_writes)(X), item_writes(X), rtol=0)
