"""ode: fourth-order Runge-Kutta with s steps on y_0' = x_0, y_i' = x_i y_{i-1} (evals/ode).

The gradient is that of the last component of y(2) with respect to x.
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def ode_fun(x, y):
    z = vnp.empty_like(x)
    z[0] = x[0]
    z[1:] = x[1:] * y[:-1]
    return z


def runge_kutta(x, s):
    tf = 2.0
    h = tf / s
    y = vnp.zeros_like(x)
    for _ in range(s):
        k1 = ode_fun(x, y)
        k2 = ode_fun(x, y + h * k1 / 2)
        k3 = ode_fun(x, y + h * k2 / 2)
        k4 = ode_fun(x, y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return y


def last(x, s):
    return runge_kutta(x, s)[-1]


primal = vg.jit(runge_kutta)
gradient = vg.grad(last)


def _prepare(fn):
    def prepare(input):
        x = np.asarray(input["x"], dtype=np.float64)
        s = int(input["s"])
        return (lambda: fn(x, s)), (lambda y: y.tolist())
    return prepare


FUNCTIONS = {"primal": _prepare(primal), "gradient": _prepare(gradient)}


def explain_args(function, input):
    """The gradient's function and arguments, for `vg.explain` (bench/gradbench/run.py)."""
    return last, (np.asarray(input["x"], dtype=np.float64), int(input["s"])), 0
