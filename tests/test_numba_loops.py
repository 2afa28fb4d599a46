"""Rolled loops on the numba backend (backends/numba/loop.py): a loop equation runs as one
compiled function (its step as one kernel, every step in numba) where the step compiles and
is not dominated by transcendental functions, and as the NumPy backend's loop otherwise.
Values and gradients equal the NumPy backend's to rounding, on hand-written recurrences that
reach each kind of step (buffer writes, concatenation, matrix products through np.dot, scalar
and matrix carries, several carries, reversed loops) and on random nonlinear recurrences;
gradients also against central differences."""
from __future__ import annotations

import re

import numpy as np
import pytest
from test_scans_property import nonlinear

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.pytree import flatten

pytest.importorskip("numba")


def _leaves(t) -> list[np.ndarray]:
    return [np.asarray(x) for x in flatten(t)[0]]


def _loops(f, args) -> tuple[int, int]:
    """(loop equations in the compiled gradient, those run as one numba kernel)."""
    e, _ = f.entry(*args)
    n = sum(1 for q in e.compiled.graph.eqns if q.prim.name == "loop")
    return n, len(re.findall(r"= \w+_step\(", e.compiled.source))


def _check(loss, args, argnums=0, kernels=None, rtol=1e-10):
    """value_and_grad on numba equals the NumPy backend's; `kernels`: how many loops must run
    as one kernel (None: every loop)."""
    want = vg.value_and_grad(loss, argnums=argnums)(*args)
    f = vg.value_and_grad(loss, argnums=argnums, backend="numba")
    got = f(*args)
    for a, b in zip(_leaves(got), _leaves(want)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)
    n, k = _loops(f, args)
    assert n >= 1, "the program must keep a rolled loop"
    assert k == (n if kernels is None else kernels), (n, k)
    return f


def rk4(x, s):  # GradBench's ode: buffer writes at static slices in every stage
    def fun(y):
        z = vnp.empty_like(x)
        z[0] = x[0]
        z[1:] = x[1:] * y[:-1]
        return z
    h = 2.0 / s
    y = vnp.zeros_like(x)
    for _ in range(s):
        k1 = fun(y)
        k2 = fun(y + h * k1 / 2)
        k3 = fun(y + h * k2 / 2)
        k4 = fun(y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return y[-1] + vnp.sum(y * y) * 0.01


def scalar_carry(x, a):  # a 0-d carry, read and written with a per-step input
    c = a[0]
    total = 0.0
    for t in range(x.shape[0]):
        c = vnp.sin(c) * x[t] + 0.3 * c
        total = total + c * c
    return total


def relu_rnn(x, W, h0):  # matrix carry, a product large enough for np.dot, no libm
    h = h0
    hs = []
    for t in range(x.shape[0]):
        h = vnp.maximum(W @ h + x[t], 0.1 * (W @ h + x[t]))
        hs.append(h)
    return vnp.sum(vnp.stack(hs) ** 2) * 0.01


def right_product(x, W, h0):  # h @ W: the carry on the left, a transposed read
    h = h0
    for t in range(x.shape[0]):
        h = h @ W * 0.5 + x[t] * h
    return vnp.sum(h ** 2)


def two_carries_reversed(x, a):  # two carries, the loop run backwards
    p, q = a, a * 0.5
    out = 0.0
    for t in reversed(range(x.shape[0])):
        p, q = q * vnp.cos(p) + x[t], p - 0.2 * q * q
        out = out + vnp.sum(p * q)
    return out


def rotate(x, a):  # concatenation and an add at a slice in the step
    h = a
    for t in range(x.shape[0]):
        h = vnp.concatenate([h[1:], h[:1] * x[t, :1]]) * vnp.cos(h)
        h[2:4] += x[t, 2:4] * h[0]
    return vnp.sum(h * vnp.arange(1.0, h.shape[0] + 1))


PICK, PUT = np.array([2, 0, 3, 0, 1]), np.array([4, 1])


def static_indices(x, a):  # reads and writes at static integer positions in the step
    h = a
    for t in range(x.shape[0]):
        h = vnp.sin(h[PICK]) * x[t] + 0.5 * h
        h[PUT] += x[t, :2] * h[0]
    return vnp.sum(h * vnp.arange(1.0, h.shape[0] + 1))


R = np.random.default_rng(3)
CASES = {
    "rk4": (rk4, lambda: (R.uniform(0.5, 1.5, 12), 4), 0),
    "scalar_carry": (scalar_carry, lambda: (R.standard_normal(9), R.standard_normal(2)), (0, 1)),
    "relu_rnn": (relu_rnn, lambda: (R.standard_normal((6, 24, 20)),
                                    R.standard_normal((24, 24)) / 5,
                                    R.standard_normal((24, 20))), (0, 1, 2)),
    "right_product": (right_product, lambda: (R.standard_normal((5, 20, 24)),
                                              R.standard_normal((24, 24)) / 5,
                                              R.standard_normal((20, 24))), (0, 1, 2)),
    "two_carries_reversed": (two_carries_reversed,
                             lambda: (R.standard_normal((7, 3)), R.standard_normal(3)), (0, 1)),
    "static_indices": (static_indices, lambda: (R.standard_normal((6, 5)),
                                                R.standard_normal(5)), (0, 1)),
    "rotate": (rotate, lambda: (R.standard_normal((6, 5)), R.standard_normal(5)), (0, 1)),
}


def _central_differences(loss, args, argnums, grads, eps=1e-6, n_dirs=2):
    """<grads, d> against central differences of the NumPy backend's forward (float64), so
    that the check compiles nothing more on numba."""
    f = vg.jit(loss)
    r = np.random.default_rng(0)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    grads = (grads,) if isinstance(argnums, int) else grads
    for _ in range(n_dirs):
        ds = [r.standard_normal(np.shape(args[k])) for k in nums]
        plus, minus = list(args), list(args)
        for k, d in zip(nums, ds):
            plus[k], minus[k] = args[k] + eps * d, args[k] - eps * d
        fd = (float(f(*plus)) - float(f(*minus))) / (2 * eps)
        dot = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, ds))
        assert abs(dot - fd) <= 1e-7 + 1e-5 * abs(fd), (dot, fd)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rolled_loops_equal_numpy_backend_and_central_differences(name):
    fn, make, argnums = CASES[name]
    args = make()
    f = _check(fn, args, argnums)
    _central_differences(fn, args, argnums, f(*args)[1])


@pytest.mark.parametrize("seed", range(5))
def test_random_nonlinear_recurrences_equal_numpy_backend(seed):
    r = np.random.default_rng(seed)
    T, H = int(r.integers(4, 10)), int(r.integers(1, 5))
    f = nonlinear(str(r.choice(["tanh", "sin", "sigmoid"])), T, bool(r.integers(2)),
                  bool(r.integers(2)), bool(r.integers(2)))
    args = (r.standard_normal((T, H)), 0.6 * r.standard_normal((H, H)) / np.sqrt(H),
            r.standard_normal(H))
    _check(f, args, (0, 1, 2), rtol=1e-9)


def test_float32_loops_stay_float32():
    x = R.uniform(0.5, 1.5, 12).astype(np.float32)
    f = vg.grad(rk4, backend="numba")
    got = f(x, 3)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, vg.grad(rk4)(x.astype(np.float64), 3), rtol=1e-4)


def wide_tanh(x, W, h0):  # 2,304 tanh per step: NumPy's SIMD tanh beats numba's libm
    h = h0
    for t in range(x.shape[0]):
        h = vnp.tanh(W @ h + x[t])
    return vnp.sum(h ** 2)


def running_cumsum(x, a):  # a cumulative sum in the step: no kernel for it
    h = a
    for t in range(x.shape[0]):
        h = vnp.cumsum(h * x[t]) * 0.5 + vnp.sin(h)
    return vnp.sum(h ** 2)


def test_loops_numba_would_run_slower_or_cannot_compile_stay_numpy_loops():
    from vecgrad.backends.numba.loop import why_not
    args = (R.standard_normal((4, 48, 48)), R.standard_normal((48, 48)) / 7,
            R.standard_normal((48, 48)))
    f = _check(wide_tanh, args, (0, 1, 2), kernels=1)  # (the backward loop has no tanh)
    e, _ = f.entry(*args)
    whys = [why_not(q) for q in e.compiled.graph.eqns if q.prim.name == "loop"]
    assert any(w and "2,304 `tanh`" in w for w in whys), whys
    args = (R.standard_normal((5, 4)), R.standard_normal(4))
    f = _check(running_cumsum, args, (0, 1), kernels=0)
    e, _ = f.entry(*args)
    whys = [why_not(q) for q in e.compiled.graph.eqns if q.prim.name == "loop"]
    assert all(w and "`cumsum`" in w for w in whys), whys


def test_explain_says_how_each_loop_runs():
    x = R.uniform(0.5, 1.5, 12)
    with vg.config(backend="numba"):
        text = str(vg.explain(rk4, x, 4, budget=0.01))
    assert "one numba kernel" in text, text
    args = (R.standard_normal((4, 48, 48)), R.standard_normal((48, 48)) / 7,
            R.standard_normal((48, 48)))
    with vg.config(backend="numba"):
        text = str(vg.explain(wide_tanh, *args, argnums=(0, 1, 2), budget=0.01))
    assert "NumPy's loop: per step" in text, text
    # on the default backend, a loop numba would run as one kernel says so (it stays NumPy's)
    text = str(vg.explain(rk4, x, 4, budget=0.01))
    assert "NumPy calls; backend='numba' would run them as one kernel" in text, text
    text = str(vg.explain(wide_tanh, *args, argnums=(0, 1, 2), budget=0.01))
    assert text.count("backend='numba' would") == 1, text  # (the forward has 48x48 tanh)


def test_wide_stacks_run_as_one_numpy_call():
    # a stack of many arrays (seeds/001 stacks 256) would be a loop nest per operand in a kernel
    xs = [R.standard_normal((3, 4)) for _ in range(20)]

    def loss(xs):
        return vnp.sum(vnp.tanh(vnp.stack(xs)) * vnp.stack(xs[::-1]))
    want = vg.grad(loss)(xs)
    f = vg.grad(loss, backend="numba")
    for a, b in zip(f(xs), want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    e, _ = f.entry(xs)
    kernels = e.compiled.source.split("@njit")[1:]
    assert kernels and all(k.count(" = a") < 20 for k in kernels)
