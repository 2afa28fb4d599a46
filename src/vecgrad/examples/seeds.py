"""The three user reports, written the natural way, each with a hand-vectorized NumPy
reference of the same computation and a function that makes inputs of the reported sizes.

- seed000: pairwise cosine similarity of the columns of two 3-D tensors, nested loops over
  views writing into a buffer, then a softmax per batch slice written back in place.
- seed001: a Dense layer applied to each of a list of matrices, dot products of matching
  columns through views, stack, softmax, and a context sum (single-query attention).
- seed002: a 3-layer MLP (1 -> 1000 -> 20 -> 1) mapped over 10,000 scalars one at a time.

`WORKLOADS` bundles each with its sizes ("small" for smoke tests, "seed" as reported, "x10"),
for `vecgrad demo`, the tests and the benchmark (bench/workloads.py).
"""
from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

# ------------------------------------------------------------------------- seed 000


def cosinesim(u: Any, v: Any) -> Any:
    """Cosine similarity of two vectors, as the user wrote it."""
    return np.dot(u, v) / (np.sqrt(np.sum(u ** 2)) * vnp.linalg.norm(v))


def pairwise(a: Any, b: Any, K: Any = cosinesim) -> Any:
    """K of every column pair of a and b per batch, then a softmax over each column (seeds/000)."""
    _W, R, B = a.shape
    N = b.shape[1]
    out = vnp.empty((N, R, B), dtype=a.dtype)
    for k in range(B):
        for j in range(R):
            aj = a[:, j, k]
            for i in range(N):
                out[i, j, k] = K(b[:, i, k], aj)
    for k in range(B):
        out[:, :, k] = vg.nn.softmax(out[:, :, k], axis=0)
    return out


def seed000_loss(a: Any, b: Any, wt: Any) -> Any:
    """A weighted sum of pairwise(a, b): the scalar to differentiate."""
    return vnp.sum(pairwise(a, b) * wt)


def seed000_numpy(a: np.ndarray, b: np.ndarray, wt: np.ndarray) -> np.ndarray:
    """Hand-vectorized forward."""
    an = a / np.sqrt(np.einsum("wjk,wjk->jk", a, a))[None]
    bn = b / np.sqrt(np.einsum("wik,wik->ik", b, b))[None]
    s = np.einsum("wik,wjk->ijk", bn, an)
    e = np.exp(s - s.max(0, keepdims=True))
    return np.sum(e / e.sum(0, keepdims=True) * wt)


def seed000_inputs(N: int = 16, W: int = 64, R: int = 4, B: int = 16, dtype: Any = np.float32,
                   seed: int = 0) -> tuple:
    """(a, b, wt) at the sizes of the user report (or others)."""
    rng = np.random.default_rng(seed)
    return (rng.random((W, R, B)).astype(dtype), rng.random((W, N, B)).astype(dtype),
            rng.standard_normal((N, R, B)).astype(dtype))


# ------------------------------------------------------------------------- seed 001


def dense(W: Any, bias: Any, x: Any) -> Any:
    """A Dense layer."""
    return W @ x + bias[:, None]


def colwise(W: Any, bias: Any, xs: list, H: Any) -> Any:
    """Dense on each matrix, column dots with the first, softmax over time, context (seeds/001)."""
    ys = [dense(W, bias, x) for x in xs]
    y1 = ys[0]
    nb = y1.shape[1]
    zs = [vnp.array([y1[:, i] @ y[:, i] for i in range(nb)]) for y in ys]
    alpha = vg.nn.softmax(vnp.stack(zs), axis=0)          # (T, batch), softmax over time
    return vnp.sum(alpha[None, :, :] * H, axis=1)           # context C[d, b]


def seed001_loss(W: Any, bias: Any, xs: list, H: Any, wt: Any) -> Any:
    """A weighted sum of the context: the scalar to differentiate."""
    return vnp.sum(colwise(W, bias, xs, H) * wt)


def seed001_numpy(W: np.ndarray, bias: np.ndarray, xs: list, H: np.ndarray,
                  wt: np.ndarray) -> np.ndarray:
    """Hand-vectorized forward ("kept as giant arrays")."""
    X = np.stack(xs)                                        # (T, in, batch)
    Y = np.einsum("oi,tib->tob", W, X) + bias[None, :, None]
    z = np.einsum("ob,tob->tb", Y[0], Y)
    e = np.exp(z - z.max(0, keepdims=True))
    alpha = e / e.sum(0, keepdims=True)
    C = np.einsum("tb,dtb->db", alpha, H)
    return np.sum(C * wt)


def seed001_inputs(T: int = 256, batch: int = 128, n_in: int = 64, n_out: int = 32,
                   D: int = 100, dtype: Any = np.float32, seed: int = 0) -> tuple:
    """(W, bias, xs, H, wt) at the sizes of the user report (or others)."""
    rng = np.random.default_rng(seed)
    W = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(dtype)
    bias = (0.1 * rng.standard_normal(n_out)).astype(dtype)
    xs = [(0.3 * rng.random((n_in, batch))).astype(dtype) for _ in range(T)]
    H = rng.random((D, T, batch)).astype(dtype)
    wt = rng.standard_normal((D, batch)).astype(dtype)
    return W, bias, xs, H, wt


# ------------------------------------------------------------------------- seed 002


def mlp(params: list, t: Any) -> Any:
    """The MLP on one scalar, as the user wrote it."""
    h = vnp.array([t])
    for W, b in params:
        h = W @ h + b
    return h


def mapall(params: list, xs: Any) -> Any:
    """The MLP mapped over every scalar, squared and summed (seeds/002)."""
    return vnp.sum(vnp.array([mlp(params, x) for x in xs]) ** 2)


def seed002_numpy(params: list, xs: np.ndarray) -> np.ndarray:
    """Hand-vectorized forward (batched input, one matmul per layer)."""
    h = xs[None, :]
    for W, b in params:
        h = W @ h + b[:, None]
    return np.sum(h ** 2)


def seed002_inputs(n: int = 10_000, sizes: tuple = (1, 1000, 20, 1), dtype: Any = np.float64,
                   seed: int = 0) -> tuple:
    """(params, xs) at the sizes of the user report (or others)."""
    rng = np.random.default_rng(seed)
    params = [(rng.standard_normal((o, i)).astype(dtype), rng.standard_normal(o).astype(dtype))
              for i, o in itertools.pairwise(sizes)]
    return params, np.linspace(-1, 1, n).astype(dtype)


# ------------------------------------------------------------------------- workloads

@dataclass(frozen=True)
class Workload:
    """One seed program: natural-style loss, NumPy reference, inputs, sizes."""

    name: str
    title: str
    loss: Callable[..., Any]
    numpy_forward: Callable[..., Any]
    make_inputs: Callable[..., tuple]
    argnums: tuple[int, ...]
    sizes: dict[str, dict[str, Any]]

    def inputs(self, preset: str) -> tuple:
        """The arguments of `loss` at the size preset "small" or "seed"."""
        return self.make_inputs(**self.sizes[preset])

    def fresh_loss(self) -> Callable[..., Any]:
        """A new function object wrapping `loss`, so its compile cache dies with it."""
        @functools.wraps(self.loss)
        def loss(*args: Any) -> Any:
            return self.loss(*args)
        return loss


WORKLOADS: dict[str, Workload] = {w.name: w for w in [
    Workload("000", "pairwise cosine + softmax", seed000_loss, seed000_numpy,
             seed000_inputs, (0, 1),
             {"small": {"N": 4, "W": 8, "R": 3, "B": 2, "dtype": np.float32},
              "seed": {"N": 16, "W": 64, "R": 4, "B": 16, "dtype": np.float32},
              "x10": {"N": 16, "W": 64, "R": 4, "B": 160, "dtype": np.float32}}),
    Workload("001", "column dots + softmax + context", seed001_loss, seed001_numpy,
             seed001_inputs, (0, 1),
             {"small": {"T": 6, "batch": 5, "n_in": 7, "n_out": 4, "D": 3,
                        "dtype": np.float32},
              "seed": {"T": 256, "batch": 128, "n_in": 64, "n_out": 32, "D": 100,
                       "dtype": np.float32},
              "x10": {"T": 256, "batch": 1280, "n_in": 64, "n_out": 32, "D": 100,
                      "dtype": np.float32}}),
    Workload("002", "MLP mapped over scalars", mapall, seed002_numpy, seed002_inputs,
             (0,),
             {"small": {"n": 40, "sizes": (1, 12, 5, 1), "dtype": np.float64},
              "seed": {"n": 10_000, "sizes": (1, 1000, 20, 1), "dtype": np.float64},
              "x10": {"n": 100_000, "sizes": (1, 1000, 20, 1), "dtype": np.float64}}),
]}


def grad_norm(grads: Any) -> float:
    """The Euclidean norm of all leaves of a pytree of gradients."""
    if isinstance(grads, (list, tuple)):
        return float(np.sqrt(sum(grad_norm(g) ** 2 for g in grads)))
    if isinstance(grads, dict):
        return grad_norm(list(grads.values()))
    return float(np.linalg.norm(np.asarray(grads, np.float64)))
