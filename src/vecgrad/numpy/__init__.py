"""`vecgrad.numpy`: the NumPy API for traced code (`import vecgrad.numpy as vnp`).

Every function accepts tracers, NumPy arrays and Python scalars. Outside a trace it computes
eagerly with NumPy. Plain `np.*` calls on traced arrays dispatch here through
`__array_ufunc__` and `__array_function__`.
"""
from __future__ import annotations

import sys as _sys
from typing import Any

import numpy as _np
from numpy import e, euler_gamma, float32, float64, inf, int32, int64, nan, newaxis, pi  # noqa: F401

from ..errors import unsupported
from ..tracing import Tracer, const_tracer
from ._base import (  # noqa: F401  (the package's own names)
    ArrayLike,
    _dtype,
    _float_default,
    _has_tracer,
    _shape,
    _warn_complex_cast,
    array,
    asarray,
    astype,
    copy,
    zeros,
)


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


def zeros_like(a: ArrayLike, dtype: Any = None) -> Any:
    """Zeros with the shape and dtype of `a`."""
    return zeros(_shape(a), dtype or _dtype(a))


def ones_like(a: ArrayLike, dtype: Any = None) -> Any:
    """Ones with the shape and dtype of `a`."""
    return ones(_shape(a), dtype or _dtype(a))


def empty_like(a: ArrayLike, dtype: Any = None) -> Any:
    """A zero-filled buffer with the shape and dtype of `a`."""
    return zeros(_shape(a), dtype or _dtype(a))


def full_like(a: ArrayLike, fill_value: Any, dtype: Any = None) -> Any:
    """A buffer with the shape and dtype of `a`, filled with `fill_value`."""
    return full(_shape(a), fill_value, dtype or _dtype(a))


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


# The order matters: later modules extend names of earlier ones (e.g. the elementwise
# functions of _ops become ufuncs with methods in _ufuncs).
# isort: off
from . import fft, lib, linalg  # noqa: F401
from ._ops import *
from ._contract import *
from ._ufuncs import *
from ._shape_ops import *
from ._tiling import *
from ._stats import *
from ._order import *
from ._indexing import *
from ._polynomial import *
from ._meta import *
from ._misc import *
from . import _ndarray
from ._indexing import accumulate_at_read as _accumulate_at_read
from ._indexing import traced_getitem as _traced_getitem
from ._indexing import traced_row as _traced_row
from ._indexing import write_at_traced as _write_at_traced
from ._scatter import write_at_index_array as _write_at_index_array
from ._indexing import wrote_at_read as _wrote_at_read
from ._ops import dispatch_function
from ._ufuncs import dispatch_ufunc
from ..hooks import NUMPY as _NUMPY
# isort: on

# Tracing sits below this package: it calls these functions through hooks.NUMPY (as does
# odeint's VJP), and the ndarray methods of traced arrays are set on Tracer by
# _ndarray.install.
_NUMPY.fill(accumulate_at_read=_accumulate_at_read, asarray=asarray, astype=astype,
            concatenate=concatenate, dispatch_function=dispatch_function,
            dispatch_ufunc=dispatch_ufunc, ravel=ravel, reshape=reshape, stack=stack, sum=sum,
            traced_getitem=_traced_getitem, traced_row=_traced_row, where=where,
            write_at_index_array=_write_at_index_array, write_at_traced=_write_at_traced,
            wrote_at_read=_wrote_at_read, zeros=zeros)
_ndarray.install(_sys.modules[__name__])

__all__ = [n for n in dir() if not n.startswith("_") and n not in (  # (the API, not its helpers)
    "builtins", "annotations", "Any", "P", "Tracer", "const_tracer", "ArrayLike",
    "dispatch_function", "dispatch_ufunc", "unsupported")]

# `from __future__ import annotations` binds this name; it is not part of the API.
del annotations
