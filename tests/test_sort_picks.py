"""Gradients of a sorted array read at a few positions (rewrite/orderings.py,
scatter_of_picks): a median, a range, a quantile, the two largest. The cotangent reaches the
first entry of x equal to each sorted value read (the first NaN for a NaN), so the gradient
needs the sort and one comparison per position, not the argsort. Every program: NumPy's
values, gradients equal to central differences, the batched graph equal to the unbatched
one, and no argsort left; ties and NaNs checked against the argsort's scatter."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_same_function, entry

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(29)


def median_odd(X):
    return sum(np.sort(r)[r.shape[0] // 2] ** 2 for r in X)


def median_even(X):
    tot = 0.0
    for r in X:
        s = np.sort(r)
        m = r.shape[0] // 2
        tot = tot + np.tanh(0.5 * (s[m - 1] + s[m]))
    return tot


def spread(X):
    tot = 0.0
    for r in X:
        s = np.sort(r)
        tot = tot + (s[-1] - s[0]) ** 2 + 0.5 * (s[-2] - s[1])
    return tot


def top_two_weighted(X):
    return sum(np.dot(np.sort(r)[::-1][:2], [2.0, 1.0]) for r in X)


def strided_picks(X):
    return sum(np.sum(np.sort(r)[::3] ** 2) for r in X)


def same_position_twice(X):
    tot = 0.0
    for r in X:
        s = np.sort(r)
        tot = tot + s[2] + np.sin(s[2]) + s[-1] * s[2]
    return tot


def into_buffer(X):
    out = vnp.zeros((X.shape[0], 2))
    for i in range(X.shape[0]):
        s = np.sort(X[i] * 2.0 - 1.0)
        out[i, 0] = s[1]
        out[i, 1] = s[-2] ** 2
    return np.sum(out * np.array([1.5, -0.5]))


def whole_rows(X):
    S = np.sort(X, axis=1)
    return np.sum(S[:, 0] * S[:, -1]) + np.sum(np.exp(S[:, 3]))


def columns(X):
    S = np.sort(X, axis=0)
    return np.sum(S[0] ** 2) + np.sum(S[-1])


def blocks(X):
    Y = X.reshape(2, 3, 8)
    return sum(np.sum(np.sort(b, axis=1)[:, 4] ** 2) for b in Y)


def two_sorted_operands(X, Y):
    return sum((np.sort(a)[-1] - np.sort(b)[0]) ** 2 for a, b in zip(X, Y))


def quantile_by_sort(X):
    return sum(np.sort(np.abs(r) + r)[int(0.75 * (r.shape[0] - 1))] for r in X)


def argsort_top_three(X):
    tot = 0.0
    for r in X:
        top = np.argsort(r)[-3:]
        tot = tot + np.sum(r[top] ** 2)
    return tot


def argsort_reversed(X):
    return sum(np.dot(r[np.argsort(r)[::-1][:2]], [1.5, -1.0]) for r in X)


def argsort_and_sort(X):
    tot = 0.0
    for r in X:
        o = np.argsort(r)
        tot = tot + np.sort(r)[-1] * 2.0 + np.sum(r[o[:2]] * 0.5)
    return tot


ONE = [argsort_top_three, argsort_reversed, argsort_and_sort, median_odd, median_even, spread, top_two_weighted, strided_picks, same_position_twice,
       into_buffer, whole_rows, columns, blocks, quantile_by_sort]


def _prims(e, stage="final"):
    return [q.prim.name for q in e.stages[stage].eqns]


@pytest.mark.parametrize("f", ONE + [two_sorted_operands], ids=lambda f: f.__name__)
def test_picks_of_a_sort_are_numpys_without_an_argsort(f):
    n = 2 if f is two_sorted_operands else 1
    shape = (6, 9) if f is median_odd else (6, 8)
    args = tuple(R.standard_normal(shape) for _ in range(n))
    assert np.all(vg.jit(f)(*args) == pytest.approx(f(*args), rel=1e-12))
    argnums = tuple(range(n))
    vg.check_grads(f, args, argnums=argnums, rtol=1e-6, atol=1e-8)
    e, leaves = entry(f, args, argnums=argnums)
    assert "argsort" not in _prims(e) and "sort" in _prims(e)
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    assert_same_function(e.stages["grad.cse"], e.stages["final"], leaves)


def _argsort_gradient(f, X):
    """The gradient by the argsort's scatter (the rule switched off)."""
    from vecgrad.rewrite import simplify as S
    rules = [r for r in S.RULES if r.rewrite.__name__ != "scatter_of_picks"]
    old = S.RULES[:]
    S.RULES[:] = rules
    vg.clear_cache()
    try:
        return vg.grad(f)(X)
    finally:
        S.RULES[:] = old
        vg.clear_cache()


@pytest.mark.parametrize("f", [median_odd, spread, whole_rows, columns],
                         ids=lambda f: f.__name__)
def test_ties_and_nans_get_the_cotangent_of_the_value_read(f):
    """With ties the first equal entry gets each sorted value's cotangent (a subgradient:
    every tie group gets the sum the argsort's order gives it); a NaN read (NaNs sort last)
    sends its cotangent to the first NaN of its row, where the argsort would send it to one
    of the row's NaNs."""
    X = np.round(R.standard_normal((6, 9)) * 2) / 2
    X[1, 3] = X[4, 0] = X[4, 7] = np.nan
    got = vg.grad(f)(X)
    want = _argsort_gradient(f, X.copy())
    assert np.any((got != want) & ~np.isnan(got) & ~np.isnan(want))  # (ties moved)
    if f is columns:
        got, want, X = got.T, want.T, X.T
    for g, w, x in zip(got, want, X):
        for v in np.unique(x[~np.isnan(x)]):
            assert np.sum(g[x == v]) == pytest.approx(np.sum(w[x == v]), abs=1e-12,
                                                      nan_ok=True)
            assert np.all(g[x == v][1:] == 0)
        nan = np.isnan(x)
        np.testing.assert_array_equal(np.isnan(g[nan]).sum() + (g[nan] != 0).sum() > 0,
                                      np.isnan(w[nan]).sum() + (w[nan] != 0).sum() > 0)


def test_an_argsort_read_whole_or_used_elsewhere_is_kept():
    """The user's argsort read whole, or used to gather another array, keeps its argsort."""
    def by_key(X, Y):
        return sum(np.sum(x[np.argsort(y)[-2:]] ** 2) for x, y in zip(X, Y))

    def returned_order(X):
        o = [np.argsort(r)[-2:] for r in X]
        return sum(np.sum(r[k]) for r, k in zip(X, o)), np.stack(o)
    X, Y = R.standard_normal((5, 8)), R.standard_normal((5, 8))
    e, _ = entry(by_key, (X, Y), argnums=(0, 1))
    assert "argsort" in _prims(e)
    vg.check_grads(by_key, (X, Y), argnums=(0, 1), rtol=1e-6, atol=1e-8)
    (v, o), (v0, o0) = vg.jit(returned_order)(X), returned_order(X)
    assert v == pytest.approx(v0, rel=1e-12)
    np.testing.assert_array_equal(o, o0)


def test_many_picks_keep_the_argsort():
    """Past a few positions per row (a trimmed mean), one argsort is cheaper: unchanged."""
    def trimmed(X):
        return sum(np.mean(np.sort(r)[2:-2]) ** 2 for r in X)
    X = R.standard_normal((6, 16))
    e, _ = entry(trimmed, (X,))
    assert "argsort" in _prims(e)
    vg.check_grads(trimmed, (X,), rtol=1e-6, atol=1e-8)


def test_float32_rows():
    X = R.standard_normal((5, 8)).astype(np.float32)
    g = vg.grad(spread)(X)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, _argsort_gradient(spread, X), rtol=1e-6)
