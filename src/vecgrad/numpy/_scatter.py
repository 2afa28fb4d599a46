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
from ..index import Adv, Sl, index_shape, normalize_index, to_key
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


def _as_basic(arr: _np.ndarray) -> Any:
    """A list of distinct positions as the int or slice that selects the same (a ramp
    `[2 i, 2 i + 1]` is `2 i:2 i + 2`: a basic write, whose region is exact), else itself."""
    if arr.size == 1:
        return int(arr[0])
    step = int(arr[1] - arr[0])
    if not _np.array_equal(_np.diff(arr), _np.full(arr.size - 1, step)):
        return arr
    stop = int(arr[-1]) + step
    return slice(int(arr[0]), None if stop < 0 else stop, step)


def _last_writes_static(x: Tracer, key: Any, value: Any) -> bool:
    """`x[key] = value` for a static key of one 1-d integer array among ints and slices that
    repeats positions: the last member writing each position is known while tracing, so the
    write is one at the distinct positions of the values at their last members (an int where
    one position is left: `buf[[i, i]] += v` is `buf[i] = (buf[[i, i]] + v)[1]`, a basic
    write that batches across iterations). False for other keys."""
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Tracer) for k in parts):
        return False
    try:
        idx = normalize_index(key, x.shape)
    except (IndexError, TraceError):
        return False  # (the general path raises NumPy's error)
    advs = [a for a, k in enumerate(idx) if isinstance(k, Adv)]
    if len(advs) != 1 or idx[advs[0]].arr.ndim != 1 or \
            any(not isinstance(k, (Sl, int)) for k in idx if not isinstance(k, Adv)):
        return False
    a = advs[0]
    arr = idx[a].arr
    if arr.size and (arr.min() < 0 or arr.max() >= x.shape[a]):
        return False
    u, first = _np.unique(arr[::-1], return_index=True)
    last = arr.size - 1 - first
    order = _np.argsort(last, kind="stable")  # (the program's order of writes)
    u, last = u[order], last[order]
    region = index_shape(x.shape, idx)
    p = sum(not isinstance(k, int) for k in idx[:a])  # the array's axis in the region
    v = asarray(value)
    v = _ops.broadcast_to(astype(v, x.dtype) if _dtype(v) != x.dtype else v, region)
    pick, put = _as_basic(last), _as_basic(u)
    x[to_key(idx[:a] + (put,) + idx[a + 1:])] = v[(slice(None),) * p + (pick,)]
    return True


def write_at_index_array(x: Tracer, key: Any, value: Any) -> bool:
    """`x[key] = value` where key holds an integer index array that may repeat positions
    (traced, or NumPy's): the last write to each position wins, as in NumPy. False when the
    key has no such form."""
    if _last_writes_static(x, key, value):
        return True
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
