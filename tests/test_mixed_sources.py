"""Sums and write chains whose terms come from several sources (issue 14, item 4): one
operation per source, never one stack per run; zero boundaries as padded views."""
from __future__ import annotations

import numpy as np
from test_batch import assert_size_independent, check, count, gathers, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def laplacian(u):
    n, m = u.shape
    lap = vnp.zeros((n, m))
    for i in range(n):
        up = u[i - 1] if i > 0 else 0.0
        down = u[i + 1] if i < n - 1 else 0.0
        lap[i] = up + down - 2 * u[i]
    return vnp.sum(lap ** 2)


def test_zero_boundary_neighbours_are_padded_views():
    e = check(laplacian, (rng().standard_normal((5, 3)),))
    g = e.stages["batch"]
    assert not gathers(g) and count(g, P.segment_sum) == 0
    assert count(g, P.add) + count(g, P.sub) <= 2  # up + down - 2u, each a view
    assert_size_independent(lambda n: (laplacian, (rng().standard_normal((n, 3)),)))


def grid_neighbours(s):
    n, m = s.shape
    E = 0.0
    for i in range(n):
        for j in range(m):
            nb = ((s[i - 1, j] if i > 0 else 0.0) + (s[i + 1, j] if i < n - 1 else 0.0)
                  + (s[i, j - 1] if j > 0 else 0.0) + (s[i, j + 1] if j < m - 1 else 0.0))
            E = E + vnp.tanh(s[i, j]) * nb
    return E


def test_grid_neighbour_sums_with_a_zero_boundary():
    e = check(grid_neighbours, (rng().standard_normal((4, 5)),))
    g = e.stages["batch"]
    assert not gathers(g) and count(g, P.segment_sum) == 0 and count(g, P.tanh) == 1
    assert_size_independent(lambda n: (grid_neighbours, (rng().standard_normal((n, n + 1)),)))


def test_terms_of_a_kernel_summed_with_constants():
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]

    def f(x, a, b):
        total = 0.0
        for i, j in pairs:
            r = vnp.sqrt(vnp.sum((x[i] - x[j]) ** 2))
            total += 1 + a * r + b * r ** 2
        return total
    e = check(f, (rng().standard_normal((5, 3)), np.array(0.5), np.array(-0.1)),
              argnums=(0, 1, 2))
    g = e.stages["batch"]
    assert count(g, P.concatenate) == 0 and count(g, P.stack) == 0
    assert count(g, P.sqrt) == 1


def test_two_kinds_of_terms_alternating():
    def f(U, V, pos, neg):
        loss = 0.0
        for p, q in zip(pos, neg):
            loss += -vnp.log(1 + vnp.exp(-U[p] @ V[p]))
            loss += -vnp.log(1 + vnp.exp(U[q] @ V[q]))
        return loss
    args = (rng().standard_normal((6, 3)), rng(1).standard_normal((6, 3)),
            [0, 2, 4, 1], [5, 3, 1, 0])
    e = check(f, args, argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.concatenate) == 0 and count(g, P.stack) == 0
    assert count(g, P.exp) <= 2  # one per kind of term


def five_point_rows(u):
    # rows of a 5-point Laplacian: the reads u[i+1, 1:-1], u[i, 1:-1], u[i-1, 1:-1] of one row
    # are shared (CSE) between three rows' sums, in different terms
    n = u.shape[0]
    rows = [u[i - 1, 1:-1] + u[i + 1, 1:-1] + u[i, :-2] + u[i, 2:] - 4.0 * u[i, 1:-1]
            for i in range(1, n - 1)]
    return vnp.sum(vnp.stack(rows) ** 2)


def shifted_pairs(x):
    # two terms per sum, both reads of x at positions affine in t, together not affine
    return sum(vnp.sum((x[t, 1:] + x[t + 2, :-1]) ** 2) for t in range(x.shape[0] - 2))


def test_terms_shared_between_sums_read_one_view_each():
    for f, shape in ((five_point_rows, (6, 7)), (shifted_pairs, (7, 4))):
        e = check(f, (rng().standard_normal(shape),))
        g = e.stages["batch"]
        assert not gathers(g) and count(g, P.stack) == 0 and count(g, P.segment_sum) == 0
        assert_size_independent(lambda n, f=f, s=shape: (f, (rng().standard_normal(
            (n, s[1])),)), sizes=(5, 9))


_SOBEL = np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])


def sobel_taps(img):
    # two sums over a kernel's nonzero taps, each a scaled shifted slice of a big image
    H, W = img.shape[0] - 2, img.shape[1] - 2
    gx, gy = vnp.zeros((H, W)), vnp.zeros((H, W))
    for a in range(3):
        for b in range(3):
            if _SOBEL[a, b] != 0.0:
                gx = gx + _SOBEL[a, b] * img[a:a + H, b:b + W]
            if _SOBEL[b, a] != 0.0:
                gy = gy + _SOBEL[b, a] * img[a:a + H, b:b + W]
    return vnp.sum(vnp.sqrt(gx ** 2 + gy ** 2 + 1e-3))


def test_big_slices_at_scattered_positions_are_not_stacked():
    # merging the taps would gather ten copies of the image (positions with no affine form)
    # and sum them back by segment in the gradient; each tap is a whole-image pass already
    from vecgrad.batch.sums import BIG
    n = int(np.sqrt(BIG)) + 4
    e = check(sobel_taps, (rng().standard_normal((n, n)),), fd=False)
    g = e.stages["final"]
    assert not gathers(g) and count(g, P.segment_sum) == 0 and count(g, P.stack) <= 1
    assert not any(q.out.aval.ndim == 3 and q.out.aval.shape[0] > 2 for q in g.eqns), \
        vg.ir.pretty(g)
    small = rng().standard_normal((7, 8))
    check(sobel_taps, (small,))  # (gradient against central differences, small)


def flat_dot_windows(x, w):
    # w.ravel() outside the loop is the same operation as every window's .ravel(): merged
    # with them it would concatenate the windows into one copy
    k = w.shape[0]
    wf = w.ravel()
    y = vnp.array([vnp.dot(x[i:i + k].ravel(), wf) for i in range(0, x.shape[0] - k + 1, 2)])
    return vnp.sum(vnp.tanh(y))


def test_one_value_beside_a_long_run_is_not_concatenated_with_it():
    r = rng(3)
    e = check(flat_dot_windows, (r.standard_normal((41, 3)), r.standard_normal((4, 3))), (0, 1))
    g = e.stages["batch"]
    assert count(g, P.concatenate) == 0 and count(g, P.stack) == 0, vg.ir.pretty(g)


def bounds_checked_stencil(x, w):
    # the taps of the edge rows are left out by the checks: positions affine per tap only
    n = x.shape[0]
    out = vnp.zeros_like(x)
    for i in range(n):
        for d in (-1, 0, 1):
            if 0 <= i + d < n:
                out[i] += w[d + 1] * x[i + d]
    return vnp.sum(vnp.tanh(out) ** 2)


def test_taps_under_bounds_checks_are_one_view_each():
    r = rng(4)
    e = check(bounds_checked_stencil, (r.standard_normal((12, 3)), r.standard_normal(3)),
              (0, 1))
    for s in ("batch", "final"):
        g = e.stages[s]
        assert not gathers(g) and count(g, P.segment_sum) == 0, vg.ir.pretty(g)
    assert_size_independent(lambda n: (bounds_checked_stencil, (
        rng().standard_normal((n, 3)), rng().standard_normal(3))), sizes=(12, 20))


def boundary_ifs(u):
    """Neighbour sums built by `if` on Python ints (1 or 2 terms per iteration)."""
    n = u.shape[0]
    e = 0.0
    for i in range(n):
        s = 0.0
        if i > 0:
            s = s + u[i - 1]
        if i < n - 1:
            s = s + u[i + 1]
        e += (2 * u[i] - s) ** 2
    return e


def test_ragged_neighbour_sums_are_shifted_slices():
    """The ragged sums (a gather of every term and a segment sum) are a few shifted slices
    after simplification, forward and backward (rewrite/segments.segment_sum_of_shifts)."""
    u = rng().standard_normal(12)
    e = check(boundary_ifs, (u,))
    ref = np.sum((2 * u - np.pad(u, 1)[:-2] - np.pad(u, 1)[2:]) ** 2)
    np.testing.assert_allclose(vg.jit(boundary_ifs)(u), ref, rtol=1e-12)
    g = e.stages["final"]
    assert not gathers(g) and count(g, P.segment_sum) == 0 and count(g, P.take) == 0, g


def boundary_ifs_2d(u):
    H, W = u.shape
    e = 0.0
    for i in range(H):
        for j in range(W):
            s = 0.0
            if i > 0:
                s = s + u[i - 1, j]
            if i < H - 1:
                s = s + u[i + 1, j]
            if j > 0:
                s = s + u[i, j - 1]
            if j < W - 1:
                s = s + u[i, j + 1]
            e += (4 * u[i, j] - s) ** 2
    return e


def boundary_ifs_2d_channels(u, w):
    # pixels of (H, W, C): the neighbour sums of whole channel vectors, weighted
    H, W, _ = u.shape
    e = 0.0
    for i in range(H):
        for j in range(W):
            s = 0.0 * u[i, j]
            if j > 0:
                s = s + u[i, j - 1]
            if i < H - 1:
                s = s + u[i + 1, j]
            if j < W - 1:
                s = s + 0.5 * u[i, j + 1]
            e += vnp.sum(vnp.tanh(u[i, j] * w - s))
    return e


def test_ragged_neighbour_sums_2d_are_shifted_boxes():
    """2-D neighbour sums that hit the zero boundary by `if` branches (the cliff
    mixed_boundary_ifs.py, 11.9x at 150x150): a few shifted boxes of the image, forward and
    backward, no gather of every term (rewrite/segments.segment_sum_of_boxes)."""
    r = rng()
    for H, W in ((5, 4), (3, 7), (6, 6)):
        u = r.standard_normal((H, W))
        e = check(boundary_ifs_2d, (u,))
        p = np.pad(u, 1)
        s = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
        np.testing.assert_allclose(vg.jit(boundary_ifs_2d)(u), np.sum((4 * u - s) ** 2),
                                   rtol=1e-12)
        g = e.stages["final"]
        big = [x for x in g.eqns if x.prim in (P.take, P.segment_sum, P.getitem)
               and any(getattr(k, "arr", None) is not None and k.arr.size > 2 * W
                       for k in x.params.get("idx", ()) or (x.params.get("ids"),))]
        assert not big, g
    u, w = r.standard_normal((4, 5, 3)), r.standard_normal(3)
    e = check(boundary_ifs_2d_channels, (u, w), argnums=(0, 1))
    g = e.stages["final"]
    assert count(g, P.segment_sum) <= 1 and not [x for x in g.eqns if x.prim is P.getitem
                                                  and not P.is_basic(x.params["idx"])], g


def two_lists(A, B, I, J):
    return sum(vnp.exp(-vnp.sum((A[i] - B[j]) ** 2)) for i in I for j in J)


def test_pairs_over_two_lists_are_one_grid():
    """A nested generator over two index lists: the (|I|, |J|) grid of two small gathers,
    not a gather of every pair (rewrite/segments.grid_of_gathers)."""
    r = rng()
    A, B = 0.3 * r.standard_normal((9, 3)), 0.3 * r.standard_normal((9, 3))
    I, J = [4, 1, 7, 1], [0, 8, 2]
    e = check(lambda A, B: two_lists(A, B, I, J), (A, B), argnums=(0, 1))
    d = ((A[I][:, None] - B[J][None]) ** 2).sum(-1)
    np.testing.assert_allclose(vg.jit(two_lists, static_argnums=(2, 3))(A, B, I, J),
                               np.exp(-d).sum(), rtol=1e-12)
    takes = [x for x in e.stages["final"].eqns if x.prim is P.take]
    assert takes and all(x.out.aval.shape[0] <= 4 for x in takes), e.stages["final"]


def four_terms(w, b, X, y):
    total = 0.0
    for i in range(X.shape[0]):
        z = X[i] @ w + b
        total += y[i] * z
        total -= vnp.log1p(vnp.exp(z))
        total -= 1e-3 * w.sum()
        total += 1e-3 * z ** 2
    return -total


def test_loop_invariant_term_beside_per_sample_terms_is_not_padded_in():
    """`1e-3 * w.sum()` (one value, CSE'd across iterations) beside the per-sample products
    `y[i] * z` and `1e-3 * z ** 2`: each kind is its own operation, with no concatenation
    of their operands and no gather in member order (batching._boundary)."""
    r = rng()
    args = (r.standard_normal(3), np.array(0.1), r.standard_normal((12, 3)),
            (r.random(12) < 0.5).astype(float))
    e = check(four_terms, args, argnums=(0, 1))
    g = e.stages["batch"]
    assert not gathers(g) and count(g, P.concatenate) == 0, g
