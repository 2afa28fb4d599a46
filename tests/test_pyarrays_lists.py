"""NumPy's conversions (np.asarray, np.array, ...) and reductions of lists of traced values,
which NumPy does not dispatch (src/vecgrad/pyarrays.py): values, dtypes and shapes equal
NumPy's, gradients equal central differences, copies and aliases as NumPy's."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(7)
X = R.normal(size=6)

CALLS = {
    "asarray": lambda x: np.asarray(x) * 2.0,
    "array": lambda x: np.array(x) ** 2,
    "array_f32": lambda x: np.array(x, dtype=np.float32),
    "asarray_scalar": lambda x: np.asarray(x[0]) * x,
    "asanyarray": lambda x: np.asanyarray(x).sum(),
    "ascontiguous": lambda x: np.ascontiguousarray(x[::2]),
    "asarray_order": lambda x: np.asarray(x, order="C") + 1.0,
    "ndmin": lambda x: np.array(x, ndmin=3),
    "list": lambda x: np.array([x[0], x[1] * 2.0, 1.0]),
    "list_f32": lambda x: np.array([x[0].astype(np.float32), x[1].astype(np.float32)]) * 1.5,
    "list_f32_float": lambda x: np.array([x[0].astype(np.float32), 1.0]),
    "nested": lambda x: np.array([[x[0], x[1]], [x[2], 2.0]]),
    "rows": lambda x: np.array([np.tanh(x[i:i + 2]) for i in range(4)]),
    "comprehension_mean": lambda x: np.mean([np.sum(x[i:i + 3] ** 2) for i in range(4)]),
    "sum_list": lambda x: np.sum([x[0], x[1] * x[2]]),
    "max_list": lambda x: np.max([x[0] ** 2, x[1], x[2] + 1.0]),
    "std_list": lambda x: np.std([x[0], x[1], x[3]]),
    "average_weights": lambda x: np.average([x[0], x[1]], weights=[1.0, 3.0]),
    "dot_lists": lambda x: np.dot([x[0], x[1]], [1.0, 2.0]),
    "norm_list": lambda x: np.linalg.norm([x[0], x[1], 3.0]),
    "cumsum_list": lambda x: np.cumsum([x[0], x[1], x[2]]),
    "outer_lists": lambda x: np.outer([x[0], x[1]], x[2:4]),
    "kw_list": lambda x: np.mean(a=[x[0], x[4]]),
    "tuple": lambda x: np.asarray((x[0], x[5])),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_dtypes_and_shapes_equal_numpy(name):
    f = CALLS[name]
    want = f(X)
    got = vg.jit(f)(X)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6 if np.asarray(want).dtype == np.float32
                               else 1e-12)


@pytest.mark.parametrize("name", sorted(k for k in CALLS if "f32" not in k))
def test_gradients_equal_central_differences(name):
    f = CALLS[name]
    vg.check_grads(lambda x: vnp.sum(vnp.sin(vnp.asarray(f(x)))), [X])


def test_asarray_aliases_and_array_copies_as_numpy():
    def f(x):
        b = vnp.zeros(3)
        alias = np.asarray(b)
        alias[0] = x[0] * 2.0  # writes b too
        c = vnp.zeros(3)
        copy = np.array(c)
        copy[1] = x[1]  # leaves c alone
        same = np.array(c, copy=False)
        same[2] = x[2]  # writes c (no copy was asked for)
        return b, c, copy

    b, c, copy = vg.jit(f)(np.arange(1.0, 4.0))
    np.testing.assert_array_equal(b, [2.0, 0.0, 0.0])
    np.testing.assert_array_equal(c, [0.0, 0.0, 3.0])
    np.testing.assert_array_equal(copy, [0.0, 2.0, 0.0])


def test_a_loop_of_rows_stacked_with_np_array_batches():
    """`np.array([f(r) for r in X])` is one traced stack: its graph does not grow with the
    number of rows."""
    def loss(w, X):
        return np.sum(np.array([np.tanh(r @ w) for r in X]) ** 2)

    w = R.normal(size=4)
    counts = []
    for n in (10, 20):
        Xn = R.normal(size=(n, 4))
        counts.append(vg.grad(loss).entry(w, Xn)[0].counts["final"])
        np.testing.assert_allclose(vg.grad(loss)(w, Xn), vg.grad(
            lambda w, X: vnp.sum(vnp.tanh(X @ w) ** 2))(w, Xn), rtol=1e-10)
    assert counts[0] == counts[1]
    vg.check_grads(loss, [w, R.normal(size=(5, 4))])


def test_numpy_is_untouched_outside_a_trace_and_after_an_error():
    asarray, mean = np.asarray, np.mean

    def bad(x):
        np.asarray(x)
        raise ValueError("user error")

    with pytest.raises(ValueError, match="user error"):
        vg.jit(bad)(X)
    assert np.asarray is asarray and np.mean is mean
    vg.jit(lambda x: np.asarray(x) + 1)(X)
    assert np.asarray is asarray and np.mean is mean


def test_options_vecgrad_does_not_model_are_numpys_own_error():
    with pytest.raises(vg.VecgradError):
        vg.jit(lambda x: np.asarray(x, like=np.empty(0)))(X)
