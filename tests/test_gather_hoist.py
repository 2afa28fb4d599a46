"""Gathers after the row-wise product they feed (rewrite/hoist.py): loops that skip rows,
pieces of neighbour lists appended then concatenated, and edge lists read through a traced
(E, 2) array compute `x @ W` on x's own rows and gather the result, as the hand-vectorized
code does. Batched equals unbatched (values and VJPs), gradients match central differences,
the final graph's products run on x's rows; a gather of few rows keeps its product after it."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import entry

import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(7)


def skip_rows(X, w, keep):
    total = 0.0
    for i in range(X.shape[0]):
        if not keep[i]:
            continue
        z = X[i] @ w
        total += np.logaddexp(0.0, z) if i % 2 else np.logaddexp(0.0, -z)
    return total


def pieces(x, W, nbrs):
    out = []
    for nb in nbrs:
        out.append(x[nb] @ W)
    return np.sum(np.log1p(np.concatenate(out) ** 2))


def traced_edges(x, W, edges):
    m = vnp.zeros((x.shape[0], W.shape[1]))
    for e in range(edges.shape[0]):
        s, d = edges[e]
        m[d] = m[d] + np.maximum(x[s] @ W, 0.0)
    return np.sum(np.tanh(m))


@pytest.mark.parametrize("f,args,argnums", [
    (skip_rows, (R.standard_normal((12, 3)), R.standard_normal(3),
                 [bool(k) for k in R.random(12) < 0.7]), (0, 1)),
    (pieces, (R.standard_normal((6, 3)), R.standard_normal((3, 3)),
              [[0, 1], [2], [3, 4, 5], [1, 1, 0], [5]]), (0, 1)),
    (traced_edges, (R.standard_normal((5, 3)), R.standard_normal((3, 3)),
                    R.integers(0, 5, (14, 2))), (0, 1)),
])
def test_products_run_on_the_rows_of_x(f, args, argnums):
    check_batched(f, args, argnums=argnums)
    g = entry(f, args, argnums)[0].stages["final"]
    n = args[0].shape[0]
    prods = [q for q in g.eqns if q.prim is P.einsum]
    # every product reads x whole (n rows) or the (n, .) cotangent, never a gathered copy
    assert prods and all(a.aval.ndim < 2 or a.aval.shape[0] in (n, args[1].shape[0])
                         for q in prods for a in q.inputs), g


def test_few_rows_keep_the_gather_first():
    keep = [i < 3 for i in range(12)]  # 3 rows of 12: the product on 3 rows
    X, w = R.standard_normal((12, 3)), R.standard_normal(3)
    check_batched(skip_rows, (X, w, keep), argnums=(0, 1))
    e, _ = entry(skip_rows, (X, w, keep), (0, 1))
    assert not any(q.prim is P.einsum and q.inputs[0].aval.shape[:1] == (12,)
                   for q in e.stages["simplify"].eqns)
