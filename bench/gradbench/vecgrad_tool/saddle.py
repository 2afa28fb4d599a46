"""saddle: min over x of max over y of f(x, y) = |x|^2 - |y|^2, by nested gradient descent
(evals/saddle).

The inner argmax and the outer argmin are GradBench's gradient descent (gd.py), whose loops
branch on values and so run in Python. Their gradients are vecgrad's, in forward mode (`vg.jvp`
along each basis vector) or reverse mode (`vg.grad`): the first letter of the variant is the
outer mode, the second the inner. The outer gradient of max_y f(x, y) is taken at the inner
optimum y*(x) (Danskin's theorem: d/dx max_y f = df/dx at y*), not through the iterations of
the inner loop, which vecgrad cannot trace (its trip count depends on the values).
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .gd import argmax, argmin


def f(x, y):
    return (x[0] * x[0] + x[1] * x[1]) - (y[0] * y[0] + y[1] * y[1])


f_jit = vg.jit(f)
grad_x, grad_y = vg.grad(f, argnums=0), vg.grad(f, argnums=1)
BASIS = (np.array([1.0, 0.0]), np.array([0.0, 1.0]))
ZERO = np.zeros(2)


def fwd_x(x, y):
    return np.array([vg.jvp(f, (x, y), (e, ZERO))[1] for e in BASIS])


def fwd_y(x, y):
    return np.array([vg.jvp(f, (x, y), (ZERO, e))[1] for e in BASIS])


GRADS = {"r": (grad_x, grad_y), "f": (fwd_x, fwd_y)}


def saddle(start, outer, inner):
    gx = GRADS[outer][0]
    gy = GRADS[inner][1]

    def inner_argmax(x):
        return argmax(lambda y: f_jit(x, y), lambda y: gy(x, y), start)

    def outer_objective(x):
        return f_jit(x, inner_argmax(x))

    def outer_gradient(x):
        return gx(x, inner_argmax(x))

    x = argmin(outer_objective, outer_gradient, start)
    y = argmax(lambda y: f_jit(x, y), lambda y: GRADS[outer][1](x, y), start)
    return np.concatenate([x, y])


def _prepare(variant):
    def prepare(input):
        start = np.asarray(input["start"], dtype=np.float64)
        return (lambda: saddle(start, variant[0], variant[1])), (lambda v: v.tolist())
    return prepare


FUNCTIONS = {v: _prepare(v) for v in ("rr", "ff", "fr", "rf")}
_ = vnp  # traced code may use the vecgrad namespace; f needs only arithmetic
