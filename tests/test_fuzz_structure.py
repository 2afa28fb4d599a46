"""Differential fuzzing of writes through views and aliases and of the structure of natural
programs (tests/fuzz_structure.py: overlapping in-place operands, writes through .T /
reshape / x[::2] / np.swapaxes / out=, chained writes read back, writes under a Python if,
buffers reused by two loops, repeated fancy positions; parameters in a class or a dict,
closures and lambdas as kernels, functools.reduce, itertools, generator functions, while,
continue / break, recursion on Python ints), under tests/test_fuzz_loops.py's transforms plus
vg.jit(vg.grad(...)) of a vg.vmap and vg.jit(vg.grad(f), static_argnums=...), with its four
checks: NumPy's values, dtypes and shapes; gradients against central differences; the
batched graph against the unbatched one; a second call on new values.

CI runs VECGRAD_FUZZ_STRUCTURE seeded programs (default 30: seconds). Thousands, locally:

    nice .venv/bin/python tests/test_fuzz_loops.py 3000 0 structure    # (or one style)
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_structure import StructGen
from test_fuzz_loops import CHECKS, assert_styles_drawn, seeded_failures

SEEDS = int(os.environ.get("VECGRAD_FUZZ_STRUCTURE", "30"))


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_fuzz_structure_seeded(check):
    """SEEDS seeded programs per check: none may fail."""
    fails = seeded_failures(check, SEEDS, StructGen)
    assert not fails, f"{len(fails)} failures; first:\n" + fails[0]


def test_every_structure_style_is_drawn():
    assert_styles_drawn(StructGen, StructGen.NEW, 20, 15)
