"""Add chains (`batch/chains.sums`) leave at once where no add reads another add's result
(issue 11: an MLP's `W @ h + b`, 30,000 adds of two terms in seeds/002, walked for nothing):
no chain then has three terms. On every trace here, with and without such reads (Python's
sum, `acc += ...`, polynomials, subtractions, a zero to start from, bool adds, broadcasting
adds, inner adds used twice), `sums` answers what the walk answers; programs on both sides
of the exit compute as NumPy does, batched as unbatched, with central-difference
gradients."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import entry

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.batch import chains as C
from vecgrad.ir import uses

R = np.random.default_rng(31)


def mlp_rows(W, b, X):
    tot = 0.0
    for x in X:
        h = np.tanh(W @ x + b)
        tot = tot + np.sum(h ** 2)
    return tot


def mlp_no_chain(W, b, X):
    return vnp.sum(vnp.array([np.sum(np.tanh(W @ x + b)) for x in X]) ** 2)


def two_layers(W, b, X):
    return vnp.sum(vnp.array([W.T @ np.tanh(W @ x + b) + x for x in X]) ** 2)


def masks_stacked(W, b, X):
    got = vnp.array([np.sum(np.where((x > 0.2) + (x < -0.2), x, 0.0)) for x in X])
    return np.sum(got ** 2) * np.sum(W) + np.sum(b)


def python_sum(W, b, X):
    return sum(np.sum(W @ x) for x in X) * np.sum(b)


def accumulate(W, b, X):
    acc = np.zeros(W.shape[0])
    for x in X:
        acc += W @ x - b
    return np.sum(acc ** 2)


def polynomial(W, b, X):
    out = 0.0
    for x in X:
        r = np.sum(x * b[: x.shape[0]])
        out = out + (1.0 + 0.5 * r + 0.25 * r ** 2 - 0.1 * r ** 3)
    return out * np.sum(W)


def from_zero(W, b, X):
    out = 0.0
    for x in X:
        out = (0.0 + np.sum(W @ x)) - np.sum(b) + out
    return out


def broadcast_adds(W, b, X):
    tot = 0.0
    for x in X:
        y = (W @ x)[:, None] + b[None, :]  # (of two shapes: no signed sum)
        tot = tot + np.sum(np.sin(y))
    return tot


def inner_used_twice(W, b, X):
    tot = 0.0
    for x in X:
        u = W @ x + b
        v = u + 1.0
        tot = tot + np.sum(v * u)
    return tot


def masks(W, b, X):
    tot = 0.0
    for x in X:
        m = (x > 0.2) + (x < -0.2)  # (bool + bool: a logical or)
        tot = tot + np.sum(np.where(m, x, 0.0) * np.sum(W))
    return tot + np.sum(b)


PROGRAMS = [mlp_rows, mlp_no_chain, two_layers, masks_stacked, python_sum, accumulate, polynomial, from_zero,
            broadcast_adds, inner_used_twice, masks]


def _args(n):
    return (R.standard_normal((4, 3)), R.standard_normal(4), R.standard_normal((n, 3)))


def _same(a, b):
    (sa, ra), (sb, rb) = a, b
    assert list(sa) == list(sb) and ra == rb
    for x, y in zip(sa.values(), sb.values()):
        assert (x.terms, x.signs, x.last, x.eqns) == (y.terms, y.signs, y.last, y.eqns)


@pytest.mark.parametrize("n", [3, 9])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_sums_answer_as_the_walk(fn, n):
    e, _ = entry(fn, _args(n), (0, 1, 2))
    for stage in ("traced", "cse"):
        g = e.stages[stage]
        _same(C.sums(g), C._chains(g, None))
        _same(C.sums(g, uses(g)), C._chains(g, uses(g)))


def test_both_sides_of_the_exit_are_covered():
    quick = []
    for fn in PROGRAMS:
        g = entry(fn, _args(5), (0, 1, 2))[0].stages["traced"]
        adds = [q for q in g.eqns if q.prim in C._ADDS]
        quick.append({q.out for q in adds}.isdisjoint(a for q in adds for a in q.inputs))
    assert 2 <= sum(quick) <= len(PROGRAMS) - 2, quick


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_values_batched_and_gradients(fn):
    args = _args(6)
    np.testing.assert_allclose(vg.jit(fn)(*args), fn(*[np.asarray(a) for a in args]),
                               rtol=1e-10, atol=1e-12)
    check_batched(fn, args, argnums=(0, 1, 2))
