"""The documented capture rule (README, sharp bits): a traced function sees globals and
closures as they were while it was traced; a cache hit replays that trace."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

X = np.ones(3)
K = 2.0
C = np.array([1.0, 2.0, 3.0])


def _scaled(x):
    return vnp.sum(x * K)


def _with_array(x):
    return vnp.sum(x * C)


def test_global_scalar_is_captured_at_trace_time():
    global K
    K = 2.0
    g = vg.grad(_scaled)
    np.testing.assert_array_equal(g(X), 2.0)
    K = 3.0
    try:
        np.testing.assert_array_equal(g(X), 2.0)  # a cache hit replays the trace
        np.testing.assert_array_equal(vg.grad(_scaled)(X), 2.0)  # the cache is the function's
        assert vg.jit(_scaled)(X) == 9.0  # a transformation not used before traces anew
    finally:
        K = 2.0


def test_global_array_is_copied_at_trace_time():
    f = vg.jit(_with_array)
    assert f(X) == 6.0
    C[0] = 100.0
    try:
        assert f(X) == 6.0
    finally:
        C[0] = 1.0


def test_static_argument_attributes_are_read_at_trace_time():
    class Config:
        scale = 1.0
    cfg = Config()
    f = vg.jit(lambda x, c: vnp.sum(x) * c.scale)
    assert f(X, cfg) == 3.0
    cfg.scale = 5.0
    assert f(X, cfg) == 3.0  # the same object: the same key
    assert f(X, Config()) == 3.0 * Config.scale  # a new object: a new trace


def test_python_side_effects_happen_once_while_tracing():
    calls = []

    def f(x):
        calls.append(1)
        return vnp.sum(x)
    jf = vg.jit(f)
    for _ in range(3):
        jf(X)
    assert len(calls) == 1
