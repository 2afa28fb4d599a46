"""`H[k] *= c` on a row (or column) at a traced int k: Python reads the row view H[k], the
in-place product writes through it into H, then assigns the view back, `H[k] = view` (tracing:
`__setitem__`). That second write put the same values at the same place again, and its
selection read the product a second time, so the chain of updates looked like a read used
outside its link: a rolled loop of 2,000 steps (335 ms, 2,000x the same update written
`H[k] = 0.8 * H[k]`). The assignment of a view whose values the base already holds at its
key (the base unchanged since the view wrote through it or was read) writes nothing. Values
equal NumPy's loop, batched equals unbatched, gradients match central differences, the trace
holds one write per update, and a view written back after its base changed is still
written."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(2712)


def rows_imul(X, k, xp=vnp):
    H = xp.ones((4, X.shape[1]))
    for i in range(len(k)):
        H[k[i]] *= 0.8
        H[k[i]] += X[i]
    return np.sum(H ** 2)


def rows_idiv_tanh(X, k, xp=vnp):
    H = xp.full((5, X.shape[1]), 2.0)
    for i in range(len(k)):
        H[k[i]] /= 2.0
        H[k[i]] += np.tanh(X[i])
    return np.sum(np.sin(H))


def row_tail_imul(X, k, xp=vnp):
    H = xp.ones((4, X.shape[1]))
    for i in range(len(k)):
        H[k[i], 1:] *= 0.5
        H[k[i]] += X[i]
    return np.sum(H ** 2)


def column_imul(X, k, xp=vnp):
    H = xp.ones((X.shape[1], 4))
    for i in range(len(k)):
        H[:, k[i]] *= 0.9
        H[:, k[i]] += X[i]
    return np.sum(H ** 3)


def decay_only(X, k, xp=vnp):
    H = xp.ones((4, X.shape[1])) + X[0]
    for i in range(len(k)):
        H[k[i]] *= 0.7
    return np.sum(H ** 2)


CASES = [rows_imul, rows_idiv_tanh, row_tail_imul, column_imul, decay_only]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_inplace_products_on_traced_rows_batch(f):
    X, k = R.standard_normal((20, 3)), R.integers(0, 4, 20)
    e = check_batched(f, (X, k))
    assert count(e.stages["batch"], P.loop) == 0, e.stages["batch"]
    np.testing.assert_allclose(vg.jit(f)(X, k), f(X, k, xp=np), rtol=1e-12)


def test_one_write_per_update():
    X, k = R.standard_normal((6, 3)), R.integers(0, 4, 6)
    g = vg.grad(decay_only).entry(X, k)[0].stages["cse"]
    assert count(g, P.setitem) == len(k), g


def written_back_late(X, k, xp=vnp):
    H = xp.ones((4, X.shape[1]))
    for i in range(len(k)):
        t = H[k[i]]
        t *= 2.0
        H[(k[i] + 1) % 4] += X[i]  # (the base changes after the view wrote through it)
        H[k[i]] = t
    return np.sum(H ** 2)


def read_then_written(X, k, xp=vnp):
    H = xp.ones((4, X.shape[1]))
    for i in range(len(k)):
        t = H[k[i]]
        H[k[i]] += X[i]
        H[k[i]] = t  # (a view: it holds the add, so this writes nothing new)
        H[k[i]] *= 1.5
    return np.sum(H ** 2)


@pytest.mark.parametrize("f", [written_back_late, read_then_written])
def test_views_written_back_after_their_base_changed(f):
    X, k = R.standard_normal((12, 3)), R.integers(0, 4, 12)
    check_batched(f, (X, k))
    np.testing.assert_allclose(vg.jit(f)(X, k), f(X, k, xp=np), rtol=1e-12)
