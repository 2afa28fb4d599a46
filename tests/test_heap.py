"""The NumPy backend keeps freed arrays in the heap between compiled calls (backends/numpy/heap):
a gradient that allocates and frees megabytes per call does not fault its pages in again."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.backends.numpy import heap


def rnn_energy(W, xs):
    h = vnp.zeros((W.shape[0], xs.shape[2]))
    total = 0.0
    for t in range(len(xs)):
        h = vnp.tanh(W @ h + xs[t])
        total += vnp.sum(h ** 2)
    return total


def test_retain_heap_is_set_once_and_can_be_turned_off():
    saved = dict(heap._state)
    try:
        heap._state.clear()
        with vg.config(retain_heap=False):
            assert heap.retain_heap() is False
            assert "done" not in heap._state      # off: nothing recorded, asked again later
        first = heap.retain_heap()
        assert heap.retain_heap() is first        # once per process
        assert first is (sys.platform.startswith("linux") and heap._mallopt(-1, heap.TRIM))
    finally:
        heap._state.clear()
        heap._state.update(saved)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="getrusage faults: Linux")
def test_compiled_gradient_does_not_fault_its_buffers_in_every_call():
    import resource
    rng = np.random.default_rng(0)
    W, xs = 0.1 * rng.standard_normal((64, 64)), rng.standard_normal((100, 64, 32))
    g = vg.grad(rnn_energy)
    if not heap.retain_heap():
        pytest.skip("not glibc")
    want = vg.grad(rnn_energy)(W, xs)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        got = g(W, xs)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    np.testing.assert_allclose(got, want)
    # each call allocates and frees about 5 MB (1,200 pages); with the heap retained only
    # the first call may map fresh pages
    assert faults < 1500, faults
