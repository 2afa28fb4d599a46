"""np.vectorize of a kernel with Python `if`s on an element's value (numpy/_branches.py):
every path traced, each element's result the path its value takes, as NumPy's. Values,
dtypes, shapes against NumPy (elements on both sides of every condition, ties at the
threshold, nan); gradients by central differences, finite where a path that an element does
not take has an infinite derivative (sqrt, log); loops over samples batched equal unbatched;
what cannot be NumPy's (paths of different result types without otypes=, a `while` on
values, too many paths) refused with a typed error naming the user's line."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp

X = np.array([[0.5, -1.0, 2.0, 0.25], [0.0, -0.3, 1.7, -2.2], [0.45, 0.55, -0.5, 3.0]])


def _clip(a):
    if a > 0.5:
        return 0.5 + 0.1 * a
    elif a < -0.5:
        return -0.5
    return a * 1.0


def _nested(a, b):
    if a > 0:
        if b > a:
            return a * b
        return a - b
    return b ** 2


def _safe_sqrt(a):
    return np.sqrt(a) if a > 0 else 0.0 * a


def _safe_log(a):
    if a <= 0.1:
        return a - 1.0
    return np.log(a)


def _both(a):
    if a > 0:
        return a, a * a
    return -a, 0.0 * a


def _chain(a):
    return a ** 3 if (a > -0.3 and a < 0.4) or a > 1.9 else np.tanh(a)


def _truthy(a):
    return a * 2.0 if a else a - 1.0  # (bool(a) is a != 0)


def _ints(a):
    return 1 if a > 0 else -1


def _count(a):
    n = 0
    for t in (-1.0, 0.0, 1.0):
        if a > t:
            n += 1
    return n


def _scaled(a, s=1.0):
    return a * s if s > 0.5 else a - s


CASES = {
    "if_elif_else": lambda x: np.vectorize(_clip)(x),
    "nested_two_args": lambda x: np.vectorize(_nested)(x, x[::-1]),
    "broadcast_args": lambda x: np.vectorize(_nested)(x, x[:1]),
    "scalar_arg": lambda x: np.vectorize(_nested)(x, 0.3),
    "sqrt_untaken": lambda x: np.vectorize(_safe_sqrt)(x),
    "log_untaken": lambda x: np.vectorize(_safe_log)(x),
    "two_outputs": lambda x: np.vectorize(_both)(x)[0] * np.vectorize(_both)(x)[1],
    "and_or": lambda x: np.vectorize(_chain)(x),
    "truthy": lambda x: np.vectorize(_truthy)(x),
    "int_result": lambda x: np.vectorize(_ints)(x) * x,
    "count_loop": lambda x: np.vectorize(_count)(x) + x,
    "otypes": lambda x: np.vectorize(lambda a: a if a > 0 else 0, otypes=[float])(x),  # noqa: FURB136
    "keyword": lambda x: np.vectorize(_scaled)(x, s=x[::-1]),
    "builtin_min": lambda x: np.vectorize(lambda a: min(a, 0.4) if a > -1 else a * 3)(x),
    "float32": lambda x: np.vectorize(lambda a: a * 3 if a > 0 else a * 0.5)(x.astype(np.float32)),
    "float32_otypes": lambda x: np.vectorize(_clip, otypes=[np.float32])(x.astype(np.float32)),
    "one_row": lambda x: np.vectorize(_clip)(x[1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_branching_kernel_is_numpys(name):
    f = CASES[name]
    assert_same(vg.jit(f)(X), f(X), rtol=1e-12)
    assert_same(vg.jit(f)(-X[::-1]), f(-X[::-1]), rtol=1e-12)  # (other paths, same trace)


@pytest.mark.parametrize("name", sorted(n for n in CASES if "float32" not in n))
def test_branching_kernel_gradients(name):
    f = CASES[name]
    loss = lambda x: vnp.sum(np.sin(f(x)) * np.arange(1.0, 5.0))
    g = vg.grad(loss)(X)
    assert np.isfinite(g).all()
    vg.check_grads(loss, (X + 0.01,))  # (off the thresholds: central differences cross none)


def test_untaken_paths_infinite_derivative_sends_nothing():
    """sqrt'(0) is inf on the path an element at 0 does not take: its gradient is 0's."""
    x = np.array([0.0, -1.0, 4.0])
    g = vg.grad(lambda x: vnp.sum(np.vectorize(_safe_sqrt)(x)))(x)
    np.testing.assert_allclose(g, [0.0, 0.0, 0.25])


def test_nan_takes_numpys_path():
    x = np.array([np.nan, 1.0, -1.0])
    for f in (np.vectorize(_clip), np.vectorize(_truthy)):
        assert_same(vg.jit(lambda x: f(x) * 1.0)(x), f(x) * 1.0)  # noqa: B023


def test_branching_kernel_in_a_loop_over_samples_batches():
    def f(X):
        out = vnp.zeros(X.shape[0])
        for i in range(X.shape[0]):
            out[i] = np.sum(np.vectorize(_clip)(X[i]) * np.vectorize(_nested)(X[i], 0.2))
        return vnp.sum(out ** 2)
    Y = np.random.default_rng(3).standard_normal((6, 5))
    assert_same(vg.jit(f)(Y), f(Y), rtol=1e-12)
    vg.check_grads(f, (Y,))
    e, leaves = entry(f, (Y,))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


def _while(a):
    while a > 0.1:
        a = a / 2
    return a


def _many(a):
    t = 0.0
    for k in range(6):
        if a > k * 0.1:
            t = t + a
        else:
            t = t - a
    return t


@pytest.mark.parametrize("kernel, err, says", [
    (lambda a: a if a > 0 else 0, vg.TraceError, "otypes="),  # noqa: FURB136
    (lambda a: a if a > 0 else (a, a), vg.TraceError, "otypes="),
    (_while, vg.ConcretizationError, "while"),
    (_many, vg.ConcretizationError, "paths"),
])
def test_what_numpy_decides_by_value_is_refused_naming_the_line(kernel, err, says):
    with pytest.raises(err, match=says) as info:
        vg.jit(lambda x: np.vectorize(kernel)(x))(X)
    assert "test_vectorize_branches.py" in str(info.value)


def test_a_bool_of_many_values_is_still_refused():
    with pytest.raises(vg.ConcretizationError):
        vg.jit(lambda x: np.vectorize(lambda a: a * 2.0 if x[0] > 0 else a)(x))(X)
    with pytest.raises(vg.ConcretizationError):
        vg.jit(lambda x: x if x[0, 0] > 0 else -x)(X)  # (outside np.vectorize: as before)
