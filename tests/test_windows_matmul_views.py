"""A contraction over an overlapping window view runs as the matmul plan on the view itself
when BLAS takes the view's matrices as they are (windows of rows, (n, k, d) with strides
(d, d, 1): k x d matrices of leading dimension d), and as NumPy's einsum loop where the
matmul would copy every window (2-D patches, a cost volume's shifted images). Plans equal
np.einsum; gradients of programs over such windows equal central differences (float64,
random directions) and their unbatched graphs."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view as windows
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import kernels
from vecgrad.backends.numpy import planner as L
from vecgrad.backends.numpy import viewplans as VP


def test_row_windows_are_blas_matrices_as_they_are():
    K = rng().standard_normal((50, 6))
    w = windows(K, 4, axis=0).transpose(0, 2, 1)  # (47, 4, 6), strides (48, 48, 8)
    assert VP.blas_view(w, (47, 4, 6), False)
    assert VP.blas_view(w.transpose(0, 2, 1), (47, 6, 4), False)  # column-major matrices
    assert VP.blas_view(w[::3], (16, 4, 6), False)  # strided windows
    d = windows(K, 7, axis=0)[:, :, ::2].transpose(0, 2, 1)  # dilated taps
    assert VP.blas_view(d, (44, 4, 6), False)
    # 2-D patches: the offsets (a, b) cannot be one axis of a matrix without a copy
    F = rng().standard_normal((9, 9, 5))
    p = windows(F, (3, 3), axis=(0, 1)).transpose(0, 1, 3, 4, 2)  # (7, 7, 3, 3, 5)
    assert not VP.blas_view(p, (49, 9, 5), False)
    # rows that overlap inside one matrix (a 1-D signal's windows as one matrix)
    x = rng().standard_normal(40)
    assert not VP.blas_view(windows(x, 5), (1, 36, 5), False)
    # windows taken backwards are still matrices; rows read backwards inside one are not
    assert VP.blas_view(w[::-1], (47, 4, 6), False)
    assert not VP.blas_view(w[:, ::-1], (47, 4, 6), False)
    # types BLAS does not have
    assert VP.blas_view(w.astype(np.float32)[:, :, :], (47, 4, 6), False)
    for dt in (np.float16, np.int64):
        assert not VP.blas_view(windows(K.astype(dt), 4, axis=0).transpose(0, 2, 1),
                                (47, 4, 6), False)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_window_plans_of_other_types_equal_numpy(dtype):
    g = rng(5)
    K = (g.standard_normal((1008, 32)) * 4).astype(dtype)
    w = windows(K, 9, axis=0).transpose(0, 2, 1)  # (1000, 9, 32)
    a = (g.standard_normal((1000, 9)) * 4).astype(dtype)
    plan = L.plan_einsum("ai,aij->aj", [a.shape, w.shape], [a.dtype, w.dtype])
    got, want = plan(a, w), np.einsum("ai,aij->aj", a, w)
    assert got.dtype == want.dtype
    tol = {np.float16: 1e-2, np.float32: 1e-5}.get(dtype, 0)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol * np.abs(want.astype(np.float64)).max())


@pytest.mark.parametrize("spec, which, other, k, d, n", [
    ("ai,aij->aj", 1, "ai", 9, 32, 1000),  # the windows' cotangent: weights times windows
    ("aij,aj->ai", 0, "aj", 9, 32, 1000),  # scores of each window against its query
    ("aj,aij->ai", 1, "aj", 9, 32, 1000),  # the same, operands swapped
    ("aij,ai->aj", 0, "ai", 7, 16, 1994),
])
def test_window_contractions_take_the_matmul_on_the_view(spec, which, other, k, d, n,
                                                         monkeypatch):
    g = rng(3)
    w = windows(g.standard_normal((n + k - 1, d)), k, axis=0).transpose(0, 2, 1)
    y = g.standard_normal((n, k if other == "ai" else d))
    ops = [w, y] if which == 0 else [y, w]
    with vg.config(deterministic=True):
        plan = L.plan_einsum(spec, [o.shape for o in ops], [o.dtype for o in ops])
        name = kernels.history[-1][2]
    want = np.einsum(spec, *ops)
    loops = []
    real = np.einsum
    monkeypatch.setattr(np, "einsum", lambda *a, **kw: loops.append(a[0]) or real(*a, **kw))
    np.testing.assert_allclose(plan(*ops), want, rtol=1e-12, atol=1e-12)
    if name.startswith("mm"):
        assert loops == []  # the matmul read the view in place: no loop, no copy
    contiguous = [np.ascontiguousarray(o) for o in ops]
    np.testing.assert_allclose(plan(*contiguous), want, rtol=1e-12, atol=1e-12)


def test_in_place_plans_keep_the_matmul_and_others_the_loop():
    x = rng().standard_normal((60, 8))
    w = windows(x, 5, axis=0).transpose(0, 2, 1)  # (56, 5, 8)
    g = rng(1).standard_normal((56, 5))
    calls = []

    def plan(p, q):
        calls.append("plan")
        return np.einsum("ai,aij->aj", p, q)
    plan.in_place = lambda p, q: calls.append("asked") or True
    run = VP.unless_overlapping(plan, lambda p, q: calls.append("loop") or
                                np.einsum("ai,aij->aj", p, q), (False, True))
    for _ in range(3):
        np.testing.assert_allclose(run(g, w), np.einsum("ai,aij->aj", g, w))
    assert calls == ["asked", "plan", "plan", "plan"]  # asked once per strides
    plan.in_place = lambda p, q: False
    run = VP.unless_overlapping(plan, lambda p, q: calls.append("loop") or
                                np.einsum("ai,aij->aj", p, q), (False, True))
    calls.clear()
    run(g, w)
    assert calls == ["loop"]


def test_cost_volume_windows_keep_the_loop():
    # each pixel's shifted neighbour image: the matmul would copy every window
    g = rng(2)
    a, b = g.standard_normal((30, 30)), g.standard_normal((34, 34))
    win = windows(b, (30, 30))
    plan = L.plan_einsum("bc,debc->deb", [a.shape, win.shape], [a.dtype, win.dtype])
    blas = []
    real = VP.blas_view
    VP.blas_view = lambda *z: blas.append(real(*z)) or blas[-1]
    try:
        np.testing.assert_allclose(plan(a, win), np.einsum("bc,debc->deb", a, win),
                                   rtol=1e-12)
    finally:
        VP.blas_view = real
    assert False in blas or not blas


def local_scores(k, dilation=1, step=1, masked=False):
    # each row's query against the k keys around it (dilated, strided, causal mask)
    def f(K, Q):
        span = (k - 1) * dilation + 1
        total = 0.0
        for t in range(0, K.shape[0] - span + 1, step):
            s = K[t:t + span:dilation] @ Q[t]
            if masked:
                s = vnp.where(vnp.arange(k) <= t % k, s, -1.0)
            a = vnp.exp(s - vnp.max(s))
            total = total + vnp.sum((a / vnp.sum(a)) @ K[t:t + span:dilation] ** 2)
        return total
    return f


@pytest.mark.parametrize("k, dilation, step, masked", [
    (5, 1, 1, False), (4, 2, 1, False), (3, 1, 2, False), (5, 1, 1, True), (6, 3, 2, False),
])
def test_local_attention_gradients(k, dilation, step, masked):
    g = rng(k + dilation)
    K, Q = g.standard_normal((40, 6)), g.standard_normal((40, 6))
    check(local_scores(k, dilation, step, masked), (K, Q), argnums=(0, 1))


def test_local_attention_runs_the_matmul_on_its_windows():
    g = rng(7)
    K, Q = g.standard_normal((1200, 16)), g.standard_normal((1200, 16))
    f = local_scores(7)
    blas = []
    real = VP.blas_view
    VP.blas_view = lambda *z: blas.append(real(*z)) or blas[-1]
    try:
        grads = vg.grad(f, argnums=(0, 1))(K, Q)
    finally:
        VP.blas_view = real
    assert blas and all(blas)  # every overlapping window operand was read in place
    value, eps, d = vg.jit(f), 1e-6, g.standard_normal(K.shape)
    fd = (float(value(K + eps * d, Q)) - float(value(K - eps * d, Q))) / (2 * eps)
    assert abs(float(np.vdot(grads[0], d)) - fd) <= 1e-5 * max(1.0, abs(fd))
