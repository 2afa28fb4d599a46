"""The segmented scans' NumPy kernels (primitives/segscans.py) on the layouts the spec list's
small cases never reach: runs padded to a runs x rank layout scanned by np.cumsum, by one
multiply-add per step (short runs, wide rows) or by doubling; one long run among many short
ones scanned flat. Each against a plain loop; the prefix sums exactly (the loop's own order of
additions); infs and NaNs kept in their run; float32 stays float32. Gradients, batching and
backends are the spec list's (specs_segscans.py)."""
from __future__ import annotations

import numpy as np
import pytest
from specs_segscans import seg_ref

from vecgrad import primitives as P


def _starts(r: np.random.Generator, L: int, kind: str) -> np.ndarray:
    if kind == "buckets":  # (sorted bucket ids: runs of about L / 16)
        k = np.sort(r.integers(0, 16, L))
        return np.r_[True, k[1:] != k[:-1]]
    if kind == "skewed":  # (one run of half the rows, the rest of one row each)
        s = np.ones(L, bool)
        s[L // 4:3 * L // 4] = False
        return s
    if kind == "short":
        return r.random(L) < 0.4
    return np.zeros(L, bool)  # ("one": a single run)


KINDS = ["buckets", "skewed", "short", "one"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cell", [(), (3,), (40,)])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_match_the_loop(kind, cell, reverse):
    r = np.random.default_rng(len(kind) + len(cell))
    L = 300
    s = _starts(r, L, kind)
    b = r.standard_normal((L,) + cell)
    a = r.uniform(-1.1, 1.1, (L,) + (1,) * len(cell))
    got = P.segment_cumsum.impl(b, s, reverse=reverse)
    want = seg_ref(None, b, s, reverse)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got = P.segment_affine.impl(a, b, s, reverse=reverse)
    np.testing.assert_allclose(got, seg_ref(a, b, s, reverse), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cell", [(), (300,)])
def test_prefix_sums_are_the_loops_additions(cell):
    r = np.random.default_rng(3)
    k = np.sort(r.integers(0, 64, 2000))
    s = np.r_[True, k[1:] != k[:-1]]
    b = r.standard_normal((2000,) + cell) * 10.0 ** r.integers(-6, 6, (2000,) + cell)
    assert np.array_equal(P.segment_cumsum.impl(b, s), seg_ref(None, b, s))
    a = np.full((2000,) + (1,) * len(cell), 0.9)
    got, want = P.segment_affine.impl(a, b, s), seg_ref(a, b, s)
    if cell:  # (wide rows: one multiply-add per step, the loop's order; else doubling)
        assert np.array_equal(got, want)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)


def test_inf_and_nan_stay_in_their_run():
    b = np.arange(12.0)
    b[2], b[7] = np.inf, np.nan
    s = np.zeros(12, bool)
    s[[4, 9]] = True
    a = np.full(12, 0.5)
    a[4] = np.inf  # (the first rate of a run is never used)
    for got in (P.segment_cumsum.impl(b, s), P.segment_affine.impl(a, b, s)):
        assert np.isfinite(got[[0, 1, 4, 5, 6, 9, 10, 11]]).all(), got
        assert not np.isfinite(got[[2, 3, 7, 8]]).any(), got
    for got in (P.segment_cumsum.impl(b, s, reverse=True),
                P.segment_affine.impl(a, b, s, reverse=True)):  # (a[4] joins nothing here)
        assert np.isfinite(got[[3, 8, 9, 10, 11]]).all(), got
        assert not np.isfinite(got[[0, 1, 2, 4, 5, 6, 7]]).any(), got


def test_float32_and_empty():
    r = np.random.default_rng(0)
    b = r.standard_normal(50).astype(np.float32)
    s = r.random(50) < 0.2
    out = P.segment_affine.impl(np.full(50, 0.5, np.float32), b, s)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, seg_ref(np.full(50, 0.5), b.astype(float), s), rtol=1e-5)
    assert P.segment_cumsum.impl(np.zeros((0, 2)), np.zeros(0, bool)).shape == (0, 2)
