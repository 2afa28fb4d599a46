"""Pairwise kernels' final graphs: contractions distributed over broadcast differences
(rewrite/distribute.py) and broadcast results laid out with a long axis innermost
(backends/numpy/broadcast_layout.py). Values and gradients against NumPy and central
differences, on several variants of each; graphs inspected for the passes over the
(n, m, d) differences they were meant to remove."""
from __future__ import annotations

import numpy as np
import pytest
from test_passes import assert_equivalent, graph, prims, strip

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends.numpy.broadcast_layout import broadcast_layout
from vecgrad.ir import pretty
from vecgrad.rewrite.simplify import simplify


def _readers_of_big(g, n_big):
    """The equations reading an array of at least n_big elements that is a sub/add result."""
    big = {e.out for e in g.eqns if e.prim in (P.sub, P.add) and e.out.aval.size >= n_big}
    return [e for e in g.eqns if any(a in big for a in e.inputs)]


# ----------------------------------------------------------------- distributing einsums

VARIANTS = [  # (operand letters, difference letters, output, how the difference is made)
    ("ij", "ijk", "jk", lambda x, y: x[:, None, :] - y[None]),
    ("ij", "ijk", "ik", lambda x, y: x[:, None, :] + y[None]),
    ("ij", "ijk", "k", lambda x, y: y[None] - x[:, None, :]),
    ("ji", "ijk", "kj", lambda x, y: x[:, None, :] - y),        # implicit leading broadcast
    ("i", "ikj", "jk", lambda x, y: x[:, :, None] - y.T[None]),
    ("ijl", "ijk", "lk", lambda x, y: x[:, None, :] - y[None]),
]


@pytest.mark.parametrize("case", range(len(VARIANTS)))
def test_contraction_over_broadcast_difference_is_distributed(case):
    sm, sd, out, diff = VARIANTS[case]
    sizes = {"i": 4, "j": 5, "k": 3, "l": 2}

    def f(x, y, w):
        d = diff(vnp.tanh(x), y)
        return P.einsum(w, d, spec=f"{sm},{sd}->{out}")
    shapes = ((4, 3), (5, 3), tuple(sizes[c] for c in sm))
    g0 = graph(f, *shapes)
    g1 = simplify(g0)
    assert not _readers_of_big(g1, 60), strip(pretty(g1))
    assert_equivalent(g0, g1)


def test_squared_distance_and_same_size_operands_are_not_expanded():
    """einsum(d, d) (|x - y|^2) becomes sqdist (computed from the differences), and a
    contraction with another (n, m, d) array keeps reading the difference: their expansion
    would not be backward stable."""
    def f(x, y):
        d = x[:, None, :] - y[None]
        return P.einsum(d, d, spec="ijk,ijk->ij"), P.einsum(vnp.exp(d), d, spec="ijk,ijk->k")
    g1 = simplify(graph(f, (4, 3), (5, 3)))
    assert [e.prim.name for e in _readers_of_big(g1, 60)] == ["exp", "einsum"]
    assert prims(g1).count("sqdist") == 1


def keep_differences(g):
    """simplify without the sqdist rule: the broadcast layout of differences that stay (read
    by other contractions, or by elementwise work) is tested on |x - y|^2 as before."""
    from vecgrad.rewrite.distribute import sqdist_of_differences
    from vecgrad.rewrite.engine import rewrite
    from vecgrad.rewrite.simplify import RULES
    return rewrite(g, [r for r in RULES if r.rewrite is not sqdist_of_differences])


SQDIST_VARIANTS = [  # (the difference, the contraction), each a squared distance
    (lambda x, y: x[:, None, :] - y[None], "ijk,ijk->ij"),
    (lambda x, y: x[:, None, :] - y[None], "ijk,ijk->ji"),
    (lambda x, y: y[None] - x[:, None, :], "ijk,ijk->ij"),
    (lambda x, y: x[:, None, :] - y, "ijk,ijk->ij"),            # implicit leading broadcast
    (lambda x, y: x.T[:, :, None] - y.T[:, None, :], "kij,kij->ij"),   # coordinates first
    (lambda x, y: x[:, :, None] - y.T[None], "ikj,ikj->ji"),
]


@pytest.mark.parametrize("case", range(len(SQDIST_VARIANTS)))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_squared_distances_become_sqdist(case, dtype):
    diff, spec = SQDIST_VARIANTS[case]

    def f(x, y):
        d = diff(vnp.tanh(x), y)
        return vnp.exp(-P.einsum(d, d, spec=spec))
    x, y = (np.random.default_rng(case).standard_normal(s).astype(dtype) for s in ((4, 3),
                                                                                  (5, 3)))
    g0 = graph(f, (4, 3), (5, 3))
    g1 = simplify(g0)
    assert "sqdist" in prims(g1) and not _readers_of_big(g1, 60), strip(pretty(g1))
    assert_equivalent(g0, g1)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    d = diff(np.tanh(x), y)
    np.testing.assert_allclose(vg.jit(f)(x, y), np.exp(-np.einsum(spec, d, d)), rtol=tol)
    assert vg.jit(f)(x, y).dtype == dtype
    vg.check_grads(lambda x, y: vnp.sum(f(x, y)), (x.astype(np.float64), y.astype(np.float64)),
                   argnums=(0, 1))


@pytest.mark.parametrize("shapes", [((6, 2), (5, 2)), ((4, 3), (4, 3)), ((2, 1), (7, 1))])
def test_what_is_not_a_squared_distance_is_left(shapes):
    """Weighted, absolute or one-sided: not sqdist (and the values stay right)."""
    def f(x, y):
        d = x[:, None, :] - y[None]
        return (P.einsum(d, vnp.abs(d), spec="ijk,ijk->ij"),   # |d| d: another operand
                P.einsum(d, d, spec="ijk,ijk->ik"),             # summed over a pair axis
                P.einsum(d, d, spec="ijk,ijk->ijk"))            # nothing summed
    g0 = graph(f, *shapes)
    g1 = simplify(g0)
    assert "sqdist" not in prims(g1)
    assert_equivalent(g0, g1)


def test_sqdist_kernels_agree():
    """Every NumPy kernel of sqdist (cdist, per coordinate, the differences) equals the
    primitive's definition, in float64 and float32, on points far from the origin too."""
    from vecgrad.backends.numpy import pairwise
    from vecgrad.ir import Aval
    r = np.random.default_rng(5)
    for dt, n, m, d, shift in [(np.float64, 7, 5, 3, 0.0), (np.float64, 4, 9, 6, 1e8),
                               (np.float32, 6, 3, 4, 0.0), (np.float64, 1, 3, 2, 0.0)]:
        x = (shift + r.standard_normal((n, d))).astype(dt)
        y = (shift + r.standard_normal((m, d))).astype(dt)
        want = P.sqdist.impl(x, y)
        kernels = [pairwise.diff, pairwise._taps(np.dtype(dt))]
        if dt == np.float64:
            pytest.importorskip("scipy")
            kernels.append(pairwise._cdist())
        kernels.append(pairwise._sqdist([Aval(x.shape, np.dtype(dt)), Aval(y.shape, np.dtype(dt))]))
        for k in kernels:
            got = k(x, y)
            assert got.shape == (n, m) and got.dtype == dt
            np.testing.assert_allclose(got, want, rtol=1e-5 if dt == np.float32 else 1e-12)


def test_squared_distances_stay_exact_far_from_the_origin():
    """Points 1e8 from the origin, 1 apart: the kernel and its gradient keep full accuracy
    (x^2 + y^2 - 2xy would lose all digits of the distance)."""
    r = np.random.default_rng(0)
    x = 1e8 + r.standard_normal((6, 2))
    y = 1e8 + r.standard_normal((5, 2))

    def f(x, y):
        return vnp.sum(vnp.exp(-vnp.sum((x[:, None, :] - y[None]) ** 2, axis=2)))
    d = x[:, None, :] - y[None]
    k = np.exp(-np.sum(d ** 2, axis=2))
    np.testing.assert_allclose(vg.jit(f)(x, y), k.sum(), rtol=1e-13)
    gx, gy = vg.grad(f, argnums=(0, 1))(x, y)
    want = -2 * np.einsum("ij,ijk->ik", k, d)
    # the distributed sums round at the size of x (1e8 * eps ~ 1e-8): within what a rounding
    # of the inputs themselves changes the gradient by
    np.testing.assert_allclose(gx, want, atol=1e-6 * np.abs(want).max() + 1e-7)
    np.testing.assert_allclose(gy, 2 * np.einsum("ij,ijk->jk", k, d),
                               atol=1e-6 * np.abs(want).max() + 1e-7)


def kde(x, data, log_h):
    h = vnp.exp(log_h)
    nll = 0.0
    for i in range(len(x)):
        k = vnp.exp(-vnp.sum((x[i] - data) ** 2, axis=1) / (2 * h ** 2))
        nll = nll - vnp.log(vnp.sum(k) + 1e-12)
    return nll


def kmeans_cost(points, centroids):
    total = 0.0
    for i in range(points.shape[0]):
        total = total + vnp.min(vnp.sum((centroids - points[i]) ** 2, axis=1))
    return total


def rbf_quadratic(x, alpha):
    n = len(x)
    K = vnp.zeros((n, n))
    for i in range(n):
        for j in range(n):
            K[i, j] = vnp.exp(-vnp.sum((x[i] - x[j]) ** 2))
    return alpha @ K @ alpha


PROGRAMS = {
    "kde": (kde, lambda r: (r.standard_normal((40, 3)), r.standard_normal((30, 3)),
                            np.array(0.2)), (0, 1, 2)),
    "kmeans": (kmeans_cost, lambda r: (r.standard_normal((50, 4)),
                                       r.standard_normal((7, 4))), (1,)),
    "rbf": (rbf_quadratic, lambda r: (r.standard_normal((12, 5)), r.standard_normal(12)),
            (0, 1)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_pairwise_programs_never_build_the_differences(name):
    """The gradient's final graph computes the squared distances by sqdist and never makes
    the (n, m, d) differences; the gradient is right (central differences)."""
    f, make, argnums = PROGRAMS[name]
    args = make(np.random.default_rng(1))
    entry, _ = vg.grad(f, argnums=argnums).entry(*args)
    final = entry.stages["final"]
    n, d = args[0].shape
    m = len(args[1]) if args[1].ndim == 2 else n  # (rbf: pairs of x's own rows)
    assert prims(final).count("sqdist") == 1, strip(pretty(final))
    assert max(e.out.aval.size for e in final.eqns) < n * m * d, strip(pretty(final))
    vg.check_grads(f, args, argnums=argnums)


# ----------------------------------------------------------------- broadcast layout

# (the result moved to (d, n, m): einsum then writes its (n, m) output in C order)
LAYOUT_GOLDEN = """\
{ lambda a:f64[300,4] b:f64[200,4] .
  c:f64[300,1,4] = reshape[shape=(300, 1, 4)] a
  d:f64[4,300,1] = relayout[perm=(2, 0, 1)] c
  e:f64[1,200,4] = reshape[shape=(1, 200, 4)] b
  f:f64[4,1,200] = relayout[perm=(2, 0, 1)] e
  g:f64[4,300,200] = sub d f
  h:f64[300,200] = einsum[spec=cab,cab->ab] g g
  i:f64[300,200] = neg h
  j:f64[300,200] = exp i
  k:f64[] = reduce_sum[axes=(0, 1)] j
  in (k) }"""


def test_broadcast_layout_golden_and_equivalent():
    def f(x, y):
        d = x[:, None, :] - y
        return vnp.sum(vnp.exp(-P.einsum(d, d, spec="abc,abc->ab")))
    g0 = keep_differences(graph(f, (300, 4), (200, 4)))
    with vg.config(deterministic=True):
        g1 = broadcast_layout(g0)
    assert strip(pretty(g1)) == LAYOUT_GOLDEN
    assert_equivalent(g0, g1)


@pytest.mark.parametrize("shape,moves", [
    (((60, 1, 3), (1, 50, 3)), True), (((60, 3), (40, 1, 3)), True),
    (((2, 30, 1, 2), (1, 1, 40, 2)), True), (((70, 1, 5), ()), False),
    (((70, 90, 1), (70, 1, 5)), True), (((70, 90, 5), (1, 1, 5)), False)])
def test_broadcast_layout_variants(shape, moves):
    """Operands of several ranks and broadcasts, a scalar, two readers: same values and VJPs
    whichever layout the model picks, and the moved layout when deterministic (not for an
    operand as large as the result, nor a small result)."""
    sa, sb = shape

    def f(x, y):
        d = x * y if not sb else x - y
        n = d.ndim
        letters = "abcd"[:n]
        s = P.einsum(d, d, spec=f"{letters},{letters}->{letters[:-1]}")
        w = P.einsum(d, spec=f"{letters}->{letters[-1]}")
        return vnp.sum(vnp.exp(-s)), w
    g0 = keep_differences(graph(f, sa, sb) if sb else
                          graph(lambda x: f(x, np.float64(1.5)), sa))
    with vg.config(deterministic=True):
        g1 = broadcast_layout(g0)
    assert ("relayout" in prims(g1)) == moves
    assert_equivalent(g0, g1)
    assert_equivalent(g0, broadcast_layout(g0))


def test_broadcast_layout_moves_the_longest_axis_last_for_few_pairs():
    """(1000, 10, 8) differences (k-means with 10 centroids): the 1000 points innermost,
    since (8, 1000, 10) would still run inner loops of 10; values and VJPs unchanged."""
    def f(x, c):
        d = c - x[:, None, :]
        return vnp.sum(vnp.min(P.einsum(d, d, spec="abc,abc->ab"), axis=1))
    g0 = keep_differences(graph(f, (1000, 8), (10, 8)))
    with vg.config(deterministic=True):
        g1 = broadcast_layout(g0)
    (sub,) = [e for e in g1.eqns if e.prim is P.sub]
    assert sub.out.aval.shape == (10, 8, 1000)
    assert_equivalent(g0, g1)


def test_broadcast_layout_leaves_results_other_readers_need():
    """A difference read by an elementwise operation (or returned) keeps its layout."""
    def f(x, y):
        d = x[:, None, :] - y
        return vnp.sum(P.einsum(d, d, spec="abc,abc->ab")) + vnp.sum(vnp.exp(d))
    g0 = keep_differences(graph(f, (300, 4), (200, 4)))
    with vg.config(deterministic=True):
        g1 = broadcast_layout(g0)
    assert "relayout" not in prims(g1)


GMM_LIKE = [((1000, 1, 2), (1, 25, 2), "cij,bcj->bci", True),
            ((700, 1, 3), (1, 9, 3), "cij,bcj->bci", True),
            ((1, 40, 2), (300, 1, 2), "cij,bcj->bci", True),
            ((500, 1, 4), (1, 6, 4), "ij,bcj->bci", False)]


@pytest.mark.parametrize("sa,sb,spec,moves", GMM_LIKE)
def test_broadcast_layout_is_measured_and_either_layout_is_right(sa, sb, spec, moves):
    """gmm's z = Q_k (x_i - mu_k): the (n, K, d) differences read by a batched product and,
    in the gradient, by the product that makes Q's cotangent. Which layout runs them faster
    is measured once per machine and key (the model was off 2-5x on arrays that fit in
    cache); values and VJPs are the same kept or moved (the reference model's choice when
    deterministic: moved but for the 4 x 4 products of 6 components)."""
    from vecgrad import kernels
    k, dd = max(sa[1], sb[1]), sa[2]
    q_shape = (k, dd, dd) if spec.startswith("c") else (dd, dd)

    def f(x, mu, q):
        d = x - mu
        z = P.einsum(q, d, spec=spec)
        return vnp.sum(vnp.tanh(z)), P.einsum(z, d, spec="bci,bcj->cij")
    g0 = keep_differences(graph(f, sa, sb, q_shape))
    with vg.config(deterministic=True):
        moved = broadcast_layout(g0)
    assert ("relayout" in prims(moved)) == moves
    assert_equivalent(g0, moved)
    kernels.history.clear()
    assert_equivalent(g0, broadcast_layout(g0))
    hows = [h for fam, _, _, h in kernels.history if fam == "broadcast_layout"]
    assert hows and set(hows) <= {"measured", "stored"}


def test_broadcast_layout_of_a_big_result_is_the_models():
    """Past MEASURED_MAX elements the orders are not timed while compiling (seconds of
    runs): the model decides."""
    from vecgrad import kernels
    from vecgrad.backends.numpy import broadcast_layout as bl

    def f(x, y):
        d = x[:, None, :] - y
        return vnp.sum(P.einsum(d, d, spec="abc,abc->ab"))
    n = bl.MEASURED_MAX // (3 * 700) + 1
    g0 = keep_differences(graph(f, (n, 3), (700, 3)))
    kernels.history.clear()
    broadcast_layout(g0)
    assert [h for fam, _, _, h in kernels.history if fam == "broadcast_layout"] == ["model"]


# ----------------------------------------------------------------- interleaved cotangents

@pytest.mark.parametrize("step,n", [(2, 6), (3, 9), (2, 4)])
def test_strided_pieces_that_tile_become_one_interleave(step, n):
    """The cotangent of reading x[0::s], ..., x[s-1::s] (an (E, 2) edge array's columns read
    as rows of its flattening) is the pieces interleaved: one concatenate and a reshape, no
    zeros and no strided adds."""
    def f(x):
        return sum(vnp.sum(vnp.tanh(x[j::step] * (j + 1)) ** 2) for j in range(step))
    g0 = simplify(graph(f, (n, 3)))
    e, _ = vg.grad(f).entry(np.ones((n, 3)))
    final = e.stages["final"]
    assert "setitem_add" not in prims(final) and "full" not in prims(final), \
        strip(pretty(final))
    vg.check_grads(f, (np.random.default_rng(2).standard_normal((n, 3)),))
    assert_equivalent(g0, simplify(g0))


def test_interleaving_writes_into_zeros():
    def f(x):
        z = P.setitem_add(np.zeros((6, 3)), vnp.exp(x[3:]), idx=(P.Sl(1, 6, 2), P.Sl(0, 3, 1)))
        z = P.setitem_add(z, vnp.tanh(x[:3]), idx=(P.Sl(0, 6, 2), P.Sl(0, 3, 1)))
        return z * x
    g0 = graph(f, (6, 3))
    g1 = simplify(g0)
    assert prims(g1).count("concatenate") == 1 and "setitem_add" not in prims(g1)
    assert_equivalent(g0, g1)


def test_strided_pieces_that_do_not_tile_keep_their_writes():
    """x[0::2] and x[1::2] of an odd length, or x[0::3] and x[1::3] only: no interleave."""
    for n, step, js in ((5, 2, (0, 1)), (9, 3, (0, 1))):
        def f(x, step=step, js=js):
            return sum(vnp.sum(vnp.tanh(x[j::step]) ** 2) for j in js)
        e, _ = vg.grad(f).entry(np.ones((n, 3)))
        assert "concatenate" not in prims(e.stages["final"])
        vg.check_grads(f, (np.random.default_rng(3).standard_normal((n, 3)),))


def test_edge_array_gradient():
    """for s, d in edges over an (E, 2) int array: the gradient is right and its cotangent
    interleaves the sources' and destinations' parts."""
    def f(x, edges):
        e = 0.0
        for s, d in edges:
            e = e + vnp.sum((x[s] - x[d]) ** 2)
        return e
    r = np.random.default_rng(4)
    x, edges = r.standard_normal((7, 3)), r.integers(0, 7, (12, 2))
    e, _ = vg.grad(f).entry(x, edges)
    assert "setitem_add" not in prims(e.stages["final"])
    d = x[edges[:, 0]] - x[edges[:, 1]]
    want = np.zeros_like(x)
    np.add.at(want, edges[:, 0], 2 * d)
    np.add.at(want, edges[:, 1], -2 * d)
    np.testing.assert_allclose(vg.grad(f)(x, edges), want, rtol=1e-12)


# ----------------------------------------------------------------- segment sums

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,axis,num", [((50, 4), 0, 7), ((3, 40), 1, 5), ((1200,), 0, 30),
                                            ((6, 300, 2), 1, 300)])
def test_every_segment_sum_plan_equals_add_at(shape, axis, num, dtype):
    """Each candidate plan of a static segment sum (backends/numpy/gathers.py) gives np.add.at's
    sums: to rounding, and exactly for float64's add_at and bincount (the same additions in
    the same order)."""
    from vecgrad.backends.numpy.gathers import _segment_plans
    r = np.random.default_rng(5)
    ids = r.integers(0, num, shape[axis])
    v = r.standard_normal(shape).astype(dtype)
    want = np.zeros(shape[:axis] + (num,) + shape[axis + 1:], np.float64)
    np.add.at(np.moveaxis(want, axis, 0), ids, np.moveaxis(v.astype(np.float64), axis, 0))
    plans, csr = _segment_plans(ids, num, shape, axis, np.dtype(dtype))
    assert csr == bool(np.all(np.diff(ids) >= 0) and len(np.unique(ids)) == num)
    names = [p.__name__ for p in plans]
    assert ("add_at" in names) == (dtype == np.float64) and "bincount" in names
    for p in plans:
        got = p(v)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-5 if dtype == np.float32 else 1e-12)
        if dtype == np.float64 and p.__name__ in ("add_at", "bincount"):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
def test_dynamic_scatter_add_along_matches_add_at(dtype):
    """scatter_add_along through a runtime index (an (E, 2) edge array's rows): np.add.at's
    result, for every dtype (float64 takes np.add.at's flat fast path, float32 and complex
    np.bincount, integers np.add.at)."""
    from vecgrad.primitives.sorting import _scatter_add_along
    r = np.random.default_rng(6)
    g = (r.standard_normal((3000, 5)) * 10).astype(dtype)
    idx = r.integers(-40, 40, (3000, 1))
    want = np.zeros((40, 5), np.complex128 if dtype == np.complex128 else np.float64)
    np.add.at(want, idx[:, 0], g)  # (in float64: the float32 sums are compared with it)
    got = _scatter_add_along(g, idx, 0, 40)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-3 if dtype == np.float32 else 0)


# ----------------------------------------------------------------- gathers read in slices

EDGE_PROGRAMS = {
    "spring": lambda x, edges: sum(vnp.sum((x[s] - x[d]) ** 2) for s, d in edges),
    "dot": lambda x, edges: sum(vnp.tanh(x[s] @ x[d]) for s, d in edges),
    "triangle": lambda x, tri: sum(vnp.sum(x[a] * (x[b] - x[c])) for a, b, c in tri),
}


@pytest.mark.parametrize("name", sorted(EDGE_PROGRAMS))
def test_edge_rows_gathered_apart(name):
    """`for s, d in edges` over an int array: one gather per column of the array (not one
    interleaved gather read in strided slices), one scatter per gather in the gradient, no
    concatenation; values and gradients right."""
    f = EDGE_PROGRAMS[name]
    r = np.random.default_rng(8)
    k = 3 if name == "triangle" else 2
    x, edges = r.standard_normal((9, 4)), r.integers(0, 9, (15, k))
    e, _ = vg.grad(f).entry(x, edges)
    final = e.stages["final"]
    assert prims(final).count("take_along") == k and "concatenate" not in prims(final), \
        strip(pretty(final))
    assert prims(final).count("scatter_add_along") == k
    np.testing.assert_allclose(vg.jit(f)(x, edges), f(x, edges), rtol=1e-12)
    vg.check_grads(f, (x, edges))


def test_gather_read_whole_and_in_slices_stays_one_gather():
    def f(x):
        idx = np.array([1, 0, 1, 1]).reshape(4, 1, 1)
        g = P.reshape(P.take_along(P.reshape(vnp.exp(x), shape=(1, 2, 3)), idx, axis=1),
                      shape=(4, 3))
        return vnp.sum(g[0::2] * 2.0) + vnp.sum(vnp.tanh(g))
    g0 = graph(f, (2, 3))
    g1 = simplify(g0)
    assert prims(g1).count("take_along") == 1
    assert_equivalent(g0, g1)


def test_log_sigmoid_is_exact_where_the_sigmoid_rounds():
    """log(sigmoid(x)) at x = -800 (sigmoid underflows to 0: log gave -inf) and x = 40
    (sigmoid rounds to 1: log gave 0), and its gradient 1 - sigmoid(x)."""
    x = np.array([-800.0, -30.0, 0.0, 3.0, 40.0])

    def f(x):
        return vnp.log(vg.nn.sigmoid(x))
    want = -np.logaddexp(0.0, -x)
    np.testing.assert_allclose(vg.jit(f)(x), want, rtol=1e-15)
    assert vg.jit(f)(x)[-1] < 0 and vg.jit(f)(x)[0] == -800.0
    g = vg.grad(lambda x: vnp.sum(f(x)))(x)
    np.testing.assert_allclose(g, 1 / (1 + np.exp(x)), rtol=1e-14)
