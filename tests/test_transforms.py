"""Transformations that compose: grad of grad, hessian, jacrev/jacfwd/jacobian, jvp, hvp,
linearize, vjp compiled once, and transformed functions called inside other transformations
(their graphs are inlined, so the enclosing passes batch and simplify them too).

Checked against HIPS autograd, JAX (where installed) and float64 central differences."""
from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import rng
from hypothesis import given, settings
from test_batch import build, loop_programs, program_inputs

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import api, linear_maps
from vecgrad import primitives as P
from vecgrad.examples import seeds as S

R = rng(11)
X = R.standard_normal(5)
A = R.standard_normal((3, 4))
W = R.standard_normal((4, 3))


def _programs():
    """(name, f(xp, x, w)) scalar programs written once for vecgrad.numpy and autograd.numpy."""
    def mlp(xp, x, w):
        return xp.sum(xp.tanh(xp.dot(x, w)) ** 2) + xp.sum(xp.sin(x) * x)

    def softmax_ce(xp, x, w):
        z = xp.dot(x, w)
        z = z - xp.max(z, axis=1, keepdims=True)
        return -xp.sum(z - xp.log(xp.sum(xp.exp(z), axis=1, keepdims=True))) + xp.sum(w ** 3)

    def ratios(xp, x, w):
        return xp.sum(x[:, :3] / (1.5 + xp.cos(w[:3].T))) + xp.prod(x[0] + 2.0) * xp.sum(w)

    def loops(xp, x, w):
        total = 0.0
        for i in range(x.shape[0]):
            total = total + xp.sum(x[i] * w[:, i % 3]) ** 2 + xp.sqrt(xp.sum(x[i] ** 2))
        return total + xp.sum(xp.maximum(x, 0.2) * xp.exp(-x))
    return [mlp, softmax_ce, ratios, loops]


PROGRAMS = _programs()


def fd_jacobian(f, x, eps=1e-6):
    """Central-difference Jacobian of a NumPy function of one float64 array."""
    x = np.asarray(x, np.float64)
    cols = []
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        cols.append((np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps))
    return np.moveaxis(np.array(cols).reshape(x.shape + np.shape(cols[0])), range(x.ndim),
                       range(-x.ndim, 0))


# ----------------------------------------------------------------- against autograd

@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_hessian_matches_autograd(prog, autograd_np):
    import autograd
    for argnum, x in ((0, A), (1, W)):
        def fv(a, b):
            return prog(vnp, a, b)

        def fa(a, b):
            return prog(autograd_np, a, b)
        want = autograd.hessian(fa, argnum)(A, W)
        for h in (vg.hessian(fv, argnum), vg.jacrev(vg.grad(fv, argnum), argnum),
                  vg.jacfwd(vg.jacrev(fv, argnum), argnum)):
            got = h(A, W)
            assert got.shape == x.shape + x.shape
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_grad_of_grad_matches_autograd(prog, autograd_np):
    import autograd
    u = rng(3).standard_normal(A.shape)

    def inner_v(a, b):
        return vnp.sum(vg.grad(lambda a, b: prog(vnp, a, b))(a, b) * u)

    def inner_a(a, b):
        return autograd_np.sum(autograd.grad(lambda a, b: prog(autograd_np, a, b))(a, b) * u)
    got = vg.grad(inner_v, argnums=(0, 1))(A, W)
    want = autograd.grad(inner_a, argnum=(0, 1))(A, W)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10)


def test_jacobians_match_autograd(autograd_np):
    import autograd

    def fv(x, w):
        return vnp.tanh(vnp.dot(x, w)) * x[:, :3]

    def fa(x, w):
        return autograd_np.tanh(autograd_np.dot(x, w)) * x[:, :3]
    for argnum in (0, 1):
        want = autograd.jacobian(fa, argnum)(A, W)
        for jac in (vg.jacrev, vg.jacfwd, vg.jacobian):
            got = jac(fv, argnum)(A, W)
            assert got.shape == (3, 3) + (A.shape if argnum == 0 else W.shape)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------- against differences

def test_jacobian_pytrees_argnums_and_aux():
    def f(p, x):
        y = vnp.tanh(p["w"] @ x) + p["b"]
        return {"y": y, "n": vnp.sum(y ** 2)}, vnp.mean(y)
    p = {"w": R.standard_normal((2, 3)), "b": R.standard_normal(2)}
    x = R.standard_normal(3)
    for jac in (vg.jacrev, vg.jacfwd):
        (j, aux) = jac(f, argnums=(0, 1), has_aux=True)(p, x)
        assert set(j) == {"y", "n"} and isinstance(j["y"], tuple) and len(j["y"]) == 2
        assert j["y"][0]["w"].shape == (2, 2, 3) and j["n"][0]["b"].shape == (2,)
        assert j["y"][1].shape == (2, 3) and j["n"][1].shape == (3,)
        np.testing.assert_allclose(aux, np.mean(np.tanh(p["w"] @ x) + p["b"]))

        def np_f(w, b, x):
            return np.tanh(w @ x) + b
        np.testing.assert_allclose(j["y"][0]["w"], fd_jacobian(lambda w: np_f(w, p["b"], x),
                                                               p["w"]), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(j["y"][1], fd_jacobian(lambda x: np_f(p["w"], p["b"], x),
                                                          x), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(j["n"][0]["b"], 2 * np_f(p["w"], p["b"], x), rtol=1e-10)


def test_jacobian_of_several_output_leaves_and_scalar_output():
    def f(x):
        return x[0] * x, vnp.sum(x ** 2)
    for jac in (vg.jacrev, vg.jacfwd):
        j0, j1 = jac(f)(X)
        np.testing.assert_allclose(j0, fd_jacobian(lambda x: x[0] * x, X), rtol=1e-7)
        np.testing.assert_allclose(j1, 2 * X, rtol=1e-12)
        np.testing.assert_allclose(jac(lambda x: vnp.sum(x * x))(X), 2 * X, rtol=1e-12)


def test_jvp_and_linearize_against_central_differences():
    def f(x, w):
        return {"a": vnp.sin(x @ w), "b": vnp.sum(x ** 3)}
    tx, tw = R.standard_normal(A.shape), R.standard_normal(W.shape)
    out, tan = vg.jvp(f, (A, W), (tx, tw))
    eps = 1e-6
    np_f = lambda x, w: {"a": np.sin(x @ w), "b": np.sum(x ** 3)}
    hi, lo = np_f(A + eps * tx, W + eps * tw), np_f(A - eps * tx, W - eps * tw)
    for k in ("a", "b"):
        np.testing.assert_allclose(out[k], np_f(A, W)[k], rtol=1e-12)
        np.testing.assert_allclose(tan[k], (hi[k] - lo[k]) / (2 * eps), rtol=1e-6, atol=1e-8)
    out2, f_jvp = vg.linearize(f, A, W)
    t2 = f_jvp(tx, tw)
    for k in ("a", "b"):
        np.testing.assert_allclose(out2[k], out[k], rtol=1e-12)
        np.testing.assert_allclose(t2[k], tan[k], rtol=1e-10, atol=1e-12)


def test_hvp_is_forward_over_reverse():
    f = lambda x: vnp.sum(vnp.tanh(x) ** 2 * x[::-1])
    v = R.standard_normal(X.shape)
    H = vg.hessian(f)(X)
    np.testing.assert_allclose(vg.hvp(f, (X,), (v,)), H @ v, rtol=1e-10)
    # the same product written as reverse over reverse, with v closed over
    np.testing.assert_allclose(vg.grad(lambda x: vnp.sum(vg.grad(f)(x) * v))(X), H @ v,
                               rtol=1e-10)
    np.testing.assert_allclose(H, H.T, rtol=1e-12)


@pytest.mark.parametrize("name", ["seed000", "seed001", "seed002"])
def test_seed_hessian_vector_products_small(name):
    """H v of each seed program at small sizes, against differences of its gradient."""
    cases = {
        "seed000": (S.seed000_loss, S.seed000_inputs(N=3, W=4, R=2, B=2, dtype=np.float64)),
        "seed001": (S.seed001_loss, S.seed001_inputs(T=3, batch=2, n_in=3, n_out=2, D=2,
                                                     dtype=np.float64)),
        "seed002": (lambda W0, params, xs: S.mapall([(W0, params[0][1])] + params[1:], xs),
                    None),
    }
    f, args = cases[name]
    if name == "seed002":
        params, xs = S.seed002_inputs(n=4, sizes=(1, 5, 3, 1))
        args = (params[0][0], params, xs)
    x0 = args[0]
    v = rng(5).standard_normal(np.shape(x0))
    got = vg.hvp(f, args, (v,) + tuple(_zeros_like(a) for a in args[1:]))
    g = vg.grad(f)
    eps = 1e-5
    fd = (g(x0 + eps * v, *args[1:]) - g(x0 - eps * v, *args[1:])) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-7)
    if name == "seed000":  # the full Hessian at these sizes, and its symmetry
        H = vg.hessian(f)(*args)
        n = x0.size
        np.testing.assert_allclose(H.reshape(n, n) @ v.ravel(), got.ravel(), rtol=1e-8)
        np.testing.assert_allclose(H.reshape(n, n), H.reshape(n, n).T, rtol=1e-8, atol=1e-10)


def _zeros_like(x):
    if isinstance(x, list):
        return [_zeros_like(a) for a in x]
    if isinstance(x, tuple):
        return tuple(_zeros_like(a) for a in x)
    return np.zeros_like(x)


# ------------------------------------------------------- nesting, closures, batching

def test_grad_inside_jit_closing_over_traced_values():
    def outer(x, v):
        return vg.grad(lambda y: vnp.sum(vnp.tanh(y) * v) * vnp.sum(x))(x * 2.0)
    got = vg.jit(outer)(X, X[::-1].copy())
    y = X * 2
    np.testing.assert_allclose(got, (1 - np.tanh(y) ** 2) * X[::-1] * X.sum(), rtol=1e-12)
    # and differentiated through: the closed-over x and v are the outer function's inputs
    g = vg.grad(lambda x, v: vnp.sum(outer(x, v) ** 2), argnums=(0, 1))(X, X[::-1].copy())
    vg.check_grads(lambda x, v: vnp.sum(outer(x, v) ** 2), [X, X[::-1].copy()],
                   argnums=(0, 1))
    assert g[0].shape == X.shape


def test_three_levels_of_nesting():
    f = lambda x: vnp.sum(vnp.sin(x) * x ** 2)
    third = vg.grad(lambda x: vnp.sum(vg.grad(lambda y: vnp.sum(vg.grad(f)(y) ** 2))(x)))(X)
    # d/dx sum_i d/dx_i sum_j g_j(x)^2 with g = f'(x) elementwise: 2 (g'' g + g'^2)
    g1 = np.sin(X) * 2 * X + X ** 2 * np.cos(X)
    g2 = 2 * np.sin(X) + 4 * X * np.cos(X) - X ** 2 * np.sin(X)
    g3 = 6 * np.cos(X) - 6 * X * np.sin(X) - X ** 2 * np.cos(X)
    np.testing.assert_allclose(third, 2 * (g3 * g1 + g2 * g2), rtol=1e-10)


def test_gradients_in_a_loop_batch():
    """grad called per sample inside a loop: the inlined graphs batch like any other code,
    so the graph does not grow with the trip count."""
    def f(x):
        return vnp.sum(vnp.tanh(x) ** 2)

    def per_sample(xs):
        return vnp.sum(vnp.stack([vg.grad(f)(xs[i]) for i in range(xs.shape[0])]) ** 2)
    sizes = []
    for n in (3, 9):
        xs = rng(n).standard_normal((n, 4))
        e, _ = vg.grad(per_sample).entry(xs)
        sizes.append(e.counts["simplify"])
        vg.check_grads(per_sample, [xs])
        assert e.counts["traced"] > n  # one inlined gradient per sample was traced
    assert sizes[0] == sizes[1]


def test_jacobian_is_one_batched_computation():
    """The rows of a Jacobian are one batched VJP (JVP): the graph does not grow with n."""
    def f(x):
        return vnp.tanh(x * x[::-1]) * vnp.sum(x)
    for jac in (vg.jacrev, vg.jacfwd):
        counts = []
        for n in (4, 40):
            x = rng(n).standard_normal(n)
            e, _ = jac(f).entry(x)
            counts.append(len(e.stages["final"].eqns))
            np.testing.assert_allclose(jac(f)(x), fd_jacobian(
                lambda x: np.tanh(x * x[::-1]) * np.sum(x), x), rtol=1e-6, atol=1e-8)
        assert counts[0] == counts[1]


def test_jvp_graph_is_the_size_of_a_jvp():
    """Forward mode by transposing the VJP leaves no backward pass behind: the compiled JVP
    of a chain of unary functions has one tangent operation per primal one (plus the
    forward)."""
    def f(x):
        return vnp.exp(vnp.tanh(vnp.sin(x)))
    e, _ = api._build(api.fun_cache(f), (("jvp",),), (X,), {},
                      lambda c: linear_maps._compile_jvp(f, c))
    names = [q.prim.name for q in e.stages["final"].eqns]
    assert names.count("sin") == 1 and names.count("cos") == 1
    assert len(names) <= 9, names


def test_nested_calls_reuse_the_staged_graph():
    traces = []

    def f(x):
        traces.append(1)
        return vnp.sum(x ** 3)
    g = vg.grad(f)
    vg.jit(lambda x: g(x) * 2)(X)
    vg.jit(lambda x: g(x) * 3)(X)
    assert len(traces) == 1


# --------------------------------------------------------------------- vjp once

def test_vjp_compiles_once_and_runs_the_backward_only_in_vjp_fn():
    traces = []

    def f(x, w):
        traces.append(1)
        return vnp.tanh(x @ w)
    for k in range(3):
        out, vjp_fn = vg.vjp(f, A + k, W)
        np.testing.assert_allclose(out, np.tanh((A + k) @ W), rtol=1e-12)
        ct = np.ones((3, 3))
        gx, gw = vjp_fn(ct)
        d = (1 - np.tanh((A + k) @ W) ** 2) * ct
        np.testing.assert_allclose(gx, d @ W.T, rtol=1e-12)
        np.testing.assert_allclose(gw, (A + k).T @ d, rtol=1e-12)
    assert len(traces) == 1
    e, _ = api._build(api.fun_cache(f), (("vjp", False), "numpy"), (A, W), {}, None)
    fwd, bwd = e.stages["forward"], e.stages["backward"]
    assert not any(q.prim is P.einsum and q.out.aval.shape == A.shape for q in fwd.eqns)
    assert all(v not in {q.out for q in fwd.eqns} for v in bwd.inputs[len(bwd.inputs) - 1:])


def test_vjp_inside_a_trace():
    def f(x):
        out, vjp_fn = vg.vjp(lambda y: vnp.sin(y) * y, x)
        (g,) = vjp_fn(vnp.cos(x))
        return vnp.sum(g * out)
    vg.check_grads(f, [X])
    want = np.sum((np.cos(X) * X + np.sin(X)) * np.cos(X) * np.sin(X) * X)
    np.testing.assert_allclose(vg.jit(f)(X), want, rtol=1e-12)


# -------------------------------------------------------------------------- JAX

def test_against_jax(jax):
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def fv(x, w):
        return vnp.sum(vnp.tanh(x @ w) ** 2) + vnp.sum(vnp.exp(-x * x))

    def fj(x, w):
        return jnp.sum(jnp.tanh(x @ w) ** 2) + jnp.sum(jnp.exp(-x * x))
    got = vg.hessian(fv, (0, 1))(A, W)  # all four blocks
    want = jax.jit(jax.hessian(fj, (0, 1)))(A, W)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(got[i][j], want[i][j], rtol=1e-9, atol=1e-11)
    tx = rng(1).standard_normal(A.shape)
    got = vg.jvp(fv, (A, W), (tx, np.zeros_like(W)))
    want = jax.jit(lambda a, w, t: jax.jvp(fj, (a, w), (t, np.zeros_like(W))))(A, W, tx)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)


# --------------------------------------------------------- random programs (hypothesis)

@settings(max_examples=int(os.environ.get("VECGRAD_EXAMPLES_2ND", "12")), deadline=None)
@given(loop_programs())
def test_random_programs_hvp_matches_differences_of_grad(p):
    """Random loop programs (tests/test_batch.py): the Hessian-vector product (forward over
    reverse, through the batched and differentiated graph) against central differences of
    the gradient, and reverse over reverse against the same."""
    f = build(p)
    a, b, M = program_inputs()
    v = rng(9).standard_normal(a.shape)
    g = vg.grad(f)
    eps = 1e-5
    fd = (g(a + eps * v, b, M) - g(a - eps * v, b, M)) / (2 * eps)
    hv = vg.hvp(f, (a, b, M), (v, np.zeros_like(b), np.zeros_like(M)))
    np.testing.assert_allclose(hv, fd, rtol=1e-4, atol=1e-6)
    rr = vg.grad(lambda a: vnp.sum(g(a, b, M) * v))(a)
    np.testing.assert_allclose(rr, hv, rtol=1e-8, atol=1e-10)


def test_a_nested_function_cannot_write_into_the_enclosing_functions_arrays():
    def outer(x):
        buf = vnp.zeros(5)

        def inner(y):
            buf[0] = vnp.sum(y)
            return y * 2.0
        vg.jit(inner)(x)
        return buf
    with pytest.raises(vg.TraceError, match="return the value instead"):
        vg.jit(outer)(X)


def test_closures_see_the_enclosing_values_at_call_time():
    def outer(x):
        buf = x * 1.0
        f = vg.grad(lambda y: vnp.sum(y * buf))
        g1 = f(x)
        buf = buf + 1.0  # rebinding after the call: the first result keeps the old value
        return g1 + f(x) * 0.0 + vg.grad(lambda y: vnp.sum(y * buf))(x)
    np.testing.assert_allclose(vg.jit(outer)(X), X + (X + 1.0), rtol=1e-12)


def test_linearize_and_jvp_inside_a_trace():
    def f(x):
        return vnp.sin(x) * x

    def outer(x, t):
        y, f_jvp = vg.linearize(f, x)
        return y + f_jvp(t) + vg.jvp(f, (x,), (t * 2.0,))[1]
    t = R.standard_normal(X.shape)
    d = (np.cos(X) * X + np.sin(X)) * t
    np.testing.assert_allclose(vg.jit(outer)(X, t), np.sin(X) * X + 3 * d, rtol=1e-12)
    vg.check_grads(lambda x, t: vnp.sum(outer(x, t) ** 2), [X, t], argnums=(0, 1))


def test_reverse_over_reverse_of_a_repeated_accumulation():
    """A buffer accumulated at one position (a recurrence the scans pass rolls into a loop):
    the gradient of the gradient left a loop with nothing live, which must vanish."""
    p = {"n": (2, 2), "pi": [0, 1], "pj": [0, 1], "swap": False, "qj": [0, 1],
         "kernel": "cos", "out": "buffer", "wi": [0, 0], "wj": [0, 0], "rows": 1, "add": True,
         "softmax": False, "first": False, "scan": False, "rowmap": False, "fd": False}
    f = build(p)
    a, b, M = program_inputs()
    v = rng(9).standard_normal(a.shape)
    g = vg.grad(f)
    fd = (g(a + 1e-5 * v, b, M) - g(a - 1e-5 * v, b, M)) / 2e-5
    rr = vg.grad(lambda a: vnp.sum(g(a, b, M) * v))(a)
    np.testing.assert_allclose(rr, fd, rtol=1e-5, atol=1e-8)


def test_seed_hessians_small_against_differences_of_the_gradient():
    """Full Hessians of seeds 001 (in the bias) and 002 (in the first layer's weights)."""
    W, bias, xs, H, wt = S.seed001_inputs(T=3, batch=2, n_in=3, n_out=2, D=2, dtype=np.float64)
    params, ts = S.seed002_inputs(n=4, sizes=(1, 5, 3, 1))
    cases = [(lambda b: S.seed001_loss(W, b, xs, H, wt), bias),
             (lambda w: S.mapall([(w, params[0][1])] + params[1:], ts), params[0][0])]
    for f, x0 in cases:
        hess = vg.hessian(f)(x0)
        g = vg.grad(f)
        fd = fd_jacobian(g, x0, eps=1e-5)
        np.testing.assert_allclose(hess, fd, rtol=1e-5, atol=1e-7)
        n = x0.size
        np.testing.assert_allclose(hess.reshape(n, n), hess.reshape(n, n).T, rtol=1e-9,
                                   atol=1e-12)
