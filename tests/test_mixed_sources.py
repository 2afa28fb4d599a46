"""Sums and write chains whose terms come from several sources (issue 14, item 4): one
operation per source, never one stack per run; zero boundaries as padded views."""
from __future__ import annotations

import numpy as np
from test_batch import assert_size_independent, check, count, gathers, rng

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
