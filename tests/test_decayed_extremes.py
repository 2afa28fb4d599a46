"""Running extremes of a decayed carry (batch/affine.decayed_extreme): m = max(k m, x) with k
a positive constant (a peak detector whose held value decays, np.minimum alike, either
operand order, a per-channel k, forward or reversed loops, float32) is k^t times one running
extreme of the rows rescaled by k^-t: no loop. Each program against a NumPy loop (float64,
rtol 1e-9), its unrolled trace and central differences (test_scans.check); where k^t would
leave the safe range, k is traced or negative, or the step reads k m elsewhere, the loop
stays (and stays right)."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import check, prims, rng

import vecgrad as vg
import vecgrad.numpy as vnp


def peak(X):
    m, total = X[0], 0.0
    for t in range(1, X.shape[0]):
        m = vnp.maximum(0.99 * m, X[t])
        total = total + vnp.sum(m)
    return total


def peak_np(X):
    m, total = X[0], 0.0
    for t in range(1, X.shape[0]):
        m = np.maximum(0.99 * m, X[t])
        total += np.sum(m)
    return total


def trough_swapped(X):
    """np.minimum with the new value first, the carry second in the product, from zeros."""
    m, total = vnp.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        m = vnp.minimum(X[t], m * 0.95)
        total = total + vnp.sum(m * m)
    return total


def trough_swapped_np(X):
    m, total = np.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        m = np.minimum(X[t], m * 0.95)
        total += np.sum(m * m)
    return total


K = np.linspace(0.8, 1.01, 5)


def per_channel(X):
    """A decay per channel (one above 1: a growing hold), the final value only."""
    m = vnp.full(X.shape[1], -np.inf)
    for t in range(X.shape[0]):
        m = vnp.maximum(K * m, X[t])
    return vnp.sum(vnp.tanh(m))


def per_channel_np(X):
    m = np.full(X.shape[1], -np.inf)
    for t in range(X.shape[0]):
        m = np.maximum(K * m, X[t])
    return np.sum(np.tanh(m))


def reversed_envelope(X):
    m, total = vnp.zeros(X.shape[1]), 0.0
    for t in reversed(range(X.shape[0])):
        m = vnp.maximum(0.9 * m, vnp.abs(X[t]))
        total = total + vnp.sum(m * X[t])
    return total


def reversed_envelope_np(X):
    m, total = np.zeros(X.shape[1]), 0.0
    for t in reversed(range(X.shape[0])):
        m = np.maximum(0.9 * m, np.abs(X[t]))
        total += np.sum(m * X[t])
    return total


def reads_the_product(X):
    """The step reads k m elsewhere: not this form, the loop stays."""
    m, total = X[0], 0.0
    for t in range(1, X.shape[0]):
        held = 0.99 * m
        m = vnp.maximum(held, X[t])
        total = total + vnp.sum(held * X[t])
    return total


def reads_the_product_np(X):
    m, total = X[0], 0.0
    for t in range(1, X.shape[0]):
        held = 0.99 * m
        m = np.maximum(held, X[t])
        total += np.sum(held * X[t])
    return total


def negative_decay(X):
    m, total = X[0], 0.0
    for t in range(1, X.shape[0]):
        m = vnp.maximum(-0.5 * m, X[t])
        total = total + vnp.sum(m)
    return total


def negative_decay_np(X):
    m, total = X[0], 0.0
    for t in range(1, X.shape[0]):
        m = np.maximum(-0.5 * m, X[t])
        total += np.sum(m)
    return total


CLOSED = [peak, trough_swapped, per_channel, reversed_envelope]
LOOPS = [reads_the_product, negative_decay]
REFS = {f: globals()[f.__name__ + "_np"] for f in CLOSED + LOOPS}


def _forward(f, *args):
    with vg.config(keep_stages=True):
        e, _ = vg.jit(f).entry(*args)
    return prims(e.stages["simplify"])


@pytest.mark.parametrize("f", CLOSED + LOOPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("T", [7, 60])
def test_values_and_gradients(f, T):
    check(f, (rng(T).standard_normal((T, 5)),), ref=REFS[f])


@pytest.mark.parametrize("f", CLOSED, ids=lambda f: f.__name__)
def test_no_loop(f):
    found = _forward(f, rng(3).standard_normal((200, 5)))
    # (a running extreme, or its total where only the last steps read it: runrows.py)
    extremes = {"cummax", "cummin", "reduce_max", "reduce_min"}
    assert "loop" not in found and extremes & set(found), found


@pytest.mark.parametrize("f", LOOPS, ids=lambda f: f.__name__)
def test_other_forms_stay_loops(f):
    assert "loop" in _forward(f, rng(3).standard_normal((200, 5)))


def test_outside_the_safe_range_stays_a_loop():
    """0.5^-400 = 2.6e120 would scale the rows past 1e77: the loop stays, values right."""
    def fast(X):
        m, total = X[0], 0.0
        for t in range(1, X.shape[0]):
            m = vnp.maximum(0.5 * m, X[t])
            total = total + vnp.sum(m)
        return total

    def fast_np(X):
        m, total = X[0], 0.0
        for t in range(1, X.shape[0]):
            m = np.maximum(0.5 * m, X[t])
            total += np.sum(m)
        return total
    X = rng(4).standard_normal((400, 3))
    assert "loop" in _forward(fast, X)
    np.testing.assert_allclose(vg.jit(fast)(X), fast_np(X), rtol=1e-9)
    assert "loop" not in _forward(fast, X[:100])  # (0.5^-100 = 1.3e30: in range)


def test_large_offsets_nan_and_float32():
    X = rng(5).standard_normal((300, 5))
    for Y in (X * 1e6 + 1e8, X - 1e8):
        np.testing.assert_allclose(vg.jit(peak)(Y), peak_np(Y), rtol=1e-12)
    Y = X.copy()
    Y[100, 2] = np.nan
    got, want = vg.jit(peak)(Y), peak_np(Y)
    assert np.isnan(got) and np.isnan(want)
    Z = X.astype(np.float32)
    got = vg.jit(peak)(Z)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, peak_np(Z), rtol=1e-5)
