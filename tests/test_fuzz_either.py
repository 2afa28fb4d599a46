"""Python's max / min of traced values and Python numbers (pybuiltins.EitherScalar) where
NumPy makes an array of it, or computes with it in a wider dtype: no silent wrong dtype or
value (tests/fuzz_either.py's programs, and the regressions it found in session 24).

CI runs VECGRAD_FUZZ_EITHER seeded programs (default 60: seconds). Thousands, locally:

    nice .venv/bin/python tests/fuzz_either.py 5000 0
"""
from __future__ import annotations

import os
import random
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from conftest import central_diff_check
from fuzz_either import check, program

import vecgrad as vg
import vecgrad.numpy as vnp

SEEDS = int(os.environ.get("VECGRAD_FUZZ_EITHER", "60"))


def test_fuzz_either_seeded():
    """SEEDS programs (3 value sets x 2 values of n each): equal to NumPy or refused."""
    warnings.simplefilter("ignore")
    r, bad = random.Random(24), []
    for _ in range(SEEDS):
        dt, expr = program(r)
        ns = r.choice([(3, -5), (0.25, 7.5)])
        res = check(dt, expr, ns)
        if not res.startswith(("ok", "refused")):
            bad.append(f"{res}\n    v: {dt}, n={ns}: {expr}")
    assert not bad, "\n".join(bad)


V32 = np.array([1.5, -2.0, 3.0], np.float32)
ENV = {"np": np, "x64": np.array([0.5, 2.0]), "i8": np.array([1, 2], np.int8)}


def _run(expr: str, v: np.ndarray, n=3):
    f = eval(f"lambda v, n: {expr}", ENV)
    return f, f(v, n)


# NumPy's dtype (or value) differs with which item wins: each was a silent wrong answer
REFUSED = [
    "np.array([max(v[1], 0.0), v[1]])",  # float32 where 0.0 wins: float64
    "np.array([max(v[1], 0.0)])", "np.array(max(v[1], 0.0))", "np.asarray([v[0], min(v[1], 0.0)])",
    "np.mean([max(v[1], 0.0), v[1]])", "np.sum(max(v[1], 0.0))", "np.reshape(max(v[1], 0.0), (1,))",
    "np.atleast_1d(max(v[1], 0.0)) + 0.5", "np.hstack([max(v[0], 2.0), np.int8(3)])",
    "np.clip(max(-1, v[1], v[0]), -1, 1) * np.int8(3)", "np.dot([max(v[0], 0.0), v[1]], [1.0, 2.0])",
    "np.linalg.norm([max(v[0], 0.0), v[1]])", "np.cumsum([max(v[0], 2.0), v[1]])",
    # 0.1 is not exact in float32: NumPy computes with 0.1 itself in float64
    "max(v[1], 0.1) + x64", "max(v[1], 0.1) * 3.0 + x64", "np.float64(1) * max(v[1], 0.1)",
    "np.stack([max(v[1], 0.1), x64[0]])", "np.array([max(v[1], 0.1)], dtype=np.float64)",
    "max(v[1], 0.5) * 0.1 + x64", "np.asarray(max(v[1], 0.1), np.float64)",
]
# every case gives NumPy one dtype, and the number is exact: NumPy's value
AGREE = [
    "np.array([max(v[1], 0.5), v[1]], dtype=np.float32)", "max(v[1], 0.5) + x64",
    "np.stack([max(v[1], 0.5), x64[0]])", "np.array([max(v[1], 0.1), v[0]], dtype=np.float32)",
    "max(v[1], 0.1) + v", "np.asarray(max(v[1], 0.25), np.float64) * x64",
    "np.mean([max(v[0], 0.5), x64[0]])", "np.array([max(v[1], 0.5), x64[1]]).sum() * v[2]",
    "np.stack([max(v[0], 0.5), np.float64(2)])", "max(v[1], 2.0) * np.float64(1.5)",
    "np.linalg.norm([max(v[0], 0.0), 2])",
]


@pytest.mark.parametrize("expr", REFUSED)
def test_either_made_an_array_or_widened_is_refused(expr):
    """`np.array([max(x32[i], 0.0), x32[j]])` was float32 where NumPy's is float64 (0.0 won),
    np.sum / np.reshape / np.atleast_1d / np.clip of it kept float32 (NumPy makes the number
    an int64 / float64 array), and `max(x32[i], 0.1) + x64` added float32(0.1) where NumPy
    adds 0.1: each is now a TraceError naming np.maximum / np.minimum (found by
    tests/fuzz_either.py's array constructors and inexact numbers)."""
    for v in (V32, -V32):
        f, _ = _run(expr, v)
        with pytest.raises(vg.TraceError, match=r"np\.(maximum|minimum)") as e:
            vg.jit(f)(v, 3)
        assert "<string>" in str(e.value) or "test_fuzz_either" in str(e.value)


@pytest.mark.parametrize("expr", AGREE)
def test_either_where_every_case_agrees_is_numpys(expr):
    """Where every case gives one dtype and the number is exact in the fold's dtype, or the
    result is cast to that dtype, the value is NumPy's whichever item wins; its gradient is
    the central differences' (float64 inputs)."""
    for v in (V32, -V32, np.full(3, 0.5, np.float32)):
        f, want = _run(expr, v)
        got = vg.jit(f)(v, 3)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    x = np.array([1.5, -2.0, 3.0])
    g = eval(f"lambda v: {expr}", ENV)
    if np.asarray(g(x)).dtype == np.float64:  # (not of a cast to float32)
        central_diff_check(lambda x: vnp.sum(g(x)), [x], argnums=(0,))


@pytest.mark.parametrize("n", [0.25, 3.5, 7.5])
def test_max_of_a_traced_python_float_and_an_int_with_an_int_array(n):
    """`max(n, 2) + i8` with n a Python float argument is int8 where 2 wins and float64 where
    n does: one compiled function gave int8 for both (4 instead of 4.5, silently). The
    dtype of such an either value weighs every case: a different winner traces again, or
    the operation is refused."""
    f = jf = None
    f = eval("lambda n: max(n, 2) + i8", ENV)
    jf = vg.jit(f)
    for m in (n, 0.5, 9.5):
        want = f(m)
        try:
            got = jf(m)
        except vg.TraceError:
            continue
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_either_in_an_inner_trace_stays_either():
    """An either value of an enclosing trace used inside an inner one (a nested vg.grad)
    stays either there, with its checks (lifting it crashed: it was rebuilt as a
    WeakScalar's kind)."""
    def f(x):
        m = max(x[0], 2)  # a float64 or the Python int 2
        return vg.grad(lambda y: vnp.sum(y * y * m))(x)

    def g(x):
        m = max(x[0], 2)  # (np.reshape makes the int 2 an int64 array)
        return vg.grad(lambda y: vnp.sum(np.reshape(m, (1,)).astype(y.dtype) * y) +
                       vnp.sum(np.reshape(m, (1,))))(x)
    for x in (np.array([1.5, -2.0, 3.0]), np.array([3.5, -2.0, 3.0])):
        np.testing.assert_allclose(vg.jit(f)(x), 2 * x * max(x[0], 2))
        with pytest.raises(vg.TraceError, match=r"np\.maximum"):
            vg.jit(g)(x)
