"""Steps that fill a new array, and invariants beside a run (gradbench lane, session 30).

A recurrence whose step writes into an array it makes (np.zeros per step) is a pure step:
the roll stage rolls it before batching where a path from step to step avoids the write
(shift_in_rnn), as it does a step that stacks its state; a step whose every path runs
through its writes (fresh_state_pendulum) is rolled after batching, split into scalars. A per-sample term divided by a count made from a shared
mask and a table of ones is a loop invariant beside the samples' run: computed once, not
concatenated with the samples. The references are the NumPy loops (recurrences) and the
hand-vectorized forms."""
from __future__ import annotations

import numpy as np

from .core import Pattern, normal, presets, variant

DT = 0.02


def fresh_state_pendulum(w, s0, steps):
    """Item 6: a damped pendulum whose next state is written into np.zeros(2) each step."""
    s = s0
    for _ in range(steps):
        n = np.zeros(2)
        n[0] = s[0] + DT * s[1]
        n[1] = s[1] - DT * (w * np.sin(s[0]) + 0.1 * s[1])
        s = n
    return s[0] ** 2 + s[1]


def fresh_state_pendulum_ref(w, s0, steps):
    s = np.array(s0, float)
    for _ in range(steps):
        s = np.array([s[0] + DT * s[1], s[1] - DT * (w * np.sin(s[0]) + 0.1 * s[1])])
    return s[0] ** 2 + s[1]


def shift_in_rnn(w, h0, steps):
    """Item 6: a ring of tanh units, the last entry shifted into the first through np.zeros
    made per step (a path from step to step avoids the write: rolled before batching)."""
    h = h0
    for _ in range(steps):
        z = np.zeros(h.shape[0])
        z[0] = h[-1]
        h = np.tanh(w * h + z)
    return np.sum(h ** 2)


def shift_in_rnn_ref(w, h0, steps):
    h = np.array(h0, float)
    for _ in range(steps):
        h = np.tanh(w * h + np.concatenate([h[-1:], np.zeros(h.shape[0] - 1)]))
    return np.sum(h ** 2)


ONES = np.ones((8, 16))


def masked_count_mean(X, w):
    """Item 7: per sample, the squared sum where w > 0 over the count of a table of ones."""
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.where(w > 0, x, 0.0)) ** 2 / np.sum(np.where(w > 0, ONES, 0.0))
    return tot


def masked_count_mean_ref(X, w):
    m = w > 0
    return np.sum(np.sum(np.where(m, X, 0.0), axis=(1, 2)) ** 2) / (ONES.shape[0] * np.sum(m))


def _pendulum(rng, steps):
    return np.float64(2.0 + rng.random()), normal(rng, 2), steps


def _ring(rng, steps):
    return np.float64(0.9 + 0.1 * rng.random()), normal(rng, 8), steps


def _masked(rng, n):
    w = normal(rng, 16)
    w[0] = 1.0
    return normal(rng, n, 8, 16), w


_steps = presets({"steps": 40}, {"steps": 1000})

PATTERNS = [
    Pattern("fresh_state_pendulum", 6, fresh_state_pendulum, fresh_state_pendulum_ref,
            _pendulum, _steps, (0, 1), target="rolled"),
    Pattern("shift_in_rnn", 6, shift_in_rnn, shift_in_rnn_ref, _ring, _steps, (0, 1),
            target="rolled"),
    variant(globals(), "masked_count_mean", 7, presets({"n": 4}, {"n": 1000}), (0,), _masked),
]
