"""In-place recurrences through a buffer (`y[i] += a * y[i - 1]`, `y[i] = y[i] + ...`,
`Y[i] -= c * Y[i - 1]`, backwards and by negative indices): a read of an element an addition
just wrote is that addition's value plus what the element held before (the buffer's start,
or one set's value), so the loop is a recurrence of values, which batching scans, not a chain
of buffer versions run one step at a time (batch/deps.value_at). Each program: compiled equals
the trace run as written equals NumPy's loop (values), gradients equal the unrolled ones and
central differences, and the compiled graph does not grow with the loop."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import check

import vecgrad as vg


def iadd_copy(x):
    y = x.copy()
    for i in range(1, len(y)):
        y[i] += 0.5 * y[i - 1]
    return np.sum(y ** 2)


def set_self_plus(x):
    y = x.copy()
    for i in range(1, len(x)):
        y[i] = 0.5 * y[i - 1] + y[i]
    return np.sum(np.sin(y))


def iadd_zeros(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] += 0.7 * y[i - 1] + x[i]
    return np.sum(y ** 2)


def isub_rows(x):
    Y = np.stack([x, 2.0 * x], axis=1)
    for i in range(1, len(x)):
        Y[i] -= 0.3 * Y[i - 1]
    return np.sum(Y ** 3)


def backwards_by_negative_index(x):
    y = x.copy()
    for i in range(1, len(y)):
        y[-i - 1] += 0.5 * y[-i]
    return np.sum(y ** 2)


def backwards_by_range(x):
    y = 2.0 * x
    for i in range(len(y) - 2, -1, -1):
        y[i] += np.tanh(y[i + 1])  # nonlinear: rolled, not unrolled
    return np.sum(y)


def set_then_add(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] ** 2
    for i in range(1, len(x)):
        y[i] += 0.25 * y[i - 1]
    return np.sum(y * np.arange(len(x)))


def two_lags(x):
    y = x.copy()
    for i in range(2, len(y)):
        y[i] += 0.5 * y[i - 1] - 0.2 * y[i - 2]
    return np.sum(y ** 2)


def with_weights(x, w):
    y = x.copy()
    for i in range(1, len(y)):
        y[i] += w[i] * y[i - 1]
    return np.sum(y ** 2)


def blocks(x):
    Y = x.reshape(-1, 3).copy()
    for i in range(1, Y.shape[0]):
        Y[i, :2] += 0.5 * Y[i - 1, :2][::-1]
    return np.sum(Y ** 2)


def straddling(x):
    # each read spans an addition's elements and the start's: correct, run step by step
    Y = x.reshape(-1, 3).copy()
    for i in range(1, Y.shape[0]):
        Y[i, :2] += 0.5 * Y[i - 1, 1:]
    return np.sum(Y ** 2)


PROGRAMS = [iadd_copy, set_self_plus, iadd_zeros, isub_rows, backwards_by_negative_index,
            backwards_by_range, set_then_add, two_lags, blocks]


def _x(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_matches_numpy_and_differences(f):
    x = _x(30)
    check(f, (x,), 0, ref=f)


def test_a_read_across_two_writes_keeps_numpy_values():
    check(straddling, (_x(30, 2),), 0, ref=straddling)


def test_varying_coefficients():
    r = np.random.default_rng(3)
    args = (r.standard_normal(25), 0.5 * r.standard_normal(25))
    check(with_weights, args, (0, 1), ref=with_weights)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_the_graph_does_not_grow_with_the_loop(f):
    def size(n):
        e, _ = vg.grad(f).entry(_x(n))
        return len(e.stages["final"].eqns)
    assert size(120) <= size(30) + 4


def histogram_with_reads(x, ks):
    # additions onto additions into one bucket: a read stays a buffer read (a scatter-add)
    h = np.zeros(4)
    out = 0.0
    for v, k in zip(x, ks):
        h[k] += v
        out = out + h[k] ** 2
    return out


def float32_buffer(x):
    # `+=` of a float64 value into a float32 buffer rounds the sum: not forwarded as a value
    y = x.astype(np.float32)
    for i in range(1, len(y)):
        y[i] += 0.5 * x[i - 1]
        y[i] += 0.25 * y[i - 1]
    return np.sum(y.astype(np.float64) ** 2)


def test_additions_onto_additions_and_other_dtypes_keep_numpy_values():
    x = _x(40, 5)
    ks = np.random.default_rng(5).integers(0, 4, 40).tolist()
    np.testing.assert_allclose(vg.jit(histogram_with_reads)(x, ks), histogram_with_reads(x, ks),
                               rtol=1e-12)
    vg.check_grads(histogram_with_reads, (x, ks), argnums=0, rtol=1e-6, atol=1e-8)
    assert vg.jit(float32_buffer)(x) == pytest.approx(float32_buffer(x), rel=1e-6)


def _filter2(a1, a2):
    def f(x):
        y = x.copy()
        for i in range(2, len(y)):
            y[i] += a1 * y[i - 1] + a2 * y[i - 2]
        return np.sum(y ** 2)
    return f


@pytest.mark.parametrize("a1, a2", [(0.5, -0.25), (-1.2, -0.5), (1.0, 0.0), (0.3, 0.3)])
def test_a_constant_transition_matrix_gets_no_cotangent(a1, a2):
    """With constant coefficients the linear_scan's matrix is one constant: the gradient
    computes no cotangent for it (sum_t g_t c_{t-1}^T, a contraction over the steps)."""
    f = _filter2(a1, a2)
    x = _x(300, 4)
    check(f, (x,), 0, ref=f)
    e, _ = vg.grad(f).entry(x)
    final = e.stages["final"]
    scans = [q for q in final.eqns if q.prim.name == "linear_scan"]
    assert scans and all(type(q.inputs[1]).__name__ == "Const" for q in scans)
    assert not any(q.prim.name == "einsum" and q.params["spec"] == "ab,ac->bc"
                   for q in final.eqns)
