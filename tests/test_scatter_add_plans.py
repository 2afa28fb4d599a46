"""Every candidate plan of a scatter-add at static integer arrays (`np.add.at(x, idx, v)`:
by_element's bincount, densely over the base or at the positions hit; np.add.at itself;
rows' segment sum) adds what np.add.at adds: 1-d, rows, two arrays, a broadcast value, a
base that is not C-contiguous (written in place), float32, complex."""
from __future__ import annotations

import numpy as np
import pytest

from vecgrad.backends.numpy import gathers
from vecgrad.index import Adv, Sl

R = np.random.default_rng(29)


def _candidates(monkeypatch, idx, shape, dtype):
    seen = []
    real = gathers._pick

    def pick(family, cands, key, xs, model):
        if family != "scatter_add":  # (the rows plan's own segment sum: chosen as usual)
            return real(family, cands, key, xs, model)
        seen.extend(cands)
        assert set(model(_Machine())) >= {c.__name__ for c in cands}
        return cands[0]
    monkeypatch.setattr(gathers, "_pick", pick)
    gathers.scatter_add_plan(idx, shape, np.dtype(dtype))
    return seen


class _Machine:
    def __getattr__(self, name):
        return 1e-9


_A = R.integers(-500, 500, 30)

CASES = {
    "dense_1d": ((Adv(R.integers(0, 40, 300)),), (40,), (300,)),
    "sparse_1d": ((Adv(np.r_[_A, _A[:5]]),), (500,), (35,)),  # (repeats, negative ids)
    "rows": ((Adv(R.integers(0, 20, 90)), Sl(0, 3, 1)), (20, 3), (90, 3)),
    "two_arrays": ((Adv(R.integers(0, 9, 70)), Adv(R.integers(0, 4, 70))), (9, 4), (70,)),
    "column": ((Sl(0, 5, 1), Adv(R.integers(0, 6, 40))), (5, 6), (5, 40)),
}


@pytest.mark.parametrize("dtype", ["f8", "f4", "c16"])
@pytest.mark.parametrize("name", list(CASES))
def test_every_scatter_add_plan_adds_as_add_at(monkeypatch, name, dtype):
    idx, shape, vshape = CASES[name]
    cands = _candidates(monkeypatch, idx, shape, dtype)
    assert {c.__name__ for c in cands} >= {"by_element", "add_at"}
    key = gathers.to_key(idx)
    tol = 1e-5 if dtype == "f4" else 1e-12
    for v in (R.standard_normal(vshape).astype(dtype), np.array(1.5, dtype)):
        base = R.standard_normal(shape).astype(dtype)
        ref = base.copy()
        np.add.at(ref, key, v)
        for plan in cands:
            np.testing.assert_allclose(plan(base.copy(), v), ref, rtol=tol, atol=tol)
            if len(shape) == 2:  # (a Fortran-ordered base, written in place)
                b = np.asfortranarray(base)
                assert plan(b, v) is b
                np.testing.assert_allclose(b, ref, rtol=tol, atol=tol)
