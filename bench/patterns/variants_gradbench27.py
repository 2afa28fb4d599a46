"""Nonlinear recurrences whose step assembles a vector from scalars of its carry (issue 13,
GradBench's particle): Euler steps of a charged particle pushed by minus a nested `vg.grad` of
its potential (whose inlined gradient concatenates its components) or by two jvps of it along
the basis vectors (both read the step's distances: per-step data, not invariants), and a damped
pendulum whose state derivative is `stack([omega, -g sin(theta)])`. Rolled before batching (the
roll stage no longer stops at a stack or concatenate); the references are the NumPy loops."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern

DT = 0.02
CHARGES = ((3.0, 3.0), (3.0, -1.0), (-2.0, 1.0))


def _potential(q, x):
    return sum(qi / vnp.sqrt((cx - x[0]) ** 2 + (cy - x[1]) ** 2)
               for qi, (cx, cy) in zip(q, CHARGES))


_force = vg.grad(_potential, argnums=1)


def nested_force_euler(q, x0, v0, steps):
    """Item 6: Euler steps x += dt v, v -= dt grad_x U(q, x), the force a nested vg.grad of
    the potential of three charges of strengths q; the final x . v."""
    x, v = x0, v0
    for _ in range(steps):
        a = -_force(q, x)
        x = x + DT * v
        v = v + DT * a
    return vnp.sum(x * v)


def nested_force_euler_ref(q, x0, v0, steps):
    c = np.array(CHARGES)
    x, v = x0, v0
    for _ in range(steps):
        d = c - x
        a = -np.sum((q / np.sum(d * d, axis=1) ** 1.5)[:, None] * d, axis=0)
        x = x + DT * v
        v = v + DT * a
    return np.sum(x * v)


def _charge_inputs(rng, steps):
    return rng.uniform(0.5, 1.0, 3), np.array([0.0, 1.0]) + 0.1 * rng.random(2), \
        np.array([0.2, 0.1]), steps


_BASIS = (np.array([1.0, 0.0]), np.array([0.0, 1.0]))


def jvp_force_euler(q, x0, v0, steps):
    """Item 6: nested_force_euler with the force stacked from two jvps of the potential along
    the basis vectors (forward-over-reverse, GradBench particle's `ff` inner derivative)."""
    x, v = x0, v0
    for _ in range(steps):
        a = -vnp.stack([vg.jvp(_potential, (q, x), (vnp.zeros_like(q), e))[1] for e in _BASIS])
        x = x + DT * v
        v = v + DT * a
    return vnp.sum(x * v)


def stacked_pendulum(p, s0, steps):
    """Item 6: a damped pendulum, state (theta, omega), s += dt * stack([omega,
    -g sin(theta) - c omega]) with (g, c) = p; the final theta^2 + omega."""
    s = s0
    for _ in range(steps):
        s = s + DT * vnp.stack([s[1], -p[0] * vnp.sin(s[0]) - p[1] * s[1]])
    return s[0] ** 2 + s[1]


def stacked_pendulum_ref(p, s0, steps):
    s = s0
    for _ in range(steps):
        s = s + DT * np.stack([s[1], -p[0] * np.sin(s[0]) - p[1] * s[1]])
    return s[0] ** 2 + s[1]


def _pendulum_inputs(rng, steps):
    return np.array([9.81, 0.1]), rng.standard_normal(2), steps


PATTERNS = [
    Pattern("nested_force_euler", 6, nested_force_euler, nested_force_euler_ref,
            _charge_inputs, {"small": {"steps": 40}, "default": {"steps": 400}}, (0, 1, 2),
            target="rolled"),
    Pattern("jvp_force_euler", 6, jvp_force_euler, nested_force_euler_ref, _charge_inputs,
            {"small": {"steps": 40}, "default": {"steps": 400}}, (0, 1, 2), target="rolled"),
    Pattern("stacked_pendulum", 6, stacked_pendulum, stacked_pendulum_ref, _pendulum_inputs,
            {"small": {"steps": 40}, "default": {"steps": 1000}}, (0, 1), target="rolled"),
]
