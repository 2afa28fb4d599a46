"""The torch backend (backend="torch") and vg.torch_function: values and gradients equal the
NumPy backend's, results are tensors on the inputs' device, and a loop-style vecgrad function
inside a torch.nn.Module trains with torch.optim like the same model written in plain torch,
also under torch.compile(fullgraph=True). (Every primitive's lowering is checked against
NumPy by the spec list: tests/test_primitives.py.)"""
from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.examples.seeds import WORKLOADS
from vecgrad.pytree import flatten

torch = pytest.importorskip("torch")


def _close(a, b, rtol=1e-5, atol=1e-6):
    fa, fb = flatten(a)[0], flatten(b)[0]
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        x = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
        y = y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else np.asarray(y)
        assert x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_seed_gradients_equal_numpy_backend(name):
    w = WORKLOADS[name]
    args = w.inputs("small")
    targs = [[tuple(torch.from_numpy(x) for x in p) for p in a] if name == "002" and i == 0 else
             ([torch.from_numpy(x) for x in a] if isinstance(a, list) else torch.from_numpy(a))
             for i, a in enumerate(args)]
    got = vg.value_and_grad(w.fresh_loss(), argnums=w.argnums, backend="torch")(*targs)
    want = vg.value_and_grad(w.fresh_loss(), argnums=w.argnums)(*args)
    assert all(isinstance(x, torch.Tensor) for x in flatten(got)[0])
    _close(got, want, rtol=1e-5 if name != "002" else 1e-10)


def test_outputs_never_alias_inputs():
    x = torch.arange(6.0).reshape(2, 3)
    f = vg.jit(lambda x: (x, x.T, x[0], vnp.sum(x)), backend="torch")
    outs = f(x)
    for o in outs[:3]:
        assert o.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    _close(outs, (x, x.T, x[0], x.sum()))


def test_outputs_never_alias_each_other():
    """Views of one computed value returned side by side come back as separate tensors (a
    torch custom op refuses outputs that alias each other)."""
    x = torch.arange(6.0).reshape(2, 3)
    f = vg.jit(lambda x: (vnp.exp(x), vnp.exp(x)[0], vnp.exp(x).T, vnp.exp(x)), backend="torch")
    outs = f(x)
    ptrs = [o.untyped_storage().data_ptr() for o in outs]
    assert len(set(ptrs)) == len(ptrs)
    _close(outs, (x.exp(), x.exp()[0], x.exp().T, x.exp()))
    tf = vg.torch_function(lambda x: (vnp.tanh(x), vnp.tanh(x)[1:]))
    y = x.clone().requires_grad_()
    a, b = tf(y)
    (a.sum() + 2 * b.sum()).backward()
    _close(y.grad, (1 - torch.tanh(x) ** 2) * torch.tensor([[1.0], [3.0]]))


def test_writes_with_negative_steps_and_index_arrays():
    def f(x):
        out = vnp.zeros((4, 5), x.dtype)
        out[::-2] = x[1::2, ::-1]                     # negative steps: read and write
        out[np.array([3, 1, 0]), 2] += x[0, :3]        # an index array
        return out[1, :, None] * x[np.array([2, 2, 0]), 1:3].sum()  # repeated reads

    x = np.random.default_rng(0).standard_normal((4, 5))
    _close(vg.jit(f, backend="torch")(torch.from_numpy(x)), vg.jit(f)(x), rtol=1e-12)
    _close(vg.grad(lambda x: vnp.sum(f(x) ** 2), backend="torch")(torch.from_numpy(x)),
           vg.grad(lambda x: vnp.sum(f(x) ** 2))(x), rtol=1e-12)


# ------------------------------------------------------------------ vg.torch_function

def attention_rows(W, b, q, xs):
    """Loop style: a Dense layer on each sample, a softmax of its dot with a query, written
    into a buffer row by row."""
    n = xs.shape[0]
    out = vnp.zeros((n, W.shape[0]), xs.dtype)
    for i in range(n):
        h = vnp.tanh(W @ xs[i] + b)
        out[i] = h * vg.nn.softmax(h * q, axis=0)
    return out


def attention_rows_torch(W, b, q, xs):
    h = torch.tanh(xs @ W.T + b)
    return h * torch.softmax(h * q, dim=1)


class Model(torch.nn.Module):
    def __init__(self, rows, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.W = torch.nn.Parameter(torch.randn(6, 4, generator=g) / 2)
        self.b = torch.nn.Parameter(torch.zeros(6))
        self.q = torch.nn.Parameter(torch.randn(6, generator=g))
        self.head = torch.nn.Linear(6, 1)
        with torch.no_grad():
            self.head.weight.copy_(torch.randn(1, 6, generator=g))
            self.head.bias.zero_()
        self.rows = rows

    def forward(self, xs):
        return self.head(self.rows(self.W, self.b, self.q, xs))[:, 0]


def _train(model, xs, ys, steps=6, compile_backend=None):
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    fwd = torch.compile(model, backend=compile_backend, fullgraph=True) if compile_backend \
        else model
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.mean((fwd(xs) - ys) ** 2)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _data():
    g = torch.Generator().manual_seed(1)
    xs = torch.randn(10, 4, generator=g)
    return xs, torch.sin(xs.sum(1))


def test_torch_function_trains_like_plain_torch():
    xs, ys = _data()
    got = _train(Model(vg.torch_function(attention_rows)), xs, ys)
    want = _train(Model(attention_rows_torch), xs, ys)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got[-1] < got[0]


@pytest.mark.parametrize("compile_backend", ["aot_eager", "inductor"])
def test_torch_function_under_torch_compile_fullgraph(compile_backend):
    """fullgraph=True: a graph break would raise. Inductor needs a working C++ toolchain."""
    import torch._inductor.config as inductor_config
    xs, ys = _data()
    want = _train(Model(attention_rows_torch), xs, ys)
    torch._dynamo.reset()
    old = inductor_config.fx_graph_cache
    inductor_config.fx_graph_cache = False  # no compiled graphs from earlier runs
    try:
        got = _train(Model(vg.torch_function(attention_rows)), xs, ys,
                     compile_backend=compile_backend)
    except Exception as e:
        if compile_backend == "inductor" and "BackendCompilerFailed" in type(e).__name__:
            pytest.skip(f"torch.compile's inductor does not work on this machine: {e}")
        raise
    finally:
        inductor_config.fx_graph_cache = old
    np.testing.assert_allclose(got, want, rtol=1e-5)


def _rnn(W, U, xs):
    h = vnp.zeros(W.shape[0])
    for t in range(xs.shape[0]):  # a recurrence: rolled into a loop
        h = vnp.tanh(W @ h + U @ xs[t])
    return vnp.sum(h ** 2)


# Inductor compiles for a minute or more on the 2-core CI machine: the suite checks the
# program through torch.compile with the "aot_eager" backend (the same Dynamo capture and AOT
# graphs, no kernel generation); VECGRAD_TORCH_INDUCTOR=1 also runs it with inductor.
_COMPILE_BACKENDS = ["aot_eager"] + (["inductor"] if os.environ.get("VECGRAD_TORCH_INDUCTOR")
                                     else [])


@pytest.mark.parametrize("backend", _COMPILE_BACKENDS)
def test_torch_compile_setting_compiles_the_program(backend):
    """vg.config(torch_compile=True): the programs compiled meanwhile run through
    torch.compile (their rolled loops eagerly), with the values and gradients of the NumPy
    backend; a program compiled without it runs op by op."""
    from torch._dynamo.utils import counters
    rng = np.random.default_rng(0)
    args = (0.5 * rng.standard_normal((3, 3)), rng.standard_normal((3, 2)),
            rng.standard_normal((6, 2)))
    want = vg.value_and_grad(_rnn, argnums=(0, 1, 2))(*args)
    f = vg.value_and_grad(_rnn, argnums=(0, 1, 2), backend="torch")
    targs = [torch.from_numpy(a) for a in args]
    torch._dynamo.reset()
    frames = counters["frames"]["ok"]
    try:
        with vg.config(torch_compile=True, torch_compile_backend=backend):
            got = f(*targs)
    except Exception as e:
        if "BackendCompilerFailed" in type(e).__name__:
            pytest.skip(f"torch.compile's inductor does not work on this machine: {e}")
        raise
    assert counters["frames"]["ok"] > frames
    _close(got, want, rtol=1e-10, atol=1e-12)
    _close(f(*targs), want, rtol=1e-10, atol=1e-12)  # (compiled: the setting is off now)
    frames = counters["frames"]["ok"]
    eager = vg.value_and_grad(lambda *a: _rnn(*a), argnums=(0, 1, 2), backend="torch")
    _close(eager(*targs), want, rtol=1e-10, atol=1e-12)
    assert counters["frames"]["ok"] == frames


def test_torch_function_pytrees_unused_outputs_and_integer_inputs():
    def f(params, x, k):
        y = params["w"] * x + params["c"]
        return {"y": y * k, "s": vnp.sum(y)}

    tf = vg.torch_function(functools.partial(f), name="pytree_fn")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    c = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor([3.0, -1.0], requires_grad=True)
    k = torch.tensor([2, 3])
    out = tf({"w": w, "c": c}, x, k)
    out["s"].backward()  # "y" unused: its cotangent is zero
    np.testing.assert_allclose(w.grad.numpy(), [3.0, -1.0])
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0])
    assert c.grad.item() == 2.0


@pytest.mark.gpu
def test_cuda_tensors_stay_on_the_gpu():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    xs, ys = _data()
    model = Model(vg.torch_function(attention_rows)).cuda()
    got = _train(model, xs.cuda(), ys.cuda())
    want = _train(Model(attention_rows_torch), xs, ys)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    g = vg.grad(lambda x: vnp.sum(vnp.tanh(x) ** 2), backend="torch")(xs.cuda())
    assert g.is_cuda


@pytest.fixture
def no_numpy_conversion(monkeypatch):
    """Any tensor -> NumPy conversion (.numpy(), np.asarray(tensor)) raises."""
    def refuse(self, *a, **k):
        raise AssertionError("a tensor went to NumPy inside the compiled path")
    monkeypatch.setattr(torch.Tensor, "numpy", refuse)
    monkeypatch.setattr(torch.Tensor, "__array__", refuse)


def _tensors(args):
    if isinstance(args, np.ndarray):
        return torch.from_numpy(args)
    if isinstance(args, (list, tuple)):
        return type(args)(_tensors(a) for a in args)
    return args


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_no_numpy_in_the_compiled_path(name):
    """On tensors, the compiled gradient, and vg.torch_function's forward and backward, never
    convert a tensor to NumPy (only the documented host-only primitives do; these programs
    have none): so CUDA tensors stay on the GPU. Results are tensors."""
    w = WORKLOADS[name]
    xs = _tensors(w.inputs("small"))
    g = vg.value_and_grad(w.fresh_loss(), argnums=w.argnums, backend="torch")
    g(*xs)  # compile outside the check (tracing reads shapes only, but stay honest)
    tf = vg.torch_function(w.fresh_loss())
    leaves = flatten(xs)[0]
    for x in leaves:
        x.requires_grad_(x.dtype.is_floating_point)
    tf(*xs)
    mp = pytest.MonkeyPatch()
    try:
        no_numpy_conversion.__wrapped__(mp)
        out = g(*xs)
        tf(*xs).backward()
    finally:
        mp.undo()
    assert all(isinstance(x, torch.Tensor) for x in flatten(out)[0])
    assert all(x.grad is not None for x in leaves if x.requires_grad)
