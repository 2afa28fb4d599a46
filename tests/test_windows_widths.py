"""Windows whose width comes from a Python list (`x[t:t+k]` for k in widths) batch as one group
of sliding windows per width (views; sums over their offsets), not as ragged rows gathered and
summed by segment (batch/packed.py `_window_classes`): batched equals unbatched, gradients
equal central differences (float64, random directions)."""
from __future__ import annotations

import pytest
from test_batch import check, count, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def widths_means(x, ws):
    total = 0.0
    for m, k in enumerate([2, 3, 5]):
        for t in range(x.shape[0] - k + 1):
            total = total + ws[m] * vnp.sum(vnp.tanh(vnp.mean(x[t:t + k], axis=0)))
    return total


def widths_strided_sums(x, ws):
    # each width at its own stride
    total = 0.0
    for m, (k, s) in enumerate([(2, 1), (4, 2), (6, 3)]):
        for t in range(0, x.shape[0] - k + 1, s):
            total = total + ws[m] * vnp.sum(vnp.sum(x[t:t + k], axis=0) ** 2)
    return total


@pytest.mark.parametrize("f", [widths_means, widths_strided_sums])
def test_windows_of_listed_widths_batch_per_width(f):
    r = rng(6)
    e = check(f, (r.standard_normal((30, 3)), r.standard_normal(3)), (0, 1))
    g = e.stages["final"]
    assert count(g, P.take) == 0 and count(g, P.segment_sum) == 0, vg.ir.pretty(g)
