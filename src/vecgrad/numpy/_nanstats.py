"""The NaN-ignoring reductions of `vecgrad.numpy` (np.nansum ... np.nancumprod): NaNs
replaced by the reduction's identity, counts and all-NaN slices as NumPy's.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as _np

from .. import primitives as P
from . import _ops
from ._base import _dtype, asarray, astype, takes_out
from ._scans import cumprod, cumsum
from ._stats import _count, _float, _in, _sqrt0, _var_dtype
from ._stats import all as all_

__all__ = [
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
]


def _isnan(a: Any) -> Any:
    return P.isnan(a)


@takes_out
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = _np._NoValue, where: Any = True) -> Any:
    """Sum treating NaNs as zero."""
    return _ops.sum(_nan0(a), axis, dtype, out, keepdims, initial, where)


@takes_out
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = _np._NoValue, where: Any = True) -> Any:
    """Product treating NaNs as one."""
    return _ops.prod(_nan_to(a, 1.0), axis, dtype, out, keepdims, initial, where)


def _nan0(a: Any) -> Any:
    return _nan_to(a, 0.0)


def _nan_to(a: Any, v: float) -> Any:
    a = asarray(a)
    return _ops.where(_isnan(a), v, a) if _dtype(a).kind in "fc" else a


def _nan_count(a: Any, axis: Any, keepdims: bool) -> Any:
    a = asarray(a)
    if _dtype(a).kind not in "fc":
        return _np.asarray(_count(a, axis), _np.float64)
    return _ops.sum(astype(_ops.logical_not(_isnan(a)), _np.intp), axis, keepdims=keepdims)


@takes_out
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, *, where: Any = True) -> Any:
    """Mean of the non-NaN entries (NaN for an all-NaN slice)."""
    a = asarray(a)
    if _dtype(a).kind not in "fc":  # (no NaNs: NumPy's mean, in `dtype` if given)
        return _ops.mean(a, axis, dtype, out, keepdims, where=where)
    s = nansum(a, axis, dtype, out, keepdims, where=where)
    kept = _ops.logical_not(_isnan(a))
    n = _ops.sum(astype(kept if where is True else _ops.logical_and(kept, where), _np.intp),
                 axis, keepdims=keepdims)
    return _ops.divide(s, astype(n, _dtype(s)))


@takes_out
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, mean: Any = None, correction: Any = None) -> Any:
    """Variance of the non-NaN entries."""
    if correction is not None:
        ddof = correction
    dt = _var_dtype(a, dtype, "nanvar")
    a = _float(asarray(a))
    real = dt if dt is not None and dt.kind == "f" else None  # (NumPy's sums' dtype)
    m = nanmean(a, axis, real, keepdims=True) if mean is None else mean
    d = _nan0(_ops.subtract(a, m))
    sq = _ops.multiply(d, d) if _dtype(d).kind != "c" else _ops.square(_ops.abs(d))
    s = _ops.sum(sq, axis, real, keepdims=keepdims)
    n = _ops.subtract(astype(_nan_count(a, axis, keepdims), _dtype(s)), float(ddof))
    return _in(_ops.divide(s, _ops.maximum(n, 0.0)), dt)


@takes_out
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, mean: Any = None, correction: Any = None) -> Any:
    """Standard deviation of the non-NaN entries."""
    return _sqrt0(nanvar(a, axis, dtype, None, ddof, keepdims, mean=mean,
                         correction=correction))


def _nan_extreme(red: Callable, fill: float, a: Any, axis: Any, keepdims: bool) -> Any:
    a = asarray(a)
    if _dtype(a).kind not in "fc":
        return red(a, axis, keepdims=keepdims)
    nan = _isnan(a)
    r = red(_ops.where(nan, fill, a), axis, keepdims=keepdims)
    return _ops.where(all_(nan, axis, keepdims=keepdims), _np.nan, r)  # all-NaN: NaN


@takes_out
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Maximum ignoring NaNs (NaN for an all-NaN slice)."""
    return _nan_extreme(_ops.max, -_np.inf, a, axis, keepdims)


@takes_out
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Minimum ignoring NaNs (NaN for an all-NaN slice)."""
    return _nan_extreme(_ops.min, _np.inf, a, axis, keepdims)


@takes_out
def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum treating NaNs as zero."""
    return cumsum(_nan0(a), axis, dtype)


@takes_out
def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product treating NaNs as one."""
    return cumprod(_nan_to(a, 1.0), axis, dtype)
