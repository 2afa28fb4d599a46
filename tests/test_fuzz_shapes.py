"""The cliff detector's new shapes (tests/fuzz_shapes.py: several carries, nested loops,
while loops, helpers that loop, stacked lists, dict / dataclass parameters, functools.reduce,
generator expressions, zip pairs, np.roll, reversed edges, continue / break, outer / einsum
per item, masks built in the loop): a flat gradient graph from n to 2n, no false recurrence,
values equal to NumPy's and gradients to central differences.

CI runs VECGRAD_FUZZ_SHAPES seeded programs per family (default 3: seconds); the time check
(`--time`) is a benchmark, run by hand:

    nice .venv/bin/python tests/fuzz_shapes.py 300 [start] [family] --time [--write DIR]
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import fuzz_shapes
from fuzz_cliffs import check
from fuzz_funcs import FuncGen
from fuzz_shapes import ShapeGen

SEEDS = int(os.environ.get("VECGRAD_FUZZ_SHAPES", "3"))
BAD = ("wrong", "crash", "grows", "unexplained", "recurrence")
KNOWN: set = set()  # (family, variant) cliffs open, with a reproducer in /work/notes/cliffs22/


@pytest.mark.parametrize("family", ShapeGen.FAMILIES)
def test_shapes_seeded(family):
    bad = []
    for seed in range(SEEDS):
        case = ShapeGen(seed).draw(family)
        res = check(case, seed, n=70)
        if res.status in BAD and (family, case.short) not in KNOWN:
            bad.append(f"seed {seed} {case.short}: {res.status}: {res.detail}\n{case.src}")
    assert not bad, bad[0]


@pytest.mark.parametrize("family", FuncGen.FAMILIES)
def test_function_shapes_seeded(family):
    """tests/fuzz_funcs.py's families (kernel arguments, map(lambda), layer classes,
    closures, recursion, Python helpers, 2-D comprehensions into np.array)."""
    bad = []
    for seed in range(SEEDS):
        case = FuncGen(seed).draw(family)
        res = check(case, seed, n=50)
        if res.status in BAD:
            bad.append(f"seed {seed} {case.short}: {res.status}: {res.detail}\n{case.src}")
    assert not bad, bad[0]


@pytest.mark.parametrize("gen", [ShapeGen, FuncGen])
def test_every_family_draws_and_references_agree(gen):
    """Each family is drawn; each hand-vectorized reference equals its program (the time
    check compares with it)."""
    fams = {gen(s).draw().family for s in range(300)}
    assert fams == set(gen.FAMILIES)
    seen = set()
    for s in range(400):
        case = gen(s).draw()
        if case.ref is None or (case.family, case.short) in seen:
            continue
        seen.add((case.family, case.short))
        ns: dict = {"np": fuzz_shapes.np}
        exec(case.ref, ns)  # noqa: S102 - the generator's own reference
        args = fuzz_shapes.fuzz_cliffs._args(30, s)
        want = fuzz_shapes.fuzz_cliffs.numpy_value(case.src, args)
        assert abs(float(ns["ref"](*args)) - want) <= 1e-8 * max(1.0, abs(want)), case.src
    assert len(seen) >= 25
