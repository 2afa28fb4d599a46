"""Recurrences whose step assembles a vector from scalars of its carry (a force from a position's
components, a state's derivative `stack([omega, -sin(theta)])`, a nested `vg.grad` of a
potential, whose inlined gradient concatenates its components): the roll stage rolls them
before batching, as it does a carry through `tanh(x[0])`. A stack or concatenate is a new
array, not a buffer's next version, so neither the gate's path nor a kept step stops at it.
A per-step value that one step reads several times by one operation (a norm divided into each
component, a distance read by both tangents of a nested jvp) is per-step data to recur's
labels, not an invariant read by every step.
Rolled equals unrolled (values and gradients) equals NumPy running the loop and central
differences; the compiled graph does not grow with the number of steps."""
from __future__ import annotations

import numpy as np
import pytest
from test_roll_gate import gates
from test_scans import prims, unrolled

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.pytree import flatten

DT = 0.05


def coulomb(w, x):
    """Two charges, one moved by w: the potential is the sum of 1 / distance."""
    return sum(1 / vnp.sqrt((cx - x[0]) ** 2 + (cy - x[1]) ** 2)
               for cx, cy in ((3.0, 3.0 - w), (3.0, -1.0)))


grad_coulomb = vg.grad(coulomb, argnums=1)


def charged_particle(w, x0, steps):
    """Euler steps pushed by minus a nested gradient (GradBench's particle, shortened)."""
    x, v = x0, vnp.array([0.3, 0.0])
    for _ in range(steps):
        a = -grad_coulomb(w, x)
        x = x + DT * v
        v = v + DT * a
    return x[0] * x[1] + np.sum(v ** 2)


def coulomb_grad_np(w, x):
    """The gradient of `coulomb` in x, by hand: sum of (c - x) / |c - x|^3."""
    d = np.array([(3.0 - x[0], 3.0 - w - x[1]), (3.0 - x[0], -1.0 - x[1])])
    return np.sum(d / np.sum(d * d, axis=1, keepdims=True) ** 1.5, axis=0)


def charged_particle_np(w, x0, steps):
    x, v = np.array(x0, float), np.array([0.3, 0.0])
    for _ in range(steps):
        a = -coulomb_grad_np(w, x)
        x = x + DT * v
        v = v + DT * a
    return x[0] * x[1] + np.sum(v ** 2)


def stacked_force(w, x0, steps):
    """The same force written out: stack the components, divide by r^3."""
    x, v = x0, np.zeros(2)
    for _ in range(steps):
        f = 0.0
        for cx, cy in ((3.0, 3.0 - w), (3.0, -1.0)):
            dx, dy = cx - x[0], cy - x[1]
            f = f + np.stack([dx, dy]) / np.sqrt(dx * dx + dy * dy) ** 3
        x = x + DT * v
        v = v + DT * f
    return np.sum(x ** 2) + v[0]


def pendulum(g, s0, steps):
    """A state vector (angle, velocity) whose derivative is stacked from its scalars."""
    s = s0
    for _ in range(steps):
        s = s + DT * np.stack([s[1], -g * np.sin(s[0]) - 0.1 * s[1]])
    return s[0] ** 2 + s[1]


def orbit(k, y0, steps):
    """Two-body motion, position and velocity in one vector: the derivative concatenates the
    velocity with the acceleration."""
    y = y0
    for _ in range(steps):
        p, q = y[:2], y[2:]
        y = y + DT * np.concatenate([q, -k * p / np.sqrt(np.sum(p * p)) ** 3])
    return np.sum(y[:2] * y[2:])


def particle_from_rest(w, k, steps):
    """GradBench's particle as its tool writes it: the start a constant, so the first step's
    reads are constants and only the control and the strength are inputs."""
    x, v = vnp.array([0.0, 1.5]), vnp.array([0.3, 0.0])
    for _ in range(steps):
        a = -k * grad_coulomb(w, x)
        x = x + DT * v
        v = v + DT * a
    return x[0] * x[0]


def particle_from_rest_np(w, k, steps):
    x, v = np.array([0.0, 1.5]), np.array([0.3, 0.0])
    for _ in range(steps):
        a = -k * coulomb_grad_np(w, x)
        x = x + DT * v
        v = v + DT * a
    return x[0] * x[0]


def neg_log_density(q):
    return 0.5 * vnp.sum(q * q) + vnp.sum(vnp.log(vnp.cosh(q - 1.0)))


grad_nld = vg.grad(neg_log_density)


def leapfrog(eps, q0, steps):
    """Hamiltonian Monte Carlo's leapfrog, its force a nested gradient of a vector potential."""
    q, p = q0, 0.5 * q0
    for _ in range(steps):
        p = p - 0.5 * eps * grad_nld(q)
        q = q + eps * p
        p = p - 0.5 * eps * grad_nld(q)
    return neg_log_density(q) + 0.5 * np.sum(p * p)


def leapfrog_np(eps, q0, steps):
    def gnld(q):
        return q + np.tanh(q - 1.0)
    q, p = np.array(q0, float), 0.5 * np.array(q0, float)
    for _ in range(steps):
        p = p - 0.5 * eps * gnld(q)
        q = q + eps * p
        p = p - 0.5 * eps * gnld(q)
    return 0.5 * np.sum(q * q) + np.sum(np.log(np.cosh(q - 1.0))) + 0.5 * np.sum(p * p)


def rotor(a, x0, steps):
    """A vector turned by an angle that depends on its own first entry."""
    x = x0
    for _ in range(steps):
        c, s = np.cos(a * x[0]), np.sin(a * x[0])
        x = 0.98 * np.concatenate([[c * x[0] - s * x[1]], [s * x[0] + c * x[1]], x[2:] * c])
    return np.sum(x ** 3)


E2 = (np.array([1.0, 0.0]), np.array([0.0, 1.0]))


def jvp_particle(w, k, steps):
    """particle's `ff` inner derivative: the force stacked from jvps along the basis vectors,
    two copies of one tangent computation per step that differ only in their seed."""
    x, v = vnp.array([0.0, 1.5]), vnp.array([0.3, 0.0])
    for _ in range(steps):
        f = vnp.stack([vg.jvp(coulomb, (w, x), (vnp.zeros_like(w), e))[1] for e in E2])
        x = x + DT * v
        v = v - DT * k * f
    return x[0] ** 2 + v[1]


def jvp_particle_np(w, k, steps):
    x, v = np.array([0.0, 1.5]), np.array([0.3, 0.0])
    for _ in range(steps):
        f = coulomb_grad_np(w, x)
        x = x + DT * v
        v = v - DT * k * f
    return x[0] ** 2 + v[1]


def normalized_components(w, x0, steps):
    """A per-step scalar (the norm) read by one line's division once per component."""
    x = x0
    for _ in range(steps):
        r = np.sqrt(np.sum(x * x))
        x = x + DT * np.stack([np.tanh(w * x[i] / r) for i in range(3)])
    return np.sum(x ** 2)


def shared_gain(w, h0, steps):
    """A per-step gain read by one product once per term of a Python sum."""
    h = h0
    for _ in range(steps):
        s = np.tanh(np.sum(h) * w)
        h = 0.9 * h + 0.1 * sum(h[k] * s for k in range(3))
    return np.sum(h)


def _case(name, steps, seed):
    f, args, ref = _raw_case(name, steps, np.random.default_rng(seed))
    # (a float64 is a leaf, differentiated; a Python float would be a constant)
    return f, tuple(np.float64(a) if isinstance(a, float) else a for a in args), ref


def _raw_case(name, steps, r):
    if name == "charged_particle":
        return charged_particle, (0.2 + 0.1 * r.random(), np.array([0.0, 1.5]) + 0.1 *
                                  r.random(2), steps), charged_particle_np
    if name == "stacked_force":
        return stacked_force, (0.1 * r.random(), np.array([0.2, 1.2]) + 0.1 * r.random(2),
                               steps), stacked_force
    if name == "pendulum":
        return pendulum, (9.81, r.standard_normal(2), steps), pendulum
    if name == "orbit":
        return orbit, (1.0 + 0.1 * r.random(), np.array([1.0, 0.0, 0.0, 1.0]) +
                       0.05 * r.standard_normal(4), steps), orbit
    if name == "particle_from_rest":
        return particle_from_rest, (0.2 + 0.1 * r.random(), 0.9 + 0.2 * r.random(), steps), \
            particle_from_rest_np
    if name == "leapfrog":
        return leapfrog, (0.1, r.standard_normal(3), steps), leapfrog_np
    if name == "jvp_particle":
        return jvp_particle, (0.2 + 0.1 * r.random(), 0.9 + 0.2 * r.random(), steps), \
            jvp_particle_np
    if name == "normalized_components":
        return normalized_components, (0.7, r.standard_normal(3), steps), normalized_components
    if name == "shared_gain":
        return shared_gain, (0.5, r.standard_normal(3), steps), shared_gain
    return rotor, (0.3, 0.5 * r.standard_normal(4), steps), rotor


NAMES = ["charged_particle", "particle_from_rest", "stacked_force", "pendulum", "orbit",
         "leapfrog", "rotor", "jvp_particle", "normalized_components", "shared_gain"]


def _grad(f):
    return vg.grad(f, argnums=(0, 1))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_assembled_carries_roll_and_match(name, seed):
    f, args, ref = _case(name, 40, seed)  # (a sqrt every other step: 20 on the chain)
    val0, grads0 = unrolled(f, args, (0, 1))
    val, grads = vg.value_and_grad(f, argnums=(0, 1))(*args)
    np.testing.assert_allclose(val, ref(*args), rtol=1e-10)
    np.testing.assert_allclose(val, val0, rtol=1e-10)
    assert len(grads0) == len(flatten(grads)[0]) == 2
    for a, b in zip(flatten(grads)[0], grads0):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    vg.check_grads(f, args, argnums=(0, 1), rtol=1e-6, atol=1e-8, n_dirs=2)
    with vg.config(keep_stages=True):
        e, _ = _grad(f).entry(*args)
    assert gates(e.stages["traced"])[0]
    assert "loop" in prims(e.stages["roll"])  # (rolled before batching)
    assert "loop" in prims(e.stages["final"])


@pytest.mark.parametrize("name", NAMES)
def test_the_rolled_graph_does_not_grow_with_the_steps(name):
    def size(steps):
        f, args, _ = _case(name, steps, 3)
        with vg.config(keep_stages=True):
            e, _ = _grad(f).entry(*args)
        return len(e.stages["final"].eqns), len(e.stages["traced"].eqns)
    (short, t_short), (long, t_long) = size(40), size(120)
    assert t_long > 2.5 * t_short  # (teeth: the trace grows with the steps)
    assert long <= short + 4


def test_a_jit_of_the_nested_gradient_loop_matches_numpy():
    f, args, ref = _case("particle_from_rest", 60, 5)
    with vg.config(keep_stages=True):
        e, _ = vg.jit(f, static_argnums=2).entry(*args)
    np.testing.assert_allclose(vg.jit(f, static_argnums=2)(*args), ref(*args), rtol=1e-10)
    assert "loop" in prims(e.stages["final"])
