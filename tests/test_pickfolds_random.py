"""fold_pick against the loop it stands for on random selections: every rule (max/min,
first/latest tie, sticky/restart NaN), with and without a shift, on values drawn with ties,
NaNs and infinities, 1-D and rows, along either axis. The value must be the loop's (bit for
bit without a shift; within rounding with one, where the loop adds the shift once a step and
the fold at most log2(t) times) and every winner and scatter the loop's own selections."""
from __future__ import annotations

import numpy as np
import pytest
from specs_pickfolds import pick_ref, scatter_ref

from vecgrad import primitives as P


def _draw(r: np.random.Generator, shape: tuple) -> np.ndarray:
    kind = r.integers(4)
    x = r.integers(-4, 5, shape) * 0.25 if kind < 2 else r.standard_normal(shape) * 3.0
    for bad, p in ((np.nan, 0.08 * (kind % 2)), (np.inf, 0.05), (-np.inf, 0.05)):
        x[r.random(shape) < p] = bad
    return x


@pytest.mark.parametrize("seed", range(40))
def test_random_selections_are_the_loops(seed):
    r = np.random.default_rng(seed)
    shape = [(int(r.integers(1, 40)),), (int(r.integers(1, 25)), 3), (2, int(r.integers(1, 20)))][
        seed % 3]
    axis = 1 if seed % 3 == 2 else 0
    x = _draw(r, shape)
    greater, latest, restart = (bool(b) for b in r.integers(0, 2, 3))
    shift = float(r.choice([0.0, 0.0, -0.25, 0.5, -1.0, 0.1]))
    if not shift and not latest and not restart:
        latest = True  # (Python's own rule is fold_extreme: tests/test_folds.py)
    p = {"axis": axis, "greater": greater, "latest": latest, "restart": restart,
         "shift": shift}
    want, won = pick_ref(x, axis, greater, latest, restart, shift)
    got = P.fold_pick.impl(x, **p)
    if shift:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13, equal_nan=True)
        got = want  # (winners and scatters read the loop's own values below)
    else:
        np.testing.assert_array_equal(got, want)
    with np.errstate(invalid="ignore"):  # (inf - inf where a shifted inf meets -inf)
        np.testing.assert_array_equal(P.fold_pick_winner.impl(got, x, **p), won)
        g = r.standard_normal(shape)
        np.testing.assert_allclose(P.fold_pick_scatter.impl(g, got, x, **p),
                                   scatter_ref(g, got, x, axis, greater, latest, restart,
                                               shift), rtol=1e-12, atol=1e-12)
