"""Python index lists that are ramps (`x[[t, t + d, t + 2 d]]`, `x[[5, 3, 1]]`) read and write
as the slices they equal (index.ramp_as_basic), so loops over them batch as affine positions:
batched equals unbatched, gradients equal central differences (float64, random directions),
NumPy's values, shapes and copy semantics are kept, and no gather is left."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, gathers, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.index import normalize_index, ramp_as_basic, to_key


def dilated_lists(x, w):
    k, d = w.shape[0], 2
    n = x.shape[0] - (k - 1) * d
    return vnp.sum(vnp.stack([x[[t + j * d for j in range(k)]].T @ w for t in range(n)]) ** 2)


def reversed_lists(x, w):
    k = w.shape[0]
    ys = [vnp.dot(x[[t + k - 1 - j for j in range(k)]], w) for t in range(x.shape[0] - k + 1)]
    return vnp.sum(vnp.tanh(vnp.stack(ys)))


def column_lists(X, w):
    # columns picked by a ramp list beside a full slice: X[:, [c, c + 2]] for every c
    return sum(vnp.sum(vnp.sin(X[:, [c, c + 2]] @ w)) for c in range(X.shape[1] - 2))


def list_writes(x):
    out = vnp.zeros((x.shape[0] // 2, 2))
    for t in range(x.shape[0] // 2):
        out[t, [0, 1]] = x[[2 * t, 2 * t + 1]] ** 2
    return vnp.sum(out * vnp.arange(out.size).reshape(out.shape))


def list_adds(x):
    out = vnp.zeros(x.shape[0] + 2)
    for t in range(x.shape[0]):
        out[[t, t + 1, t + 2]] += x[t] * vnp.array([1.0, -2.0, 1.0])
    return vnp.sum(out ** 2)


CASES = [
    ("dilated_lists", dilated_lists, lambda r: (r.standard_normal((20, 3)),
                                                r.standard_normal(3)), (0, 1)),
    ("reversed_lists", reversed_lists, lambda r: (r.standard_normal(25), r.standard_normal(4)),
     (0, 1)),
    ("column_lists", column_lists, lambda r: (r.standard_normal((4, 9)), r.standard_normal(2)),
     (0, 1)),
    ("list_writes", list_writes, lambda r: (r.standard_normal(14),), 0),
    ("list_adds", list_adds, lambda r: (r.standard_normal(15),), 0),
]


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_ramp_lists_batch_as_slices(name, f, make, argnums):
    e = check(f, make(rng()), argnums)
    for s in ("batch", "final"):
        assert not gathers(e.stages[s]), vg.ir.pretty(e.stages[s])
    assert len(e.stages["batch"].eqns) < 20, vg.ir.pretty(e.stages["batch"])


def test_ramp_index_equals_numpy():
    r = rng(5)
    x = r.standard_normal((5, 6, 7))
    keys = [([1, 3],), ([4, 2, 0],), (slice(None), [5, 4, 3, 2]), (0, [1, 2]),
            (slice(None), 2, [6, 3, 0]), (0, slice(None), [1, 2]), ([2], None, 1),
            (None, [0, 1, 2], slice(1, None)), ([3, 3],), ([1, 2, 4],)]
    for key in keys:
        f = vg.jit(lambda x, key=key: x[key] * 1.0)
        np.testing.assert_array_equal(f(x), x[key])
        idx = normalize_index(key, x.shape)
        b = ramp_as_basic(idx)
        if b is not None:
            assert x[to_key(b)].shape == x[key].shape


@pytest.mark.parametrize("key", [(0, slice(None), [1, 2]), ([3, 3],), ([1, 2, 4],),
                                 ([[1, 2]],)])
def test_not_ramps_stay_advanced(key):
    # an int apart from the array (NumPy moves the array's axis first), repeats, uneven steps
    # and 2-D arrays are no slices
    assert ramp_as_basic(normalize_index(key, (5, 6, 7))) is None


def test_ramp_read_is_a_copy():
    # x[[1, 2]] copies in NumPy: writing into it leaves x alone (a slice would write through)
    def f(x):
        y = x[[1, 2]]
        y[0] = 5.0
        return vnp.sum(x * x) + vnp.sum(y)

    x = rng(2).standard_normal(4)

    def ref(x):
        y = x[[1, 2]]
        y[0] = 5.0
        return np.sum(x * x) + np.sum(y)

    np.testing.assert_allclose(vg.jit(f)(x), ref(x))
    np.testing.assert_allclose(vg.grad(f)(x), 2 * x + np.array([0, 0, 1.0, 0]))
