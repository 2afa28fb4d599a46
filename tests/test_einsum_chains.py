"""Contractions of three or more operands on the NumPy backend: NumPy's optimal path run as
two-operand contractions, each planned as `plan_einsum` plans pairs (backends/numpy/planner.py),
give np.einsum's values, shapes and dtypes, and the gradients through them are right."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
from vecgrad.backends.numpy.planner import plan_einsum

CASES = [
    ("ai,ij,aj->", [(300, 6), (6, 6), (300, 6)]),
    ("i,ij,j->", [(5,), (5, 5), (5,)]),
    ("ab,bc,cd->ad", [(7, 8), (8, 9), (9, 4)]),
    ("ab,bc,cd->da", [(7, 8), (8, 9), (9, 4)]),
    ("abc,cd,de->abe", [(3, 4, 5), (5, 6), (6, 2)]),
    ("ij,jk,kl,lm->im", [(3, 4), (4, 5), (5, 6), (6, 7)]),
    ("ai,bi,ci->abc", [(3, 4), (5, 4), (6, 4)]),
    ("ii,ij,j->", [(4, 4), (4, 5), (5,)]),  # (a diagonal read)
    ("ab,ab,ab->a", [(10, 3), (10, 3), (10, 3)]),
    ("a,b,c->", [(3,), (4,), (5,)]),
    ("ij,j,->i", [(3, 4), (4,), ()]),  # (a scalar operand)
    ("ak,bk,k,ck->abc", [(2, 3), (4, 3), (3,), (5, 3)]),
    ("abz,bcz,z->ac", [(3, 4, 2), (4, 5, 2), (2,)]),  # (a letter summed through every step)
    ("ij,jk,ki->", [(4, 5), (5, 6), (6, 4)]),  # (a trace of a product)
]


@pytest.mark.parametrize("spec,shapes", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
def test_planned_chains_are_numpys_einsum(spec, shapes, dtype):
    rng = np.random.default_rng(len(spec))
    xs = [(rng.standard_normal(s) * 3).astype(dtype) if dtype is not np.complex128 else
          rng.standard_normal(s) + 1j * rng.standard_normal(s) for s in shapes]
    got = plan_einsum(spec, shapes, [x.dtype for x in xs])(*xs)
    want = np.einsum(spec, *xs)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == want.dtype
    rtol = 1e-4 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_mixed_dtypes_promote_as_numpy_does():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((5, 4)),
          rng.standard_normal(4).astype(np.float32)]
    got = plan_einsum("ab,bc,c->a", [x.shape for x in xs], [x.dtype for x in xs])(*xs)
    want = np.einsum("ab,bc,c->a", *xs)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-6)


def bilinear_chain(X, A, B):
    return sum(np.einsum("i,ij,jk,k->", x, A, B, x) for x in X)


def test_gradient_through_a_four_operand_chain():
    rng = np.random.default_rng(1)
    X, A, B = rng.standard_normal((40, 5)), rng.standard_normal((5, 6)), \
        rng.standard_normal((6, 5))
    gX, gA, gB = vg.grad(bilinear_chain, argnums=(0, 1, 2))(X, A, B)
    M = A @ B
    np.testing.assert_allclose(gX, X @ (M + M.T), rtol=1e-10)
    np.testing.assert_allclose(gA, X.T @ X @ B.T, rtol=1e-10)
    np.testing.assert_allclose(gB, A.T @ X.T @ X, rtol=1e-10)
    np.testing.assert_allclose(vg.jit(bilinear_chain)(X, A, B), np.sum((X @ M) * X),
                               rtol=1e-12)
