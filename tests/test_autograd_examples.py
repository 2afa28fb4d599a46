"""Regression tests for the bugs that HIPS autograd's examples exposed (run through
bench/autograd_suite/examples.py). Each is a small program in the example's style, in several
variants: values against NumPy/SciPy, gradients against central differences."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp

R = np.random.default_rng(0)


# -- ode_net.py: odeint's extra arguments are a pytree (a network's list of (W, b) layers) --

def _net(y, t, params):
    for W, b in params:
        out = vnp.dot(y, W) + b
        y = vnp.tanh(out)
    return out


def _net_np(y, t, params):
    for W, b in params:
        out = np.dot(y, W) + b
        y = np.tanh(out)
    return out


@pytest.mark.parametrize("container", ["list_of_tuples", "dict", "nested_with_number"])
def test_odeint_args_pytree_of_parameters(container):
    si = pytest.importorskip("scipy.integrate")
    import vecgrad.scipy.integrate as vint
    layers = [(R.standard_normal((2, 5)) * 0.5, R.standard_normal(5) * 0.1),
              (R.standard_normal((5, 2)) * 0.5, R.standard_normal(2) * 0.1)]
    if container == "list_of_tuples":
        args, rhs, rhs_np = (layers,), _net, _net_np
    elif container == "dict":
        args = ({"l0": layers[0], "l1": layers[1]},)
        rhs = lambda y, t, p: _net(y, t, [p["l0"], p["l1"]])  # noqa: E731
        rhs_np = lambda y, t, p: _net_np(y, t, [p["l0"], p["l1"]])  # noqa: E731
    else:  # a Python number next to the arrays, and a time-dependent system
        args = (layers, 0.3)
        rhs = lambda y, t, p, k: _net(y, t, p) - k * t * y  # noqa: E731
        rhs_np = lambda y, t, p, k: _net_np(y, t, p) - k * t * y  # noqa: E731
    y0, t = np.array([1.0, -0.5]), np.linspace(0.0, 1.0, 5)
    want = si.odeint(rhs_np, y0, t, args=args, rtol=1e-10, atol=1e-10)
    got = vint.odeint(rhs, y0, t, args, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    w = R.standard_normal((5, 2))

    def loss(a, y0):
        return vnp.sum(vint.odeint(rhs, y0, t, a, rtol=1e-11, atol=1e-11) * w)
    np.testing.assert_allclose(vg.jit(loss)(args, y0), np.sum(want * w), rtol=1e-6)
    vg.check_grads(loss, [args, y0], argnums=(0, 1), eps=1e-5, rtol=1e-4, atol=1e-6)
