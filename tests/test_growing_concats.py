"""Arrays grown in a loop (`out = np.append(out, v)`, `acc = np.concatenate([acc, piece])`,
np.hstack / np.vstack, prepending) are one concatenation of the pieces, which batching
reads as one stacked value: batched == unbatched (values and gradients) == central
differences == NumPy running the loop, and the batched graph does not grow with the loop."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, count

import vecgrad as vg
import vecgrad.primitives as P
from vecgrad.api import trace_graph
from vecgrad.batch.concats import flatten_concats, growing_concats


def append_scalars(x):
    out = np.array([])
    for t in range(1, len(x)):
        out = np.append(out, x[t] - x[t - 1])
    return np.sum(out ** 2)


def append_rows(X):
    acc = X[:1]
    for i in range(1, len(X)):
        acc = np.concatenate([acc, np.tanh(X[i:i + 1]) * 2.0])
    return np.sum(acc ** 2)


def append_axis(X):
    acc = np.zeros((X.shape[0], 0))
    for j in range(X.shape[1]):
        acc = np.append(acc, (X[:, j] ** 2)[:, None], axis=1)
    return np.sum(acc * np.arange(acc.shape[1]))


def prepend(x):
    acc = x[-1:] * 1.0
    for t in range(len(x) - 2, -1, -1):
        acc = np.concatenate([np.sin(x[t:t + 1]), acc])
    return np.sum(acc * np.arange(1.0, len(x) + 1))


def hstack_pieces(x):
    acc = np.array([])
    for t in range(0, len(x) - 1, 2):
        acc = np.hstack([acc, x[t:t + 2] * x[t + 1]])
    return np.sum(acc ** 3)


def vstack_rows(X, w):
    acc = np.empty((0, X.shape[1]))
    for x in X:
        acc = np.vstack([acc, x * w])
    return np.sum(np.exp(-acc ** 2))


def read_each_step(x):
    # every partial array is read: nothing to splice, the loop stays exact
    out, tot = np.array([]), 0.0
    for t in range(len(x)):
        out = np.append(out, x[t] ** 2)
        tot = tot + np.sum(out)
    return tot


def two_growing(x):
    a, b = np.array([]), np.array([])
    for t in range(len(x)):
        a = np.append(a, np.cos(x[t]))
        b = np.append(b, np.stack([x[t], -x[t]]))
    return np.sum(a ** 2) + np.sum(b * np.arange(len(b)))


PROGRAMS = [(append_scalars, (12,)), (append_rows, (9, 3)), (append_axis, (4, 7)),
            (prepend, (10,)), (hstack_pieces, (12,)), (vstack_rows, (8, 3)),
            (read_each_step, (9,)), (two_growing, (8,))]


def _args(f, shape, seed=0):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape)
    return (x, r.standard_normal(shape[1])) if f is vstack_rows else (x,)


@pytest.mark.parametrize("f,shape", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_growing_arrays_batched_equal_unbatched_and_numpy(f, shape):
    args = _args(f, shape)
    e = check(f, args, argnums=tuple(range(len(args))))
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)
    if f is not read_each_step:  # (its partial arrays are read: the chain stays)
        assert count(e.stages["batch"], P.concatenate) <= 3


@pytest.mark.parametrize("f,shape", [p for p in PROGRAMS if p[0] is not read_each_step],
                         ids=[f.__name__ for f, _ in PROGRAMS if f is not read_each_step])
def test_the_batched_graph_does_not_grow_with_the_loop(f, shape):
    def size(k):
        s = (shape[0] * k,) + shape[1:] if f is not append_axis else (shape[0], shape[1] * k)
        e, _ = vg.grad(f, argnums=0).entry(*_args(f, s))
        return len(e.stages["simplify"].eqns)
    assert size(4) == size(2)


def test_flatten_splices_only_links_read_once():
    g = trace_graph(read_each_step, (np.ones(5),))
    assert growing_concats(g)
    assert flatten_concats(g) is g  # every link is read twice (by the sum too)
    g = trace_graph(append_scalars, (np.ones(6),))
    flat = flatten_concats(g)
    big = [e for e in flat.eqns if e.prim is P.concatenate and len(e.inputs) > 2]
    assert len(big) == 1 and len(big[0].inputs) == 6  # np.array([]) and five pieces
