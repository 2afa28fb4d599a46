"""Property tests of batching by dependence (issue 14): random loop programs over windows with
moving bounds, buffers written with several index patterns (distinct and repeated positions,
read-modify-write, `+=`), work hanging off recurrences and linear recurrences, growing and
shrinking slices summed, slices of unequal lengths with keepdims statistics and row-wise
products (packed), one-channel windows, reads and writes at Python index lists that are
ramps, and taps under bounds checks.

Every program is run eagerly by NumPy (the same code on NumPy arrays), traced and compiled:
values equal NumPy's, the batched graph equals the unbatched one (values and VJPs, float64,
rtol 1e-9), and the gradient matches central differences in random directions.

VECGRAD_EXAMPLES sets the number of examples (CI: a few dozen; thousands once before closing a
change to the batching pass).
"""
from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch import assert_same_function, entry

import vecgrad as vg
import vecgrad.numpy as vnp

EXAMPLES = int(os.environ.get("VECGRAD_EXAMPLES", "40"))
N, D = 7, 4  # rows of the inputs, width of a row


@st.composite
def loops(draw):
    """An iteration range (any step, possibly descending) over rows of a (N, D) input, and
    positions: affine in the iteration, or drawn (repeats allowed)."""
    step = draw(st.sampled_from([1, 2, -1, -2, 3]))
    n = draw(st.integers(1, min(4, 1 + (N - 1) // abs(step))))
    span = (n - 1) * abs(step)
    start = draw(st.integers(0, N - 1 - span) if step > 0 else st.integers(span, N - 1))
    its = [start + step * t for t in range(n)]
    kind = draw(st.sampled_from(["same", "affine", "drawn"]))
    if kind == "same":
        pos = its
    elif kind == "affine":
        pos = [min(max(p, 0), N - 1) for p in its[::-1]]
    else:
        pos = draw(st.lists(st.integers(0, N - 1), min_size=n, max_size=n))
    return its, pos


STATEMENTS = ["window", "set_col", "add_row", "rmw", "iadd_repeat", "hang", "linear",
              "read_back", "sub_rmw", "block", "stencil", "empty", "two_terms",
              "traced_iadd", "traced_sum", "traced_read", "prefix", "suffix", "prefix_buf",
              "window1d", "shrink", "list_read", "list_rmw", "checked_taps",
              "dilated_window", "scatter_window", "stack_last", "patch2d", "stencil2d",
              "band_pairs", "segment"]


@st.composite
def programs(draw):
    its, pos = draw(loops())
    body = draw(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=4))
    return {
        "its": its, "pos": pos, "body": body,
        "k": draw(st.integers(1, 3)),  # window length
        "col": draw(st.integers(0, D - 1)),
        "scale": draw(st.sampled_from([0.5, -1.5, 2.0])),
        "fd": draw(st.booleans()),
        # an int-array argument (an edge list's destinations): traced positions, repeats
        "ix": draw(st.lists(st.integers(-N, N - 1), min_size=N, max_size=N)),
    }


def build(p):
    its, pos, k, col, c = p["its"], p["pos"], p["k"], p["col"], p["scale"]

    def f(x, y, w, ix):
        buf = vnp.zeros((N + 3, D))
        s1 = vnp.ones(N)
        acc = vnp.zeros((N, D))
        h = vnp.zeros(D)
        s = vnp.zeros(D)
        cols = []
        total = 0.0
        for t, (i, q) in enumerate(zip(its, pos)):
            for kind in p["body"]:
                if kind == "window":  # a window whose bounds move with the loop
                    lo = min(i, N - k)
                    total = total + vnp.sum(vnp.tanh(x[lo:lo + k]) * w)
                elif kind == "set_col":  # several index patterns into one buffer
                    buf[q, col] = vnp.sum(x[i] * w)
                    buf[q + 1, (col + 1) % D] = vnp.exp(0.1 * y[i, col])
                elif kind == "add_row":
                    buf[q] += vnp.sin(y[i])
                elif kind == "rmw":  # read-modify-write, distinct or repeated positions
                    buf[q] = buf[q] * c + x[i]
                elif kind == "sub_rmw":
                    acc[q] -= vnp.cos(x[i]) * w
                elif kind == "iadd_repeat":  # accumulation at repeated positions
                    acc[pos[(t * 3) % len(pos)]] += x[i] ** 2
                elif kind == "hang":  # a recurrence with work hanging off each step
                    h = vnp.tanh(0.5 * h + x[i])
                    total = total + vnp.sum(h ** 2)
                elif kind == "linear":  # a linear recurrence (a scan)
                    s = 0.8 * s + y[i]
                elif kind == "read_back":  # read what this iteration wrote
                    buf[q + 2] = x[i] * c
                    total = total + vnp.sum(buf[q + 2] * w)
                elif kind == "block":  # a 2-D block whose bounds move
                    r0 = min(q, N - 2)
                    buf[r0:r0 + 2, 1:3] = y[i, :2] * c
                elif kind == "stencil":  # neighbour sums with a zero boundary
                    left = x[i - 1] if i > 0 else 0.0
                    right = x[i + 1] if i < N - 1 else 0.0
                    total = total + vnp.sum((left - 2.0 * x[i] + right) ** 2 * w)
                elif kind == "empty":  # regions of no elements, read and written
                    buf[q:q] = x[i, :0].reshape(0, 1) * c
                    total = total + vnp.sum(y[i:i] * w)
                elif kind == "two_terms":  # a sum of two kinds of terms, one invariant
                    total = total + vnp.sum(x[i] * y[q])
                    total = total + c * vnp.sum(w ** 2)
                elif kind == "traced_iadd":  # acc[dst[e]] += m at a traced int (a row)
                    acc[ix[i]] += vnp.sin(x[i]) * c
                elif kind == "traced_sum":  # s1[d] = s1[d] - m at a traced int (an element)
                    s1[ix[q]] = s1[ix[q]] - x[i, col] * c
                elif kind == "traced_read":  # rows of an unbatched table at traced ints
                    total = total + vnp.sum(y[ix[i]] * w)
                elif kind == "prefix":  # a growing slice summed (a cumulative sum)
                    total = total + vnp.sum(vnp.sin(vnp.sum(x[:i + 1] * y[:i + 1], axis=0)) * w)
                elif kind == "suffix":  # a shrinking slice of one column, summed
                    total = total + vnp.tanh(vnp.sum((x[i:, col] - c) * y[i:, col]))
                elif kind == "prefix_buf":  # a prefix of a buffer the loop writes
                    total = total + vnp.sum(buf[:q + 1, col] ** 2)
                elif kind == "shrink":  # a shrinking slice against a row of its own
                    total = total + vnp.sum(vnp.exp(-vnp.sum((x[i:] - y[q]) ** 2, axis=1)))
                elif kind == "list_read":  # rows by a Python list that is a ramp
                    lo = min(i, N - 1 - 2 * (k - 1))
                    total = total + vnp.sum(vnp.tanh(x[[lo + 2 * j for j in range(k)]]) * w)
                elif kind == "list_rmw":  # x[I] = x[I] + v at a ramp list I
                    r0 = min(q, N + 1 - k)
                    buf[[r0 + j for j in range(k)], col] += vnp.cos(x[i, :k]) * c
                elif kind == "checked_taps":  # taps under bounds checks (ragged ends)
                    for d in (-1, 0, 1):
                        if 0 <= i + d < N:
                            acc[i] += w[d + 1] * x[i + d]
                elif kind == "dilated_window":  # k rows at dilation 2 (a strided window)
                    lo = min(i, N - 1 - 2 * (k - 1))
                    total = total + vnp.sum(vnp.sin(x[lo:lo + 2 * k - 1:2]) * w)
                elif kind == "scatter_window":  # outer products into overlapping rows
                    r0 = min(q, N + 3 - k)
                    buf[r0:r0 + k] += x[i] * w[:k, None] * c
                elif kind == "stack_last":  # rows stacked along the last axis
                    cols.append(vnp.tanh(x[i] * c + y[q]))
                elif kind == "patch2d":  # a 2x2 patch whose row and column both move
                    r0, c0 = min(i, N - 2), min(2 * (t % 2), D - 2)
                    total = total + vnp.sum(vnp.tanh(x[r0:r0 + 2, c0:c0 + 2]) * w[c0:c0 + 2])
                elif kind == "stencil2d":  # pixels' neighbours under if-boundaries
                    # (every pixel of x on the first iteration, this iteration's after)
                    for r0, c0 in ([(a, b) for a in range(N) for b in range(D)] if t == 0
                                   else [(min(max(q, 0), N - 1), (i + t) % D)]):
                        nb = 0.0
                        if r0 > 0:
                            nb = nb + x[r0 - 1, c0]
                        if r0 < N - 1:
                            nb = nb + x[r0 + 1, c0]
                        if c0 > 0:
                            nb = nb + 0.5 * x[r0, c0 - 1]
                        if c0 < D - 1:
                            nb = nb + x[r0, c0 + 1]
                        total = total + (2.0 * x[r0, c0] - nb) ** 2 * c
                elif kind == "band_pairs":  # row i against its neighbours j of a band
                    for j in range(max(0, i - 1), min(N, i + 2)):
                        total = total + vnp.tanh(vnp.dot(x[i], y[j]) * c)
                elif kind == "segment":  # rows of unequal lengths (packed): keepdims
                    lo = min(i, N - 1)      # statistics, row-wise products, a column
                    S = x[lo:min(N, lo + 1 + t % 3)]
                    a = vnp.exp(vnp.tanh(S @ w))
                    cen = S - S.mean(axis=0, keepdims=True)
                    total = total + vnp.sum((a @ cen) ** 2) / vnp.sum(a) + vnp.var(S[:, col])
                elif kind == "window1d":  # one-channel windows against one vector
                    lo = min(i, D - k)
                    total = total + vnp.sum(w[lo:lo + k] * x[0, :k]) ** 2
        wt = np.cos(np.arange(buf.size, dtype=np.float64)).reshape(buf.shape)
        if cols:
            z = vnp.stack(cols, axis=-1)
            total = total + vnp.sum(z * np.sin(np.arange(z.size, dtype=np.float64)
                                               ).reshape(z.shape))
        return (total + vnp.sum(vnp.sin(buf) * wt) + vnp.sum(acc * acc[::-1])
                + vnp.sum(h * s) + vnp.sum(s ** 2) + vnp.sum(s1 * vnp.cos(s1)))
    return f


def inputs(seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal((N, D)), r.standard_normal((N, D)), r.standard_normal(D)


@settings(max_examples=EXAMPLES, deadline=None)
@given(programs())
def test_random_dependence_programs(p):
    f = build(p)
    args = (*inputs(), np.array(p["ix"]))
    want = f(*[np.array(a) for a in args])  # the same code, eagerly in NumPy
    np.testing.assert_allclose(vg.jit(f)(*args), want, rtol=1e-9, atol=1e-12)
    e, leaves = entry(f, args, argnums=(0, 1, 2))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    assert_same_function(e.stages["traced"], e.stages["simplify"], leaves)
    if p["fd"]:
        vg.check_grads(f, args, argnums=(0, 1, 2), rtol=1e-5, atol=1e-7)


@settings(max_examples=max(EXAMPLES // 2, 10), deadline=None)
@given(programs(), st.sampled_from(["stencil2d", "band_pairs"]))
def test_random_neighbour_programs(p, kind):
    """Programs with 2-D neighbour sums under if-boundaries or band pairs, with the size
    thresholds of their rewrites (rewrite/segments' boxes, rewrite/diagonals' runs) lifted,
    so that the rewrites fire at this size: same values as NumPy, same function, gradients."""
    from vecgrad.rewrite import diagonals
    p = {**p, "body": p["body"][:2] + [kind]}
    f = build(p)
    args = (*inputs(), np.array(p["ix"]))
    saved = diagonals.RUN_ELEMS
    diagonals.RUN_ELEMS = 0
    try:
        want = f(*[np.array(a) for a in args])
        np.testing.assert_allclose(vg.jit(f)(*args), want, rtol=1e-9, atol=1e-12)
        e, leaves = entry(f, args, argnums=(0, 1, 2))
        assert_same_function(e.stages["traced"], e.stages["simplify"], leaves)
        vg.check_grads(f, args, argnums=(0, 1, 2), rtol=1e-5, atol=1e-7)
    finally:
        diagonals.RUN_ELEMS = saved
