"""Batching by dependence (issue 14, item 1): buffers read and written with several index
patterns, read-modify-write, writes through views, and how explain reports what did not merge.

Each program is checked as in test_batch: batched == unbatched (values and VJPs, float64,
rtol 1e-9) and gradients against central differences; structural facts are asserted on the
batched graph (it must not grow with the trip count)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check
from test_batch import assert_size_independent, check, count, entry, eqns, rng, writes

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.notes import Sequential, of


def two_columns(x, v, c):
    n = x.shape[0]
    y = vnp.zeros((n, 2))
    for i in range(n):
        y[i, 0] = vnp.tanh(x[i]) @ v
        y[i, 1] = vnp.sum(x[i] ** 2)
        y[i, 0] = y[i, 0] * c
        y[i] += 1.0
    return vnp.sum(vnp.log(y ** 2 + 1.0))


def test_patterns_into_one_buffer_batch_across_iterations():
    args = (rng().standard_normal((6, 3)), rng(1).standard_normal(3), np.array(0.7))
    e = check(two_columns, args, argnums=(0, 1, 2))
    g = e.stages["simplify"]
    assert count(g, P.tanh) == 1 and count(g, P.log) == 1
    assert len(writes(e.stages["batch"])) <= 4  # one per pattern at most, not per row
    assert_size_independent(lambda n: (two_columns, (rng().standard_normal((n, 3)), args[1],
                                                     args[2])))


def rows_written_then_softmaxed(Q, K):
    R, N = Q.shape[0], K.shape[0]
    w = vnp.empty((R, N))
    for r in range(R):
        for n in range(N):
            w[r, n] = Q[r] @ K[n]
        w[r] = vg.nn.softmax(w[r])  # reads back what this iteration wrote, whole row
    return vnp.sum(w * vnp.arange(R * N).reshape(R, N))


def test_reading_back_a_row_written_entry_by_entry():
    e = check(rows_written_then_softmaxed, (rng().standard_normal((4, 3)),
                                            rng(1).standard_normal((5, 3))), argnums=(0, 1))
    g = e.stages["simplify"]
    assert count(g, P.softmax) == 1 and count(g, P.einsum) <= 2
    assert not writes(g)


def test_accumulating_read_modify_write_leaves_no_ordering_read():
    def f(x, w):
        agg = vnp.zeros((4, 3))
        for i, d in enumerate((0, 2, 2, 1, 0, 2, 3)):
            agg[d] += vnp.tanh(x[i] * w)  # traced as a read of agg[d] (a view) and an add
        return vnp.sum(agg ** 2)
    e = check(f, (rng().standard_normal((7, 3)), rng(1).standard_normal(3)), argnums=(0, 1))
    g = e.stages["batch"]
    assert count(g, P.tanh) == 1 and count(g, P.segment_sum) == 1
    scatters = [q for q in writes(g) if not P.is_basic(q.params["idx"])]
    assert not scatters  # one segment sum, no scatter through integer arrays


def test_subtracting_read_modify_write_accumulates():
    def f(x):
        out = vnp.zeros(3)
        for i, d in enumerate((0, 1, 0, 2, 1)):
            out[d] = out[d] - vnp.sin(x[i])  # x[d] - v is an accumulation of -v
        return vnp.sum(out * vnp.arange(1.0, 4.0))
    e = check(f, (rng().standard_normal(5),))
    assert count(e.stages["batch"], P.sin) == 1


def test_repeated_positions_with_reads_between_stay_ordered():
    def f(x):
        out = vnp.ones(3)
        for i, d in enumerate((0, 1, 0, 2, 0)):
            out[d] = out[d] * vnp.cos(x[i]) + 1.0  # a real recurrence at position 0
        return vnp.sum(out ** 2)
    x = rng().standard_normal(5)
    want = np.ones(3)
    for i, d in enumerate((0, 1, 0, 2, 0)):
        want[d] = want[d] * np.cos(x[i]) + 1.0
    np.testing.assert_allclose(vg.jit(f)(x), np.sum(want ** 2), rtol=1e-12)
    e = check(f, (x,))
    seq = [n for n in of(e.stages["batch"].notes, Sequential) if n.depends]
    assert seq and all("recurrence" in n.reason for n in seq)


@pytest.mark.parametrize("how", ["view", "strided-view", "whole"])
def test_writes_through_views_in_a_loop(how):
    """Issue 10 §2: these crashed in np.lexsort (writes with no integer positions)."""
    def f(x):
        out = vnp.zeros(6)
        for i in range(3):
            if how == "view":
                v = out[:]
                v[2 * i] = x[i] * 2.0
            elif how == "strided-view":
                ev = out[::2]
                ev[i] = vnp.sin(x[i])
            else:
                out[:] = x[i] * (i + 1.0)
        return vnp.sum(out * vnp.arange(6.0))
    x = rng().standard_normal(3)
    want = np.zeros(6)
    for i in range(3):
        if how == "view":
            want[:][2 * i] = x[i] * 2.0
        elif how == "strided-view":
            want[::2][i] = np.sin(x[i])
        else:
            want[:] = x[i] * (i + 1.0)
    np.testing.assert_allclose(vg.jit(f)(x), np.sum(want * np.arange(6.0)), rtol=1e-12)
    check(f, (x,))


def test_old_version_read_after_later_writes():
    def f(x):
        b = vnp.copy(x)
        old = b.copy()  # the same SSA value: later writes to b must not reach it
        b[0] = b[1]
        b[1] = old[0]
        return vnp.sum(b * vnp.arange(1.0, 5.0)) + vnp.sum(old ** 2)
    x = rng().standard_normal(4)
    b = x.copy()
    old = b.copy()
    b[0] = b[1]
    b[1] = old[0]
    np.testing.assert_allclose(vg.jit(f)(x), np.sum(b * np.arange(1.0, 5.0)) +
                               np.sum(old ** 2), rtol=1e-12)
    check(f, (x,))


def test_dead_writes_are_dropped():
    def f(x):
        out = vnp.zeros((4, 2))
        for i in range(4):
            out[i] = x[i] * 3.0  # overwritten below before anything reads it
        for i in range(4):
            out[i] = vnp.exp(x[i])
        return vnp.sum(out)
    e, _ = entry(f, (rng().standard_normal((4, 2)),))
    g = e.stages["batch"]
    assert not any(q.prim is P.mul for q in g.eqns)
    check(f, (rng().standard_normal((4, 2)),))


# -- empty regions (found by HIPS autograd's tests: trace with a large offset, diff of one
# element, array_split into empty pieces, np.gradient's second order): a read or write of no
# elements depends on nothing but the buffer's base, and the base is computed before it

def _empty_write_into_computed(x):
    y = vnp.sin(x) * 2.0  # the buffer's base is computed, not an input
    y[2:2] = vnp.zeros(0)
    y[1:1] += x[3:3]
    return vnp.sum(y * x)


def _empty_reads_in_a_loop(x):
    n = x.shape[0]
    out = vnp.zeros(n)
    for i in range(n):
        out[i] = vnp.sum(x[i:i] ** 2) + vnp.cos(x[i])  # x[i:i] is empty
        out[i:i] = x[i:i]
    return vnp.sum(out ** 2)


@pytest.mark.parametrize("f, args", [
    (_empty_write_into_computed, (rng().standard_normal(5),)),
    (_empty_reads_in_a_loop, (rng(1).standard_normal(4),)),
    (lambda x: vnp.trace(x, offset=10), (rng(2).standard_normal((11, 10)),)),
    (lambda x: vnp.sum(vnp.diff(x, axis=1) ** 2) + vnp.sum(x), (rng(3).standard_normal((3, 1)),)),
    (lambda x: vnp.sum(vnp.concatenate(vnp.array_split(x, 3)) ** 2),
     (rng(4).standard_normal(1),)),
], ids=["computed_base", "loop", "trace_offset", "diff_of_one", "array_split"])
def test_empty_regions_read_and_write_nothing(f, args):
    check(f, args)


@pytest.mark.parametrize("shape, axis", [((2,), None), ((2, 3), 0), ((2, 2, 2), -1)])
def test_second_order_of_np_gradient_with_two_points(shape, axis):
    # the VJP of np.gradient's VJP writes empty interiors (two points: no interior)
    x = rng(5).standard_normal(shape)
    v = rng(6).standard_normal(shape)

    def first(x, v):
        _, pull = vg.vjp(lambda x: vnp.gradient(x, axis=axis), x)
        return pull(v)[0]

    def obj(x):
        return vnp.sum(first(x, v) ** 2)
    g = vg.grad(obj)(x)
    d = rng(7).standard_normal(shape)
    eps = 1e-6
    num = (vg.jit(obj)(x + eps * d) - vg.jit(obj)(x - eps * d)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * d), num, rtol=1e-6, atol=1e-8)


# -- explain: a split is claimed only for a line's own operations --------------------------

def _inplace_rows(x, g):
    h = x.copy()
    for i in range(len(h)):
        h[i] = h[i] - vnp.mean(h[i])  # reads of h[i] on two lines share one key
        h[i] = h[i] / vnp.sqrt(vnp.mean(h[i] ** 2) + 1e-5)
        h[i] = h[i] * g
    return vnp.sum(vnp.tanh(h) * x)


def _nested_uses(W, c):
    loss = 0.0
    for i in range(W.shape[0]):
        loss += -vnp.log(vg.nn.sigmoid(-(W[i] @ c)))  # two `neg`s, one feeding the other
        loss += vnp.sum(c ** 2) * vnp.exp(-vnp.sum(W[i] ** 2))  # an invariant factor
    return loss


@pytest.mark.parametrize("f, args", [
    (_inplace_rows, (rng().standard_normal((7, 4)), rng(1).standard_normal(4))),
    (_nested_uses, (rng(2).standard_normal((9, 3)), rng(3).standard_normal(3))),
])
def test_no_split_claimed_for_lines_that_batched(f, args):
    e = check(f, args, argnums=(0, 1))
    for s in ("batch", "grad.batch"):
        if s in e.stages:
            bad = of(e.stages[s].notes, Sequential)
            assert not bad, bad


# -- windows whose per-offset terms would be outer products (one input channel) -------------

def _one_channel_conv(x, K):
    B, T = x.shape
    F, k = K.shape
    feat = vnp.zeros((B, T - k + 1, F))
    for t in range(T - k + 1):
        feat[:, t, :] = vnp.tanh(x[:, t:t + k] @ K.T)
    return vnp.sum(feat ** 2)


def _one_channel_conv_1d(x, K):
    k = K.shape[1]
    rows = [vnp.outer(x[t:t + k] @ K.T, x[t + k - 1]) for t in range(len(x) - k + 1)]
    return vnp.sum(vnp.tanh(vnp.stack(rows)))


@pytest.mark.parametrize("f, shapes", [(_one_channel_conv, ((6, 20), (8, 3))),
                                       (_one_channel_conv_1d, ((20,), (8, 4)))])
def test_windows_contracted_once_when_offsets_would_be_outer_products(f, shapes):
    args = tuple(rng(i).standard_normal(s) for i, s in enumerate(shapes))
    e = check(f, args, argnums=(0, 1))
    g = e.stages["simplify"]
    ein = eqns(g, P.einsum) + eqns(g, P.muladd)
    assert len(ein) <= 3, vg.ir.pretty(g)  # not one product per window offset
    assert_size_independent(lambda n: (f, (rng().standard_normal(shapes[0][:-1] + (n + 8,)),
                                           args[1])), sizes=(4, 9))


def _edge_rows(x, edges):
    e = 0.0
    for s, d in edges:  # an (E, 2) int array argument: traced indices
        e = e + vnp.sum((x[s] - x[d]) ** 2)
    return e


def test_edges_from_an_int_array_gather_once_and_scatter_into_the_table():
    """Reads x[s] at traced ints from an (E, 2) array batch into gathers of the unbatched
    table (one per column of the array: simplify's slice_of_gather splits the interleaved
    gather that batching makes, whose only readers are its even and odd rows); its gradient
    is one segment sum per gather into x's shape, never an (E, n, f) broadcast."""
    r = rng(3)
    x, edges = r.standard_normal((6, 3)), r.integers(0, 6, (9, 2))
    e = check(_edge_rows, (x, edges))
    g = e.stages["final"]
    assert count(e.stages["batch"], P.take_along) == 1
    assert count(g, P.take_along) == 2 and count(g, P.scatter_add_along) == 2
    big = max(np.prod(q.out.aval.shape) for q in g.eqns)
    assert big <= 2 * 9 * 3, vg.ir.pretty(g)


def _messages_int_arrays(x, W, src, dst):
    agg = vnp.zeros((x.shape[0], W.shape[1]))
    for e in range(len(src)):
        agg[dst[e]] += vnp.tanh(x[src[e]] @ W)
    return vnp.sum(agg ** 2)


def _scalar_rmw_int_array(v, dst, n):
    acc = vnp.ones(n)
    for e in range(len(dst)):
        acc[dst[e]] -= v[e] ** 2
    return vnp.sum(vnp.exp(acc))


def _add_at_loop(x, src, dst):
    agg = vnp.zeros_like(x)
    for e in range(len(src)):
        np.add.at(agg, dst[e], vnp.sin(x[src[e]]))
    return vnp.sum(agg ** 2)


@pytest.mark.parametrize("f, make", [
    (_messages_int_arrays, lambda r: (r.standard_normal((5, 3)), r.standard_normal((3, 2)),
                                      r.integers(0, 5, 11), r.integers(0, 5, 11))),
    (_scalar_rmw_int_array, lambda r: (r.standard_normal(9), r.integers(-4, 4, 9), 4)),
    (_add_at_loop, lambda r: (r.standard_normal((4, 3)), r.integers(0, 4, 8),
                              r.integers(0, 4, 8))),
])
def test_accumulation_at_traced_ints_is_one_segment_sum(f, make):
    """`agg[dst[e]] += m` (and `-=`, and np.add.at) at traced ints from int-array arguments,
    repeated (and negative) destinations: NumPy's value; batched, one scatter-add into the
    buffer's own shape for the whole loop (no loop, no (E, n, f) slab per iteration)."""
    args = make(rng(5))
    want = f(*args)  # NumPy itself (vnp on arrays is NumPy)
    assert np.isclose(vg.jit(f)(*args), want, rtol=1e-12)
    e = check(f, args)
    g = e.stages["final"]
    assert count(g, P.loop) == 0, vg.ir.pretty(g)
    big = max(np.prod(q.out.aval.shape) for q in g.eqns)
    assert big <= 2 * np.prod(args[0].shape) * 4, vg.ir.pretty(g)
    assert count(g, P.scatter_add_along) <= 2


def test_element_read_at_a_traced_int_is_a_copy():
    """t = acc[d]; t += v leaves acc alone (an element read is a NumPy scalar), and a write
    back after acc changed is a write of t at d (not an accumulation into the new acc)."""
    def no_write_back(v, d):
        acc = vnp.zeros(3)
        t = acc[d[0]]
        t += v[0]
        return vnp.sum(acc) + t

    @_with_xp
    def changed_between(xp, v, d):
        acc = xp.zeros(3)
        t = acc[d[0]]
        acc[1] = 5.0
        t += v[0]
        acc[d[0]] = t
        return vnp.sum(acc)

    v, d = np.array([2.0]), np.array([1])
    assert vg.jit(no_write_back)(v, d) == no_write_back(v, d) == 2.0
    for d in (np.array([1]), np.array([0]), np.array([-1])):
        want = changed_between.__wrapped__(np, v, d)
        assert vg.jit(changed_between)(v, d) == want
        central_diff_check(changed_between, [v, d])


def test_row_read_at_a_traced_int_is_a_view_for_plus_equals():
    """r = agg[d]; r += v writes into agg, as NumPy's row view does."""
    def f(x, d):
        agg = vnp.zeros((3, 2))
        r = agg[d[0]]
        r += x
        return vnp.sum(agg * vnp.arange(6.0).reshape(3, 2))
    x, d = np.array([1.0, 2.0]), np.array([2])
    assert vg.jit(f)(x, d) == f(x, d)


def test_out_of_range_traced_destination_raises():
    f = vg.jit(_scalar_rmw_int_array)
    with pytest.raises(IndexError):
        f(np.ones(3), np.array([0, 7, 1]), 4)


def _messages_no_plus_equals(x, w, src, dst):
    agg = vnp.zeros_like(x)
    for e in range(len(src)):
        agg[dst[e]] = agg[dst[e]] + w[e] * vnp.tanh(x[src[e]])
        agg[src[e]] = agg[src[e]] - 0.5 * x[dst[e]]
    return vnp.sum(agg ** 2)


def test_read_modify_write_without_plus_equals_at_traced_ints():
    """agg[d] = agg[d] + m and agg[s] = agg[s] - m at traced ints: NumPy's value (repeated
    destinations), one segment sum per direction, no loop."""
    r = rng(6)
    args = (r.standard_normal((5, 3)), r.standard_normal(12), r.integers(0, 5, 12),
            r.integers(0, 5, 12))
    assert np.isclose(vg.jit(_messages_no_plus_equals)(*args), _messages_no_plus_equals(*args),
                      rtol=1e-12)
    e = check(_messages_no_plus_equals, args, argnums=(0, 1))
    g = e.stages["final"]
    assert count(g, P.loop) == 0 and count(g, P.scatter_add_along) <= 4, vg.ir.pretty(g)


def test_write_of_another_value_at_a_traced_int_is_a_write():
    """agg[d] = 2 agg[d] + x: not a read plus a value, so no accumulation; a write of that
    value at the one traced position (it was refused)."""
    @_with_xp
    def f(xp, x, d):
        agg = xp.ones(3)
        agg[d[0]] = 2.0 * agg[d[0]] + x[0]
        return xp.sum(agg * np.arange(1.0, 4.0))
    x = np.array([0.5, 2.0])
    for d in (np.array([1]), np.array([-3])):
        assert vg.jit(f)(x, d) == f.__wrapped__(np, x, d)
        central_diff_check(f, [x, d])


def _with_xp(f):
    """f(xp, ...) as a function of vecgrad.numpy; f.__wrapped__ takes xp (NumPy's run)."""
    def g(*args):
        return f(vnp, *args)
    g.__wrapped__ = f
    return g


def _forced_euler(theta, x0):
    x, cost = x0, 0.0
    for k in range(12):
        x = x + 0.05 * (vnp.tanh(theta @ x) + np.sin(3.0 * k * 0.05))  # a per-step number
        cost = cost + vnp.sum(x ** 2)
    return cost


def _decay_by_step(x):
    c, out = 0.0, []
    for t in range(len(x)):
        c = (1.0 - 1.0 / (t + 2)) * c + x[t]  # a coefficient that changes every step
        out.append(c)
    return vnp.sum(vnp.stack(out) ** 2)


@pytest.mark.parametrize("f, make, prim", [
    (_forced_euler, lambda r: (0.3 * r.standard_normal((4, 4)), r.standard_normal((4, 2))),
     P.loop),
    (_decay_by_step, lambda r: (r.standard_normal((9, 3)),), P.affine_scan),
])
def test_steps_differing_in_python_numbers_roll(f, make, prim):
    """A recurrence whose steps differ only in a Python number (a forcing term at t * dt, a
    coefficient 1 / (t + 2)) is one rolled loop (or scan) with the numbers as a per-step
    input: the graph does not grow with the trip count; values and gradients are NumPy's."""
    args = make(rng(8))
    assert np.isclose(vg.jit(f)(*args), f(*args), rtol=1e-12)
    e = check(f, args, argnums=tuple(range(len(args))))
    g = e.stages["final"]
    # (constant coefficients: the affine scan is written in closed form, one cumsum)
    scan = count(g, prim) >= 1 or prim is P.affine_scan and count(g, P.cumsum) >= 1
    assert scan and len(g.eqns) < 30, vg.ir.pretty(g)


_NEW_AXIS_FORMS = {
    "row[None, :]": lambda A, t: A[t][None, :],
    "row[:, None]": lambda A, t: A[t][:, None],
    "row[None]": lambda A, t: A[t][None],
    "col[None, :, None]": lambda A, t: A.T[:, t][None, :, None],
    "window[None, ::2]": lambda A, t: A[t, 1:5][None, ::2],
    "row[None][0]": lambda A, t: A[t][None][0],
    "row[None][:, 1:]": lambda A, t: A[t][None][:, 1:],
    "row[[0, 2, 4]]": lambda A, t: A[t][[0, 2, 4]],
    "row[[5, 1, 1]]": lambda A, t: A[t][[5, 1, 1]],
    "A[t, [5, 1, 3]]": lambda A, t: A[t, [5, 1, 3]],
    "A[[5, 1, 1], t]": lambda A, t: A.T[[5, 1, 1], t],
    "take(row, idx)": lambda A, t: vnp.take(A[t], np.array([5, 1, 1])),
    "row[1:][[0, 2]]": lambda A, t: A[t][1:][[0, 2]],
    "row[::-1][[0, 1]]": lambda A, t: A[t][::-1][[0, 1]],
    "col[[1, 3]]": lambda A, t: A.T[:, t][[1, 3]],
}


@pytest.mark.parametrize("form", sorted(_NEW_AXIS_FORMS))
def test_a_new_axis_of_a_loop_indexed_view_batches(form):
    """`A[t][None, :]` is the view `A[t, None, :]`, which moves with t like `A[t]`: the two
    getitems compose into one (they did not, with a new axis: one piece per t and a
    concatenate, forward and backward). A ramp list into a row reads as a slice of it, and
    `A[t, [5, 1, 1]]` as the row A[t] (a view that moves with t) gathered with one fixed
    index (each had one piece per t)."""
    view = _NEW_AXIS_FORMS[form]

    def f(A, w):
        tot = 0.0
        for t in range(A.shape[0]):
            tot += vnp.sum(vnp.tanh(view(A, t) * w[t]) ** 2)
        return tot

    def make(n):
        r = rng(n)
        return f, (r.standard_normal((n, 6)), r.standard_normal(n))
    check(f, make(5)[1], argnums=(0, 1))
    assert_size_independent(make)


def test_index_lists_beside_loop_integers_read_as_numpy():
    """`B[t, [0, 2]]`, `B[t][:, [0, 2]]`, `B[t, :, [0, 2]]` (NumPy puts that list's axis
    first) and `B[:, t][[1, 0]]`: values and gradients as NumPy's, batched or not."""
    for view in (lambda B, t: B[t, [0, 2]], lambda B, t: B[t][:, [0, 2]],
                 lambda B, t: B[t, :, [0, 2]], lambda B, t: B[:, t][[1, 0]]):
        def f(B, view=view):
            tot = 0.0
            for t in range(3):
                tot += vnp.sum(vnp.sin(view(B, t)) * vnp.arange(1.0, 1 + view(B, t).shape[-1]))
            return tot
        check(f, (rng(4).standard_normal((3, 3, 4)),))


def test_composed_basic_indices_read_what_numpy_reads():
    """batch.regions.compose(outer, inner) against x[outer][inner] on random basic indices
    with new axes, negative steps and empty slices; None (kept as two reads) only where a
    new axis is sliced to no elements."""
    from vecgrad.batch.regions import compose
    from vecgrad.index import normalize_index
    r = rng(3)
    pool = [0, 2, -1, slice(None), slice(1, 4), slice(None, None, 2), slice(4, 0, -2), None,
            slice(0, 1), slice(0, 0), slice(None, None, -1)]
    composed = 0
    for shape in [(5, 6, 7), (3, 1, 4), (6,)]:
        x = r.standard_normal(shape)
        for _ in range(1500):
            outer = tuple(pool[i] for i in r.choice(len(pool), r.integers(1, 4)))
            inner = tuple(pool[i] for i in r.choice(len(pool), r.integers(1, 4)))
            try:
                want = x[outer][inner]
            except IndexError:
                continue
            j = compose(tuple(normalize_index(outer, x.shape)),
                        tuple(normalize_index(inner, x[outer].shape)))
            if j is None:
                assert any(k is None for k in outer)
                continue
            got = x[tuple(k.to_slice() if isinstance(k, P.Sl) else k for k in j)]
            assert got.shape == want.shape and np.array_equal(got, want), (outer, inner, j)
            composed += 1
    assert composed > 1500


def test_ints_beside_an_index_list_split_into_a_view_and_a_gather():
    """index.gather_after_ints: x[idx] == x[view][gather] on random indices of integers,
    slices and one index list; None where NumPy would place the list's axes elsewhere (and
    for ramps, which read as one view already)."""
    from vecgrad.index import gather_after_ints, normalize_index
    r = rng(5)
    pool = [0, 2, -1, slice(None), slice(1, 4), slice(None, None, 2), slice(4, 0, -2)]
    lists = [[1, 0, 1], [-1, 0, 2], np.array([[0, 1], [1, 0]]), [3]]
    split = 0
    for shape in [(5, 6, 7), (4, 3), (6,)]:
        x = r.standard_normal(shape)
        for _ in range(1500):
            key = [pool[i] for i in r.choice(len(pool), len(shape))]
            key[int(r.integers(0, len(shape)))] = lists[int(r.integers(0, len(lists)))]
            key = tuple(key)
            try:
                want = x[key]
            except IndexError:
                continue
            parts = gather_after_ints(tuple(normalize_index(key, x.shape)), x.shape)
            if parts is None:
                continue
            got = x[parts[0]][parts[1]]
            assert got.shape == want.shape and np.array_equal(got, want), (key, parts)
            split += 1
    assert split > 1000
