"""Loops over neighbours, `zip(x[:-1], x[1:])` and its kin, read plain slices of x: batching
makes the windows of width k of x, flattens them (a copy, the windows overlapping) and reads
every k-th element; rewrite/views.py reads those elements from x itself (x[j:j + n]), so no
copy of the windows is left in the final graph. (The zips of slices are the point: what users
write, where ruff would have itertools.pairwise.) Each variant: batched = unbatched, gradients
= central differences (float64, random directions), and no flattened window view."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad.numpy as vnp
from vecgrad import primitives as P


def pairs(x):
    return sum(vnp.log1p(a * a + b * b) for a, b in zip(x[:-1], x[1:]))  # noqa: RUF007


def triples(x):
    return sum(a * b * c for a, b, c in zip(x, x[1:], x[2:]))


def row_pairs(X):
    return sum(vnp.sum((a - b) ** 2) for a, b in zip(X[:-1], X[1:]))  # noqa: RUF007


def gap_pairs(x):
    return sum(vnp.tanh(a - 0.5 * b) for a, b in zip(x, x[2:]))


def exp_pairs(x):
    # a function of each member alone: computed once per element of x
    return sum(vnp.exp(a) + vnp.exp(b) for a, b in zip(x[:-1], x[1:]))  # noqa: RUF007


def tanh_products(X):
    return sum(vnp.sum(vnp.tanh(a) * vnp.tanh(b)) for a, b in zip(X[:-1], X[1:]))  # noqa: RUF007


def enumerate_pairs(x, w):
    total = 0.0
    for i, (a, b) in enumerate(zip(x[:-1], x[1:])):  # noqa: RUF007
        total = total + w[i % 3] * vnp.exp(-(a - b) ** 2)
    return total


CASES = [
    ("pairs", pairs, lambda r: (r.standard_normal(40),), 0),
    ("triples", triples, lambda r: (r.standard_normal(30),), 0),
    ("row_pairs", row_pairs, lambda r: (r.standard_normal((25, 3)),), 0),
    ("gap_pairs", gap_pairs, lambda r: (r.standard_normal(33),), 0),
    ("exp_pairs", exp_pairs, lambda r: (r.standard_normal(29),), 0),
    ("tanh_products", tanh_products, lambda r: (r.standard_normal((21, 4)),), 0),
    ("enumerate_pairs", enumerate_pairs, lambda r: (r.standard_normal(31),
                                                    r.standard_normal(3)), (0, 1)),
]


def flattened_views(g) -> int:
    """Reshapes of a strided view that merge its axes (a copy of overlapping windows)."""
    made = {e.out: e for e in g.eqns}
    n = 0
    for e in g.eqns:
        s = made.get(e.inputs[0]) if e.prim is P.reshape else None
        n += s is not None and s.prim is P.strided and e.out.aval.ndim < s.out.aval.ndim
    return n


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_neighbours_read_slices(name, f, make, argnums):
    e = check(f, make(rng()), argnums)
    for stage in ("simplify", "final"):
        assert flattened_views(e.stages[stage]) == 0, stage


def test_windows_read_at_other_steps_stay_reads():
    # a read whose step is not a whole number of windows (every other element of the
    # flattened width-3 windows) is no view of x: it stays a read, and the values agree
    def f(x):
        w = P.strided(x, start=(0,), dims=((x.shape[0] - 2, (1,)), (3, (1,))))
        return vnp.sum(vnp.sin(P.reshape(w, shape=(3 * (x.shape[0] - 2),))[::2]))
    x = rng(1).standard_normal(17)
    check(f, (x,))
    win = np.lib.stride_tricks.sliding_window_view(x, 3).reshape(-1)[::2]
    import vecgrad as vg
    np.testing.assert_allclose(vg.jit(f)(x), np.sum(np.sin(win)), rtol=1e-12)
