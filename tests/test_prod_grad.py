"""reduce_prod's VJP as one primitive, reduce_prod_grad(g, x, axes) = g * (the product of the
other factors), primitives/products.py.

The impl divides the product by x where every product is finite and nonzero (no factor 0, inf
or NaN), and takes the exact form (the product of the nonzero factors, kept where x is the only
zero or there is none) on the other products only. Checked: against the product of the others
element by element (shapes, axes, 0 to 3 zeros per product, infs and NaNs, float32, complex),
the fast and mixed paths against the exact form on all products, the second-, third- and
fourth-order derivatives against central differences at and away from zeros, and loops that
take products (np.prod per sample, functools.reduce) against NumPy and central differences."""
from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
from specs_core import _prod_grad_ref

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.config import config
from vecgrad.primitives.products import _exact, _grad_impl, _zero_rows

SHAPES = [((7,), (0,)), ((6, 5), (0,)), ((6, 5), (1,)), ((3, 4, 5), (0, 2)), ((3, 4, 5), (1,)),
          ((3, 4, 5), (0, 1, 2)), ((4, 3, 2), (2,)), ((2, 1, 3), (1,))]


def _kd(x, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(x.shape))


def _draw(r, shape, frac, special=None):
    x = r.standard_normal(shape)
    x[r.random(shape) < frac] = 0.0
    if special is not None:
        x[r.random(shape) < 0.1] = special
    return x


@pytest.mark.parametrize("shape,axes", SHAPES)
@pytest.mark.parametrize("frac", [0.0, 0.05, 0.3, 0.7])
def test_product_of_the_others(shape, axes, frac):
    r = np.random.default_rng(hash((shape, axes, frac)) % 2 ** 32)
    for _ in range(5):
        x = _draw(r, shape, frac)
        g = r.standard_normal(tuple(d for i, d in enumerate(shape) if i not in axes))
        got = _grad_impl(g, x, axes)
        np.testing.assert_allclose(got, _prod_grad_ref(g, x, axes), rtol=1e-10, atol=1e-13)
        # the fast and mixed paths give the exact form's values bitwise
        np.testing.assert_array_equal(got, _exact(g.reshape(_kd(x, axes)), x, axes))


@pytest.mark.parametrize("special", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("shape,axes", SHAPES[1:5])
def test_infinite_and_nan_factors_as_the_exact_form(shape, axes, special):
    r = np.random.default_rng(7)
    x = _draw(r, shape, 0.1, special)
    g = r.standard_normal(tuple(d for i, d in enumerate(shape) if i not in axes))
    with np.errstate(all="ignore"):
        want = _exact(g.reshape(_kd(x, axes)), x, axes)
    np.testing.assert_array_equal(_grad_impl(g, x, axes), want)


def test_underflow_and_overflow_take_the_exact_form():
    """Products that underflow to 0 or overflow to inf without a zero or inf factor: the
    division would give 0 / x or inf / x; the exact form gives what the IR form gave."""
    x = np.full((3000, 4), 0.5)
    x[:, 1] = 2.0
    x[:10, 2] = 0.0
    g = np.ones(4)
    got = _grad_impl(g, x, (0,))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, _exact(g.reshape(1, 4), x, (0,)))
    assert np.all(got[:, 0] == 0.0) and np.all(np.isinf(got[:, 1]))
    assert np.all(got[:, 2] == 0.0)  # (ten zeros: every product of the others is 0)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_dtypes(dtype):
    r = np.random.default_rng(1)
    x = r.standard_normal((5, 6)).astype(dtype)
    if dtype == np.complex128:
        x = x + 1j * r.standard_normal((5, 6))
    x[2, 3] = 0
    g = np.ones(6, dtype)
    got = _grad_impl(g, x, (0,))
    assert got.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, _prod_grad_ref(g, x, (0,)), rtol=tol, atol=tol)


@pytest.mark.parametrize("nz", [0, 1, 2, 3])
@pytest.mark.parametrize("axis", [0, 1])
def test_second_order_at_zeros(nz, axis):
    """The Hessian-vector product of sum(w * prod(x, axis)) against central differences of the
    gradient (the product is multilinear: the differences are exact up to rounding)."""
    r = np.random.default_rng(10 * nz + axis)
    x = r.standard_normal((5, 4)) if axis == 0 else r.standard_normal((4, 5))
    zs = np.moveaxis(x, axis, 0)
    zs[:nz] = 0.0
    w, v = r.standard_normal(4), r.standard_normal(x.shape)

    def f(x):
        return vnp.sum(w * vnp.prod(x, axis=axis))
    gf = vg.grad(f)
    hv = vg.grad(lambda x: vnp.sum(gf(x) * v))(x)
    eps = 1e-6
    fd = (gf(x + eps * v) - gf(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)


def per_sample(H):
    tot = 0.0
    for h in H:
        tot += vnp.log(vnp.prod(1.0 - h))
    return tot


def reduce_rows(R, w):
    return functools.reduce(operator.mul, list(R)) @ w


def reduce_columns_lambda(X):
    p = functools.reduce(lambda a, b: a * b, [X[:, j] for j in range(X.shape[1])])
    return vnp.sum(vnp.log(vnp.abs(p)))


def test_loops_against_numpy_and_differences():
    r = np.random.default_rng(4)
    H = r.uniform(0.0, 0.5, (30, 6))
    np.testing.assert_allclose(vg.jit(per_sample)(H), np.sum(np.log(np.prod(1 - H, 1))),
                               rtol=1e-12)
    vg.check_grads(per_sample, (H,), rtol=1e-6, atol=1e-8)
    R, w = r.uniform(0.5, 1.5, (20, 8)), r.standard_normal(8)
    R[3, 2] = R[7, 5] = R[9, 5] = 0.0  # one zero in column 2, two in column 5
    np.testing.assert_allclose(vg.jit(reduce_rows)(R, w), np.prod(R, 0) @ w, rtol=1e-12)
    vg.check_grads(reduce_rows, (R, w), argnums=(0, 1), rtol=1e-6, atol=1e-8)
    gR = vg.grad(reduce_rows)(R, w)
    np.testing.assert_allclose(gR, _prod_grad_ref(w, R, (0,)), rtol=1e-12, atol=1e-14)
    X = r.uniform(0.5, 1.5, (40, 5)) * r.choice([-1.0, 1.0], (40, 5))
    vg.check_grads(reduce_columns_lambda, (X,), rtol=1e-6, atol=1e-8)


def test_the_gradient_is_one_primitive():
    """No zero masks, counts or wheres in the gradient of a product: reduce_prod_grad."""
    with config(keep_stages=True):
        e, _ = vg.grad(reduce_rows).entry(np.ones((6, 3)), np.ones(3))
    names = [q.prim.name for q in e.stages["final"].eqns]
    assert "reduce_prod_grad" in names
    assert not {"where", "eq", "cast"} & set(names), names


@pytest.mark.parametrize("nz", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("shape,axes", [((5, 3), (0,)), ((2, 5, 2), (0, 2)), ((5,), (0,))])
def test_third_and_fourth_order_at_zeros(nz, shape, axes):
    """Derivatives of order 3 and 4 of sum(w * prod(x, axes)) where the products have nz exact
    zeros, each against central differences of the order below it (at the shifted points
    there are no exact zeros; the product is a polynomial, so the differences are exact up
    to rounding and eps^2 times a bounded derivative)."""
    r = np.random.default_rng(100 * nz + len(shape))
    x = r.standard_normal(shape)
    flat = np.moveaxis(x, axes, range(len(axes))).reshape(-1, *[d for i, d in
                                                                enumerate(shape) if i not in axes])
    rows = r.permutation(flat.shape[0])[:nz]
    flat[rows] = 0.0
    x = np.moveaxis(flat.reshape([shape[a] for a in axes] + [d for i, d in enumerate(shape)
                                                             if i not in axes]),
                    range(len(axes)), axes).copy()
    w = r.standard_normal(np.prod(x, axis=axes).shape)
    vs = [r.standard_normal(shape) for _ in range(3)]

    def along(f, v):
        return vg.grad(lambda x: vnp.sum(f(x) * v))
    d1 = vg.grad(lambda x: vnp.sum(w * vnp.prod(x, axis=axes)))
    d2 = along(d1, vs[0])
    d3, eps = along(d2, vs[1]), 1e-5
    d4 = along(d3, vs[2])
    for hi, lo, v in ((d3, d2, vs[1]), (d4, d3, vs[2])):
        fd = (lo(x + eps * v) - lo(x - eps * v)) / (2 * eps)
        np.testing.assert_allclose(hi(x), fd, rtol=1e-6, atol=1e-7)


def _few_zero_products(r, shape, axis, where):
    """A matrix of factors near 1 (its products along `axis` finite) with zeros placed at
    (product, factor) pairs `where`."""
    x = r.uniform(0.9, 1.1, shape)
    for k, j in where:
        x[(j, k) if axis == 0 else (k, j)] = 0.0
    return x


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("where", [[(3, 0)], [(3, 39)], [(0, 5), (0, 6)], [(1, 2), (7, 30)],
                                   [(2, 4), (5, 4), (5, 10), (8, 0)], [(6, 17)] * 2])
def test_a_few_zero_products_fixed_in_their_rows(axis, where):
    """The matrix path (_zero_rows, a quarter of the products or fewer are 0): only the zero
    factors change, to g times the product of the others (one zero) or 0 (two or more)."""
    r = np.random.default_rng(len(where) + 10 * axis)
    shape = (40, 9) if axis == 0 else (9, 40)
    x = _few_zero_products(r, shape, axis, where)
    g = r.standard_normal(9)
    got = _grad_impl(g, x, (axis,))
    np.testing.assert_allclose(got, _prod_grad_ref(g, x, (axis,)), rtol=1e-12, atol=1e-15)
    with np.errstate(all="ignore"):
        want = _exact(np.expand_dims(g, axis), x, (axis,))
        p = np.prod(x, axis=axis, keepdims=True)
        direct = _zero_rows(np.expand_dims(g, axis) * p / x, g, x, p, axis)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(direct, got)


def test_zero_rows_signed_zero_infinite_cotangent_and_dtypes():
    r = np.random.default_rng(5)
    x = _few_zero_products(r, (30, 8), 0, [(1, 3), (4, 0), (4, 9)])
    x[3, 1] = -0.0  # (a negative zero: the product of the others keeps its own sign)
    g = r.standard_normal(8)
    g[4] = np.inf  # (two zeros in product 4: inf * 0, NaN, as g * 0 would be)
    with np.errstate(all="ignore"):
        got = _grad_impl(g, x, (0,))
        want = _exact(g[None], x, (0,))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)  # (NaNs in equal places)
    for dt in (np.float32, np.complex128):
        xd = x.astype(dt) * (1 + 0.5j if dt == np.complex128 else 1)
        gd = r.standard_normal(8).astype(dt)
        got = _grad_impl(gd, xd, (0,))
        assert got.dtype == dt
        tol = 1e-5 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(got, _prod_grad_ref(gd, xd, (0,)), rtol=tol, atol=tol)
    gz = g + 1j * r.standard_normal(8)  # (a complex cotangent on real factors)
    gz[4] = 1.0
    got = _grad_impl(gz, x, (0,))
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, _prod_grad_ref(gz, x, (0,)), rtol=1e-12, atol=1e-15)
