"""linear_scan's plans (primitives/scanrun.py): the pairing over k x k matrices, with one
matmul a step where a single matrix serves every step and row, and the order written where a
product of many steps overflows; a single matrix and a small state in blocks (one product
with the matrix's powers a block).

Every plan is checked against the recurrence run as written in float64 (rtol 1e-9), through
the impl and through the NumPy backend's bound runner, on matrices that repeat or vary by
step and by row, rows that broadcast, few and many steps, and matrix products that overflow.
(An infinite input is not compared: the pairing and the loop meet inf - inf in different
steps, so their NaNs fall in different places, as before this plan.)
"""
from __future__ import annotations

import numpy as np
import pytest

from vecgrad import primitives as P
from vecgrad.ir import Aval
from vecgrad.primitives.scanrun import linear_runner

RTOL = 1e-9


def loop(init, A, b):
    """c[t] = A[t] @ c[t-1] + b[t], as written (an A of one step repeats), rows broadcast."""
    row = np.broadcast_shapes(init.shape[1:], A.shape[3:], b.shape[2:])
    k = b.shape[1]
    c = np.broadcast_to(init.reshape(init.shape[:1] + (1,) * (len(row) + 1 - init.ndim)
                                     + init.shape[1:]), (k,) + row).astype(np.float64)
    A = A.reshape(A.shape[:3] + (1,) * (len(row) + 3 - A.ndim) + A.shape[3:])
    out = []
    for t in range(b.shape[0]):
        M = A[t if A.shape[0] > 1 else 0]
        c = np.einsum("ij...,j...->i...", M, c) + b[t]
        out.append(np.broadcast_to(c, (k,) + row))
    return np.stack(out)


def both(init, A, b):
    got = P.linear_scan.impl(init, A, b)
    avals = [Aval(x.shape, x.dtype) for x in (init, A, b)]
    np.testing.assert_array_equal(linear_runner(*avals)(init, A, b), got)
    return got


CASES = [  # (init, A, b) shapes
    ((2,), (1, 2, 2), (2000, 2)),  # one matrix: a second-order filter's size
    ((3,), (1, 3, 3), (500, 3)),
    ((2,), (300, 2, 2), (300, 2)),  # a matrix per step
    ((2, 4), (1, 2, 2, 4), (200, 2, 4)),  # a matrix per row
    ((2, 1), (50, 2, 2, 3), (50, 2, 3)),
    ((2, 5), (1, 2, 2), (200, 2, 5)),  # one matrix, rows
    ((2, 1), (1, 2, 2, 1), (200, 2, 5)),
    ((1,), (1, 1, 1), (100, 1)),
    ((4,), (1, 4, 4), (64, 4)),
    ((2,), (1, 2, 2), (3, 2)),
    ((2,), (1, 2, 2), (1, 2)),
    ((2, 3), (7, 2, 2, 1), (7, 2, 1)),
    # one matrix, a small state, 64 steps or more: in blocks (2,000 and 5,000 steps: the
    # blocks' last states in blocks again), lengths that are no multiple of a block
    ((2,), (1, 2, 2), (1030, 2)),
    ((3, 2), (1, 3, 3), (5000, 3, 2)),
    ((2, 3), (1, 2, 2, 1), (2001, 2, 3)),
    ((1,), (1, 1, 1), (4099, 1)),
    ((6,), (1, 6, 6), (777, 6)),
    # the blocks' last states by one cached operator up to 256 rows (nb k), then blocks
    ((2,), (1, 2, 2), (2048, 2)),
    ((2,), (1, 2, 2), (2049, 2)),
    ((2,), (1, 2, 2), (20000, 2)),
]


@pytest.mark.parametrize("shapes", CASES, ids=str)
@pytest.mark.parametrize("kind", ["contracting", "rotation", "growth"])
def test_every_plan_is_the_recurrence_as_written(shapes, kind):
    ish, ash, bsh = shapes
    rng = np.random.default_rng(sum(ash) + len(bsh))
    init, b = rng.standard_normal(ish), rng.standard_normal(bsh)
    A = rng.uniform(-0.6, 0.6, ash) / ash[1] ** 0.5
    if kind == "rotation" and ash[1] == 2:  # (|eigenvalues| 1: nothing decays)
        th = rng.uniform(0, np.pi, ash[:1] + ash[3:])
        A = np.stack([np.stack([np.cos(th), -np.sin(th)], 1),
                      np.stack([np.sin(th), np.cos(th)], 1)], 1)
    elif kind == "growth":
        A = A * min(6.0, 1.0 + 300 / bsh[0])  # (growing, finite as written)
    with np.errstate(all="ignore"):
        want = loop(init, A, b)
        got = both(init, A, b)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-12 * np.abs(want).max())


def test_a_product_of_many_steps_that_overflows_runs_as_written():
    """The pairing squares the matrix eleven times for 2,000 steps: 1.4^2048 overflows, and
    inf times the growing component's zeros is NaN, while the states as written stay finite
    (that component is never fed): the order written runs instead."""
    T = 2000
    A = np.array([[[1.4, 0.0], [0.0, 0.5]]])
    b = np.zeros((T, 2))
    b[:, 1] = np.random.default_rng(0).standard_normal(T)
    with np.errstate(all="ignore"):
        want = loop(np.zeros(2), A, b)
        got = both(np.zeros(2), A, b)
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got, want, rtol=RTOL)


@pytest.mark.parametrize("T", [70, 1500])
def test_a_nan_reaches_only_the_steps_after_it(T):
    """A block's product multiplies later steps' b by zeros: a NaN there must not reach the
    steps before it (the blocks are skipped where b is not finite)."""
    rng = np.random.default_rng(T)
    A = rng.uniform(-0.5, 0.5, (1, 2, 2))
    b = rng.standard_normal((T, 2))
    b[T // 2 + 3, 1] = np.nan
    with np.errstate(all="ignore"):
        want = loop(np.zeros(2), A, b)
        got = both(np.zeros(2), A, b)
    assert np.isfinite(got[:T // 2 + 3]).all()
    np.testing.assert_allclose(got, want, rtol=RTOL)


def test_powers_that_overflow_leave_the_blocks():
    """M^16 overflows (entries of 1e30): the blocks are not used; the pairing, then the
    order written, give the states as written (finite for 6 steps, then inf)."""
    A = np.array([[[1e20, 0.0], [0.0, 0.5]]])
    b = np.zeros((80, 2))
    b[:, 1] = 1.0
    with np.errstate(all="ignore"):
        want = loop(np.zeros(2), A, b)
        got = both(np.zeros(2), A, b)
    np.testing.assert_allclose(got, want, rtol=RTOL)


def test_operators_cached_by_matrix_serve_only_their_matrix():
    """The block operators are cached by the matrix's bytes: matrices of one shape that
    alternate (a learned coefficient changing between calls) each get their own."""
    rng = np.random.default_rng(7)
    b = rng.standard_normal((1500, 2))
    for s in [0.3, 0.5, 0.3, -0.4, 0.5]:
        A = np.array([[[s, -0.25], [1.0, 0.0]]])
        np.testing.assert_allclose(both(np.zeros(2), A, b), loop(np.zeros(2), A, b),
                                   rtol=RTOL, atol=1e-12)


def test_complex_matrices_in_blocks():
    """A rotation written in complex numbers (one state, |a| = 1) runs in blocks too."""
    rng = np.random.default_rng(8)
    A = np.exp(1j * np.array([[[[0.3]]]])).reshape(1, 1, 1)
    b = rng.standard_normal((3000, 1)) + 1j * rng.standard_normal((3000, 1))
    init = np.zeros(1, complex)
    got = both(init, A, b)
    want = np.empty_like(b)
    c = 0j
    for t in range(3000):
        c = want[t, 0] = A[0, 0, 0] * c + b[t, 0]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("a,T", [(1.5, 2000), (-1.3, 3000), (1.2, 5000)])
def test_blocks_whose_last_states_overflow_run_as_written(a, T):
    """M^16 is finite but the blocks' last states' operator ((M^16)^n up to n = T / 16)
    overflows: the one-value rows path hands over to the pairing and the order written (it
    raised FloatingPointError), giving the states as written (finite, then inf)."""
    A = np.array([[[a]]])
    b = np.random.default_rng(T).standard_normal((T, 1))
    with np.errstate(all="ignore"):
        want = loop(np.zeros(1), A, b)
        got = both(np.zeros(1), A, b)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=RTOL, atol=1e-12 * np.abs(want[fin]).max())
