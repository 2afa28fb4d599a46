"""Gradients through a pick at traced positions (a Python max over rows, argmax and argmin
reads, a few rows chosen by a traced index): the cotangent is a few entries scattered into
zeros, and rewrite/onehot.py contracts only those entries (a gather of the rows picked, and
the rows written into zeros), not the whole one-hot vector against whole arrays. Each
program: batched = unbatched, gradients = central differences (float64, random directions),
and no einsum left reading a scatter into zeros."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def max_over_rows(X, w):
    return max(vnp.sum(x * w) for x in X)


def min_row_of_matrix(X, W):
    # the row with the smallest score, through a matrix
    s = X @ W @ vnp.ones(W.shape[1])
    return vnp.sum(vnp.tanh(X[vnp.argmin(s)] @ W))


def argmax_pick_scaled(X, w):
    i = vnp.argmax(X @ w)
    return X[i] @ w * X[i, 0] + vnp.sum(w ** 2)


def min_over_matrix_rows(X, W):
    return min(vnp.sum(vnp.tanh(x @ W)) for x in X)


def top_two(X, w):
    # the two best scores, by a gather at traced positions
    s = X @ w
    return vnp.sum(vnp.take_along_axis(s, vnp.argsort(s)[-2:], axis=0) ** 2)


def two_picks(X, w):
    # the best and the worst row (distinct positions, or one position twice)
    s = X @ w
    return vnp.sum(X[vnp.argmax(s)] * X[vnp.argmin(s)] * w)


CASES = [
    ("max_over_rows", max_over_rows,
     lambda r: (r.standard_normal((60, 5)), r.standard_normal(5)), True),
    ("min_row_of_matrix", min_row_of_matrix,
     lambda r: (r.standard_normal((40, 4)), r.standard_normal((4, 3))), False),
    ("argmax_pick_scaled", argmax_pick_scaled,
     lambda r: (r.standard_normal((50, 6)), r.standard_normal(6)), False),
    ("min_over_matrix_rows", min_over_matrix_rows,
     lambda r: (r.standard_normal((40, 4)), r.standard_normal((4, 3))), False),
    ("top_two", top_two, lambda r: (r.standard_normal((50, 3)), r.standard_normal(3)), True),
    ("two_picks", two_picks, lambda r: (r.standard_normal((30, 4)), r.standard_normal(4)),
     False),
]


def contractions_of_scatters(g) -> int:
    made = {e.out: e for e in g.eqns}
    return sum(e.prim is P.einsum and any(
        made.get(a) is not None and made[a].prim is P.scatter_add_along and a.aval.ndim == 1
        for a in e.inputs) for e in g.eqns)


@pytest.mark.parametrize("name,f,make,fires", CASES, ids=[c[0] for c in CASES])
def test_picked_rows_are_contracted_alone(name, f, make, fires):
    e = check(f, make(rng()), (0, 1))
    g = e.stages["final"]
    assert contractions_of_scatters(g) == 0, name
    if fires:  # (the others' cotangents take other forms: their numerics are checked)
        assert any(q.prim is P.take_along and q.inputs[0] is g.inputs[0] for q in g.eqns), name


def test_the_gradient_of_a_max_over_rows_is_one_row():
    r = np.random.default_rng(4)
    X, w = r.standard_normal((200, 8)), r.standard_normal(8)
    gX, gw = vg.grad(max_over_rows, argnums=(0, 1))(X, w)
    i = np.argmax(X @ w)
    want = np.zeros_like(X)
    want[i] = w
    np.testing.assert_array_equal(gX, want)
    np.testing.assert_array_equal(gw, X[i])
