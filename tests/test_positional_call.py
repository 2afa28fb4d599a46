"""The quick key of a call with positional arrays, float64 scalars and Python floats
(`signature.positional_call`, a compiled function called in a Python loop with a float and
an array): it is flatten_call's key exactly, or None where the call needs the general path
(ints, bools, float32 scalars, containers, static or untraced numbers)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.signature import flatten_call, positional_call

VALUES = {
    "array": np.array([0.5, -1.0]),
    "matrix": np.ones((2, 3), np.float32),
    "0-d": np.array(2.0),
    "ints": np.arange(3),
    "float": 0.25,
    "f64": np.float64(-1.5),
    "f32": np.float32(1.5),
    "int": 3,
    "bool": True,
    "list": [1.0, 2.0],
    "none": None,
}


def _same(a, b):
    assert b is not None
    (la, ta, sa), (lb, tb, sb) = a, b
    assert ta == tb and sa == sb
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert type(x) is type(y)
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("names", list(itertools.product(VALUES, repeat=2)))
@pytest.mark.parametrize("static", [frozenset(), frozenset([0]), frozenset([1])])
@pytest.mark.parametrize("trace", [True, False])
def test_the_quick_key_is_flatten_calls_or_none(names, static, trace):
    args = tuple(VALUES[n] for n in names)
    quick = positional_call(args, static, trace)
    simple = {"array", "matrix", "0-d", "ints", "float", "f64"}
    if not set(names) <= simple or (not trace and "float" in names) or any(
            names[i] == "float" for i in static):
        assert quick is None
        return
    _same(flatten_call(args, {}, static, trace), quick)


def _force():
    def force(w, x):  # (a new function each time: compiles are cached per function)
        return vnp.sum(vnp.sin(w * x) / (1.0 + x * x))
    return force


@pytest.mark.parametrize("kind", ["jit", "grad"])
def test_calls_with_floats_match_and_compile_once(kind):
    f = vg.jit(_force()) if kind == "jit" else vg.grad(_force(), argnums=1)
    x = np.array([0.3, 7.0, -2.0])
    outs = [f(w, x) for w in (0.5, 0.75, np.float64(0.5), np.array(0.5))]
    ref = np.sum(np.sin(0.5 * x) / (1 + x * x)) if kind == "jit" else \
        np.cos(0.5 * x) * 0.5 / (1 + x * x) - np.sin(0.5 * x) * 2 * x / (1 + x * x) ** 2
    for o in (outs[0], outs[2], outs[3]):
        np.testing.assert_allclose(o, ref, rtol=1e-12)
    assert not np.allclose(outs[1], outs[0])  # (a new float value is not a stale hit)
    # a Python float is a weak leaf: 0.5 and 0.75 share one compile; a float64 scalar and a
    # 0-d float64 array share another, as through flatten_call
    assert len(f._cache.entries) == 2


def test_a_static_float_is_keyed_by_value():
    f = vg.jit(lambda w, x: x * w, static_argnums=0)
    x = np.arange(3.0)
    np.testing.assert_array_equal(f(2.0, x), 2 * x)
    np.testing.assert_array_equal(f(3.0, x), 3 * x)
    assert len(f._cache.entries) == 2


def test_untraced_scalars_stay_static():
    f = vg.jit(lambda w, x: x * w)
    x = np.arange(3.0)
    with vg.config(trace_scalars=False):
        np.testing.assert_array_equal(f(2.0, x), 2 * x)
        np.testing.assert_array_equal(f(3.0, x), 3 * x)
    assert len(f._cache.entries) == 2
