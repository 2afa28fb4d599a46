"""The NumPy backend builds a stack along the first axis with np.array (backends/numpy/
structural._stack): a few scalars assembled into a vector, in every step of a rolled loop or
every call of a small nested gradient, cost np.stack's per-operand checks (3-8 us) many times
over. Same values, dtype, shape and memory layout as np.stack for every shape, dtype mix and
axis; inside loops, batched and differentiated as before."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends.numpy.table import lower
from vecgrad.ir import Aval

CASES = [((), ("float64",) * 3), ((), ("float32", "float32")), ((), ("int64", "float32")),
         ((), ("bool", "bool", "bool")), ((4,), ("float64", "float64")),
         ((2, 3), ("float32", "int32", "float64")), ((0,), ("float64",) * 2),
         ((1,), ("int8", "uint8"))]


@pytest.mark.parametrize("shape,dtypes,axis",
                         [(s, d, a) for s, d in CASES for a in range(len(s) + 1)])
def test_the_lowering_is_np_stack(shape, dtypes, axis):
    r = np.random.default_rng(len(shape) + axis)
    xs = [np.asarray(r.standard_normal(shape) * 3).astype(d) for d in dtypes]
    fn = lower(P.stack, {"axis": axis}, [Aval(shape, np.dtype(d)) for d in dtypes])
    want = np.stack(xs, axis)
    for args in (xs, [x[()] if not shape else x for x in xs]):  # arrays, NumPy scalars
        got = fn(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.flags["C_CONTIGUOUS"] == want.flags["C_CONTIGUOUS"]
        np.testing.assert_array_equal(got, want)


def test_the_result_owns_its_memory():
    xs = [np.arange(3.0), np.arange(3.0, 6.0)]
    got = lower(P.stack, {"axis": 0}, [Aval((3,), np.dtype("float64"))] * 2)(*xs)
    got[0, 0] = 99.0
    assert xs[0][0] == 0.0


def polar_steps(a, x0):
    """A vector assembled from scalars in each step of a loop (rolled) and outside it."""
    x = x0
    for _ in range(30):
        r = np.sqrt(x[0] ** 2 + x[1] ** 2)
        x = x + 0.05 * np.stack([np.cos(a * r) * x[1], -np.sin(a * r) * x[0]])
    return np.sum(np.stack([x[0], x[1], x[0] * x[1]]) ** 2)


def test_a_compiled_program_with_stacks_matches_numpy_and_its_gradient():
    args = (np.float64(0.7), np.array([0.4, -0.3]))
    np.testing.assert_allclose(vg.jit(polar_steps)(*args), polar_steps(*args), rtol=1e-12)
    vg.check_grads(polar_steps, args, argnums=(0, 1), rtol=1e-6, atol=1e-8)


def test_a_batched_stack_of_rows_matches_numpy():
    def f(A):
        return vnp.sum(vnp.stack([vnp.stack([A[i, 0], A[i, 1] * 2.0]) for i in range(A.shape[0])])
                       ** 3)
    A = np.random.default_rng(3).standard_normal((6, 2))
    want = np.sum(np.stack([A[:, 0], 2.0 * A[:, 1]], axis=1) ** 3)
    np.testing.assert_allclose(vg.jit(f)(A), want, rtol=1e-12)
    vg.check_grads(f, (A,), rtol=1e-6, atol=1e-8)
