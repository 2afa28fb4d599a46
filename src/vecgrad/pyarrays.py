"""`np.array` / `np.asarray` of traced values, while a function is traced.

NumPy's array constructors do not dispatch on their argument: `np.array([x, y])` or
`np.asarray(rows)` with traced values asks each tracer for a plain NumPy array, which a
trace does not have (TracedIntoNumpyError). While vecgrad traces a user's function, the
constructors below (`np.array`, `np.asarray`, `np.asanyarray`, `np.ascontiguousarray`,
`np.asfortranarray`) are wrappers: a call *from the user's code* whose argument is a traced
value, or a list / tuple (nested) holding one, is the traced array NumPy would make, with
NumPy's dtype (that of the leaves, Python scalars counting as the default int / float /
complex, as NumPy's array coercion counts them, each leaf cast before the stack, so that
`np.array([t32, 0.1])` keeps 0.1 in float64 as NumPy does), `dtype=` / `copy=` / `ndmin=`
honoured. Any other call (no traced leaf; one from vecgrad or NumPy; other keywords) is
NumPy's own function, unchanged. Outside a trace NumPy is untouched."""
from __future__ import annotations

import builtins
import sys
from typing import Any

import numpy as np

from .errors import _is_internal
from .hooks import NUMPY
from .tracing import Tracer

NAMES = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")
_ORIG = {n: getattr(np, n) for n in NAMES}
POSITIONAL = {"array": ("dtype",), "asarray": ("dtype", "order"), "asanyarray": ("dtype", "order"),
              "ascontiguousarray": ("dtype",), "asfortranarray": ("dtype",)}
_INTERNAL: dict[str, bool] = {}  # a caller's file name -> whether vecgrad's or NumPy's
_SCALAR_DTYPES = {bool: np.dtype(bool), float: np.dtype(float), complex: np.dtype(complex)}


def _leaf_dtypes(obj: Any, out: list) -> bool:
    """Collect the dtypes NumPy's coercion sees in `obj`; whether a traced leaf is among
    them (None: a leaf this wrapper does not handle, e.g. an object NumPy converts itself)."""
    if isinstance(obj, Tracer):
        out.append(obj.dtype)
        return True
    if type(obj) in (list, tuple):
        found = False
        for e in obj:
            f = _leaf_dtypes(e, out)
            if f is None:
                return None
            found = found or f
        return found
    if isinstance(obj, (np.ndarray, np.generic)):
        out.append(obj.dtype)
    elif type(obj) in _SCALAR_DTYPES:
        out.append(_SCALAR_DTYPES[type(obj)])
    elif type(obj) is int:
        out.append(np.asarray(obj).dtype)  # (int64, or NumPy's choice for a large one)
    else:
        return None
    return False


def _build(obj: Any, dtype: np.dtype) -> Any:
    """The array of nested lists `obj` in `dtype`: each leaf cast, then stacked."""
    if isinstance(obj, Tracer):
        return NUMPY.asarray(obj, dtype)
    if type(obj) in (list, tuple):
        if not obj:
            return np.zeros(0, dtype)
        return NUMPY.stack([_build(e, dtype) for e in obj])
    return np.asarray(obj, dtype)


def _traced(obj: Any, dtype: Any, copy: Any, ndmin: int) -> Any:
    dts: list = []
    found = _leaf_dtypes(obj, dts)
    if not found:
        return None
    dt = np.dtype(dtype) if dtype is not None else np.result_type(*dts)
    out = _build(obj, dt)
    if not isinstance(out, Tracer):
        out = NUMPY.asarray(out)
    if out is obj and copy:  # (np.array copies: a write into the copy leaves obj as it was)
        out = NUMPY.astype(out, dt)
    if out.ndim < ndmin:
        out = NUMPY.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def _wrap(name: str) -> Any:
    orig = _ORIG[name]
    copies = name == "array"

    def wrapper(a: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(a, (Tracer, list, tuple)):
            return orig(a, *args, **kwargs)
        fname = sys._getframe(1).f_code.co_filename
        internal = _INTERNAL.get(fname)
        if internal is None:
            internal = _INTERNAL[fname] = _is_internal(fname)
        if internal:  # (vecgrad's and NumPy's own calls keep NumPy's behaviour)
            return orig(a, *args, **kwargs)
        keys = dict(zip(POSITIONAL[name], args))
        if len(keys) < len(args) or builtins.any(k in keys for k in kwargs):
            return orig(a, *args, **kwargs)
        keys.update(kwargs)
        if not set(keys) <= {"dtype", "copy", "order", "ndmin", "subok"}:
            return orig(a, *args, **kwargs)
        copy = keys.get("copy", copies)
        out = _traced(a, keys.get("dtype"), copy, int(keys.get("ndmin", 0)))
        return orig(a, *args, **kwargs) if out is None else out
    wrapper.__name__, wrapper.__qualname__, wrapper.__doc__ = name, name, orig.__doc__
    wrapper.__wrapped__ = orig
    return wrapper


_TRACED = {n: _wrap(n) for n in NAMES}


def patch() -> None:
    """Put the wrappers in place of NumPy's constructors."""
    for n in NAMES:
        setattr(np, n, _TRACED[n])


def unpatch() -> None:
    """Put NumPy's own constructors back."""
    for n in NAMES:
        setattr(np, n, _ORIG[n])


__all__ = ["patch", "unpatch"]
