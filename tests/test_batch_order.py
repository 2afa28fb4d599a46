"""Loops that run backwards (`reversed(range(n))`, `range(n - 1, -1, -1)`) batch in ascending
order: a group's members are independent, so the batched operation reads and writes forward
views, which NumPy's kernels (BLAS above all) run far faster than views at negative steps.
Batched equals unbatched, gradients equal central differences (float64, random directions),
and where the program itself asks for reversed order (a list stacked as built) it still gets
it."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def _negative_steps(g) -> list:
    """The equations of g that read a view at a negative step."""
    def back(e) -> bool:
        if e.prim is P.getitem and P.is_basic(e.params["idx"]):
            return any(isinstance(s, P.Sl) and s.step < 0 for s in e.params["idx"])
        return e.prim is P.strided and any(st < 0 for _, steps in e.params["dims"]
                                           for st in steps)
    return [e for e in g.eqns if back(e)]


def rev_buffer_windows(x, w):
    k = w.shape[0]
    n = x.shape[0] - k + 1
    y = vnp.zeros((n, x.shape[1]))
    for t in reversed(range(n)):
        y[t] = w @ x[t:t + k]
    return vnp.sum(y ** 2)


def rev_step_windows_tanh(x, w):
    # a negative range step, an elementwise chain after the window sums, a write per row
    k = w.shape[0]
    n = x.shape[0] - k + 1
    y = vnp.zeros(n)
    for t in range(n - 1, -1, -1):
        s = vnp.sum(x[t:t + k] * w)
        y[t] = vnp.tanh(s) * s
    return vnp.sum(y * vnp.arange(n))


def rev_rows_patches(img, f):
    # rows visited backwards, columns forwards: a 2-D patch per pixel
    p = f.shape[0]
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    out = vnp.zeros((H, W))
    for i in reversed(range(H)):
        for j in range(W):
            out[i, j] = vnp.sum(img[i:i + p, j:j + p] * f)
    return vnp.sum(vnp.sin(out))


def rev_list_stacked(x, w):
    # the list is built backwards and stacked as built: its order is the program's
    k = w.shape[0]
    ys = []
    for t in reversed(range(x.shape[0] - k + 1)):
        ys.append(vnp.sum(x[t:t + k] * w, axis=0))
    return vnp.sum(vnp.stack(ys) * vnp.arange(len(ys))[:, None])


def rev_strided_writes(x, w):
    # windows at step 2 visited backwards, written at their own positions
    k = w.shape[0]
    n = (x.shape[0] - k) // 2 + 1
    y = vnp.zeros(n)
    for t in range(n - 1, -1, -1):
        y[t] = vnp.dot(w, x[2 * t:2 * t + k])
    return vnp.sum(y ** 2)


CASES = [
    ("rev_buffer_windows", rev_buffer_windows,
     lambda r: (r.standard_normal((30, 3)), r.standard_normal(4)), (0, 1), True),
    ("rev_step_windows_tanh", rev_step_windows_tanh,
     lambda r: (r.standard_normal(26), r.standard_normal(5)), (0, 1), True),
    ("rev_rows_patches", rev_rows_patches,
     lambda r: (r.standard_normal((9, 8)), r.standard_normal((3, 3))), (0, 1), True),
    ("rev_list_stacked", rev_list_stacked,
     lambda r: (r.standard_normal((20, 2)), r.standard_normal((3, 2))), (0, 1), False),
    ("rev_strided_writes", rev_strided_writes,
     lambda r: (r.standard_normal(31), r.standard_normal(5)), (0, 1), True),
]


@pytest.mark.parametrize("name,f,make,argnums,forward", CASES, ids=[c[0] for c in CASES])
def test_backward_loops_batch_in_ascending_order(name, f, make, argnums, forward):
    e = check(f, make(rng(7)), argnums)
    g = e.stages["batch"]
    assert len(g.eqns) < 12, vg.ir.pretty(g)
    if forward:  # nothing in the program asks for reversed order: no view steps backwards
        assert not _negative_steps(g), vg.ir.pretty(g)


def test_reversed_list_keeps_its_order():
    # the stacked list is in the loop's (descending) order, as NumPy builds it
    r = rng(2)
    x, w = r.standard_normal((12, 2)), r.standard_normal((3, 2))
    want = np.stack([np.sum(x[t:t + 3] * w, axis=0) for t in reversed(range(10))])

    def f(x, w):
        ys = [vnp.sum(x[t:t + 3] * w, axis=0) for t in reversed(range(10))]
        return vnp.stack(ys)

    np.testing.assert_allclose(vg.jit(f)(x, w), want, rtol=1e-12)
