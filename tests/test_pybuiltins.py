"""Python's builtin max / min of traced 0-d values (vecgrad.pybuiltins): exactly Python's fold
(first of equal items wins; NaN kept only where Python keeps it), gradients to the item picked
(central differences in float64), batched equal to unbatched, and every other call left to
Python's own builtins (a key=, arrays that are not 0-d, mixed dtypes: the ConcretizationError
as before)."""
from __future__ import annotations

import builtins

import numpy as np
import pytest
from test_batch import check as check_batched
from test_scatter_writes import fd_check

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import ConcretizationError

R = np.random.default_rng(3)
_MAX, _MIN = builtins.max, builtins.min  # (Python's own: this module is imported untraced)


def relu_rows(X, w):
    m = vnp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        m[i] = max(m[i], X[i] @ w - 0.5)
    return np.sum(m ** 2)


def nearest_centre(X, C):
    return sum(min(np.sum((X[i] - C[k]) ** 2) for k in range(C.shape[0]))
               for i in range(X.shape[0]))


def clipped(x):
    return sum(max(0.0, min(x[i], 1.0), x[0] - 3.0) * (i + 1) for i in range(x.shape[0]))


PROGRAMS = [(relu_rows, lambda: (R.standard_normal((12, 3)), R.standard_normal(3))),
            (nearest_centre, lambda: (R.standard_normal((9, 2)), R.standard_normal((4, 2)))),
            (clipped, lambda: (2 * R.standard_normal(10),))]


@pytest.mark.parametrize("f,make", PROGRAMS)
def test_values_gradients_and_batching(f, make):
    args = make()
    want = f(*args)  # NumPy runs the same function on plain arrays
    got = vg.jit(f)(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-13)
    fd_check(f, args, tuple(range(len(args))))
    check_batched(f, args, argnums=tuple(range(len(args))))


def test_python_semantics_ties_and_nans():
    def f(a, b, c):
        return max(a, b, c), min(a, b, c), max([c, b, a]), min(iter([b, a]))
    for vals in [(1.0, 1.0, 0.5), (np.nan, 2.0, 1.0), (2.0, np.nan, 1.0), (1.0, 2.0, np.nan),
                 (-0.0, 0.0, -1.0), (3.0, 3.0, 3.0)]:
        args = [np.array(v) for v in vals]
        got = vg.jit(f)(*args)
        want = f(*args)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert np.signbit(g) == np.signbit(w)


def _row_extremes(X):
    return sum(min(row) for row in X) + 2.0 * sum(max(row) for row in X)


@pytest.mark.parametrize("kind", ["random", "ties", "nans", "ints"])
def test_max_min_of_an_array_are_pythons_fold_over_its_elements(kind):
    # max(x) of a 1-d traced array: one argmax over x, exactly Python's fold over x's items
    X = R.standard_normal((7, 5))
    if kind == "ties":
        X = np.round(X)
    if kind == "nans":
        X[[0, 2, 4], [0, 3, 4]] = np.nan
    if kind == "ints":
        X = R.integers(-3, 4, (7, 5))
        np.testing.assert_array_equal(vg.jit(_row_extremes)(X), _row_extremes(X))
        return
    got, want = vg.jit(_row_extremes)(X), _row_extremes(X)
    np.testing.assert_allclose(got, want, rtol=1e-14, equal_nan=True)
    if kind != "nans":
        check_batched(_row_extremes, (X,), fd=kind != "ties")  # (ties: not differentiable)
        g = vg.grad(_row_extremes)(X)
        for i, row in enumerate(X):  # the cotangent reaches the first of equal items only
            assert g[i, list(row).index(min(row))] in (1.0, 3.0)
            assert np.count_nonzero(g[i]) <= 2


def test_the_gradient_goes_to_the_first_of_equal_items():
    g = vg.grad(lambda a, b: max(a, b) * 3.0, argnums=(0, 1))(np.array(2.0), np.array(2.0))
    assert (float(g[0]), float(g[1])) == (3.0, 0.0)


def test_other_calls_are_pythons():
    x = R.standard_normal(4)
    with pytest.raises(ConcretizationError):
        vg.jit(lambda x: max(x[0], x[1], key=lambda t: -t))(x)
    with pytest.raises(ConcretizationError):
        vg.jit(lambda x: max(x[:2], x[2:]))(x)  # (arrays, not 0-d: ambiguous in NumPy too)
    with pytest.raises(ConcretizationError):  # float32 against float64: the winner's dtype
        vg.jit(lambda x, y: max(x[0], y[0]))(x, x.astype(np.float32))
    # numbers alone, and empty iterables with a default, as in Python
    assert vg.jit(lambda x: x * max(2, 5, 3) + min([], default=1))(x)[0] == x[0] * 5 + 1
    assert builtins.max is _MAX and builtins.min is _MIN  # (restored after the trace)
    with pytest.raises(ValueError):
        vg.jit(lambda x: x * max([]))(x)


def test_a_failed_trace_restores_the_builtins():
    def bad(x):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        vg.jit(bad)(np.ones(2))
    assert builtins.max is _MAX and builtins.min is _MIN
