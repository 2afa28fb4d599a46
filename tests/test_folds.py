"""Python's max/min folds as one primitive each way (primitives/folds.py): the running value,
its winners and its cotangent's segment sums against a Python loop on ties and NaNs (where
central differences say nothing), the final value's first-tie gradient, and the programs that
read the fold only at its end (one `fold_total`, no running value), each against its unrolled
trace and central differences."""
from __future__ import annotations

import builtins

import numpy as np
import pytest
from specs_folds import fold_ref, scatter_ref
from test_scans import prims, unrolled

import vecgrad as vg
from vecgrad import primitives as P


def _ties_nans(seed: int, shape: tuple, nan_at: tuple) -> np.ndarray:
    x = np.random.default_rng(seed).integers(-3, 4, shape).astype(float)
    for i in nan_at:
        x.reshape(-1)[i] = np.nan
    return x


CASES = [((12,), ()), ((12,), (0,)), ((12,), (5,)), ((12,), (0, 7)), ((9, 3), (0, 4)),
         ((9, 3), (2, 10, 26))]


@pytest.mark.parametrize("greater", [True, False])
@pytest.mark.parametrize("shape,nan_at", CASES)
def test_running_value_and_winners_are_pythons(shape, nan_at, greater):
    x = _ties_nans(len(nan_at), shape, nan_at)
    val, won = fold_ref(x, 0, greater)
    got = P.fold_extreme.impl(x, axis=0, greater=greater)
    np.testing.assert_array_equal(got, val)  # (NaNs where Python keeps one)
    np.testing.assert_array_equal(P.fold_winner.impl(got, axis=0, greater=greater), won)
    g = np.random.default_rng(1).standard_normal(shape)
    np.testing.assert_allclose(P.fold_scatter.impl(g, got, axis=0, greater=greater),
                               scatter_ref(g, val, 0, greater), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(P.fold_total.impl(x, axis=0, greater=greater), val[-1])


def test_integers_fold_as_numpy():
    x = np.random.default_rng(2).integers(-5, 5, (10, 2))
    for greater in (True, False):
        np.testing.assert_array_equal(P.fold_extreme.impl(x, axis=0, greater=greater),
                                      fold_ref(x, 0, greater)[0])


def best_so_far(x):
    best = x[0]
    for t in range(1, len(x)):
        best = max(best, x[t])
    return best * 2.0


def lowest_gap(x, w):
    low, gap = x[0] * w, 0.0
    for t in range(1, len(x)):
        low = min(low, x[t] * w)
        gap = min(gap, x[t] - low)
    return gap


def _same_as_unrolled(f, args):
    argnums = tuple(range(len(args)))
    val0, grads0 = unrolled(f, args, argnums)
    val, grads = vg.value_and_grad(f, argnums=argnums)(*args)
    np.testing.assert_allclose(val, val0, rtol=1e-12, equal_nan=True)
    for a, b in zip(grads, grads0):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True)
    e, _ = vg.grad(f, argnums=argnums).entry(*args)
    return prims(e.stages["final"])


@pytest.mark.parametrize("nan_at", [None, 0, 6])
def test_a_fold_read_at_its_end_is_one_total_with_the_first_winner(nan_at):
    x = np.array([1.0, 4.0, 2.0, 4.0, 4.0, -1.0, 3.0, 4.0])  # the first 4 wins
    if nan_at is not None:
        x[nan_at] = np.nan
    found = _same_as_unrolled(best_so_far, (x,))
    assert "fold_total" in found and "fold_extreme" not in found, found
    if nan_at != 0:
        np.testing.assert_array_equal(vg.grad(best_so_far)(x), 2.0 * (np.arange(8) == 1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_min_fold_reading_a_min_fold(seed):
    r = np.random.default_rng(seed)
    x = np.cumsum(r.standard_normal(40)) + 1e6 * seed  # (far from zero: no rescaling)
    found = _same_as_unrolled(lowest_gap, (x, np.array(0.9)))
    assert "fold_extreme" in found and "fold_total" in found and "loop" not in found, found
    vg.check_grads(lowest_gap, (x, np.array(0.9)), argnums=(0, 1), rtol=1e-6, atol=1e-6)
    ties = r.integers(-2, 3, 40).astype(float)
    _same_as_unrolled(lowest_gap, (ties, np.array(1.0)))


def test_python_reference_of_the_tests_is_builtins():
    # (fold_ref stands for builtins.max: one check that it does)
    x = np.array([2.0, np.nan, 2.0, 3.0, 3.0])
    got = fold_ref(x, 0, True)[0]
    c = x[0]
    for t, v in enumerate(x):
        c = builtins.max(c, v)
        assert got[t] == c
