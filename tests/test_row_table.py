"""Which group row each member value is, during batching's emission (batch/operands.py
`RowTable`): two arrays over the span of the plan's value numbers, set and read in bulk, with
the values outside the span (graph inputs, values made after the trace) and constants beside.

The table is checked against a dict on random groups, and end to end on programs whose groups
read earlier groups' rows in every way emission knows (rows in order and reversed, rows of
two groups mixed, rows read back through a per-iteration buffer, reads of a row's elements,
constants among the operands): batched against unbatched values and gradients, NumPy, and
central differences (test_scans.check)."""
from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
from test_scans import check, rng

import vecgrad.numpy as vnp
from vecgrad.batch.operands import RowTable
from vecgrad.ir import Aval, Const, Var

F64 = Aval((3,), np.dtype("float64"))


@pytest.mark.parametrize("seed", range(12))
def test_row_table_answers_as_a_dict(seed: int) -> None:
    rnd = random.Random(seed)
    before = [Var(F64) for _ in range(rnd.randrange(4))]  # (inputs: numbered before the span)
    made = [Var(F64) for _ in range(rnd.randrange(1, 60))]
    after = [Var(F64) for _ in range(rnd.randrange(4))]  # (made after the table: outside)
    table = RowTable([SimpleNamespace(out=v) for v in made])
    want: dict[Var, tuple[object, int]] = {}
    pool = before + made + after
    groups = [object() for _ in range(4)]
    for _ in range(rnd.randrange(1, 6)):
        outs = rnd.sample([v for v in pool if v not in want], min(rnd.randrange(1, 9), len(
            [v for v in pool if v not in want])))
        if not outs:
            break
        g = rnd.choice(groups)  # (a group may be set twice: one index)
        table.set(outs, g)
        want.update((v, (g, r)) for r, v in enumerate(outs))
    atoms = pool + [Const(np.zeros(3))]
    rnd.shuffle(atoms)
    for a in atoms:
        h = table.get(a)
        assert (h is None) == (a not in want if a.__class__ is Var else True)
        if h is not None:
            assert h[0] is want[a][0] and h[1] == want[a][1]
    gid, row = table.lookup(atoms)
    for a, k, r in zip(atoms, gid.tolist(), row.tolist()):
        if a.__class__ is Var and a in want:
            assert table.groups[k] is want[a][0] and r == want[a][1]
        else:
            assert k == -1
    for g in groups:
        mine = [v for v in want if want[v][0] is g]
        if mine:
            assert table.one_group(mine)
            others = [v for v in want if want[v][0] is not g]
            if others:
                assert not table.one_group(mine + others[:1])
            assert not table.one_group(mine + [Const(np.zeros(3))])


def rows_in_order(W, X):
    """Rows of one group (each iteration's product) read by a second loop in order."""
    ys = [np.tanh(W @ X[i]) for i in range(X.shape[0])]
    return sum(np.sum(ys[i] * ys[0]) for i in range(len(ys)))


def rows_in_order_ref(W, X):
    Y = np.tanh(X @ W.T)
    return np.sum(Y @ Y[0])


def rows_reversed(W, X):
    """Rows read backwards, and elements of each row read (x[j] of a group row)."""
    ys = [np.sin(W @ X[i]) for i in range(X.shape[0])]
    tot = 0.0
    for i in range(len(ys) - 1, -1, -1):
        tot = tot + ys[i][0] * ys[i][1] + 2.0 * ys[i][2]
    return tot


def rows_reversed_ref(W, X):
    Y = np.sin(X @ W.T)
    return np.sum(Y[:, 0] * Y[:, 1] + 2.0 * Y[:, 2])


def rows_of_two_groups(W, X):
    """One operand column from two groups' rows (even and odd iterations made differently)."""
    ys = [np.tanh(W @ X[i]) if i % 2 == 0 else np.cos(W @ X[i]) for i in range(X.shape[0])]
    return sum(np.sum(y * y) for y in ys)


def rows_of_two_groups_ref(W, X):
    Y = X @ W.T
    Y = np.where((np.arange(len(X)) % 2 == 0)[:, None], np.tanh(Y), np.cos(Y))
    return np.sum(Y * Y)


def rows_through_buffer(W, X):
    """Each iteration fills its own buffer by index from rows of one group, then reads it."""
    tot = 0.0
    for i in range(X.shape[0]):
        zs = [np.tanh(W[k] * X[i]) for k in range(W.shape[0])]
        buf = vnp.zeros((W.shape[0], X.shape[1]))
        for k in range(W.shape[0]):
            buf[k] = zs[k]
        tot = tot + np.sum(buf[1:] * buf[:-1])
    return tot


def rows_through_buffer_ref(W, X):
    Z = np.tanh(W[None, :, :] * X[:, None, :])
    return np.sum(Z[:, 1:] * Z[:, :-1])


def rows_with_constants(W, X):
    """Rows of a group beside constants and a loop invariant in one operand column."""
    ys = [W @ X[i] for i in range(X.shape[0])]
    zs = [ys[i] + (1.5 if i == 0 else 0.0) + W[0] for i in range(len(ys))]
    return sum(np.sum(np.exp(0.1 * z)) for z in zs)


def rows_with_constants_ref(W, X):
    Z = X @ W.T + W[0]
    Z[0] += 1.5
    return np.sum(np.exp(0.1 * Z))


PROGRAMS = [(rows_in_order, rows_in_order_ref), (rows_reversed, rows_reversed_ref),
            (rows_of_two_groups, rows_of_two_groups_ref),
            (rows_through_buffer, rows_through_buffer_ref),
            (rows_with_constants, rows_with_constants_ref)]


@pytest.mark.parametrize("f,ref", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
@pytest.mark.parametrize("n", [3, 11])
def test_programs_reading_group_rows(f, ref, n: int) -> None:
    r = rng(n)
    W, X = 0.5 * r.standard_normal((3, 3)), r.standard_normal((n, 3))
    check(f, (W, X), argnums=(0, 1), ref=ref)
