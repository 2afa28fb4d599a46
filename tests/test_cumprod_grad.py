"""cumprod's VJP, `cumprod_grad` (primitives/cumulative.py): the suffix sum of g * c divided
by x where the forward's running product c is exactly NumPy's and stays normal, the work up
to each row's first zero where c reaches zero, and the recurrence with no division otherwise.

Every plan is checked against the adjoint recurrence run step by step (rtol 1e-9), through
the impl and through the NumPy backend's bound runner, on inputs that push the division out
of its range (zeros anywhere, several zeros, underflow, overflow, infinities, NaNs, c drawn
apart from x, float32, complex); then end to end: loops of running products against central
differences, the product's gradient in closed form at zeros, second derivatives, and the
graph (one cumprod_grad, no reverse scan).
"""
from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
from conftest import central_diff_check
from specs_numpy import cumprod_grad_ref
from test_affine_plans import exact_survival_grad, survival

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.ir import Aval
from vecgrad.primitives.cumulative import _by_division, _exact_np, _floor, cumprod_grad_runner


def recurrence(g, c, x, axis):
    """The exact form, as written step by step, in float64 (complex stays complex)."""
    dt = np.result_type(g, c, x, np.float64)
    return cumprod_grad_ref(*(np.asarray(v, dt) for v in (g, c, x)), axis)


def exact(g, c, x, axis):
    """The recurrence form the NumPy backend falls back to (the scan's plans)."""
    f = lambda v: np.moveaxis(v, axis, 0)
    return np.moveaxis(_exact_np(f(g), f(c), f(x), np.dtype(np.float64)), 0, axis)


def both(g, c, x, axis):
    """The impl's result and the bound runner's (the NumPy backend's), which must agree."""
    got = P.cumprod_grad.impl(g, c, x, axis=axis)
    avals = [Aval(np.shape(v), np.asarray(v).dtype) for v in (g, c, x)]
    np.testing.assert_array_equal(cumprod_grad_runner(*avals, axis=axis)(g, c, x), got)
    return got


def factors(rng, shape, kind):
    x = rng.uniform(0.8, 1.2, shape) * (rng.choice([-1.0, 1.0], shape) if kind == "signs"
                                        else 1.0)
    n = x.size
    if kind in ("zero", "zeros") and n:
        k = 1 if kind == "zero" else max(2, n // 7)
        x.flat[rng.choice(n, size=min(k, n), replace=False)] = 0.0
    elif kind == "first_zero" and n:
        x[0] = 0.0
    elif kind == "last_zero" and n:
        x[-1] = 0.0
    elif kind == "underflow":
        x = np.full(shape, 1e-3)  # (1e-3 ** 110 = 1e-330: subnormal, then zero)
    elif kind == "overflow":
        x = np.full(shape, 1e3)
    elif kind == "inf" and n:
        x.flat[rng.integers(n)] = np.inf
    elif kind == "nan" and n:
        x.flat[rng.integers(n)] = np.nan
    return x


SHAPES = [((1000,), 0), ((7,), 0), ((1,), 0), ((2,), 0), ((300, 8), 0), ((8, 300), 1),
          ((5, 40, 3), 1), ((0, 3), 0), ((4, 0), 1), ((200, 2, 2), 0)]
KINDS = ["plain", "signs", "zero", "zeros", "first_zero", "last_zero", "underflow", "overflow",
         "inf", "nan"]


@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_plan_is_the_recurrence(shape, axis, kind):
    rng = np.random.default_rng(sum(shape) + len(kind))
    x = factors(rng, shape, kind)
    with np.errstate(all="ignore"):
        c = np.cumprod(x, axis)
        g = rng.standard_normal(shape)
        got = both(g, c, x, axis)
        # (an infinite factor: inf or NaN as the exact form's scan gives them, which is
        # cumprod's VJP of before; the step-by-step recurrence may order 0 * inf otherwise)
        want = exact(g, c, x, axis) if kind == "inf" else recurrence(g, c, x, axis)
    assert got.dtype == np.float64 and got.shape == shape
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("where", ["g_past_zero", "g_past_next_zero", "g_before_zero",
                                   "g_everywhere"])
def test_infinite_cotangents_give_what_the_recurrence_gives(where):
    # (an inf past the next zero meets 0 * inf = NaN in the recurrence: NaN, not a number)
    x = np.array([0.5, 0.9, 0.0, 2.0, 3.0, 0.0, 1.5])
    g = np.ones(7)
    g[{"g_past_zero": 4, "g_past_next_zero": 6, "g_before_zero": 1,
       "g_everywhere": slice(None)}[where]] = np.inf
    with np.errstate(all="ignore"):
        c = np.cumprod(x)
        np.testing.assert_array_equal(both(g, c, x, 0), recurrence(g, c, x, 0))


@pytest.mark.parametrize("where", ["g_past_zero", "g_past_next_zero", "g_before_zero",
                                   "g_at_zero", "none"])
@pytest.mark.parametrize("ncols", [1, 5, 16, 17])
def test_columns_reaching_zero_give_what_the_recurrence_gives(where, ncols):
    # (rows of columns: those that reach zero take the ratio up to their first zero from the
    # ratio of all, then their own work at and past it; an inf in g sends all to the exact
    # form; more than ZERO_COLUMNS_MAX such columns too)
    rng = np.random.default_rng(ncols)
    x = rng.uniform(0.8, 1.2, (60, 20))
    for j in range(ncols):
        x[rng.choice(60, size=1 + j % 3, replace=False), j] = 0.0
    g = rng.standard_normal((60, 20))
    with np.errstate(all="ignore"):
        c = np.cumprod(x, 0)
        z = np.count_nonzero(c[:, 0])
        nxt = z + 1 + (np.flatnonzero(x[z + 1:, 0] == 0)[:1].tolist() or [58 - z])[0]
        at = {"g_past_zero": min(z + 1, 59), "g_past_next_zero": min(nxt + 1, 59),
              "g_before_zero": max(z - 1, 0), "g_at_zero": z, "none": None}[where]
        if at is not None:
            g[at, 0] = np.inf
        for axis, t in ((0, lambda v: v), (1, lambda v: v.T.copy())):
            args = (t(g), t(c), t(x), axis)
            np.testing.assert_allclose(both(*args), recurrence(*args), rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("off", ["ulp", "scaled"])
def test_c_apart_from_x_runs_the_recurrence(off):
    # (c off NumPy's running product by one ulp, or a product 0.1% off: the division would
    # stand for other factors, and give other numbers)
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, 50)
    c = np.cumprod(x)
    c[20] = np.nextafter(c[20], 2.0) if off == "ulp" else c[20] * 1.001
    g = rng.standard_normal(50)
    np.testing.assert_allclose(both(g, c, x, 0), recurrence(g, c, x, 0), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_other_dtypes(dtype):
    rng = np.random.default_rng(4)
    x = rng.uniform(0.8, 1.2, (60, 3)).astype(dtype)
    x[10, 1] = 0
    g = rng.standard_normal((60, 3)).astype(dtype)
    c = np.cumprod(x, 0)
    got = both(g, c, x, 0)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, recurrence(g, c, x, 0),
                               rtol=1e-5 if dtype == np.float32 else 1e-12)


# ------------------------------------------------------------------ end to end

@pytest.mark.parametrize("ones", [(), (0,), (39,), (5,), (5, 6), (3, 17, 30), (0, 39)])
def test_survival_gradient_at_certain_events(ones):
    p = np.random.default_rng(8).uniform(0.0, 0.3, 40)
    p[list(ones)] = 1.0  # (factors 1 - p of exactly zero)
    np.testing.assert_allclose(vg.grad(survival)(p), exact_survival_grad(p), rtol=1e-12,
                               atol=1e-300)


def price_log(r):
    price, tot = np.ones(r.shape[1]), 0.0
    for t in range(r.shape[0]):
        price = price * (1.0 + r[t])
        tot = tot + np.sum(np.log(price))
    return tot


def weighted_rows(F, w):
    return vnp.sum(vnp.cumprod(F, axis=1) * w)


def reduce_product(x):
    return functools.reduce(operator.mul, [x[i] for i in range(len(x))]) + vnp.sum(
        vnp.cumprod(x))


def mixed(x, y):
    s, tot = 1.0, 0.0
    for xt, yt in zip(x, y):
        s = s * xt * (2.0 - yt)
        tot = tot + s * yt
    return tot


@pytest.mark.parametrize("fun,make", [
    (survival, lambda r: (r.uniform(0, 0.2, 300),)),
    (price_log, lambda r: (r.normal(0, 0.01, (120, 5)),)),
    (weighted_rows, lambda r: (r.uniform(0.5, 1.5, (6, 50)), r.normal(size=(6, 50)))),
    (reduce_product, lambda r: (r.uniform(0.9, 1.1, 30),)),
    (mixed, lambda r: (r.uniform(0.9, 1.1, 200), r.uniform(0.9, 1.1, 200))),
])
def test_running_products_match_central_differences(fun, make):
    args = make(np.random.default_rng(9))
    central_diff_check(fun, args, argnums=tuple(range(len(args))))
    g = vg.grad(fun, argnums=tuple(range(len(args))))
    assert any(e.prim is P.cumprod_grad for e in g.entry(*args)[0].stages["final"].eqns)


def test_gradient_uses_one_suffix_sum_not_a_reverse_scan():
    p = np.random.default_rng(10).uniform(0, 0.1, 500)
    prims = [e.prim.name for e in vg.grad(survival).entry(p)[0].stages["final"].eqns]
    assert prims.count("cumprod_grad") == 1 and "affine_scan" not in prims, prims


def test_long_survival_with_zeros_and_underflow():
    # (20,000 steps: one run past 1e-292 that falls back to the recurrence, one with zeros)
    rng = np.random.default_rng(11)
    for p in (rng.uniform(0.0, 0.1, 20000), np.where(rng.random(20000) < 1e-3, 1.0,
                                                      rng.uniform(0.0, 1e-4, 20000))):
        x = 1.0 - p
        c = np.cumprod(x)
        want = -recurrence(np.ones(20000), c, x, 0)
        got = vg.grad(lambda p: vnp.sum(vnp.cumprod(1.0 - p)))(p)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)


def test_second_derivatives():
    # the gradient of a loss of cumprod's gradient (cumprod_grad's own VJP), against
    # central differences of the first gradient
    rng = np.random.default_rng(12)
    x0 = rng.uniform(0.7, 1.3, (9, 3))

    def loss(x):
        return vnp.sum(vnp.cumprod(x, axis=0) ** 2)

    def outer(x):
        return vnp.sum(vg.grad(loss)(x) * vnp.sin(x))
    central_diff_check(outer, (x0,))
    x0[4, 1] = 0.0
    central_diff_check(outer, (x0,))


@pytest.mark.parametrize("shape,axis", [s for s in SHAPES if 0 not in s[0]])
@pytest.mark.parametrize("kind", ["plain", "signs", "zero", "zeros", "first_zero", "last_zero"])
def test_the_division_runs_where_it_is_exact(shape, axis, kind):
    # (the recurrence gives the same values: this checks that the cheaper plan is taken)
    rng = np.random.default_rng(sum(shape) + len(kind))
    x = np.moveaxis(factors(rng, shape, kind), axis, 0)
    c = np.cumprod(x, 0)
    g = rng.standard_normal(x.shape)
    got = _by_division(g, c, x, _floor(np.dtype(np.float64)))
    assert got is not None
    np.testing.assert_allclose(got, _exact_np(g, c, x, np.dtype(np.float64)), rtol=1e-9)


@pytest.mark.parametrize("kind", ["underflow", "overflow", "inf", "nan"])
def test_the_division_steps_aside_out_of_range(kind):
    x = factors(np.random.default_rng(13), (400,), kind)
    with np.errstate(all="ignore"):
        assert _by_division(np.ones(400), np.cumprod(x), x, 1e-292) is None


@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_running_skips_only_the_bitwise_check(shape, axis, kind):
    """cumprod's VJP passes its own c = cumprod(x) with running=True, which skips the bitwise
    check of c against x (two passes) and nothing else: the same values as the checked plan."""
    rng = np.random.default_rng(sum(shape) + 3 * len(kind))
    x = factors(rng, shape, kind)
    with np.errstate(all="ignore"):
        c = np.cumprod(x, axis)
        g = rng.standard_normal(shape)
        want = both(g, c, x, axis)
        got = P.cumprod_grad.impl(g, c, x, axis=axis, running=True)
        avals = [Aval(np.shape(v), np.asarray(v).dtype) for v in (g, c, x)]
        bound = cumprod_grad_runner(*avals, axis=axis, running=True)(g, c, x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(bound, want)


@pytest.mark.parametrize("kind", ["underflow", "overflow", "inf", "nan"])
def test_running_still_steps_aside_out_of_range(kind):
    x = factors(np.random.default_rng(14), (400,), kind)
    with np.errstate(all="ignore"):
        assert _by_division(np.ones(400), np.cumprod(x), x, 1e-292, running=True) is None


def test_the_vjp_marks_its_running_product():
    p = np.random.default_rng(15).uniform(0, 0.1, 50)
    eqns = [e for e in vg.grad(survival).entry(p)[0].stages["final"].eqns
            if e.prim.name == "cumprod_grad"]
    assert [e.params.get("running") for e in eqns] == [True]
