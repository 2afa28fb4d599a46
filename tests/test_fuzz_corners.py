"""Differential fuzzing of the corners of NumPy's semantics (tests/fuzz_corners.py: complex
values accepted and refused, float16 / float32 through loops and NEP 50, integer overflow and
`//` / `%` with negative operands, empty arrays and zero-trip loops, sorts with ties and NaN,
np.unique's flags, boolean and `x[True]` indices, `out=` / `where=`, views of views written
through), under tests/test_fuzz_loops.py's transforms and its four checks.

CI runs VECGRAD_FUZZ_CORNERS seeded programs (default 20: seconds). Thousands, locally:

    nice .venv/bin/python tests/test_fuzz_loops.py 3000 0 corners    # (or one style)
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_corners import CornerGen
from test_fuzz_loops import CHECKS, assert_styles_drawn, seeded_failures

SEEDS = int(os.environ.get("VECGRAD_FUZZ_CORNERS", "20"))


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_fuzz_corners_seeded(check):
    """SEEDS seeded programs per check: none may fail."""
    fails = seeded_failures(check, SEEDS, CornerGen)
    assert not fails, f"{len(fails)} failures; first:\n" + fails[0]


def test_every_corner_style_is_drawn():
    assert_styles_drawn(CornerGen, CornerGen.NEW, 20, 15)
