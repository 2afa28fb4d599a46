"""One-dimensional correlation, the kernel of single-channel sliding windows.

- `correlate(x, w, mode)`: `np.correlate(x, w, mode)` of two real 1-D arrays, for mode
  "valid" (`out[j] = sum_i x[j + i] w[i]`, len(w) <= len(x)) or "full" (the same over x padded
  with len(w) - 1 zeros on both sides).

Batching emits it for a contraction of one-channel windows with a vector (`w @ x[t:t+k]` for
every t, and the gradient of such windows): NumPy's `np.correlate` runs k multiply-adds per
output in one call, where the per-offset form (`sum_a w[a] * x[a:a+T]`) makes k passes over
the output. Its VJP is two correlations again, so the gradient keeps the kernel.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..index import BasicIndex, Sl
from ..ir import Aval
from .core import Primitive, register
from .elementwise import real_only
from .gathers import strided
from .linalg import einsum
from .structural import concatenate, full, getitem

__all__ = ["correlate", "flip1d"]

MODES = ("valid", "full")


def flip1d(x: Any) -> Any:
    """x[::-1] of a traced 1-D array (a view)."""
    return getitem(x, idx=BasicIndex((Sl(x.shape[0] - 1, -1, -1),)))


def _correlate_impl(x: np.ndarray, w: np.ndarray, mode: str) -> np.ndarray:
    return np.correlate(x, w, mode)


def _correlate_shape(x: Aval, w: Aval, mode: str) -> Aval:
    if mode not in MODES:
        raise ShapeError(f"correlate: mode must be one of {MODES} (got {mode!r})")
    if x.ndim != 1 or w.ndim != 1:
        raise ShapeError(f"correlate: 1-D operands expected (got shapes {x.shape} and "
                         f"{w.shape})")
    real_only("the correlate primitive", x, w, why="it is the real kernel that windows of "
              "real arrays become (vecgrad.numpy.correlate itself accepts complex input)")
    dt = np.result_type(x.dtype, w.dtype)
    if dt.kind != "f":
        raise ShapeError(f"correlate: real floating operands expected (got {dt})")
    n, k = x.shape[0], w.shape[0]
    if k == 0 or n == 0 or (mode == "valid" and k > n):
        raise ShapeError(f"correlate: a kernel of length {k} does not fit a signal of length "
                         f"{n} in mode {mode!r}")
    return Aval((n - k + 1 if mode == "valid" else n + k - 1,), dt)


def _correlate_vjp(g: Any, ans: Any, x: Any, w: Any, mode: str) -> tuple:
    # valid: out[j] = sum_i x[j+i] w[i]: dx[m] = sum_j g[j] w[m-j] (g against w reversed,
    # in full), dw[i] = sum_j g[j] x[j+i] (x against g). full: x padded by k-1 on both sides,
    # so dx = g against w reversed (valid) and dw is g against x, read backwards.
    if mode == "valid":
        return correlate(g, flip1d(w), mode="full"), correlate(x, g, mode="valid")
    return correlate(g, flip1d(w), mode="valid"), flip1d(correlate(g, x, mode="valid"))


def _correlate_batch(n: int, batched: tuple[bool, ...], x: Any, w: Any, mode: str) -> Any:
    # n correlations as one contraction of windows (the windows pass turns it back into
    # per-offset products over the n rows, or this kernel when n is one)
    k = w.shape[-1]
    if mode == "full" and k > 1:
        z = full(shape=x.shape[:-1] + (k - 1,), dtype=x.dtype, value=0.0)
        x = concatenate(z, x, z, axis=x.ndim - 1)
    length = x.shape[-1] - k + 1
    if batched[0]:
        win = strided(x, start=(0, 0), dims=((n, (1, 0)), (length, (0, 1)), (k, (0, 1))))
        return einsum(win, w, spec="bji,bi->bj" if batched[1] else "bji,i->bj")
    win = strided(x, start=(0,), dims=((length, (1,)), (k, (1,))))
    return einsum(win, w, spec="ji,bi->bj")


correlate = register(Primitive("correlate", _correlate_impl, _correlate_shape, _correlate_vjp,
                               _correlate_batch))
