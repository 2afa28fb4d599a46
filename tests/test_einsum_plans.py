"""Every contraction plan the codegen may pick equals np.einsum, on random two-operand specs."""
from __future__ import annotations

import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vecgrad.backends.numpy import planner as L
from vecgrad.backends.numpy import viewplans as VP


@st.composite
def specs(draw):
    letters = string.ascii_lowercase[:draw(st.integers(1, 5))]
    sizes = {c: draw(st.integers(1, 4)) for c in letters}
    a = "".join(draw(st.permutations(letters))[:draw(st.integers(1, len(letters)))])
    b = "".join(draw(st.permutations(letters))[:draw(st.integers(1, len(letters)))])
    pool = sorted(set(a + b))
    out = "".join(draw(st.permutations(pool))[:draw(st.integers(0, len(pool)))])
    shapes = [tuple(sizes[c] for c in a), tuple(sizes[c] for c in b)]
    return a, b, out, shapes


@settings(max_examples=300, deadline=None)
@given(specs(), st.integers(0, 2**31 - 1))
def test_every_plan_matches_numpy(spec, seed):
    a, b, out, shapes = spec
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(f"{a},{b}->{out}", *xs)
    plans = [L._plan_matmul(a, b, out, shapes), L._plan_lead_batch(a, b, out, shapes),
             L._plan_loop_aligned(a, b, out, shapes), L._plan_broadcast_lead(a, b, out, shapes),
             L._plan_batched_broadcast(a, b, out, shapes),
             L.plan_einsum(f"{a},{b}->{out}", shapes)]
    # and on slices of bigger arrays (the per-offset views of windows): not C-contiguous
    views = [np.pad(x, 1)[tuple(slice(1, 1 + n) for n in x.shape)] for x in xs]
    # and on arrays stored in another axis order (a matmul's result read in another letter
    # order: a transposed view)
    flipped = [np.asfortranarray(x) for x in xs]
    for plan in plans:
        if plan is not None:
            for args in (xs, views, flipped, [xs[0], flipped[1]], [flipped[0], xs[1]]):
                got = plan(*args)
                assert got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_the_matmul_plan_reads_each_operand_in_its_own_memory_order():
    # 'bef,b->ef' (one window offset of a multi-channel 2-D convolution) is k @ x.reshape(b,
    # ef), not x moved to (e, f, b) first: on a slice that move is a transposing copy
    from vecgrad.backends.numpy.costs import in_order
    assert in_order("bef", "", "b", "ef") and in_order("bef", "", "ef", "b") is False
    assert in_order("ef", "", "ef", "") is False  # (one group empty: nothing to swap)
    assert in_order("ij", "", "i", "j") and not in_order("ji", "", "i", "j")
    x = np.random.default_rng(0).standard_normal((4, 8, 8))[:, 1:7, 1:7]
    k = np.arange(4.0)
    np.testing.assert_allclose(L._plan_matmul("bef", "b", "ef", [x.shape, k.shape])(x, k),
                               np.einsum("bef,b->ef", x, k), rtol=1e-12)


def test_a_product_with_a_transposed_big_factor_runs_in_that_factors_memory_order():
    # gmm's 'ab,abc->abc' with abc a batched matmul's (c, i, b) result seen as (b, c, i):
    # NumPy iterates mismatched layouts in C order with inner loops of 2; in the big
    # factor's order the inner loop is its contiguous axis, and the result is that view
    rng = np.random.default_rng(0)
    g, y = rng.standard_normal((1000, 5)), rng.standard_normal((5, 2, 1000)).transpose(2, 0, 1)
    got = L._plan_matmul("ab", "abc", "abc", [g.shape, y.shape])(g, y)
    np.testing.assert_array_equal(got, g[:, :, None] * y)
    assert got.transpose(1, 2, 0).flags.c_contiguous
    y2 = np.ascontiguousarray(y)  # (C-ordered: NumPy's own product, a C-ordered result)
    assert L._plan_matmul("ab", "abc", "abc", [g.shape, y.shape])(g, y2).flags.c_contiguous


def test_a_summed_leading_axis_alone_is_one_matmul_not_a_batch_of_outer_products():
    # sum_t outer(d_t, h_t), a weight's gradient from stacked steps: one (b, T) @ (T, c)
    shapes = [(1000, 64), (1000, 32)]
    assert L._plan_lead_batch("ab", "ac", "bc", shapes) is None
    assert L._plan_lead_batch("abd", "acd", "bc", [(10, 4, 3), (10, 5, 3)]) is not None


def test_an_axis_summed_in_the_big_operand_alone_is_summed_before_the_matmul():
    # sum_b g[b,c,i] Q[c,i,j] (a gradient through a broadcast): the big operand is reduced
    # over b first, in place, not run through NumPy's einsum loop over all of (b, c, i, j)
    shapes = [(1000, 25, 10), (25, 10, 10)]
    assert not L._matvec_needing_copy("bci", "cij", "cj", shapes)
    assert L._matvec_needing_copy("bci", "ci", "cb", [(1000, 25, 10), (25, 10)])  # unchanged


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,axes", [((30, 4), (0,)), ((5, 6, 7), (0,)), ((5, 6, 7), (0, 1)),
                                        ((3, 1), (0,)), ((1, 5), (0,)), ((4, 9), (1,))])
def test_sums_over_leading_or_last_axes_by_blas(shape, axes, dtype):
    """reduce_sum and one-operand einsum over the leading axes (a product of ones with the
    rows) or the last axis: NumPy's sums, dtype and shape, on C-ordered, Fortran-ordered and
    transposed operands."""
    from vecgrad import primitives as P
    from vecgrad.backends.numpy.table import lower
    from vecgrad.ir import Aval
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    letters = "abc"[:len(shape)]
    kept = "".join(c for i, c in enumerate(letters) if i not in axes)
    fs = [lower(P.reduce_sum, {"axes": axes}, [Aval(shape, np.dtype(dtype))]),
          lower(P.einsum, {"spec": f"{letters}->{kept}"}, [Aval(shape, np.dtype(dtype))])]
    for xx in (x, np.asfortranarray(x), x.T.copy().T):
        want = np.sum(xx, axis=axes)
        for f in fs:
            got = f(xx)
            assert got.dtype == dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("spec,shapes", [("ab,b->a", [(6, 5), (5,)]), ("a,ab->b", [(6,), (6, 5)]),
                                         ("ba,bc->ac", [(4, 3), (4, 5)]), ("a,a->", [(7,), (7,)]),
                                         ("ab,cb->ac", [(3, 4), (5, 4)]),
                                         ("ba,cb->ac", [(4, 3), (5, 4)])])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_small_products_run_as_np_dot(spec, shapes, dtype):
    # a small contraction is np.dot of the operands or their transposed views (np.einsum
    # parses its spec on every call): the same values and dtype as np.einsum, also on views
    (a, b), out = spec.split("->")[0].split(","), spec.split("->")[1]
    assert L._plan_dot(a, b, out, [np.dtype(dtype)] * 2) is not None
    rng = np.random.default_rng(0)
    xs = [(rng.standard_normal(s) + 0j * (dtype == np.complex128)).astype(dtype) for s in shapes]
    plan = L.plan_einsum(spec, shapes, [np.dtype(dtype)] * 2)
    for args in (xs, [np.pad(x, 1)[tuple(slice(1, 1 + n) for n in x.shape)] for x in xs]):
        got, want = plan(*args), np.einsum(spec, *args)
        assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_no_dot_plan_for_ints_sums_or_reordered_results():
    f8 = [np.dtype(np.float64)] * 2
    assert L._plan_dot("ab", "b", "a", [np.dtype(np.int64)] * 2) is None
    assert L._plan_dot("ab", "bc", "ca", f8) is None  # (the result transposed)
    assert L._plan_dot("abc", "c", "ab", f8) is None
    assert L._plan_dot("ab", "ab", "", f8) is None  # (two letters contracted)
    assert L._plan_dot("ab", "c", "ac", f8) is None  # (no letter contracted)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
@pytest.mark.parametrize("spec,shapes", [
    ("a,i->ai", [(40,), (7,)]), ("a,i->ia", [(3,), (50,)]), ("ab,c->abc", [(4, 5), (3,)]),
    ("c,ab->abc", [(3,), (4, 5)]), ("a,bc->bca", [(9,), (2, 8)]), ("a,i->ai", [(3,), (7,)])])
def test_outer_products_by_blas_equal_numpy_exactly(spec, shapes, dtype):
    """An outer product of 8 rows or more runs as np.dot(column, row): each entry is one
    product, the same as NumPy's (bit for bit); on views and mixed dtypes, NumPy's own."""
    (a, b), out = L.parse_spec(spec)
    rng = np.random.default_rng(1)
    xs = [(rng.standard_normal(s) * 10).astype(dtype) for s in shapes]
    plan = L._plan_outer(a, b, out, shapes)
    rows = int(np.prod(shapes[0] if out.startswith(a) else shapes[1]))
    assert (plan is not None) == (rows >= L.OUTER_ROWS)
    run = L.plan_einsum(spec, shapes, [x.dtype for x in xs])
    want = np.einsum(spec, *xs)
    for ys in (xs, [np.pad(x, 1)[tuple(slice(1, 1 + n) for n in x.shape)] for x in xs],
               [xs[0], xs[1].astype(np.complex64 if xs[1].dtype.kind == "c" else np.float32)]):
        got = run(*ys)
        assert got.shape == want.shape and got.dtype == np.einsum(spec, *ys).dtype
        np.testing.assert_array_equal(got, np.einsum(spec, *ys))


def test_no_outer_plan_for_shared_summed_or_scalar_letters():
    assert L._plan_outer("a", "a", "a", [(9,), (9,)]) is None
    assert L._plan_outer("ab", "c", "ac", [(9, 2), (3,)]) is None
    assert L._plan_outer("ab", "c", "bac", [(9, 2), (3,)]) is None
    assert L._plan_outer("", "ab", "ab", [(), (9, 9)]) is None


def test_views_that_read_elements_twice_take_the_einsum_loop():
    # windows of an image (sliding_window_view, as the windows rewrites leave them uncopied)
    # are not reshaped for a matmul (which would copy every window): the loop reads them
    from numpy.lib.stride_tricks import sliding_window_view
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((30, 30)), rng.standard_normal((34, 34))
    win = sliding_window_view(b, (30, 30))
    calls = []
    few = VP.few_uses(L.einsum_work("bc,debc->deb", [a.shape, win.shape]), [a.shape, win.shape])
    assert few == (False, True)  # (each window element is used once)
    run = VP.unless_overlapping(lambda x, y: calls.append("plan") or np.einsum(
        "bc,debc->deb", x, y), lambda x, y: calls.append("loop") or np.einsum(
        "bc,debc->deb", x, y), few)
    np.testing.assert_allclose(run(a, win), np.einsum("bc,debc->deb", a, win))
    run(a, np.ascontiguousarray(win))
    run(a[1:, 1:], win[:, :, 1:, 1:])  # (a view of the windows: still read twice)
    assert calls == ["loop", "plan", "loop"]
    assert not VP.reads_twice(b[1:, ::2]) and VP.reads_twice(win)
    plan = L.plan_einsum("bc,debc->deb", [a.shape, win.shape], [a.dtype, win.dtype])
    np.testing.assert_allclose(plan(a, win), np.einsum("bc,debc->deb", a, win), rtol=1e-12)


def test_windows_used_once_per_filter_are_still_copied_for_the_matmul():
    """A convolution's windows (each element used once per filter) are worth one copy for
    BLAS: the overlapping-view rule takes the einsum loop only for operands used fewer than
    FEW_USES times (conv_pool_classifier went 0.8 -> 1.9 ms when every window view did)."""
    from numpy.lib.stride_tricks import sliding_window_view
    x = np.random.default_rng(1).standard_normal((64, 200))
    win, K = sliding_window_view(x, 5, axis=1), np.ones((16, 5))
    shapes = [win.shape, K.shape]
    few = VP.few_uses(L.einsum_work("btk,fk->btf", shapes), shapes)
    assert few == (False, False)
    assert VP.unless_overlapping(np.matmul, np.matmul, few) is np.matmul


@pytest.mark.parametrize("spec, shapes", [
    ("bdce,doc->bdoe", [(3, 4, 2, 7), (4, 5, 2)]),  # a grouped convolution's tap
    ("bdoe,doc->bdce", [(3, 4, 5, 7), (4, 5, 2)]),  # its input cotangent
    ("doc,bdce->bdoe", [(4, 5, 2), (3, 4, 2, 7)]),
    ("abij,bjk->abik", [(2, 3, 4, 5), (3, 5, 6)]),
    ("bij,abjk->abik", [(3, 4, 5), (2, 3, 5, 6)]),
    ("bdcfe,dcfo->bdeo", [(2, 3, 4, 2, 5), (3, 4, 2, 6)]),  # two contracted letters
    ("bdec,dco->bdeo", [(2, 3, 5, 4), (3, 4, 6)]),
])
def test_batched_broadcast_matmul_equals_einsum(spec, shapes):
    """np.matmul broadcasting over shared batch letters (costs.batched_broadcast): found
    for these specs, equal to np.einsum on contiguous operands, slices and transposed
    storage."""
    (a, b), out = spec.split("->")[0].split(","), spec.split("->")[1]
    plan = L._plan_batched_broadcast(a, b, out, shapes)
    assert plan is not None
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(sh) for sh in shapes]
    want = np.einsum(spec, *xs)
    views = [np.pad(x, 1)[tuple(slice(1, 1 + n) for n in x.shape)] for x in xs]
    for args in (xs, views, [np.asfortranarray(x) for x in xs]):
        np.testing.assert_allclose(plan(*args), want, rtol=1e-12, atol=1e-12)


def test_no_batched_broadcast_without_a_shared_batch_letter():
    assert L._plan_batched_broadcast("bca", "fc", "abf", [(2, 3, 4), (5, 3)]) is None
    assert L._plan_batched_broadcast("ij", "jk", "ik", [(2, 3), (3, 4)]) is None
    assert L._plan_batched_broadcast("bij", "bjk", "ikb", [(2, 3, 4), (2, 4, 5)]) is None


@pytest.mark.parametrize("spec", ["bdce,doc->bdoe", "bdoe,doc->bdce"])
def test_grouped_taps_are_modelled_cheapest_as_batched_broadcast(spec):
    """A grouped convolution's tap (8 samples, 4 groups of 4 channels, 296 steps): the
    einsum loop has no BLAS and the matmul plan copies x into batch-major order; measured
    15 us by np.matmul's broadcast against 33-460 us (loop) and 0.7-1.2 ms (mm)."""
    from vecgrad import kernels
    from vecgrad.backends.numpy import costs
    shapes = [(8, 4, 4, 296), (4, 4, 4)]
    m = kernels.REFERENCE
    cost = {n: costs.einsum_plan(n, spec, shapes, [np.dtype("f8")] * 2, m)
            for n in L._candidates(spec, shapes)}
    assert min(cost, key=cost.get) == "bmm", cost


# (spec, sizes of its letters): each with letters that one operand holds alone
ONE_OPERAND_SUMS = [("a,ab->a", "40,5"), ("ab,b->b", "40,5"), ("bai,bij->bj", "3,40,4,5"),
                    ("abc,b->ab", "6,7,3"), ("ab,c->c", "3,4,5"), ("abc,cd->d", "4,5,6,7"),
                    ("ij,kj->", "3,4,5"), ("abcd,bd->bd", "3,4,2,5"), ("ab,abc->abc", "8,3,2")]


def _operands(spec, sizes, rng, dtype):
    (a, b), _ = L.parse_spec(spec)
    dims = dict(zip(sorted(set(a + b), key=(a + b).index), map(int, sizes.split(","))))
    shapes = [tuple(dims[c] for c in t) for t in (a, b)]
    xs = [rng.standard_normal(s) * 4 for s in shapes]
    if np.dtype(dtype).kind == "c":
        xs = [x + 1j * rng.standard_normal(x.shape) for x in xs]
    return shapes, [x.astype(dtype) for x in xs]


@pytest.mark.parametrize("spec,sizes", ONE_OPERAND_SUMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_letters_summed_in_one_operand_are_summed_first_with_numpys_dtype(spec, sizes, dtype):
    """'a,ab->a' and kin: the letters only one operand holds are summed before the product, by
    the reduce_sum kernels (BLAS with ones for floats); every plan gives np.einsum's values and
    dtype, on C-ordered, Fortran-ordered and sliced operands."""
    rng = np.random.default_rng(1)
    shapes, xs = _operands(spec, sizes, rng, dtype)
    want = np.einsum(spec, *xs)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for plan in L._candidates(spec, shapes).values():
        for args in (xs, [np.asfortranarray(x) for x in xs],
                     [np.pad(x, 1)[tuple(slice(1, 1 + n) for n in x.shape)] for x in xs]):
            got = plan(*args)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_a_short_summed_row_goes_to_the_sum_kernel_not_numpys_reduce(monkeypatch):
    # 'a,ab->a' at (1000,), (1000, 5) (the max's gradient in a per-row logsumexp): NumPy's
    # reduce over rows of 5 took 22 us, the BLAS product with ones 3 us
    asked = []
    real = L.sum_kernel
    monkeypatch.setattr(L, "sum_kernel", lambda aval, axes: asked.append(
        (aval.shape, aval.dtype, axes)) or real(aval, axes))
    x, y = np.arange(6.0), np.arange(30.0).reshape(6, 5)
    plan = L._plan_matmul("a", "ab", "a", [x.shape, y.shape])
    np.testing.assert_array_equal(plan(x, y), np.einsum("a,ab->a", x, y))
    plan(x, y)
    assert asked == [((6, 5), np.dtype(np.float64), (1,))]  # (bound once per dtype)


def test_a_gradient_through_a_rowwise_max_matches_central_differences():
    # the max of each row, its gradient the 'a,ab->a' tie-split of the cotangent; and the
    # same program batched over the rows equals the unbatched (per-row) one
    from conftest import central_diff_check

    import vecgrad as vg
    import vecgrad.numpy as vnp

    def lse_rows(v):
        m = vnp.max(v, axis=1, keepdims=True)
        return vnp.sum(m[:, 0] + vnp.log(vnp.sum(vnp.exp(v - m), axis=1)))

    def lse_loop(v):
        out = 0.0
        for i in range(v.shape[0]):
            m = vnp.max(v[i])
            out = out + m + vnp.log(vnp.sum(vnp.exp(v[i] - m)))
        return out
    v = np.random.default_rng(2).standard_normal((300, 5))
    for f in (lse_rows, lse_loop):
        central_diff_check(f, [v])
    np.testing.assert_allclose(vg.grad(lse_loop)(v), vg.grad(lse_rows)(v), rtol=1e-9)
