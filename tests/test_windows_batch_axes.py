"""Contractions over overlapping windows whose batch letters do not nest (windows over the
middle axis of a heads-first (H, T, D) array: 'ahkd,had->ahk', the members' axis a and the
heads' h with strides D and T*D) run as np.matmul over the batch axes kept apart, the
window view handed to BLAS as it is, where merging the letters into one axis would copy
every window; and a contraction planned as NumPy's einsum loop for C-ordered operands
runs the matmul on such a view when a measurement (once per machine and strides) says it
is faster. Plans equal np.einsum; gradients of heads-first window programs equal central
differences (float64, random directions) and their unbatched graphs."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided
from test_batch import check, rng

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import kernels
from vecgrad.backends.numpy import planner as L
from vecgrad.backends.numpy import viewplans as VP


def heads_windows(K: np.ndarray, k: int, dilation: int = 1, step: int = 1) -> np.ndarray:
    """(n, H, k, D): member t's window of rows t*step + j*dilation of every head."""
    H, T, D = K.shape
    n = (T - (k - 1) * dilation - 1) // step + 1
    s0, s1, s2 = K.strides
    return as_strided(K, (n, H, k, D), (step * s1, s0, dilation * s1, s2), writeable=False)


def operands(spec: str, w: np.ndarray, g: np.random.Generator) -> list[np.ndarray]:
    n, H, k, D = w.shape
    other = {"had": lambda: g.standard_normal((H, n, D)),
             "ahk": lambda: g.standard_normal((n, H, k)),
             "hak": lambda: g.standard_normal((H, n, k))}
    ins = spec.split("->")[0].split(",")
    return [w if t.endswith("kd") else other[t]() for t in ins]


SPECS = ["ahkd,had->ahk", "had,ahkd->ahk", "ahk,ahkd->had", "hak,ahkd->had",
         "ahkd,ahk->had"]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("k, dilation, step", [(5, 1, 1), (3, 2, 1), (4, 1, 2), (2, 3, 3)])
def test_heads_first_window_plans_equal_numpy(spec, k, dilation, step):
    g = rng(k * 10 + dilation)
    w = heads_windows(g.standard_normal((3, 60, 8)), k, dilation, step)
    ops = operands(spec, w, g)
    plan = L.plan_einsum(spec, [o.shape for o in ops], [o.dtype for o in ops])
    want = np.einsum(spec, *ops)
    np.testing.assert_allclose(plan(*ops), want, rtol=1e-12, atol=1e-12)
    mm = L._candidates(spec, [o.shape for o in ops])["mm"]
    np.testing.assert_allclose(mm(*ops), want, rtol=1e-12, atol=1e-12)
    assert mm.in_place(*ops)  # the batch axes kept apart: no copy of the windows
    contiguous = [np.ascontiguousarray(o) for o in ops]
    np.testing.assert_allclose(plan(*contiguous), want, rtol=1e-12, atol=1e-12)


def test_kept_batch_axes_copy_nothing(monkeypatch):
    g = rng(1)
    w = heads_windows(g.standard_normal((4, 200, 16)), 5)
    q = g.standard_normal((4, 196, 16))  # 'had': its a and h swapped against w's
    mm = L._candidates("ahkd,had->ahk", [w.shape, q.shape])["mm"]
    seen = []
    real = np.matmul
    monkeypatch.setattr(np, "matmul", lambda x, y: seen.append((x, y)) or real(x, y))
    np.testing.assert_allclose(mm(w, q), np.einsum("ahkd,had->ahk", w, q), rtol=1e-12)
    (x, y), = seen
    assert x.ndim == 4 and np.shares_memory(x, w) and np.shares_memory(y, q)


def test_merged_batch_axes_where_they_nest_or_blas_cannot_read_the_view():
    g = rng(2)
    K = g.standard_normal((200, 4, 16))  # (T, H, D): a and h nest, one batch axis
    s0, s1, s2 = K.strides
    w = as_strided(K, (196, 4, 5, 16), (s0, s1, s0, s2))
    q = g.standard_normal((196, 4, 16))
    mm = L._candidates("ahkd,ahd->ahk", [w.shape, q.shape])["mm"]
    np.testing.assert_allclose(mm(w, q), np.einsum("ahkd,ahd->ahk", w, q), rtol=1e-12)
    # channels read backwards inside each window: not a BLAS matrix either way (copied)
    wb = heads_windows(g.standard_normal((3, 40, 6)), 4)[..., ::-1]
    qb = g.standard_normal((3, wb.shape[0], 6))
    mm = L._candidates("ahkd,had->ahk", [wb.shape, qb.shape])["mm"]
    assert not mm.in_place(wb, qb)
    np.testing.assert_allclose(mm(wb, qb), np.einsum("ahkd,had->ahk", wb, qb), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.complex128])
def test_other_types_equal_numpy(dtype):
    g = rng(3)
    K = (g.standard_normal((3, 50, 8)) * 4).astype(dtype)
    w = heads_windows(K, 4)
    q = (g.standard_normal((3, w.shape[0], 8)) * 4).astype(dtype)
    plan = L.plan_einsum("ahkd,had->ahk", [w.shape, q.shape], [w.dtype, q.dtype])
    got, want = plan(w, q), np.einsum("ahkd,had->ahk", w, q)
    assert got.dtype == want.dtype
    tol = {np.float16: 1e-2, np.float32: 1e-5, np.int64: 0}.get(dtype, 1e-12)
    scale = np.abs(want.astype(np.complex128)).max()
    np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                               rtol=tol, atol=tol * scale)


def test_the_loop_plan_measures_views_once_per_strides(monkeypatch, tmp_path):
    monkeypatch.setenv("VECGRAD_CACHE_DIR", str(tmp_path))
    kernels.forget()
    g = rng(4)
    w = heads_windows(g.standard_normal((4, 300, 16)), 5)
    q = g.standard_normal((4, w.shape[0], 16))
    run = VP.loop_unless_views("ahkd,had->ahk", *[
        L._candidates("ahkd,had->ahk", [w.shape, q.shape])[n] for n in ("mm", "loop")])
    before = [h for h in kernels.history if h[0] == "einsum_view"]
    for _ in range(3):
        np.testing.assert_allclose(run(w, q), np.einsum("ahkd,had->ahk", w, q), rtol=1e-12)
    run(np.ascontiguousarray(w), q)  # plain arrays: the loop, nothing measured
    asked = [h for h in kernels.history if h[0] == "einsum_view"][len(before):]
    assert len(asked) == 1 and asked[0][3] == "measured"
    with vg.config(deterministic=True):
        run = VP.loop_unless_views("ahkd,had->ahk", *[
            L._candidates("ahkd,had->ahk", [w.shape, q.shape])[n] for n in ("mm", "loop")])
        run(w, q)
    assert kernels.history[-1][0] == "einsum_view" and \
        kernels.history[-1][3] == "reference model"
    kernels.forget()


def heads_first_attention(k, dilation=1, step=1):
    # every position's query, per head, against its window of that head's keys: heads first
    def f(K, V, Q):
        span = (k - 1) * dilation + 1
        total = 0.0
        for t in range(0, K.shape[1] - span + 1, step):
            s = vnp.einsum("hkd,hd->hk", K[:, t:t + span:dilation], Q[:, t])
            a = vnp.exp(s - vnp.max(s, axis=1, keepdims=True))
            a = a / vnp.sum(a, axis=1, keepdims=True)
            total = total + vnp.sum(vnp.einsum("hk,hkd->hd", a, V[:, t:t + span:dilation]) ** 2)
        return total
    return f


@pytest.mark.parametrize("H, k, dilation, step", [(2, 3, 1, 1), (3, 4, 2, 1), (2, 3, 1, 2),
                                                   (1, 5, 1, 1)])
def test_heads_first_attention_gradients(H, k, dilation, step):
    g = rng(H + k)
    K, V, Q = (g.standard_normal((H, 24, 5)) for _ in range(3))
    check(heads_first_attention(k, dilation, step), (K, V, Q), argnums=(0, 1, 2))


def test_heads_first_windows_run_the_matmul_in_place():
    g = rng(9)
    K, V, Q = (g.standard_normal((4, 400, 16)) for _ in range(3))
    f = heads_first_attention(5)
    seen = []
    real = VP.BatchForms.in_place
    VP.BatchForms.in_place = lambda self, x, y: seen.append(real(self, x, y)) or seen[-1]
    try:
        with vg.config(deterministic=True):
            grads = vg.grad(f, argnums=(0, 1, 2))(K, V, Q)
    finally:
        VP.BatchForms.in_place = real
    assert seen and any(seen)  # some window operand was read in place, batch axes apart
    value, eps, d = vg.jit(f), 1e-6, g.standard_normal(K.shape)
    fd = (float(value(K + eps * d, V, Q)) - float(value(K - eps * d, V, Q))) / (2 * eps)
    assert abs(float(np.vdot(grads[0], d)) - fd) <= 1e-5 * max(1.0, abs(fd))
