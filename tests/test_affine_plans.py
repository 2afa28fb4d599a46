"""affine_scan's plans (primitives/scans.py): the in-place sequential steps, the closed form
P * cumsum(b / P) computed at run time for narrow rows, and the pairing it falls back to.

Every plan is checked against the recurrence run as written in float64 (rtol 1e-9), through
the impl, through the NumPy backend's bound runner and through a compiled program, on the
inputs that push the closed form out of its range: zero steps, infinities and NaNs, long
decays that underflow, growth that overflows; cumprod's gradient is checked exactly at zeros.
"""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
from vecgrad import primitives as P
from vecgrad.ir import Aval
from vecgrad.primitives.scanrun import CLOSED_ROW_MAX, affine_runner

RTOL = 1e-9


def loop(init, a, b):
    """c[t] = a[t] * c[t-1] + b[t], as written (a of one step repeats)."""
    c, out = np.asarray(init, np.float64), []
    for t in range(b.shape[0]):
        c = a[t if a.shape[0] > 1 else 0] * c + b[t]
        out.append(c)
    return np.stack(out) if out else np.zeros((0,) + np.shape(c))


def both(init, a, b):
    """The impl's result and the bound runner's (the NumPy backend's), which must agree."""
    got = P.affine_scan.impl(init, a, b)
    avals = [Aval(np.shape(x), np.asarray(x).dtype) for x in (init, a, b)]
    bound = affine_runner(*avals)(np.asarray(init), a, b)
    np.testing.assert_array_equal(got, bound)
    return got


SHAPES = [(1000,), (200, 3), (64, CLOSED_ROW_MAX), (8000,), (300, 40), (12, 1000), (40, 600), (17,),
          (1,), (0, 3), (5, 2, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", ["plain", "negative", "zeros", "inf", "nan", "decay",
                                  "growth"])
def test_every_plan_is_the_recurrence_as_written(shape, kind):
    rng = np.random.default_rng(len(shape) * 100 + shape[0])
    a = rng.uniform(0.9, 1.1, shape)
    b = rng.standard_normal(shape)
    if kind == "negative":
        a = -a
    elif kind == "zeros" and a.size:
        a.flat[rng.choice(a.size, size=max(1, a.size // 50), replace=False)] = 0.0
    elif kind == "inf" and b.size:
        b.flat[rng.integers(b.size)] = np.inf
    elif kind == "nan" and a.size:
        a.flat[rng.integers(a.size)] = np.nan
    elif kind == "decay":
        a = np.full(shape, 0.5)  # (0.5 ** 300 = 5e-91: below the closed form's range)
    elif kind == "growth":
        a = np.full(shape, 2.0)
    with np.errstate(all="ignore"):
        want = loop(np.zeros(shape[1:]), a, b)
        got = both(np.zeros(shape[1:]), a, b)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-300)


@pytest.mark.parametrize("shape", [(500,), (500, 4), (14, 300)])
def test_a_nonzero_initial_state_and_a_step_repeated(shape):
    rng = np.random.default_rng(1)
    init = rng.standard_normal(shape[1:])
    a1 = rng.uniform(0.9, 1.1, (1,) + shape[1:])
    b = rng.standard_normal(shape)
    np.testing.assert_allclose(both(init, a1, b), loop(init, a1, b), rtol=RTOL)
    a = rng.uniform(0.9, 1.1, shape)
    np.testing.assert_allclose(both(init, a, b), loop(init, a, b), rtol=RTOL)


def test_narrower_operands_broadcast_to_the_state():
    rng = np.random.default_rng(2)
    a, b = rng.uniform(0.9, 1.1, (300,)), rng.standard_normal((300, 1, 3))
    got = both(np.zeros((2, 3)), a, b)  # (a's and b's rows align on the right, as NumPy's)
    want = loop(np.zeros((2, 3)), a[:, None, None] * np.ones((1, 2, 3)),
                b * np.ones((1, 2, 3)))
    assert got.shape == (300, 2, 3)
    np.testing.assert_allclose(got, want, rtol=RTOL)


def test_float32_stays_float32_and_close():
    rng = np.random.default_rng(3)
    a = rng.uniform(0.9, 1.1, 800).astype(np.float32)
    b = rng.standard_normal(800).astype(np.float32)
    got = both(np.zeros((), np.float32), a, b)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, loop(0.0, a.astype(float), b.astype(float)), rtol=1e-3,
                               atol=1e-4)


def survival(p):
    s, tot = 1.0, 0.0
    for pi in p:
        s = s * (1.0 - pi)
        tot = tot + s
    return tot


def exact_survival_grad(p):
    """d/dp_i sum_j prod_{k<=j} (1 - p_k): minus the products that skip factor i."""
    x, g = 1.0 - p, np.zeros_like(p)
    for i in range(len(p)):
        for j in range(i, len(p)):
            g[i] -= np.prod(x[:i]) * np.prod(x[i + 1:j + 1])
    return g


@pytest.mark.parametrize("zeros", [(), (7,), (3, 30), (0, 59), (20, 21)])
def test_cumprod_gradient_is_exact_at_zeros(zeros):
    p = np.random.default_rng(4).uniform(0.0, 0.3, 60)
    p[list(zeros)] = 1.0  # (factors 1 - p of exactly zero)
    np.testing.assert_allclose(vg.jit(survival)(p), np.sum(np.cumprod(1.0 - p)), rtol=RTOL)
    np.testing.assert_allclose(vg.grad(survival)(p), exact_survival_grad(p), rtol=RTOL,
                               atol=1e-300)


def test_long_products_fall_back_and_stay_exact():
    # (0.9 ** 3000 = 1e-137: the running product leaves the closed form's range, and the
    # gradient's reverse scan with it)
    T = 3000
    p = np.random.default_rng(5).uniform(0.0, 0.2, T)
    g = vg.grad(survival)(p)
    x = 1.0 - p
    c = np.cumprod(x)
    lam = np.zeros(T)  # lam[i] = 1 + x[i+1] lam[i+1], the adjoint as written
    lam[-1] = 1.0
    for i in range(T - 2, -1, -1):
        lam[i] = 1.0 + x[i + 1] * lam[i + 1]
    want = -np.concatenate([[1.0], c[:-1]]) * lam
    np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-300)


def growth(r, d):
    w, tot = 0.0, 0.0
    for t in range(len(r)):
        w = w * r[t] + d[t]
        tot = tot + w * w
    return tot


def test_affine_gradient_matches_central_differences():
    rng = np.random.default_rng(6)
    r, d = rng.uniform(0.95, 1.05, 400), rng.standard_normal(400)
    gr, gd = vg.grad(growth, argnums=(0, 1))(r, d)
    for _ in range(3):
        u, v = rng.standard_normal(400), rng.standard_normal(400)
        eps = 1e-6
        fd = (growth(r + eps * u, d + eps * v) - growth(r - eps * u, d - eps * v)) / (2 * eps)
        np.testing.assert_allclose(gr @ u + gd @ v, fd, rtol=1e-6)


def test_a_long_scan_in_range_then_out_of_it():
    # (20,000 steps of 0.999..1.001 stay in range: the closed form; then the same run with a
    # factor of 1e-80 in the middle, which takes the product out of it: the pairing)
    rng = np.random.default_rng(7)
    a, b = rng.uniform(0.999, 1.001, 20000), rng.standard_normal(20000)
    np.testing.assert_allclose(both(0.0, a, b), loop(0.0, a, b), rtol=1e-9)
    a[10000] = 1e-80
    np.testing.assert_allclose(both(0.0, a, b), loop(0.0, a, b), rtol=1e-9)
