"""The JAX backend (backend="jax") and vg.jax_function: values and gradients equal the NumPy
backend's, results are JAX arrays on the inputs' devices, sharded inputs flow through (in a
subprocess with 4 CPU devices), and a vecgrad function trains inside jax.jit / jax.grad /
jax.vmap like the same model written in plain JAX. (Every primitive's lowering is checked
against NumPy by the spec list: tests/test_primitives.py.)"""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.examples.seeds import WORKLOADS
from vecgrad.pytree import flatten

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _close(a, b, rtol=1e-5, atol=1e-6):
    fa, fb = flatten(a)[0], flatten(b)[0]
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_seed_gradients_equal_numpy_backend(name, x64):
    w = WORKLOADS[name]
    args = w.inputs("small")
    got = vg.value_and_grad(w.fresh_loss(), argnums=w.argnums, backend="jax")(*args)
    want = vg.value_and_grad(w.fresh_loss(), argnums=w.argnums)(*args)
    assert all(isinstance(x, jax.Array) for x in flatten(got)[0])
    _close(got, want, rtol=1e-5 if name != "002" else 1e-10)  # 002 is float64: stays float64


def test_jit_and_vjp_on_jax_arrays():
    def f(x, y):
        out = vnp.zeros((3, 4), x.dtype)
        for i in range(3):
            out[i] = vnp.tanh(x[i] * y) + x[i].sum()
        return out, {"s": vnp.sum(out ** 2)}

    r = np.random.default_rng(0)
    x, y = r.standard_normal((3, 4)).astype(np.float32), r.standard_normal(4).astype(np.float32)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    _close(vg.jit(f, backend="jax")(xj, yj), vg.jit(f)(x, y))
    out, vjp_fn = vg.vjp(f, xj, yj, backend="jax")
    _, vjp_n = vg.vjp(f, x, y)
    ct = (jnp.ones((3, 4), jnp.float32), {"s": jnp.asarray(2.0, jnp.float32)})
    _close(vjp_fn(ct), vjp_n((np.ones((3, 4), np.float32), {"s": np.float32(2.0)})))
    assert isinstance(out[0], jax.Array)


def test_results_stay_on_the_inputs_device():
    dev = jax.devices()[-1]
    x = jax.device_put(jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3), dev)
    g = vg.grad(lambda x: vnp.sum(vnp.exp(x[0]) * x[1]), backend="jax")(x)
    assert g.devices() == {dev}
    np.testing.assert_allclose(np.asarray(g), vg.grad(lambda x: vnp.sum(vnp.exp(x[0]) * x[1]))(
        np.asarray(x)), rtol=1e-6)


def test_float64_needs_x64():
    if jax.config.jax_enable_x64:
        pytest.skip("jax_enable_x64 is on in this process")
    from vecgrad.backends.jax import X64Error
    f = vg.grad(lambda x: vnp.sum(x * x), backend="jax")
    with pytest.raises(X64Error, match="jax_enable_x64"):
        f(np.ones(3))
    assert f(np.ones(3, np.float32)).dtype == np.float32


def test_default_backend_is_settable():
    from vecgrad.backends import BackendError
    f = vg.grad(lambda x: vnp.sum(x * x))
    x = np.ones(3, np.float32)
    with vg.config(backend="jax"):
        assert isinstance(f(x), jax.Array)
        assert isinstance(vg.jacobian(lambda x: vnp.sin(x))(x), jax.Array)
    assert type(f(x)) is np.ndarray
    with pytest.raises(BackendError, match="unknown backend 'tpu'"):
        vg.grad(lambda x: x, backend="tpu")
    with pytest.raises(BackendError, match="unknown backend 'tpu'"):
        vg.config(backend="tpu")


SHARDED = textwrap.dedent("""
    import json, jax, numpy as np, vecgrad as vg
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from vecgrad.examples import seeds as S
    assert len(jax.devices()) == 4, jax.devices()
    params, xs = S.seed002_inputs(n=10_000, sizes=(1, 32, 8, 1))
    mesh = Mesh(np.array(jax.devices()), ("data",))
    xs_sh = jax.device_put(xs, NamedSharding(mesh, P("data")))
    params_rep = jax.device_put(params, NamedSharding(mesh, P()))
    g = vg.grad(S.mapall, backend="jax")
    one = g(params, xs)
    many = g(params_rep, xs_sh)
    entry, leaves = g.entry(params_rep, xs_sh)
    hlo = entry.compiled.native.lower(*leaves).compile().as_text()
    pairs = [(np.asarray(a), np.asarray(b)) for p, q in zip(one, many) for a, b in zip(p, q)]
    print(json.dumps({
        "err": max(float(np.abs(a - b).max() / (np.abs(a).max() + 1e-300)) for a, b in pairs),
        "dtype": str(many[0][0].dtype),
        "devices": len(many[0][0].devices()),
        "input_shards": len(xs_sh.addressable_shards),
        "cross_device": [op for op in ("all-reduce", "reduce-scatter") if op in hlo],
    }))
""")


def test_sharded_inputs_across_four_devices():
    """seeds/002 with its 10,000 inputs sharded over 4 (CPU) devices: the same gradient as on
    one device, and XLA reduces the weight gradient across devices."""
    env = dict(os.environ, XLA_FLAGS=os.environ.get("XLA_FLAGS", "") +
               " --xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu",
               JAX_ENABLE_X64="1")
    r = subprocess.run([sys.executable, "-c", SHARDED], env=env, capture_output=True, text=True,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["input_shards"] == 4 and res["devices"] == 4
    assert res["dtype"] == "float64"
    assert res["err"] < 1e-10
    assert res["cross_device"], "no all-reduce / reduce-scatter in the compiled HLO"


# ------------------------------------------------------------------ vg.jax_function

def _mlp_loop(params, xs, ys):
    """A loop-style model: an MLP applied to each scalar sample, squared error."""
    preds = []
    for x in xs:
        h = vnp.array([x])
        for k, (W, b) in enumerate(params):
            h = W @ h + b
            h = vnp.tanh(h) if k < len(params) - 1 else h
        preds.append(h[0])
    return vnp.mean((vnp.array(preds) - ys) ** 2)


def _mlp_jax(params, xs, ys):
    h = xs[None, :]
    for k, (W, b) in enumerate(params):
        h = W @ h + b[:, None]
        h = jnp.tanh(h) if k < len(params) - 1 else h
    return jnp.mean((h[0] - ys) ** 2)


def _init(sizes=(1, 8, 6, 1), seed=0):
    r = np.random.default_rng(seed)
    return [(jnp.asarray(r.standard_normal((o, i)) / np.sqrt(i), jnp.float32),
             jnp.asarray(0.1 * r.standard_normal(o), jnp.float32))
            for i, o in itertools.pairwise(sizes)]


def test_jax_function_trains_like_plain_jax():
    loss = vg.jax_function(_mlp_loop)
    xs = jnp.linspace(-1.0, 1.0, 12, dtype=jnp.float32)
    ys = jnp.sin(3 * xs)

    def sgd(f):
        @jax.jit
        def step(params):
            val, grads = jax.value_and_grad(f)(params, xs, ys)
            return val, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
        params, losses = _init(), []
        for _ in range(5):
            val, params = step(params)
            losses.append(float(val))
        return losses, params

    got, p1 = sgd(loss)
    want, p2 = sgd(_mlp_jax)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got[-1] < got[0]
    _close(p1, p2, rtol=1e-4, atol=1e-6)


def test_jax_function_under_vmap_and_grad():
    def f(x, w):  # a sliding window with a read-modify-write buffer
        out = vnp.zeros(x.shape[0] - 2, x.dtype)
        for i in range(x.shape[0] - 2):
            out[i] += vnp.sum(x[i:i + 3] * w)
        return vnp.sum(vnp.sin(out))

    jf = vg.jax_function(f)
    r = np.random.default_rng(1)
    X = jnp.asarray(r.standard_normal((4, 7)), jnp.float32)
    w = jnp.asarray(r.standard_normal(3), jnp.float32)

    def ref(x, w):
        win = jnp.stack([x[i:i + 3] for i in range(x.shape[0] - 2)])
        return jnp.sum(jnp.sin(win @ w))

    _close(jax.vmap(jf, (0, None))(X, w), jax.vmap(ref, (0, None))(X, w))
    _close(jax.jit(jax.vmap(jax.grad(jf, argnums=(0, 1)), (0, None)))(X, w),
           jax.vmap(jax.grad(ref, argnums=(0, 1)), (0, None))(X, w))
    _close(jf(np.asarray(X[0]), np.asarray(w)), ref(X[0], w))  # eager, NumPy inputs


def test_jax_function_pytree_outputs_and_integer_inputs():
    def f(x, idx_scale):
        return {"a": x * idx_scale, "b": vnp.sum(x)}

    jf = vg.jax_function(f)
    x = jnp.arange(3.0, dtype=jnp.float32)
    k = jnp.asarray([1, 2, 3], jnp.int32)
    out = jf(x, k)
    assert set(out) == {"a", "b"}
    g = jax.grad(lambda x: jf(x, k)["a"].sum() + jf(x, k)["b"])(x)
    np.testing.assert_allclose(np.asarray(g), [2.0, 3.0, 4.0])


# ------------------------------------------------------------------ contractions

def _random_spec(r):
    """A two-operand einsum: shared (batch or contracted) and own (free or summed) indices in
    random orders, lengths 1 to 4, a random output."""
    letters = list("abcdefg")
    r.shuffle(letters)
    n_shared, n_a, n_b = r.integers(0, 3), r.integers(0, 3), r.integers(0, 3)
    shared = letters[:n_shared]
    a = shared + letters[n_shared:n_shared + n_a]
    b = shared + letters[n_shared + n_a:n_shared + n_a + n_b]
    r.shuffle(a)
    r.shuffle(b)
    out = [c for c in dict.fromkeys(a + b) if r.random() < 0.6]
    r.shuffle(out)
    sizes = {c: int(r.integers(1, 5)) for c in letters}
    return f"{''.join(a)},{''.join(b)}->{''.join(out)}", [[sizes[c] for c in s] for s in (a, b)]


def test_contraction_plans_equal_numpy(x64):
    """The JAX einsum lowering (dot_general plans: operand order, group orders, broadcasting)
    computes np.einsum exactly, on many random specs, under jax.jit."""
    from vecgrad.backends.jax import contract
    r = np.random.default_rng(0)
    planned = 0
    for _ in range(100):
        spec, shapes = _random_spec(r)
        xs = [r.standard_normal(s) for s in shapes]
        want = np.einsum(spec, *xs)
        got = jax.jit(lambda *xs, spec=spec: contract.einsum(spec, *xs))(*xs)
        assert got.shape == want.shape and got.dtype == np.float64, spec
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12, err_msg=spec)
        spec, xs = contract._own_sums(spec, tuple(map(jnp.asarray, xs)))
        planned += contract.plan(spec, tuple(x.shape for x in xs)) is not None
    assert planned > 30  # (the others: no contracted index, a diagonal)


def test_contraction_plans_avoid_copies_of_the_large_operand():
    """seeds/001's contractions: the large operand is not reversed (its copy is a block swap
    at most), and W[i,j] X[a,j,k] -> [a,i,k] broadcasts W rather than copying X."""
    from vecgrad.backends.jax.contract import plan
    p = plan("ac,abc->bc", ((100, 128), (100, 256, 128)))
    assert p.cost <= 100 * 256 * 128 + 2 * 256 * 128
    p = plan("ij,ajk->aik", ((32, 64), (256, 64, 128)))
    assert p.bcast == (256, 32, 64) and p.perms[1] == (0, 1, 2) and p.out_perm == (0, 1, 2)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_no_host_round_trip(name, x64):
    """On JAX arrays, a compiled gradient moves nothing between host and device: it runs under
    jax.transfer_guard("disallow") (a NumPy conversion inside the compiled path would have to
    come back as a transfer to give a jax.Array), and its results are jax.Arrays on the
    inputs' device. (Host-only primitives, documented in the lowering table, run through
    jax.pure_callback, which the guard allows; these programs have none.)"""
    w = WORKLOADS[name]
    xs = jax.device_put(w.inputs("small"))
    g = vg.value_and_grad(w.fresh_loss(), argnums=w.argnums, backend="jax")
    g(*xs)  # compile (constants move once, here)
    with jax.transfer_guard("disallow"):
        out = g(*xs)
    leaves = flatten(out)[0]
    assert all(isinstance(x, jax.Array) and x.devices() == {jax.devices()[0]} for x in leaves)
    with jax.transfer_guard("disallow"), pytest.raises(Exception, match="[Dd]isallowed"):
        g(*w.inputs("small"))  # (the guard does catch a NumPy argument)


@pytest.mark.gpu
def test_gpu_arrays_stay_on_the_gpu(x64):
    try:
        dev = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("no GPU for jax")
    w = WORKLOADS["000"]
    xs = jax.device_put(w.inputs("small"), dev)
    f = vg.grad(w.fresh_loss(), argnums=w.argnums, backend="jax")
    f(*xs)
    with jax.transfer_guard("disallow"):
        g = f(*xs)
    assert all(x.devices() == {dev} for x in flatten(g)[0])
    _close(g, vg.grad(w.fresh_loss(), argnums=w.argnums)(*w.inputs("small")))
