"""Scans of `vecgrad.numpy`: cumulative sums and products (np.cumsum, np.cumulative_sum with
include_initial), running extremes and logic (the ufuncs' accumulate), np.diff and np.ediff1d.
"""
from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as _np

from .. import primitives as P
from . import _ops
from ._base import _axis1, _dtype, _nd, _shape, asarray, astype, takes_out
from ._stats import _flat_or, _truth

__all__ = [
    "cumall",
    "cumany",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "ediff1d",
]


def _scan(prim: P.Primitive, a: Any, axis: Any, dtype: Any, **params: Any) -> Any:
    a, ax = _flat_or(a, axis)
    if dtype is not None:
        a = astype(a, dtype)
    return _ops._in(dtype, prim(a, axis=ax, **params))


@takes_out
def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum along `axis` (of the flattened array by default)."""
    return _scan(P.cumsum, a, axis, dtype, reverse=False)


@takes_out
def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product along `axis` (exact gradient, also where entries are zero)."""
    return _scan(P.cumprod, a, axis, dtype)


def cummax(a: Any, axis: int = 0) -> Any:
    """Running maximum (`np.maximum.accumulate`): the gradient goes to the latest element
    attaining it."""
    return _scan(P.cummax, a, axis, None)


def cummin(a: Any, axis: int = 0) -> Any:
    """Running minimum (`np.minimum.accumulate`)."""
    return _scan(P.cummin, a, axis, None)


def cumall(a: Any, axis: int = 0) -> Any:
    """`np.logical_and.accumulate`."""
    return cummin(_truth(a), axis)


def cumany(a: Any, axis: int = 0) -> Any:
    """`np.logical_or.accumulate`."""
    return cummax(_truth(a), axis)


def _cumulative(fn: Callable, x: Any, axis: Any, dtype: Any, include_initial: bool,
                init: float) -> Any:
    x = asarray(x)
    if axis is None:
        if _nd(x) > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` "
                             "argument is required.")
        axis = 0
    res = fn(x, axis, dtype)
    if include_initial:
        ax = _axis1(axis, _nd(x))
        s = list(_shape(res))
        s[ax] = 1
        res = _ops.concatenate([_np.full(tuple(s), init, _dtype(res)), res], ax)
    return res


@takes_out
def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Any:
    """The array-API cumulative sum (optionally starting with 0)."""
    return _cumulative(cumsum, x, axis, dtype, include_initial, 0)


@takes_out
def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    out: Any = None, include_initial: bool = False) -> Any:
    """The array-API cumulative product (optionally starting with 1)."""
    return _cumulative(cumprod, x, axis, dtype, include_initial, 1)


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = _np._NoValue,
         append: Any = _np._NoValue) -> Any:
    """The n-th discrete difference along `axis`."""
    a = asarray(a)
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if _nd(a) == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis1(axis, _nd(a))
    parts = []
    for extra in (prepend, append):
        if extra is _np._NoValue:
            parts.append(None)
            continue
        e = asarray(extra)
        if _nd(e) == 0:
            s = list(_shape(a))
            s[ax] = 1
            e = _ops.broadcast_to(e, tuple(s))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        a = _ops.concatenate([p for p in (parts[0], a, parts[1]) if p is not None], ax)
    op = _ops.not_equal if _dtype(a) == bool else _ops.subtract
    for _ in range(n):
        k = _shape(a)[ax]
        hi = a[(slice(None),) * ax + (slice(1, None),)]
        lo = a[(slice(None),) * ax + (slice(None, builtins.max(k - 1, 0)),)]
        a = op(hi, lo)
    return a


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive elements of the flattened array."""
    d = diff(_ops.ravel(asarray(ary)))
    parts = [_ops.ravel(asarray(v)) for v in (to_begin,) if v is not None] + [d] + \
        [_ops.ravel(asarray(v)) for v in (to_end,) if v is not None]
    return _ops.concatenate([astype(p, _dtype(d)) for p in parts], 0) if len(parts) > 1 else d
