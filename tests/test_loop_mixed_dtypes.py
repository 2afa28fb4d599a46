"""Rolled loops whose steps compute integer values that the gradient reads (a sort's or an
argmax's permutation per step): the gradient's loop cannot be split into a core loop whose
outputs mix dtypes (a loop packs one dtype), so it stays whole. Found by the calls fuzzer
(seed 440163: `o[i] = np.sort(W @ o[i-1])[::-1]` raised a ShapeError with no user line)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check, rng
from test_scans import prims

import vecgrad as vg

W = rng(3).standard_normal((5, 5)) / 2.5
V = rng(4).standard_normal((5, 5)) / 2.5


def sort_desc(x):
    o = np.zeros((14, 5))
    o[0] = x
    for i in range(1, 14):
        o[i] = np.sort(W @ o[i - 1])[::-1]
    return o.sum()


def sort_asc_tanh(x):
    h = x
    total = 0.0
    for _ in range(12):
        h = np.sort(np.tanh(W @ h + 0.1))
        total = total + h[-1] * h[0]
    return total


def argsort_gather(x):
    h = x
    for _ in range(10):
        h = np.tanh(V @ h)[np.argsort(h)]
    return np.sum(h ** 2)


def argmax_pick(x):
    h, acc = x, 0.0
    for _ in range(11):
        h = np.sin(W @ h) + 0.2 * h
        acc = acc + h[np.argmax(h)] * 0.5
    return acc + h.sum()


def sorted_rows_buffer(x):
    buf = np.zeros((9, 5))
    buf[0] = x
    for t in range(1, 9):
        buf[t] = np.sort(np.cos(V @ buf[t - 1]) * buf[t - 1])
    return np.sum(buf[1:] * buf[:-1])


def counted_positives(x):
    h, count = x, 0
    for _ in range(10):
        h = np.sort(W @ h)[::-1] + 0.05
        count = count + np.sum(h > 0)  # (an integer carry beside the state)
    return h.sum() * (count + 1)


def topk_state(x):
    h = x
    for _ in range(8):
        idx = np.argsort(-np.abs(h))[:3]
        h = np.tanh(W @ h) + 0.1 * np.sum(h[idx])
    return h @ h


PROGRAMS = [sort_desc, sort_asc_tanh, argsort_gather, argmax_pick, sorted_rows_buffer,
            counted_positives, topk_state]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", [0, 1])
def test_value_and_gradient(f, seed):
    x = rng(10 + seed).standard_normal(5)
    assert np.allclose(vg.jit(f)(x), f(x), rtol=1e-10, atol=1e-12)
    central_diff_check(f, (x,))


def _sort_desc(steps):
    def f(x):
        o = np.zeros((steps, 5))
        o[0] = x
        for i in range(1, steps):
            o[i] = np.sort(W @ o[i - 1])[::-1]
        return o.sum()
    return f


def test_the_fuzzers_program_keeps_its_loop():
    x = rng(7).standard_normal(5)
    sizes = []
    for steps in (14, 40):
        f = _sort_desc(steps)
        g = vg.grad(f)
        eps = 1e-6
        num = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(5)])
        np.testing.assert_allclose(g(x), num, rtol=1e-6, atol=1e-8)
        e, _ = g.entry(x)
        assert "loop" in prims(e.stages["final"])
        sizes.append(len(e.stages["final"].eqns))
    assert sizes[0] == sizes[1]  # (a loop in the gradient too: flat in the steps)
