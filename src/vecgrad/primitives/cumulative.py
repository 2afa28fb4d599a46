"""Cumulative sums, products, maxima and minima along one static axis (NumPy's cumsum,
cumprod and `np.maximum.accumulate` / `np.minimum.accumulate`).

The VJP of a prefix sum is a suffix sum (`reverse=True`). cumprod's VJP is the exclusive
prefix product times a reverse linear recurrence (`scans.rev_linear`): no division, so it is
exact where the input has zeros, and so are its own derivatives.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import eq, where
from .scans import moveaxis0, rev_linear, shift_down
from .sorting import scatter_add_along
from .structural import full

__all__ = ["cummax", "cummin", "cumprod", "cumsum"]


def _dtype(fn: Callable, dt: np.dtype) -> np.dtype:
    return fn(np.ones(1, dt)).dtype


def _scan(name: str, fn: Callable, vjp: Callable) -> Primitive:
    """A scan along `axis` (params: axis, and for cumsum `reverse`: a suffix scan)."""
    def shape_rule(x: Aval, axis: int, **p: Any) -> Aval:
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} out of range for an array of shape {x.shape}")
        return Aval(x.shape, _dtype(fn, x.dtype))

    def impl(x: np.ndarray, axis: int, reverse: bool = False) -> np.ndarray:
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis=axis), axis)
        return fn(x, axis=axis)

    def batch(n: int, b: tuple, x: Any, axis: int, **p: Any) -> Any:
        return prim(x, axis=axis + 1, **p)
    prim = register(Primitive(name, impl, shape_rule, vjp, batch))
    return prim


def _cumsum_vjp(g: Any, ans: Any, x: Any, axis: int, reverse: bool) -> tuple:
    return (cumsum(g, axis=axis, reverse=not reverse),)


def _cumprod_vjp(g: Any, ans: Any, x: Any, axis: int) -> tuple:
    # d out_j / d x_i = prod_{k < i} x_k * prod_{i < k <= j} x_k: the cotangent is the
    # exclusive product before i times lam_i = g_i + x_{i+1} lam_{i+1} (a reverse linear
    # recurrence). No division, so exact where x has zeros, and so is its own VJP.
    if x.shape[axis] == 0:
        return (g,)
    g0, x0, c0 = (moveaxis0(v, axis) for v in (g, x, ans))
    before = shift_down(c0, full(shape=(), dtype=c0.dtype, value=1.0))
    return (moveaxis0(before * rev_linear(x0, g0), axis, back=True),)


def running_arg(x: Any, ans: Any, axis: int) -> Any:
    """For a running max/min `ans` of x: the index along `axis` of the latest element that
    attains it (where its cotangent goes)."""
    n = x.shape[axis]
    pos = np.arange(n).reshape((n,) + (1,) * (x.ndim - 1 - axis))
    return cummax(where(eq(x, ans), pos, 0), axis=axis)


def _extreme_vjp(g: Any, ans: Any, x: Any, axis: int) -> tuple:
    return (scatter_add_along(g, running_arg(x, ans, axis), axis=axis, size=x.shape[axis]),)


cumsum = _scan("cumsum", np.cumsum, _cumsum_vjp)
cumprod = _scan("cumprod", np.cumprod, _cumprod_vjp)
cummax = _scan("cummax", np.maximum.accumulate, _extreme_vjp)
cummin = _scan("cummin", np.minimum.accumulate, _extreme_vjp)
