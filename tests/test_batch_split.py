"""A group whose operands come from many sources (the differences at five lags, each lag a run
of positions) runs as one operation per source where each source's rows are big (batching.py
MAX_SPLIT_BIG), not on one concatenated copy of them all; small ones are still concatenated.
Batched equals unbatched, gradients equal central differences (float64, random directions)."""
from __future__ import annotations

import pytest
from test_batch import check, count, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def lag_diffs(x, c):
    acc = 0.0
    for m, L in enumerate((1, 2, 3, 5, 8)):
        for t in range(L, x.shape[0]):
            acc = acc + c[m] * vnp.sum((x[t] - x[t - L]) ** 2)
    return acc


def lag_products(x, w):
    # six lags, products of shifted rows, a weight per lag
    acc = 0.0
    for m, L in enumerate((1, 2, 4, 6, 9, 12)):
        for t in range(x.shape[0] - L):
            acc = acc + w[m] * vnp.sum(vnp.tanh(x[t] * x[t + L]))
    return acc


@pytest.mark.parametrize("f,nl", [(lag_diffs, 5), (lag_products, 6)])
def test_big_sources_run_one_by_one(f, nl):
    r = rng(3)
    x, c = r.standard_normal((150, 128)), r.standard_normal(nl)
    e = check(f, (x, c), (0, 1))
    g = e.stages["batch"]
    assert count(g, P.concatenate) == 0, vg.ir.pretty(g)


def test_small_sources_are_concatenated():
    r = rng(4)
    x, c = r.standard_normal((20, 3)), r.standard_normal(5)
    e = check(lag_diffs, (x, c), (0, 1))
    assert count(e.stages["batch"], P.concatenate) >= 1, vg.ir.pretty(e.stages["batch"])
