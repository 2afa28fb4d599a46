"""A read of a buffer written at many other places: the simplifier's read-of-write rule
(rewrite/layout.read_of_write) passes every write the read misses at once. One rewrite per
write looked like a rewrite cycle (64 rewrites of one equation) on a buffer written more than
64 times before the read, and the gradient raised RewriteCycleError naming no line of the
user's program (the loops fuzzer, seed 291111)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check, rng
from fuzz_loops import draw
from test_fuzz_loops import run_one

import vecgrad as vg


def rows_then_first(x):  # the cotangent buffer's rows written one by one, row 0 read
    n = x.shape[0]
    o = np.zeros((n + 1, 3))
    for i in range(n):
        o[n - i] += 0.5 * x[i]
        o[i] = np.tanh(o[n - i] + o[0])
    return np.sum(o ** 2)


def columns_and_cell(x):
    o = np.zeros((4, x.shape[0] + 2))
    for i in range(x.shape[0]):
        o[1, i + 2] = np.sin(x[i])
        o[2, i] = o[1, i + 2] * 2.0 + o[0, 0]
    return np.sum(o * o) + o[3, 1]


def interleaved_writes(x):
    o = np.zeros(3 * x.shape[0])
    acc = 0.0
    for i in range(x.shape[0]):
        o[3 * i] = x[i] ** 2
        o[3 * i + 1] = acc
        acc = acc + o[3 * i] * 0.1 + o[2]
    return np.sum(o) + acc


IX = np.array([7, 5, 8, 21, 7, 7, 1, 4, 4, 13, 0, 5, 13, 28, 22, 4, 10, 26, 22, 22])


def scattered_and_rows(x):  # (the fuzzer's shape: writes by a traced-free index array,
    n = x.shape[0]          # rows from the end, rows from the start, a fixed row read)
    o = np.zeros((n + 4, 4))
    acc = 0.0
    for i in range(n):
        o[IX[i % len(IX)] % (n + 4)] += x[i] * acc
        o[n + 3 - i] += -1.5 * x[0]
        acc += o[(i * 3 + 1) % (n + 4), 0]
        o[i + 1] = np.tanh(o[n + 3 - i])
        acc = acc + np.sum(x[i] * o[n - 2])
    return np.sum(o.sum(0) + acc)


@pytest.mark.parametrize("f", [rows_then_first, columns_and_cell, interleaved_writes,
                               scattered_and_rows],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [20, 29, 90])
def test_values_and_gradients(f, n):
    shape = {rows_then_first: (n, 3), scattered_and_rows: (n, 4)}.get(f, (n,))
    x = rng(n).standard_normal(shape) * (0.3 if f is scattered_and_rows else 1.0)
    np.testing.assert_allclose(vg.jit(f)(x), f(x), rtol=1e-10, atol=1e-12)
    central_diff_check(f, (x,))


@pytest.mark.parametrize("check", ["grad", "batched"])
def test_the_fuzzers_program(check):
    sig, status = run_one(check, draw(291111))
    assert sig is None and status == "ok", sig


def test_the_rule_passes_a_hundred_writes_in_one_rewrite():
    """x.at[w_1].set(v_1)...at[w_100].set(v_100)[r] with r apart from every w_k = x[r]."""
    from test_passes import assert_equivalent, graph, prims

    import vecgrad.numpy as vnp
    from vecgrad.rewrite.simplify import simplify

    def g(x, v):
        b = vnp.zeros(101) + x
        for k in range(100):
            b[k + 1] = v[k] * 2.0
        return b[0] * 3.0
    g0 = graph(g, (101,), (100,))
    g1 = simplify(g0)
    assert "setitem" in prims(g0) and "setitem" not in prims(g1)
    assert_equivalent(g0, g1)
