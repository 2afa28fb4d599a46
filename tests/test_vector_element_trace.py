"""Two shortcuts on every trace's hot path (issue 11), each checked against the general path
it skips:

- `x[i]` of a traced vector at a Python int (a scalar loop's read) is recorded without the
  general index's parsing: the same equations, line for line, as `x[(i,)]` (which takes the
  general path), on the vector itself and on views of it, at negative positions, with the
  element's own semantics (a NumPy scalar: `t = x[i]; t += v` does not write x, while
  `x[i] += v` does); values equal NumPy's, batched equals unbatched, gradients equal central
  differences; positions out of range raise NumPy's IndexError.
- Emission records the reads of a group that all read one array that is no group's
  (`batching._plain_read`, a scalar loop's reads of a vector) in bulk: the programs above
  reading one vector only compute as the unbatched trace.
- The roll stage's depth walk (`scans._depth`) first bounds the count of the operations it
  counts, in C, and skips the walk when the bound is under its threshold: on every graph
  here, at every threshold, it answers what the walk answers.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched
from test_batch import entry

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.batch import scans as S

R = np.random.default_rng(30)


def _one(i):
    return i


def _tup(i):
    return (i,)


def running_sum(x, w, key=_one, xp=vnp):
    s = 0.0
    for i in range(len(x)):
        s = s + x[key(i)] * w[key(i)]
    return s


def backwards(x, w, key=_one, xp=vnp):
    s = 0.0
    for i in range(1, len(x) + 1):
        s = s + np.sin(x[key(-i)]) * w[key(i - 1)]
    return s


def decay(x, w, key=_one, xp=vnp):
    s = 0.0
    for i in range(len(x)):
        s = 0.5 * s + x[key(i)] ** 2
    return s * w[key(0)]


def lags(x, w, key=_one, xp=vnp):
    out = 0.0
    for i in range(2, len(x)):
        out = out + x[key(i)] * x[key(i - 1)] - 0.3 * x[key(i - 2)] * w[key(i)]
    return out


def of_views(x, w, key=_one, xp=vnp):
    y = x[1:]  # (a view: its elements are x's)
    z = x[::-1]
    s = 0.0
    for i in range(len(y)):
        s = s + y[key(i)] * z[key(i)] + w[key(i)]
    return s


def of_rows(x, w, key=_one, xp=vnp):
    X = x.reshape(2, -1)
    s = 0.0
    for r in range(2):
        row = X[r]
        for j in range(row.shape[0]):
            s = s + np.tanh(row[key(j)]) * w[key(j)]
    return s


def element_is_a_copy(x, w, key=_one, xp=vnp):
    s = 0.0
    for i in range(len(x)):
        t = x[key(i)]  # (a NumPy scalar: x keeps its element)
        t += w[key(i)]
        s = s + t * np.sum(x)
    return s


def updates_in_place(x, w, key=_one, xp=vnp):
    y = x * 1.0
    for i in range(1, len(y)):
        y[key(i)] += 0.5 * y[key(i - 1)] * w[key(i)]
    return np.sum(y ** 2)


def one_vector(x, w, key=_one, xp=vnp):
    s = 0.0  # (only x read in the loop: its reads, one group of one array, in bulk)
    for i in range(len(x)):
        s = 0.7 * s + x[key(i)] * x[key(i)] + np.cos(x[key(i)])
    return s * w[key(0)]


def every_other(x, w, key=_one, xp=vnp):
    s = 0.0
    for i in range(len(x) // 2):
        s = s + np.exp(-x[key(2 * i + 1)]) * 0.5
    return s + np.sum(w)


def last_first(x, w, key=_one, xp=vnp):
    s = 1.0
    for i in range(len(x)):
        s = s * 0.9 + x[key(-1 - i)] ** 3
    return s + np.sum(w)


PROGRAMS = [running_sum, backwards, decay, lags, of_views, of_rows, element_is_a_copy,
            updates_in_place, one_vector, every_other, last_first]


def _args(n):
    return R.standard_normal(n), R.standard_normal(n)


def _listing(f, args):
    """The traced graph without ids (equal for equal traces)."""
    e, _ = entry(f, args, 0)
    return [(q.prim.name, repr(sorted(q.params.items(), key=str)),
             tuple(a.aval for a in q.inputs), q.out.aval, q.src.line if q.src else None)
            for q in e.stages["traced"].eqns]


@pytest.mark.parametrize("n", [6, 12])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_same_trace_values_and_gradients(fn, n):
    args = _args(n)
    want = fn(*[a.copy() for a in args], xp=np)
    np.testing.assert_allclose(vg.jit(fn)(*args), want, rtol=1e-12, atol=1e-12)
    check_batched(fn, args, argnums=(0, 1))

    def as_tuple(*a):
        return fn(*a, key=_tup)
    assert _listing(fn, args) == _listing(as_tuple, args)


@pytest.mark.parametrize("i", [5, -6, 100])
def test_out_of_range_as_numpy(i):
    def f(x):
        return x[i] * 2.0
    with pytest.raises(IndexError):
        np.ones(5)[i]
    with pytest.raises(IndexError):
        vg.grad(f)(np.ones(5))


def test_element_dtype_and_grad_of_a_float32_vector():
    x = R.standard_normal(7).astype(np.float32)

    def f(x):
        s = np.float32(0.0)
        for i in range(len(x)):
            s = s + x[i] * x[i - 1]
        return s
    assert vg.jit(f)(x).dtype == f(x).dtype == np.float32
    np.testing.assert_allclose(vg.grad(f)(x), [x[(i + 1) % 7] + x[i - 1] for i in range(7)],
                               rtol=1e-5)


# ---------------------------------------------------------------------- the roll stage's bound

def _walk(g, nl, least, on=None):
    """`scans._depth` without its bound (the walk as it was before the bound)."""
    eqns = g.eqns
    ok = [e.prim not in S._WRITES and (on is None or on(e)) for e in eqns]
    counts = [k and e.prim in nl for e, k in zip(eqns, ok)]
    if sum(counts) < least:
        return 0
    depth, best = {}, 0
    for e, c, k in zip(eqns, counts, ok):
        if not k:
            continue
        d = max([depth.get(a, 0) for a in e.inputs], default=0) + c
        if d:
            depth[e.out] = d
            best = max(best, d)
    return best


def _tanh_chain(x, w, key=_one, xp=vnp):
    h = 0.0
    for i in range(len(x)):
        h = np.tanh(0.9 * h + x[i]) * w[i]
    return h


@pytest.mark.parametrize("fn", PROGRAMS + [_tanh_chain], ids=lambda f: f.__name__)
def test_depth_bound_answers_as_the_walk(fn):
    e, _ = entry(fn, _args(40), 0)
    g = e.stages["traced"]
    for nl, on in [(S._NONLINEAR, None), (S._SCALING, S._decay_step), (S._SCALING, None),
                   (frozenset(), None)]:
        counted = sum(e.prim in nl for e in g.eqns)
        for least in sorted({0, 1, 2, counted - 1, counted, counted + 1, 16, 32}):
            if least >= 0:
                assert S._depth(g, nl, least, on) == _walk(g, nl, least, on), (nl, least)
