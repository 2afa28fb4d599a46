"""Loops whose iterations split a vector of their own into fields of several lengths (a
camera's rotation, translation, focal length and distortion; an inlined Jacobian's blocks per
observation, written transposed: bench/patterns/variants_gradbench26.py; gates of a per-row
projection) are left by `listmaps` to the batching pass, which
merges each field across the iterations: the tiles `listmaps` would make of one iteration's
fields merge nothing (the fields feed different work) and its rounds cost as much as batching
(GradBench's ba at p = 1,000: about 0.5 s of a 3.4 s compile). Loops over the segments of one
array (CSR rows, neighbour lists) still become one gather. Batched equals unbatched (values and
gradients), gradients match central differences, values match NumPy's loop."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_batch import check as check_batched

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.api import trace_graph
from vecgrad.batch.listmaps import _gathers

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from patterns.variants_gradbench26 import block_rows_written, observation_fields

R = np.random.default_rng(26)


def gates_of_rows(x, W):
    """Each row's projection v = W @ x[i] split into gates of lengths 4, 2 and 3."""
    tot = 0.0
    for i in range(x.shape[0]):
        v = W @ x[i]
        a, b, c = v[0:4], v[4:6], v[6:9]
        tot = tot + vnp.sum(vnp.tanh(a)) * vnp.sum(b * b) + vnp.sum(vnp.exp(-c * c))
    return tot


def listed_fields(x):
    """Each row read at index lists of lengths 3 and 2 (fields picked by position)."""
    tot = 0.0
    for i in range(x.shape[0]):
        r = vnp.exp(x[i])
        tot = tot + vnp.sum(r[[0, 2, 4]] ** 2) * vnp.sum(vnp.sin(r[[1, 3]]))
    return tot


def segment_products(x, w, ptr):
    """A loop over segments of two arrays (CSR rows): one gather each, not per segment."""
    tot = 0.0
    for s in range(len(ptr) - 1):
        lo, hi = ptr[s], ptr[s + 1]
        tot = tot + vnp.sum(vnp.tanh(x[lo:hi] * w[lo:hi])) ** 2
    return tot


def _camera_args(n):
    return R.standard_normal((n, 11)) * 0.3, R.standard_normal((n, 3))


CASES = [
    (observation_fields, lambda n: _camera_args(n), (0, 1)),
    (block_rows_written, lambda n: (R.standard_normal((n, 6)), R.standard_normal((n, 2))), (0, 1)),
    (gates_of_rows, lambda n: (R.standard_normal((n, 5)), R.standard_normal((9, 5)) * 0.5),
     (0, 1)),
    (listed_fields, lambda n: (R.standard_normal((n, 5)) * 0.5,), 0),
]


@pytest.mark.parametrize("f,make,argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_per_iteration_fields_are_left_to_batching(f, make, argnums):
    args = make(16)
    g = trace_graph(f, args)
    assert _gathers(g, segments=True) is None  # (no tiles: each field batches across rows)
    e = check_batched(f, args, argnums=argnums)
    small = len(vg.grad(f, argnums=argnums).entry(*make(11))[0].stages["batch"].eqns)
    assert len(e.stages["batch"].eqns) == small  # (merged across the rows at any count)


@pytest.mark.parametrize("f,make,argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_per_iteration_fields_values_are_numpy_loops(f, make, argnums):
    args = make(7)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)


def test_segments_of_a_few_arrays_are_still_one_gather():
    x, w = R.standard_normal(12), R.standard_normal(12)
    ptr = [0, 2, 7, 12]
    g = trace_graph(lambda x, w: segment_products(x, w, ptr), (x, w))
    assert _gathers(g, segments=True) is not None
    check_batched(lambda x, w: segment_products(x, w, ptr), (x, w), argnums=(0, 1))
    np.testing.assert_allclose(vg.jit(lambda x, w: segment_products(x, w, ptr))(x, w),
                               segment_products(x, w, ptr), rtol=1e-12)


def test_fields_are_layouts_repeated_by_many_arrays():
    from vecgrad.batch.fields import fields
    jac = {f"J{i}": ((0, 11), (11, 14), (14, 15)) for i in range(7)}  # 7 > 2 * 3 reads
    few = {f"C{i}": ((0, 3), (3, 6), (7, 9)) for i in range(6)}  # 6 = 2 * 3: kept
    csr = {"x": ((0, 2), (2, 7), (7, 12)), "w": ((0, 2), (2, 7), (7, 12))}
    assert fields({**jac, **few, **csr}) == set(jac)


FEW = [c for c in CASES if c[0] is not gates_of_rows]  # (W @ x[i]: rows of one product, which
# listmaps merges, so its tiles stay; from 7 rows on, `fields` leaves them to batching)


@pytest.mark.parametrize("f,make,argnums", FEW, ids=[c[0].__name__ for c in FEW])
def test_fields_of_a_few_iterations_are_left_as_reads(f, make, argnums):
    # three iterations: too few for `fields` to tell, so listmaps tiles them; no work merges
    # on the tiles, and the graph is given back as it was
    from vecgrad.batch.listmaps import list_maps
    args = make(3)
    g = trace_graph(f, args)
    assert _gathers(g, segments=True) is not None
    assert list_maps(g, segments=True) is g
    e = check_batched(f, args, argnums=argnums)
    big = vg.grad(f, argnums=argnums).entry(*make(16))[0]
    assert len(e.stages["final"].eqns) == len(big.stages["final"].eqns)
