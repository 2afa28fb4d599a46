"""End-to-end tests of the three seed programs, written in natural style, at small sizes.

Each program is checked against three oracles:
- its hand-vectorized NumPy forward (in vecgrad.examples.seeds);
- the gradient of a hand-vectorized version written here with HIPS `autograd.numpy`;
- central differences, through `vg.check_grads`.
"""
from __future__ import annotations

import io

import numpy as np
import pytest

import vecgrad as vg
from vecgrad.examples import seeds as S

RTOL = 1e-6

SMALL000 = {"N": 4, "W": 8, "R": 3, "B": 2}
SMALL001 = {"T": 6, "batch": 5, "n_in": 7, "n_out": 4, "D": 3}
SMALL002 = {"n": 40, "sizes": (1, 12, 5, 1)}


def inputs000(dtype=np.float64):
    return S.seed000_inputs(**SMALL000, dtype=dtype)


def inputs001(dtype=np.float64):
    return S.seed001_inputs(**SMALL001, dtype=dtype)


def inputs002(dtype=np.float64):
    return S.seed002_inputs(**SMALL002, dtype=dtype)


def assert_tree_close(got, want, rtol=RTOL, atol=1e-12):
    got_leaves, want_leaves = flat(got), flat(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def flat(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in flat(t)]
    return [tree]


# ----------------------------------------------- hand-vectorized versions in autograd.numpy


def autograd_versions():
    """The three hand-vectorized forwards, written with `autograd.numpy` so that
    `autograd.grad` can differentiate them (no in-place writes)."""
    anp = pytest.importorskip("autograd.numpy")

    def softmax0(s):
        e = anp.exp(s - anp.max(s, axis=0, keepdims=True))
        return e / anp.sum(e, axis=0, keepdims=True)

    def seed000(a, b, wt):
        an = a / anp.sqrt(anp.sum(a * a, axis=0))[None]
        bn = b / anp.sqrt(anp.sum(b * b, axis=0))[None]
        s = anp.einsum("wik,wjk->ijk", bn, an)
        return anp.sum(softmax0(s) * wt)

    def seed001(W, bias, xs, H, wt):
        X = anp.stack(xs)
        Y = anp.einsum("oi,tib->tob", W, X) + bias[None, :, None]
        z = anp.einsum("ob,tob->tb", Y[0], Y)
        C = anp.einsum("tb,dtb->db", softmax0(z), H)
        return anp.sum(C * wt)

    def seed002(params, xs):
        h = xs[None, :]
        for W, b in params:
            h = anp.dot(W, h) + b[:, None]
        return anp.sum(h ** 2)

    return seed000, seed001, seed002


def autograd_grad(fun, argnums, *args):
    from autograd import grad as agrad
    return tuple(agrad(fun, argnum=a)(*args) for a in argnums)


# ---------------------------------------------------------------------------- forwards


@pytest.mark.parametrize("loss, ref, make", [
    (S.seed000_loss, S.seed000_numpy, inputs000),
    (S.seed001_loss, S.seed001_numpy, inputs001),
    (S.mapall, S.seed002_numpy, inputs002),
], ids=["seed000", "seed001", "seed002"])
def test_forward_matches_numpy(loss, ref, make):
    args = make()
    got = vg.jit(loss)(*args)
    np.testing.assert_allclose(got, ref(*args), rtol=1e-12)
    assert np.shape(got) == ()


def test_value_and_grad_value_matches_numpy():
    args = inputs000()
    val, _ = vg.value_and_grad(S.seed000_loss, argnums=(0, 1))(*args)
    np.testing.assert_allclose(val, S.seed000_numpy(*args), rtol=1e-12)


# ------------------------------------------------------------------------- seed 000


def test_seed000_grad_matches_autograd():
    ag000, _, _ = autograd_versions()
    a, b, wt = inputs000()
    ga, gb = vg.grad(S.seed000_loss, argnums=(0, 1))(a, b, wt)
    assert ga.shape == a.shape and gb.shape == b.shape
    want = autograd_grad(ag000, (0, 1), a, b, wt)
    assert_tree_close((ga, gb), want)
    assert np.abs(ga).max() > 0 and np.abs(gb).max() > 0


def test_seed000_seed_sizes_match_autograd():
    """The reported sizes (N=16, W=64, R=4, B=16): 1024 kernel calls, 16 softmax writes."""
    ag000, _, _ = autograd_versions()
    a, b, wt = S.seed000_inputs(dtype=np.float64)
    val, (ga, gb) = vg.value_and_grad(S.seed000_loss, argnums=(0, 1))(a, b, wt)
    np.testing.assert_allclose(val, S.seed000_numpy(a, b, wt), rtol=1e-12)
    assert_tree_close((ga, gb), autograd_grad(ag000, (0, 1), a, b, wt))


def test_seed000_central_differences():
    vg.check_grads(S.seed000_loss, inputs000(), argnums=(0, 1))


def test_seed000_argnum_order():
    """Two compilations may run different (equally exact) kernels, so they agree to rounding;
    in deterministic mode the generated code is the same (tests/test_kernels.py)."""
    a, b, wt = inputs000()
    gb, ga = vg.grad(S.seed000_loss, argnums=(1, 0))(a, b, wt)
    ga2, gb2 = vg.grad(S.seed000_loss, argnums=(0, 1))(a, b, wt)
    assert_tree_close((ga, gb), (ga2, gb2), rtol=1e-13, atol=1e-15)


def test_seed000_with_custom_kernel():
    """A kernel passed as an argument (seeds/000's K) is traced like inline code."""
    def dotkernel(u, v):
        return np.dot(u, v)

    def loss(a, b, wt):
        return (S.pairwise(a, b, dotkernel) * wt).sum()

    def ref(a, b, wt):
        s = np.einsum("wik,wjk->ijk", b, a)
        e = np.exp(s - s.max(0, keepdims=True))
        return np.sum(e / e.sum(0, keepdims=True) * wt)

    args = inputs000()
    np.testing.assert_allclose(vg.jit(loss)(*args), ref(*args), rtol=1e-12)
    vg.check_grads(loss, args, argnums=(0, 1))


# ------------------------------------------------------------------------- seed 001


def test_seed001_grad_matches_autograd():
    _, ag001, _ = autograd_versions()
    W, bias, xs, H, wt = inputs001()
    gW, gbias, gxs = vg.grad(S.seed001_loss, argnums=(0, 1, 2))(W, bias, xs, H, wt)
    assert isinstance(gxs, list) and len(gxs) == len(xs)
    want = autograd_grad(ag001, (0, 1, 2), W, bias, xs, H, wt)
    assert_tree_close((gW, gbias, list(gxs)), (want[0], want[1], list(want[2])))
    assert np.abs(gW).max() > 0 and np.abs(gxs[-1]).max() > 0


def test_seed001_central_differences():
    vg.check_grads(S.seed001_loss, inputs001(), argnums=(0, 1, 2))


def test_seed001_grad_wrt_H_is_linear():
    """The loss is linear in H, so its gradient w.r.t. H is alpha[None] * wt[:, None, :]."""
    W, bias, xs, H, wt = inputs001()
    gH = vg.grad(S.seed001_loss, argnums=3)(W, bias, xs, H, wt)
    Y = np.einsum("oi,tib->tob", W, np.stack(xs)) + bias[None, :, None]
    z = np.einsum("ob,tob->tb", Y[0], Y)
    e = np.exp(z - z.max(0, keepdims=True))
    alpha = e / e.sum(0, keepdims=True)
    np.testing.assert_allclose(gH, alpha[None] * wt[:, None, :], rtol=RTOL)


# ------------------------------------------------------------------------- seed 002


def test_seed002_grad_matches_autograd():
    _, _, ag002 = autograd_versions()
    params, xs = inputs002()
    g = vg.grad(S.mapall)(params, xs)
    assert isinstance(g, list) and len(g) == len(params)
    assert all(isinstance(layer, tuple) and len(layer) == 2 for layer in g)
    (want,) = autograd_grad(ag002, (0,), params, xs)
    assert_tree_close(g, want)


def test_seed002_central_differences():
    vg.check_grads(S.mapall, inputs002(), argnums=0)


def test_seed002_grad_wrt_inputs():
    _, _, ag002 = autograd_versions()
    params, xs = inputs002()
    gx = vg.grad(S.mapall, argnums=1)(params, xs)
    (want,) = autograd_grad(ag002, (1,), params, xs)
    assert_tree_close(gx, want)


# --------------------------------------------------------------------------- float32


@pytest.mark.parametrize("loss, make, argnums", [
    (S.seed000_loss, inputs000, (0, 1)),
    (S.seed001_loss, inputs001, (0, 1, 2)),
    (S.mapall, inputs002, (0,)),
], ids=["seed000", "seed001", "seed002"])
def test_float32_stays_float32(loss, make, argnums):
    args32 = make(np.float32)
    args64 = make(np.float64)
    val, g32 = vg.value_and_grad(loss, argnums=argnums)(*args32)
    assert np.asarray(val).dtype == np.float32
    leaves32 = flat(list(g32))
    assert leaves32 and all(leaf.dtype == np.float32 for leaf in leaves32)
    g64 = vg.grad(loss, argnums=argnums)(*args64)
    for g, w in zip(leaves32, flat(list(g64))):
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-4)


# ------------------------------------------------------------------------------ show


def test_show_prints_each_stage():
    buf = io.StringIO()
    text = vg.show(S.seed000_loss, *inputs000(), argnums=(0, 1), file=buf)
    assert buf.getvalue().strip() == text.strip()
    entry, _ = vg.grad(S.seed000_loss, argnums=(0, 1)).entry(*inputs000())
    assert {"traced", "grad"} <= set(entry.stages)
    for name in list(entry.stages) + ["generated code"]:
        assert f"=== {name}" in text
    assert "def " in text
