"""Traced boolean masks past the leading axis and before trailing slices (numpy/_moved.py,
numpy/_masked.py): `X[m, :]`, `X[m, 1:]`, `X[m, 0]` (x[m]'s rows indexed), `X[:, m]`,
`X[i, m]`, `X[:, :, m]`, `X[:, M]` reduced as NumPy reduces them (where= reductions,
keepdims, the axes renumbered), entrywise work with scalars and trailing values, written
(`Y[:, m] = 0`, `Y[:, m] *= 2`, `Y[m, :] = 1`); values, gradients by central differences,
batched = unbatched in loops; what depends on the selection's length raises a TraceError."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(41)
X0, x0 = R.standard_normal((4, 5)), R.standard_normal(5)
T0 = R.standard_normal((2, 4, 5))

READS = [
    "np.sum(X[X[:, 0] > 0, :])", "np.sum(X[X[:, 0] > 0, 1:], axis=0)", "np.mean(X[X[:, 1] > 0, 2])",
    "X[X[:, 0] > -0.5, ...].sum(axis=0)", "np.sum(X[:, x > 0])", "np.sum(X[:, x > 0], axis=1)",
    "X[:, x > 0].mean(axis=1)", "np.var(X[:, x > -0.5], axis=1, keepdims=True)",
    "np.std(X[:, x > -0.5])", "np.sum(X[:, x > 0] * 2.0 + 1.0, axis=-1)",
    "np.sum(X[:, x > 0] * X[0, 0], axis=(0, 1), keepdims=True)", "np.sum(X[1, x > 0])",
    "np.count_nonzero(X[:, x > 0] > 0, axis=1)", "np.linalg.norm(X[:, x > 0])",
    "np.sum(T[:, :, x > 0], axis=2)", "np.sum(T[:, x[:4] > 0], axis=(0, 1))",
    "np.sum(T[:, x[:4] > 0, :], axis=1)", "np.sum(T[:, T[0] > 0])", ("np.max(X[:, x > 0], "
    "axis=1, initial=-5.0)"), "np.sum(np.exp(X[:, x > 0]), axis=1)", "np.mean(X[:, x > 9.0])",
    "np.sum(X[:, x > 0].astype(np.float32), axis=1)",
    "np.sum(X[:, x > 0] * np.arange(4.0)[:, None], axis=1)", ("np.sum(T[:, :, x > 0] - T[:, :, "
    ":1], axis=-1)"), "np.sum(np.maximum(X[:, x > 0], [[0.1], [0.2], [0.3], [0.4]]))",
]
WRITES = [
    "Y[:, x > 0] = 0.0", "Y[:, x > 0] *= 2.0", "Y[:, x > 0] = X[:, x > 0] ** 2",
    "Y[:, x > 0] = X[:, :1] + 1.0", "Y[X[:, 0] > 0, :] = 1.0", "Y[X[:, 0] > 0, :] *= 3.0",
    "Y[:, x > 0] += np.arange(4.0)[:, None]",
]


def _read(expr):
    return eval(f"lambda X, x, T: {expr}", {"np": np})


def _write(stmt):
    ns = {"np": np}
    exec(f"def f(X, x):\n    Y = X * 1.0\n    {stmt}\n    return Y", ns)  # noqa: S102
    return ns["f"]


@pytest.mark.parametrize("expr", READS)
def test_masked_reads_past_the_leading_axis_are_numpys(expr):
    f = _read(expr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(vg.jit(f)(X0, x0, T0), f(X0, x0, T0), rtol=1e-12)
    if "count" in expr or "9.0" in expr or "float32" in expr:
        return
    vg.check_grads(lambda X, T: vnp.sum(f(X, x0, T) * 1.5), (X0, T0), argnums=(0, 1),
                   rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("stmt", WRITES)
def test_masked_writes_past_the_leading_axis_are_numpys(stmt):
    f = _write(stmt)
    assert_same(vg.jit(f)(X0, x0), f(X0, x0), rtol=1e-13)
    vg.check_grads(lambda X: vnp.sum(f(X, x0) ** 2), (X0,), rtol=1e-6, atol=1e-8)


def _columns_per_sample(Xs, Ys):
    tot = 0.0
    for X, y in zip(Xs, Ys):
        M = X.reshape(3, 3)
        tot = tot + np.sum(M[:, y[:3] > 0].sum(axis=1) * y[3:6]) + np.mean(M[1, y[6:] > 0])
    return tot


def test_column_selections_in_a_loop_batch():
    Xs, Ys = R.standard_normal((6, 9)), R.standard_normal((6, 9))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _columns_per_sample(Xs, Ys)
        assert_same(vg.jit(_columns_per_sample)(Xs, Ys), want, rtol=1e-12)

    def loss(Xs, Ys):
        return vnp.nan_to_num(_columns_per_sample(Xs, Ys))
    Ys[:, 6:] = np.abs(Ys[:, 6:]) + 0.1  # (a row of selections never empty: no nan)
    vg.check_grads(loss, (Xs, Ys), argnums=(0, 1), rtol=1e-6, atol=1e-8)
    e, leaves = entry(loss, (Xs, Ys), argnums=(0, 1))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


@pytest.mark.parametrize("expr", [
    "X[:, x > 0]", "np.sum(X[:, x > 0], axis=0)", "X[:, x > 0][0]",
    "np.sum(X[:, x > 0] * np.arange(4.0))", ("np.sum(X[:, x > 0], keepdims=True, "
    "axis=0)"), "np.max(X[:, x > 0], axis=0)", "X[:, x > 0] @ np.ones(3)",
    "np.sum(X[x > 0, :])"])  # (the last: a mask of x's length along X's rows, 4)
def test_what_depends_on_the_selections_length_is_refused(expr):
    with pytest.raises((vg.errors.TraceError, IndexError, vg.errors.ShapeError)):
        vg.jit(_read(expr))(X0, x0, T0)
