"""The NumPy-API functions inside natural-style loops: a per-row sort, cumsum, quantile,
traced-index gather or np.add.at written in a Python loop batches into one operation per
function (the simplified graph does not grow with the trip count), and batched equals
unbatched in values and gradients."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_size_independent, check, count

import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(23)


def _rows(fn, prim):
    def make(n):
        x = R.standard_normal((n, 6))
        w = R.standard_normal((n, 6))

        def f(x, w):
            out = vnp.zeros((n, 6))
            for i in range(n):
                out[i] = fn(x[i])
            return vnp.sum(out * w)
        return f, (x, w)
    return make, prim


CASES = {
    "sort": _rows(lambda r: vnp.sort(r), P.sort),
    "cumsum": _rows(lambda r: vnp.cumsum(r) * 0.5, P.cumsum),
    "cumprod": _rows(lambda r: vnp.cumprod(r), P.cumprod),
    "maximum.accumulate": _rows(lambda r: np.maximum.accumulate(r), P.cummax),
    "partition": _rows(lambda r: vnp.partition(r, 2), P.partition),
    "flip-roll": _rows(lambda r: vnp.roll(vnp.flip(r), 2) + vnp.tan(r * 0.3), P.tan),
    "logaddexp": _rows(lambda r: vnp.logaddexp(r, r[::-1]), P.logaddexp),
    "median-broadcast": _rows(lambda r: r - vnp.median(r), P.partition),
    "take_along_argsort": _rows(lambda r: vnp.take_along_axis(r, vnp.argsort(-r), 0),
                                P.take_along),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_per_row_loops_batch_into_one_operation(name):
    make, prim = CASES[name]
    _e0, e1 = assert_size_independent(make)
    assert count(e1.stages["batch"], prim) == 1
    f, args = make(4)
    check(f, args)


def test_loop_over_edges_with_traced_indices():
    """Messages gathered by a traced edge list and accumulated with np.add.at, per edge in a
    loop: the same result and gradient as the vectorized call."""
    edges = np.array([[0, 1], [1, 2], [2, 0], [0, 2], [1, 1], [2, 2]])
    x = R.standard_normal((3, 4))

    def loop(x, e):
        agg = vnp.zeros((3, 4))
        for k in range(e.shape[0]):
            np.add.at(agg, e[k, 1], x[e[k, 0]] * 2.0)
        return vnp.sum(vnp.tanh(agg))

    def vectorized(x, e):
        agg = vnp.zeros((3, 4))
        np.add.at(agg, e[:, 1], x[e[:, 0]] * 2.0)
        return vnp.sum(vnp.tanh(agg))
    import vecgrad as vg
    np.testing.assert_allclose(vg.jit(loop)(x, edges), vg.jit(vectorized)(x, edges))
    np.testing.assert_allclose(vg.grad(loop)(x, edges), vg.grad(vectorized)(x, edges),
                               rtol=1e-12)
    vg.check_grads(loop, [x, edges])
