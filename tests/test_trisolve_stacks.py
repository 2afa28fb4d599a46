"""Stacks of small triangular systems solved by substitution (primitives/matrix.py): the same
solutions as np.linalg.solve on the triangle (lower or upper, transposed or not, unit
diagonal or not), its LinAlgError on a zero pivot, its dtypes, and the gradients that go
through it (cholesky's VJP is two such solves)."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
from vecgrad import primitives as P
from vecgrad.primitives.matrix import SUBST_ORDER, SUBST_STACK


def tri(a, lower, trans, unit):
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    return np.swapaxes(t, -1, -2) if trans else t


@pytest.mark.parametrize("n", [1, 2, 4, 7, SUBST_ORDER])
@pytest.mark.parametrize("lower,trans,unit", [(True, False, False), (True, True, False),
                                              (False, False, False), (False, True, True),
                                              (True, False, True)])
def test_substitution_solves_as_numpy_does(n, lower, trans, unit):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((SUBST_STACK, n, n)) + 4 * np.eye(n)  # (garbage off the triangle)
    b = rng.standard_normal((SUBST_STACK, n, 3))
    got = P.triangular_solve.impl(a, b, lower=lower, trans=trans, unit_diagonal=unit)
    np.testing.assert_allclose(got, np.linalg.solve(tri(a, lower, trans, unit), b),
                               rtol=1e-9, atol=1e-12)


def test_two_batch_axes_complex_and_float32():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 9, 4, 4)) + 1j * rng.standard_normal((8, 9, 4, 4)) + 4 * np.eye(4)
    b = rng.standard_normal((8, 9, 4, 2))
    got = P.triangular_solve.impl(a, b, lower=True, trans=True, unit_diagonal=False)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, np.linalg.solve(tri(a, True, True, False), b), rtol=1e-9)
    a32, b32 = a.real.astype(np.float32), b.astype(np.float32)
    got = P.triangular_solve.impl(a32, b32, lower=False, trans=False, unit_diagonal=False)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.linalg.solve(tri(a32, False, False, False), b32),
                               rtol=1e-4)
    ai, bi = np.tile(np.eye(3, dtype=np.int64) * 2, (70, 1, 1)), np.ones((70, 3, 1), np.int64)
    got = P.triangular_solve.impl(ai, bi, lower=True, trans=False, unit_diagonal=False)
    assert got.dtype == np.float64 and np.allclose(got, 0.5)


def test_a_zero_pivot_raises_as_numpy_does():
    a = np.tile(np.tril(np.ones((4, 4))), (100, 1, 1))
    a[37, 2, 2] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        P.triangular_solve.impl(a, np.ones((100, 4, 1)), lower=True, trans=False,
                                unit_diagonal=False)
    # (a unit diagonal is never read: the same stack solves)
    x = P.triangular_solve.impl(a, np.ones((100, 4, 1)), lower=True, trans=False,
                                unit_diagonal=True)
    assert np.isfinite(x).all()


def logdets(A):
    return sum(2 * np.sum(np.log(np.diag(np.linalg.cholesky(a @ a.T + np.eye(a.shape[0])))))
               for a in A)


def test_cholesky_gradient_over_a_stack_matches_central_differences():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((80, 4, 3))
    g = vg.grad(logdets)(A)
    ref = lambda A: np.sum(np.linalg.slogdet(A @ np.swapaxes(A, 1, 2) + np.eye(4))[1])
    # (d logdet(A A^T + I) / dA = 2 (A A^T + I)^-1 A, in closed form)
    want = 2 * np.linalg.solve(A @ np.swapaxes(A, 1, 2) + np.eye(4), A)
    np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12)
    u = rng.standard_normal(A.shape)
    fd = (ref(A + 1e-6 * u) - ref(A - 1e-6 * u)) / 2e-6
    np.testing.assert_allclose(np.vdot(g, u), fd, rtol=1e-6)
