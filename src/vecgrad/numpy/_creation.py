"""Array creation: new buffers (writable inside traced functions) and constants."""
from __future__ import annotations

from typing import Any

import numpy as _np

from ..errors import unsupported
from ..inputs import const_tracer
from ..tracing import Tracer
from . import _ops
from ._base import (
    ArrayLike,
    _dtype,
    _float_default,
    _has_tracer,
    _shape,
    asarray,
    astype,
    queried_dtype,
    zeros,
)
from ._ops import broadcast_to

__all__ = ["arange", "empty", "empty_like", "eye", "full", "full_like", "identity",
           "linspace", "ones", "ones_like", "zeros_like"]


def ones(shape: Any, dtype: Any = None) -> Any:
    """A new buffer of ones (writable inside traced functions)."""
    return const_tracer(_np.ones(shape, _float_default(dtype)), uniform=True)


def empty(shape: Any, dtype: Any = None) -> Any:
    """A new buffer for writing into. Filled with zeros, so unwritten entries are defined."""
    return zeros(shape, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """A new buffer filled with `fill_value` (a constant, or a traced scalar)."""
    if isinstance(fill_value, Tracer):
        return broadcast_to(astype(fill_value, dtype or fill_value.dtype), shape).copy()
    return const_tracer(_np.full(shape, fill_value, dtype), uniform=_np.ndim(fill_value) == 0)


def zeros_like(a: ArrayLike, dtype: Any = None, order: str = "K", subok: bool = True,
               shape: Any = None, **kw: Any) -> Any:
    """Zeros with the shape (or `shape`) and dtype of `a` (order, subok and device=None as
    NumPy's: vecgrad's arrays have no memory layout)."""
    return zeros(_like_shape(a, shape, kw), dtype or queried_dtype(a))


def ones_like(a: ArrayLike, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, **kw: Any) -> Any:
    """Ones with the shape (or `shape`) and dtype of `a`."""
    return ones(_like_shape(a, shape, kw), dtype or queried_dtype(a))


def empty_like(a: ArrayLike, dtype: Any = None, order: str = "K", subok: bool = True,
               shape: Any = None, **kw: Any) -> Any:
    """A zero-filled buffer with the shape (or `shape`) and dtype of `a`."""
    return zeros(_like_shape(a, shape, kw), dtype or queried_dtype(a))


def full_like(a: ArrayLike, fill_value: Any, dtype: Any = None, order: str = "K",
              subok: bool = True, shape: Any = None, **kw: Any) -> Any:
    """A buffer with the shape (or `shape`) and dtype of `a`, filled with `fill_value`."""
    return full(_like_shape(a, shape, kw), fill_value, dtype or queried_dtype(a))


def _like_shape(a: ArrayLike, shape: Any, kw: dict) -> Any:
    if set(kw) - {"device"} or kw.get("device") not in (None, "cpu"):
        raise TypeError(f"unexpected keyword arguments {sorted(kw)} (NumPy's *_like take "
                        "dtype, order, subok, shape and device='cpu')")
    return _shape(a) if shape is None else shape


def arange(*args: Any, **kw: Any) -> _np.ndarray:
    """`numpy.arange` (a constant)."""
    return _np.arange(*args, **kw)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """`numpy.linspace`: a constant, or differentiable in `start` and `stop` when they are
    traced (NumPy's formula: start + arange(num) * (stop - start) / div, the last sample
    exactly `stop`)."""
    if not (_has_tracer(start) or _has_tracer(stop)):
        return _np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    num = _ops._int(num, "num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if dtype is not None and _np.issubdtype(dtype, _np.integer):
        raise unsupported("vecgrad.numpy.linspace with an integer dtype and traced endpoints")
    start, stop = asarray(start), asarray(stop)
    dt = _np.result_type(_dtype(start), _dtype(stop), float(num))
    div = num - 1 if endpoint else num
    delta = astype(stop, dt) - astype(start, dt)
    y = _np.arange(num, dtype=dt).reshape((-1,) + (1,) * len(_ops.shape(delta)))
    step = delta / div if div > 0 else delta * _np.nan
    y = y * (step if div > 0 else delta) + start
    if endpoint and num > 1:
        y[-1, ...] = stop
    y = _ops.moveaxis(y, 0, axis) if axis != 0 else y
    y = astype(y, dtype) if dtype is not None else y
    return (y, step) if retstep else y


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float) -> _np.ndarray:
    """`numpy.eye` (a constant)."""
    return _np.eye(N, M, k, dtype)


def identity(n: int, dtype: Any = float) -> _np.ndarray:
    """`numpy.identity` (a constant)."""
    return _np.identity(n, dtype)
