"""particle: steer a charged particle through the origin (evals/particle), nested AD.

Euler integration of a particle pushed by two charges, whose force is minus the gradient of
their potential (the inner derivative); gradient descent on the control w of the squared x at
which the path crosses the x axis (the outer derivative, through the whole integration). The
first letter of the variant is the outer mode, the second the inner: `r` is `vg.grad`, `f` is
`vg.jvp` along each basis vector.

The integration stops when the particle crosses the axis, so its trip count depends on w. It is
found by running the integration on concrete numbers (the same compiled inner gradient); the
traced integration then runs that many steps, so the outer derivative is taken through every
step, with the inner derivative inside it (grad of grad, or jvp of grad, ...). Each trip count
compiles once.
"""
from functools import cache

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .gd import argmin

DT = 0.1
E = (np.array([1.0, 0.0]), np.array([0.0, 1.0]))


def potential(w, x):
    """The charges sit at (10, 10 - w) and (10, 0); the potential is the sum of 1/distance."""
    charges = [(10.0, 10.0 - w), (10.0, 0.0)]
    return sum(1 / vnp.sqrt((cx - x[0]) ** 2 + (cy - x[1]) ** 2) for cx, cy in charges)


grad_potential_r = vg.grad(potential, argnums=1)


def grad_potential_f(w, x):
    return vnp.stack([vg.jvp(potential, (w, x), (vnp.zeros_like(w), e))[1] for e in E])


INNER = {"r": grad_potential_r, "f": grad_potential_f}


def crossing_steps(w, inner):
    """How many Euler steps reach y <= 0 (concrete numbers)."""
    grad_p = INNER[inner]
    x, xdot = np.array([0.0, 8.0]), np.array([0.75, 0.0])
    steps = 0
    while True:
        steps += 1
        xddot = -np.asarray(grad_p(w, x))
        x = x + DT * xdot
        if x[1] <= 0:
            return steps
        xdot = xdot + DT * xddot


def final_x_squared(w, steps, inner):
    """x(t_f)^2 after `steps` Euler steps, t_f by linear interpolation to y = 0."""
    grad_p = INNER[inner]
    x, xdot = vnp.array([0.0, 8.0]), vnp.array([0.75, 0.0])
    for step in range(steps):
        xddot = -grad_p(w, x)
        x = x + DT * xdot
        if step == steps - 1:
            x_f = x + (-x[1] / xdot[1]) * xdot
            return x_f[0] * x_f[0]
        xdot = xdot + DT * xddot
    raise ValueError("steps must be positive")


@cache
def compiled(inner, outer):
    value = vg.jit(final_x_squared)
    if outer == "r":
        deriv = vg.grad(final_x_squared)
    else:
        def deriv(w, steps, inner):
            return vg.jvp(final_x_squared, (w, steps, inner), (np.ones_like(w), 0, None))[1]
    return value, deriv


def particle(w0, outer, inner):
    value, deriv = compiled(inner, outer)
    # Gradient descent asks for the objective at w and then, once it accepts w, the gradient
    # there: the concrete integration runs once for both (within this call only).
    steps: dict[float, int] = {}

    def steps_at(w):
        if w not in steps:
            steps[w] = crossing_steps(w, inner)
        return steps[w]

    def objective(w):
        return float(value(w[0], steps_at(w[0]), inner))

    def gradient(w):
        return np.atleast_1d(deriv(w[0], steps_at(w[0]), inner))

    return argmin(objective, gradient, np.array([w0]))[0]


def _prepare(variant):
    def prepare(input):
        w0 = float(input["w"])
        return (lambda: particle(w0, variant[0], variant[1])), float
    return prepare


FUNCTIONS = {v: _prepare(v) for v in ("rr", "ff", "fr", "rf")}
