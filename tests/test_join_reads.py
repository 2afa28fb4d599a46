"""Joins of reads at single positions (rewrite/rowreads.py) and reads through a step's
reshapes and broadcasts (batch/carries.narrow_reads): the values a scan stacked over its
steps, read back one step at a time in some member order, are one read, so the graph does
not grow with the trip count; coupled carries whose updates batching merged into one
stacked product are one linear_scan.

Rule programs are checked against the unrewritten graph (values and VJPs, float64);
end-to-end programs against a plain NumPy loop, their unrolled trace and central
differences (test_scans.check), at two trip counts whose final graphs must be equal."""
from __future__ import annotations

import numpy as np
import pytest
from test_carries import covariance
from test_passes import assert_equivalent, graph
from test_scans import check, prims, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends import compile_graph
from vecgrad.batch.carries import narrow_reads
from vecgrad.ir import Aval, Eqn, Graph, Params, Var, typecheck
from vecgrad.rewrite.simplify import simplify


def n_reads(g) -> int:
    return sum(e.prim is P.getitem for e in g.eqns)


# ------------------------------------------------------------------ the rule, by itself

def rows_in_order(x):  # (6, 4)
    return vnp.sin(P.stack(*[x[i] for i in range(6)], axis=0))


def rows_reversed(x):
    return vnp.sin(P.stack(*[x[i] for i in range(5, -1, -1)], axis=0))


def rows_strided(x):
    return vnp.sin(P.stack(*[x[i] for i in (1, 3, 5)], axis=0))


def rows_permuted(x):
    return vnp.sin(P.stack(*[x[i] for i in (2, 0, 5, 1, 1, 4)], axis=0))


def rows_on_axis1(x):  # stacked along axis 1: the read's rows moved there
    return vnp.sin(P.stack(*[x[i] for i in (3, 1, 2)], axis=1))


def columns_as_unit_slices(x):  # concatenated along axis 1
    return vnp.sin(P.concatenate(*[x[:, j:j + 1] for j in (3, 2, 0)], axis=1))


def elements_over_two_axes(x):  # x (6, 4): pairs (i, j) in a mixed order
    pairs = [(0, 1), (5, 3), (2, 2), (0, 0), (4, 1), (1, 3), (3, 0)]
    return vnp.sin(P.stack(*[x[i, j] for i, j in pairs], axis=0))


def run_among_others(x):  # a run of rows between two other operands, and a second base
    y = vnp.tanh(x)
    parts = [vnp.cos(x[0])] + [x[i] for i in (1, 2, 3)] + [y[0]] + [y[i] for i in (4, 2)]
    return vnp.sin(P.stack(*parts, axis=0))


def unit_rows_of_3d(x):  # x (6, 4) seen as (6, 1, 4): x3[t, 0:1, :] joined along axis 0
    x3 = P.reshape(vnp.tanh(x), shape=(6, 1, 4))
    return vnp.sin(P.concatenate(*[x3[t, 0:1, :] for t in range(6)], vnp.cos(x[:1]),
                                 axis=0))


def run_after_a_larger_operand(x):  # the run's pieces are not the first operand's shape
    return vnp.sin(P.concatenate(vnp.cos(x[:3]), *[x[t:t + 1] for t in (4, 5, 3, 0)],
                                 axis=0))


def single_piece(x):  # one read: nothing to join
    return vnp.sin(P.concatenate(x[2:3], vnp.cos(x), axis=0))


PROGRAMS = [rows_in_order, rows_reversed, rows_strided, rows_permuted, rows_on_axis1,
            columns_as_unit_slices, elements_over_two_axes, run_among_others,
            unit_rows_of_3d, run_after_a_larger_operand]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_join_is_one_read(program):
    g0 = graph(program, (6, 4))
    g1 = simplify(g0)
    assert_equivalent(g0, g1)
    assert n_reads(g1) < n_reads(g0) and n_reads(g1) <= 3, (n_reads(g0), n_reads(g1))


def test_a_single_read_is_left_alone():
    g0 = graph(single_piece, (6, 4))
    g1 = simplify(g0)
    assert_equivalent(g0, g1)
    assert "concatenate" in prims(g1)


def test_strided_positions_are_a_view_and_others_a_take():
    assert "take" not in prims(simplify(graph(rows_strided, (6, 4))))
    assert "take" not in prims(simplify(graph(rows_reversed, (6, 4))))
    assert "take" in prims(simplify(graph(rows_permuted, (6, 4))))


# ------------------------------------------------------------------ in loops

def rotation(U):
    """Two carries rotated together, the energy of each step summed: batching merges the
    four products of a step into one stacked product, and the (x_t, y_t) pairs read back."""
    c, s = 0.95 * np.cos(0.3), 0.95 * np.sin(0.3)
    x, y, energy = vnp.zeros(U.shape[1]), vnp.ones(U.shape[1]), 0.0
    for u in U:
        x, y = c * x - s * y + u, s * x + c * y
        energy = energy + vnp.sum(x * x - 0.5 * y * y)
    return energy


def rotation_np(U):
    c, s = 0.95 * np.cos(0.3), 0.95 * np.sin(0.3)
    x, y, energy = np.zeros(U.shape[1]), np.ones(U.shape[1]), 0.0
    for u in U:
        x, y = c * x - s * y + u, s * x + c * y
        energy += np.sum(x * x - 0.5 * y * y)
    return energy


def driven_both(U, V):
    """Both carries driven, each step's pair weighted differently (x read before y)."""
    x = vnp.zeros(U.shape[1])
    y = vnp.ones(U.shape[1])
    total = 0.0
    for t in range(U.shape[0]):
        x, y = 0.6 * x + 0.3 * y + U[t], -0.2 * x + 0.7 * y + V[t]
        total = total + vnp.sum(2.0 * x * x + y * y * y)
    return total


def driven_both_np(U, V):
    x, y, total = np.zeros(U.shape[1]), np.ones(U.shape[1]), 0.0
    for t in range(U.shape[0]):
        x, y = 0.6 * x + 0.3 * y + U[t], -0.2 * x + 0.7 * y + V[t]
        total += np.sum(2.0 * x * x + y * y * y)
    return total


def comoment_np(X, Y):
    """test_carries.covariance in NumPy: Welford's co-moment, reading both means (its
    rows were read back one step at a time)."""
    d = X.shape[1]
    mx, my, cxy = np.zeros(d), np.zeros(d), np.zeros(d)
    for t in range(X.shape[0]):
        dx = X[t] - mx
        mx = mx + dx / (t + 1)
        my = my + (Y[t] - my) / (t + 1)
        cxy = cxy + dx * (Y[t] - my)
    return np.sum(cxy) + np.sum(mx * my)


LOOPS = [(rotation, rotation_np, 1), (driven_both, driven_both_np, 2),
         (covariance, comoment_np, 2)]


@pytest.mark.parametrize("f, ref, n_args", LOOPS, ids=lambda v: getattr(v, "__name__", ""))
def test_loops_do_not_grow_with_the_trip_count(f, ref, n_args):
    r = rng(11)
    sizes = []
    for T in (40, 80):  # (both past scans.MIN_SCALED: a plan of one kind at both lengths)
        args = tuple(r.standard_normal((T, 3)) for _ in range(n_args))
        e = check(f, args, argnums=tuple(range(n_args)), ref=ref)
        sizes.append(e.counts["final"])
    assert sizes[0] == sizes[1], sizes


@pytest.mark.parametrize("T", [30, 31])
def test_merged_products_of_coupled_carries_are_a_linear_scan(T):
    with vg.config(keep_stages=True):
        e, _ = vg.jit(rotation).entry(rng(12).standard_normal((T, 4)))
    found = prims(e.stages["scans"])
    assert "linear_scan" in found and "loop" not in found, found


def _aval(shape):
    return Aval(shape, np.dtype("float64"))


@pytest.mark.parametrize("k", [0, 1])
def test_narrow_reads_through_reshapes_and_broadcasts(k):
    """stack(a, b) reshaped, broadcast and reshaped again, then scaled row by row (how
    batching writes x, y = c x - s y, s x + c y): row k reads a or b, not the stack."""
    a, b, w = Var(_aval((3,))), Var(_aval((3,))), Var(_aval((4, 1)))
    f, g, h, i, j, r = (Var(_aval(s)) for s in ((2, 3), (1, 2, 3), (2, 2, 3), (4, 3),
                                                 (4, 3), (3,)))
    idx = P.BasicIndex((2 * k + 1, P.Sl(0, 3, 1)))
    body = typecheck(Graph((a, b, w), (
        Eqn(P.stack, (a, b), Params(axis=0), f, None),
        Eqn(P.reshape, (f,), Params(shape=(1, 2, 3)), g, None),
        Eqn(P.broadcast_to, (g,), Params(shape=(2, 2, 3)), h, None),
        Eqn(P.reshape, (h,), Params(shape=(4, 3)), i, None),
        Eqn(P.mul, (w, i), Params(), j, None),
        Eqn(P.getitem, (j,), Params(idx=idx), r, None)), (r,)))
    new = typecheck(narrow_reads(body, always=True))
    assert "stack" not in prims(new) and "broadcast_to" not in prims(new), prims(new)
    x = [rng(k).standard_normal(v.aval.shape) for v in body.inputs]
    np.testing.assert_array_equal(compile_graph(new).fn(*x)[0], compile_graph(body).fn(*x)[0])
