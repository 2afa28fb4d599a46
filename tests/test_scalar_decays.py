"""Linear recurrences of scalar carries (Python floats, lists, tuples and dicts of floats)
rolled before batching (batch/scans._scaled): batching can merge no two steps of a decay, so
it walked them one group per operation per step before `scans` rolled them up again (a
cascade of three filters over 4,000 steps: 8,000 groups, 3 s of compiling). Rolled on the
trace, the step is recognized as scans at once.

Each program (most from bench/patterns/variants_scans25.py) is one plain loop, run by
NumPy on NumPy values as the reference (float64, rtol 1e-9) and traced by vecgrad; checked
against its unrolled trace and central differences (test_scans.check) at two trip counts
whose final graphs must be equal, and rolled before batching. The blocked closed form of
constant-coefficient scans is checked against NumPy's paired steps."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_scans import check, prims, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.primitives.scans import _affine_impl
from vecgrad.rewrite.closed_form import _block

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from patterns import variants_scans25 as V  # (scalar programs: plain loops NumPy runs too)


def cascade(x):
    """Three filters in a list of floats, the middle one read every step."""
    s = [0.0, 0.0, 0.0]
    total = 0.0
    for t in range(len(x)):
        s[0] = 0.8 * s[0] + x[t]
        s[1] = 0.7 * s[1] + 0.3 * s[0]
        s[2] = s[2] + 0.05 * s[1]
        total = total + s[1] * s[2]
    return total


def coupled(x):
    """Position and velocity, the position reading the new velocity (a 2x2 system)."""
    p, v = 0.0, 0.0
    total = 0.0
    for t in range(len(x)):
        v = 0.95 * v - 0.1 * p + x[t]
        p = p + 0.1 * v
        total = total + p * p
    return total


def _x(r, T):
    return (r.standard_normal(T),)


def _xk(r, T):
    return r.standard_normal(T), np.array(0.85)


def _rx(r, T):
    return r.uniform(0.95, 1.05, T), r.standard_normal(T)


PROGRAMS = [(cascade, _x), (V.scalar_tuple_filters, _x), (V.scalar_dict_learned, _xk),
            (V.scalar_running_mean, _x), (V.scalar_bias_corrected, _x), (coupled, _x),
            (V.scalar_product_sum, _rx), (V.scalar_reverse_returns, _x)]


@pytest.mark.parametrize("f, make", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_rolled_before_batching(f, make):
    r = rng(25)
    sizes = []
    for T in (80, 160):
        args = make(r, T)
        e = check(f, args, argnums=tuple(range(len(args))), ref=f)
        sizes.append(e.counts["final"])
    assert sizes[0] == sizes[1], sizes
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f, argnums=0).entry(*make(r, 100))
    assert e.counts["roll"] < e.counts["traced"], e.counts
    found = prims(e.stages["roll"])
    assert {"loop", "affine_scan", "linear_scan", "cumprod", "cumsum"} & set(found), found


def test_float32_cascade():
    x = rng(3).standard_normal(120).astype(np.float32)
    val, g = vg.value_and_grad(cascade)(x)
    assert val.dtype == np.float32 and g.dtype == np.float32
    np.testing.assert_allclose(val, cascade(x.astype(np.float64)), rtol=1e-4)
    g64 = vg.grad(cascade)(x.astype(np.float64))
    np.testing.assert_allclose(g, g64, rtol=1e-3, atol=1e-4 * np.abs(g64).max())


def sum_chain(x, w):
    total = 0.0
    for t in range(len(x)):
        total = total + w * x[t] * x[t]
    return total


def test_sum_chain_left_to_batching():
    """A chain of sums (scaled terms, no scaled carry) is batching's: one reduction."""
    args = (rng(4).standard_normal(200), np.array(0.5))
    with vg.config(keep_stages=True):
        e, _ = vg.grad(sum_chain, argnums=(0, 1)).entry(*args)
    assert e.counts["roll"] == e.counts["traced"], e.counts
    check(sum_chain, args, argnums=(0, 1), ref=sum_chain)


def nonlinear_and_decay(x):
    """A decay feeding a nonlinear recurrence: the nonlinear search rolls the loop."""
    a, b = 0.0, 0.0
    total = 0.0
    for t in range(len(x)):
        a = 0.9 * a + x[t]
        b = np.tanh(0.5 * b + a)
        total = total + b
    return total


def test_nonlinear_beside_decay():
    r = rng(5)
    sizes = []
    for T in (80, 160):
        e = check(nonlinear_and_decay, (0.3 * r.standard_normal(T),), ref=nonlinear_and_decay)
        sizes.append(e.counts["final"])
    assert sizes[0] == sizes[1], sizes


# ------------------------------------------------------------------ blocked closed form

def _blocked_case(a, init, xshape):
    """affine_scan(init, a, x) of constant a (T steps), through the pipeline and NumPy's
    paired steps, with the scan's whole trajectory weighted so every row counts."""
    w = rng(9).standard_normal(np.broadcast_shapes(a.shape[1:] if a.ndim > 1 else (),
                                                   xshape[1:], np.shape(init)))

    def f(x, c0):
        return vnp.sum(vnp.cos(P.affine_scan(c0, vnp.asarray(a), x)) * w)

    def ref(x, c0):
        return np.sum(np.cos(_affine_impl(c0, a, x)) * w)
    return f, ref


@pytest.mark.parametrize("a, init, xshape", [
    (np.full((1,), 0.6), 0.3, (901,)),                 # one coefficient, padded blocks
    (np.full((1,), -0.5), 0.0, (768,)),                # negative, blocks without padding
    (np.tile([0.5, 0.97], 300)[:, None], np.ones(3), (600, 3)),  # varying per step
    (np.linspace(0.4, 0.6, 500)[:, None, None], np.zeros((2, 2)), (500, 2, 2)),
    (np.full((1, 4), 0.8), np.zeros(4), (1200,)),      # steps narrower than the state
    (np.full((1,), 0.01), 0.5, (400,)),                # many blocks: their ends in blocks too
], ids=["one", "negative", "varying", "matrix_rows", "narrow_steps", "many_blocks"])
def test_blocked_closed_form_equals_paired_steps(a, init, xshape):
    full = np.broadcast_to(a, (xshape[0],) + a.shape[1:])
    assert np.abs(np.cumprod(full, axis=0)).min() < 1e-77  # (out of range over the run)
    assert _block(full, 1e77) is not None
    f, ref = _blocked_case(a, init, xshape)
    x = rng(7).standard_normal(xshape)
    c0 = np.asarray(init, dtype=np.float64)
    with vg.config(keep_stages=True):
        e, _ = vg.grad(f, argnums=(0, 1)).entry(x, c0)
    long_scans = [q for q in e.stages["final"].eqns
                  if q.prim.name == "affine_scan" and q.out.aval.shape[0] == xshape[0]]
    assert not long_scans
    np.testing.assert_allclose(vg.jit(f)(x, c0), ref(x, c0), rtol=1e-9)
    vg.check_grads(f, (x, c0), argnums=(0, 1), rtol=1e-6, atol=1e-8)
