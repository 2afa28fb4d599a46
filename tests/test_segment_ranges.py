"""Work on disjoint row ranges of several lengths (CSR rows through a static `indptr`, packed
segments `x[lo:hi]`): batch/listmaps.py takes the ranges as lists, so each read is a tile of
one slice (or one gather when the ranges leave gaps or come out of order), reads through a
traced index array taken at the range (`x[indices[lo:hi]]`) are one gather, and dots, sums,
maxima and softmaxes over each range are one segment reduction. Batched equals unbatched
(values and VJPs), gradients match central differences, and the batched graph holds one
gather and one segment sum, not one per range. Overlapping ranges (windows) are left alone."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(21)


def indptr_of(lengths):
    return [0] + [int(v) for v in np.cumsum(lengths)]


def csr_matvec(vals, x, indices, indptr):
    n = len(indptr) - 1
    y = vnp.zeros(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        y[i] = vals[lo:hi] @ x[indices[lo:hi]]
    return np.sum(np.tanh(y) ** 2)


def csr_matmat(vals, X, indices, indptr):
    rows = []
    for i in range(len(indptr) - 1):
        lo, hi = indptr[i], indptr[i + 1]
        rows.append(vals[lo:hi] @ X[indices[lo:hi]])
    return np.sum(np.sin(vnp.stack(rows)) * X[: len(rows)])


def segment_stats(x, bounds):
    # per-segment max, mean and a softmax-weighted sum, over ranges with gaps, out of order
    tot = 0.0
    for lo, hi in bounds:
        s = x[lo:hi]
        p = np.exp(s - np.max(s))
        tot = tot + np.sum(p / np.sum(p) * s) + np.mean(s) * np.max(s)
    return tot


def overlapping(x, bounds):
    return sum(np.sum(np.sin(x[lo:hi]) ** 2) * (hi - lo) for lo, hi in bounds)


def test_csr_rows_are_one_gather_and_one_segment_sum():
    lens = [3, 1, 4, 1, 5, 2, 6, 1]
    indptr = indptr_of(lens)
    nnz = indptr[-1]
    args = (R.standard_normal(nnz), R.standard_normal(len(lens)),
            R.integers(0, len(lens), nnz), indptr)
    e = check_batched(csr_matvec, args, argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.take_along) == 1 and count(g, P.segment_sum) == 1, g
    assert count(g, P.einsum) == 1, g


def test_csr_rows_of_a_matrix():
    lens = [2, 1, 3, 3, 1, 4]
    indptr = indptr_of(lens)
    nnz = indptr[-1]
    args = (R.standard_normal(nnz), R.standard_normal((7, 3)), R.integers(0, 7, nnz), indptr)
    e = check_batched(csr_matmat, args, argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.take_along) == 1 and count(g, P.segment_sum) == 1, g


@pytest.mark.parametrize("bounds", [
    [(0, 3), (3, 4), (4, 8), (8, 10)],  # one range in order: a slice
    [(6, 9), (0, 2), (11, 12), (2, 5)],  # gaps, out of order: one gather
])
def test_segment_softmax_max_and_mean(bounds):
    x = R.standard_normal(12)
    e = check_batched(segment_stats, (x, bounds), argnums=0)
    g = e.stages["batch"]
    # (the max over each range: a segment_max of the packed rows, or one scatter-max)
    assert count(g, P.exp) == 1, g
    assert count(g, P.segment_max) + count(g, P.scatter_reduce_along) == 1, g


def test_overlapping_ranges_stay_exact():
    x = R.standard_normal(10)
    check_batched(overlapping, (x, [(0, 3), (2, 6), (5, 6), (5, 9)]), argnums=0)


def test_integer_ranges_keep_numpy_dtypes():
    idx = R.integers(0, 5, 9)
    indptr = indptr_of([2, 3, 1, 3])

    def f(x, idx):
        return [idx[lo:hi].sum() + x[idx[lo:hi]].sum() for lo, hi in itertools.pairwise(indptr)]

    import vecgrad as vg
    x = R.standard_normal(5)
    got = vg.jit(f)(x, idx)
    want = f(x, idx)
    for a, b in zip(got, want):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ---- a member's own constant beside its range: `vals[lo:hi] @ c[cols[lo:hi]]`, c NumPy

CIDX = R.integers(0, 30, 200)  # (NumPy arrays of the user's module: constants when traced)
CVEC = R.standard_normal(30)
CMAT = R.standard_normal((200, 3))


def csr_const_matvec(vals, indptr):
    y = vnp.zeros(len(indptr) - 1)
    for i in range(len(indptr) - 1):
        lo, hi = indptr[i], indptr[i + 1]
        y[i] = np.dot(vals[lo:hi], CVEC[CIDX[lo:hi]])  # (the gather is NumPy's: a constant)
    return np.sum(np.tanh(y) ** 2)


def weighted_segments(x, indptr):
    tot = 0.0
    for i in range(len(indptr) - 1):
        lo, hi = indptr[i], indptr[i + 1]
        w = CVEC[CIDX[lo:hi]]
        tot = tot + np.sum(x[lo:hi] * w) ** 2 / (np.sum(w ** 2) + 1.0)
    return tot


def shifted_rows(X, indptr):
    out = []
    for i in range(len(indptr) - 1):
        lo, hi = indptr[i], indptr[i + 1]
        out.append(np.max(np.sin(X[lo:hi] - CMAT[lo:hi]), axis=0))
    return np.sum(vnp.stack(out) ** 2)


@pytest.mark.parametrize("lens", [[3, 1, 4, 1, 5, 2, 6, 1], [1, 1, 2, 1, 1, 3], [5, 2, 7, 3]],
                         ids=str)
def test_a_members_own_constant_joins_its_range(lens):
    """Constants of each range's shape (a NumPy gather at the range's columns, a slice of a
    NumPy array at the range) are tiles of one constant: one product and one segment
    reduction for every range, rows of length 1 included."""
    indptr = indptr_of(lens)
    nnz = indptr[-1]
    e = check_batched(csr_const_matvec, (R.standard_normal(nnz), indptr))
    g = e.stages["batch"]
    assert count(g, P.segment_sum) == 1 and count(g, P.einsum) == 1, g
    e = check_batched(weighted_segments, (R.standard_normal(nnz), indptr))
    assert count(e.stages["batch"], P.segment_sum) == 1, e.stages["batch"]
    e = check_batched(shifted_rows, (R.standard_normal((nnz, 3)), indptr))
    assert count(e.stages["batch"], P.sin) == 1, e.stages["batch"]


def test_equal_constants_of_equal_ranges_stay_each_members():
    """Two ranges whose constants have equal contents (one column list read twice) and a
    range whose constant differs: each member keeps its own values."""
    lens = [2, 2, 2, 3]
    indptr = indptr_of(lens)
    vals = R.standard_normal(indptr[-1])

    def f(vals):
        tot = 0.0
        for i, c in enumerate([[1, 2], [1, 2], [2, 5], [0, 1, 3]]):
            lo, hi = indptr[i], indptr[i + 1]
            tot = tot + np.dot(vals[lo:hi], CVEC[c]) ** 2
        return tot
    want = sum(np.dot(vals[indptr[i]:indptr[i + 1]], CVEC[c]) ** 2
               for i, c in enumerate([[1, 2], [1, 2], [2, 5], [0, 1, 3]]))
    check_batched(f, (vals,))
    np.testing.assert_allclose(vg_jit(f)(vals), want, rtol=1e-12)


def vg_jit(f):
    import vecgrad as vg
    return vg.jit(f)
