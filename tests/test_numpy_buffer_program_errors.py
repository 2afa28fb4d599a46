"""The program's own error behind a NumPy buffer (staging.with_numpy_buffers). A trace that
stores a traced value into np.zeros / np.empty runs again with vecgrad buffers; where that
run then reaches an error of the program itself (an index out of bounds, a value of the wrong
shape for the slot written), which NumPy raises too when it runs the program, that error is
reported at the user's line, not the first run's TracedIntoNumpyError (which told the user to
use vnp.zeros, which they had in effect). Errors the buffers may cause keep the first error."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import vecgrad as vg
from vecgrad.errors import ShapeError, TracedIntoNumpyError


def write_past_end(x):
    buf = np.zeros(3)
    for i in range(4):
        buf[i] = x[i] * 2  # LINE write_past_end
    return buf.sum()


def read_past_end(x):
    buf = np.zeros(4)
    for i in range(4):
        buf[i] = x[i + 1] * 2  # LINE read_past_end
    return buf.sum()


def result_past_end(x):
    out = np.empty(4)
    for i in range(4):
        out[i] = np.sin(x[i])
    return out[4]  # LINE result_past_end


def rows_past_end(X):
    out = np.zeros((2, X.shape[1]))
    for i in range(X.shape[0]):
        out[i] = np.tanh(X[i])  # LINE rows_past_end
    return np.sum(out)


def slice_into_scalar(x):
    buf = np.zeros(3)
    for i in range(3):
        buf[i] = x[i:i + 2]  # LINE slice_into_scalar
    return buf.sum()


def wrong_row_width(x):
    buf = np.zeros((3, 2))
    for i in range(3):
        buf[i] = x[i:i + 3]  # LINE wrong_row_width
    return buf.sum()


PROGRAMS = {
    "write_past_end": (write_past_end, IndexError, "out of bounds"),
    "read_past_end": (read_past_end, IndexError, "out of bounds"),
    "result_past_end": (result_past_end, IndexError, "out of bounds"),
    "rows_past_end": (rows_past_end, IndexError, "out of bounds"),
    "slice_into_scalar": (slice_into_scalar, ShapeError, "broadcast"),
    "wrong_row_width": (wrong_row_width, ShapeError, "broadcast"),
}


def _line(name: str) -> int:
    with open(__file__) as fh:
        return next(k for k, s in enumerate(fh, 1) if s.rstrip().endswith(f"# LINE {name}"))


def _args(name):
    r = np.random.default_rng(3)
    if name == "rows_past_end":
        return (r.standard_normal((4, 3)),)
    return (r.standard_normal(4 if name == "read_past_end" else 5),)


WRAPS = {
    "direct": lambda f: f,
    "lambda": lambda f: (lambda *a: f(*a)),
    "partial": lambda f: functools.partial(f),
}


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_programs_own_error_at_its_line(name, wrap):
    f, kind, words = PROGRAMS[name]
    args = _args(name)
    with pytest.raises(Exception) as numpy_run:  # (NumPy raises it running the program)
        f(*args)
    assert isinstance(numpy_run.value, (IndexError, ValueError))
    for transform in (vg.grad, vg.jit):
        with pytest.raises(kind) as got:
            transform(WRAPS[wrap](f))(*args)
        assert not isinstance(got.value, TracedIntoNumpyError)
        assert words in str(got.value)
        assert f"{__file__.rsplit('/', 1)[-1]}:{_line(name)}" in str(got.value)


def test_a_program_without_the_error_still_runs():
    def fine(x):
        buf = np.zeros(4)
        for i in range(4):
            buf[i] = x[i] * 2
        return np.sum(np.sin(buf))
    x = np.random.default_rng(4).standard_normal(5)
    np.testing.assert_allclose(vg.grad(fine)(x)[:4], 2 * np.cos(2 * x[:4]), rtol=1e-12)


def test_a_module_level_numpy_array_keeps_the_store_error():
    def into_global(x):
        GLOBAL[0] = x[0]
        return x.sum()
    with pytest.raises(TracedIntoNumpyError):
        vg.grad(into_global)(np.ones(3))


GLOBAL = np.zeros(3)
