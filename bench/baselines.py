"""The seed programs ported to other AD engines, for `vecgrad bench --baselines` (bench/run.py).

Each port computes the same loss as its vecgrad seed (`seeds.py`) on the same inputs, written
the way a user of that engine would write it:

- PyTorch eager, loop style: the natural-style seed, line for line, with in-place writes into
  a `torch.empty` buffer (PyTorch's autograd supports them).
- PyTorch eager, vectorized: the hand-vectorized NumPy forward with `torch.einsum`.
- `jax.jit(jax.grad(...))`, vectorized: the kernel `jax.vmap`-ed where that is natural.
- HIPS autograd, loop style: autograd cannot differentiate in-place writes, so seed000 builds
  nested lists and stacks them instead of writing into a buffer.
- vecgrad's JAX and torch backends, loop style: the natural-style seeds of `seeds.py`, with
  `vg.grad(..., backend="jax" | "torch")`, on JAX arrays / tensors placed like the engine's.

`prepare(..., device=...)` places the inputs on a device (a `jax.Device` for the JAX engines,
a torch device for the torch ones; the engines marked `gpu` run there, for the GPU run).

An engine is usable when its package imports; `available(engine)` says so.
"""
from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# The engines are optional dependencies: `_load` binds these names on first use, so importing
# this module never imports torch, jax or autograd, and the loss functions below look the
# module up as a global (as fast as a top-level import in their hot loops).
torch: Any = None
jax: Any = None
jnp: Any = None
anp: Any = None


def _load() -> None:
    g = globals()
    for name, mod in [("torch", "torch"), ("jax", "jax"), ("jnp", "jax.numpy"),
                      ("anp", "autograd.numpy")]:
        if g[name] is None and importlib.util.find_spec(mod.split(".")[0]) is not None:
            g[name] = importlib.import_module(mod)


# ------------------------------------------------------------------ PyTorch, loop style


def t_cosinesim(u: Any, v: Any) -> Any:
    return torch.dot(u, v) / (torch.sqrt(torch.sum(u ** 2)) * torch.linalg.norm(v))


def t_pairwise(a: Any, b: Any, K: Any = t_cosinesim) -> Any:
    _W, R, B = a.shape
    N = b.shape[1]
    out = torch.empty((N, R, B), dtype=a.dtype)
    for k in range(B):
        for j in range(R):
            aj = a[:, j, k]
            for i in range(N):
                out[i, j, k] = K(b[:, i, k], aj)
    for k in range(B):
        out[:, :, k] = torch.softmax(out[:, :, k], dim=0)
    return out


def t_seed000_loop(a: Any, b: Any, wt: Any) -> Any:
    return torch.sum(t_pairwise(a, b) * wt)


def t_seed001_loop(W: Any, bias: Any, xs: list, H: Any, wt: Any) -> Any:
    ys = [W @ x + bias[:, None] for x in xs]
    y1 = ys[0]
    nb = y1.shape[1]
    zs = [torch.stack([y1[:, i] @ y[:, i] for i in range(nb)]) for y in ys]
    alpha = torch.softmax(torch.stack(zs), dim=0)
    return torch.sum(torch.sum(alpha[None, :, :] * H, dim=1) * wt)


def t_mlp(params: list, t: Any) -> Any:
    h = t.reshape(1)
    for W, b in params:
        h = W @ h + b
    return h


def t_seed002_loop(params: list, xs: Any) -> Any:
    return torch.sum(torch.stack([t_mlp(params, x) for x in xs]) ** 2)


# ------------------------------------------------------------------ PyTorch, vectorized


def t_seed000_vec(a: Any, b: Any, wt: Any) -> Any:
    an = a / torch.sqrt(torch.einsum("wjk,wjk->jk", a, a))[None]
    bn = b / torch.sqrt(torch.einsum("wik,wik->ik", b, b))[None]
    s = torch.einsum("wik,wjk->ijk", bn, an)
    return torch.sum(torch.softmax(s, dim=0) * wt)


def t_seed001_vec(W: Any, bias: Any, xs: list, H: Any, wt: Any) -> Any:
    Y = torch.einsum("oi,tib->tob", W, torch.stack(xs)) + bias[None, :, None]
    alpha = torch.softmax(torch.einsum("ob,tob->tb", Y[0], Y), dim=0)
    return torch.sum(torch.einsum("tb,dtb->db", alpha, H) * wt)


def t_seed002_vec(params: list, xs: Any) -> Any:
    h = xs[None, :]
    for W, b in params:
        h = W @ h + b[:, None]
    return torch.sum(h ** 2)


# ------------------------------------------------------------------ JAX, vectorized


def j_cosinesim(u: Any, v: Any) -> Any:
    return jnp.dot(u, v) / (jnp.sqrt(jnp.sum(u ** 2)) * jnp.linalg.norm(v))


def j_seed000_vec(a: Any, b: Any, wt: Any) -> Any:
    # vmap the kernel over i (columns of b), then j (columns of a), then the batch k.
    over_i = jax.vmap(j_cosinesim, (1, None))
    over_ij = jax.vmap(over_i, (None, 1))
    s = jax.vmap(over_ij, (2, 2))(b, a)                  # (B, R, N)
    s = jnp.transpose(s, (2, 1, 0))                        # (N, R, B), like `out`
    return jnp.sum(jax.nn.softmax(s, axis=0) * wt)


def j_seed001_vec(W: Any, bias: Any, xs: list, H: Any, wt: Any) -> Any:
    Y = jax.vmap(lambda x: W @ x + bias[:, None])(jnp.stack(xs))   # (T, out, batch)
    alpha = jax.nn.softmax(jnp.einsum("ob,tob->tb", Y[0], Y), axis=0)
    return jnp.sum(jnp.einsum("tb,dtb->db", alpha, H) * wt)


def j_mlp(params: list, t: Any) -> Any:
    h = jnp.reshape(t, (1,))
    for W, b in params:
        h = W @ h + b
    return h


def j_seed002_vec(params: list, xs: Any) -> Any:
    return jnp.sum(jax.vmap(j_mlp, (None, 0))(params, xs) ** 2)


# ------------------------------------------------------------------ HIPS autograd, loop style


def ag_cosinesim(u: Any, v: Any) -> Any:
    return anp.dot(u, v) / (anp.sqrt(anp.sum(u ** 2)) * anp.linalg.norm(v))


def ag_softmax0(x: Any) -> Any:
    e = anp.exp(x - anp.max(x, axis=0, keepdims=True))
    return e / anp.sum(e, axis=0, keepdims=True)


def ag_pairwise(a: Any, b: Any, K: Any = ag_cosinesim) -> Any:
    # No buffer: autograd cannot differentiate `out[i, j, k] = ...`, so build lists and stack.
    _W, R, B = a.shape
    N = b.shape[1]
    slices = []
    for k in range(B):
        s = anp.array([[K(b[:, i, k], a[:, j, k]) for j in range(R)] for i in range(N)])
        slices.append(ag_softmax0(s))
    return anp.stack(slices, axis=2)


def ag_seed000_loop(a: Any, b: Any, wt: Any) -> Any:
    return anp.sum(ag_pairwise(a, b) * wt)


def ag_seed001_loop(W: Any, bias: Any, xs: list, H: Any, wt: Any) -> Any:
    ys = [anp.dot(W, x) + bias[:, None] for x in xs]
    y1 = ys[0]
    nb = y1.shape[1]
    zs = [anp.array([anp.dot(y1[:, i], y[:, i]) for i in range(nb)]) for y in ys]
    alpha = ag_softmax0(anp.array(zs))
    return anp.sum(anp.sum(alpha[None, :, :] * H, axis=1) * wt)


def ag_mlp(params: list, t: Any) -> Any:
    h = anp.array([t])
    for W, b in params:
        h = anp.dot(W, h) + b
    return h


def ag_seed002_loop(params: list, xs: Any) -> Any:
    return anp.sum(anp.array([ag_mlp(params, x) for x in xs]) ** 2)


# ------------------------------------------------------------------ engines


@dataclass(frozen=True)
class Prepared:
    """A gradient ready to time: `call()` runs it to completion and returns the gradients.

    `compile_seconds` is the ahead-of-time compile (JAX only), `numpy_based` says whether
    tracemalloc sees its memory (it does not see PyTorch's or XLA's allocators).
    """

    call: Callable[[], Any]
    to_numpy: Callable[[Any], list[np.ndarray]]
    compile_seconds: float | None
    numpy_based: bool


@dataclass(frozen=True)
class Engine:
    """One baseline: a library, a code style, its ports of the seeds, and how to take grads."""

    name: str
    style: str
    module: str
    programs: dict[str, Callable[..., Any]]
    prepare: Callable[..., Prepared]  # (loss, args, argnums, device) -> Prepared
    gpu: bool = False  # runs on a GPU in the GPU run

    @property
    def label(self) -> str:
        return f"{self.name}, {self.style}"


def available(engine: Engine) -> bool:
    """Whether the engine's package is installed."""
    return importlib.util.find_spec(engine.module) is not None


def prepare(engine: Engine, seed: str, args: tuple, argnums: tuple[int, ...],
            device: Any = None) -> Prepared:
    """The engine's gradient of seed `seed` w.r.t. `args[argnums]`, ready to time (inputs on
    `device`: None is the library's default)."""
    _load()
    return engine.prepare(engine.programs[seed], args, argnums, device)


def _leaves(tree: Any) -> list:
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in _leaves(t)]
    return [tree]


def _map(f: Callable, tree: Any) -> Any:
    if isinstance(tree, (list, tuple)):
        return type(tree)(_map(f, t) for t in tree)
    return f(tree)


TORCH_THREADS = 1
"""PyTorch's intra-op threads. With its default (one per core), on a small shared machine
each parallel region stalled for tens of ms whenever another process held a core (measured:
44 ms instead of 67 us per call); one thread is stable, like NumPy on these small arrays."""


def _sync(device: Any) -> None:
    """Wait for a CUDA device (torch returns before its kernels finish)."""
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def _torch_prepare(loss: Callable, args: tuple, argnums: tuple[int, ...],
                   device: Any = None) -> Prepared:
    torch.set_num_threads(TORCH_THREADS)
    targs = [_map(lambda x, i=i: torch.tensor(x, requires_grad=i in argnums, device=device), a)
             for i, a in enumerate(args)]
    wrt = [x for i in argnums for x in _leaves(targs[i])]

    def call() -> Any:
        gs = torch.autograd.grad(loss(*targs), wrt)
        _sync(device)
        return gs
    return Prepared(call, lambda gs: [g.detach().cpu().numpy() for g in gs], None, False)


def _jax_prepare(loss: Callable, args: tuple, argnums: tuple[int, ...],
                 device: Any = None) -> Prepared:
    # x64 so that seed002's float64 inputs stay float64, as in every other engine.
    jax.config.update("jax_enable_x64", True)
    jargs = jax.device_put(args, device)
    t0 = time.perf_counter()
    compiled = jax.jit(jax.grad(loss, argnums)).lower(*jargs).compile()
    compile_s = time.perf_counter() - t0

    def call() -> Any:
        return jax.block_until_ready(compiled(*jargs))
    return Prepared(call, lambda gs: [np.asarray(g) for g in _leaves(gs)], compile_s, False)


def _vecgrad_prepare(backend: str) -> Callable[..., Prepared]:
    """vecgrad's gradient on a backend, its inputs in that library's arrays (compile, the
    first call, timed separately)."""
    def prep(loss: Callable, args: tuple, argnums: tuple[int, ...],
             device: Any = None) -> Prepared:
        import vecgrad as vg
        if backend == "numba":  # NumPy arrays in and out
            xs, done = args, lambda gs: gs
        elif backend == "jax":
            jax.config.update("jax_enable_x64", True)
            xs, done = jax.device_put(args, device), jax.block_until_ready
        else:
            torch.set_num_threads(TORCH_THREADS)
            xs = _map(lambda x: torch.from_numpy(np.array(x)).to(device), args)

            def done(gs: Any) -> Any:
                _sync(device)
                return gs
        g = vg.grad(loss, argnums=argnums, backend=backend)
        t0 = time.perf_counter()
        done(g(*xs))
        compile_s = time.perf_counter() - t0
        to_np = np.asarray if backend in ("jax", "numba") else lambda t: t.detach().cpu().numpy()
        return Prepared(lambda: done(g(*xs)), lambda gs: [to_np(x) for x in _leaves(gs)],
                        compile_s, False)
    return prep


def _autograd_prepare(loss: Callable, args: tuple, argnums: tuple[int, ...],
                      device: Any = None) -> Prepared:
    import autograd

    def packed(wrt: tuple) -> Any:
        full = list(args)
        for i, w in zip(argnums, wrt):
            full[i] = w
        return loss(*full)
    g = autograd.grad(packed)
    wrt = tuple(args[i] for i in argnums)
    return Prepared(lambda: g(wrt), lambda gs: [np.asarray(x) for x in _leaves(gs)], None, True)


def _natural() -> dict[str, Callable]:
    from vecgrad.examples import seeds as S
    return {"000": S.seed000_loss, "001": S.seed001_loss, "002": S.mapall}


ENGINES: list[Engine] = [
    Engine("torch eager", "loop", "torch",
           {"000": t_seed000_loop, "001": t_seed001_loop, "002": t_seed002_loop},
           _torch_prepare),
    Engine("torch eager", "vectorized", "torch",
           {"000": t_seed000_vec, "001": t_seed001_vec, "002": t_seed002_vec}, _torch_prepare,
           gpu=True),
    Engine("jax jit(grad)", "vectorized", "jax",
           {"000": j_seed000_vec, "001": j_seed001_vec, "002": j_seed002_vec}, _jax_prepare,
           gpu=True),
    Engine("vecgrad jax backend", "loop", "jax", _natural(), _vecgrad_prepare("jax"), gpu=True),
    Engine("vecgrad torch backend", "loop", "torch", _natural(), _vecgrad_prepare("torch"),
           gpu=True),
    Engine("vecgrad numba backend", "loop", "numba", _natural(), _vecgrad_prepare("numba")),
    Engine("autograd", "loop", "autograd",
           {"000": ag_seed000_loop, "001": ag_seed001_loop, "002": ag_seed002_loop},
           _autograd_prepare),
]


def flat(grads: list[np.ndarray]) -> np.ndarray:
    """All gradient leaves as one float64 vector, for comparing engines."""
    return np.concatenate([np.ravel(np.asarray(g, np.float64)) for g in grads])
