"""The roll stage and writes that are no buffer's next version (batch/scans `_carries_buffer`).
A step that writes into an array it makes (np.ones or np.zeros per step, the zeros a nested
gradient's scalar reads scatter into) or a copy of a table writes into an array nobody
carries: a pure step, like a stack, which the roll stage rolls before batching wherever its
gate opens (a path of nonlinear operations from step to step that avoids the writes). A step
that carries a buffer (h[t] = tanh(h[t - 1])) is left to batching and the scans pass, as
before; so is a step whose every path runs through its writes (the gate's paths stop at
writes), which batching splits into scalars. The steps also read constants every iteration
shares (tables made per step): none keeps a step from rolling.
Rolled equals unrolled (values and gradients) equals NumPy running the loop and central
differences; the compiled graph does not grow with the steps."""
from __future__ import annotations

import numpy as np
import pytest
from test_roll_gate import searched, through_everything, traced
from test_scans import check, prims

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.batch import scans as S

DT = 0.05
TABLE = np.array([[2.0, 2.0], [2.0, -1.0], [-1.5, 2.0]])  # (a coordinate repeated)
GAINS = np.array([0.5, 1.0, 0.5, 1.0])


def fresh_zeros(w, s0, steps):
    """A pendulum whose next state is written into np.zeros(2) made at every step."""
    s = s0
    for _ in range(steps):
        n = np.zeros(2)
        n[0] = s[0] + DT * s[1]
        n[1] = s[1] - DT * w * np.sin(s[0])
        s = n
    return s[0] ** 2 + s[1]


def fresh_empty_three(w, s0, steps):
    """Three components written into np.empty(3), one through tanh, one added in place."""
    s = s0
    for _ in range(steps):
        n = np.empty(3)
        n[0] = np.tanh(w * s[1]) + 0.1 * s[0]
        n[1] = 0.9 * s[2]
        n[2] = s[0]
        n[2] += 0.2 * np.cos(s[1])
        s = n
    return np.sum(s ** 2)


def table_copy_written(w, h0, steps):
    """A global table copied into np.ones per step, written at one entry, then read whole."""
    h = h0
    for _ in range(steps):
        g = np.ones(4)
        g[1:] = GAINS[1:]
        g[0] = np.tanh(w * h[0])
        h = np.tanh(g * h + 0.1)
    return np.sum(h)


def shift_in(w, h0, steps):
    """The last entry shifted into the first through np.zeros made per step."""
    h = h0
    for _ in range(steps):
        z = np.zeros(h.shape[0])
        z[0] = h[-1]
        h = np.tanh(w * h + z)
    return np.sum(h ** 2)


def mixed_state(w, s0, steps):
    """A state written into np.zeros(2), averaged with tanh of the old one."""
    s = s0
    for _ in range(steps):
        n = np.zeros(2)
        n[0] = s[0] + DT * s[1]
        n[1] = s[1] - DT * w * np.sin(s[0])
        s = 0.5 * n + 0.5 * np.tanh(s)
    return s[0] ** 2 + s[1]


def slice_writes(w, y0, steps):
    """A state vector assembled by two slice writes into zeros of its shape."""
    y = y0
    for _ in range(steps):
        n = np.zeros_like(y)
        n[:2] = y[:2] + DT * y[2:]
        n[2:] = y[2:] - DT * w * np.sin(y[:2])
        y = n
    return np.sum(y[:2] * y[2:])


def potential(q, x):
    return sum(qi / vnp.sqrt((c[0] - x[0]) ** 2 + (c[1] - x[1]) ** 2) for qi, c in zip(q, TABLE))


force = vg.grad(potential, argnums=1)


def nested_scalar_reads(q, y0, steps):
    """Midpoint steps pushed by a nested gradient whose potential reads x[0], x[1] and a
    table's entries (its backward scatters into zeros)."""
    def d(y):
        return vnp.concatenate([y[2:], -force(q, y[:2])])
    y = y0
    for _ in range(steps):
        y = y + DT * d(y + 0.5 * DT * d(y))
    return vnp.sum(y[:2] * y[2:])


def nested_scalar_reads_np(q, y0, steps):
    def d(y):
        e = TABLE - y[:2]
        return np.concatenate([y[2:], -np.sum((q / np.sum(e * e, axis=1) ** 1.5)[:, None] * e,
                                              axis=0)])
    y = np.array(y0, float)
    for _ in range(steps):
        y = y + DT * d(y + 0.5 * DT * d(y))
    return np.sum(y[:2] * y[2:])


def tables_per_step(w, h0, steps):
    """Tables made at every step: np.linspace, np.eye, a list made an array."""
    h = h0
    n = h0.shape[0]
    for _ in range(steps):
        m = np.array([1.0 if k % 2 else 0.5 for k in range(n)])
        h = np.tanh((w * np.eye(n) + 0.1) @ (m * h) + 0.2 * np.linspace(-1.0, 1.0, n))
    return np.sum(h ** 2)


def _inputs(name, steps, seed):
    r = np.random.default_rng(seed)
    w = np.float64(0.8 + 0.4 * r.random())
    if name == "nested_scalar_reads":
        return r.uniform(0.5, 1.0, 3), np.array([0.0, 0.5, 0.2, 0.1]) + 0.1 * r.random(4), steps
    if name in ("fresh_zeros", "mixed_state"):
        return w, r.standard_normal(2), steps
    if name == "fresh_empty_three":
        return w, 0.5 * r.standard_normal(3), steps
    if name == "slice_writes":
        return w, np.array([1.0, 0.2, 0.0, 0.3]) + 0.1 * r.standard_normal(4), steps
    return w, r.standard_normal(4), steps


ROLLED_FIRST = {f.__name__: f for f in (table_copy_written, shift_in, mixed_state,
                                         nested_scalar_reads, tables_per_step)}
PROGRAMS = {**ROLLED_FIRST, **{f.__name__: f for f in (fresh_zeros, fresh_empty_three,
                                                        slice_writes)}}
REFS = {"nested_scalar_reads": nested_scalar_reads_np}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("seed", [0, 1])
def test_steps_writing_new_arrays_roll(name, seed):
    f = PROGRAMS[name]
    args = _inputs(name, 40, seed)
    ref = REFS.get(name, f)  # (NumPy runs the loop itself where it can)
    check(f, args, argnums=(0, 1), ref=ref)  # values, gradients: unrolled, differences
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f, argnums=(0, 1)).entry(*args)
    assert "loop" in prims(e.stages["final"])
    # (before batching where a path avoids the writes; the others by scans, after it)
    assert ("loop" in prims(e.stages["roll"])) == (name in ROLLED_FIRST)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_rolled_graph_does_not_grow_with_the_steps(name):
    def size(steps):
        with vg.config(keep_stages=True):
            e, _ = vg.grad(PROGRAMS[name], argnums=(0, 1)).entry(*_inputs(name, steps, 2))
        return len(e.stages["final"].eqns), len(e.stages["traced"].eqns)
    (short, t_short), (long, t_long) = size(40), size(120)
    assert t_long > 2.5 * t_short  # (teeth: the trace grows with the steps)
    assert long <= short + 4


def carried_buffer(x, w):
    """h[t] from h[t - 1] in one buffer: the step carries the buffer."""
    h = np.zeros(x.shape[0])
    h[0] = x[0]
    for t in range(1, x.shape[0]):
        h[t] = np.tanh(w * h[t - 1]) + np.sin(x[t])
    return np.sum(h ** 2)


def carried_buffer_rows(X, w):
    """A buffer of rows, each from the one before through tanh, written twice per step."""
    H = np.zeros(X.shape)
    H[0] = X[0]
    for t in range(1, X.shape[0]):
        H[t] = np.tanh(w * H[t - 1])
        H[t] += X[t]
    return np.sum(H ** 2)


@pytest.mark.parametrize("f,shape", [(carried_buffer, (40,)), (carried_buffer_rows, (40, 3))])
def test_a_step_that_carries_a_buffer_is_left_to_batching(f, shape):
    r = np.random.default_rng(4)
    args = (r.standard_normal(shape), np.float64(0.9))
    check(f, args, argnums=(0, 1))
    g = traced(f, args, (0, 1))
    assert S._nonlinear_depth(g) < S.MIN_CHAIN  # (the gate: a buffer's chain opens none)
    assert searched(g)[0] == 0  # (and the search run without it keeps no region)
    # (teeth: through the buffer's versions, a chain that would pass the gate)
    assert through_everything(g, S._NONLINEAR) >= S.MIN_CHAIN
