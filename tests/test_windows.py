"""Windows of one channel (a 1-D signal) contracted with a vector become one `correlate`, in the
forward and in the gradient: batched equals unbatched, gradients equal central differences
(float64, random directions), and no per-offset product is left."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, count, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P


def ar_fit(x, w):
    k = w.shape[0]
    loss = 0.0
    for t in range(k, len(x)):
        loss = loss + (x[t] - w @ x[t - k:t]) ** 2
    return loss


def reversed_taps(x, w):
    # causal taps read backwards: y[t] = sum_i w[i] x[t - i]
    k = w.shape[0]
    ys = [vnp.sum(w * x[t - k + 1:t + 1][::-1]) for t in range(k - 1, len(x))]
    return vnp.sum(vnp.tanh(vnp.stack(ys)))


def backwards_positions(x, w):
    # windows visited from the end (a negative range step), collected in that order
    k = w.shape[0]
    ys = [x[t:t + k] @ w for t in range(len(x) - k, -1, -1)]
    return vnp.sum(vnp.stack(ys) * vnp.arange(len(ys)))


def moving_sum(x, k):
    out = vnp.zeros(len(x) - k + 1)
    for t in range(len(x) - k + 1):
        out[t] = vnp.sum(x[t:t + k])
    return vnp.sum(vnp.sin(out))


def weighted_windows(x, p):
    # the windows summed with one weight per position: a contraction over the positions
    k = len(x) - len(p) + 1
    acc = vnp.zeros(k)
    for t in range(len(p)):
        acc = acc + p[t] * x[t:t + k]
    return vnp.sum(acc ** 2)


CASES = [
    ("ar_fit", ar_fit, lambda r: (r.standard_normal(40), r.standard_normal(5)), (0, 1)),
    ("reversed_taps", reversed_taps, lambda r: (r.standard_normal(30), r.standard_normal(4)),
     (0, 1)),
    ("backwards_positions", backwards_positions,
     lambda r: (r.standard_normal(25), r.standard_normal(6)), (0, 1)),
    ("moving_sum", moving_sum, lambda r: (r.standard_normal(33), 7), 0),
    ("weighted_windows", weighted_windows,
     lambda r: (r.standard_normal(30), r.standard_normal(22)), (0, 1)),
]


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_one_channel_windows_become_one_correlation(name, f, make, argnums):
    e = check(f, make(rng()), argnums)
    g = e.stages["final"]
    assert count(g, P.correlate) >= 1, vg.ir.pretty(g)
    # no per-offset products or strided views are left, in the forward or the gradient
    assert count(g, P.strided) == count(g, P.strided_add) == 0, vg.ir.pretty(g)
    assert len(g.eqns) < 25, vg.ir.pretty(g)


@pytest.mark.parametrize("mode", ["valid", "full", "same"])
@pytest.mark.parametrize("n,m", [(9, 4), (4, 9), (5, 5), (6, 1)])
def test_numpy_convolve_and_correlate(mode, n, m):
    r = rng(3)
    a, v = r.standard_normal(n), r.standard_normal(m)
    for np_f, vg_f in ((np.convolve, vnp.convolve), (np.correlate, vnp.correlate)):
        def f(a, v, vg_f=vg_f):
            return vnp.sum(vnp.sin(vg_f(a, v, mode)))
        np.testing.assert_allclose(vg.jit(f)(a, v), np.sum(np.sin(np_f(a, v, mode))),
                                   rtol=1e-12)
        vg.check_grads(f, (a, v), argnums=(0, 1), rtol=1e-6, atol=1e-8)


def test_convolve_of_rows_in_a_loop_batches():
    # np.convolve per row of a matrix with one kernel: one contraction of windows
    def f(X, w):
        return sum(vnp.sum(vnp.convolve(X[r], w, "valid") ** 2) for r in range(X.shape[0]))
    r = rng(4)
    e = check(f, (r.standard_normal((6, 20)), r.standard_normal(3)), (0, 1))
    assert count(e.stages["batch"], P.correlate) == 0  # (batched: windows of all rows)


def test_correlate_float32_keeps_its_dtype():
    x, w = rng(5).standard_normal(50).astype(np.float32), np.ones(4, np.float32)
    out = vg.jit(lambda x, w: vnp.correlate(x, w))(x, w)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.correlate(x, w), rtol=1e-5)


def filter_bank(img, F):
    p = F.shape[1]
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    feats = vnp.stack([vnp.tensordot(F, img[i:i + p, j:j + p], axes=2)
                       for i in range(H) for j in range(W)])
    return vnp.sum(vnp.maximum(feats, 0.0) ** 2)


def test_patches_against_a_filter_bank_are_copied_once():
    # per-offset terms would be outer products over overlapping views: one contiguous copy
    # of the patches and one product instead (im2col), in the forward and for F's gradient
    r = rng(8)
    e = check(filter_bank, (r.standard_normal((7, 8)), r.standard_normal((4, 3, 3))), (0, 1))
    g = e.stages["final"]
    assert count(g, P.relayout) == 1, vg.ir.pretty(g)
    assert count(g, P.einsum) + count(g, P.muladd) <= 4, vg.ir.pretty(g)


def test_the_image_cotangent_of_copied_patches_adds_contiguous_blocks():
    # strided_add over the overlapping patches: the product writes the offsets first, so each
    # of the p*p adds reads one contiguous (H, W) block, not every (p*p)-th element
    r = rng(8)
    e = check(filter_bank, (r.standard_normal((7, 8)), r.standard_normal((4, 3, 3))), (0, 1))
    g = e.stages["final"]
    adds = [q for q in g.eqns if q.prim is P.strided_add]
    assert adds and all(q.params["dims"][0][0] == 3 and q.params["dims"][1][0] == 3
                        for q in adds), vg.ir.pretty(g)


def _added_elementwise(base, v, start, dims):
    out = base.copy()
    v = np.broadcast_to(v, [n for n, _ in dims])
    for pos in np.ndindex(*v.shape):
        p = list(start)
        for i, (_, st) in zip(pos, dims):
            for a, x in enumerate(st):
                p[a] += i * x
        out[tuple(p)] += v[pos]
    return out


@pytest.mark.parametrize("shape,start,dims", [
    ((9, 10), (0, 0), ((3, (1, 0)), (3, (0, 1)), (7, (1, 0)), (8, (0, 1)))),  # offsets first
    ((9, 10), (0, 0), ((7, (1, 0)), (8, (0, 1)), (3, (1, 0)), (3, (0, 1)))),  # offsets last
    ((10, 12), (8, 0), ((4, (-2, 0)), (3, (0, 3)), (2, (1, 0)))),  # negative step, stride 3
    ((6, 7), (0, 1), ((3, (0, 1)), (2, (1, 0)), (3, (0, 0)))),     # transposed, broadcast
    ((8,), (7,), ((3, (-1,)), (4, (-1,)))),                        # reversed windows
    ((5, 6), (1, 0), ((1, (0, 0)), (4, (0, 1)), (3, (1, 0)))),     # a unit axis
    ((10, 4), (0, 0), ((3, (3, 0)), (4, (1, 0)), (4, (0, 1)))),    # stride 3, window 4
    ((7, 5), (0, 0), ((4, (1, 1)), (3, (1, 0)))),                  # diagonal: no basic slice
    ((3, 4), (1, 2), ((1, (0, 0)), (1, (1, 0)))),                  # one element
    ((3, 4, 5), (0, 0, 0), ((2, (0, 0, 2)), (3, (0, 0, 1)), (3, (1, 0, 0)), (4, (0, 1, 0)),
                            (1, (0, 0, 1)))),          # np.gradient's edges: a looped axis, a unit one
    ((3, 4), (0, 2), ((3, (1, 0)), (2, (0, 0)))),                  # a broadcast axis summed
])
def test_strided_add_equals_elementwise_accumulation(shape, start, dims):
    # the per-offset adds (basic slices where they are, strided views where not) accumulate
    # every repeated position, as the element-by-element definition does
    r = rng(14)
    base, v = r.standard_normal(shape), r.standard_normal([n for n, _ in dims])
    np.testing.assert_allclose(P.strided_add.impl(base, v, start=start, dims=dims),
                               _added_elementwise(base, v, start, dims), rtol=1e-12)


def flat_windows(x, W, s):
    k = W.shape[0] // x.shape[1]
    rows = vnp.stack([x[t:t + k].reshape(-1) for t in range(0, x.shape[0] - k + 1, s)])
    return vnp.sum(vnp.tanh(rows @ W))


@pytest.mark.parametrize("s", [1, 2, 3])
def test_windows_of_few_channels_are_copied_once_for_one_product(s):
    # k products of (n, c) @ (c, f) with few channels c would each pass over the (n, f)
    # output: the windows copied once (im2col) and one (n, k*c) @ (k*c, f) product instead,
    # the copy shared by the forward and the weight's cotangent
    r = rng(15)
    e = check(flat_windows, (r.standard_normal((23, 2)), r.standard_normal((8, 6)), s), (0, 1))
    g = e.stages["final"]
    assert count(g, P.relayout) == 1, vg.ir.pretty(g)
    assert count(g, P.einsum) + count(g, P.muladd) <= 3, vg.ir.pretty(g)


def _random_region(r):
    """A random strided region inside a random array: steps of -2..2 on each axis."""
    nd = int(r.integers(1, 4))
    dims = []
    for _ in range(int(r.integers(1, 5))):
        n = int(r.integers(1, 4))
        dims.append((n, tuple(int(r.integers(-2, 3)) for _ in range(nd))))
    lo = [sum(min(0, (n - 1) * st[a]) for n, st in dims) for a in range(nd)]
    hi = [sum(max(0, (n - 1) * st[a]) for n, st in dims) for a in range(nd)]
    start = tuple(-x + int(r.integers(0, 2)) for x in lo)
    shape = tuple(s + h + 1 + int(r.integers(0, 2)) for s, h in zip(start, hi))
    return shape, start, tuple(dims)


def test_strided_add_equals_elementwise_accumulation_on_random_regions():
    r = rng(16)
    for _ in range(300):
        shape, start, dims = _random_region(r)
        base, v = r.standard_normal(shape), r.standard_normal([n for n, _ in dims])
        np.testing.assert_allclose(P.strided_add.impl(base, v, start=start, dims=dims),
                                   _added_elementwise(base, v, start, dims), rtol=1e-12,
                                   atol=1e-12, err_msg=str((shape, start, dims)))


def test_strided_add_in_place_into_any_layout():
    # the in-place lowering adds into the buffer it is given: C-ordered (one ndarray view per
    # add, from a cached plan) or not (as_strided views), with the same result; and a 2-D
    # region of a flat buffer whose rows are not a reshape of it (np.gradient-like edges)
    from vecgrad.primitives.gathers import _add_into
    r = rng(17)
    cases = [_random_region(r) for _ in range(200)]
    cases.append(((3966,), (0,), ((62, (64,)), (62, (1,)))))
    for shape, start, dims in cases:
        base, v = r.standard_normal(shape), r.standard_normal([n for n, _ in dims])
        want = _added_elementwise(base, v, start, dims)
        for out in (np.array(base), np.asfortranarray(base)):
            got = _add_into(out, v, start, dims)
            assert got is out
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                       err_msg=str((shape, start, dims)))


def conv2d_pixels(img, W):
    p = W.shape[2]
    H, Wd = img.shape[1] - p + 1, img.shape[2] - p + 1
    out = vnp.zeros((W.shape[0], H, Wd))
    for i in range(H):
        for j in range(Wd):
            out[:, i, j] = vnp.tensordot(W, img[:, i:i + p, j:j + p], axes=3)
    return vnp.sum(vnp.tanh(out))


def test_patches_whose_offsets_would_each_be_copied_are_copied_once():
    # (C, p, p) patches against F filters: split over one window axis, each offset's view
    # still overlaps and would be copied; one copy of all patches and one product instead
    r = rng(17)
    e = check(conv2d_pixels, (r.standard_normal((2, 9, 9)), r.standard_normal((8, 2, 3, 3))),
              (0, 1))
    g = e.stages["final"]
    assert count(g, P.relayout) == 1, vg.ir.pretty(g)


def multi_lag(x, c):
    acc = 0.0
    for m, L in enumerate((1, 2, 4)):
        for t in range(L, x.shape[0]):
            acc = acc + c[m] * vnp.sum((x[t] - x[t - L]) ** 2)
    return acc


def test_positions_affine_in_a_few_runs_read_views_not_gathers():
    # the (t, t - L) pairs of three lags: one run of views per lag, no gather or segment sum
    r = rng(9)
    e = check(multi_lag, (r.standard_normal((20, 3)), np.abs(r.standard_normal(3))), (0, 1))
    g = e.stages["final"]
    assert count(g, P.take) == count(g, P.segment_sum) == 0, vg.ir.pretty(g)


def overlap_add_rows(x, w):
    k = w.shape[0]
    out = vnp.zeros((len(x) + k - 1, x.shape[1]))
    for t in range(len(x)):
        out[t:t + k] += x[t] * w
    return vnp.sum(vnp.tanh(out))


def overlap_add_1d(x, w):
    k = w.shape[0]
    out = vnp.ones(len(x) + k + 1)
    for t in range(len(x)):
        out[t + 1:t + 1 + k] += x[t] * w
    return vnp.sum(vnp.sin(out) * vnp.arange(len(out)))


@pytest.mark.parametrize("f,shapes,prim", [(overlap_add_rows, ((9, 3), (4, 3)), P.strided_add),
                                           (overlap_add_1d, ((12,), (5,)), P.correlate)])
def test_overlapping_additions_of_a_product_never_form_it(f, shapes, prim):
    # out[t:t+k] += x[t] * w: one multiply-add per offset (or one full correlation in 1-D),
    # no (T, k, ...) product
    r = rng(10)
    e = check(f, tuple(r.standard_normal(s) for s in shapes), (0, 1))
    g = e.stages["final"]
    assert count(g, prim) >= 1, vg.ir.pretty(g)
    # (the product would have one axis more than x: positions, offsets, channels)
    assert all(q.out.aval.ndim <= len(shapes[0]) for q in g.eqns), vg.ir.pretty(g)


def exp_windows(x, w):
    k = w.shape[0]
    return sum(vnp.sum(vnp.exp(0.1 * x[t:t + k]) * w) for t in range(len(x) - k + 1))


def test_elementwise_work_on_overlapping_windows_runs_once_per_element():
    # exp(0.1 * x[t:t+k]) for every t: exp over x once (not k times), then the windows
    e = check(exp_windows, (rng(12).standard_normal(30), rng(13).standard_normal(5)), (0, 1))
    g = e.stages["final"]
    assert all(q.out.aval.ndim == 1 for q in g.eqns if q.prim in (P.exp, P.mul)), \
        vg.ir.pretty(g)


# Windows of every row of an array (the window axis steps by one element through the
# flattened array): one correlation of the flattened array, read at each row's positions.

def rows_convolved(X, w):
    return sum(vnp.sum(vnp.convolve(X[r], w, "valid") ** 2) for r in range(X.shape[0]))


def rows_convolved_full(X, w):
    return sum(vnp.sum(vnp.sin(vnp.convolve(X[r], w, "full"))) for r in range(X.shape[0]))


def rows_moving_sum(X, k):
    out = vnp.zeros((X.shape[0], X.shape[1] - k + 1))
    for r in range(X.shape[0]):
        for t in range(X.shape[1] - k + 1):
            out[r, t] = vnp.sum(X[r, t:t + k])
    return vnp.sum(vnp.tanh(out))


def rows_reversed_taps(X, w):
    k = w.shape[0]
    return sum(vnp.tanh(w @ X[r, t:t + k][::-1]) * (r + 1)
               for r in range(X.shape[0]) for t in range(X.shape[1] - k + 1))


def channels_of_a_batch(X, w):
    # (batch, channel, time): every (b, c) series against one kernel, columns 1: only
    k = w.shape[0]
    return sum(vnp.sum(vnp.exp(-(w @ X[b, c, t:t + k]) ** 2))
               for b in range(X.shape[0]) for c in range(X.shape[1])
               for t in range(1, X.shape[2] - k + 1))


ROW_CASES = [
    ("rows_convolved", rows_convolved,
     lambda r: (r.standard_normal((5, 30)), r.standard_normal(4)), (0, 1)),
    ("rows_convolved_full", rows_convolved_full,
     lambda r: (r.standard_normal((4, 12)), r.standard_normal(3)), (0, 1)),
    ("rows_moving_sum", rows_moving_sum, lambda r: (r.standard_normal((3, 17)), 5), 0),
    ("rows_reversed_taps", rows_reversed_taps,
     lambda r: (r.standard_normal((3, 11)), r.standard_normal(3)), (0, 1)),
    ("channels_of_a_batch", channels_of_a_batch,
     lambda r: (r.standard_normal((2, 3, 15)), r.standard_normal(4)), (0, 1)),
]


@pytest.mark.parametrize("name,f,make,argnums", ROW_CASES, ids=[c[0] for c in ROW_CASES])
def test_windows_of_every_row_become_one_correlation(name, f, make, argnums):
    e = check(f, make(rng(11)), argnums)
    g = e.stages["final"]
    assert count(g, P.correlate) >= 1, vg.ir.pretty(g)
    # no per-offset products: the forward and each gradient are one correlation each
    assert count(g, P.correlate) <= 3, vg.ir.pretty(g)
    assert count(g, P.muladd) == count(g, P.strided_add) - 1 == 0, vg.ir.pretty(g)


def test_long_windows_of_short_rows_stay_split():
    # rows of 12 with windows of 9: a flat correlation would compute 8 wasted outputs per 4
    # read ones, so the windows are split by offset as before (and the result is the same)
    e = check(rows_convolved, (rng(12).standard_normal((6, 12)), rng(13).standard_normal(9)),
              (0, 1))
    assert count(e.stages["final"], P.correlate) == 0, vg.ir.pretty(e.stages["final"])
