"""Hand-written softmax and logsumexp as users write them (rewrite/softmax.py): the max added
on either side (`m + log(sum(exp(x - m)))`), over one axis, over every axis of a matrix
(`np.max(X)`), over a run of adjacent axes, with and without keepdims, in a loop over rows.
Each becomes the fused primitive (its VJP one pass, no max tie counts); a reduction over axes
that are not adjacent stays as written. Each variant: batched = unbatched, values = NumPy,
gradients = central differences (float64, random directions)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp


def lse_max_first(x):
    m = vnp.max(x)
    return m + vnp.log(vnp.sum(vnp.exp(x - m)))


def lse_max_last(x):
    m = vnp.max(x)
    return vnp.log(vnp.sum(vnp.exp(x - m))) + m


def lse_rows_max_first(X):
    m = vnp.max(X, axis=1, keepdims=True)
    return vnp.sum(vnp.sin(m + vnp.log(vnp.sum(vnp.exp(X - m), axis=1, keepdims=True))))


def lse_leading_axes(X):
    m = vnp.max(X, axis=(0, 1))
    return vnp.sum((m + vnp.log(vnp.sum(vnp.exp(X - m), axis=(0, 1)))) ** 2)


def lse_trailing_axes_keepdims(X):
    m = vnp.max(X, axis=(1, 2), keepdims=True)
    return vnp.sum(vnp.cos(vnp.log(vnp.sum(vnp.exp(X - m), axis=(1, 2), keepdims=True)) + m))


def lse_plain_every_axis(X):
    return vnp.log(vnp.sum(vnp.exp(X)))


def lse_loop_over_rows(X):
    total = 0.0
    for i in range(len(X)):
        m = vnp.max(X[i])
        total = total + (m + vnp.log(vnp.sum(vnp.exp(X[i] - m)))) * (i + 1)
    return total


def softmax_every_axis(X):
    e = vnp.exp(X - vnp.max(X))
    return vnp.sum(vnp.sin(e / vnp.sum(e)))


def softmax_leading_axes(X):
    e = vnp.exp(X - vnp.max(X, axis=(0, 1)))
    return vnp.sum(vnp.sin(e / vnp.sum(e, axis=(0, 1))) * X)


def softmax_trailing_axes_keepdims(X):
    e = vnp.exp(X - vnp.max(X, axis=(1, 2), keepdims=True))
    return vnp.sum((e / vnp.sum(e, axis=(1, 2), keepdims=True)) ** 2)


def lse_axes_apart(X):
    # axes 0 and 2 are not adjacent: no single reshape joins them; stays as written
    m = vnp.max(X, axis=(0, 2), keepdims=True)
    return vnp.sum(vnp.log(vnp.sum(vnp.exp(X - m), axis=(0, 2), keepdims=True)) + m)


def lse_other_max(X, Y):
    # the shift is the max of another array: log(sum(exp(d))) is logsumexp(d) of the
    # difference d = X - m, then + m (not logsumexp(X))
    m = vnp.max(Y)
    return m + vnp.log(vnp.sum(vnp.exp(X - m)))


def _ref_lse(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


REFS = {
    "lse_max_first": lambda x: _ref_lse(x),
    "lse_max_last": lambda x: _ref_lse(x),
    "lse_rows_max_first": lambda X: np.sum(np.sin(_ref_lse(X, 1, True))),
    "lse_leading_axes": lambda X: np.sum(_ref_lse(X, (0, 1)) ** 2),
    "lse_trailing_axes_keepdims": lambda X: np.sum(np.cos(_ref_lse(X, (1, 2), True))),
    "lse_plain_every_axis": lambda X: _ref_lse(X),
    "lse_loop_over_rows": lambda X: np.sum(_ref_lse(X, 1) * np.arange(1, len(X) + 1)),
    "softmax_every_axis": lambda X: np.sum(np.sin(np.exp(X - _ref_lse(X)))),
    "softmax_leading_axes": lambda X: np.sum(np.sin(np.exp(X - _ref_lse(X, (0, 1)))) * X),
    "softmax_trailing_axes_keepdims":
        lambda X: np.sum(np.exp(X - _ref_lse(X, (1, 2), True)) ** 2),
    "lse_axes_apart": lambda X: np.sum(_ref_lse(X, (0, 2), True)),
}

# name, function, inputs, the fused primitive the simplified graph holds (None: none)
CASES = [
    ("lse_max_first", lse_max_first, lambda r: (r.standard_normal(40),), "logsumexp"),
    ("lse_max_last", lse_max_last, lambda r: (r.standard_normal(40),), "logsumexp"),
    ("lse_max_first_matrix", lse_max_first, lambda r: (r.standard_normal((7, 9)),),
     "logsumexp"),
    ("lse_rows_max_first", lse_rows_max_first, lambda r: (r.standard_normal((6, 11)),),
     "logsumexp"),
    ("lse_leading_axes", lse_leading_axes, lambda r: (r.standard_normal((3, 4, 5)),),
     "logsumexp"),
    ("lse_trailing_axes_keepdims", lse_trailing_axes_keepdims,
     lambda r: (r.standard_normal((3, 4, 5)),), "logsumexp"),
    ("lse_plain_every_axis", lse_plain_every_axis, lambda r: (r.standard_normal((4, 6)),),
     "logsumexp"),
    ("lse_loop_over_rows", lse_loop_over_rows, lambda r: (r.standard_normal((8, 5)),),
     "logsumexp"),
    ("softmax_every_axis", softmax_every_axis, lambda r: (r.standard_normal((5, 7)),),
     "softmax"),
    ("softmax_leading_axes", softmax_leading_axes, lambda r: (r.standard_normal((3, 4, 2)),),
     "softmax"),
    ("softmax_trailing_axes_keepdims", softmax_trailing_axes_keepdims,
     lambda r: (r.standard_normal((2, 3, 5)),), "softmax"),
    ("lse_axes_apart", lse_axes_apart, lambda r: (r.standard_normal((3, 4, 5)),), None),
]


def _prims(e) -> list[str]:
    return [q.prim.name for q in e.stages["simplify"].eqns]


@pytest.mark.parametrize("name,f,make,fused", CASES, ids=[c[0] for c in CASES])
def test_hand_written_forms_become_the_fused_primitive(name, f, make, fused):
    args = make(rng())
    e = check(f, args)
    ps = _prims(e)
    if fused is None:
        assert "logsumexp" not in ps and "softmax" not in ps, ps
    else:
        assert fused in ps and "exp" not in ps and "reduce_max" not in ps, ps
    ref = REFS.get(name) or REFS[name.rsplit("_matrix", 1)[0]]
    np.testing.assert_allclose(vg.jit(f)(*args), ref(*args), rtol=1e-12)


def test_the_shift_by_another_arrays_max_is_the_logsumexp_of_the_difference():
    r = rng()
    X, Y = r.standard_normal((4, 5)), r.standard_normal((4, 5))
    e = check(lse_other_max, (X, Y), (0, 1))
    ps = _prims(e)
    assert "sub" in ps and "exp" not in ps and ps.count("logsumexp") == 1, ps
    want = np.max(Y) + np.log(np.sum(np.exp(X - np.max(Y))))
    np.testing.assert_allclose(vg.jit(lse_other_max)(X, Y), want, rtol=1e-12)


@pytest.mark.parametrize("f", [lse_max_first, lse_leading_axes, softmax_every_axis])
def test_large_and_infinite_entries_stay_finite_as_numpys_stable_form(f):
    X = rng(1).standard_normal((3, 4, 5)) * 400 + 600  # exp overflows without the shift
    X[0, 0, 0] = -np.inf
    ref = REFS[f.__name__]
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(vg.jit(f)(X), ref(X), rtol=1e-12)
    g = vg.grad(f)(X)
    assert np.isfinite(g).all() and g[0, 0, 0] == 0.0


LSE_EVERY_AXIS_GOLDEN = """{ lambda a:f64[2,3] .
  b:f64[6] = reshape[shape=(6,)] a
  c:f64[] = logsumexp[axis=0] b
  in (c) }"""

SOFTMAX_TRAILING_RUN_GOLDEN = """{ lambda a:f64[2,3,4] .
  b:f64[2,12] = reshape[shape=(2, 12)] a
  c:f64[2,12] = softmax[axis=1] b
  d:f64[2,3,4] = reshape[shape=(2, 3, 4)] c
  in (d) }"""


def _softmax_trailing_run(x):
    e = vnp.exp(x - vnp.max(x, axis=(1, 2), keepdims=True))
    return e / vnp.sum(e, axis=(1, 2), keepdims=True)


@pytest.mark.parametrize("fn,shape,golden", [
    (lse_max_first, (2, 3), LSE_EVERY_AXIS_GOLDEN),
    (_softmax_trailing_run, (2, 3, 4), SOFTMAX_TRAILING_RUN_GOLDEN)])
def test_golden_and_equivalent(fn, shape, golden):
    from test_passes import assert_equivalent, graph, strip

    from vecgrad.ir import pretty
    from vecgrad.rewrite.simplify import simplify
    g0 = graph(fn, shape)
    g1 = simplify(g0)
    assert strip(pretty(g1)) == golden
    assert_equivalent(g0, g1)
