"""Growing or shrinking rows that fill most of their rectangle (`K[:t+1]` for every t: causal
attention) run dense and masked (batch/dense.py), not gathered row by row: batched equals
unbatched (values and gradients), gradients equal central differences, and masked entries
never leak into a value or a gradient, even where the loop's own arithmetic would overflow
on them."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, count, gathers, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.batch import dense
from vecgrad.batch.dense import dense_span


def causal_rows(Q, K, V):
    out = 0.0
    for t in range(len(Q)):
        s = K[:t + 1] @ Q[t]
        p = vnp.exp(s - vnp.max(s))
        out = out + vnp.sum((p / vnp.sum(p)) @ V[:t + 1])
    return out


def causal_rows_transposed(Q, K, V):
    # the scores written as a user does: the query times the keys' transpose
    out = 0.0
    for t in range(len(Q)):
        s = Q[t] @ K[:t + 1].T
        p = vnp.exp(s - vnp.max(s))
        out = out + vnp.sum(p @ V[:t + 1] / vnp.sum(p))
    return out


def anticausal_rows(Q, K, V):
    # each query attends to the keys from it on (suffixes), scaled, a tanh of the context
    out = 0.0
    for t in range(len(Q)):
        s = K[t:] @ Q[t] / 2.0
        p = vnp.exp(s - vnp.max(s))
        out = out + vnp.sum(vnp.tanh(p @ V[t:] / vnp.sum(p)))
    return out


def causal_offset_bias(Q, K, b):
    # the keys up to one past the query, a per-query bias, a log-sum-exp per row
    out = 0.0
    for t in range(len(Q) - 1):
        s = K[:t + 2] @ Q[t] + b[t]
        m = vnp.max(s)
        out = out + m + vnp.log(vnp.sum(vnp.exp(s - m)))
    return out


def causal_multihead(Q, K, V):
    # rows of (heads, d): the scores per head, a softmax over the rows for each head
    out = 0.0
    for t in range(Q.shape[0]):
        s = vnp.einsum("hd,jhd->jh", Q[t], K[:t + 1])
        p = vnp.exp(s - vnp.max(s, axis=0))
        p = p / vnp.sum(p, axis=0)
        out = out + vnp.sum(vnp.einsum("jh,jhd->hd", p, V[:t + 1]) ** 2)
    return out


def prefix_max_gap(x, w):
    # the largest weighted distance to the earlier rows, per row (a max over the rows)
    out = 0.0
    for t in range(len(x)):
        d = vnp.sum((x[:t + 1] - x[t]) ** 2 * w, axis=1)
        out = out + vnp.max(d) + vnp.min(d - 1.0)
    return out


def suffix_pairs_channels(x, c):
    # pairwise differences to every later row, channels last, a smooth penalty
    e = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1:] - x[i]
        e = e + vnp.sum(vnp.log1p(d ** 2) * c)
    return e


def causal_kernel_mean(x, y):
    # a Gaussian kernel against the rows so far, normalised by the count (a mean)
    out = 0.0
    for t in range(len(x)):
        k = vnp.exp(-vnp.sum((x[:t + 1] - y[t]) ** 2, axis=1))
        out = out + vnp.mean(k) * (t + 1.0)
    return out


def causal_sqrt_distance(x):
    # sqrt(x[t] - x[:t+1]) on sorted data: real for the rows a member owns, NaN for the rest
    # (the masked entries must not turn the gradient into NaN); the +1 keeps sqrt off 0
    out = 0.0
    for t in range(len(x)):
        out = out + vnp.sum(vnp.sqrt(x[t] - x[:t + 1] + 1.0))
    return out


def _sorted(r, n):
    return (np.sort(r.standard_normal(n)) * 3.0,)


def _att(r, n=7, d=3):
    return tuple(0.5 * r.standard_normal((n, d)) for _ in range(3))


DENSE = [
    ("causal_rows", causal_rows, _att, (0, 1, 2)),
    ("anticausal_rows", anticausal_rows, _att, (0, 1, 2)),
    ("causal_rows_transposed", causal_rows_transposed, _att, (0, 1, 2)),
    ("causal_offset_bias", causal_offset_bias,
     lambda r: (r.standard_normal((7, 3)), r.standard_normal((7, 3)), r.standard_normal(6)),
     (0, 1, 2)),
    ("causal_multihead", causal_multihead,
     lambda r: tuple(0.5 * r.standard_normal((6, 2, 3)) for _ in range(3)), (0, 1, 2)),
    ("prefix_max_gap", prefix_max_gap,
     lambda r: (r.standard_normal((7, 3)), r.random(3) + 0.5), (0, 1)),
    ("suffix_pairs_channels", suffix_pairs_channels,
     lambda r: (r.standard_normal((7, 2)), r.random(2)), (0, 1)),
    ("causal_kernel_mean", causal_kernel_mean,
     lambda r: (r.standard_normal((6, 2)), r.standard_normal((6, 2))), (0, 1)),
    ("causal_sqrt_distance", causal_sqrt_distance, lambda r: _sorted(r, 8), 0),
]


@pytest.mark.parametrize("name,f,make,argnums", DENSE, ids=[c[0] for c in DENSE])
def test_rows_filling_their_rectangle_run_dense_and_masked(name, f, make, argnums,
                                                           monkeypatch):
    monkeypatch.setattr(dense, "DENSE_BIAS", np.inf)  # (dense wherever the rows qualify)
    e = check(f, make(rng(3)), argnums)
    g = e.stages["batch"]
    assert count(g, P.where) >= 1 and not gathers(g), vg.ir.pretty(g)
    assert count(g, P.segment_sum) == 0, vg.ir.pretty(g)


def _plan(f, args):
    g = vg.grad(f, argnums=0).entry(*args)[0].stages["batch"]
    return "dense" if count(g, P.where) and not gathers(g) else \
        "packed" if count(g, P.segment_sum) else "?"


def test_the_cheaper_plan_is_chosen():
    # scores against whole rows (a product in BLAS) run dense; elementwise work on narrow
    # pairs (twice the elements when dense, and masks) stays packed
    r = rng(4)
    assert _plan(causal_rows, tuple(r.standard_normal((24, 8)) for _ in range(3))) == "dense"
    assert _plan(anticausal_rows, tuple(r.standard_normal((24, 8)) for _ in range(3))) \
        == "dense"
    assert _plan(suffix_pairs_channels, (r.standard_normal((24, 2)), r.random(2))) == "packed"
    # scores only (no values' rows): the packed row-wise products become one product and a
    # gather of its entries (rewrite/hoist.py), cheaper than the masked rectangle
    assert _plan(causal_offset_bias, (r.standard_normal((40, 16)), r.standard_normal((40, 16)),
                                      r.standard_normal(39))) == "packed"
    assert _plan(causal_sqrt_distance, _sorted(r, 24)) == "packed"


def test_transposed_rows_read_by_a_product_pack():
    # `Q[t] @ K[:t+1].T`, the `.T` folded into the product: the loop packs (it ran one
    # iteration at a time) and matches the loop; a transpose read by anything else stays
    r = rng(6)
    e = check(causal_rows_transposed, _att(r, 9, 3), (0, 1, 2))
    assert len(e.stages["batch"].eqns) < 30, vg.ir.pretty(e.stages["batch"])

    def f(x):
        return sum(vnp.sum(vnp.tanh(x[:t + 1].T * x[t][:, None])) for t in range(len(x)))
    check(f, (r.standard_normal((7, 3)),))


def multihead_rows_last(Q, K, V):
    # heads first, the rows last in the scores ('hd,jhd->hj'), a softmax along them with
    # keepdims (a (h, 1) maximum and sum broadcast back over the rows)
    out = 0.0
    for t in range(Q.shape[0]):
        s = vnp.einsum("hd,jhd->hj", Q[t], K[:t + 1])
        p = vnp.exp(s - vnp.max(s, axis=1, keepdims=True))
        p = p / vnp.sum(p, axis=1, keepdims=True)
        out = out + vnp.sum(vnp.einsum("hj,jhd->hd", p, V[:t + 1]) ** 2)
    return out


def block_rows_last(Q, K, c):
    # two queries against the later keys, transposed: rows last, a bias per query row,
    # a max over the rows and a weighted sum over both axes
    out = 0.0
    for t in range(len(Q) - 1):
        s = Q[t:t + 2] @ K[t:].T + c[:, None]
        out = out + vnp.sum(vnp.tanh(s - vnp.max(s, axis=1, keepdims=True)) * c[:, None])
    return out


ROWS_LAST = [
    ("multihead_rows_last", multihead_rows_last,
     lambda r: tuple(0.5 * r.standard_normal((6, 2, 3)) for _ in range(3)), (0, 1, 2)),
    ("block_rows_last", block_rows_last,
     lambda r: (r.standard_normal((8, 3)), r.standard_normal((8, 3)), r.standard_normal(2)),
     (0, 1, 2)),
]


@pytest.mark.parametrize("plan", ["packed", "dense"])
@pytest.mark.parametrize("name,f,make,argnums", ROWS_LAST, ids=[c[0] for c in ROWS_LAST])
def test_rows_kept_on_a_later_axis_pack(name, f, make, argnums, plan, monkeypatch):
    # the rows are not the first axis of a product's result: both plans keep them first
    # and map the members' axes (a reduction's, a broadcast operand's) to that layout
    monkeypatch.setattr(dense, "DENSE_BIAS", 0.0 if plan == "packed" else np.inf)
    e = check(lambda *a: f(*a), make(rng(7)), argnums)  # (a new function: compiled anew)
    g = e.stages["batch"]
    assert len(g.eqns) < 40, vg.ir.pretty(g)
    prim = P.segment_sum if plan == "packed" else P.where
    assert count(g, prim) >= 1, vg.ir.pretty(g)


def test_masked_scores_that_overflow_leave_values_and_gradients_exact():
    # later keys point along the queries and grow: every masked score (a key after the
    # query) exceeds the row's maximum by hundreds, so exp overflows there; the loop never
    # computes those, and neither value nor gradient may see them
    n, d = 9, 2
    r = rng(5)
    u = np.array([0.6, 0.8])
    K = np.arange(n)[:, None] * 40.0 * u + 0.1 * r.standard_normal((n, d))
    Q = 3.0 * u + 0.1 * r.standard_normal((n, d))
    V = r.standard_normal((n, d))
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(K @ Q[0] - K[0] @ Q[0])).any()  # (the masked entries overflow)
    e = check(causal_rows, (Q, K, V), (0, 1, 2))
    assert not gathers(e.stages["batch"])
    grads = vg.grad(causal_rows, argnums=(0, 1, 2))(Q, K, V)
    assert all(np.isfinite(gr).all() for gr in grads)


def test_ties_in_a_masked_maximum_share_as_the_loop_does():
    # integer-valued distances tie within a member's rows; the masked rows hold copies of a
    # row every member owns and must not take a share of the maximum's cotangent
    def f(x, w):
        out = 0.0
        for t in range(len(x)):
            out = out + vnp.max(vnp.sum(vnp.abs(x[:t + 1] - x[t]) * w, axis=1))
        return out
    x = np.array([[0.0, 1.0], [2.0, 1.0], [0.0, 3.0], [2.0, 3.0], [1.0, 1.0], [0.0, 1.0]])
    check(f, (x, np.array([1.0, 1.0])), 1, fd=False)


def test_short_rows_stay_packed():
    # windows of a few rows each at many starts (a sparse band of the rectangle): gathered
    # and segment-summed, as before
    offs = [0, 2, 3, 7, 8, 12, 13, 15, 20, 21]

    def f(x, w):
        tot = 0.0
        for i in range(len(offs) - 1):
            s = x[offs[i]:offs[i + 1] + 2] @ w
            tot = tot + vnp.log(vnp.sum(vnp.exp(s - vnp.max(s))))
        return tot
    e = check(f, (rng(1).standard_normal((23, 3)), rng(2).standard_normal(3)), (0, 1))
    assert count(e.stages["batch"], P.segment_sum) >= 1


@pytest.mark.parametrize("rngs,want", [
    ([(0, t + 1) for t in range(8)], (0, 8, 0)),      # prefixes: row 0 is everyone's
    ([(t, 8) for t in range(8)], (0, 8, 7)),          # suffixes: the last row
    ([(0, 3), (0, 5), (4, 8)], None),                 # no row every member owns
    ([(0, 2)] + [(1, 3)] * 3 + [(1, 30)], None),      # a quarter of the rectangle
    ([(2, 5), (3, 6), (2, 7)], (2, 7, 1)),            # an offset span
])
def test_dense_span(rngs, want):
    assert dense_span(rngs) == want


def _local_partial(w):
    def f(Q, K, V):
        out = []
        for t in range(len(Q)):
            lo = max(0, t - w + 1)
            s = K[lo:t + 1] @ Q[t]
            a = vnp.exp(s - vnp.max(s))
            out.append(a @ V[lo:t + 1] / vnp.sum(a))
        return vnp.sum(vnp.stack(out) ** 2)
    return f


@pytest.mark.parametrize("w", [4, 6])
def test_partial_windows_at_an_edge_run_as_one_group(w):
    # windows of width w at every t, the first w - 1 cut at 0: the full ones batch as
    # windows, the partial ones (each a dozen small operations) as one masked group
    r = rng(w)
    args = tuple(0.5 * r.standard_normal((20, 3)) for _ in range(3))
    e = check(_local_partial(w), args, (0, 1, 2))
    g = e.stages["batch"]
    assert len(g.eqns) < 60, vg.ir.pretty(g)
    assert count(g, P.strided) >= 1, vg.ir.pretty(g)  # (the full windows: a view)


def test_partial_windows_graph_does_not_grow_with_the_width():
    r = rng(9)
    args = tuple(0.5 * r.standard_normal((24, 3)) for _ in range(3))
    e4, _ = vg.grad(_local_partial(4), argnums=0).entry(*args)
    e7, _ = vg.grad(_local_partial(7), argnums=0).entry(*args)
    assert len(e4.stages["batch"].eqns) == len(e7.stages["batch"].eqns)
