"""Running maxima per key over edge lists whose first steps are shared: each edge from u
traces max(0.0, x[u] * w) once (hash-consed), so that first step starts several keys'
chains. It is each chain's first link (the chain from the Python number), kept for the
others: the group is one scatter from the constants, with no where, comparison or stack of
first carries beside it. Values equal the loop's, batched equals unbatched, gradients match
central differences."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
from vecgrad import primitives as P

R = np.random.default_rng(2028)


def _edges(n, e):
    """e random edges among n nodes, every node a destination twice at least (a node with
    one edge has no chain: its one step stays)."""
    dst = R.permutation(np.concatenate([np.repeat(np.arange(n), 2), R.integers(0, n, e)]))
    return [(int(a), int(b)) for a, b in zip(R.integers(0, n, len(dst)), dst)]


def builtin_max(x, w, edges):
    best = [0.0] * len(x)
    for u, v in edges:
        best[v] = max(best[v], x[u] * w)
    return sum(b * b for b in best)


def np_maximum(x, w, edges):
    best = [0.0] * len(x)
    for u, v in edges:
        best[v] = np.maximum(best[v], np.tanh(x[u]) * w)
    return sum((j + 1.0) * b for j, b in enumerate(best))


def dict_min_get(x, w, edges):
    lo = {}
    for u, v in edges:
        lo[v] = min(lo.get(v, 1.0), np.sin(x[u] * w))
    return sum(lo[v] ** 2 for v in sorted(lo))


def first_read_elsewhere(x, w, edges):
    best = [0.0] * len(x)
    extra = 0.0
    for u, v in edges:
        best[v] = max(best[v], x[u] * w)
        extra = extra + max(0.0, x[u] * w)  # (the same first step, read outside the chains)
    return sum(b * b for b in best) + extra * 0.1


def min_after_max_first(x, w, edges):
    hi = [0.0] * len(x)
    lo = [0.0] * len(x)
    for u, v in edges:
        hi[v] = max(hi[v], x[u] * w)
        lo[v] = min(lo[v], x[u] * w)
    return sum(h - 2.0 * m for h, m in zip(hi, lo))


CASES = [builtin_max, np_maximum, dict_min_get, first_read_elsewhere, min_after_max_first]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
@pytest.mark.parametrize("n, e", [(6, 40), (12, 90)])
def test_shared_first_steps_join_the_scatter(f, n, e):
    args = (R.standard_normal(n), np.array(0.8), _edges(n, e))
    check_batched(f, args, argnums=(0, 1))
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)
    g = vg.grad(f, argnums=(0, 1)).entry(*args)[0].stages["simplify"]
    scatters = count(g, P.scatter_reduce_along)
    assert scatters == (2 if f is min_after_max_first else 1)
    if f is not first_read_elsewhere:
        assert count(g, P.where) + count(g, P.maximum) + count(g, P.minimum) == 0


def test_the_graph_does_not_grow_with_the_edges():
    sizes = []
    for e in (60, 600):
        args = (R.standard_normal(10), np.array(0.8), _edges(10, e))
        sizes.append(len(vg.grad(builtin_max).entry(*args)[0].stages["simplify"].eqns))
    assert max(sizes) <= 8, sizes  # (a gather, the scatter, the loss: whatever the edges)


def test_nan_messages_never_win():
    x = R.standard_normal(8)
    x[[1, 5]] = np.nan
    args = (x, np.array(0.8), _edges(8, 50))
    np.testing.assert_allclose(vg.jit(builtin_max)(*args), builtin_max(*args), rtol=1e-12)
