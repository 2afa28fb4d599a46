"""Equal NumPy arrays captured in one trace are one constant (builder.capture, by contents).

A loop that makes the same table at every iteration (np.linspace, np.arange, np.eye, a list
made an array, a cast or copy of a global) holds a new array per iteration; captured by
identity, each was its own constant, and batching stacked the copies (np.interp per row:
a (501, 33) stack gathered per sample). Checked: one constant per contents in the batched
graph (no stack of constants), values and gradients against NumPy, the unrolled trace and
central differences, and what must stay apart: other contents, -0.0 against 0.0, other
dtypes or shapes, an array changed in place after its capture, arrays above the size limit."""
from __future__ import annotations

import numpy as np
import pytest
from test_python_fold_scans import check_program

import vecgrad as vg
from vecgrad.builder import CONTENTS_MAX, Builder
from vecgrad.config import config


def _batched(f, args):
    with config(keep_stages=True):
        e, _ = vg.grad(f, argnums=tuple(range(len(args)))).entry(*args)
    return e.stages["batch"]


def _stacked_consts(g) -> int:
    """Constants among the operands of the graph's stacks and concatenates."""
    return sum(type(a).__name__ == "Const" for q in g.eqns
               if q.prim.name in ("stack", "concatenate") for a in q.inputs)


def interp_rows(X, fp):
    xp = np.linspace(-2.0, 2.0, fp.shape[0])
    return sum(np.sum(np.interp(x, xp, fp) ** 2) for x in X)


def interp_list_points(X, fp):
    xp = [-2.0 + 4.0 * k / (len(fp) - 1) for k in range(len(fp))]
    return sum(np.sum(np.interp(x, xp, fp) * x) for x in X)


def interp_int_points(X, fp):
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.sin(np.interp(x, np.arange(len(fp)), fp)))
    return tot


def linspace_per_row(X, w):
    tot = 0.0
    for x in X:
        grid = np.linspace(-1.0, 1.0, len(w))
        tot = tot + np.sum(np.exp(-(x[:, None] - grid) ** 2) @ w)
    return tot


def eye_per_row(X, A):
    return sum(x @ (A + 0.5 * np.eye(len(x))) @ x for x in X)


def arange_gather(X, w):
    tot = 0.0
    for x in X:
        table = np.arange(len(x)) * 0.25
        tot = tot + np.sum(table[np.argsort(x)[: len(w)]] * w * x[: len(w)])
    return tot


PROGRAMS = [(interp_rows, "interp"), (interp_list_points, "interp"),
            (interp_int_points, "int"), (linspace_per_row, "w"), (eye_per_row, "A"),
            (arange_gather, "w")]


def _inputs(kind, seed):
    r = np.random.default_rng(seed)
    if kind == "interp":
        return np.clip(r.standard_normal((7, 5)), -1.9, 1.9), r.standard_normal(9)
    if kind == "int":
        return r.uniform(0.1, 7.9, (6, 4)), r.standard_normal(9)
    if kind == "A":
        return r.standard_normal((5, 4)), r.standard_normal((4, 4))
    return r.standard_normal((6, 5)), r.standard_normal(4)


@pytest.mark.parametrize("f,kind", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_table_made_per_iteration_is_one_operand(f, kind, seed):
    args = _inputs(kind, seed)
    check_program(f, args)  # values and gradients: NumPy, unrolled, central differences
    assert _stacked_consts(_batched(f, args)) == 0


def test_equal_contents_one_constant_other_contents_apart():
    b = Builder()
    a1, a2 = np.linspace(0, 1, 5), np.linspace(0, 1, 5)
    assert b.capture(a1) is b.capture(a2)
    apart = [np.linspace(0, 1, 6), np.linspace(0, 2, 5), np.linspace(0, 1, 5, dtype=np.float32),
             np.linspace(0, 1, 5).reshape(5, 1), np.zeros(5)]
    consts = {id(b.capture(a)) for a in apart + [a1]}
    assert len(consts) == len(apart) + 1
    assert b.capture(np.zeros(3)) is not b.capture(-np.zeros(3))  # (1 / x tells them apart)


def test_a_change_in_place_is_a_new_constant_and_the_old_value_is_kept():
    b = Builder()
    buf, same = np.ones(4), np.ones(4)
    c1 = b.capture(buf)
    buf[0] = 2.0
    c2 = b.capture(buf)
    assert c2 is not c1 and c2.value[0] == 2.0 and c1.value[0] == 1.0
    assert b.capture(same) is c1  # (the contents it was captured with)


def test_large_and_object_arrays_by_identity():
    b = Builder()
    n = CONTENTS_MAX // 8 + 1
    big1, big2 = np.ones(n), np.ones(n)
    assert b.capture(big1) is not b.capture(big2)
    o1, o2 = np.array([1, "a"], dtype=object), np.array([1, "a"], dtype=object)
    assert b.capture(o1) is not b.capture(o2)


def test_zero_signs_in_a_loop_stay_apart():
    def f(X):
        tot = 0.0
        for k, x in enumerate(X):
            z = np.zeros(3) if k % 2 else -np.zeros(3)
            tot = tot + np.sum(np.arctan2(z, x))
        return tot
    X = np.random.default_rng(2).standard_normal((4, 3))
    np.testing.assert_allclose(vg.jit(f)(X), f(X), rtol=1e-12)
    check_program(f, (X,))


def test_numpy_scalars_stay_apart_as_python_numbers_do():
    b = Builder()
    s1, s2 = np.float64(3.0), np.float64(3.0)
    assert b.capture(s1) is not b.capture(s2)
    t = np.array([[3.0, 3.0], [3.0, -1.0]])
    assert b.capture(t[0][0]) is not b.capture(t[1][0])  # (a table's equal entries)
    assert b.capture(np.array(2.0)) is not b.capture(np.array(2.0))  # (0-d arrays alike)


def test_equal_entries_of_a_table_keep_the_terms_apart():
    """Two charges at one x-coordinate: merged, their (3 - x[0]) terms were one value whose
    sharing made the batched inner gradient 20 equations instead of 11."""
    T = np.array([[3.0, 3.0], [3.0, -1.0], [-2.0, 1.0]])
    def pot(q, x):
        return sum(qi / np.sqrt((c[0] - x[0]) ** 2 + (c[1] - x[1]) ** 2) for qi, c in zip(q, T))
    def moved(T2):
        def pot2(q, x):
            return sum(qi / np.sqrt((c[0] - x[0]) ** 2 + (c[1] - x[1]) ** 2)
                       for qi, c in zip(q, T2))
        return pot2
    args = (np.array([0.7, 0.8, 0.9]), np.array([0.1, 0.4]))
    check_program(pot, args)
    sizes = [len(_batched(f, args).eqns) for f in (pot, moved(T + [[0.0], [0.5], [1.0]]))]
    assert sizes[0] == sizes[1]  # (as many equations as with no equal entries)
