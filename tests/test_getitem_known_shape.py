"""`x[key]` of Python ints and slices takes its result's shape from the index normalization
(`index._fast_basic`'s `dims`) instead of running getitem's shape rule at each new index
(`Builder.emit`'s `shape`): the recorded aval must be the shape rule's, and the value
NumPy's, for ints (negative too), whole, stepped, reversed, clipped and empty slices,
partial keys, and `for row in x`. Gradients and batched loops as before."""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
from vecgrad.builder import Builder
from vecgrad.hooks import PRIMITIVES as P
from vecgrad.ir import Aval, Var
from vecgrad.tracing import Tracer

R = np.random.default_rng(28)

KEYS = [
    (1,), (-1,), (0, 2), (-2, -1, 0), (slice(None),), (slice(1, 3),), (slice(None, None, 2),),
    (slice(None, None, -1),), (slice(3, 0, -2),), (slice(-2, None),), (slice(5, 9),),
    (slice(2, 2),), (1, slice(None), 0), (slice(None), 1), (slice(0, 1), slice(None, None, -1)),
    (2, slice(1, None, 2)), (slice(None), slice(None), -1),
]
SHAPES = [(4, 3, 5), (5, 4, 2), (3, 3, 3)]


def _traced(shape, key):
    with Builder(hash_cons=False) as b:
        x = Tracer(b, Var(Aval(shape, np.dtype("float64"))))
        out = x[key]
        q = [e for e in b.eqns if e.prim is P.getitem][-1]
        return out, q


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_the_recorded_aval_is_the_shape_rules(shape, key):
    out, q = _traced(shape, key)
    want = P.getitem.shape_rule(q.inputs[0].aval, **q.params)
    assert q.out.aval == want
    assert q.out.aval.dtype is want.dtype or q.out.aval.dtype == want.dtype
    assert out.shape == np.zeros(shape)[key].shape


def test_rows_of_iteration_have_the_rules_aval():
    with Builder(hash_cons=False) as b:
        x = Tracer(b, Var(Aval((3, 2, 4), np.dtype("float32"))))
        rows = list(x)
    qs = [e for e in b.eqns if e.prim is P.getitem]
    assert len(rows) == len(qs) == 3
    for q in qs:
        assert q.out.aval == P.getitem.shape_rule(q.inputs[0].aval, **q.params)
        assert q.out.aval.dtype == np.dtype("float32")


def stepped_rows(X):
    s = 0.0
    for i in range(X.shape[0]):
        s = s + np.sum(np.tanh(X[i, ::2]) * X[-1 - i, 1]) + X[i, -1] ** 2
    return s


def reversed_rows(X):
    s = 0.0
    for row in X:
        s = s + np.sum(row[::-1] * row[0])
    return s


@pytest.mark.parametrize("f", [stepped_rows, reversed_rows])
def test_values_and_gradients(f):
    X = R.standard_normal((7, 5))
    assert vg.jit(f)(X) == pytest.approx(f(X), rel=1e-12)
    g = vg.grad(f)(X)
    d = R.standard_normal(X.shape)
    h = 1e-6
    num = (f(X + h * d) - f(X - h * d)) / (2 * h)
    assert float(np.sum(g * d)) == pytest.approx(num, rel=1e-6, abs=1e-8)
