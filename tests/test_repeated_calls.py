"""A step that calls one function several times, the calls nested on one line (the midpoint
rule `y + h * f(y + h / 2 * f(y))`, a three-stage predictor, RK4's stages on one line): every
label of the step stands for one equation of each call, and nothing in the operands tells the
calls apart, so numbered by instance the second call read two iterations back and the trace
stayed unrolled (885 traced -> 2,086 final equations for a 40-step orbit). recur deals each
label's instances round-robin into one label per call; the roll stage then rolls the steps
before batching. Rolled equals unrolled (values and gradients) equals NumPy running the loop
and central differences; the compiled graph does not grow with the number of steps."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_scans import prims, unrolled

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.pytree import flatten

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from patterns.variants_gradbench28 import (  # (an orbit and a three-stage predictor)
    midpoint_orbit,
    midpoint_orbit_ref,
    three_stage_predictor,
    three_stage_predictor_ref,
)

H = 0.05


def same_coefficient(w, y0, steps):
    """Both calls scaled by the same step: no constant tells them apart either."""
    def f(y):
        return np.tanh(w * y[::-1]) - 0.3 * y
    y = y0
    for _ in range(steps):
        y = y + H * f(y + H * f(y))
    return np.sum(y ** 2)


def rk4_one_line(w, y0, steps):
    """RK4, its four stages written on one line: four calls of a shifting derivative."""
    def f(y):
        return np.concatenate([y[1:], [-w * np.sin(y[0])]])
    y = y0
    for _ in range(steps):
        k1 = f(y); k2 = f(y + H / 2 * k1); k3 = f(y + H / 2 * k2); k4 = f(y + H * k3)
        y = y + H / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(y ** 2)


def forced(w, y0, steps):
    """A per-step input read by both calls."""
    u = np.cos(0.1 * np.arange(steps))

    def f(y, uk):
        return -w * y + np.tanh(y[0]) * uk
    y = y0
    for k in range(steps):
        y = y + H * f(y + 0.5 * H * f(y, u[k]), u[k])
    return np.sum(y)


def scalar_state(w, y0, steps):
    """A scalar state (an element of the input)."""
    def f(y):
        return -w * np.sin(y)
    y = y0[0]
    for _ in range(steps):
        y = y + H * f(y + 0.5 * H * f(y))
    return y ** 2 + y0[1]


def composed(w, y0, steps):
    """Two functions, each called twice, composed."""
    def f(y):
        return np.tanh(w * y)

    def g(y):
        return np.cos(y) * y
    y = y0
    for _ in range(steps):
        y = y + H * g(f(y + 0.5 * H * g(f(y))))
    return np.sum(y)


def euler_first(w, y0, steps):
    """An Euler first step, midpoint steps after it (the first iteration differs)."""
    def f(y):
        return np.tanh(w * y[::-1]) - y
    y = y0
    for k in range(steps):
        y = y + H * f(y) if k == 0 else y + H * f(y + 0.5 * H * f(y))
    return np.sum(y * y0)


def potential(x):
    return 1 / vnp.sqrt(vnp.sum((x - np.array([3.0, 1.0])) ** 2)) + 0.1 * vnp.sum(x ** 4)


grad_potential = vg.grad(potential)


def nested_gradient_midpoint(w, y0, steps):
    """GradBench's particle with the midpoint rule: the force a nested gradient, twice."""
    def deriv(y):
        return vnp.concatenate([y[2:], -w * grad_potential(y[:2])])
    y = y0
    for _ in range(steps):
        y = y + H * deriv(y + 0.5 * H * deriv(y))
    return y[0] * y[1] + vnp.sum(y[2:] ** 2)


def nested_gradient_midpoint_np(w, y0, steps):
    def deriv(y):
        d = y[:2] - np.array([3.0, 1.0])
        g = -d / np.sum(d * d) ** 1.5 + 0.4 * y[:2] ** 3
        return np.concatenate([y[2:], -w * g])
    y = np.array(y0, float)
    for _ in range(steps):
        y = y + H * deriv(y + 0.5 * H * deriv(y))
    return y[0] * y[1] + np.sum(y[2:] ** 2)


CASES = {f.__name__: (f, f) for f in (same_coefficient, rk4_one_line, forced, scalar_state,
                                      composed, euler_first)}
CASES["orbit_midpoint"] = (midpoint_orbit, midpoint_orbit_ref)
CASES["three_stages"] = (three_stage_predictor, three_stage_predictor_ref)
CASES["nested_gradient_midpoint"] = (nested_gradient_midpoint, nested_gradient_midpoint_np)
NAMES = list(CASES)
# (the roll stage's gate does not search this trace: scans rolls it after batching, where the
# same labels apply; 1,768 traced -> 3,531 final equations before, 47 after)
AFTER_BATCHING = {"nested_gradient_midpoint"}


def _case(name, steps, seed):
    r = np.random.default_rng(seed)
    f, ref = CASES[name]
    y0 = np.array([1.0, 0.0, 0.0, 1.0]) + 0.05 * r.standard_normal(4)
    return f, (np.float64(0.9 + 0.2 * r.random()), y0, steps), ref


def _entry(f, args):
    with vg.config(keep_stages=True):
        return vg.grad(f, argnums=(0, 1)).entry(*args)[0]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_repeated_calls_roll_and_match(name, seed):
    f, args, ref = _case(name, 40, seed)
    val0, grads0 = unrolled(f, args, (0, 1))
    val, grads = vg.value_and_grad(f, argnums=(0, 1))(*args)
    np.testing.assert_allclose(val, ref(*args), rtol=1e-10)
    np.testing.assert_allclose(val, val0, rtol=1e-10)
    assert len(grads0) == len(flatten(grads)[0]) == 2
    for a, b in zip(flatten(grads)[0], grads0):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    vg.check_grads(f, args, argnums=(0, 1), rtol=1e-6, atol=1e-8, n_dirs=2)
    e = _entry(f, args)
    stage = "scans" if name in AFTER_BATCHING else "roll"
    assert "loop" in prims(e.stages[stage])
    assert "loop" in prims(e.stages["final"])


@pytest.mark.parametrize("name", NAMES)
def test_the_rolled_graph_does_not_grow_with_the_steps(name):
    def size(steps):
        f, args, _ = _case(name, steps, 3)
        e = _entry(f, args)
        return len(e.stages["final"].eqns), len(e.stages["traced"].eqns)
    (short, t_short), (long, t_long) = size(40), size(120)
    assert t_long > 2.5 * t_short  # (teeth: the trace grows with the steps)
    assert long <= short + 4


def test_a_jit_of_the_midpoint_loop_matches_numpy():
    f, args, ref = _case("orbit_midpoint", 60, 5)
    jitted = vg.jit(f, static_argnums=2)
    np.testing.assert_allclose(jitted(*args), ref(*args), rtol=1e-10)
    with vg.config(keep_stages=True):
        e, _ = jitted.entry(*args)
    assert "loop" in prims(e.stages["final"])
    assert len(e.stages["final"].eqns) < len(e.stages["traced"].eqns) // 10


def test_calls_that_differ_in_a_step_are_not_dealt_into_copies():
    """Two different functions on one line, each called once per step: the labels already
    tell them apart, and the step rolls as one iteration per step, as before."""
    def f(w, y0, steps):
        y = y0
        for _ in range(steps):
            y = y + H * np.tanh(w * (y + 0.5 * H * np.sin(y)))
        return np.sum(y)
    args = (np.float64(0.8), np.array([0.3, -0.2, 0.1]), 40)
    e = _entry(f, args)
    loops = [x for x in e.stages["roll"].eqns if x.prim.name == "loop"]
    assert len(loops) == 1 and loops[0].params["length"] >= 38
    val, _ = vg.value_and_grad(f, argnums=(0, 1))(*args)
    np.testing.assert_allclose(val, f(*args), rtol=1e-10)


def test_a_split_tried_again_deals_fresh_labels():
    """`_periodic` on a component whose split was tried before and put back (the same labels
    again in a later round) deals each copy a label of its own again: labels made for one
    split are never handed to another."""
    from vecgrad.api import trace_graph
    from vecgrad.batch import recur as R
    f, args, _ = _case("same_coefficient", 40, 0)
    g = trace_graph(f, args)
    labels = R._Labels(g)
    comp = max(R._components(g, labels, list(range(len(g.eqns)))), key=lambda c: len(c[0]))
    insts = comp[1]
    before = list(labels.lab)
    assert R._periodic(g, insts, labels, [], 10 ** 9)[1] == 10 ** 9  # (nothing covers more)
    assert labels.lab == before  # (put back)
    found, covered = R._periodic(g, insts, labels, [], 0)
    assert covered >= 0.9 * sum(len(v) for v in insts.values())
    assert max(r.length for r in found) >= 38
    dealt = {labels.lab[i] for v in insts.values() for i in v if labels.lab[i] != before[i]}
    assert len(dealt) == 2 * len(insts)  # (two copies of each label, each its own)


@pytest.mark.parametrize("name", ["orbit_midpoint", "same_coefficient", "rk4_one_line"])
def test_long_runs_roll_too(name):
    """At 900 steps and more no numbering of the undealt labels fit (their instances alternate
    between the calls, and so between rank differences): the deal was not tried and nothing
    rolled (62,406 equations at 1,200 steps of the orbit). A component whose labels are all
    seen equally often is dealt whether or not a numbering fit."""
    def size(steps):
        f, args, _ = _case(name, steps, 3)
        return len(_entry(f, args).stages["final"].eqns)
    assert size(1200) <= size(40) + 4
