"""Writes at integer index *arrays* whose positions may repeat, with NumPy's exact semantics:

- `x[idx] = v` and `x[idx] += v` (a read, an add, then this write): NumPy assigns in index
  order, so at a repeated position the *last* value wins. Here the last member writing to each
  position is found with one scatter-max of the members' numbers (`k` into position idx[k]),
  and the new x is where(written, v[last writer], x): a gather, no arithmetic, so every value
  (signed zeros and NaNs included) is NumPy's.
- `np.maximum.at`, `np.minimum.at`, `np.multiply.at` (unbuffered: repeated positions
  combine): one `scatter_reduce_along`, which runs NumPy's own ufunc.at.

The index may be traced (an array argument of the traced function) or a NumPy array or list
with repeats; one index array with full slices around it (x[i], x[:, i], x[..., i]), or
several that `merge_index_arrays` merges into one.
"""
from __future__ import annotations

from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import TraceError
from ..ir import Const
from ..tracing import Tracer
from . import _ops
from ._base import _dtype, asarray, astype
from ._indexing import merge_index_arrays, operand_reshape, traced_index_axis

__all__: list[str] = []


def _const_indices(x: Tracer, key: Any) -> Any:
    """The key with each NumPy integer array or list of ints as a constant traced array (so
    that static repeated indices take the traced path), or None if it holds none."""
    def conv(k: Any) -> Any:
        if isinstance(k, list) and k and all(isinstance(i, (int, _np.integer)) and
                                             not isinstance(i, bool) for i in k):
            k = _np.asarray(k)
        if isinstance(k, _np.ndarray) and k.dtype.kind in "iu" and k.ndim:
            return Tracer(x._b, Const(k.astype(_np.int64)), ndarray=True)
        return k
    parts = key if isinstance(key, tuple) else (key,)
    new = tuple(conv(k) for k in parts)
    if not any(isinstance(k, Tracer) for k in new):
        return None
    return new if isinstance(key, tuple) else new[0]


def _along(x: Tracer, key: Any) -> tuple | None:
    """(x', axis, flat index (1, .., E, .., 1), region shape, back) for one
    traced index array along `axis` of x' (x with merged indexed axes), or None when the key
    has no such form."""
    if not any(isinstance(k, Tracer) for k in (key if isinstance(key, tuple) else (key,))):
        key = _const_indices(x, key)
        if key is None:
            return None
    try:
        merged, k, back = merge_index_arrays(x, key)
        axis, idx = traced_index_axis(k, merged.ndim)
    except TraceError:  # (other keys: the caller's error)
        return None
    if idx.dtype.kind not in "iu" or not idx.ndim:
        return None
    s = merged.shape
    flat = operand_reshape(idx, (1,) * axis + (idx.size,) + (1,) * (len(s) - axis - 1))
    return merged, axis, flat, s[:axis] + idx.shape + s[axis + 1:], back


def _values(v: Any, region: tuple, axis: int, s: tuple, e: int, dtype: Any) -> Any:
    v = astype(asarray(v), dtype) if _dtype(asarray(v)) != dtype else asarray(v)
    return operand_reshape(_ops.broadcast_to(v, region), s[:axis] + (e,) + s[axis + 1:])


def write_at_index_array(x: Tracer, key: Any, value: Any) -> bool:
    """`x[key] = value` where key holds an integer index array that may repeat positions
    (traced, or NumPy's): the last write to each position wins, as in NumPy. False when the
    key has no such form."""
    r = _along(x, key)
    if r is None:
        return False
    merged, axis, flat, region, back = r
    s = merged.shape
    e = flat.shape[axis]
    vals = _values(value, region, axis, s, e, merged.dtype)
    members = _np.arange(e).reshape(flat.shape)
    none = _np.full((1,) * axis + (s[axis],) + (1,) * (len(s) - axis - 1), -1, _np.int64)
    last = P.scatter_reduce_along(none, members, flat, axis=axis, op="maximum")
    got = P.take_along(vals, _ops.maximum(last, 0), axis=axis)
    new = _ops.where(last >= 0, got, merged)
    x._replace((new if back is None else back(new)).atom)
    return True


_REDUCERS = ("maximum", "minimum", "multiply")


def index_reduce(a: Tracer, indices: Any, v: Any, op: str) -> bool:
    """`np.<op>.at(a, indices, v)` for op in maximum / minimum / multiply at an index array
    (traced, or NumPy's with repeats); False when the index has no such form."""
    if op not in _REDUCERS:
        return False
    r = _along(a, indices)
    if r is None:
        return False
    merged, axis, flat, region, back = r
    vt = asarray(v)
    if _np.result_type(_dtype(vt), a.dtype) != a.dtype:
        return False
    s = merged.shape
    vals = _values(vt, region, axis, s, flat.shape[axis], a.dtype)
    new = P.scatter_reduce_along(merged, vals, flat, axis=axis, op=op)
    a._replace((new if back is None else back(new)).atom)
    return True
