"""Two or more chains of one loop over the same values (`hi[k] = max(hi[k], x); lo[k] =
min(lo[k], x)`, at traced ids, Python-list keys, dict keys, rows) join into scatters that
read one concatenation (or stack) of the values: two equal ones were batched as a stack of
two broadcast copies, split again after (batch/extremes.py, foldchains.py). Values equal
the loop's, batched equals unbatched, gradients match central differences."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check as check_batched

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P

R = np.random.default_rng(2929)
K = R.integers(0, 7, 50)
KEYS = [int(k) for k in K]


def traced_hi_lo(x, k):
    hi, lo = vnp.full(7, -4.0), vnp.full(7, 4.0)
    for i in range(len(k)):
        hi[k[i]] = np.maximum(hi[k[i]], x[i])
        lo[k[i]] = np.minimum(lo[k[i]], x[i])
    return np.sum((hi - lo) ** 2)


def traced_three(x, k):
    hi, lo, top = vnp.full(7, -4.0), vnp.full(7, 4.0), vnp.zeros(7)
    for i in range(len(k)):
        hi[k[i]] = max(hi[k[i]], x[i])
        lo[k[i]] = min(lo[k[i]], x[i])
        top[k[i]] = max(top[k[i]], x[i])
    return np.sum(hi * lo) + np.sum(np.sin(top))


def list_hi_lo(x, keys):
    hi, lo = [-5.0] * 7, [5.0] * 7
    for i, key in enumerate(keys):
        hi[key] = max(hi[key], x[i])
        lo[key] = min(lo[key], x[i])
    return sum((h - m) ** 2 for h, m in zip(hi, lo))


def dict_hi_lo(x, keys):
    hi, lo = {}, {}
    for i, key in enumerate(keys):
        hi[key] = max(hi.get(key, -5.0), np.tanh(x[i]))
        lo[key] = min(lo.get(key, 5.0), np.tanh(x[i]))
    return sum(hi[q] - 2.0 * lo[q] for q in sorted(hi))


def rows_hi_lo(H, k):
    hi, lo = vnp.full((7, H.shape[1]), -3.0), vnp.full((7, H.shape[1]), 3.0)
    for i in range(len(k)):
        hi[k[i]] = np.maximum(hi[k[i]], H[i] * 2.0)
        lo[k[i]] = np.minimum(lo[k[i]], H[i] * 2.0)
    return np.sum(np.tanh(hi - lo))


def other_values(x, k):
    hi, lo = vnp.full(7, -4.0), vnp.full(7, 4.0)
    for i in range(len(k)):
        hi[k[i]] = np.maximum(hi[k[i]], x[i])
        lo[k[i]] = np.minimum(lo[k[i]], -x[i] * 0.5)  # (other values: nothing to share)
    return np.sum((hi - lo) ** 2)


CASES = {
    "traced_hi_lo": (traced_hi_lo, lambda: (R.standard_normal(50), K), 2),
    "traced_three": (traced_three, lambda: (R.standard_normal(50), K), 3),
    "list_hi_lo": (list_hi_lo, lambda: (R.standard_normal(50), KEYS), 2),
    "dict_hi_lo": (dict_hi_lo, lambda: (R.standard_normal(50), KEYS), 2),
    "rows_hi_lo": (rows_hi_lo, lambda: (R.standard_normal((50, 3)), K), 2),
    "other_values": (other_values, lambda: (R.standard_normal(50), K), 2),
}
_COPIES = (P.broadcast_to, P.stack, P.concatenate)


@pytest.mark.parametrize("name", list(CASES))
def test_chains_over_one_value_share_it(name):
    f, make, n_scatters = CASES[name]
    args = make()
    e = check_batched(f, args)
    np.testing.assert_allclose(vg.jit(f)(*args), f(*args), rtol=1e-12)
    g = e.stages["simplify"]
    assert sum(q.prim is P.scatter_reduce_along for q in g.eqns) == n_scatters
    if name != "other_values":  # (no stack, broadcast or concatenation of the values left)
        assert not [q for q in g.eqns if q.prim in _COPIES and q.out.aval.size >= 50], g
