"""The rewrite rules `batch.loopplan.clean` applies inside a loop's step (STEP_RULES): each
with a golden listing and a numeric equivalence test (values and VJPs), as test_passes does
for the simplifier's rules."""
from __future__ import annotations

import pytest
from test_passes import assert_equivalent, graph, prims, strip

import vecgrad.numpy as vnp
from vecgrad.batch.loopplan import STEP_RULES
from vecgrad.ir import pretty
from vecgrad.rewrite.engine import rewrite


def pieces3(x, y, z):  # sum over a stack of three rows, as batching writes k terms
    return vnp.sum(vnp.reshape(vnp.concatenate([x[None], y[None], z[None]]), (3, 4)), axis=0)


def pieces2_col(x, y):  # pieces along axis 1 of (4, 1) columns
    return vnp.sum(vnp.concatenate([x[:, None], y[:, None]], axis=1), axis=1)


GOLDEN = {
    pieces3: ((4,), (4,), (4,)),
    pieces2_col: ((4,), (4,)),
}


@pytest.mark.parametrize("fn", list(GOLDEN), ids=lambda f: f.__name__)
def test_sum_of_pieces_is_additions(fn):
    g0 = graph(fn, *GOLDEN[fn])
    g1 = rewrite(g0, STEP_RULES)
    assert "concatenate" in prims(g0) and "reduce_sum" in prims(g0)
    assert "reduce_sum" not in prims(g1)
    assert prims(g1).count("add") == len(GOLDEN[fn]) - 1
    assert_equivalent(g0, g1)


def test_sum_of_pieces_golden():
    g1 = rewrite(graph(pieces2_col, (4,), (4,)), STEP_RULES)
    assert strip(pretty(g1)) == EXPECTED.strip()


def test_a_sum_over_other_axes_is_left():
    def f(x, y):  # (the sum runs along the rows, not the pieces)
        return vnp.sum(vnp.concatenate([x[None], y[None]]), axis=1)
    g0 = graph(f, (4,), (4,))
    assert prims(rewrite(g0, STEP_RULES)) == prims(g0)


EXPECTED = """
{ lambda a:f64[4] b:f64[4] .
  c:f64[4,1] = getitem[idx=(0:4, None)] a
  d:f64[4,1] = getitem[idx=(0:4, None)] b
  e:f64[4] = reshape[shape=(4,)] c
  f:f64[4] = reshape[shape=(4,)] d
  g:f64[4] = add e f
  in (g) }
"""
