"""The public transformations: grad, value_and_grad, vjp, jit, check_grads, and the cache."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check, numeric_grad

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import api

R = np.random.default_rng(0)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))
V = R.standard_normal(4)


def f3(x, y, z):
    return vnp.sum(vnp.tanh(x) * y) + vnp.sum(z ** 3) * vnp.sum(x)


def np_f3(x, y, z):
    return np.sum(np.tanh(x) * y) + np.sum(z ** 3) * np.sum(x)


# ------------------------------------------------------------------------ grad, argnums

def test_grad_default_argnum_matches_numeric():
    g = vg.grad(f3)(A, B, V)
    np.testing.assert_allclose(g, numeric_grad(lambda x: np_f3(x, B, V), A), rtol=1e-6)


@pytest.mark.parametrize("argnums", [1, 2, -1, (0,), (0, 2), (2, 0), (0, 1, 2)])
def test_grad_argnums(argnums):
    args = [A, B, V]
    g = vg.grad(f3, argnums=argnums)(*args)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    want = []
    for i in nums:
        def fi(x, i=i):
            return np_f3(*[x if j == i % 3 else a for j, a in enumerate(args)])
        want.append(numeric_grad(fi, args[i]))
    if isinstance(argnums, int):
        assert isinstance(g, np.ndarray)
        g = (g,)
    else:
        assert isinstance(g, tuple) and len(g) == len(nums)
    for gi, wi in zip(g, want):
        np.testing.assert_allclose(gi, wi, rtol=1e-6, atol=1e-9)


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums"):
        vg.grad(f3, argnums=3)(A, B, V)


def test_grad_of_unused_argument_is_zero():
    g = vg.grad(lambda x, y: vnp.sum(x * 2.0), argnums=1)(A, B)
    assert g.shape == B.shape and g.dtype == B.dtype
    np.testing.assert_array_equal(g, 0.0)


def test_grad_of_constant_output_is_zero():
    g = vg.grad(lambda x: 3.0)(A)
    np.testing.assert_array_equal(g, np.zeros_like(A))


def test_value_and_grad():
    v, g = vg.value_and_grad(f3, argnums=(0, 2))(A, B, V)
    np.testing.assert_allclose(v, np_f3(A, B, V), rtol=1e-12)
    assert isinstance(v, np.ndarray) and v.shape == ()
    np.testing.assert_allclose(g[0], vg.grad(f3)(A, B, V), rtol=1e-12)
    np.testing.assert_allclose(g[1], vg.grad(f3, argnums=2)(A, B, V), rtol=1e-12)


def test_has_aux():
    def f(x, y):
        loss = vnp.sum(x * y)
        return loss, {"pred": x * 2, "n": [loss, y[0]]}
    g, aux = vg.grad(f, has_aux=True)(A, B)
    np.testing.assert_allclose(g, B)
    np.testing.assert_allclose(aux["pred"], A * 2)
    np.testing.assert_allclose(aux["n"][0], np.sum(A * B))
    np.testing.assert_allclose(aux["n"][1], B[0])
    (v, aux2), g2 = vg.value_and_grad(f, argnums=(0, 1), has_aux=True)(A, B)
    np.testing.assert_allclose(v, np.sum(A * B))
    np.testing.assert_allclose(aux2["pred"], A * 2)
    np.testing.assert_allclose(g2[1], A)


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="pair"):
        vg.grad(lambda x: vnp.sum(x), has_aux=True)(A)


# ------------------------------------------------------------------------------ pytrees

def test_pytree_arguments_and_gradients():
    params = {"w": [A, (B, None)], "b": V, "meta": None}

    def loss(p, x):
        h = vnp.tanh(p["w"][0] * x + p["w"][1][0])
        return vnp.sum(h @ p["b"]) + (0.0 if p["meta"] is None else 1.0)
    g = vg.grad(loss)(params, A)
    assert set(g) == {"w", "b", "meta"} and g["meta"] is None
    assert isinstance(g["w"], list) and isinstance(g["w"][1], tuple) and g["w"][1][1] is None

    def flat(wa, wb, b):
        return np.sum(np.tanh(wa * A + wb) @ b)
    np.testing.assert_allclose(g["w"][0], numeric_grad(lambda w: flat(w, B, V), A), rtol=1e-6)
    np.testing.assert_allclose(g["w"][1][0], numeric_grad(lambda w: flat(A, w, V), B),
                               rtol=1e-6)
    np.testing.assert_allclose(g["b"], numeric_grad(lambda b: flat(A, B, b), V), rtol=1e-6)


def test_jit_pytree_outputs():
    out = vg.jit(lambda d, t: {"s": d["a"] + t[0], "l": [t[1] * 2, None], "t": (d["a"][0],)})(
        {"a": A}, (B, V))
    assert set(out) == {"s", "l", "t"} and isinstance(out["l"], list) and out["l"][1] is None
    np.testing.assert_allclose(out["s"], A + B)
    np.testing.assert_allclose(out["l"][0], V * 2)
    assert isinstance(out["t"], tuple)
    np.testing.assert_allclose(out["t"][0], A[0])


def test_jit_returns_fresh_numpy_arrays():
    a = A.copy()
    out = vg.jit(lambda x: x)(a)
    assert type(out) is np.ndarray
    out[0, 0] = 123.0
    assert a[0, 0] == A[0, 0], "jit must not hand back the caller's own array"
    ro = vg.jit(lambda x: x[0])(a)
    ro[0] = 5.0
    assert a[0, 0] == A[0, 0]


def test_unhashable_static_argument_raises():
    with pytest.raises(TypeError, match="pytrees"):
        vg.jit(lambda x, s: x)(A, {1, 2})


# ------------------------------------------------------------------ static args, cache

def test_static_arguments():
    def f(x, n, name, kernel=np.tanh):
        out = x
        for _ in range(n):
            out = kernel(out)
        return out * (2.0 if name == "double" else 1.0)
    np.testing.assert_allclose(vg.jit(f)(A, 2, "double"), np.tanh(np.tanh(A)) * 2)
    np.testing.assert_allclose(vg.jit(f)(A, 1, "single", np.sin), np.sin(A))
    g = vg.grad(lambda x, n: vnp.sum(f(x, n, "x")))(A, 1)
    np.testing.assert_allclose(g, 1 - np.tanh(A) ** 2, rtol=1e-12)


def test_cache_hits_and_recompiles():
    traces = []

    def f(x, k):
        traces.append(k)
        return vnp.asarray(x) * k[0]

    jf = vg.jit(f)
    e1, _ = jf.entry(A, (2,))
    e2, _ = jf.entry(A + 1.0, (2,))  # same signature: a hit
    assert e1 is e2
    np.testing.assert_allclose(jf(B, (2,)), B * 2)
    assert len(traces) == 1
    e3, _ = jf.entry(A, (3,))  # a static argument changed
    e4, _ = jf.entry(V, (2,))  # a shape changed
    e5, _ = jf.entry(A.astype(np.float32), (2,))  # a dtype changed
    e6, _ = jf.entry([A], (2,))  # the pytree structure changed
    assert len({id(e) for e in (e1, e3, e4, e5, e6)}) == 5
    assert len(traces) == 5
    assert len(api._CACHE[f]) == 5
    np.testing.assert_allclose(jf(A, (3,)), A * 3)
    assert len(traces) == 5
    # the cache belongs to the function: a new jit wrapper of it hits too
    assert vg.jit(f).entry(A, (2,))[0] is e1
    assert len(traces) == 5


def test_cache_key_includes_argnums_and_has_aux():
    def f(x, y):
        return vnp.sum(x * y), x
    vg.grad(f, argnums=0, has_aux=True)(A, B)
    vg.grad(f, argnums=1, has_aux=True)(A, B)
    vg.value_and_grad(f, argnums=(0, 1), has_aux=True)(A, B)
    assert len(api._CACHE[f]) == 3


# --------------------------------------------------------------------------------- vjp

def test_vjp_pytree_outputs():
    def f(x, y):
        return {"a": x * y, "b": (vnp.sum(x), vnp.exp(y[0]))}
    out, vjp_fn = vg.vjp(f, A, B)
    np.testing.assert_allclose(out["a"], A * B)
    np.testing.assert_allclose(out["b"][1], np.exp(B[0]))
    ca, cs, ce = R.standard_normal((3, 4)), np.float64(0.7), R.standard_normal(4)
    gx, gy = vjp_fn({"a": ca, "b": (cs, ce)})
    np.testing.assert_allclose(gx, ca * B + cs, rtol=1e-12)
    want_y = ca * A
    want_y[0] += ce * np.exp(B[0])
    np.testing.assert_allclose(gy, want_y, rtol=1e-12)
    # vjp_fn can be called again with another cotangent
    gx2, _ = vjp_fn({"a": np.zeros((3, 4)), "b": (np.float64(1.0), np.zeros(4))})
    np.testing.assert_allclose(gx2, np.ones((3, 4)))


def test_vjp_pytree_inputs_and_nonfloat_leaves():
    counts = np.array([1, 0, 3, 2])

    def f(p, c):
        return p["w"][[0, 2]] * p["s"] * c
    out, vjp_fn = vg.vjp(f, {"w": A, "s": np.float64(2.0)}, counts)
    np.testing.assert_allclose(out, A[[0, 2]] * 2 * counts)
    ct = np.ones((2, 4))
    gp, gc = vjp_fn(ct)
    assert gc is None  # an integer argument has no cotangent
    want = np.zeros_like(A)
    want[[0, 2]] = 2.0 * counts
    np.testing.assert_allclose(gp["w"], want)
    np.testing.assert_allclose(gp["s"], (A[[0, 2]] * counts).sum())


def test_vjp_has_aux():
    out, vjp_fn, aux = vg.vjp(lambda x: (x ** 2, {"m": vnp.mean(x)}), A, has_aux=True)
    np.testing.assert_allclose(out, A ** 2)
    np.testing.assert_allclose(aux["m"], A.mean())
    (g,) = vjp_fn(np.ones_like(A))
    np.testing.assert_allclose(g, 2 * A)


# ------------------------------------------------------------------------- check_grads

def test_check_grads_passes_on_a_correct_gradient():
    err = central_diff_check(f3, [A, B, V], argnums=(0, 1, 2))
    assert 0.0 <= err < 1e-6


def test_check_grads_raises_on_a_wrong_gradient():
    def f(x):  # stop_gradient: the analytic gradient ignores the second factor
        return vnp.sum(x * vnp.stop_gradient(x))
    g = vg.grad(f)(A)
    np.testing.assert_allclose(g, A)  # half of the true gradient 2x
    with pytest.raises(vg.GradCheckError, match="gradient check failed"):
        vg.check_grads(f, [A])


def test_check_grads_converts_to_float64():
    x32 = A.astype(np.float32)
    assert vg.check_grads(lambda x: vnp.sum(vnp.sin(x)), [x32]) < 1e-6


# ----------------------------------------------------------------- autograd as an oracle

W43 = R.standard_normal((4, 3))
X35 = R.standard_normal((3, 5))


def _programs():
    def mlp(xp, w1, w2, x):  # w1 (3, 4), w2 (4, 3), x (5, 3)
        h = xp.tanh(xp.dot(x, w1))
        return xp.sum((xp.dot(h, w2) - 1.0) ** 2)

    def stable_softmax_ce(xp, logits, w2, x):
        z = logits - xp.max(logits, axis=1, keepdims=True)
        lse = xp.log(xp.sum(xp.exp(z), axis=1, keepdims=True))
        return -xp.mean(xp.sum((z - lse) * w2[:3, :], axis=1)) + xp.sum(x)

    def cosine(xp, a, b, x):
        num = xp.sum(a * b[:3], axis=0)
        den = xp.sqrt(xp.sum(a ** 2, axis=0)) * xp.linalg.norm(b[:3], axis=0)
        return xp.sum(num / den) * xp.sum(x ** 2)

    def slices_and_loops(xp, a, b, x):
        total = 0.0
        for i in range(a.shape[0]):
            total = total + xp.sum(a[i, ::2] * b[i % 2, 1::2]) * x[i, 0]
        return total + xp.sum(xp.maximum(a[:, :3], 0.1) * xp.transpose(x[:3, :3]))

    def einsum_prod(xp, a, b, x):
        return xp.einsum("ij,jk->", a, b) + xp.prod(a[0] + 2.0) + xp.sum(
            xp.concatenate([a[:, :3], x[:, :3].T], axis=0) ** 2)

    def stack_where(xp, a, b, x):
        s = xp.stack([a[0], b[0] * a[1], xp.exp(a[2])])
        return xp.sum(xp.where(s > 0, s, 0.5 * s) * b[:3]) + xp.sum(xp.outer(a[0], x[1]))
    return [mlp, stable_softmax_ce, cosine, slices_and_loops, einsum_prod, stack_where]


@pytest.mark.parametrize("prog", _programs(), ids=lambda p: p.__name__)
def test_autograd_oracle(prog, autograd_np):
    import autograd
    args = {"mlp": (A, W43, X35.T), "einsum_prod": (A, W43, X35)}.get(prog.__name__, (A, B, X35))
    want = autograd.grad(lambda a, b, c: prog(autograd_np, a, b, c), argnum=(0, 1, 2))(*args)
    got = vg.grad(lambda a, b, c: prog(vnp, a, b, c), argnums=(0, 1, 2))(*args)
    for gi, wi in zip(got, want):
        assert gi.shape == wi.shape
        np.testing.assert_allclose(gi, wi, rtol=1e-10, atol=1e-12)
    v = vg.jit(lambda a, b, c: prog(vnp, a, b, c))(*args)
    np.testing.assert_allclose(v, prog(np, *args), rtol=1e-12)


# ------------------------------------------------------------- issue 10 §1-2: API fixes

def test_repeated_argnums_give_the_gradient_twice():
    g = vg.grad(f3, argnums=(0, 0, 2))(A, B, V)
    want = vg.grad(f3)(A, B, V)
    np.testing.assert_allclose(g[0], want)
    np.testing.assert_allclose(g[1], want)
    assert not np.all(g[0] == 0)
    np.testing.assert_allclose(g[2], vg.grad(f3, argnums=2)(A, B, V))
    _, (h0, h1) = vg.value_and_grad(f3, argnums=(1, 1))(A, B, V)
    np.testing.assert_allclose(h0, h1)
    np.testing.assert_allclose(h0, np.tanh(A))


@pytest.mark.parametrize("bad", ["0", 1.0, (0, "1"), (), None, True])
def test_bad_argnums_raise_naming_the_line(bad):
    with pytest.raises(vg.ArgumentError, match="argnums") as info:
        vg.grad(f3, argnums=bad)  # <- the line named
    assert "test_api.py" in str(info.value)


def test_argnums_out_of_range_names_the_call_and_the_function():
    with pytest.raises(vg.ArgumentError, match="out of range") as info:
        vg.grad(f3, argnums=(0, 5))(A, B, V)
    msg = str(info.value)
    assert "test_api.py" in msg and "f3 is defined at" in msg


def test_non_callables_are_rejected():
    for t in (vg.grad, vg.jit, vg.jacobian, vg.hessian):
        with pytest.raises(vg.ArgumentError, match="expects a function") as info:
            t(A)
        assert "test_api.py" in str(info.value)
    with pytest.raises(vg.ArgumentError, match="expects a function"):
        vg.vjp(3.0, A)


def test_has_aux_must_be_a_bool_and_the_output_a_pair():
    with pytest.raises(vg.ArgumentError, match="has_aux"):
        vg.grad(f3, has_aux="yes")
    with pytest.raises(vg.ArgumentError, match="pair") as info:
        vg.grad(lambda x: (vnp.sum(x), 1, 2), has_aux=True)(A)
    assert "test_api.py" in str(info.value)


def test_keyword_arguments_are_traced_never_differentiated():
    def f(x, w=None, *, scale=1.0, opts=None):
        return vnp.sum(vnp.tanh(x) * w["a"]) * scale * (2.0 if opts == "double" else 1.0)
    d = {"a": B}
    g = vg.grad(f)(A, w=d, scale=3.0, opts="double")
    np.testing.assert_allclose(g, (1 - np.tanh(A) ** 2) * B * 6.0, rtol=1e-12)
    v, _g2 = vg.value_and_grad(f)(A, scale=0.5, w=d)
    np.testing.assert_allclose(v, np.sum(np.tanh(A) * B) * 0.5, rtol=1e-12)
    np.testing.assert_allclose(vg.jit(f)(A, w={"a": V}, scale=2.0),
                               np.sum(np.tanh(A) * V) * 2.0, rtol=1e-12)
    # a new keyword value (array or Python number) reuses the compiled code
    n = len(api._CACHE[f])
    vg.grad(f)(A, w={"a": A}, scale=5.0, opts="double")
    assert len(api._CACHE[f]) == n
    vg.grad(f)(A, w={"a": A}, scale=5.0, opts="single")  # a static keyword: a new entry
    assert len(api._CACHE[f]) == n + 1


def test_vjp_gives_none_for_non_array_arguments():
    """None for an int and a string; a Python float has its cotangent, as in JAX."""
    def f(x, n, name, s):
        return x * n * s * (1.0 if name == "a" else 2.0)
    _out, vjp_fn = vg.vjp(f, A, 3, "a", 0.5)
    gx, gn, gname, gs = vjp_fn(np.ones_like(A))
    np.testing.assert_allclose(gx, np.full_like(A, 1.5))
    assert gn is None and gname is None
    np.testing.assert_allclose(gs, 3 * np.sum(A))


def test_vjp_accepts_a_python_number_cotangent_for_a_0d_output():
    _out, vjp_fn = vg.vjp(lambda x: vnp.sum(x ** 2), A)
    (g,) = vjp_fn(2.0)
    np.testing.assert_allclose(g, 4 * A)
    (g,) = vjp_fn(np.float32(1.0))
    np.testing.assert_allclose(g, 2 * A)
    with pytest.raises(vg.ArgumentError, match="shape"):
        vjp_fn(np.ones(2))
    with pytest.raises(vg.ArgumentError, match="complex"):
        vjp_fn(1j)


def test_grad_of_a_complex_output_raises():
    with pytest.raises(vg.ArgumentError, match="real"):
        vg.grad(lambda x: vnp.sum(x * 1j))(A)


def test_clear_cache_retraces():
    traces = []
    scale = [2.0]

    def f(x):
        traces.append(1)
        return x * scale[0]
    jf = vg.jit(f)
    np.testing.assert_allclose(jf(A), A * 2)
    scale[0] = 3.0
    np.testing.assert_allclose(jf(A), A * 2)  # read once, while tracing (documented)
    vg.clear_cache()
    np.testing.assert_allclose(jf(A), A * 3)
    assert len(traces) == 2 and len(api._CACHE[f]) == 1


def test_config_fields_are_typed_and_restored():
    before = vg.config()
    assert isinstance(before, vg.Config) and before.cache_size >= 1
    with vg.config(cache_size=2):
        assert vg.config().cache_size == 2

        def f(x):
            return x * 2
        for n in range(1, 6):
            vg.jit(f)(np.ones(n))
        assert len(api._CACHE[f]) == 2  # the oldest signatures were dropped
        np.testing.assert_allclose(vg.jit(f)(np.ones(1)), 2.0)  # compiled again
    assert vg.config().cache_size == before.cache_size
    with pytest.raises(vg.ArgumentError, match="no setting"):
        vg.config(cache_sise=3)
    with pytest.raises(vg.ArgumentError, match="positive int"):
        vg.config(cache_size="big")
    with pytest.raises(vg.ArgumentError, match="bool"):
        vg.config(trace_scalars=1)


def test_namedtuple_arguments_keep_their_type():
    from typing import NamedTuple

    class Layer(NamedTuple):
        w: np.ndarray
        b: np.ndarray
    b3 = V[:3].copy()
    p = Layer(A, b3)
    g = vg.grad(lambda p, x: vnp.sum(vnp.tanh(x @ p.w.T + p.b)))(p, B)
    assert type(g) is Layer
    vg.check_grads(lambda w, b: vnp.sum(vnp.tanh(B @ w.T + b)), [A, b3], argnums=(0, 1))
    want = vg.grad(lambda w, b: vnp.sum(vnp.tanh(B @ w.T + b)), argnums=(0, 1))(A, b3)
    np.testing.assert_allclose(g.w, want[0])
    np.testing.assert_allclose(g.b, want[1])
    j = vg.jacobian(lambda p: p.w[:, 0] * p.b)(p)
    assert type(j) is Layer and j.w.shape == (3, 3, 4) and j.b.shape == (3, 3)


def test_core_imports_no_optional_engine():
    """`import vecgrad`, tracing, compiling and running on the NumPy backend (and explain)
    import neither jax, torch nor numba: they are optional extras, loaded only by their
    backend."""
    import subprocess
    import sys
    code = ("import sys, numpy as np, vecgrad as vg, vecgrad.numpy as vnp\n"
            "f = lambda x: vnp.sum(vnp.tanh(x) ** 2)\n"
            "vg.grad(f)(np.ones(3)); vg.jit(f)(np.ones(3)); vg.vjp(f, np.ones(3))\n"
            "vg.backends.available('jax'); vg.backends.available('torch')\n"
            "print(sorted(m for m in ('jax', 'jaxlib', 'torch', 'numba') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "[]"


# --------------------------------------------------------------- jit's static arguments

def test_jit_static_argnums_key_numbers_by_value():
    calls = []

    def f(x, n, scale=1.0):
        calls.append(n)
        return vnp.sum(x[:n]) * scale

    x = np.arange(6.0)
    g = vg.jit(f, static_argnums=1)
    assert g(x, 2) == 1.0 and g(x, 3) == 3.0 and g(x, 3) == 3.0
    assert calls.count(3) == 1  # traced once per value, and n was a Python int there
    assert all(type(n) is int for n in calls)
    h = vg.jit(f, static_argnames="scale")
    assert h(x, 2, scale=2.0) == 2.0 and h(x, 2, scale=3.0) == 3.0
    k = vg.jit(f, static_argnames="n")  # a name that is also a position: static both ways
    assert k(x, 4) == 6.0 and k(x, n=5) == 10.0


@pytest.mark.parametrize("make, call, msg", [
    (lambda f: vg.jit(f, static_argnums=1), lambda g: g(np.ones(3), np.ones(2)),
     "marked static .* but is an array"),
    (lambda f: vg.jit(f, static_argnums=-3), None, "negative ones within the 2 positional"),
    (lambda f: vg.jit(f, static_argnames=3), None, "strings"),
])
def test_jit_static_argument_errors(make, call, msg):
    def f(x, n):
        return vnp.sum(x) * n
    with pytest.raises(vg.ArgumentError, match=msg):
        g = make(f)
        call(g)


def test_public_namespaces_hold_only_the_api():
    """`from __future__ import annotations` must not leak an `annotations` name, and every
    non-module public name of `vecgrad` is listed in `__all__`."""
    import types

    import vecgrad.nn
    import vecgrad.scipy

    for mod in (vg, vnp, vecgrad.nn, vecgrad.scipy):
        assert "annotations" not in dir(mod), mod.__name__
    assert {"dispatch_function", "dispatch_ufunc", "unsupported"}.isdisjoint(vnp.__all__)
    loose = [n for n in dir(vg) if not n.startswith("_")
             and not isinstance(getattr(vg, n), types.ModuleType) and n not in vg.__all__]
    assert loose == []
