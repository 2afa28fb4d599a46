"""Running maxima and minima kept per key in a Python list or dict (`best[k] = max(best[k], v)`,
Python's builtin or np.maximum, keys from lists, dicts, edge tuples; batch/foldchains): one
scatter per group of chains of unequal lengths. Values equal Python's loop, batched equals
unbatched, gradients match central differences; NaN values never win Python's max and
propagate through np.maximum; chains read between links, chains of one length and chains
whose result another chain reads keep the loop's values."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

import vecgrad as vg
from vecgrad import primitives as P

R = np.random.default_rng(27)


def _keys(n, b, rng=R):
    return [int(v) for v in rng.integers(0, b, n)]


def list_max(x, k):
    best = [0.0] * 5
    for i in range(len(k)):
        best[k[i]] = max(best[k[i]], x[i] * x[i])
    return sum((b + 1.0) ** 0.5 for b in best)


def list_min_tanh(x, k):
    lo = [2.0] * 4
    for i, key in enumerate(k):
        lo[key] = min(lo[key], np.tanh(x[i]) + 1.0)
    return sum(v ** 2 for v in lo)


def dict_get_max(x, k):
    best = {}
    for i, key in enumerate(k):
        best[key] = max(best.get(key, -10.0), x[i] * 2.0)
    return sum(best[key] * (j + 1) for j, key in enumerate(sorted(best)))


def dict_first_value(x, k):
    best = {}
    for i, key in enumerate(k):
        v = np.sin(x[i])
        best[key] = max(best[key], v) if key in best else v
    return sum(best[key] ** 3 for key in sorted(best))


def np_maximum_rows(X, k):
    pooled = [np.zeros(X.shape[1]) for _ in range(4)]
    for i, key in enumerate(k):
        pooled[key] = np.maximum(pooled[key], X[i] * 1.5)
    return sum(np.sum(p ** 2) for p in pooled)


def np_minimum_value_first(x, k):
    lo = [1.0] * 4
    for i, key in enumerate(k):
        lo[key] = np.minimum(x[i] - 0.5, lo[key])
    return sum(v * (j + 2.0) for j, v in enumerate(lo))


def edge_tuples_max(x, edges):
    best = [0.0] * 6
    for u, v in edges:
        best[v] = max(best[v], x[u] * x[v] + x[u])
    return sum(b * b for b in best)


def mixed_max_forms(x, k):
    best = [-1.0] * 4
    for i, key in enumerate(k):
        if i % 2:
            best[key] = max(best[key], x[i])
        else:
            best[key] = np.maximum(best[key], x[i])
    return sum(b ** 2 for b in best)


def two_lists(x, k):
    hi, lo = [0.0] * 3, [0.0] * 3
    for i, key in enumerate(k):
        hi[key] = max(hi[key], x[i])
        lo[key] = min(lo[key], x[i])
    return sum(h - 2.0 * m for h, m in zip(hi, lo))


def _x(n):
    return lambda: (R.standard_normal(n), _keys(n, 5 if n > 20 else 4))


def _edges():
    return R.standard_normal(6), [(int(a), int(b)) for a, b in R.integers(0, 6, (30, 2))]


CASES = [
    (list_max, _x(40)),
    (list_min_tanh, lambda: (R.standard_normal(30), _keys(30, 4))),
    (dict_get_max, lambda: (R.standard_normal(30), _keys(30, 6))),
    (dict_first_value, lambda: (R.standard_normal(30), _keys(30, 5))),
    (np_maximum_rows, lambda: (R.standard_normal((25, 3)), _keys(25, 4))),
    (np_minimum_value_first, lambda: (R.standard_normal(25), _keys(25, 4))),
    (edge_tuples_max, _edges),
    (mixed_max_forms, lambda: (R.standard_normal(30), _keys(30, 4))),
    (two_lists, lambda: (R.standard_normal(30), _keys(30, 3))),
]


def _scatters(f, args):
    return count(vg.grad(f).entry(*args)[0].stages["batch"], P.scatter_reduce_along)


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_keyed_folds_are_one_scatter(f, make):
    args = make()
    check_batched(f, args)
    assert _scatters(f, args) == (2 if f is two_lists else 1)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)


def test_the_graph_does_not_grow_with_the_loop():
    sizes = []
    for n in (40, 400):
        e = vg.grad(list_max).entry(R.standard_normal(n), _keys(n, 5))[0]
        sizes.append(len(e.stages["batch"].eqns))
    assert sizes[0] == sizes[1], sizes


def test_nan_values_never_win_pythons_max():
    x = R.standard_normal(30)
    x[[3, 11]] = np.nan
    k = _keys(30, 3)
    for f in (list_max, list_min_tanh, two_lists):
        got, want = vg.jit(f)(x, k), f(x, k)
        assert np.isnan(got) == np.isnan(want)
        if not np.isnan(want):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_nan_values_propagate_through_np_maximum():
    X = R.standard_normal((25, 3))
    k = _keys(25, 4)
    X[7, 1] = np.nan
    assert np.isnan(vg.jit(np_maximum_rows)(X, k)) and np.isnan(np_maximum_rows(X, k))


def nan_first(x, k):
    best = [float("nan"), 0.0, 0.0]
    for i, key in enumerate(k):
        best[key] = max(best[key], x[i])
    return best[0], best[1] + best[2]


def test_a_nan_first_value_is_kept():
    x = R.standard_normal(20)
    k = [0, 1, 2] + _keys(17, 3)
    got, want = vg.jit(nan_first)(x, k), nan_first(x, k)
    assert np.isnan(got[0]) and np.isnan(want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def chain_reads_chain(x, k):
    best = [0.0] * 3
    for i, key in enumerate(k[:20]):
        best[key] = max(best[key], x[i])
    for i, key in enumerate(k[20:]):
        best[key] = max(best[key], x[i + 20] + best[(key + 1) % 3] * 0.5)
    return sum(b * b for b in best)


def read_between(x, k):
    best = [0.0] * 4
    loss = 0.0
    for i, key in enumerate(k):
        best[key] = max(best[key], x[i])
        loss = loss + best[key] * x[i]
    return loss + sum(best)


def round_robin(x):
    best = [0.0] * 4
    for i in range(len(x)):
        best[i % 4] = max(best[i % 4], x[i])
    return sum(b * b for b in best)


@pytest.mark.parametrize("f, make", [
    (chain_reads_chain, lambda: (R.standard_normal(40), _keys(40, 3))),
    (read_between, lambda: (R.standard_normal(30), _keys(30, 4))),
    (round_robin, lambda: (R.standard_normal(40),)),
], ids=["chain_reads_chain", "read_between", "round_robin"])
def test_other_chains_keep_the_loops_values(f, make):
    args = make()
    check_batched(f, args)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)


def test_int_keys_of_one_length_are_left_to_scans():
    e = vg.grad(round_robin).entry(R.standard_normal(40))[0]
    assert count(e.stages["batch"], P.scatter_reduce_along) == 0


def list_max_reversed(x, k):
    best = [0.0] * 6
    for i, key in enumerate(k):
        best[key] = max(best[key], x[i])
    return sum((j + 1.0) * b for j, b in enumerate(best[::-1]))


@pytest.mark.parametrize("f, make", [
    (list_max, _x(60)), (list_min_tanh, lambda: (R.standard_normal(60), _keys(60, 4))),
    (dict_get_max, lambda: (R.standard_normal(60), _keys(60, 6))),
    (list_max_reversed, lambda: (R.standard_normal(60), _keys(60, 6))),
], ids=["list", "list_min", "dict_sorted", "reversed"])
def test_results_read_in_key_order_take_no_permutation(f, make):
    """The chains are numbered in the order their results are first read, so a list or
    dict read back by key (or in any one order) reads the scatter in place: no gather of a
    permutation in the forward, nor its scatter in the gradient."""
    args = make()
    check_batched(f, args)
    g = vg.grad(f).entry(*args)[0].stages["final"]
    assert count(g, P.scatter_reduce_along) == 1
    assert count(g, P.take) + count(g, P.take_along) == 0, g
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)
