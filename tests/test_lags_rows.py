"""Carries that are lags of others, and carries that batching updated by one stacked
operation. A lag (`a, b = b, f(a, b)`: a is b one step late) makes the first iteration
irregular, and the step numbering can take half of it into the recurrence: the recurrence
then starts one step later (roll._later) instead of staying unrolled. A small carry whose
rows batching updated with one operation (`s += p * x; p *= r` as p * [x, r]) is carried
as its rows (carries.unstack with rows_of), each of which may be a scan.

Each program is checked against a plain NumPy loop (float64, rtol 1e-9), its unrolled trace
and central differences (test_scans.check), at two trip counts whose final graphs must be
equal, and for what it became."""
from __future__ import annotations

import numpy as np
import pytest
from test_scans import check, prims, rng

import vecgrad as vg
import vecgrad.numpy as vnp


def swap(X):
    a, b, total = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a, b = b, 0.5 * a + 0.4 * b + X[t]
        total = total + vnp.sum(a * b)
    return total


def swap_np(X):
    a, b, total = np.zeros(X.shape[1]), np.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a, b = b, 0.5 * a + 0.4 * b + X[t]
        total += np.sum(a * b)
    return total


def three_lags(X):
    """A third-order recurrence kept as three carries, each new one a lag of another."""
    a, b, c = vnp.zeros(X.shape[1]), vnp.ones(X.shape[1]), vnp.zeros(X.shape[1])
    total = 0.0
    for t in range(X.shape[0]):
        a, b, c = b, c, 0.2 * a - 0.3 * b + 0.5 * c + X[t]
        total = total + vnp.sum(c ** 2)
    return total


def three_lags_np(X):
    a, b, c, total = np.zeros(X.shape[1]), np.ones(X.shape[1]), np.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a, b, c = b, c, 0.2 * a - 0.3 * b + 0.5 * c + X[t]
        total += np.sum(c ** 2)
    return total


def lag_first(X):
    """The lag written first, then the new value from it (b_old held in a)."""
    a, b, total = vnp.ones(X.shape[1]), vnp.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a, b = b, 0.7 * b - 0.2 * a + X[t]
        total = total + vnp.sum(vnp.tanh(b - a))
    return total


def lag_first_np(X):
    a, b, total = np.ones(X.shape[1]), np.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a, b = b, 0.7 * b - 0.2 * a + X[t]
        total += np.sum(np.tanh(b - a))
    return total


def nonlinear_lag(X):
    """A lag feeding a nonlinear update: no scan, one rolled loop whose size does not grow."""
    a, b, total = vnp.zeros(X.shape[1]), vnp.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a, b = b, vnp.tanh(0.5 * a + 0.4 * b + X[t])
        total = total + vnp.sum(b)
    return total


def nonlinear_lag_np(X):
    a, b, total = np.zeros(X.shape[1]), np.zeros(X.shape[1]), 0.0
    for t in range(X.shape[0]):
        a, b = b, np.tanh(0.5 * a + 0.4 * b + X[t])
        total += np.sum(b)
    return total


def product_scales_sums(R, X):
    """A running product scaling what two running sums add (p * [x, y, r] in one product)."""
    p, s, q = vnp.ones(R.shape[1]), vnp.zeros(R.shape[1]), vnp.zeros(R.shape[1])
    for t in range(R.shape[0]):
        s = s + p * X[t]
        q = q + p * R[t] * R[t]
        p = p * R[t]
    return vnp.sum(s * q) + vnp.sum(p)


def product_scales_sums_np(R, X):
    p, s, q = np.ones(R.shape[1]), np.zeros(R.shape[1]), np.zeros(R.shape[1])
    for t in range(R.shape[0]):
        s = s + p * X[t]
        q = q + p * R[t] * R[t]
        p = p * R[t]
    return np.sum(s * q) + np.sum(p)


def sum_before_product(R, X):
    """The sum reads the product's old value, then the product moves (p * [x, r])."""
    p, s = vnp.ones(R.shape[1]), vnp.zeros(R.shape[1])
    for t in range(R.shape[0]):
        s = s + p * X[t]
        p = p * R[t]
    return vnp.sum(s ** 2) + vnp.sum(p)


def sum_before_product_np(R, X):
    p, s = np.ones(R.shape[1]), np.zeros(R.shape[1])
    for t in range(R.shape[0]):
        s = s + p * X[t]
        p = p * R[t]
    return np.sum(s ** 2) + np.sum(p)


def decay_before_scale(R, X):
    """A matrix-shaped pair: a decay of rows scaled by a learned product (p * [x, r] on
    (2, 3) rows), the sum's every step read."""
    p, s, total = vnp.ones(R.shape[1:]), vnp.zeros(R.shape[1:]), 0.0
    for t in range(R.shape[0]):
        s = 0.9 * s + p * X[t]
        p = p * R[t]
        total = total + vnp.sum(vnp.sin(s))
    return total


def decay_before_scale_np(R, X):
    p, s, total = np.ones(R.shape[1:]), np.zeros(R.shape[1:]), 0.0
    for t in range(R.shape[0]):
        s = 0.9 * s + p * X[t]
        p = p * R[t]
        total += np.sum(np.sin(s))
    return total


def _x(r, T):
    return (r.standard_normal((T, 3)),)


def _rx(r, T):
    return r.uniform(0.9, 1.1, (T, 16)), r.standard_normal((T, 16))  # (past scalarize)


def _rx23(r, T):
    return r.uniform(0.9, 1.1, (T, 2, 8)), r.standard_normal((T, 2, 8))


PROGRAMS = [(swap, swap_np, _x, "linear_scan"), (three_lags, three_lags_np, _x, "linear_scan"),
            (lag_first, lag_first_np, _x, "linear_scan"),
            (nonlinear_lag, nonlinear_lag_np, _x, "loop"),
            (product_scales_sums, product_scales_sums_np, _rx, "cumprod"),
            (sum_before_product, sum_before_product_np, _rx, "cumprod"),
            (decay_before_scale, decay_before_scale_np, _rx23, "cumprod")]


@pytest.mark.parametrize("f, ref, make, became", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_rolled_and_flat_in_the_trip_count(f, ref, make, became):
    r = rng(21)
    sizes = []
    for T in (40, 80):  # (both past scans.MIN_SCALED: a plan of one kind at both lengths)
        args = make(r, T)
        e = check(f, args, argnums=tuple(range(len(args))), ref=ref)
        sizes.append(e.counts["final"])
    assert sizes[0] == sizes[1], sizes
    with vg.config(keep_stages=True):
        e, _ = vg.jit(f).entry(*make(r, 30))
    found = prims(e.stages["scans"])
    assert became in found, found
    if became != "loop":
        assert "loop" not in found, found
    else:
        assert found.count("loop") == 1, found
