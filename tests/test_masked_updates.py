"""`x[mask] op= c` and `y[mask] = x[mask]` with a traced boolean mask (numpy/_masked.py): the
selection's length depends on the data, but these forms give arrays of x's shape. Values and
dtypes equal NumPy's, gradients match central differences; every other use of `x[mask]`
raises a typed error."""
from __future__ import annotations

import numpy as np
import pytest
from test_numpy_api import check

import vecgrad as vg
from vecgrad.errors import CastingError, TraceError

R = np.random.default_rng(5)
X, Y = R.standard_normal((5, 3)), R.standard_normal((5, 3))


def _leaky(xp, x, y):
    r = x * 1.0
    r[r < 0] *= 0.1
    return r


def _two_updates(xp, x, y):
    r = x * 1.0
    r[r > 1] -= 1.0
    r[r < -1] += 2
    return r


def _copy_where(xp, x, y):
    o = y * 1.0
    m = x > 0
    o[m] = x[m]
    return o


def _row_mask(xp, x, y):
    o = y * 1.0
    m = x[:, 0] > 0
    o[m] = x[m]
    o[m] /= 2.0
    return o


def _add_selected(xp, x, y):
    r = x.copy()
    m = xp.abs(x) > 0.5
    r[m] += y[m]
    return r


def _power(xp, x, y):
    r = x * 1.0
    r[r < 0] **= 2
    return r


@pytest.mark.parametrize("f", [_leaky, _two_updates, _copy_where, _row_mask, _add_selected,
                               _power])
def test_masked_update_as_numpy(f):
    check(f, X, Y, argnums=(0, 1))


def test_masked_update_in_a_loop_batches_to_numpy():
    def f(xp, x, y):
        out = xp.zeros_like(x)
        for i in range(x.shape[0]):
            r = x[i] * y[i]
            r[r < 0] *= 0.01
            out[i] = r
        return out
    check(f, X, Y, argnums=(0, 1))


@pytest.mark.parametrize("body, err", [
    ("s = r[r < 0]\n    return len(s)", TraceError),  # (reductions: test_masked_reads.py)
    ("return np.sort(r[r < 0])", TraceError),
    ("s = r[r < 0]\n    return s * 2", TraceError),
    ("return r[r < 0][0]", TraceError),
    ("return np.median(r[r < 0])", TraceError),
    ("s = r[r < 0]\n    s[-2:] = 1.0\n    return r", TraceError),  # (fuzz_numpy seed 300482)
    ("s = r[r > 0]\n    s[::-1] = r\n    return r + 1", TraceError),
    ("r[r < 0] += np.ones(2)\n    return r", TraceError),
    ("r[r < 0] = r[r > 0]\n    return r", TraceError),
    ("q = r.astype(np.int64)\n    q[q < 0] *= 0.5\n    return q", CastingError),
])
def test_other_uses_of_a_masked_selection_raise(body, err):
    ns: dict = {"np": np}
    exec(f"def f(x):\n    r = x * 1.0\n    {body}\n", ns)  # noqa: S102
    with pytest.raises(err):
        vg.jit(ns["f"])(X)
