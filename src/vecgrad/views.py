"""NumPy's memory layout of traced views, simulated: whether a view is C-contiguous, and a
data-less stand-in with the strides NumPy would give it (to ask NumPy whether a reshape or
ravel can be a view)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import primitives as P

if TYPE_CHECKING:
    from .tracing import Tracer


def c_contiguous(x: Tracer) -> bool:
    """Whether NumPy would make `x` C-contiguous, for the common views quickly: a fresh
    value, or a basic index of one that keeps a single run of memory (leading integers,
    then one slice of step 1, then whole axes: x[i], x[i, j:k], x[2:5]); else from its
    strided stand-in."""
    if x._view is None:
        return x._layout is None
    base, prim, params = x._view
    if prim is not P.getitem or base._view is not None or base._layout is not None:
        return bool(strided(x).flags.c_contiguous)
    kept = False  # an axis of length > 1 has been kept: every later one must be whole
    for k, d in zip((k for k in params["idx"] if k is not None), base.shape):
        n = 1 if k.__class__ is int else len(k)
        if kept and d > 1 and (n != d or k.step != 1):
            return False
        if n > 1:
            if k.step != 1:
                return False
            kept = True
    return True


def strided(x: Tracer) -> np.ndarray:
    """A data-less stand-in with the strides NumPy would give `x` (never read: it aliases a
    one-element buffer), to ask NumPy whether a reshape or ravel of `x` can be a view. A
    fresh value is C-contiguous; a view applies its own indexing, transpose, reshape or
    broadcast to its base's stand-in."""
    if x._view is None and x._layout is not None:
        return x._layout
    if x._view is None:
        shape, item = x.shape, x.dtype.itemsize
        strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) * item
                        for i in range(len(shape)))
        return np.lib.stride_tricks.as_strided(np.empty(1, x.dtype), shape, strides)
    base, prim, params = x._view
    d = strided(base)
    if prim is P.getitem:
        return d[P.to_key(params["idx"])]
    if prim is P.transpose:
        return d.transpose(params["perm"])
    if prim is P.broadcast_to:
        return np.broadcast_to(d, params["shape"])
    out = reshaped_view(d, params["shape"])
    assert out is not None, "a reshape view was recorded that NumPy cannot make"
    return out


def fancy_layout(shape: tuple[int, ...], idx: tuple, dtype: np.dtype) -> np.ndarray | None:
    """The stand-in (see `strided`) of `x[idx]` for an integer-array index that does not
    lead: NumPy lays the indexed axes out outermost, then moves them into place (so
    x[:, [0, 3]] is not C-contiguous). None where the result is C-contiguous after all."""
    d = np.lib.stride_tricks.as_strided(np.empty(1, np.int8), shape, (0,) * len(shape))
    r = d[P.to_key(idx)]
    if r.flags.c_contiguous:
        return None
    item = dtype.itemsize
    return np.lib.stride_tricks.as_strided(np.empty(1, dtype), r.shape,
                                           tuple(st * item for st in r.strides))


def reshaped_view(d: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """`d.reshape(shape)` if NumPy makes it a view, else None (NumPy would copy)."""
    try:
        return np.reshape(d, shape, copy=False)
    except ValueError:
        return None
    except TypeError:  # NumPy < 2.1 has no copy=: setting the shape fails where it would copy
        v = d.view()
        try:
            v.shape = shape
        except AttributeError:
            return None
        return v
