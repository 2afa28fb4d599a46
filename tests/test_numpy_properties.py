"""Property tests: NumPy-API functions of vecgrad.numpy on random shapes, axes, keyword
arguments and dtypes equal NumPy's (values, shapes and dtypes), and their gradients match
central differences."""
from __future__ import annotations

import os
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp

EXAMPLES = int(os.environ.get("VECGRAD_EXAMPLES", "25"))
DTYPES = [np.float64, np.float32, np.int64, np.bool_]


@st.composite
def arrays(draw, min_dims=1, max_dims=3, dtypes=(np.float64,)):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=min_dims, max_size=max_dims)))
    seed = draw(st.integers(0, 2**16))
    dt = draw(st.sampled_from(dtypes))
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    return (x > 0) if dt == np.bool_ else x.astype(dt)


def axis_of(draw, x, none=True):
    choices = list(range(-x.ndim, x.ndim)) + ([None] if none else [])
    return draw(st.sampled_from(choices))


# name -> (call(m, x, draw), differentiable): `m` is numpy or vecgrad.numpy
def _var(m, x, d):
    return m.var(x, axis=axis_of(d, x), ddof=d(st.sampled_from([0, 1])),
                 keepdims=d(st.booleans()))


def _cum(m, x, d):
    return getattr(m, d(st.sampled_from(["cumsum", "cumprod"])))(x, axis=axis_of(d, x))


def _sort(m, x, d):
    return m.sort(x, axis=axis_of(d, x), kind="stable")


def _diff(m, x, d):
    ax = axis_of(d, x, none=False)
    return m.diff(x, n=d(st.integers(0, max(0, x.shape[ax]))), axis=ax)


def _roll(m, x, d):
    ax = axis_of(d, x)
    return m.roll(x, d(st.integers(-5, 5)), axis=ax)


def _pad(m, x, d):
    mode = d(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    width = d(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=x.ndim,
                       max_size=x.ndim))
    if mode == "reflect" and any(n == 1 for n in x.shape):
        mode = "symmetric"
    return m.pad(x, width, mode=mode)


def _quantile(m, x, d):
    q = d(st.lists(st.floats(0, 1), min_size=1, max_size=3))
    meth = d(st.sampled_from(["linear", "lower", "higher", "nearest", "midpoint", "hazen",
                              "weibull", "median_unbiased"]))
    return m.quantile(x, q, axis=axis_of(d, x), method=meth, keepdims=d(st.booleans()))


def _median(m, x, d):
    return m.median(x, axis=axis_of(d, x), keepdims=d(st.booleans()))


def _stack(m, x, d):
    f = d(st.sampled_from(["vstack", "hstack", "dstack", "column_stack"]))
    return getattr(m, f)([x, x * 2])


def _tile(m, x, d):
    return m.tile(x, tuple(d(st.lists(st.integers(0, 3), min_size=1, max_size=4))))


def _repeat(m, x, d):
    return m.repeat(x, d(st.integers(0, 3)), axis=axis_of(d, x))


def _flip(m, x, d):
    k = d(st.integers(-3, 4))
    return m.rot90(x, k) if x.ndim >= 2 and d(st.booleans()) else m.flip(x, axis_of(d, x))


def _diag(m, x, d):
    if x.ndim < 2:
        return m.diag(x, d(st.integers(-3, 3)))
    return m.trace(x, d(st.integers(-4, 4))) if d(st.booleans()) else \
        m.diagonal(x, d(st.integers(-4, 4)))


def _elementwise(m, x, d):
    name = d(st.sampled_from(["tan", "sinh", "arctan", "cbrt", "exp2", "log2", "sinc",
                              "deg2rad", "floor", "round", "remainder", "fmod", "hypot",
                              "logaddexp", "arctan2", "copysign", "fmax", "floor_divide"]))
    f = getattr(m, name)
    if name == "log2":
        return f(m.abs(x) + 0.5)
    return f(x, x[..., ::-1] + 0.75) if getattr(np, name).__class__ is np.ufunc and \
        getattr(np, name).nin == 2 else f(x)


PROPS = {"var": _var, "cum": _cum, "sort": _sort, "diff": _diff, "roll": _roll, "pad": _pad,
         "quantile": _quantile, "median": _median, "stack": _stack, "tile": _tile,
         "repeat": _repeat, "flip": _flip, "diag": _diag, "elementwise": _elementwise}


@settings(max_examples=EXAMPLES, deadline=None)
@given(name=st.sampled_from(sorted(PROPS)), x=arrays(dtypes=tuple(DTYPES)), data=st.data())
def test_functions_match_numpy(name, x, data):
    record: list = []

    def d(strategy):
        v = data.draw(strategy)
        record.append(v)
        return v
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            want = PROPS[name](np, x, d)
        except (TypeError, ValueError):  # NumPy refuses (e.g. bool subtract): so does vnp
            return
    it = iter(record)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = vg.jit(lambda x: PROPS[name](vnp, x, lambda s: next(it)))(x)
    assert_same(got, want, rtol=1e-6 if x.dtype == np.float32 else 1e-10, atol=1e-6)


@settings(max_examples=EXAMPLES, deadline=None)
@given(name=st.sampled_from(sorted(set(PROPS) - {"elementwise"})), x=arrays(), data=st.data())
def test_gradients_match_central_differences(name, x, data):
    record: list = []

    def d(strategy):
        v = data.draw(strategy)
        record.append(v)
        return v
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        out = PROPS[name](np, x, d)
    if not np.size(out) or np.asarray(out).dtype.kind != "f" or not np.isfinite(out).all():
        return  # (a variance with ddof >= n is nan, as in NumPy)
    w = np.random.default_rng(0).standard_normal(np.shape(out))

    def loss(x):
        it = iter(record)
        return vnp.sum(PROPS[name](vnp, x, lambda s: next(it)) * w)
    x = x + np.linspace(0, 0.1, x.size).reshape(x.shape)  # no exact ties (sort, quantiles)
    vg.check_grads(loss, [x], rtol=1e-5, atol=1e-7)
