"""Windows weighted one offset at a time inside the loop (`sum(w[j] * X[i + j] for j in
range(k))`): batching pairs every window with every offset, so the product is made on the
flattened (windows x offsets) group with the taps' weights broadcast along it, then summed
over the offsets. rewrite/layout.py's elementwise_of_reshapes reads such a product in the
view's (windows, offsets, ...) shape, where the sum over the offsets is one contraction of
the strided view (no copy of it, and no (n * k, C) product); the planner runs a product whose
only contracted letters have size 1 as the outer product it is. Batched equals unbatched,
gradients equal central differences (float64, random directions)."""
from __future__ import annotations

import numpy as np
import pytest
from test_batch import check, entry, rng

import vecgrad.numpy as vnp
from vecgrad.backends.numpy import planner as L


def scalar_rows(k):
    def f(X, w):
        n = X.shape[0] - k + 1
        Y = vnp.zeros((n, X.shape[1]))
        for i in range(n):
            Y[i] = sum(w[j] * X[i + j] for j in range(k))
        return vnp.sum(vnp.tanh(Y))
    return f


def vector_rows(k):
    # a weight row per tap (depthwise), a running sum of a nonlinearity
    def f(X, W):
        out = 0.0
        for i in range(X.shape[0] - k + 1):
            out = out + vnp.sum(vnp.sin(sum(W[j] * X[i + j] for j in range(k))))
        return out
    return f


def causal_list(k):
    # past rows, newest first, collected in a list
    def f(X, w):
        ys = [sum(w[j] * X[i - j] for j in range(k)) for i in range(k - 1, X.shape[0])]
        return vnp.sum(vnp.stack(ys) ** 2)
    return f


def dilated(k, d):
    def f(X, w):
        out = 0.0
        for i in range(X.shape[0] - d * (k - 1)):
            out = out + vnp.sum(vnp.tanh(sum(w[j] * X[i + d * j] for j in range(k))))
        return out
    return f


def strided(k, s):
    def f(X, w):
        ys = []
        for i in range(0, X.shape[0] - k + 1, s):
            ys.append(sum(w[j] * X[i + j] for j in range(k)))
        return vnp.sum(vnp.cos(vnp.stack(ys)))
    return f


def of_tanh(k):
    # the taps weight a nonlinearity of the rows, then a readout
    def f(X, w, v):
        s = 0.0
        for i in range(X.shape[0] - k + 1):
            s = s + vnp.log1p(vnp.exp(sum(w[j] * vnp.tanh(X[i + j]) for j in range(k)) @ v))
        return s
    return f


def stencil_2d(p):
    # scalar kernel weights times pixels, two loops and a generator over both offsets
    def f(img, K):
        H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
        out = vnp.zeros((H, W))
        for i in range(H):
            for j in range(W):
                out[i, j] = sum(K[a, b] * img[i + a, j + b] for a in range(p) for b in range(p))
        return vnp.sum(vnp.tanh(out))
    return f


def stencil_rows(p):
    # a 2-D stencil per output row of a channels-last image
    def f(img, K):
        H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
        total = 0.0
        for i in range(H):
            row = sum(K[a, b] * img[i + a, b:b + W] for a in range(p) for b in range(p))
            total = total + vnp.sum(row ** 2)
        return total
    return f


def _xw(T, C, k, vec=False):
    return lambda g: (g.standard_normal((T, C)), g.standard_normal((k, C) if vec else (k,)))


CASES = [
    ("scalar_k3_c5", scalar_rows(3), _xw(14, 5, 3), (0, 1)),
    ("scalar_k4_c1", scalar_rows(4), _xw(12, 1, 4), (0, 1)),
    ("vector_k3_c4", vector_rows(3), _xw(13, 4, 3, True), (0, 1)),
    ("vector_k5_c2", vector_rows(5), _xw(15, 2, 5, True), (0, 1)),
    ("causal_k3_c3", causal_list(3), _xw(11, 3, 3), (0, 1)),
    ("dilated_k3_d2", dilated(3, 2), _xw(16, 3, 3), (0, 1)),
    ("strided_k3_s2", strided(3, 2), _xw(15, 4, 3), (0, 1)),
    ("strided_k5_s3", strided(5, 3), _xw(20, 2, 5), (0, 1)),
    ("tanh_k4", of_tanh(4), lambda g: _xw(12, 3, 4)(g) + (g.standard_normal(3),), (0, 1, 2)),
    ("stencil_2d_p2", stencil_2d(2), lambda g: (g.standard_normal((6, 7)),
                                                g.standard_normal((2, 2))), (0, 1)),
    ("stencil_rows_p3", stencil_rows(3), lambda g: (g.standard_normal((7, 8, 2)),
                                                    g.standard_normal((3, 3))), (0, 1)),
]


@pytest.mark.parametrize("name,f,make,argnums", CASES, ids=[c[0] for c in CASES])
def test_offset_taps_batched_equals_unbatched(name, f, make, argnums):
    check(f, make(rng(4)), argnums)


@pytest.mark.parametrize("f,make,flat", [(scalar_rows(4), _xw(40, 6, 4), False),
                                         (causal_list(3), _xw(40, 8, 3), False),
                                         (of_tanh(3), lambda g: _xw(40, 8, 3)(g) +
                                          (g.standard_normal(8),), False),
                                         # windows of 3 rows of 2: runs of 6 elements, the
                                         # view copied once and the product on the copy
                                         (scalar_rows(3), _xw(40, 2, 3), True)])
def test_no_product_on_the_flattened_windows_and_offsets(f, make, flat):
    # the product over (windows x offsets) pairs would have a leading axis of n * k
    args = make(rng(2))
    n, k = args[0].shape[0] - len(args[1]) + 1, len(args[1])
    e, _ = entry(f, args, (0, 1))
    for stage in ("simplify", "final"):
        big = [q for q in e.stages[stage].eqns if q.out.aval.shape[:1] == (n * k,)]
        assert bool(big) == flat, (stage, [(q.prim.name, q.out.aval.shape) for q in big])


@pytest.mark.parametrize("spec,shapes", [
    ("bdf,fgh->bdgh", [(40, 3, 1), (1, 2, 1)]),   # the taps' residue product, per offset
    ("af,f->a", [(9, 1), (1,)]),                  # a scaling
    ("f,fb->b", [(1,), (1, 7)]),
    ("abf,cf->abc", [(3, 4, 1), (6, 1)]),
    ("fa,bf->ab", [(1, 12), (5, 1)]),
    ("ab,bc->ac", [(4, 1), (1, 3)]),              # a matrix product of inner size 1
])
def test_unit_letters_plan_as_the_outer_product_they_are(spec, shapes):
    (a, b), out = L.parse_spec(spec)
    assert L._plan_unit_letters(a, b, out, shapes, [np.dtype(np.float64)] * 2) is not None
    g = rng(5)
    xs = [g.standard_normal(s) for s in shapes]
    run = L.plan_einsum(spec, shapes, [x.dtype for x in xs])
    views = [np.pad(x, 1)[tuple(slice(1, 1 + n) for n in x.shape)] for x in xs]
    for ys in (xs, views):
        got = run(*ys)
        assert got.shape == np.einsum(spec, *ys).shape
        np.testing.assert_array_equal(got, np.einsum(spec, *ys))


@pytest.mark.parametrize("spec,shapes", [
    ("bdf,fgh->bdgh", [(40, 3, 2), (2, 2, 1)]),   # a real contraction
    ("abf,cf->acb", [(3, 4, 1), (6, 1)]),         # the result reorders the operands' axes
    ("ab,ab->ab", [(3, 1), (3, 1)]),              # a shared kept letter
])
def test_no_unit_letters_plan_where_a_product_remains(spec, shapes):
    (a, b), out = L.parse_spec(spec)
    assert L._plan_unit_letters(a, b, out, shapes, [np.dtype(np.float64)] * 2) is None
