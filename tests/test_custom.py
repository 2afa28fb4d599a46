"""User-defined derivative rules (vg.custom_vjp, vg.custom_jvp), as in JAX: under grad (to
any order), jit, vjp, jvp, jacobians and inside loops that batch."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(0)
X = R.standard_normal(5)
XS = R.standard_normal((6, 4))


@vg.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, None


def _clip_bwd(lo, hi, _, g):
    return (vnp.clip(g, lo, hi),)


clip_gradient = vg.custom_vjp(clip_gradient.fun, nondiff_argnums=(0, 1))
clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@vg.custom_vjp
def log1pexp(x):
    return vnp.log1p(vnp.exp(x))


def _l_fwd(x):
    return log1pexp(x), x


def _l_bwd(x, g):
    return (g * (1 - 1 / (1 + vnp.exp(x))),)  # stable where the naive gradient overflows


log1pexp.defvjp(_l_fwd, _l_bwd)


@vg.custom_vjp
def sin_cos(x, y):
    """Two outputs (packed into one equation), residuals in a dict."""
    return vnp.sin(x) * y, {"c": vnp.cos(x)}


def _sc_fwd(x, y):
    return sin_cos(x, y), {"cos": vnp.cos(x), "sin": vnp.sin(x), "y": y}


def _sc_bwd(res, g):
    ga, gd = g
    gx = ga * res["cos"] * res["y"] - gd["c"] * res["sin"]
    return gx, vnp.sum(ga * res["sin"]) if np.ndim(res["y"]) == 0 else ga * res["sin"]


sin_cos.defvjp(_sc_fwd, _sc_bwd)


def test_outside_a_trace_the_function_is_called():
    np.testing.assert_allclose(log1pexp(X), np.log1p(np.exp(X)))


def test_the_rule_is_used_by_grad_jit_and_vjp():
    g = vg.grad(lambda x: vnp.sum(clip_gradient(-0.5, 0.5, x * 3.0)))(X)
    np.testing.assert_allclose(g, np.full(5, 1.5))  # clip(1, -.5, .5) * 3
    big = np.array([0.0, 10.0, 80.0])
    np.testing.assert_allclose(vg.grad(lambda x: vnp.sum(log1pexp(x)))(big),
                               [0.5, 1 - 1 / (1 + np.exp(10.0)), 1.0])
    np.testing.assert_allclose(vg.jit(log1pexp)(X), np.log1p(np.exp(X)))
    out, vjp_fn = vg.vjp(log1pexp, big)
    np.testing.assert_allclose(out, np.log1p(np.exp(big)))
    np.testing.assert_allclose(vjp_fn(np.ones(3))[0], [0.5, 1 - 1 / (1 + np.exp(10.0)), 1.0])


def test_pytree_outputs_and_residuals():
    y = R.standard_normal(5)

    def loss(x, y):
        a, d = sin_cos(x, y)
        return vnp.sum(a * a) + vnp.sum(d["c"] * 3.0)
    gx, gy = vg.grad(loss, argnums=(0, 1))(X, y)
    np.testing.assert_allclose(gx, 2 * np.sin(X) * y * np.cos(X) * y - 3 * np.sin(X))
    np.testing.assert_allclose(gy, 2 * np.sin(X) * y * np.sin(X))
    vg.check_grads(loss, [X, y], argnums=(0, 1))


def test_higher_order_differentiates_bwd_through_the_residuals():
    # bwd of log1pexp: g * sigmoid(x); its derivative: sigmoid'(x)
    s = 1 / (1 + np.exp(-X))
    H = vg.hessian(lambda x: vnp.sum(log1pexp(x)))(X)
    np.testing.assert_allclose(H, np.diag(s * (1 - s)), rtol=1e-10, atol=1e-14)
    gg = vg.grad(lambda x: vnp.sum(vg.grad(lambda y: vnp.sum(log1pexp(y)))(x)))(X)
    np.testing.assert_allclose(gg, s * (1 - s), rtol=1e-10)
    # forward mode is the transposed rule
    _, t = vg.jvp(log1pexp, (X,), (np.ones(5),))
    np.testing.assert_allclose(t, s, rtol=1e-12)
    np.testing.assert_allclose(vg.jacfwd(log1pexp)(X), np.diag(s), rtol=1e-12)


def test_calls_in_a_loop_batch():
    def loss(xs):
        return sum(vnp.sum(log1pexp(xs[i] * 2.0) ** 2) for i in range(xs.shape[0]))
    sizes = []
    for n in (3, 6):
        xs = XS[:n]
        e, _ = vg.grad(loss).entry(xs)
        sizes.append(e.counts["simplify"])
        s = 1 / (1 + np.exp(-2 * xs))
        np.testing.assert_allclose(vg.grad(loss)(xs), 2 * np.log1p(np.exp(2 * xs)) * s * 2,
                                   rtol=1e-10)
        calls = [q for q in e.stages["simplify"].eqns if q.prim.name == "custom_vjp_call"]
        assert len(calls) == 1 and calls[0].out.aval.shape == (n, 4)
    assert sizes[0] == sizes[1]
    # and batched again: second derivatives of the loop
    vg.check_grads(lambda xs: vnp.sum(vg.grad(loss)(xs) ** 2), [XS[:3]], rtol=1e-5)


def test_batched_with_shared_operands_sums_their_cotangents():
    @vg.custom_vjp
    def scale(w, x):
        return w * x

    def fwd(w, x):
        return w * x, (w, x)

    def bwd(res, g):
        w, x = res
        return vnp.sum(g * x), g * w
    scale.defvjp(fwd, bwd)
    w = np.array(1.7)

    def loss(w, xs):
        return sum(vnp.sum(vnp.sin(scale(w, xs[i]))) for i in range(xs.shape[0]))
    gw, gx = vg.grad(loss, argnums=(0, 1))(w, XS)
    np.testing.assert_allclose(gw, np.sum(np.cos(w * XS) * XS), rtol=1e-12)
    np.testing.assert_allclose(gx, np.cos(w * XS) * w, rtol=1e-12)


def test_custom_jvp_as_in_jax():
    @vg.custom_jvp
    def f(x, y):
        return vnp.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), vnp.cos(x) * tx * y + vnp.sin(x) * ty * 2.0  # (a rule with a twist)
    y = R.standard_normal(5)
    out, t = vg.jvp(f, (X, y), (np.ones(5), np.ones(5)))
    np.testing.assert_allclose(out, np.sin(X) * y)
    np.testing.assert_allclose(t, np.cos(X) * y + 2 * np.sin(X), rtol=1e-12)
    gx, gy = vg.grad(lambda x, y: vnp.sum(f(x, y)), argnums=(0, 1))(X, y)
    np.testing.assert_allclose(gx, np.cos(X) * y, rtol=1e-12)
    np.testing.assert_allclose(gy, 2 * np.sin(X), rtol=1e-12)
    np.testing.assert_allclose(vg.jacrev(lambda x: f(x, y))(X), np.diag(np.cos(X) * y),
                               rtol=1e-12)


def test_rule_errors_name_the_rule():
    @vg.custom_vjp
    def f(x):
        return x * 2.0
    with pytest.raises(vg.ArgumentError, match="defvjp"):
        vg.grad(lambda x: vnp.sum(f(x)))(X)
    f.defvjp(lambda x: (x * 2.0, None), lambda r, g: g)  # not a tuple
    with pytest.raises(vg.ArgumentError, match="one cotangent per"):
        vg.grad(lambda x: vnp.sum(f(x)))(X)
    f.defvjp(lambda x: (x * 2.0, None), lambda r, g: (g[:2],))
    with pytest.raises(vg.ShapeError, match=r"shape \(2,\).*\(5,\)"):
        vg.grad(lambda x: vnp.sum(f(x)))(X)
    with pytest.raises(vg.ArgumentError, match="nondiff_argnums"):
        vg.jit(lambda x: clip_gradient(x[0], 1.0, x))(X)


def test_against_jax_custom_vjp(jax):
    import jax.numpy as jnp

    @jax.custom_vjp
    def jf(x):
        return jnp.log1p(jnp.exp(x))
    jf.defvjp(lambda x: (jf(x), x), lambda x, g: (g * (1 - 1 / (1 + jnp.exp(x))),))
    x = np.array([0.0, 3.0, 50.0, -2.0])
    want = jax.jit(jax.jacrev(jax.jacrev(lambda x: jnp.sum(jf(x) ** 2))))(x)  # (no jvp)
    got = vg.hessian(lambda x: vnp.sum(log1pexp(x) ** 2))(x)
    np.testing.assert_allclose(got, np.asarray(want, np.float64), rtol=1e-6, atol=1e-9)
