"""Reads of one array at index lists of one length (batch/listgather.py): k nearest
neighbours `X[knn[i]]`, column lists `A[:, cols[j]]`, lists read with other slices, lists
that repeat and lists with negative entries. The reads are slices of one gather at the
concatenated lists, so batching views that gather instead of running one read per list and
stacking them (150 lists of 4: 17x the hand-vectorized forward before). Batched equals
unbatched (values and VJPs), gradients match central differences, and the batched graph holds
one integer-array read per array."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched

import vecgrad as vg
from vecgrad import primitives as P

R = np.random.default_rng(41)


def array_reads(g, prim=P.getitem):
    """Integer-array reads of the graph's inputs (the user's arrays)."""
    return [e for e in g.eqns if e.prim is prim and e.params["idx"].__class__ is not
            P.BasicIndex and e.inputs[0] in g.inputs]


def lists(n_lists, k, n, seed, repeat=False, negative=False):
    rng = np.random.default_rng(seed)
    out = [rng.choice(n, k, replace=False) for _ in range(n_lists)]
    if repeat:
        for i in range(0, n_lists, 5):
            out[i] = out[(i * 7 + 1) % n_lists].copy()
    if negative:
        out = [np.where(rng.random(k) < 0.3, a - n, a) for a in out]
    return out


KNN = lists(30, 4, 30, 1)
REP = lists(30, 3, 30, 2, repeat=True, negative=True)
COLS = lists(12, 3, 9, 3)


def knn_lengths(X):
    tot = 0.0
    for i in range(len(X)):
        d = X[KNN[i]] - X[i]
        tot += np.sum(np.sqrt(np.sum(d * d, axis=1) + 1e-3))
    return tot


def repeated_lists(x):
    return sum(np.sum(np.tanh(x[REP[i]]) * (i + 1.0)) ** 2 for i in range(len(REP)))


def column_lists(A):
    return sum(np.sum(np.sin(A[:, c]) ** 2) * j for j, c in enumerate(COLS))


def lists_and_slices(X):
    out = [np.max(X[KNN[i], 1:3], axis=0) for i in range(len(KNN))]
    return np.sum(np.stack(out) ** 2)


FACES = [np.array(f) for f in R.integers(0, 30, (40, 3))]


def face_areas(X):
    tot = 0.0
    for f in FACES:  # (a face's corners read from its rows: reads of the gather's rows)
        p = X[f]
        n = np.cross(p[1, :3] - p[0, :3], p[2, :3] - p[0, :3])
        tot += np.sqrt(n @ n + 1.0)
    return tot


def two_arrays(X, Y):
    return sum(np.sum(X[KNN[i]] * Y[KNN[(i + 1) % 30]]) for i in range(30))


CASES = [
    (knn_lengths, lambda: (R.standard_normal((30, 3)),), 0, 1),
    (repeated_lists, lambda: (R.standard_normal(30),), 0, 1),
    (column_lists, lambda: (R.standard_normal((5, 9)),), 0, 1),
    (lists_and_slices, lambda: (R.standard_normal((30, 4)),), 0, 1),
    (face_areas, lambda: (R.standard_normal((30, 4)),), 0, 1),
    (two_arrays, lambda: (R.standard_normal((30, 2)), R.standard_normal((30, 2))), (0, 1), 2),
]


@pytest.mark.parametrize("f,args,argnums,reads", CASES, ids=[c[0].__name__ for c in CASES])
def test_one_gather_per_array(f, args, argnums, reads):
    args = args()
    want = f(*args)
    assert abs(vg.jit(f)(*args) - want) <= 1e-12 * max(1.0, abs(want))
    e = check_batched(f, args, argnums=argnums)
    g = e.stages["batch"]
    assert len(array_reads(g)) == reads, g
    rep = vg.explain(f, *args, argnums=argnums, budget=0.01)
    assert not rep.unbatched, rep.unbatched  # (nothing left one read per list)


def test_lists_of_several_lengths_are_left_to_list_maps():
    """A group with two lengths is not this pass's: tiles of one gather (listmaps)."""
    nbrs = [np.arange(i, i + 2 + i % 2) % 10 for i in range(10)]

    def f(x):
        return sum(np.sum(np.exp(x[nb])) ** 2 for nb in nbrs)
    check_batched(f, (R.standard_normal(10),))
