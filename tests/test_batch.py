"""Autobatching (issue 3): loops, maps and buffer writes become whole-array operations.

Every test compares the batched graph with the unbatched one (the graph after `cse`, which is
what `batch` receives): outputs, and gradients by differentiating both graphs with
`vjp_graph`. Structural facts are asserted on the graph after `simplify`: its size must not
grow with the loop trip count, and the right primitives must appear.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.autodiff import vjp_graph
from vecgrad.backends import compile_graph
from vecgrad.examples import seeds as S
from vecgrad.ir import Graph, typecheck
from vecgrad.notes import Batched, Recorded, Recurrence, Sequential, of
from vecgrad.pytree import flatten

RTOL = 1e-9
ATOL = 1e-12
STAGES = ("traced", "cse", "batch", "simplify", "grad", "grad.simplify")


# ----------------------------------------------------------------------------- helpers


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def entry(f, args, argnums=0):
    """The grad entry of a scalar `f`; every stage must typecheck."""
    e, leaves = vg.grad(f, argnums=argnums).entry(*args)
    for s in STAGES:
        typecheck(e.stages[s])
    return e, leaves


def wrt_inputs(g: Graph) -> list[int]:
    return [i for i, v in enumerate(g.inputs) if v.aval.dtype.kind == "f"]


def assert_same_function(g0: Graph, g1: Graph, leaves: list, seed: int = 1) -> None:
    """g0 and g1 compute the same outputs and the same VJPs (random cotangent seeds)."""
    typecheck(g0)
    typecheck(g1)
    o0 = compile_graph(g0).fn(*leaves)
    o1 = compile_graph(g1).fn(*leaves)
    assert len(o0) == len(o1)
    rtol, atol = tolerance(g0)
    for a, b in zip(o0, o1):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
    wrt = wrt_inputs(g0)
    seeds = [_seed(seed, o.aval) for o in g0.outputs]
    v0, v1 = vjp_graph(g0, wrt), vjp_graph(g1, wrt)
    typecheck(v0)
    typecheck(v1)
    r0 = compile_graph(v0).fn(*leaves, *seeds)
    r1 = compile_graph(v1).fn(*leaves, *seeds)
    assert len(r0) == len(r1) == len(g0.outputs) + len(wrt)
    for a, b in zip(r0, r1):
        assert np.result_type(a) == np.result_type(b)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)


def tolerance(g: Graph) -> tuple[float, float]:
    """(rtol, atol) for comparing two compilations of `g`: a float32 program may sum in
    another order once batched, so it is compared at float32's rounding."""
    single = any(np.dtype(v.aval.dtype) == np.float32 for v in g.inputs + g.outputs)
    return (2e-5, 1e-6) if single else (RTOL, ATOL)


def _seed(seed: int, aval) -> np.ndarray:
    """A random cotangent of the output's type (a float64 seed would promote a float32
    program's backward pass)."""
    ct = rng(seed).standard_normal(aval.shape)
    return ct.astype(aval.dtype) if np.dtype(aval.dtype).kind in "fc" else ct


def check(f, args, argnums=0, fd=True):
    """Batched == unbatched (values and gradients), both == central differences. Returns the
    grad entry for structural assertions."""
    e, leaves = entry(f, args, argnums)
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    assert_same_function(e.stages["cse"], e.stages["simplify"], leaves)
    # the compiled gradient (batched pipeline) equals the unbatched graph's gradient
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    g0 = e.stages["cse"]
    starts = np.cumsum([0] + [len(flatten(a)[0]) for a in args])
    wrt = [i for a in nums for i in range(starts[a], starts[a + 1])]
    seeds = [np.ones(())] + [np.zeros(o.aval.shape) for o in g0.outputs[1:]]
    ref = compile_graph(vjp_graph(g0, wrt)).fn(*leaves, *seeds)
    flat = flatten(vg.grad(f, argnums=nums)(*args))[0]
    assert len(flat) == len(ref) - len(g0.outputs) == len(wrt)
    rtol, atol = tolerance(g0)
    for a, b in zip(ref[len(g0.outputs):], flat):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
    if fd:
        vg.check_grads(f, args, argnums=argnums, rtol=1e-6, atol=1e-8)
    return e


def eqns(g: Graph, prim=None) -> list:
    return [e for e in g.eqns if prim is None or e.prim is prim]


def count(g: Graph, prim) -> int:
    return len(eqns(g, prim))


def gathers(g: Graph) -> list:
    """Reads through integer-array indices (real gathers): takes and integer-array reads."""
    return [e for e in eqns(g, P.getitem) if not P.is_basic(e.params["idx"])] + eqns(g, P.take)


def writes(g: Graph) -> list:
    return eqns(g, P.setitem) + eqns(g, P.setitem_add)


def n_simplified(f, args) -> int:
    e, _ = entry(f, args)
    return len(e.stages["simplify"].eqns)


def assert_size_independent(make, sizes=(3, 7)):
    """`make(n)` returns (f, args) with loop trip count n: the simplified graph has the same
    number of equations for both sizes, while the traced graph grows."""
    (f0, a0), (f1, a1) = make(sizes[0]), make(sizes[1])
    e0, _ = entry(f0, a0)
    e1, _ = entry(f1, a1)
    assert len(e1.stages["traced"].eqns) > len(e0.stages["traced"].eqns)  # the loop unrolled
    assert len(e0.stages["simplify"].eqns) == len(e1.stages["simplify"].eqns), (
        vg.ir.pretty(e0.stages["simplify"]) + "\n" + vg.ir.pretty(e1.stages["simplify"]))
    return e0, e1


def stacking_inputs(g: Graph) -> set:
    """Equations that only stack a list of input arrays (one reshape per list element and a
    concatenate): their number grows with the list length by necessity."""
    out = {e.out for e in eqns(g, P.reshape) if e.inputs[0] in g.inputs}
    out |= {e.out for e in eqns(g, P.concatenate) if all(a in out for a in e.inputs)}
    return out


def assert_core_size_independent(make, sizes=(3, 7)):
    """Like assert_size_independent, for a list input: not counting the input stacking."""
    (f0, a0), (f1, a1) = make(sizes[0]), make(sizes[1])
    g0, g1 = (entry(f, a)[0].stages["simplify"] for f, a in ((f0, a0), (f1, a1)))
    n0 = len(g0.eqns) - len(stacking_inputs(g0))
    n1 = len(g1.eqns) - len(stacking_inputs(g1))
    assert n0 == n1, vg.ir.pretty(g0) + "\n" + vg.ir.pretty(g1)
    assert count(g1, P.concatenate) <= 1


def batched_notes(g: Graph) -> list[Batched]:
    return of(g.notes, Batched)


# ------------------------------------------------------------ 1. nested loops over slices


def grid_loops(a, wt):
    _, R, B = a.shape
    out = vnp.zeros((R, B))
    for k in range(B):
        for j in range(R):
            out[j, k] = vnp.sum(vnp.tanh(a[:, j, k]))
    return vnp.sum(out * wt)


def test_grid_reads_are_views():
    a, wt = rng().random((4, 3, 5)), rng(1).standard_normal((3, 5))
    e = check(grid_loops, (a, wt))
    g = e.stages["simplify"]
    assert not gathers(g), "grid reads must not gather by index"
    assert not writes(g), "a buffer covered on a grid must not be scattered"
    assert count(g, P.tanh) == 1
    assert count(e.stages["batch"], P.tanh) == 1
    assert count(e.stages["cse"], P.tanh) == 15


def test_grid_eqns_independent_of_trip_count():
    def make(n):
        return grid_loops, (rng().random((4, n, n + 1)), rng(1).standard_normal((n, n + 1)))
    assert_size_independent(make)


def strided(a):
    _, R = a.shape
    acc = []
    for j in range(1, R, 3):
        acc.append(vnp.sum(vnp.sin(a[:, j]) * a[:, j]))
    return vnp.sum(vnp.stack(acc) ** 2)


def test_strided_range_reads_are_views():
    e = check(strided, (rng().random((4, 11)),))
    g = e.stages["simplify"]
    assert not gathers(g)
    assert count(g, P.sin) == 1
    sls = [k for x in eqns(g, P.getitem) for k in x.params["idx"] if isinstance(k, P.Sl)]
    assert any(s.step == 3 and s.start == 1 for s in sls), vg.ir.pretty(g)


def test_strided_eqns_independent_of_trip_count():
    assert_size_independent(lambda n: (strided, (rng().random((3, 3 * n)),)))


def nested_strided_grid(a):
    _, R, B = a.shape
    s = 0.0
    for k in range(0, B, 2):
        for j in range(R - 1, -1, -1):  # descending: a negative stride
            s = s + vnp.exp(a[:, j, k]) @ a[:, j, k]
    return s


def test_nested_strided_and_descending_grid():
    e = check(nested_strided_grid, (rng().random((3, 4, 5)),))
    g = e.stages["simplify"]
    assert not gathers(g)
    assert count(g, P.exp) == 1
    assert_size_independent(lambda n: (nested_strided_grid, (rng().random((3, n, 2 * n)),)))


IRREGULAR = (0, 3, 4, 9, 2)


def irregular(a):
    return vnp.sum(vnp.stack([vnp.tanh(a[:, j]) * a[0, j] for j in IRREGULAR]) ** 2)


def test_irregular_positions_gather_once():
    e = check(irregular, (rng().random((3, 10)),))
    g = e.stages["simplify"]
    assert count(g, P.tanh) == 1
    assert 1 <= len(gathers(g)) <= 2  # a[:, J] and a[0, J]: one real gather each at most


def test_grid_with_repeated_positions_broadcasts():
    def f(a):  # every column read twice (i outer): a broadcast, not a gather
        return vnp.sum(vnp.stack([vnp.cos(a[:, j]) for i in range(3) for j in range(4)]) * 2.0)
    e = check(f, (rng().random((5, 4)),))
    g = e.stages["simplify"]
    assert not gathers(g)
    assert count(g, P.cos) <= 1


# ----------------------------------------------------------------------- 2. loop invariants


def invariant(a, b):
    N, R = b.shape[1], a.shape[1]
    out = vnp.zeros((N, R))
    for j in range(R):
        for i in range(N):
            out[i, j] = (b[:, i] @ a[:, j]) / vnp.sqrt(vnp.sum(a[:, j] ** 2))
    return vnp.sum(vnp.sin(out))


def test_loop_invariant_norm_computed_once_per_column():
    a, b = rng().random((4, 3)), rng(1).random((4, 5))
    e = check(invariant, (a, b), argnums=(0, 1))
    # the trace is recorded hash-consed: the norm of a[:, j], repeated for every i, is
    # recorded once per column (CSE hoists it out of the i loop as the trace is built)
    assert count(e.stages["traced"], P.sqrt) == 3
    recorded = next(n.count for n in of(e.notes, Recorded))
    assert recorded > len(e.stages["traced"].eqns)
    g = e.stages["simplify"]
    (sq,) = eqns(g, P.norm)  # sqrt(sum(a[:, j] ** 2)), fused
    assert sq.out.aval.size == 3  # one norm per column, not per (i, j) pair
    assert not gathers(g) and not writes(g)


def test_loop_invariant_eqns_independent_of_trip_count():
    def make(n):
        return lambda a, b: invariant(a, b), (rng().random((4, n)), rng(1).random((4, n + 2)))
    assert_size_independent(make)


# ----------------------------------------------------------------------- 3. shared operands


def shared_w_list(W, xs):
    return vnp.sum(vnp.stack([vnp.tanh(W @ x) for x in xs]))


def test_shared_matrix_over_list_is_one_matmul():
    W = rng().standard_normal((3, 4))
    xs = [rng(i).standard_normal(4) for i in range(6)]
    e = check(shared_w_list, (W, xs), argnums=(0, 1))
    g = e.stages["simplify"]
    (ein,) = eqns(g, P.einsum)
    assert ein.out.aval.size == 3 * 6
    assert g.inputs[0] in ein.inputs, "the shared W must be passed unbatched"
    assert count(g, P.broadcast_to) == 0
    assert count(e.stages["cse"], P.einsum) == 6


def test_shared_matrix_over_rows():
    def f(W, X):
        return vnp.sum(vnp.stack([W @ X[i] + 1.0 for i in range(X.shape[0])]) ** 2)
    e = check(f, (rng().standard_normal((3, 4)), rng(1).standard_normal((5, 4))),
              argnums=(0, 1))
    g = e.stages["simplify"]
    uses_w = [q for q in g.eqns if q.prim is P.einsum and g.inputs[0] in q.inputs]
    assert len(uses_w) == 1  # W @ x_i for every i became one contraction with W
    assert not gathers(g) and count(g, P.broadcast_to) == 0
    assert_size_independent(lambda n: (lambda X: f(np.ones((3, 4)), X),
                                       (rng().standard_normal((n, 4)),)))


def test_shared_operand_left_and_right():
    def f(W, V, X):  # W @ x_i @ V: both shared, x batched in the middle
        return sum(vnp.sum(W @ vnp.outer(X[i], X[i]) @ V) for i in range(X.shape[0]))
    args = (rng().standard_normal((2, 3)), rng(1).standard_normal((3, 2)),
            rng(2).standard_normal((4, 3)))
    e = check(f, args, argnums=(0, 1, 2))
    g = e.stages["simplify"]
    assert count(g, P.einsum) <= 3
    assert count(e.stages["cse"], P.einsum) >= 12


def test_sum_of_shared_matvecs():
    """Regression: the gradient graph has einsum(reshape(broadcast_to(ct of shape (1,1,k)))),
    whose size-1 leading axis the einsum-of-broadcast rule lost track of (KeyError)."""
    def f(a, M):
        return vnp.sum(sum(M @ a[:, j] for j in range(3)))
    e = check(f, (rng().standard_normal((3, 5)), rng(1).standard_normal((2, 3))), argnums=(0, 1))
    assert count(e.stages["simplify"], P.einsum) == 1


# --------------------------------------------------------------------------- 4. buffer writes


def grid_write(a):
    N, M = a.shape
    out = vnp.empty((M, N))
    for i in range(N):
        for j in range(M):
            out[j, i] = a[i, j] * a[i, j] + 1.0
    return vnp.sum(vnp.log(out) * vnp.arange(N * M).reshape(M, N))


def test_grid_writes_become_transpose():
    e = check(grid_write, (rng().random((3, 4)),))
    g = e.stages["simplify"]
    assert not writes(g), vg.ir.pretty(g)
    assert not gathers(g)
    assert count(g, P.transpose) + count(g, P.reshape) >= 1
    assert count(e.stages["cse"], P.setitem) == 12
    assert_size_independent(lambda n: (grid_write, (rng().random((n, n + 1)),)))


def block_write(x):
    out = vnp.zeros((7, 6))
    for i in range(1, 7, 2):          # strided rows
        for j in range(2, 5):         # a partial block of columns
            out[i, j] = vnp.sin(x[i, j]) * x[j, i]
    return vnp.sum(out * vnp.cos(vnp.arange(42.0).reshape(7, 6)))


def test_partial_strided_block_write_is_one_write():
    e = check(block_write, (rng().random((7, 7)),))
    g = e.stages["simplify"]
    (w,) = writes(g)  # one write of the whole block, no scatter by index
    assert P.is_basic(w.params["idx"])
    assert range(*w.params["idx"][0]) == range(1, 7, 2)
    assert range(*w.params["idx"][1]) == range(2, 5)
    assert not gathers(g)
    assert count(g, P.sin) == 1


def test_row_block_write_of_vectors():
    def f(x, n):
        out = vnp.zeros((2 * n + 1, 3))
        for i in range(n):
            out[2 * i + 1] = vnp.tanh(x[i])
        return vnp.sum(out ** 3)
    e = check(lambda x: f(x, 4), (rng().standard_normal((4, 3)),))
    (w,) = writes(e.stages["simplify"])
    assert range(*w.params["idx"][0]) == range(1, 9, 2)
    assert_size_independent(lambda n: (lambda x: f(x, n), (rng().standard_normal((n, 3)),)))


OVERLAP = (0, 2, 1, 2, 0, 3)


def overlapping(x):
    out = vnp.zeros((5, 3))
    for t, i in enumerate(OVERLAP):
        out[i] = x[t] * (t + 1.0)
    return out


def test_overlapping_writes_last_write_wins():
    x = rng().standard_normal((len(OVERLAP), 3))
    want = np.zeros((5, 3))
    for t, i in enumerate(OVERLAP):
        want[i] = x[t] * (t + 1.0)
    np.testing.assert_allclose(vg.jit(overlapping)(x), want, rtol=RTOL)
    f = lambda x: vnp.sum(vnp.sin(overlapping(x)))
    e = check(f, (x,))
    # the overwritten rows (t = 0, 1) get no gradient
    gx = vg.grad(f)(x)
    assert np.all(gx[[0, 1]] == 0) and np.all(gx[[2, 3, 4, 5]] != 0)
    assert len(writes(e.stages["simplify"])) <= 1


def test_overlapping_block_writes_partial():
    def f(x):
        out = vnp.ones((6, 4))
        for i in range(4):  # 2x2 blocks shifted by one row: each overlaps the previous
            out[i:i + 2, 1:3] = x[i] * x[i]
        return vnp.sum(vnp.exp(out) * vnp.arange(24.0).reshape(6, 4))
    x = rng().standard_normal((4, 2))
    e = check(f, (x,))
    want = np.ones((6, 4))
    for i in range(4):
        want[i:i + 2, 1:3] = x[i] * x[i]
    np.testing.assert_allclose(vg.jit(f)(x), np.sum(np.exp(want) * np.arange(24.0).reshape(6, 4)),
                               rtol=RTOL)
    assert e is not None


def add_writes(x):
    out = vnp.zeros((4, 3))
    for t, i in enumerate((0, 1, 0, 3, 1)):
        out[i] += x[t] ** 2
    return vnp.sum(vnp.tanh(out))


def test_accumulating_writes_with_repeats():
    e = check(add_writes, (rng().standard_normal((5, 3)),))
    assert count(e.stages["simplify"], P.powc) <= 1


def softmax_in_place(a, wt):
    N, B = a.shape[1], a.shape[2]
    out = vnp.empty((N, N, B))
    for k in range(B):
        for j in range(N):
            for i in range(N):
                out[i, j, k] = a[:, i, k] @ a[:, j, k]
    for k in range(B):
        out[:, :, k] = vg.nn.softmax(out[:, :, k], axis=0)
    return vnp.sum(out * wt)


def test_later_reads_and_softmax_written_back_batch():
    a, wt = rng().random((3, 2, 4)), rng(1).standard_normal((2, 2, 4))
    e = check(softmax_in_place, (a, wt))
    g = e.stages["simplify"]
    assert not writes(g), vg.ir.pretty(g)
    assert not gathers(g)
    assert count(g, P.softmax) <= 1 and count(g, P.exp) <= 1
    assert count(g, P.einsum) <= 2  # the kernel's dot products (+ the weighted final sum)

    def make(n):
        return softmax_in_place, (rng().random((3, n, n + 1)), rng(1).random((n, n, n + 1)))
    assert_size_independent(make)


def test_read_write_back_per_row():
    def f(x):
        y = vnp.copy(x)
        for i in range(x.shape[0]):
            y[i] = vnp.exp(y[i]) / vnp.sum(vnp.exp(y[i]))
        return vnp.sum(y * vnp.arange(x.size).reshape(x.shape))
    e = check(f, (rng().standard_normal((5, 3)),))
    g = e.stages["simplify"]
    assert not writes(g) and not gathers(g)
    assert_size_independent(lambda n: (f, (rng().standard_normal((n, 3)),)))


# ------------------------------------------------------------------------- 5. maps over samples


def kern(r):
    return vnp.tanh(r) * vnp.sum(r ** 2)


def map_rows_comprehension(X):
    return vnp.sum(vnp.stack([kern(r) for r in X]) * vnp.arange(X.size).reshape(X.shape))


def map_rows_map(X):
    return vnp.sum(vnp.array(list(map(kern, X))) ** 2)


def map_list(xs):
    return vnp.sum(vnp.stack([kern(x) for x in xs], axis=1) ** 2)


@pytest.mark.parametrize("f", [map_rows_comprehension, map_rows_map])
def test_map_over_rows(f):
    e = check(f, (rng().standard_normal((5, 3)),))
    g = e.stages["simplify"]
    assert count(g, P.tanh) == 1
    assert count(g, P.concatenate) == 0 and not gathers(g)
    assert_size_independent(lambda n: (f, (rng().standard_normal((n, 3)),)))


def test_map_over_list_of_arrays():
    xs = [rng(i).standard_normal(3) for i in range(5)]
    e = check(map_list, (xs,))
    g = e.stages["simplify"]
    assert count(g, P.tanh) == 1 and count(g, P.reduce_sum) <= 2
    assert_core_size_independent(lambda n: (map_list, ([rng(i).standard_normal(3)
                                                        for i in range(n)],)))


def test_map_stacked_value_is_the_batched_output():
    def f(X):
        return vnp.stack([vnp.exp(r) for r in X])
    e, leaves = vg.jit(f).entry(rng().standard_normal((4, 3)))
    g = e.stages["simplify"]
    assert_same_function(e.stages["cse"], g, leaves)
    assert [x.prim for x in g.eqns] == [P.exp]  # no concatenate, no reshape
    assert g.outputs[0] is g.eqns[0].out


def test_seed002_style_mlp_map():
    def mlp(params, t):
        h = vnp.array([t])
        for W, b in params:
            h = vnp.tanh(W @ h + b)
        return h

    def f(params, xs):
        return vnp.sum(vnp.array([mlp(params, x) for x in xs]) ** 2)
    params = [(rng(0).standard_normal((4, 1)), rng(1).standard_normal(4)),
              (rng(2).standard_normal((1, 4)), rng(3).standard_normal(1))]
    e = check(f, (params, np.linspace(-1, 1, 6)), argnums=(0, 1))
    assert count(e.stages["simplify"], P.tanh) == 2
    assert_size_independent(lambda n: (lambda xs: f(params, xs), (np.linspace(-1, 1, n),)))


# ------------------------------------------------------------------------ 6. reduction chains


def sum_generator(X, v):
    return sum(vnp.sum(vnp.sin(X[i]) * v) for i in range(X.shape[0]))


def sum_acc_loop(X, v):
    acc = vnp.zeros(v.shape)
    for x in X:
        acc = acc + vnp.exp(x) * v
    return vnp.sum(acc ** 2)


def sum_acc_inplace(X, v):
    acc = 0.0
    for x in X:
        acc += vnp.exp(x) @ v
    return acc


@pytest.mark.parametrize("f", [sum_generator, sum_acc_loop, sum_acc_inplace])
def test_reduction_chain_is_one_reduction(f):
    X, v = rng().standard_normal((6, 3)), rng(1).standard_normal(3)
    e = check(f, (X, v), argnums=(0, 1))
    g = e.stages["simplify"]
    assert count(g, P.add) == 0, vg.ir.pretty(g)
    # the sum's start value 0 is not stacked with the terms (a copy of them all)
    assert count(g, P.concatenate) == 0 and count(g, P.stack) == 0, vg.ir.pretty(g)
    assert count(e.stages["cse"], P.add) >= 5
    assert count(g, P.reduce_sum) + count(g, P.einsum) <= 3
    assert_size_independent(lambda n: (lambda X: f(X, v), (rng().standard_normal((n, 3)),)))


def test_sum_of_list_of_arrays():
    xs = [rng(i).standard_normal((2, 3)) for i in range(5)]
    e = check(lambda xs: vnp.sum(vnp.tanh(sum(vnp.cos(x) for x in xs))), (xs,))
    g = e.stages["simplify"]
    assert count(g, P.add) == 0 and count(g, P.cos) == 1


# ------------------------------------------------------------------------ 7. kernel functions


def cosinesim(u, v):
    return vnp.dot(u, v) / (vnp.sqrt(vnp.sum(u ** 2)) * vnp.linalg.norm(v))


def rbf(u, v):
    return vnp.exp(-vnp.sum((u - v) ** 2))


def pairwise(a, b, K):
    out = vnp.empty((b.shape[1], a.shape[1]))
    for j in range(a.shape[1]):
        for i in range(b.shape[1]):
            out[i, j] = K(b[:, i], a[:, j])
    return out


@pytest.mark.parametrize("K", [cosinesim, rbf])
def test_kernel_passed_as_argument(K):
    def f(a, b):
        return vnp.sum(vnp.tanh(pairwise(a, b, K)))
    a, b = rng().random((4, 3)), rng(1).random((4, 5))
    e = check(f, (a, b), argnums=(0, 1))
    g = e.stages["simplify"]
    assert not writes(g) and not gathers(g)

    def inline(a, b):  # the same kernel written inline batches to the same graph size
        out = vnp.empty((b.shape[1], a.shape[1]))
        for j in range(a.shape[1]):
            for i in range(b.shape[1]):
                u, v = b[:, i], a[:, j]
                out[i, j] = (vnp.dot(u, v) / (vnp.sqrt(vnp.sum(u ** 2)) * vnp.linalg.norm(v))
                             if K is cosinesim else vnp.exp(-vnp.sum((u - v) ** 2)))
        return vnp.sum(vnp.tanh(out))
    e2 = check(inline, (a, b), argnums=(0, 1), fd=False)
    assert len(e2.stages["simplify"].eqns) == len(g.eqns)
    assert_size_independent(lambda n: (f, (rng().random((4, n)), rng(1).random((4, n + 1)))))
    notes = batched_notes(e.stages["batch"])
    assert any(n.count == 15 and n.src.func == K.__name__ for n in notes), notes


# --------------------------------------------------------------------- 8. sequential dependencies


def rnn(W, U, xs):
    h = vnp.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = vnp.tanh(W @ h + U @ xs[t])
    return vnp.sum(h ** 2)


def test_recurrence_stays_sequential_and_correct():
    W, U = 0.5 * rng().standard_normal((3, 3)), rng(1).standard_normal((3, 2))
    xs = rng(2).standard_normal((5, 2))
    e = check(rnn, (W, U, xs), argnums=(0, 1, 2))
    g = e.stages["simplify"]
    # reference in plain NumPy
    h = np.zeros(3)
    for t in range(5):
        h = np.tanh(W @ h + U @ xs[t])
    np.testing.assert_allclose(vg.jit(rnn)(W, U, xs), np.sum(h ** 2), rtol=RTOL)
    # dependent steps are not merged: one tanh per step, in a rolled loop (passes.scans)
    loops = eqns(g, P.loop)
    steps = sum(e.params["length"] * count(e.params["body"], P.tanh) for e in loops)
    assert count(g, P.tanh) + steps == 5 and loops
    # what can batch around the recurrence still batches: U @ x_t for all t is one product
    ein_u = [x for x in eqns(g, P.einsum) if g.inputs[1] in x.inputs]
    assert len(ein_u) == 1 and ein_u[0].out.aval.size == 5 * 3
    # the recurrence is rolled before batching (the roll stage), and said to be one
    line = rnn.__code__.co_firstlineno + 3
    rec = of(e.notes, Recurrence)
    assert [(n.src.line, n.count) for n in rec] == [(line, 5)], e.notes
    assert not [n for n in of(e.notes, Sequential) if n.depends and n.src.line == line]


def prefix(x):
    c = vnp.zeros(x.shape)
    c[0] = x[0]
    for i in range(1, x.shape[0]):
        c[i] = c[i - 1] + vnp.sin(x[i])
    return c


def test_prefix_sum_stays_correct():
    x = rng().standard_normal((6, 2))
    want = np.zeros((6, 2))
    want[0] = x[0]
    for i in range(1, 6):
        want[i] = want[i - 1] + np.sin(x[i])
    np.testing.assert_allclose(vg.jit(prefix)(x), want, rtol=RTOL)
    e = check(lambda x: vnp.sum(prefix(x) ** 2 * vnp.arange(12.0).reshape(6, 2)), (x,))
    g = e.stages["simplify"]
    assert count(g, P.sin) == 1  # the independent part batches
    assert count(g, P.cumsum) == 1  # the prefix sum is one scan (passes.scans)


def test_scalar_prefix_in_buffer_1d():
    def f(x):
        c = vnp.zeros(x.shape)
        s = 0.0
        for i in range(x.shape[0]):
            s = s + x[i] * x[i]
            c[i] = s
        return vnp.sum(vnp.sqrt(c + 1.0) * vnp.arange(x.shape[0]))
    x = rng().standard_normal(7)
    np.testing.assert_allclose(vg.jit(f)(x),
                               np.sum(np.sqrt(np.cumsum(x * x) + 1.0) * np.arange(7)),
                               rtol=RTOL)
    check(f, (x,))


# ------------------------------------------------------------------ random loop programs


AX = 5  # size of the indexed axes of the sources
WID = 3  # size of the vector each read gives


def positions(n: int):
    """n positions in range(AX): an arithmetic range (possibly descending, strided or constant)
    or arbitrary ones (irregular, with repeats)."""
    arith = st.tuples(st.sampled_from([1, 2, -1, -2, 0]), st.integers(0, AX - 1)).map(
        lambda t: [t[1] + t[0] * k for k in range(n)]).filter(
        lambda p: all(0 <= q < AX for q in p))
    return st.one_of(arith, st.lists(st.integers(0, AX - 1), min_size=n, max_size=n))


KERNELS = {
    "ew": lambda u, v, M: vnp.tanh(u) * v,
    "dot": lambda u, v, M: u @ v,
    "norm": lambda u, v, M: vnp.linalg.norm(u) * vnp.sum(v),
    "cos": lambda u, v, M: vnp.dot(u, v) / (vnp.sqrt(vnp.sum(u ** 2)) * vnp.linalg.norm(v)),
    "matvec": lambda u, v, M: M @ u + v[:2],
    "exp": lambda u, v, M: vnp.exp(u - v),
}


@st.composite
def loop_programs(draw):
    n1, n2 = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    p = {
        "n": (n1, n2),
        "pi": draw(positions(n1)),  # a's positions along the outer loop
        "pj": draw(positions(n2)),  # a's positions along the inner loop
        "swap": draw(st.booleans()),  # a[:, pj, pi] instead of a[:, pi, pj]
        "qj": draw(positions(n2)),  # b[:, qj]: invariant over the outer loop
        "kernel": draw(st.sampled_from(sorted(KERNELS))),
        "out": draw(st.sampled_from(["buffer", "stack", "sum", "acc"])),
    }
    if p["out"] == "buffer":
        p["wi"] = draw(positions(n1))  # repeats: overlapping writes
        p["wj"] = draw(positions(n2))
        p["rows"] = draw(st.integers(max(p["wi"]) + 1, AX))  # a partial buffer
        p["add"] = draw(st.booleans())  # `+=` instead of `=`
        p["softmax"] = draw(st.booleans())  # then a softmax per row, written back
        p["first"] = draw(st.booleans())  # the kernel's own axes first: out[..., wi, wj]
    p["scan"] = draw(st.booleans())  # then a recurrence over the rows of the result
    p["rowmap"] = draw(st.booleans())  # plus a map over the rows of b.T, stacked
    p["fd"] = draw(st.booleans())
    return p


def build(p):
    """The Python function (closures only) for the drawn program."""
    K = KERNELS[p["kernel"]]
    n1, n2 = p["n"]

    def read(a, i, j):
        return a[:, p["pj"][j], p["pi"][i]] if p["swap"] else a[:, p["pi"][i], p["pj"][j]]

    def term(a, b, M, i, j):
        return K(read(a, i, j), b[:, p["qj"][j]], M)

    def f(a, b, M):
        if p["out"] == "buffer":
            kshape = np.shape(KERNELS[p["kernel"]](np.ones(WID), np.ones(WID),
                                                   np.ones((2, WID))))
            first = p["first"] and kshape != ()
            out = vnp.zeros(kshape + (p["rows"], AX) if first else (p["rows"], AX) + kshape)
            for i in range(n1):
                for j in range(n2):
                    at = (slice(None), p["wi"][i], p["wj"][j]) if first else \
                        (p["wi"][i], p["wj"][j])
                    if p["add"]:
                        out[at] += term(a, b, M, i, j)
                    else:
                        out[at] = term(a, b, M, i, j)
            if p["softmax"]:
                for r in range(p["rows"]):
                    at = (slice(None), r) if first else (r,)
                    out[at] = vg.nn.softmax(out[at], axis=0)
            res = out
        elif p["out"] == "stack":
            res = vnp.stack([vnp.stack([term(a, b, M, i, j) for j in range(n2)])
                             for i in range(n1)])
        elif p["out"] == "sum":
            res = sum(term(a, b, M, i, j) for i in range(n1) for j in range(n2))
        else:
            res = 0.0
            for i in range(n1):
                for j in range(n2):
                    res = res + term(a, b, M, i, j)
        if p["scan"] and res.ndim >= 1:
            h = res[0] * 0.0
            for r in range(res.shape[0]):
                h = vnp.tanh(0.5 * h + res[r])
            res = res * vnp.sum(h)
        if p["rowmap"]:
            res = res + vnp.sum(vnp.stack([vnp.exp(-r * r) for r in b.T]))
        shape = tuple(res.shape)
        wt = np.cos(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape)
        return vnp.sum(vnp.sin(res) * wt)
    return f


def program_inputs(seed=0):
    r = rng(seed)
    return (r.uniform(0.5, 1.5, (WID, AX, AX)), r.uniform(0.5, 1.5, (WID, AX)),
            r.standard_normal((2, WID)))


@settings(max_examples=int(os.environ.get("VECGRAD_EXAMPLES", "40")), deadline=None)
@given(loop_programs())
def test_random_loop_programs(p):
    f = build(p)
    args = program_inputs()
    e, leaves = entry(f, args, argnums=(0, 1, 2))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    assert_same_function(e.stages["cse"], e.stages["simplify"], leaves)
    assert_same_function(e.stages["traced"], e.stages["simplify"], leaves)
    # the pipeline's compiled gradient equals the unbatched graph's gradient
    g0 = e.stages["traced"]
    ref = compile_graph(vjp_graph(g0, [0, 1, 2])).fn(*leaves, np.ones(()))
    got = vg.grad(f, argnums=(0, 1, 2))(*args)
    for want, have in zip(ref[1:], got):
        np.testing.assert_allclose(have, want, rtol=RTOL, atol=ATOL)
    if p["fd"]:
        vg.check_grads(f, args, argnums=(0, 1, 2), rtol=1e-5, atol=1e-7)
    n1, n2 = p["n"]
    if n1 * n2 > 1 and p["kernel"] in ("ew", "exp", "norm", "cos"):
        # the kernel's elementwise work is batched: at most one sqrt/tanh/exp per distinct
        # operand set (a, b), whatever the trip count
        g = e.stages["simplify"]
        assert count(g, P.exp) <= 2 and count(g, P.sqrt) <= 2, vg.ir.pretty(g)
        if not p["scan"]:  # the scan's tanh is sequential
            assert count(g, P.tanh) <= 1, vg.ir.pretty(g)


# ------------------------------------------------------------------------------ seeds


def seed_cases():
    return {
        "seed000": (S.seed000_loss, (0, 1), S.cosinesim,
                    lambda n: S.seed000_inputs(N=n, W=5, R=2, B=3, dtype=np.float64),
                    lambda n: n * 2 * 3),
        "seed001": (S.seed001_loss, (0, 1), S.colwise,
                    lambda n: S.seed001_inputs(T=n, batch=4, n_in=5, n_out=3, D=2,
                                               dtype=np.float64),
                    lambda n: n * 4),
        "seed002": (S.mapall, 0, S.mlp,
                    lambda n: S.seed002_inputs(n=n, sizes=(1, 6, 4, 1)),
                    lambda n: n),
    }


def _kernel_lines(fn) -> set[int]:
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return set(range(start, start + len(lines)))


@pytest.mark.parametrize("name", ["seed000", "seed001", "seed002"])
def test_seed_graph_size_independent_of_trip_count(name):
    f, argnums, kernel, make, trips = seed_cases()[name]
    sizes = (3, 7)
    gs = []
    for n in sizes:
        args = make(n)
        e, leaves = entry(f, args, argnums)
        assert_same_function(e.stages["cse"], e.stages["simplify"], leaves)
        gs.append(e)
        lines = _kernel_lines(kernel)
        notes = [x for x in batched_notes(e.stages["batch"])
                 if x.src is not None and x.src.file.endswith("seeds.py")
                 and x.src.line in lines]
        assert any(x.count == trips(n) for x in notes), (name, n, notes)
    g0, g1 = (x.stages["simplify"] for x in gs)
    n0, n1 = len(g0.eqns) - len(stacking_inputs(g0)), len(g1.eqns) - len(stacking_inputs(g1))
    assert n0 == n1, vg.ir.pretty(g0) + "\n" + vg.ir.pretty(g1)
    if name != "seed001":  # seed001 takes a list of arrays: stacking it is O(T) reshapes
        assert len(g0.eqns) == len(g1.eqns)
    assert len(gs[1].stages["traced"].eqns) > len(gs[0].stages["traced"].eqns)


def test_seed000_kernel_note_names_cosinesim_line():
    args = S.seed000_inputs(N=3, W=4, R=2, B=2, dtype=np.float64)
    e, _ = entry(S.seed000_loss, args, (0, 1))
    notes = batched_notes(e.stages["batch"])
    dots = [x for x in notes if x.what == "einsum" and x.src.func == "cosinesim"]
    assert [x.count for x in dots] == [3 * 2 * 2]
    assert dots[0].src.line in _kernel_lines(S.cosinesim)
