"""Running extremes written with Python's `max` / `min` (or `np.where(x > m, x, m)`) become
scans: a carry `m = max(m, x[t])` is Python's strict fold, so an equal x never wins (the
gradient goes to the earliest of equal items), a NaN x never wins and a NaN start stays.
Each program is checked against NumPy running it eagerly, against its unrolled trace (values
and gradients) and by central differences, and must compile to scans, not a loop."""
from __future__ import annotations

import builtins
import sys
from pathlib import Path

import numpy as np
import pytest
from test_scans import prims, unrolled

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.pytree import flatten

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from patterns.variants_lead26 import best_gain_builtin as max_gain
from patterns.variants_lead26 import drawdown_builtin as drawdown
from patterns.variants_lead26 import peak_gaps


def running_min_list(x, w):
    m, out = x[-1], []
    for t in range(len(x) - 1, -1, -1):  # backwards, every state kept
        m = min(m, x[t] * w)
        out.append(m)
    return np.sum(np.stack(out) * np.arange(1.0, len(x) + 1))


def carry_second(x, w):
    m, out = x[0], []
    for t in range(1, len(x)):
        m = min(x[t] * w, m)  # the carry second: an equal item and a NaN carry lose
        out.append(m)
    return np.sum(np.stack(out) * np.arange(1.0, len(x)))


def where_rows(X):
    m = X[0]
    out = []
    for t in range(1, len(X)):
        m = np.where(X[t] > m, X[t], m)  # row-wise, as Python's max per element
        out.append(m)
    return np.sum(np.stack(out) ** 2)


def clipped_peak(x, c):
    peak = c  # a traced Python number as the start
    tot = 0.0
    for t in range(len(x)):
        peak = max(peak, np.tanh(x[t]))
        tot = tot + peak * x[t]
    return tot


PROGRAMS = [(drawdown, 1), (max_gain, 1), (peak_gaps, 1), (running_min_list, 2),
            (where_rows, 1), (clipped_peak, 2)]


def _args(f, n_args, x):
    if f is where_rows:
        return (x.reshape(-1, 3),)
    return (x,) if n_args == 1 else (x, 0.7)


def eager(f, args):
    """f run by NumPy itself on plain arrays."""
    return f(*[np.asarray(a) if isinstance(a, np.ndarray) else a for a in args])


def check_program(f, args, fd=True):
    """f's value and gradients against NumPy, its unrolled trace and (with fd) central
    differences; returns the primitives of its scans stage and its grad entry."""
    argnums = tuple(range(len(args)))
    val0, grads0 = unrolled(f, args, argnums)
    val, grads = vg.value_and_grad(f, argnums=argnums)(*args)
    np.testing.assert_allclose(val, eager(f, args), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(val, val0, rtol=1e-12, atol=1e-12)
    for a, b in zip(flatten(grads)[0], grads0):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    if fd:
        vg.check_grads(f, args, argnums=argnums, rtol=1e-6, atol=1e-8)
    e, _ = vg.grad(f, argnums=argnums).entry(*args)
    return prims(e.stages["scans"]), e


@pytest.mark.parametrize("f,n_args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
@pytest.mark.parametrize("seed", [0, 1])
def test_python_running_extremes_become_scans(f, n_args, seed):
    x = np.cumsum(np.random.default_rng(seed).standard_normal(24))
    found, _ = check_program(f, _args(f, n_args, x))
    assert "loop" not in found, found
    assert "fold_extreme" in found, found
    e, _ = vg.grad(f, argnums=0).entry(*_args(f, n_args, x))  # explain's line says which
    assert any("as Python's m" in str(n) for n in e.stages["scans"].notes)


@pytest.mark.parametrize("f,n_args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_ties_send_the_gradient_where_python_does(f, n_args):
    # integer-valued steps: many equal items, the earliest of which wins
    x = np.random.default_rng(3).integers(-3, 4, 24).astype(float)
    check_program(f, _args(f, n_args, x), fd=False)


@pytest.mark.parametrize("where", [0, 5, 23])
def test_nans_are_pythons(where):
    x = np.cumsum(np.random.default_rng(4).standard_normal(24))
    x[where] = np.nan
    for f in (drawdown, max_gain, peak_gaps):
        val0, grads0 = unrolled(f, (x,), (0,))
        val, g = vg.value_and_grad(f)(x)
        np.testing.assert_allclose(val, eager(f, (x,)), rtol=1e-12, equal_nan=True)
        np.testing.assert_allclose(val, val0, rtol=1e-12, equal_nan=True)
        np.testing.assert_allclose(g, grads0[0], rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("ties", [False, True])
def test_the_carry_second_is_a_fold_with_the_latest_tie_and_exact(ties):
    # min(x, m) keeps x on ties and resets after a NaN: fold_pick (tests/test_pickfolds.py)
    r = np.random.default_rng(6)
    x = r.integers(-3, 4, 20).astype(float) if ties else r.standard_normal(20)
    found, _ = check_program(carry_second, (x, 0.7), fd=not ties)
    assert "loop" not in found and "fold_pick" in found, found


def test_a_comparison_read_elsewhere_keeps_the_loop_exact():
    def f(x):
        m, n = x[0], 0.0
        for t in range(1, len(x)):
            up = x[t] > m
            n = n + vnp.where(up, 1.0, 0.0)  # the comparison is read: not the plain fold
            m = vnp.where(up, x[t], m)
        return m * n
    x = np.random.default_rng(5).standard_normal(16)
    val0, _ = unrolled(f, (x,), (0,))
    np.testing.assert_allclose(vg.jit(f)(x), val0, rtol=1e-12)
    vg.check_grads(f, (x,), rtol=1e-6, atol=1e-8)


def test_builtins_untouched_outside():
    assert builtins.max is max and max(1, 2) == 2


def leaky_rnn(W, X):
    h = np.zeros(W.shape[0])
    tot = 0.0
    for x in X:
        z = W @ h + x
        h = np.where(z > 0, z, 0.1 * z)  # a comparison of the carry inside the step
        tot = tot + np.sum(np.tanh(h))
    return tot


def clipped_walk(x, a):
    s, out = 0.0, []
    for v in x:
        s = a * s + v
        s = np.where(s > 1.0, 1.0, np.where(s < -1.0, -1.0, s))
        out.append(s)
    return np.sum(np.stack(out) ** 2)


@pytest.mark.parametrize("f", [leaky_rnn, clipped_walk], ids=["leaky_rnn", "clipped_walk"])
def test_recurrences_through_selections_roll(f):
    # (steps holding a comparison of the carry were never rolled: one copy per step ran)
    def args(T):
        r = np.random.default_rng(T)
        return (0.4 * r.standard_normal((4, 4)), r.standard_normal((T, 4))) if f is leaky_rnn \
            else (r.standard_normal(T), 0.9)
    found, _ = check_program(f, args(20))
    assert "loop" in found, found

    def size(T):
        e, _ = vg.grad(f, argnums=(0, 1)).entry(*args(T))
        return len(e.stages["final"].eqns)
    assert size(80) == size(40)
