"""The conversions every module of vecgrad.numpy builds on (asarray, astype, copy, zeros and
the shape and dtype of a traced or plain value); the package re-exports them."""
from __future__ import annotations

import builtins
import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as _np
from numpy import float64

from .. import primitives as P
from ..errors import ShapeError, TracedIntoNumpyError, unsupported, user_src
from ..inputs import const_tracer
from ..tracing import Tracer
from ..views import copy_layout

ArrayLike = Any


def _shape(x: Any) -> tuple[int, ...]:
    if x.__class__ is Tracer:  # (the common case, without the property's call)
        return x._atom.aval.shape
    return x.shape if isinstance(x, Tracer) else _np.shape(x)


def _nd(a: Any) -> int:
    return len(_shape(a))


def _axis1(axis: int, nd: int) -> int:
    if not -nd <= axis < nd:
        raise _np.exceptions.AxisError(axis, nd)
    return axis % nd


def _dtype(x: Any) -> _np.dtype:
    if x.__class__ is Tracer:
        return x._atom.aval.dtype
    return x.dtype if isinstance(x, Tracer) else _np.asarray(x).dtype


def queried_dtype(x: Any) -> _np.dtype:
    """x's dtype as the user's program asks it (np.result_type, np.zeros_like, .itemsize):
    refused where NumPy's depends on the values (an either value whose cases differ:
    np.linalg.eig's w, `max(x32[i], 0.0)`)."""
    if isinstance(x, Tracer) and x._depends:
        cases = x.cases()
        if len(cases) > 1:
            raise x.ambiguous(cases, "the queried")
        return next(iter(cases))
    return _dtype(x)


# ------------------------------------------------------------------ creation and conversion

def asarray(a: ArrayLike, dtype: Any = None) -> Any:
    """Like `numpy.asarray`; lists/tuples that contain traced values are stacked. An array
    is returned as it is; a traced NumPy scalar becomes a new 0-d array."""
    if isinstance(a, Tracer):
        if dtype is not None and _np.dtype(dtype) != a.dtype:
            return astype(a, dtype)
        if a._depends:  # (max(x32[i], 0.0): a float32 array or, where the number wins, a
            return a.as_array()  # float64 one; what uses it weighs both)
        return Tracer(a._b, a.atom, ndarray=True) if a._is_scalar() else a
    if type(a) in (list, tuple) and a and dtype is None and \
            builtins.all(type(x) is Tracer for x in a):
        return stack_new(list(a), 0)
    if isinstance(a, (list, tuple)) and _has_tracer(a):
        out = stack_new([asarray(x) for x in a], 0)
        return out if dtype is None else astype(out, dtype)
    return _np.asarray(a, dtype)


def stack_new(arrays: list, axis: int) -> Any:
    """Arrays of one shape joined along a new axis `axis` (in range): a new array, also of
    one (a view would pass writes into it on to the input)."""
    shapes = {_shape(x) for x in arrays}
    if len(shapes) != 1:
        raise ShapeError(f"all input arrays must have the same shape, got {sorted(shapes)}")
    if len(arrays) > 1:
        return P.stack(*arrays, axis=axis)
    x = arrays[0]
    if not isinstance(x, Tracer):
        return _np.expand_dims(x, axis).copy()
    return P.reshape(x, shape=x.shape[:axis] + (1,) + x.shape[axis:])


def array(a: ArrayLike, dtype: Any = None, copy: bool = True) -> Any:
    """Like `numpy.array`. Traced values are immutable SSA values, so copies are free."""
    out = asarray(a, dtype)
    if not isinstance(out, Tracer):
        return _np.array(out, dtype, copy=copy)
    return Tracer(out._b, out.atom, ndarray=True) if copy or out is not a else out


def _has_tracer(a: Any) -> bool:
    if isinstance(a, Tracer):
        return True
    return isinstance(a, (list, tuple)) and builtins.any(_has_tracer(x) for x in a)


def astype(x: ArrayLike, dtype: Any) -> Any:
    """Cast to `dtype`: always a new array (or scalar), as `ndarray.astype`."""
    dtype = _np.dtype(dtype)
    if _dtype(x) != dtype:
        if _dtype(x).kind == "c" and dtype.kind != "c":
            _warn_complex_cast()
        return P.cast(x, dtype=dtype)
    if isinstance(x, Tracer):
        return x.copy()
    return _np.array(x, copy=True)


def _warn_complex_cast() -> None:
    """NumPy's ComplexWarning for a complex -> real cast, at the user's line (while tracing)."""
    import warnings

    src = user_src(3)
    warnings.warn_explicit("Casting complex values to real discards the imaginary part",
                           _np.exceptions.ComplexWarning, src.file if src else "<vecgrad>",
                           src.line if src else 0)


def copy(a: ArrayLike, order: str = "K", subok: bool = False) -> Any:
    """A copy that can be written into without affecting `a` (numpy.copy's `order` and
    `subok` change no value of a traced array)."""
    if isinstance(a, Tracer):
        if a._depends:  # (np.linalg.eig's: see valuedtype)
            return a._copied()
        out = Tracer(a._b, a.atom, ndarray=True)  # np.copy of a scalar is a 0-d array
        out._layout = copy_layout(a, order)  # (np.copy(x.T) is F-ordered: its ravel('K'))
        return out
    return _np.array(a, copy=True, order=order, subok=subok)


def _float_default(dtype: Any) -> _np.dtype:
    return _np.dtype(float64 if dtype is None else dtype)


def zeros(shape: Any, dtype: Any = None) -> Any:
    """A new buffer of zeros. Inside a traced function it can be written into."""
    return const_tracer(_np.zeros(shape, _float_default(dtype)), uniform=True)


__all__ = ["ArrayLike", "array", "asarray", "astype", "copy", "zeros"]


# ------------------------------------------------------------------ out=

def into_out(name: str, res: Any, out: Any) -> Any:
    """NumPy's `out=` of a function that makes a new array: `res` written into the buffer
    `out` (a traced array of res's shape and dtype), which is returned. An `out` of another
    dtype (NumPy casts into it, by rules that differ per function) is refused."""
    if out is None:
        return res
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if not isinstance(out, Tracer):
        if isinstance(res, Tracer):
            raise TracedIntoNumpyError()
        out[...] = res  # (nothing traced: NumPy's own)
        return out
    if _shape(res) != out.shape:
        raise ValueError(f"numpy.{name}: out= has shape {out.shape}, but the result has "
                         f"shape {_shape(res)}")
    if _dtype(res) != out.dtype:
        raise unsupported(f"numpy.{name} with out= of dtype {out.dtype} for a {_dtype(res)} "
                          f"result (write out[...] = numpy.{name}(...) to cast it)")
    out[...] = res
    return out


def takes_out(fn: Callable) -> Callable:
    """`fn` (which has an `out` parameter and makes a new array) with `out=` as NumPy's:
    the result written into it (see into_out)."""
    params = inspect.signature(fn).parameters
    pos = list(params).index("out") if params["out"].kind == params["out"].POSITIONAL_OR_KEYWORD \
        else None

    @functools.wraps(fn)
    def with_out(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and (pos is None or len(args) <= pos):  # (no out=: the common case)
            return fn(*args)
        out = kwargs.pop("out", None)
        if pos is not None and len(args) > pos:
            out, args = args[pos], args[:pos] + (None,) + args[pos + 1:]
        return into_out(fn.__name__, fn(*args, **kwargs), out)
    return with_out
