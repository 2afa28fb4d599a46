"""Growing prefixes and shrinking suffixes (`x[:i+1]`, `x[i:]`) summed in a loop read one
cumulative sum (batch/ragged.py): batched equals unbatched, gradients equal central differences
(float64, random directions), and the graph no longer grows with the trip count."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_size_independent, check, count, gathers, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def prefix_means(x):
    loss = 0.0
    for i in range(x.shape[0]):
        loss = loss + vnp.sum((x[i] - vnp.mean(x[:i + 1], axis=0)) ** 2)
    return loss


def suffix_dots(x, w):
    return sum((x[i:] @ w[i:]) ** 2 for i in range(len(x)))


def suffix_products(x, w):
    e = 0.0
    for i in range(x.shape[0]):
        e = e + vnp.sum(vnp.sum(x[i:] * w[i:], axis=0) ** 2)
    return e


def column_prefixes(X):
    # prefixes along axis 1, skipping the empty one, summed over both axes
    return sum(vnp.sin(vnp.sum(X[:, :j])) for j in range(1, X.shape[1] + 1))


def reversed_prefixes_shifted(x):
    # visited backwards, a scalar inside the summed term
    return sum(vnp.sum((x[:i] - 1.0) ** 2) ** 0.5 for i in reversed(range(1, len(x))))


def prefix_pair_rows(X, Y):
    # two arrays read at the same growing rows, their product summed per prefix
    return sum(vnp.sum(vnp.sin(X[:i + 1]) * Y[:i + 1]) ** 2 for i in range(len(X)))


CASES = [
    ("prefix_pair_rows", prefix_pair_rows,
     lambda r: (r.standard_normal((7, 2)), r.standard_normal((7, 2))), (0, 1)),
    ("prefix_means", prefix_means, lambda r: (r.standard_normal((9, 3)),), 0),
    ("suffix_dots", suffix_dots, lambda r: (r.standard_normal(8), r.standard_normal(8)), (0, 1)),
    ("suffix_products", suffix_products,
     lambda r: (r.standard_normal((7, 2)), r.standard_normal((7, 2))), (0, 1)),
    ("column_prefixes", column_prefixes, lambda r: (r.standard_normal((3, 8)),), 0),
    ("reversed_prefixes_shifted", reversed_prefixes_shifted,
     lambda r: (r.standard_normal(9),), 0),
]


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_prefix_and_suffix_sums_read_one_cumulative_sum(name, f, make, argnums):
    e = check(f, make(rng()), argnums)
    g = e.stages["batch"]
    assert count(g, P.cumsum) == 1, vg.ir.pretty(g)
    assert count(g, P.reduce_sum) + count(g, P.einsum) < 6, vg.ir.pretty(g)


def test_graph_does_not_grow_with_the_trip_count():
    def make(n):
        return prefix_means, (rng(n).standard_normal((n, 2)),)
    assert_size_independent(make)


def test_a_lone_prefix_sum_stays_a_sum():
    def f(x):
        return vnp.sum(x[:3]) + vnp.sum(x[5:] ** 2)
    e = check(f, (rng().standard_normal(40),))
    assert count(e.stages["batch"], P.cumsum) == 0


def test_prefixes_of_a_buffer_written_in_the_loop_stay_ordered():
    # each prefix reads a different version of the buffer: no cumulative sum of one array
    def f(x):
        buf = vnp.zeros_like(x)
        out = 0.0
        for i in range(len(x)):
            buf[i] = 2.0 * x[i]
            out = out + vnp.sum(buf[:i + 1]) ** 2
        return out
    x = rng(2).standard_normal(7)
    check(f, (x,))
    want = sum(np.sum(2.0 * x[:i + 1]) ** 2 for i in range(len(x)))
    np.testing.assert_allclose(vg.jit(f)(x), want, rtol=1e-12)


def test_float32_prefix_sums_keep_their_dtype():
    x = rng(3).standard_normal((50, 4)).astype(np.float32)
    out = vg.jit(lambda x: vnp.stack([vnp.sum(x[:i + 1], axis=0) for i in range(len(x))]))(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.cumsum(x, axis=0), rtol=1e-5)


def test_prefix_contracted_with_a_computed_term_stays_correct():
    # an einsum whose prefix operand is computed (sin of the read): left as it is, correct
    def f(x, w):
        return sum(vnp.sin(x[:i + 1]) @ w[:i + 1] for i in range(len(x)))
    r = rng(6)
    check(f, (r.standard_normal(8), r.standard_normal(8)), (0, 1))


# -- shrinking slices with work of their own: one packed computation over all rows ---------


def shrinking_pairs(x, a):
    e = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1:] - x[i]
        e = e + vnp.sum(vnp.exp(-a * vnp.sum(d ** 2, axis=1)))
    return e


def growing_variances(x):
    # the variance of every prefix: the prefix minus its own mean, squared
    return sum(vnp.sum((x[:i + 1] - vnp.mean(x[:i + 1], axis=0)) ** 2) for i in range(len(x)))


def shrinking_weighted(x, w):
    # per-iteration weights broadcast over the rows, and a vector result per iteration
    out = vnp.zeros((len(x) - 1, x.shape[1]))
    for i in range(len(x) - 1):
        out[i] = vnp.sum(vnp.tanh(x[i + 1:] * w[i]), axis=0)
    return vnp.sum(out ** 2)


_OFFS = [0, 3, 7, 8, 14, 16, 21]  # CSR-style segments of unequal lengths (one of length 1)


def segment_variances(x):
    # np.var subtracts a keepdims mean: an operand with a row axis of length 1
    return sum(np.var(x[_OFFS[i]:_OFFS[i + 1]]) for i in range(len(_OFFS) - 1))


def segment_std_columns(X):
    # 2-D segments, standardized per column with keepdims statistics over the rows
    tot = 0.0
    for i in range(len(_OFFS) - 1):
        S = X[_OFFS[i]:_OFFS[i + 1]]
        c = S - S.mean(axis=0, keepdims=True)
        tot = tot + vnp.sum(c ** 2 / (vnp.sum(c * c, axis=0, keepdims=True) + 1.0))
    return tot


def segment_attention(X, w):
    # attention pooling over each segment's rows: a row-wise contraction, a softmax over the
    # rows, an expand-dims and a weighted sum of the rows
    tot = 0.0
    for i in range(len(_OFFS) - 1):
        S = X[_OFFS[i]:_OFFS[i + 1]]
        a = vnp.exp(vnp.tanh(S @ w))
        a = a / vnp.sum(a)
        tot = tot + vnp.sum(vnp.sum(a[:, None] * S, axis=0) ** 2)
    return tot


def segment_own_weights(X, W):
    # each segment's rows times a matrix of its own (W[i]), reshaped, then summed
    tot = 0.0
    for i in range(len(_OFFS) - 1):
        S = X[_OFFS[i]:_OFFS[i + 1]]
        h = vnp.tanh(S @ W[i]).reshape(S.shape[0], 2, 1)
        tot = tot + vnp.sum(vnp.sum(h, axis=0) ** 2) * (i + 1)
    return tot


def segment_weighted_means(X, w):
    # weights from each row's distance to the segment's mean; `p @ S` sums over the rows
    # (a contraction over the row axis ends the chain, as a sum does)
    tot = 0.0
    for i in range(len(_OFFS) - 1):
        S = X[_OFFS[i]:_OFFS[i + 1]]
        p = vnp.exp(-vnp.sum((S - S.mean(axis=0)) ** 2, axis=1))
        tot = tot + vnp.sin(((p @ S) / vnp.sum(p)) @ w)
    return tot


def causal_attention(Q, K, V):
    # each query attends to the keys up to it: a max over the rows fed back into them, a
    # normaliser, and the same rows of a second array (V[:t+1]) contracted with the weights
    out = 0.0
    for t in range(len(Q)):
        s = K[:t + 1] @ Q[t]
        p = vnp.exp(s - vnp.max(s))
        out = out + vnp.sum((p / vnp.sum(p)) @ V[:t + 1])
    return out


def suffix_min_shift(x, w):
    # shrinking suffixes shifted by their own column minima, and a second array's rows
    e = 0.0
    for t in range(len(x) - 1):
        s = x[t + 1:] * w[t]
        e = e + vnp.sum(vnp.tanh(s - vnp.min(s, axis=0)) * x[t + 1:] ** 2)
    return e


def segment_max_pool(X, w):
    # the largest score of every CSR segment, and a softmax over the segment's rows
    tot = 0.0
    for i in range(len(_OFFS) - 1):
        s = X[_OFFS[i]:_OFFS[i + 1]] @ w
        tot = tot + vnp.max(s) + vnp.log(vnp.sum(vnp.exp(s - vnp.max(s))))
    return tot


PACKED = [
    ("causal_attention", causal_attention, lambda r: tuple(
        0.5 * r.standard_normal((7, 3)) for _ in range(3)), (0, 1, 2)),
    ("suffix_min_shift", suffix_min_shift,
     lambda r: (r.standard_normal((7, 2)), r.standard_normal((6, 2))), (0, 1)),
    ("segment_max_pool", segment_max_pool,
     lambda r: (r.standard_normal((21, 3)), r.standard_normal(3)), (0, 1)),
    ("segment_weighted_means", segment_weighted_means,
     lambda r: (r.standard_normal((21, 3)), r.standard_normal(3)), (0, 1)),
    ("segment_variances", segment_variances, lambda r: (r.standard_normal(21),), 0),
    ("segment_std_columns", segment_std_columns, lambda r: (r.standard_normal((21, 3)),), 0),
    ("segment_attention", segment_attention,
     lambda r: (r.standard_normal((21, 3)), r.standard_normal(3)), (0, 1)),
    ("segment_own_weights", segment_own_weights,
     lambda r: (r.standard_normal((21, 3)), r.standard_normal((6, 3, 2))), (0, 1)),
    ("shrinking_pairs", shrinking_pairs,
     lambda r: (r.standard_normal((7, 2)), np.array(0.5)), (0, 1)),
    ("growing_variances", growing_variances, lambda r: (r.standard_normal((6, 3)),), 0),
    ("shrinking_weighted", shrinking_weighted,
     lambda r: (r.standard_normal((6, 3)), r.standard_normal((5, 3))), (0, 1)),
]


@pytest.mark.parametrize("name,f,make,argnums", PACKED, ids=[c[0] for c in PACKED])
def test_shrinking_slices_run_as_one_packed_computation(name, f, make, argnums):
    e = check(f, make(rng()), argnums)
    g = e.stages["batch"]
    # packed (segment sums), or rows that fill most of their rectangle: dense and masked
    assert count(g, P.segment_sum) >= 1 or (count(g, P.where) >= 1 and not gathers(g)), \
        vg.ir.pretty(g)
    assert len(g.eqns) < 30, vg.ir.pretty(g)


def test_packed_graph_does_not_grow_with_the_trip_count():
    assert_size_independent(lambda n: (shrinking_pairs, (rng(n).standard_normal((n, 2)),
                                                         np.array(0.3))), sizes=(5, 9))


def test_an_iteration_reading_an_earlier_result_stays_ordered():
    # each slice is scaled by the previous iteration's sum: a recurrence, nothing packed
    def f(x):
        s = 1.0
        for i in range(len(x) - 1):
            s = vnp.sum(vnp.tanh(x[i + 1:] * s))
        return s
    x = rng(7).standard_normal(8)
    e = check(f, (x,))
    assert count(e.stages["batch"], P.segment_sum) == 0
    s = 1.0
    for i in range(len(x) - 1):
        s = np.sum(np.tanh(x[i + 1:] * s))
    np.testing.assert_allclose(vg.jit(f)(x), s, rtol=1e-12)


def test_windows_of_one_width_with_partial_edges_are_not_packed():
    # a causal moving average: all windows of width k but the first k - 1 (partial, growing):
    # they batch as windows (a view), cheaper than gathering every window's rows
    def f(x, k=4):
        out = vnp.empty(x.shape)
        for t in range(len(x)):
            out[t] = x[max(0, t - k + 1):t + 1].mean(axis=0)
        return vnp.sum((out - x) ** 2)
    e = check(f, (rng(11).standard_normal((20, 2)),))
    assert count(e.stages["batch"], P.segment_sum) == 0, vg.ir.pretty(e.stages["batch"])


# -- dot products at many shifts: entries of one full correlation --------------------------


def autocorrelation(x):
    n = len(x)
    return sum((x[:n - L] @ x[L:]) ** 2 for L in range(n // 2))


def growing_causal_filter(x, h):
    n = len(x)
    return vnp.sum(vnp.stack([x[:t + 1] @ h[n - 1 - t:] for t in range(n)]) ** 2)


def cross_shifts(x, y):
    # y shorter than x, slid along it (positive shifts only, both ends reached)
    m = len(y)
    return sum(vnp.sin(x[s:s + m] @ y) for s in range(len(x) - m + 1)) + \
        sum(vnp.cos(x[:j] @ y[m - j:]) for j in range(1, m))


LAGS = [
    ("autocorrelation", autocorrelation, lambda r: (r.standard_normal(24),), 0),
    ("growing_causal_filter", growing_causal_filter,
     lambda r: (r.standard_normal(12), r.standard_normal(12)), (0, 1)),
    ("cross_shifts", cross_shifts, lambda r: (r.standard_normal(20), r.standard_normal(9)),
     (0, 1)),
]


@pytest.mark.parametrize("name,f,make,argnums", LAGS, ids=[c[0] for c in LAGS])
def test_dots_at_many_shifts_read_one_full_correlation(name, f, make, argnums):
    e = check(f, make(rng()), argnums)
    g = e.stages["batch"]
    assert count(g, P.correlate) == 1, vg.ir.pretty(g)
    # (cross_shifts: its full windows x[s:s+m] @ y batch as windows, one contraction)
    assert count(g, P.einsum) <= (name == "cross_shifts"), vg.ir.pretty(g)


def test_a_few_shifts_stay_dot_products():
    def f(x):
        return sum((x[:len(x) - L] @ x[L:]) ** 2 for L in (1, 2, 3))
    e = check(f, (rng(14).standard_normal(50),))
    assert count(e.stages["batch"], P.correlate) == 0
