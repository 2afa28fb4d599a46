"""Differential fuzzing of NumPy's semantics beyond float64 inside loops and programs
(tests/fuzz_semantics.py: int and bool buffers written in loops, NEP 50 promotion through
loops and accumulators, reductions over axis tuples / negative axes with keepdims, np.linalg
per item, sorting and arg-reductions per row with ties, where / select / clip chains with
mixed dtypes, complex values), under tests/test_fuzz_loops.py's transforms and its four
checks: NumPy's values, dtypes and shapes; gradients against central differences; the
batched graph against the unbatched one; a second call on new values.

CI runs VECGRAD_FUZZ_SEMANTICS seeded programs (default 25: seconds). Thousands, locally:

    nice .venv/bin/python tests/test_fuzz_loops.py 3000 0 semantics    # (or one style)
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_semantics import SemGen
from test_fuzz_loops import CHECKS, assert_styles_drawn, seeded_failures

SEEDS = int(os.environ.get("VECGRAD_FUZZ_SEMANTICS", "25"))


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_fuzz_semantics_seeded(check):
    """SEEDS seeded programs per check: none may fail."""
    fails = seeded_failures(check, SEEDS, SemGen)
    assert not fails, f"{len(fails)} failures; first:\n" + fails[0]


def test_every_semantics_style_is_drawn():
    assert_styles_drawn(SemGen, SemGen.NEW, 20, 15)
