"""Loops over each row's neighbours j in range(max(0, i - b), min(n, i + b + 1)): the pairs
(i, j) lie on 2b + 1 diagonals, so the products of rows over them are products of shifted
slices, joined and put in order by one gather of the scalar results, not two gathers of
every pair's rows (rewrite/diagonals.einsum_of_diagonal_pairs)."""
from __future__ import annotations

import numpy as np
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def band_attention(q, k, v, b):
    n = q.shape[0]
    out = 0.0
    for i in range(n):
        scores = []
        for j in range(max(0, i - b), min(n, i + b + 1)):
            scores.append(vnp.dot(q[i], k[j]))
        s = vnp.stack(scores)
        a = vnp.exp(s - vnp.max(s))
        out = out + vnp.sum(vnp.tanh((a / vnp.sum(a)) @ v[max(0, i - b):min(n, i + b + 1)]))
    return out


def band_attention_ref(q, k, v, b):
    n = q.shape[0]
    out = 0.0
    for i in range(n):
        lo, hi = max(0, i - b), min(n, i + b + 1)
        s = k[lo:hi] @ q[i]
        a = np.exp(s - s.max())
        out += np.sum(np.tanh((a / a.sum()) @ v[lo:hi]))
    return out


def neighbour_energy(x, b):
    # pairs below the diagonal only, each pair's squared distance weighted by its dot
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(max(0, i - b), i):
            e = e + vnp.dot(x[i], x[j]) * vnp.sum((x[i] - x[j]) ** 2)
    return e


def _row_gathers(g):
    """Gathers that copy rows (a take of a value with more than one axis)."""
    return [e for e in g.eqns if e.prim is P.take and len(e.out.aval.shape) > 1]


def test_band_attention_pairs_are_shifted_slices():
    r = rng()
    for n, d, b in ((80, 8, 2), (40, 24, 3)):
        q, k, v = (0.3 * r.standard_normal((n, d)) for _ in range(3))
        f = lambda q, k, v, b=b: band_attention(q, k, v, b)
        e = check(f, (q, k, v), argnums=(0, 1, 2))
        np.testing.assert_allclose(vg.jit(f)(q, k, v), band_attention_ref(q, k, v, b),
                                   rtol=1e-12)
        assert not _row_gathers(e.stages["simplify"]), e.stages["simplify"]


def test_neighbour_pairs_below_the_diagonal():
    x = 0.5 * rng().standard_normal((14, 3))
    check(lambda x: neighbour_energy(x, 3), (x,))  # (batched = unbatched, central differences)
    ref = sum(x[i] @ x[j] * np.sum((x[i] - x[j]) ** 2)
              for i in range(14) for j in range(max(0, i - 3), i))
    np.testing.assert_allclose(vg.jit(lambda x: neighbour_energy(x, 3))(x), ref, rtol=1e-12)
