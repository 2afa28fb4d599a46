"""Differential fuzzing of the NumPy calls natural ML and scientific code makes in loops
(tests/fuzz_calls.py: softmax / logsumexp by hand, norms, einsum, where / clip, sort and
argmax feeding indices, cumsum / diff / roll, joins and pads, tril / triu / outer, masks and
fancy indices among slices, integer // and %, float32, 0-d arrays, empty slices and
zero-trip loops), under every transform of tests/test_fuzz_loops.py (jit, static_argnums,
value_and_grad, has_aux, vmap with in_axes / out_axes, params pytrees), with its four checks:
NumPy's values, dtypes and shapes; gradients against central differences; the batched graph
against the unbatched one; a second call on new values.

CI runs VECGRAD_FUZZ_CALLS seeded programs (default 30: seconds). Thousands, locally:

    nice .venv/bin/python tests/test_fuzz_loops.py 3000 0 calls    # (or one style: norms)
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_calls import CallGen
from test_fuzz_loops import CHECKS, assert_styles_drawn, seeded_failures

SEEDS = int(os.environ.get("VECGRAD_FUZZ_CALLS", "30"))


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_fuzz_calls_seeded(check):
    """SEEDS seeded programs per check: none may fail."""
    fails = seeded_failures(check, SEEDS, CallGen)
    assert not fails, f"{len(fails)} failures; first:\n" + fails[0]


def test_every_call_style_is_drawn():
    assert_styles_drawn(CallGen, CallGen.NEW, 20, 15)
