"""Read-modify-writes through a view of a buffer (`vw = buf[1:]`, `buf[::-1]`, `buf[::2]`,
`buf[1:-1]`; then `vw[i] += f(x[i])` in a loop): each write through the view is traced as a
write into the view's value and a write-back of the whole view into the buffer. The
write-backs overwrite one region, so only the last counts (batch/chains.py), and the writes
batch as one (they ran one by one: a recurrence, the fuzz engineer's cliffs rmw_view_*).
Batched equals unbatched, gradients match central differences, one write is left."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import count

from vecgrad import primitives as P

R = np.random.default_rng(3)
VIEWS = {"tail": lambda b: b[1:], "rev": lambda b: b[::-1], "even": lambda b: b[::2],
         "inner": lambda b: b[1:-1], "rows": lambda b: b[1:, :]}


def through_view(x, y, view):
    buf = y * 1.0
    vw = VIEWS[view](buf)
    for i in range(min(len(vw), len(x))):
        vw[i] += np.exp(np.tanh(x[i]))
    return np.sum(buf ** 2) + np.sum(vw * x[: len(vw)].sum())


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_writes_through_a_view_batch(view):
    n = 9
    shape = (n + 2, 3) if view == "rows" else (n + 2,)
    x = R.standard_normal((n, 3) if view == "rows" else n)
    e = check_batched(through_view, (x, R.standard_normal(shape), view), argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.setitem_add) + count(g, P.setitem) <= 2, g
    assert count(g, P.tanh) == 1, g
