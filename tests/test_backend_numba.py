"""The numba backend (backend="numba"): fused kernels give the NumPy backend's values and
gradients (float64: to rounding; float32: at least as close to the float64 truth as the NumPy
backend), on the seeds and on many programs exercising each kind of fused loop nest, and the
work really runs in kernels. (Every primitive is also run through this backend against NumPy
by the spec list: tests/test_primitives.py.)"""
from __future__ import annotations

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.examples.seeds import WORKLOADS
from vecgrad.pytree import flatten

pytest.importorskip("numba")


def _leaves(t) -> list[np.ndarray]:
    return [np.asarray(x) for x in flatten(t)[0]]


def _same(got, want, rtol=1e-10, atol=1e-12):
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _fused(f, *args) -> str:
    """The generated source (outer function and kernels) of f's gradient on args."""
    entry, _ = f.entry(*args)
    return entry.compiled.source


def _check(loss, args, argnums=0, n_kernels=1):
    """value_and_grad on the numba backend equals the NumPy backend's, and runs kernels."""
    want = vg.value_and_grad(loss, argnums=argnums)(*args)
    f = vg.value_and_grad(loss, argnums=argnums, backend="numba")
    _same(f(*args), want)
    assert _fused(f, *args).count("@njit") >= n_kernels
    return f


R = np.random.default_rng(0)


def test_seeds_float64_equal_numpy_backend():
    for name, w in sorted(WORKLOADS.items()):
        args = w.inputs("small")
        args = tuple(_to64(a) for a in args)
        _check(w.fresh_loss(), args, w.argnums)


def _to64(a):
    if isinstance(a, np.ndarray):
        return a.astype(np.float64) if a.dtype.kind == "f" else a
    if isinstance(a, (list, tuple)):
        return type(a)(_to64(x) for x in a)
    return a


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_seed_float32_as_accurate_as_numpy_backend(name):
    w = WORKLOADS[name]
    args = w.inputs("small")
    truth = _leaves(vg.grad(w.fresh_loss(), argnums=w.argnums)(*_to64(args)))
    ours = _leaves(vg.grad(w.fresh_loss(), argnums=w.argnums, backend="numba")(*args))
    theirs = _leaves(vg.grad(w.fresh_loss(), argnums=w.argnums)(*args))
    for t, a, b in zip(truth, ours, theirs):
        assert a.dtype == b.dtype
        scale = np.max(np.abs(t)) + 1e-30
        assert np.max(np.abs(a - t)) <= max(2 * np.max(np.abs(b - t)), 1e-5 * scale)


# ------------------------------------------------------------------ each kind of loop nest

def elementwise_chain(x, y, z):
    a = vnp.exp(-x * x) * y + vnp.tanh(z[:, None] / 3.0)        # broadcasting
    b = vnp.where(x > 0.1, vnp.sqrt(vnp.abs(y) + 1.0), vnp.log1p(x * x))
    c = vnp.maximum(a, b) - vnp.minimum(a, 0.5 * b) + vg.nn.sigmoid(a)
    d = vnp.sin(c) ** 2 + vnp.cos(x) * vnp.arctan(y) + vnp.hypot(x, y)
    return vnp.sum(d * c) + vnp.sum(a ** 3.0)


def reductions(x, y):
    s = vnp.sum(x, axis=0) @ vnp.sum(y * y, axis=(0, 2))
    m = vnp.max(x, axis=0) + vnp.min(y, axis=2).sum(axis=0)
    mean = vnp.mean(x * y[:, :, 0], axis=-1, keepdims=True)
    return s + vnp.sum(m * m) + vnp.sum((x - mean) ** 2) + vnp.max(y).sum()


def slices(x, y):
    total = 0.0
    for ax in range(x.ndim):
        total = total + vnp.sum(vg.nn.softmax(x * y, axis=ax) * vnp.cos(y))
        total = total + vnp.sum(vg.nn.logsumexp(x - y, axis=ax) ** 2)
    return total


def contractions(a, b, c):
    t = vnp.einsum("ijk,jl->ilk", a, b)                   # a small product
    u = vnp.einsum("ijk,ilk->jlk", a, t)                  # batched over k
    v = vnp.einsum("ijk,ijk->k", a, a)                    # batched dot
    w = vnp.linalg.norm(a, axis=1)                        # norm
    z = b.T @ c + 1.0                                     # multiply-add
    return vnp.sum(u * u) + vnp.sum(v) + vnp.sum(vnp.sqrt(w)) + vnp.sum(vnp.tanh(z))


def views(x, y):
    a = x.reshape(4, 15)[1:4, ::2].T                     # reshape, slice, transpose
    b = vnp.broadcast_to(y[None, 2:5], (2, 3, 6))[..., ::-1]
    c = x[2, 1:4, None, 0] * y[None, :, 3]               # int indices, a new axis
    d = vnp.transpose(x, (2, 0, 1)).reshape(20, 3)
    return vnp.sum(a ** 2) + vnp.sum(b * b[::-1]) + vnp.sum(c) + vnp.sum(d[::3] * d[1::3])


CASES = [
    (elementwise_chain, lambda r: (r.standard_normal((5, 7)), r.standard_normal((5, 7)),
                                   r.standard_normal(5)), (0, 1, 2)),
    (reductions, lambda r: (r.standard_normal((6, 4)), r.standard_normal((6, 4, 3))), (0, 1)),
    (slices, lambda r: (r.standard_normal((3, 4, 5)), r.standard_normal((4, 5))), (0, 1)),
    (contractions, lambda r: (r.standard_normal((5, 6, 7)), r.standard_normal((6, 4)),
                              r.standard_normal((6, 3))), (0, 1, 2)),
    (views, lambda r: (r.standard_normal((3, 4, 5)), r.standard_normal((6, 6))), (0, 1)),
]


@pytest.mark.parametrize("fn,make,argnums", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("seed", [0, 1])
def test_kernels_equal_numpy_backend(fn, make, argnums, seed):
    _check(fn, make(np.random.default_rng(seed)), argnums)


# (Each check compiles the gradient and the function afresh: three of the five run in the full
# set only; the others, and every case's equality with the NumPy backend, always run.)
FD_CASES = [pytest.param(*c, id=c[0].__name__, marks=[pytest.mark.numba_full] if
                         c[0].__name__ in ("elementwise_chain", "slices", "reductions") else [])
            for c in CASES]


@pytest.mark.parametrize("fn,make,argnums", FD_CASES)
def test_kernel_gradients_match_central_differences(fn, make, argnums):
    args = make(np.random.default_rng(5))
    with vg.config(backend="numba"):
        vg.check_grads(fn, args, argnums=argnums, rtol=1e-6, atol=1e-8, n_dirs=2, seed=1)


def test_nan_and_inf_propagate_as_in_numpy():
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf], [0.0, 2.0, np.inf]])

    def f(x):
        return (vnp.max(x, axis=1), vnp.min(x, axis=0), vg.nn.softmax(x, axis=1),
                vg.nn.logsumexp(x, axis=1), x / (x - x), vnp.exp(x) * 0.0)
    with np.errstate(all="ignore"):
        want = vg.jit(f)(x)
        got = vg.jit(f, backend="numba")(x)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_float32_stays_float32_and_mixed_dtypes_promote():
    x = R.standard_normal((4, 5)).astype(np.float32)
    y = R.standard_normal(5)                                  # float64

    def f(x, y):
        return vnp.exp(x) * 2.0, x * y, vnp.sum(x, axis=0), x.astype(np.float64) + 1
    want = vg.jit(f)(x, y)
    got = vg.jit(f, backend="numba")(x, y)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_outputs_never_alias_inputs_and_fallbacks_run():
    x = R.standard_normal((3, 4))
    f = vg.jit(lambda x: (x, x.T, x[0], vnp.sum(x), vnp.sort(x, axis=1) * 2.0,
                          vnp.linalg.inv(x[:, :3] @ x[:, :3].T + 3 * vnp.eye(3))),
               backend="numba")
    outs = f(x)
    for o in outs[:3]:
        assert not np.shares_memory(o, x)
    want = vg.jit(lambda x: (x, x.T, x[0], vnp.sum(x), vnp.sort(x, axis=1) * 2.0,
                             vnp.linalg.inv(x[:, :3] @ x[:, :3].T + 3 * vnp.eye(3))))(x)
    _same(outs, want)


def test_kernels_are_cached_on_disk(tmp_path, monkeypatch):
    from vecgrad.backends.numba import cache
    monkeypatch.setenv("VECGRAD_NUMBA_CACHE", str(tmp_path))
    x = R.standard_normal((7, 3))

    def loss(x):
        return vnp.sum(vnp.exp(x) * vnp.sum(x * x, axis=0))
    g = vg.grad(loss, backend="numba")(x)
    np.testing.assert_allclose(g, vg.grad(loss)(x), rtol=1e-12)
    files = list(tmp_path.glob("vk_*.py"))
    assert files and all(f.read_text().startswith(cache.HEADER.splitlines()[0]) for f in files)
    assert any(tmp_path.rglob("*.nbi"))  # numba's index of compiled machine code


def test_unknown_to_kernels_falls_back_per_equation():
    # integer and boolean values, gathers, cumulative sums: NumPy code between kernels
    x = R.standard_normal((5, 4))
    idx = np.array([3, 0, 2])

    def loss(x):
        a = vnp.cumsum(vnp.exp(x), axis=0)[idx]
        return vnp.sum(a * vnp.tanh(x[idx])) + vnp.sum((x > 0).astype(np.float64) * x)
    _check(loss, (x,))


@pytest.mark.parametrize("spec,shapes", [
    ("ij,ajk->aik", ((64, 80), (3, 80, 90))),        # matrix times a stack: one matmul
    ("ajk,ij->aik", ((3, 80, 90), (64, 80))),        # the same, operands swapped
    ("bij,bjk->bik", ((4, 70, 60), (4, 60, 50))),
    ("ji,jk->ik", ((80, 64), (80, 90))),             # not one matmul as laid out
])
def test_large_products_go_to_blas(spec, shapes):
    r = np.random.default_rng(3)
    x, y = (r.standard_normal(s) for s in shapes)
    b = r.standard_normal(90 if spec != "bij,bjk->bik" else 50)

    def loss(x, y, b):
        return vnp.sum(vnp.tanh(vnp.einsum(spec, x, y) + b))
    f = _check(loss, (x, y, b), (0, 1, 2), n_kernels=1)
    entry, _ = f.entry(x, y, b)
    fns = [v for v in entry.compiled.fn.__globals__.values() if callable(v)]
    if spec != "ji,jk->ik":  # (its gradient has matmuls as laid out)
        assert any(v is np.matmul or getattr(v, "__module__", "").endswith("numba.blas")
                   for v in fns)


UNROLLED = [
    ("wnk,wrk->rnk", ((64, 16, 16), (64, 4, 16))),   # seeds/000's similarity: batch innermost
    ("krn,wrk->wkn", ((16, 4, 16), (64, 4, 16))),    # its cotangent: a broadcast operand
    ("wnk,wrk->rnk", ((40, 9, 13), (40, 3, 13))),    # odd sizes (not a vector width)
]


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_unrolled_accumulations_equal_numpy_backend(dt):
    # an accumulation along a short output letter is written out for the SLP vectorizer
    r = np.random.default_rng(4)
    args = [r.standard_normal(s).astype(dt) for _, shapes in UNROLLED for s in shapes]

    def loss(*xs):
        return sum(vnp.sum(vnp.tanh(vnp.einsum(spec, xs[2 * k], xs[2 * k + 1])) ** 2)
                   for k, (spec, _) in enumerate(UNROLLED))
    argnums = tuple(range(len(args)))
    want = vg.value_and_grad(loss, argnums=argnums)(*args)
    f = vg.value_and_grad(loss, argnums=argnums, backend="numba")
    got = f(*args)
    tol = {"rtol": 1e-10, "atol": 1e-12} if dt is np.float64 else {"rtol": 2e-4, "atol": 1e-5}
    _same(got, want, **tol)
    assert _fused(f, *args).count("# unrolled") >= 3


def test_innermost_trip_counts():
    from vecgrad.backends.numba.kernel import _innermost_trips
    body = ["    for i in range(16):", "        for j in range(64):", "            x = 1",
            "        for k in range(8):", "            y = 1", "    t = 0",
            "    for m in range(100):", "        for n in range(4):", "            # unrolled",
            "            z = 1"]
    assert _innermost_trips(body) == 64
    assert _innermost_trips(body[:3] + body[5:]) == 64
    assert _innermost_trips(body[3:5] + body[6:]) == 8   # (the unrolled loop counts 0)
    assert _innermost_trips(["    t = 0"]) == 0


def test_first_call_compiles_with_slp_and_restores_numba_config():
    from numba.core import config

    from vecgrad.backends.numba import cache
    seen = []

    def disp(*args):
        seen.append((config.SLP_VECTORIZE, config.LOOP_VECTORIZE))
        return sum(args)
    before = (config.SLP_VECTORIZE, config.LOOP_VECTORIZE)
    for short, loopvec in ((True, 0), (False, before[1])):
        env: dict = {}
        env["k"] = cache.FirstCall(disp, env, "k", short)
        assert env["k"](1, 2) == 3
        assert seen[-1] == (1, loopvec) and env["k"] is disp
        assert (config.SLP_VECTORIZE, config.LOOP_VECTORIZE) == before
