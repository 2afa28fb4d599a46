"""Property tests: random recurrences, linear and nonlinear, written the ways users write them
(rebinding a variable, writing a buffer, appending to a list; forward and reversed; every
step used or only the last), each checked against the same program run eagerly in NumPy,
against its unrolled trace (values and gradients), and by central differences.

VECGRAD_EXAMPLES sets the number of examples per test (CI: a few dozen; run thousands once
before closing a change to the scans pass).
"""
from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scans import prims, unrolled

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.pytree import flatten

EXAMPLES = int(os.environ.get("VECGRAD_EXAMPLES", "25"))

# form -> (step(c, x, a), the scan it must become)
LINEAR = {
    "add": (lambda c, x, a: c + x, "cumsum"),
    "sub": (lambda c, x, a: c - x, "cumsum"),
    "scale": (lambda c, x, a: 0.8 * c + x, "affine_scan"),
    "gain": (lambda c, x, a: a * c + x, "affine_scan"),  # a: an input (shared or per step)
    "scaled_sum": (lambda c, x, a: (c + x) * a, "affine_scan"),
    "mul": (lambda c, x, a: c * x, "cumprod"),
    "max": (lambda c, x, a: vnp.maximum(c, x), "cummax"),
    "min": (lambda c, x, a: vnp.minimum(x, c), "cummin"),
}


def program(step, T: int, style: str, reverse: bool, use: str, init: str, per_step_a: bool):
    """A loop running `step` T times over x (and a), written in `style`."""
    def f(x, a, c0):
        order = range(T - 1, -1, -1) if reverse else range(T)
        at = (lambda t: a[t]) if per_step_a else (lambda t: a)
        c = {"zero": vnp.zeros(x.shape[1:]), "input": c0}[init]
        if style == "buffer":
            buf = vnp.zeros((T + 1,) + x.shape[1:])
            prev = T if reverse else 0
            buf[prev] = c
            for t in order:
                i = t if reverse else t + 1
                buf[i] = step(buf[prev], x[t], at(t))
                prev = i
            states = buf[:T] if reverse else buf[1:]
        else:
            states = []
            for t in order:
                c = step(c, x[t], at(t))
                states.append(c)
            states = vnp.stack(states[::-1] if reverse else states)
        w = vnp.arange(1.0, T + 1).reshape((T,) + (1,) * (x.ndim - 1))
        if use == "final":
            return vnp.sum(states[0 if reverse else T - 1] ** 2)
        return vnp.sum(vnp.sin(states) * w)
    return f


def args_for(form: str, T: int, shape: tuple, per_step_a: bool, seed: int) -> tuple:
    r = np.random.default_rng(seed)
    x = r.uniform(0.6, 1.4, (T,) + shape) * r.choice([-1, 1], (T,) + shape) \
        if form == "mul" else r.standard_normal((T,) + shape)
    a = r.uniform(-1.2, 1.2, ((T,) if per_step_a else ()) + shape)
    return x, a, r.standard_normal(shape)


def check_program(f, args) -> list[str]:
    want = f(*[np.asarray(x) for x in args])  # the same code, run eagerly by NumPy
    val0, grads0 = unrolled(f, args, (0, 1, 2))
    val, grads = vg.value_and_grad(f, argnums=(0, 1, 2))(*args)
    np.testing.assert_allclose(val, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(val, val0, rtol=1e-9, atol=1e-9)
    for a, b in zip(flatten(grads)[0], grads0):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-9)
    vg.check_grads(f, args, argnums=(0, 1, 2), rtol=1e-5, atol=1e-7, n_dirs=2)
    e, _ = vg.jit(f).entry(*args)
    found = prims(e.stages["simplify"])
    if "affine_scan" in prims(e.stages["scans"]) and "affine_scan" not in found and \
            "loop" not in found:
        # constant coefficients: simplify writes the scan in closed form (a cumsum, or a
        # weighted sum where only the last state is read)
        found.append("affine_scan")
    return found


@settings(max_examples=EXAMPLES, deadline=None)
@given(form=st.sampled_from(sorted(LINEAR)), T=st.integers(4, 11),
       shape=st.sampled_from([(), (3,), (2, 2)]), style=st.sampled_from(["rebind", "buffer"]),
       reverse=st.booleans(), use=st.sampled_from(["all", "final"]),
       init=st.sampled_from(["zero", "input"]), per_step_a=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_random_linear_recurrences_become_scans(form, T, shape, style, reverse, use, init,
                                                 per_step_a, seed):
    step, scan = LINEAR[form]
    if form == "mul" and init == "zero":
        init = "input"  # (a product from zero stays zero: no recurrence left to find)
    f = program(step, T, style, reverse, use, init, per_step_a)
    found = check_program(f, args_for(form, T, shape, per_step_a, seed))
    if form in ("add", "sub") and use == "final":
        # only the last state is read: it is a sum of the inputs (batching's add chains), no
        # recurrence is left to scan
        assert "loop" not in found and ("reduce_sum" in found or "einsum" in found
                                        or scan in found), found
        return
    total = {"cumsum": "reduce_sum", "cumprod": "reduce_prod", "cummax": "reduce_max",
             "cummin": "reduce_min"}.get(scan)
    if use == "final" and total:  # only the end of the running total is read: the total
        assert "loop" not in found and (total in found or scan in found), found
        return
    assert scan in found and "loop" not in found, found


def nonlinear(act: str, T: int, reverse: bool, gated: bool, loss: bool, lag: int = 0):
    fn = {"tanh": vnp.tanh, "sin": vnp.sin, "sigmoid": vg.nn.sigmoid}[act]

    def f(x, W, h0):
        h, c = h0, vnp.zeros(h0.shape)
        total = 0.0
        hs = []
        for t in (range(T - 1, -1, -1) if reverse else range(T)):
            z = W @ h + x[t]
            if lag and len(hs) >= lag:  # a state further back, read in the same operation
                z = z * (1.0 + 0.3 * vnp.tanh(hs[-lag]))
            if gated:  # a second carry, updated from the first
                c = c * vg.nn.sigmoid(z) + vnp.tanh(z) * 0.5
                h = fn(z + c)
            else:
                h = fn(z)
            hs.append(h)
            if loss:
                total = total + vnp.sum(h ** 2)
        return total + vnp.sum(h * vnp.arange(1.0, h.shape[0] + 1))
    return f


@settings(max_examples=EXAMPLES, deadline=None)
@given(act=st.sampled_from(["tanh", "sin", "sigmoid"]), T=st.integers(4, 10),
       H=st.integers(1, 4), reverse=st.booleans(), gated=st.booleans(), loss=st.booleans(),
       lag=st.sampled_from([0, 0, 2, 3]), seed=st.integers(0, 2 ** 16))
def test_random_nonlinear_recurrences_become_loops(act, T, H, reverse, gated, loss, lag, seed):
    r = np.random.default_rng(seed)
    args = (r.standard_normal((T, H)), 0.6 * r.standard_normal((H, H)) / np.sqrt(H),
            r.standard_normal(H))
    found = check_program(nonlinear(act, T, reverse, gated, loss, lag), args)
    if not lag:  # (reading further back may stay unrolled; it must stay correct)
        assert "loop" in found, found


def coupled(M: np.ndarray, T: int, style: str, reverse: bool, use: str):
    """Two or three carries updated together by the constant matrix M (fully coupled: every
    new value reads every old one), the input added to the first, written out term by term
    as users do: one tuple assignment on one line, or one line per new value."""
    m = [[float(v) for v in row] for row in M]
    k = len(m)

    def f(x, c0):
        order = range(T - 1, -1, -1) if reverse else range(T)
        a, b, c = c0[0], c0[1], c0[k - 1]
        total = 0.0
        for t in order:
            if k == 2 and style == "tuple":
                a, b = m[0][0] * a + m[0][1] * b + x[t], m[1][0] * a + m[1][1] * b
            elif k == 2:
                na = m[0][0] * a + m[0][1] * b + x[t]
                nb = m[1][0] * a + m[1][1] * b
                a, b = na, nb
            else:
                na = m[0][0] * a + m[0][1] * b + m[0][2] * c + x[t]
                nb = m[1][0] * a + m[1][1] * b + m[1][2] * c
                nc = m[2][0] * a + m[2][1] * b + m[2][2] * c
                a, b, c = na, nb, nc
            if use == "all":
                total = total + vnp.sum(vnp.sin(a) * b)
        return total + vnp.sum(a ** 2 + b)
    return f


@settings(max_examples=EXAMPLES, deadline=None)
@given(k=st.integers(2, 3), T=st.integers(4, 11), shape=st.sampled_from([(), (3,)]),
       style=st.sampled_from(["tuple", "lines"]), reverse=st.booleans(),
       use=st.sampled_from(["all", "final"]), seed=st.integers(0, 2 ** 16))
def test_random_coupled_linear_carries_become_scans(k, T, shape, style, reverse, use, seed):
    """Several carries updated together linearly are one linear_scan (or, where the matrix
    happens to be triangular, scans one after another): no sequential loop is left, also where batching merged the
    carries' products into a matrix-vector product of one stacked carry (read element by
    element: batch/scalarize.py)."""
    r = np.random.default_rng(seed)
    if k == 3:  # (three carries of vectors stack into more than scalarize.MAX_ELEMS)
        shape = ()
    M = r.uniform(0.1, 0.5, (k, k)) * r.choice([-1, 1], (k, k))
    f = coupled(M, T, style, reverse, use)
    args = (r.standard_normal((T,) + shape), r.standard_normal((k,) + shape))
    want = f(*args)
    val0, grads0 = unrolled(f, args, (0, 1))
    val, grads = vg.value_and_grad(f, argnums=(0, 1))(*args)
    np.testing.assert_allclose(val, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(val, val0, rtol=1e-9, atol=1e-9)
    for a, b in zip(flatten(grads)[0], grads0):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-9)
    vg.check_grads(f, args, argnums=(0, 1), rtol=1e-5, atol=1e-7, n_dirs=2)
    e, _ = vg.jit(f).entry(*args)
    found = prims(e.stages["scans"])
    assert "loop" not in found, found
