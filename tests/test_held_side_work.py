"""Work hanging off a recurrence that has the recurrence's own key (batch/agenda.py holds it).

`w = w * b[t]; loss += w * e[t]`: both products multiply two scalars, are ready together and
independent, so the agenda used to run them as one group per step (a product with a stack of
two), which hid the chain from `scans` (7.4x its NumPy reference at 2,000 steps). A ready member
whose height is at most the least height of its key's members not yet ready cannot lead to one
of them, so it is held and runs with the key's other held members once all are ready: the
recurrence stays a chain (one cumprod), the reads of it one batched product after it.

Each program is checked against its unrolled trace, its NumPy reference and central
differences (test_scans.check) at two trip counts whose final graphs must be equal, and the
recurrence must be a cumprod or a scan after `scans`."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_scans import check, prims, rng

import vecgrad as vg
from vecgrad.config import config

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from patterns import variants_sums27 as V27
from patterns import variants_sums28 as V


def decay_vector_readout(A, X, c):
    """A vector state h = A[t] * h + X[t], read each step by h * c (the step's own kind)."""
    h = np.zeros(A.shape[1])
    loss = 0.0
    for t in range(A.shape[0]):
        h = A[t] * h + X[t]
        loss = loss + np.sum(h * c)
    return loss


def decay_vector_readout_ref(A, X, c):
    h, tot = np.zeros(A.shape[1]), 0.0
    for t in range(A.shape[0]):
        h = A[t] * h + X[t]
        tot += np.sum(h * c)
    return tot


def survival_read_twice(p, a, b):
    """A survival read by two products a step (s * a[t] and s * b[t]) besides its own
    update s * (1 - p[t])."""
    s = 1.0
    tot = 0.0
    for t in range(len(p)):
        s = s * (1.0 - p[t])
        tot = tot + s * a[t] - s * b[t]
    return tot


def survival_read_twice_ref(p, a, b):
    return np.sum(np.cumprod(1.0 - p) * (a - b))


def _decay_args(r, T):
    return r.uniform(0.5, 1.0, (T, 3)), r.standard_normal((T, 3)), r.standard_normal(3)


def _surv_args(r, T):
    return r.uniform(0.0, 0.01, T), r.standard_normal(T), r.standard_normal(T)


def _factors(r, T):
    return r.uniform(0.99, 1.0, T), r.standard_normal(T)


CASES = [
    ("discounted_return_product", V.discounted_return_product, V.discounted_return_product_ref,
     _factors, (0, 1)),
    ("expected_lifetime", V.expected_lifetime, V.expected_lifetime_ref,
     lambda r, T: (r.uniform(0.0, 0.01, T),), 0),
    ("compounded_cashflows", V.compounded_cashflows, V.compounded_cashflows_ref,
     lambda r, T: (r.normal(0, 0.001, T), r.standard_normal(T)), (0, 1)),
    ("weighted_survival_rows", V.weighted_survival_rows, V.weighted_survival_rows_ref,
     lambda r, T: (r.uniform(0.99, 1.0, (T, 3)), r.standard_normal((T, 3))), (0, 1)),
    ("decay_then_square", V.decay_then_square, V.decay_then_square_ref, _factors, (0, 1)),
    ("two_products_one_loop", V.two_products_one_loop, V.two_products_one_loop_ref,
     lambda r, T: (r.uniform(0.99, 1.0, T), r.uniform(0.99, 1.0, T), r.standard_normal(T)),
     (0, 1, 2)),
    ("decaying_sample_weights", V27.decaying_sample_weights, V27.decaying_sample_weights_ref,
     lambda r, T: (r.uniform(0.99, 1.0, T), r.standard_normal(T), r.standard_normal(T)),
     (0, 2)),
    ("decay_vector_readout", decay_vector_readout, decay_vector_readout_ref, _decay_args,
     (0, 1, 2)),
    ("survival_read_twice", survival_read_twice, survival_read_twice_ref, _surv_args, (0, 1, 2)),
]


def _final(f, args, argnums):
    with config(keep_stages=True):
        e, _ = vg.grad(f, argnums=argnums).entry(*args)
    return e


@pytest.mark.parametrize("name,f,ref,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_side_work_leaves_the_chain(name, f, ref, make, argnums):
    finals = []
    for T in (40, 80):
        args = make(rng(T), T)
        check(f, args, argnums, ref=ref, fd=T == 40)
        e = _final(f, args, argnums)
        scans = prims(e.stages["scans"])
        assert {"cumprod", "affine_scan", "linear_scan", "loop"} & set(scans), scans
        # no product with a stack of two per step: the graph does not grow with T
        assert scans.count("concatenate") <= 2, scans
        finals.append(len(e.stages["final"].eqns))
    assert finals[0] == finals[1]


def test_held_reads_at_zero_factors():
    """Held reads of a survival that reaches 0 (a certain event) and of one that underflows:
    values and gradients still equal the unrolled trace's and central differences'."""
    r = rng(3)
    p = r.uniform(0.0, 0.3, 60)
    p[17] = 1.0
    check(survival_read_twice, (p, r.standard_normal(60), r.standard_normal(60)), (0, 1, 2),
          ref=survival_read_twice_ref)
    g = np.full(600, 0.2)
    check(V.discounted_return_product, (g, r.standard_normal(600)), (0, 1),
          ref=V.discounted_return_product_ref, fd=False)
