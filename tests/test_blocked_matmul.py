"""Skinny matrix products past the cache run in blocks (backends/numpy/blocked.py): a long
matrix times a narrow one by row blocks, two short ones over a long contracted axis by
blocks of it summed; equal to np.matmul for float64,
float32 and complex (to rounding: BLAS rounds a row at a block's edge its own way), for
transposed and strided views, below and above the threshold, and through the planner's
einsum and a compiled gradient."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad.numpy as vnp
from vecgrad.backends.numpy import blocked
from vecgrad.backends.numpy.planner import plan_einsum


def _arr(r, shape, dtype):
    a = r.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * r.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("m,k,n", [(20000, 16, 8), (7200, 40, 5), (9000, 24, 32),
                                   (20001, 9, 4)])
def test_rows_blocked_equal_matmul(m, k, n, dtype):
    r = rng(1)
    m *= 8 // min(8, np.dtype(dtype).itemsize)  # (the threshold is in bytes)
    x, y = _arr(r, (m, k), dtype), _arr(r, (k, n), dtype)
    got = blocked.matmul_blocked(x, y)
    assert got is not None and got.dtype == (x @ y).dtype
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, x @ y, rtol=tol, atol=tol)  # (BLAS's kernels round
    # a row's dot product differently at a block's edge)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("m,k,n", [(8, 7200, 40), (16, 20000, 8), (9, 30001, 11)])
def test_inner_blocked_equal_matmul(m, k, n, dtype):
    r = rng(2)
    k *= 8 // min(8, np.dtype(dtype).itemsize)
    x = _arr(r, (k, m), dtype).T  # (a transposed view: the weight gradient's x.T @ y)
    y = _arr(r, (k, n), dtype)
    got = blocked.matmul_blocked(x, y)
    assert got is not None
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, x @ y, rtol=tol, atol=10 * tol * np.sqrt(k))


@pytest.mark.parametrize("m,k,n", [(3000, 40, 8), (7200, 16, 64), (64, 8, 8),
                                   (8, 3000, 40), (100, 20000, 100), (1, 96000, 1),
                                   (90000, 16, 1), (4, 40000, 32)])
def test_one_product_where_blocks_do_not_pay(m, k, n):
    # below a megabyte, a wide narrow operand, both sides long, a matrix-vector or a dot
    # product (one pass over memory either way): one BLAS call
    x, y = np.ones((m, k)), np.ones((k, n))
    assert blocked.matmul_blocked(x, y) is None


def test_strided_rows():
    # every other row of a larger array (a view BLAS reads at a stride)
    r = rng(3)
    big = r.standard_normal((40000, 20))
    x, y = big[::2, 2:18], r.standard_normal((16, 8))
    np.testing.assert_allclose(blocked.matmul_blocked(x, y), x @ y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spec,shapes", [
    ("dabc,bcf->daf", [(900, 8, 5, 8), (5, 8, 8)]),
    ("daf,dabc->bcf", [(900, 8, 8), (900, 8, 5, 8)]),
    ("ik,kj->ij", [(30000, 12), (12, 16)]),
])
def test_planner_einsum_equal(spec, shapes):
    r = rng(4)
    xs = [r.standard_normal(s) for s in shapes]
    np.testing.assert_allclose(plan_einsum(spec, shapes)(*xs), np.einsum(spec, *xs),
                               rtol=1e-12, atol=1e-10)


def dense_rows(x, W):
    # a dense layer over 6,000 positions' 40 features, into 8 outputs
    return vnp.sum(vnp.tanh(x @ W))


def test_gradient_through_blocked_products():
    r = rng(5)
    check(dense_rows, (r.standard_normal((6000, 40)), r.standard_normal((40, 8)) * 0.2),
          (0, 1))
