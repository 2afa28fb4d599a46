"""`np.vectorize(f)(...)` of traced arguments (numpy/_vectorize.py): f called per element, as
NumPy does; values, dtypes (otypes, or the first result's), several outputs, keywords,
broadcasting, gradients (central differences) and loops over samples (batched equals
unbatched); a float() of an element is a typed refusal naming the line (branches on an
element's value: tests/test_vectorize_branches.py)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp

X1 = np.array([0.5, -1.0, 2.0, 0.25])
X2 = np.arange(6.0).reshape(2, 3) * 0.3 - 0.5


def _soft(a):
    return np.log1p(np.exp(a)) * 2


VSOFT = np.vectorize(_soft)  # (made before any trace, as users do at import time)


@np.vectorize
def _poly(a, b=1.0):
    return a ** 3 - b * a


CASES = [
    "np.vectorize(lambda a: a * 2)(x)", "vsoft(X)", "poly(x)", "poly(x, b=x[::-1])", "poly(X, 2.0)",
    "np.vectorize(lambda a, b: a * b + 1)(x, X[:, :1].repeat(4, 1))",
    "np.vectorize(lambda a: (a, a ** 2))(x)[1]", "np.vectorize(lambda a: a > 0)(x)",
    "np.vectorize(lambda a: 1)(x)", "np.vectorize(lambda a: a, otypes=[np.float32])(x)",
    "np.vectorize(lambda a: np.sin(a) + max(a, 0.0))(x)", "np.vectorize(lambda a: a * 2)(x[0])",
    "np.vectorize(lambda a: a * 2)(x.astype(np.float32))",
    "np.vectorize(lambda a: a // 2)(np.arange(4) + x.astype(int))", "np.vectorize(np.tanh)(X)",
    "np.vectorize(lambda a: a + 1, otypes='d')(x.astype(np.int64))",
    "np.vectorize(lambda a, b: a - b)(x, 1.5)", "np.vectorize(lambda a: abs(a) ** 0.5)(X.T)",
    "np.vectorize(lambda a, b: a * b, excluded={1})(x, 2.0)",
    "np.vectorize(lambda r: np.sum(r ** 2), signature='(n)->()')(X)",
    "np.vectorize(lambda r: r[::-1] * 2, signature='(n)->(n)')(X)",
]


def _fn(expr):
    return eval(f"lambda x, X: {expr}", {"np": np, "vsoft": VSOFT, "poly": _poly})


@pytest.mark.parametrize("expr", CASES)
def test_vectorize_of_traced_arguments_is_numpys(expr):
    f = _fn(expr)
    assert_same(vg.jit(f)(X1, X2), f(X1, X2), rtol=1e-12)
    if np.asarray(f(X1, X2)).dtype == np.float64 and "int" not in expr:
        vg.check_grads(lambda x, X: vnp.sum(f(x, X) ** 2), (X1, X2), argnums=(0, 1))


def test_vectorize_in_a_loop_over_samples_batches():
    def f(X):
        out = vnp.zeros(X.shape[0])
        for i in range(X.shape[0]):
            out[i] = np.sum(VSOFT(X[i]) * _poly(X[i], 0.5))
        return vnp.sum(out ** 2)
    X = np.random.default_rng(2).standard_normal((5, 4))
    assert_same(vg.jit(f)(X), f(X), rtol=1e-12)
    vg.check_grads(f, (X,))
    e, leaves = entry(f, (X,))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


def test_vnp_vectorize_vectorizes_keywords_as_numpy():
    """vnp.vectorize(f)(x, b=y) called f(x[i], b=<all of y>) (an array per element, a
    result of the wrong shape); keywords broadcast with the arguments, as NumPy's."""
    def f(xp, x):
        return xp.vectorize(lambda a, b=1.0: a * b)(x, b=x[::-1] + 1)
    assert_same(vg.jit(lambda x: f(vnp, x))(X1), f(np, X1), rtol=1e-12)


def test_vectorize_outside_a_trace_and_of_constants_is_numpys_own():
    f = vg.jit(lambda x: x * np.vectorize(lambda a: a + 1)(np.arange(2.0)))
    assert_same(f(np.ones(2)), np.ones(2) * np.arange(1.0, 3.0))
    assert np.vectorize.__call__.__module__.startswith("numpy")  # (restored after the trace)


@pytest.mark.parametrize("expr, err", [
    ("np.vectorize(lambda a: float(a))(x)", vg.ConcretizationError),
    ("np.vectorize(lambda a: a * 2)(x[:0])", ValueError),
])
def test_vectorize_refusals_and_numpys_errors(expr, err):
    with pytest.raises(err):
        vg.jit(_fn(expr))(X1, X2)
