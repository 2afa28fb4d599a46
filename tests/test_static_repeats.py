"""Writes at static integer lists that repeat positions inside loops (`buf[[i, i]] += v`):
NumPy assigns in index order, so the last write to a position wins (no accumulation). The
last writers are found while tracing (numpy/_scatter._last_writes_static) and a buffer's
read at such a list is the slice its positions span, then the list inside it
(batch/chains._narrowed), so the iterations batch and the graph does not grow with the
trip count. Each program is checked against NumPy (values, dtypes), batched against
unbatched, and its gradient against central differences in float64."""
from __future__ import annotations

import numpy as np
from test_batch import assert_size_independent, check

import vecgrad as vg
import vecgrad.numpy as vnp


def _numpy_and_vecgrad(f, *args):
    got, want = vg.jit(f)(*args), f(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-13)


def dup_pair(x):
    buf = vnp.zeros(len(x))
    for i in range(len(x)):
        buf[[i, i]] += x[i] * 2.0  # adds once: the last of the two equal writes wins
    return np.sum(buf ** 2)


def dup_rows(X):
    buf = vnp.ones((2 * X.shape[0], X.shape[1]))
    for i in range(X.shape[0]):
        buf[[2 * i + 1, 2 * i, 2 * i + 1]] += np.tanh(X[i])  # row 2 i + 1 written last
    return np.sum(buf * np.cos(buf))


def dup_assign_cols(X):
    out = vnp.zeros((X.shape[0], X.shape[1] + 2))
    for j in range(X.shape[1]):
        out[:, [j + 2, j, j + 2]] = np.stack([X[:, j], -X[:, j], X[:, j] ** 2], axis=1)
    return np.sum(out ** 3)


def dup_mixed(x):
    buf = vnp.zeros(len(x) + 3)
    for i in range(len(x)):
        buf[[i + 3, i, i + 3, i]] = np.array([1.0, 2.0, 3.0, 4.0]) * x[i]
    return np.sum(np.sin(buf))


def test_last_write_wins_as_in_numpy():
    rng = np.random.default_rng(0)
    _numpy_and_vecgrad(dup_pair, rng.standard_normal(7))
    _numpy_and_vecgrad(dup_rows, rng.standard_normal((6, 3)))
    _numpy_and_vecgrad(dup_assign_cols, rng.standard_normal((4, 5)))
    _numpy_and_vecgrad(dup_mixed, rng.standard_normal(6))


def test_repeated_static_lists_batch_and_differentiate():
    rng = np.random.default_rng(1)
    for f, x in ((dup_pair, rng.standard_normal(9)), (dup_rows, rng.standard_normal((5, 3))),
                 (dup_assign_cols, rng.standard_normal((3, 6))),
                 (dup_mixed, rng.standard_normal(8))):
        check(f, (x,))


def test_repeated_static_lists_do_not_grow_with_the_trip_count():
    rng = np.random.default_rng(2)
    assert_size_independent(lambda n: (dup_pair, (rng.standard_normal(n),)), sizes=(6, 14))
    assert_size_independent(lambda n: (dup_rows, (rng.standard_normal((n, 3)),)),
                            sizes=(6, 14))


def test_integer_buffer_and_negative_positions():
    def f(x):
        buf = np.zeros(6, dtype=np.int64) if isinstance(x, np.ndarray) else vnp.zeros(6, "int64")
        buf[[-1, 2, -1]] = np.array([3, 4, 5])
        return buf * x
    x = np.arange(6.0)
    _numpy_and_vecgrad(f, x)


def add_at_per_row(X, idx):
    out = vnp.zeros((X.shape[0], 8))
    for r in range(X.shape[0]):
        np.add.at(out[r], idx, X[r])  # repeated positions accumulate
    return np.sum(out ** 2)


def subtract_at_cells_per_block(X, idx):
    out = vnp.ones((X.shape[0], 3, 5))
    for r in range(X.shape[0]):
        np.subtract.at(out[r], (1, idx), np.tanh(X[r]))  # an int beside the list
    return np.sum(out * np.cos(out))


def test_ufunc_at_per_row_batches_as_one_write():
    """primitives/structural._joint_advanced: a write through a static list per iteration is
    one write at (:, list) when the list's axes stay in place."""
    rng = np.random.default_rng(3)
    idx = [0, 3, 3, 7]
    for f, X in ((lambda X: add_at_per_row(X, idx), rng.standard_normal((6, 4))),
                 (lambda X: subtract_at_cells_per_block(X, [4, 0, 4, 2]),
                  rng.standard_normal((5, 4)))):
        _numpy_and_vecgrad(f, X)
        check(f, (X,))
    assert_size_independent(lambda n: (lambda X: add_at_per_row(X, idx),
                                       (rng.standard_normal((n, 4)),)), sizes=(5, 11))
