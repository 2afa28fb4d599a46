"""A loop invariant beside the iterations' run (batching's `_boundary`). A member alone in its
combination of sources that reads a constant where the run reads per-iteration rows is padded
into the run when it is a boundary case (`x[i - 1] if i > 0 else zeros`: it also reads the
iteration's own data); one that reads only constants and values every member shares is a
loop invariant (a mask's count `where(m, ones, 0)`, one value when the ones are one constant)
and runs alone: padded in, the run's operand was concatenated with it and every member's
result taken back out of the concatenation.
Values and gradients against NumPy, the unrolled trace and central differences; no stack or
concatenation of the batched graph reads a constant, but for a boundary case's."""
from __future__ import annotations

import numpy as np
import pytest
from test_python_fold_scans import check_program

import vecgrad as vg
from vecgrad.ir import Const

ONES = np.ones((6, 5))


def gated_mean(T, g):
    """Per sample: the mean and the squared sums of the columns a shared gate selects."""
    return sum(np.mean(t[..., g > 0]) + np.sum(np.sum(t[..., g > 0], axis=-1) ** 2) for t in T)


def global_ones_count(X, w):
    """Per row: the sum where w > 0, divided by the count, a global table of ones."""
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.where(w > 0, x, 0.0)) / np.sum(np.where(w > 0, ONES, 0.0))
    return tot


def ones_made_per_row(X, w):
    """The same count from np.ones made per row (one constant: equal tables captured once)."""
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.where(w > 0, x * x, 0.0)) / np.sum(np.where(w > 0, np.ones(
            x.shape), 0.0))
    return tot


def weighted_table_rows(X, w):
    """Per row: a shared weight table (np.linspace per row) masked like the row."""
    tot = 0.0
    for x in X:
        grid = np.linspace(0.5, 1.5, x.shape[-1]) * np.ones(x.shape)
        m = w > 0
        tot = tot + np.sum(np.where(m, x, 0.0) * x) / np.sum(np.where(m, grid, 0.0))
    return tot


def zero_boundary(X, w):
    """A true boundary case: the first row's previous row is zeros (padded with the run)."""
    tot = 0.0
    for i in range(X.shape[0]):
        prev = X[i - 1] if i > 0 else np.zeros(X.shape[1:])
        tot = tot + np.sum(np.tanh(np.where(w > 0, X[i] - prev, 0.0)) ** 2)
    return tot


PROGRAMS = [gated_mean, global_ones_count, ones_made_per_row, weighted_table_rows]


def _inputs(seed, n=12):
    r = np.random.default_rng(seed)
    w = r.standard_normal(5)
    w[0] = 1.0  # (at least one column selected)
    return r.standard_normal((n, 6, 5)), w


def _batched(f, args):
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f, argnums=0).entry(*args)
    return e.stages["batch"]


def _stacked_consts(g) -> int:
    """Constants (or reshapes of one) among the operands of stacks and concatenations."""
    defs = {e.out: e for e in g.eqns}
    def const(a):
        e = defs.get(a)
        return isinstance(a, Const) or e is not None and e.prim.name == "reshape" and \
            isinstance(e.inputs[0], Const)
    return sum(const(a) for e in g.eqns if e.prim.name in ("stack", "concatenate")
               for a in e.inputs)


@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
@pytest.mark.parametrize("seed", [0, 1])
def test_an_invariant_beside_the_run_runs_alone(f, seed):
    args = _inputs(seed)
    check_program(f, args)  # values and gradients: NumPy, unrolled, central differences
    g = _batched(f, args)
    assert _stacked_consts(g) == 0
    assert sum(e.prim.name == "where" and not isinstance(e.inputs[1], Const)
               for e in g.eqns) <= 2  # (the run's where is one, however many rows)


def test_a_boundary_case_is_still_padded_into_the_run():
    args = _inputs(2)
    check_program(zero_boundary, args)
    g = _batched(zero_boundary, args)
    assert _stacked_consts(g) == 1  # (the zeros, as the first row's previous row)
    assert sum(e.prim.name == "tanh" for e in g.eqns) == 1
