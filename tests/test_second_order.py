"""Second derivatives of every differentiable primitive in the spec list: the VJP of each VJP.

VJP rules emit IR, so a backward graph can itself be differentiated (grad of grad, Hessians,
and forward mode, which is reverse mode transposed: see vecgrad.autodiff). That needs every
primitive a VJP rule emits to have a correct VJP. For each spec, the backward graph
`v(x, w) = J(x)^T w` is differentiated with respect to x and w, and the result is checked
against float64 central differences of v in random directions.
"""
from __future__ import annotations

import numpy as np
import pytest
from spec_lib import Spec
from test_primitives import _cases, _is_diff, one_eqn_graph

from vecgrad.autodiff import jvp_graph, vjp_graph
from vecgrad.backends import compile_graph
from vecgrad.ir import typecheck

SKIP: set[tuple[str, str]] = set()  # (name, label) of specs whose second order is not exact


def _second(s: Spec) -> bool:
    return _is_diff(s) and (s.name, s.label) not in SKIP


def _rand(r: np.random.Generator, like: np.ndarray) -> np.ndarray:
    """Random values of `like`'s shape and dtype (complex ones with a random imaginary part)."""
    x = r.standard_normal(np.shape(like))
    if np.iscomplexobj(like):
        x = x + 1j * r.standard_normal(np.shape(like))
    return x.astype(np.asarray(like).dtype)


def _pair(a: np.ndarray, b: np.ndarray) -> float:
    """JAX's pairing of cotangents with tangents: Re(sum(a * b)), no conjugation."""
    return float(np.real(np.sum(a * b)))


@pytest.mark.parametrize("spec,shapes", _cases(_second))
def test_vjp_of_vjp_matches_central_differences(spec: Spec, shapes: tuple):
    r = np.random.default_rng(7)
    args = spec.make(r, shapes)
    params = spec.params_for(shapes)
    wrt = spec.diff_inputs(args)
    g = one_eqn_graph(spec.prim, args, params)
    out = np.asarray(spec.prim.impl(*args, **params))
    w = _rand(r, out)
    back = vjp_graph(g, wrt)  # inputs: args, w; outputs: y, then J^T w per wrt input
    back = back.replace(outputs=back.outputs[1:])
    v = compile_graph(back).fn
    us = [_rand(r, np.zeros(o.aval.shape, o.aval.dtype)) for o in back.outputs]
    diff = list(wrt) + [len(args)]  # second derivatives in x, and the (linear) one in w
    gg = typecheck(vjp_graph(back, diff))
    cts = compile_graph(gg).fn(*args, w, *us)[len(back.outputs):]
    xs = list(args) + [w]

    def f(ys: list) -> float:
        return sum(_pair(u, o) for u, o in zip(us, v(*ys)))
    for _ in range(2):
        dirs = {i: _rand(r, xs[i]) for i in diff}
        shifted = [[x + s * spec.eps * dirs[i] if i in dirs else x for i, x in enumerate(xs)]
                   for s in (1, -1)]
        fd = (f(shifted[0]) - f(shifted[1])) / (2 * spec.eps)
        analytic = sum(_pair(ct, dirs[i]) for i, ct in zip(diff, cts))
        assert analytic == pytest.approx(fd, rel=max(spec.tol, 1e-5), abs=1e-7)


@pytest.mark.parametrize("spec,shapes", _cases(_second))
def test_jvp_matches_central_differences(spec: Spec, shapes: tuple):
    """Forward mode (the transposed VJP) of each primitive: J t against (f(x+et)-f(x-et))/2e."""
    r = np.random.default_rng(8)
    args = spec.make(r, shapes)
    params = spec.params_for(shapes)
    wrt = spec.diff_inputs(args)
    gj = typecheck(jvp_graph(one_eqn_graph(spec.prim, args, params), wrt))
    ts = [_rand(r, args[i]) for i in wrt]
    got = compile_graph(gj).fn(*args, *ts)[1]
    shifted = [[a + s * spec.eps * ts[wrt.index(i)] if i in wrt else a
                for i, a in enumerate(args)] for s in (1, -1)]
    hi = [np.asarray(spec.prim.impl(*x, **params)) for x in shifted]
    hi = [y.astype(np.complex128 if np.iscomplexobj(y) else np.float64) for y in hi]
    fd = (hi[0] - hi[1]) / (2 * spec.eps)
    np.testing.assert_allclose(got, fd, rtol=max(spec.tol, 1e-5), atol=1e-7)


# ---------------------------------------------------------- exact at the special points


def test_hessian_of_prod_at_zeros_is_exact():
    """H_ij = prod_{k != i, j} x_k off the diagonal, 0 on it, with zero, one or two zeros."""
    import vecgrad as vg
    import vecgrad.numpy as vnp
    for x in ([2.0, 3.0, 5.0, 7.0], [2.0, 0.0, 5.0, 7.0], [0.0, 3.0, 0.0, 7.0],
              [0.0, 0.0, 0.0, 7.0]):
        x = np.array(x)
        want = np.array([[0.0 if i == j else np.prod(np.delete(x, [i, j]))
                          for j in range(4)] for i in range(4)])
        np.testing.assert_allclose(vg.hessian(lambda x: vnp.prod(x))(x), want)
        np.testing.assert_allclose(vg.jacfwd(vg.grad(lambda x: vnp.prod(x)))(x), want)


def test_hessian_of_cumprod_and_sinc_at_zeros():
    import vecgrad as vg
    import vecgrad.numpy as vnp
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    w = np.array([1.0, -2.0, 0.5, 3.0, 1.5])
    f = lambda x: np.sum(np.cumprod(x) * w)  # a polynomial: its Hessian by hand
    want = np.zeros((5, 5))
    for i in range(5):
        for j in range(5):
            if i != j:
                want[i, j] = sum(w[k] * np.prod(np.delete(x[:k + 1], [i, j]))
                                 for k in range(max(i, j), 5))
    np.testing.assert_allclose(vg.hessian(lambda x: vnp.sum(vnp.cumprod(x) * w))(x), want)
    assert f(x) == pytest.approx(float(vg.jit(lambda x: vnp.sum(vnp.cumprod(x) * w))(x)))
    h = vg.hessian(lambda x: vnp.sum(vnp.sinc(x)))(np.array([0.0, 1.0]))
    np.testing.assert_allclose(np.diag(h), [-np.pi ** 2 / 3, 2.0], rtol=1e-12)
