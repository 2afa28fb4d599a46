"""Reading `x[mask]` (a traced boolean mask; numpy/_selected.py): reductions of it and entry-
by-entry work before them (`np.sum(x[m])`, `x[m].mean()`, `np.mean((p[m] - t[m]) ** 2)`,
`np.linalg.norm(r[m])`, `np.count_nonzero(x[m] > 0)`, rows `X[X[:, 0] > 0].sum(axis=0)`)
equal NumPy's values and dtypes, whole and in loops over samples (batched = unbatched), with
finite gradients that match central differences also where an entrywise function is outside
its domain at unselected entries (np.log(x[x > 0])); what depends on the selection's length
raises a TraceError naming the line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(11)
x0, y0 = R.standard_normal(9), R.standard_normal(9)
X0 = R.standard_normal((6, 3))
I8 = R.integers(-3, 4, 9).astype(np.int8)
F32 = R.standard_normal(9).astype(np.float32)

# (each a function of x, y (9,), X (6, 3), i8 (9,) int8, f32 (9,) float32)
READS = [
    "np.sum(x[x > 0])", "x[x > 0].sum()", "np.mean(x[x > 0.3])", "x[y > 0].mean()",
    "np.sum(x[x > 0] ** 2)", "np.sum(np.log(x[x > 0]))", "np.sum(np.sqrt(x[x > 0]))",
    "np.sum(1.0 / x[x > 0.1])", "np.mean((x[y > 0] - y[y > 0]) ** 2)",
    "np.linalg.norm(x[x > -0.5])", "np.count_nonzero(x[y > 0] > 0)", "np.var(x[x > -1])",
    "np.std(x[x > -1], ddof=1)", "x[x > 0].std()", "np.prod(x[np.abs(x) < 1])",
    "np.any(x[y > 0] > 1)", "np.all(x[y > 0] > -3)", "np.max(x[x < 0], initial=-10.0)",
    "np.min(x[x > 0], initial=10.0)", "np.sum(X[X[:, 0] > 0])", "np.sum(X[X[:, 0] > 0], axis=0)",
    "X[X[:, 0] > 0].mean(axis=0)", "np.sum(X[X[:, 0] > 0][:, 1])", "np.sum(X[X > 0])",
    "np.sum(X[X[:, 0] > 0].sum(axis=1) ** 2)", "np.sum(X[X[:, 0] > 0] * np.arange(3))",
    "np.sum(X[X[:, 1] < 0] @ np.ones(3))", "np.sum(i8[i8 > 0])", "np.mean(i8[i8 > 0])",
    "np.sum(i8[i8 > 0] * 3)", "np.sum(f32[f32 > 0])", "np.mean(f32[x > 0] * 2.0)",
    "np.sum(x[x > 0] / np.sum(y[x > 0]))", "x[y > 0] @ y[y > 0]", "np.dot(x[y > 0], x[y > 0])",
    "np.sum(np.exp(x[x < 0.5]) * 2.0)", "np.sum(np.clip(x[x > -1], 0, 1))",
    "np.sum(x[x > 0].astype(np.float32))", "np.average(x[x > 0])", "np.nansum(x[x > 0])",
    "np.sum(x[x > 0], keepdims=True)", "np.sum(X[X[:, 0] > 0], axis=0, keepdims=True)",
    "np.mean(np.maximum(x[y > 0], 0.2))", "np.sum(x[(x > 0) & (y > 0)])", "np.mean(x[~(x > 0)])",
    "np.sum(np.where(x[y > 0] > 0, x[y > 0], 0.0))", "np.sum(x[x > 0] ** 0.5 + 1)",
    "np.mean(x[x > 9.0])", "np.sum(x[x > 9.0])", "np.sum(np.abs(x[x < 0]))",
]


def _fn(expr):
    return eval(f"lambda x, y, X, i8, f32: {expr}", {"np": np})


def _args():
    return x0, y0, X0, I8, F32


@pytest.mark.parametrize("expr", READS)
def test_reads_of_a_masked_selection_are_numpys(expr):
    f = _fn(expr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (np.mean of an empty selection: nan, as NumPy's)
        want = f(*_args())
        assert_same(vg.jit(f)(*_args()), want, rtol=1e-12)


@pytest.mark.parametrize("expr", [e for e in READS if "i8" not in e and "f32" not in e
                                  and "any" not in e and "all" not in e and "count" not in e
                                  and "9.0" not in e])
def test_gradients_of_masked_reads_are_finite_and_match_central_differences(expr):
    f = _fn(expr)

    def loss(x, y, X):
        return vnp.sum(f(x, y, X, I8, F32) * 1.0)
    g = vg.grad(loss, argnums=(0, 1, 2))(x0, y0, X0)
    assert all(np.all(np.isfinite(a)) for a in g)
    if "float32" not in expr:
        vg.check_grads(loss, (x0, y0, X0), argnums=(0, 1, 2), rtol=1e-5, atol=1e-7)


def test_the_gradient_at_unselected_entries_outside_a_functions_domain_is_zero():
    """np.log(x[x > 0]): the unselected entries (negative) never reach np.log's gradient."""
    g = vg.grad(lambda x: np.sum(np.log(x[x > 0])))(x0)
    np.testing.assert_array_equal(g, np.where(x0 > 0, 1 / x0, 0.0))
    g = vg.grad(lambda x: np.sum(np.sqrt(x[x > 0.5]) + 1 / x[x > 0.5]))(x0)
    assert np.all(np.isfinite(g)) and np.all(g[x0 <= 0.5] == 0)


def _loop_forms(xp, X, Y):
    out = xp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        r = X[i] - Y[i]
        out[i] = np.mean(r[X[i] > 0] ** 2) + np.sum(np.abs(r[r < 0.5]))
    return out


def _comprehension(xp, X, Y):
    return np.array([np.linalg.norm(x[y > 0]) + x[x > -0.5].sum() for x, y in zip(X, Y)])


def _rows_in_a_loop(xp, X, Y):
    tot = 0.0
    for i in range(X.shape[0]):
        M = X[i].reshape(3, 3)
        tot = tot + np.sum(M[M[:, 0] > -0.5].sum(axis=0) * Y[i, :3])
    return tot


@pytest.mark.parametrize("f", [_loop_forms, _comprehension, _rows_in_a_loop])
def test_masked_reads_in_loops_batch_to_numpy(f):
    """A selection per sample in a loop: NumPy's values; the batched graph computes what the
    unbatched one does."""
    X, Y = R.standard_normal((7, 9)), R.standard_normal((7, 9))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(vg.jit(lambda a, b: f(vnp, a, b))(X, Y), f(np, X, Y), rtol=1e-11)

    def flat(a, b):
        return vnp.sum(vnp.nan_to_num(f(vnp, a, b)) * 1.5)
    vg.check_grads(flat, (X, Y), argnums=(0, 1), rtol=1e-5, atol=1e-7)
    e, leaves = entry(flat, (X, Y), argnums=(0, 1))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


def test_entrywise_values_write_back_through_the_same_mask():
    """`x[m] = x[m] * 2 + 1` and `y[m] = np.exp(x[m])`: NumPy's (where the masks are one)."""
    def f(x, y):
        r, o = x * 1.0, y * 1.0
        m = r > 0
        r[m] = r[m] * 2 + 1
        o[m] = np.exp(x[m]) - y[m]
        t = r[r < 0]
        t += o[r < 0]
        r[r < 0] = t
        return r + o
    assert_same(vg.jit(f)(x0, y0), f(x0, y0), rtol=1e-12)
    vg.check_grads(lambda x, y: vnp.sum(f(x, y) ** 2), (x0, y0), argnums=(0, 1))


@pytest.mark.parametrize("body", [
    "len(x[x > 0])", "x[x > 0]", "np.sort(x[x > 0])", "x[x > 0][0]",
    "np.median(x[x > 0])", "np.sum(x[x > 0] * y)", "x[x > 0].shape[0]",
    "np.sum(x[x > 0] + x[y > 0])", "np.cumsum(x[x > 0])", "np.sum(x[x > 0], out=vnp.zeros(()))",
    "x[x > 0].reshape(-1, 1)", "np.sum(X[X[:, 0] > 0] @ np.ones((2, 3)))",
])
def test_reads_that_depend_on_the_length_are_refused_naming_the_line(body):
    ns = {"np": np, "vnp": vnp}
    exec(f"def f(x, y, X):\n    return {body}\n", ns)  # noqa: S102
    with pytest.raises((vg.TraceError, vg.ShapeError), match=r"\(at <string>:2|x\[mask\] at "):
        vg.jit(ns["f"])(x0, y0, X0)
