"""Steps that call one function several times, the calls nested on one line (issue 13): the
midpoint rule `y + h * f(y + h / 2 * f(y))` for a two-body orbit whose derivative concatenates
velocity and acceleration, GradBench's particle integrated by the midpoint rule (the force a
nested `vg.grad` of the potential, twice per step), and a three-stage predictor. Every label of
such a step stands for one equation of each call; recur deals them round-robin into one label
per call, so the steps roll before batching. The references are the NumPy loops."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern

H = 0.02
CHARGES = np.array([[3.0, 3.0], [3.0, -1.0], [-2.0, 1.0]])


def midpoint_orbit(k, y0, steps):
    """Item 6: a two-body orbit by the midpoint rule, y += h f(y + h/2 f(y)) with f(y) =
    concatenate([q, -k p / |p|^3]) for y = (p, q); the final p . q."""
    def deriv(y):
        p, q = y[:2], y[2:]
        return vnp.concatenate([q, -k * p / vnp.sqrt(vnp.sum(p * p)) ** 3])
    y = y0
    for _ in range(steps):
        y = y + H * deriv(y + 0.5 * H * deriv(y))
    return vnp.sum(y[:2] * y[2:])


def midpoint_orbit_ref(k, y0, steps):
    def deriv(y):
        p, q = y[:2], y[2:]
        return np.concatenate([q, -k * p / np.sqrt(np.sum(p * p)) ** 3])
    y = y0
    for _ in range(steps):
        y = y + H * deriv(y + 0.5 * H * deriv(y))
    return np.sum(y[:2] * y[2:])


def _orbit_inputs(rng, steps):
    return np.float64(1.0 + 0.1 * rng.random()), np.array([1.0, 0.0, 0.0, 1.0]) + \
        0.05 * rng.standard_normal(4), steps


def _potential(q, x):
    return sum(qi / vnp.sqrt((c[0] - x[0]) ** 2 + (c[1] - x[1]) ** 2)
               for qi, c in zip(q, CHARGES))


_force = vg.grad(_potential, argnums=1)


def nested_force_midpoint(q, y0, steps):
    """Item 6: a charged particle, state (x, v), by the midpoint rule; the acceleration is
    minus a nested vg.grad of the potential of three charges of strengths q, taken twice per
    step; the final x . v."""
    def deriv(y):
        return vnp.concatenate([y[2:], -_force(q, y[:2])])
    y = y0
    for _ in range(steps):
        y = y + H * deriv(y + 0.5 * H * deriv(y))
    return vnp.sum(y[:2] * y[2:])


def nested_force_midpoint_ref(q, y0, steps):
    def deriv(y):
        d = CHARGES - y[:2]
        return np.concatenate([y[2:], -np.sum((q / np.sum(d * d, axis=1) ** 1.5)[:, None] * d,
                                               axis=0)])
    y = y0
    for _ in range(steps):
        y = y + H * deriv(y + 0.5 * H * deriv(y))
    return np.sum(y[:2] * y[2:])


def _charge_inputs(rng, steps):
    return rng.uniform(0.5, 1.0, 3), np.array([0.0, 1.0, 0.2, 0.1]) + \
        0.1 * rng.random(4), steps


def three_stage_predictor(w, y0, steps):
    """Item 6: y += h f(y + h/2 f(y + h/3 f(y))) with f(y) = 0.5 sin(w y) - 0.2 y, three
    nested calls per step; the final sum of y^3."""
    def f(y):
        return 0.5 * vnp.sin(w * y) - 0.2 * y
    y = y0
    for _ in range(steps):
        y = y + H * f(y + H / 2 * f(y + H / 3 * f(y)))
    return vnp.sum(y ** 3)


def three_stage_predictor_ref(w, y0, steps):
    def f(y):
        return 0.5 * np.sin(w * y) - 0.2 * y
    y = y0
    for _ in range(steps):
        y = y + H * f(y + H / 2 * f(y + H / 3 * f(y)))
    return np.sum(y ** 3)


def _predictor_inputs(rng, steps):
    return rng.uniform(0.5, 1.5, 8), rng.standard_normal(8), steps


PATTERNS = [
    Pattern("midpoint_orbit", 6, midpoint_orbit, midpoint_orbit_ref, _orbit_inputs,
            {"small": {"steps": 40}, "default": {"steps": 400}}, (0, 1), target="rolled"),
    Pattern("nested_force_midpoint", 6, nested_force_midpoint, nested_force_midpoint_ref,
            _charge_inputs, {"small": {"steps": 40}, "default": {"steps": 400}}, (0, 1),
            target="rolled"),
    Pattern("three_stage_predictor", 6, three_stage_predictor, three_stage_predictor_ref,
            _predictor_inputs, {"small": {"steps": 40}, "default": {"steps": 400}}, (0, 1),
            target="rolled"),
]
