"""Inner loops over a row's few columns, each column scaled by an entry of a coefficient
vector (`s = s + X[i, j] * w[j % 4]`): batched over the rows, the terms are one pass per
column; rewrite/columns.py makes them one contraction X @ w[K] (no column read alone is left,
and the gradient is an outer product and a matrix-vector product, not X's cotangent written
column by column into zeros). Each variant: batched = unbatched, gradients = central
differences (float64, random directions)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad.numpy as vnp
from vecgrad import primitives as P


def cyclic_coeffs(x, X, w):
    # five columns, four coefficients: columns 0 and 4 share w[0]
    out = vnp.zeros(len(X))
    for i in range(len(X)):
        s = 0.0
        for j in range(5):
            s = s + X[i, j] * w[j % 4]
        out[i] = s * x[i]
    return vnp.sum(out ** 2)


PERM = [2, 0, 3, 1]


def permuted_coeffs(X, w):
    total = 0.0
    for i in range(len(X)):
        s = 0.0
        for j in range(4):
            s = s + X[i, j] * w[PERM[j]]
        total = total + vnp.tanh(s)
    return total


COEF = [0.5, -1.25, 2.0]


def constant_coeffs(X):
    # coefficients from a Python list of floats
    return sum(vnp.sin(sum(X[i, j] * COEF[j] for j in range(3))) for i in range(len(X)))


def every_other_column(X, w):
    # columns 0, 2, 4 of six: a strided view of X, not a copy
    out = []
    for i in range(len(X)):
        out.append(X[i, 0] * w[0] + X[i, 2] * w[1] + X[i, 4] * w[2])
    return vnp.sum(vnp.stack(out) ** 2)


def rows_of_a_matrix(W, a):
    # a sum of W's rows, each scaled by an entry of a (the columns' transpose case)
    acc = vnp.zeros(W.shape[1])
    for k in range(W.shape[0]):
        acc = acc + W[k] * a[k % 2]
    return vnp.sum(vnp.exp(acc))


def uneven_columns(X, w):
    # columns 0, 1, 3: no slice of X holds just them; still one value per row, correct
    return sum((X[i, 0] * w[0] + X[i, 1] * w[1] + X[i, 3] * w[2]) ** 2 for i in range(len(X)))


CASES = [
    ("cyclic_coeffs", cyclic_coeffs,
     lambda r: (r.standard_normal(30), r.standard_normal((30, 5)), r.standard_normal(4)),
     (0, 1, 2), True),
    ("permuted_coeffs", permuted_coeffs,
     lambda r: (r.standard_normal((25, 4)), r.standard_normal(4)), (0, 1), True),
    ("constant_coeffs", constant_coeffs, lambda r: (r.standard_normal((20, 3)),), 0, True),
    ("every_other_column", every_other_column,
     lambda r: (r.standard_normal((22, 6)), r.standard_normal(3)), (0, 1), True),
    ("rows_of_a_matrix", rows_of_a_matrix,
     lambda r: (r.standard_normal((5, 7)), r.standard_normal(2)), (0, 1), True),
    ("uneven_columns", uneven_columns,
     lambda r: (r.standard_normal((21, 4)), r.standard_normal(3)), (0, 1), False),
]


def single_column_reads(g) -> int:
    """Reads of one column (or row) of a 2-D input: an int among whole slices."""
    ins = set(g.inputs)
    return sum(e.prim is P.getitem and e.inputs[0] in ins and e.inputs[0].aval.ndim == 2 and
               any(type(k) is int for k in e.params["idx"]) for e in g.eqns)


@pytest.mark.parametrize("name,f,make,argnums,contracted", CASES, ids=[c[0] for c in CASES])
def test_columns_scaled_by_coefficients_are_one_contraction(name, f, make, argnums,
                                                            contracted):
    e = check(f, make(rng()), argnums)
    if contracted:
        assert single_column_reads(e.stages["simplify"]) == 0, name
        assert "einsum" in [q.prim.name for q in e.stages["simplify"].eqns], name


def test_the_contraction_matches_numpy():
    r = np.random.default_rng(3)
    x, X, w = r.standard_normal(40), r.standard_normal((40, 5)), r.standard_normal(4)
    want = np.sum((X @ w[np.arange(5) % 4] * x) ** 2)
    import vecgrad as vg
    np.testing.assert_allclose(vg.jit(cyclic_coeffs)(x, X, w), want, rtol=1e-12)
