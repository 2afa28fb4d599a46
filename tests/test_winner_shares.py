"""The gradient of a scatter-max / -min (running maxima per key: lists, dicts, edge lists,
buffers at traced positions, rows) is one `winner_shares` (each position's winners share its
cotangent, as np.max's ties do), and Python's builtin max / min is the scatter's own op
(`builtin_max`: a NaN value never wins, no where to clean the values and mask their
gradient). Values equal the loop's, batched equals unbatched, gradients match central
differences; ties share; NaN values raise no warning; second derivatives go through the
VJP's own VJP."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
from vecgrad import numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(28)


def _keys(n, b):
    return [int(v) for v in R.integers(0, b, n)]


def list_builtin_max(x, k):
    best = [0.0] * 6
    for i, key in enumerate(k):
        best[key] = max(best[key], x[i] * x[i] - 0.3)
    return sum((b + 1.0) ** 0.5 for b in best)


def buffer_builtin_min(x, k):
    lo = vnp.full(5, 2.0)
    for i in range(len(k)):
        lo[k[i]] = min(lo[k[i]], np.cos(x[i]) + 0.5)
    return np.sum(lo ** 2)


def buffer_negative_ids(x, k):
    hi = vnp.zeros(7)
    for i in range(len(k)):
        hi[k[i] - 7] = max(hi[k[i] - 7], x[i] * 0.7)
    return np.sum(np.exp(hi))


def edges_builtin_max(x, w, edges):
    best = [0.0] * len(x)
    for u, v in edges:
        best[v] = max(best[v], x[u] * w)
    return sum(b * b for b in best)


def dict_min_default(x, k):
    lo = {}
    for i, key in enumerate(k):
        lo[key] = min(lo.get(key, 1.5), np.tanh(x[i]))
    return sum(v * (j + 1.0) for j, v in enumerate(lo[key] for key in sorted(lo)))


def rows_np_maximum(X, k):
    pooled = [np.zeros(X.shape[1]) for _ in range(4)]
    for i, key in enumerate(k):
        pooled[key] = np.maximum(pooled[key], X[i] * 1.5 - 0.2)
    return sum(np.sum(np.tanh(p)) for p in pooled)


def rows_traced_ids(X, k):
    buf = vnp.full((5, X.shape[1]), -1.0)
    for i in range(len(k)):
        buf[k[i]] = np.maximum(buf[k[i]], X[i] ** 2 - 1.0)
    return np.sum(buf * np.arange(1.0, X.shape[1] + 1.0))


def hi_lo(x, k):
    hi, lo = [-5.0] * 3, [5.0] * 3
    for i, key in enumerate(k):
        hi[key] = max(hi[key], x[i])
        lo[key] = min(lo[key], x[i])
    return sum((h - m) ** 2 for h, m in zip(hi, lo))


CASES = [
    (list_builtin_max, lambda: (R.standard_normal(40), _keys(40, 6))),
    (buffer_builtin_min, lambda: (R.standard_normal(30), np.array(_keys(30, 5)))),
    (buffer_negative_ids, lambda: (R.standard_normal(30), np.array(_keys(30, 7)))),
    (edges_builtin_max, lambda: (R.standard_normal(8), np.array(0.8),
                                 [(int(a), int(b)) for a, b in R.integers(0, 8, (40, 2))])),
    (dict_min_default, lambda: (R.standard_normal(30), _keys(30, 5))),
    (rows_np_maximum, lambda: (R.standard_normal((25, 3)), _keys(25, 4))),
    (rows_traced_ids, lambda: (R.standard_normal((25, 3)), np.array(_keys(25, 5)))),
    (hi_lo, lambda: (R.standard_normal(30), _keys(30, 3))),
]


def _final(f, args):
    return vg.grad(f).entry(*args)[0].compiled.graph


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_gradient_is_one_winner_shares_per_scatter(f, make):
    args = make()
    check_batched(f, args)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)
    g = _final(f, args)
    n = count(g, P.scatter_reduce_along)
    assert n >= 1 and count(g, P.winner_shares) == n
    assert count(g, P.isnan) == 0  # (Python's max: the scatter's op skips NaN values)


def test_ties_share_the_cotangent():
    x = np.array([1.0, 3.0, 3.0, 0.5, 2.0, 2.0, 2.0])
    k = np.array([0, 0, 0, 1, 2, 2, 2])

    def f(x, k):  # (position 1's value ties with the buffer's own entry)
        best = vnp.zeros(3) + np.array([2.0, 0.5, 0.0])
        for i in range(len(k)):
            best[k[i]] = max(best[k[i]], x[i])
        return best[0] * 1.0 + best[1] * 10.0 + best[2] * 100.0
    assert count(_final(f, (x, k)), P.winner_shares) == 1
    np.testing.assert_allclose(vg.grad(f)(x, k), [0, 0.5, 0.5, 5, 100 / 3, 100 / 3, 100 / 3])

    def g(x, k):
        buf = vnp.full(2, 3.0)
        for i in range(len(k)):
            buf[k[i]] = np.minimum(buf[k[i]], x[i])
        return buf[0] * 6.0 + buf[1]
    np.testing.assert_allclose(vg.grad(g)(-x[:4], k[:4]), [0, 3, 3, 1])


def test_nan_values_never_win_and_raise_no_warning():
    x = R.standard_normal(40)
    x[[2, 9, 30]] = np.nan
    k = np.array(_keys(40, 6))
    keep = ~np.isnan(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f, kk in ((list_builtin_max, k), (buffer_builtin_min, k % 5), (hi_lo, k % 3)):
            kk = [int(q) for q in kk] if f is not buffer_builtin_min else kk
            got, want = vg.jit(f)(x, kk), f(x, kk)
            np.testing.assert_allclose(got, want, rtol=1e-12)
            # (a NaN value never wins: the others' gradient is that of the loop without it)
            drop = [q for q, w in zip(kk, keep) if w]
            drop = np.array(drop) if f is buffer_builtin_min else drop
            np.testing.assert_allclose(vg.grad(f)(x, kk)[keep], vg.grad(f)(x[keep], drop),
                                       rtol=1e-12)


def test_a_nan_in_the_buffer_stays():
    def f(x, k):
        lo = vnp.zeros(3) + np.array([np.nan, 1.0, 1.0])
        for i in range(len(k)):
            lo[k[i]] = min(lo[k[i]], x[i])
        return lo
    x, k = R.standard_normal(12), np.array(_keys(12, 3))
    want = np.array([np.nan, 1.0, 1.0])
    for i, key in enumerate(k):
        want[key] = min(want[key], x[i])
    np.testing.assert_array_equal(vg.jit(f)(x, k), want)


def test_second_derivatives_go_through_the_shares():
    def f(x, k):
        best = vnp.zeros(4)
        for i in range(len(k)):
            best[k[i]] = max(best[k[i]], x[i] * x[i])
        return np.sum(best ** 3)
    x, k = R.standard_normal(12), np.array(_keys(12, 4))
    v = R.standard_normal(12)
    eps = 1e-5
    g = vg.grad(f)
    fd = (g(x + eps * v, k) - g(x - eps * v, k)) / (2 * eps)
    np.testing.assert_allclose(vg.hessian(f)(x, k) @ v, fd, rtol=1e-6, atol=1e-8)


def test_a_batch_of_scatters_shares_per_instance():
    def f(x, k):
        best = vnp.zeros(3)
        for i in range(len(k)):
            best[k[i]] = max(best[k[i]], x[i])
        return np.sum(best ** 2)
    X, k = np.round(R.standard_normal((4, 10)), 1), np.array(_keys(10, 3))
    got = vg.vmap(vg.grad(f), in_axes=(0, None))(X, k)
    np.testing.assert_allclose(got, np.stack([vg.grad(f)(x, k) for x in X]), rtol=1e-12)
