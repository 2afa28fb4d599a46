"""Size-generic numba kernels (backends/numba/generic.py): a kernel module's extents, offsets
and constants become its arguments, so that one compiled (disk-cached) module serves every
size of a program. The rewrite on hand-written sources (what becomes a parameter, what stays
a literal, how definitions and calls get the new arguments); then whole programs (an RK4 ODE
with static buffer writes, a tanh RNN, a reversed loop, a reshape of stacked rows, region
kernels without loops) at several sizes: the second and third size write no new kernel file,
and every size's values and gradients equal the NumPy backend's."""
from __future__ import annotations

import numpy as np
import pytest
from test_numba_loops import _central_differences, rk4

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.pytree import flatten

pytest.importorskip("numba")

from vecgrad.backends.numba import generic
from vecgrad.backends.numba.kernel import UNROLL

SRC = '''def k3_step(a0, a12, out_, t_):
    t1 = np.empty((1000, 7), np.float64)
    for i2 in range(1000):
        for i3 in range(7):
            t1[i2, i3] = a0[(999 + -1 * i2)] * np.float64(0.1) + np.float64(1e-05) * a12[i3]
    t4 = out_[11000 + t_ * 1000:11000 + (t_ + 1) * 1000].reshape((1000,))
    t4[17] = np.float64(2.0) * np.float64(0.5) + np.float64(-0.1) + np.float64(1e+20)
    return (t1, t4)


def k3(a0, a12, len_):
    out = np.zeros(41000, np.float64)
    for t in range(len_):
        r0, r1, = k3_step(a0, a12, out, t)
    return out
'''


def test_sizes_and_constants_become_parameters_named_by_value():
    g = generic.abstract(SRC)
    assert g.values == (1000, 7, 999, 0.1, 1e-05, 11000, 17, 1e+20, 41000)
    names = g.names()
    assert names == ["n0_", "n1_", "n2_", "f3_", "f4_", "n5_", "n6_", "f7_", "n8_"]
    s = g.source
    tail = ", ".join(names)
    assert f"def k3_step(a0, a12, out_, t_, {tail}):" in s
    assert f"def k3(a0, a12, len_, {tail}):" in s
    assert f"= k3_step(a0, a12, out, t, {tail})" in s
    # literals that stay: small ints (short innermost loops, positions), 0.5 and small whole
    # floats; a small extent of an allocation becomes a parameter
    assert "range(7)" in s and "np.float64(2.0) * np.float64(0.5)" in s and "(t_ + 1)" in s
    assert "np.empty((n0_, n1_), np.float64)" in s
    assert "np.float64(-f3_)" in s and "(n2_ + -1 * i2)" in s  # (signs stay operators)
    assert "a12[i3]" in s and "range(n0_)" in s and "out_[n5_ + t_ * n0_:" in s
    assert not any(str(v) in s for v in (1000, 999, 11000, 41000, "1e-05", "1e+20", "0.1"))
    # the rewritten module runs as the original did
    env_a: dict = {"np": np}
    env_b: dict = {"np": np}
    exec(SRC, env_a)  # noqa: S102
    exec(s, env_b)  # noqa: S102
    a0, a12 = np.arange(1000.0), np.arange(7.0)
    np.testing.assert_array_equal(env_a["k3"](a0, a12, 3), env_b["k3"](a0, a12, 3, *g.values))
    assert g.comment().startswith("# n0_ = 1000, n1_ = 7, n2_ = 999, f3_ = 0.1")


def test_nothing_to_abstract_and_switched_off():
    src = "def k(a0):\n    for i in range(16):\n        a0[i] = a0[i] * np.float64(3.0)\n"
    outer = "def k(a0):\n    for i in range(4):\n        for j in range(16):\n            pass\n"
    assert generic.abstract(outer).source.startswith(
        "def k(a0, n0_):\n    for i in range(n0_):\n        for j in range(16):")
    assert UNROLL == 16
    assert generic.abstract(src) == generic.Generic(src, ())
    call = "def f(a0):\n    return g()\n\ndef g():\n    return 17\n"
    g = generic.abstract(call)
    assert g.source == "def f(a0, n0_):\n    return g(n0_)\n\ndef g(n0_):\n    return n0_\n"
    old, generic.ENABLED = generic.ENABLED, False
    try:
        assert generic.abstract(SRC) == generic.Generic(SRC, ())
    finally:
        generic.ENABLED = old


def _leaves(t) -> list[np.ndarray]:
    return [np.asarray(x) for x in flatten(t)[0]]


def tanh_rnn(x, W, h0):
    h = h0
    total = 0.0
    for t in range(x.shape[0]):
        h = vnp.tanh(W @ h * 0.9 + x[t])
        total = total + vnp.sum(h * x[t])
    return total + vnp.sum(h * h)


def reversed_decay(x, a):
    c = a
    for t in reversed(range(x.shape[0])):
        c = vnp.sin(c) * x[t] + 0.25 * c
    return vnp.sum(c * c)


def rows_reshaped(x, a):  # stacked steps read back through a reshape (region kernels)
    c = a
    ys = []
    for t in range(x.shape[0]):
        c = vnp.cos(c) * x[t] + c / 3.0
        ys.append(c)
    y = vnp.stack(ys).reshape(-1, 2)
    return vnp.sum(vnp.exp(-y[:, 0] * y[:, 1]))


FAR = np.random.default_rng(1).permutation(30)  # (positions past UNROLL: a tuple of names)


def static_far(x, a):
    h = a
    for t in range(x.shape[0]):
        h = vnp.sin(h[FAR]) * x[t] + 0.5 * h
    return vnp.sum(h * h)


def no_loop(x, w):  # a region kernel only: extents as arguments without a loop
    return vnp.sum(vnp.exp(-x * x / x.shape[0]) * w[None, :] + vnp.tanh(x) ** 2)


def _sizes(rng):
    return {
        "rk4": (rk4, 0, [(rng.uniform(0.5, 1.5, n), s) for n, s in ((40, 20), (90, 33),
                                                                      (200, 50))]),
        "tanh_rnn": (tanh_rnn, (0, 1, 2), [
            (rng.standard_normal((T, 5)), rng.standard_normal((5, 5)) / 3,
             rng.standard_normal(5)) for T in (20, 37, 64)]),
        "reversed_decay": (reversed_decay, (0, 1), [
            (rng.standard_normal((T, 30)), rng.standard_normal(30)) for T in (18, 25, 40)]),
        "rows_reshaped": (rows_reshaped, (0, 1), [
            (rng.standard_normal((T, 34)), rng.standard_normal(34)) for T in (20, 30, 44)]),
        "static_far": (static_far, (0, 1), [
            (rng.standard_normal((T, 30)), rng.standard_normal(30)) for T in (18, 25, 40)]),
        "no_loop": (no_loop, (0, 1), [
            (rng.standard_normal((n, 3)), rng.standard_normal(3)) for n in (30, 50, 70)]),
    }


@pytest.mark.parametrize("name", ["rk4", "tanh_rnn", "reversed_decay", "rows_reshaped",
                                  "static_far", "no_loop"])
def test_one_compile_serves_every_size(name, tmp_path, monkeypatch):
    monkeypatch.setenv("VECGRAD_NUMBA_CACHE", str(tmp_path))
    fn, argnums, sizes = _sizes(np.random.default_rng(7))[name]
    files: list[set[str]] = []
    for args in sizes:
        f = vg.value_and_grad(fn, argnums=argnums, backend="numba")
        got = f(*args)
        want = vg.value_and_grad(fn, argnums=argnums)(*args)
        for a, b in zip(_leaves(got), _leaves(want)):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        files.append({p.name for p in tmp_path.glob("vk_*.py")})
        assert "n0_" in f.entry(*args)[0].compiled.source  # (its sizes are arguments)
    assert files[0] and files[0] == files[1] == files[2], "a new size compiled new kernels"
    _central_differences(fn, sizes[-1], argnums, got[1])
