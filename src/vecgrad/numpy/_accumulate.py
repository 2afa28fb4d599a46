"""Accumulation at traced indices: `np.add.at(buf, idx, v)` and `np.maximum.at` /
`np.minimum.at` at a traced index array among full slices (`index_add`, `index_reduce`),
`x[i] += v` at one traced integer i (`accumulate_at_read`, `wrote_at_read`: a read, an add and
a write back at i), and `np.bincount(dst, weights=w)` (a segment sum).

Each is one scatter along an axis (`scatter_add_along`, `scatter_reduce_along`), which
batching joins over a loop into one segment sum or scatter. Reads and plain writes through a
traced index are `_indexing`.
"""
from __future__ import annotations

from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import TraceError
from ..tracing import Tracer
from . import _ops
from ._base import _dtype, _shape, asarray, astype, zeros
from ._indexing import merge_index_arrays, operand_reshape, traced_index_axis

__all__ = ["bincount"]


# `x[i] += v` at one traced integer i (i = dst[e] in an edge loop) is, in NumPy, a read of
# x[i], an add and a write of the sum at i. For one index that is exactly np.add.at(x, i, v),
# the scatter-add that batching turns into one segment sum over the loop. The read above is
# noted on the builder. When x[i] is a row, NumPy's read is a view and the add writes into x
# at once, as here; when it is an element (a copy), the accumulation waits for the write back
# at the same i, and happens only if x has not changed since the read.

def accumulate_at_read(t: Any, other: Any, negate: bool) -> Any:
    """For `t += v` (or `-=`) where t is x[i] read at one traced int and x has not changed
    since: t + v, with v accumulated into x at i now (a row) or at the write back (an
    element). None when t is not such a read."""
    rec = t._b.scratch.get("_traced_reads", {}).pop(t, None)
    if rec is None:
        return None
    base, key, version = rec
    if base.atom is not version or base._readonly:
        return None
    new = _ops.subtract(t, other) if negate else _ops.add(t, other)
    if _dtype(new) != _dtype(t):
        return None  # (a cast back would happen: the general path checks and casts)
    v = _ops.negative(astype(other, _dtype(t))) if negate else other  # (in t's dtype: a
    # negated uint8 would wrap)
    if t.shape:  # a row, a view of x: it reads x after the accumulation (as NumPy's `t`)
        index_add(base, key, v)
        v, new = None, t
    t._b.scratch.setdefault("_traced_writes", {})[new] = (base, key, base.atom, v)
    return new


def wrote_at_read(x: Any, key: Any, value: Any) -> bool:
    """Whether `x[key] = value` writes back a `t += v` of `accumulate_at_read` (then done), or
    writes `x[key] + v` (or `- v`) just computed from x as it is: then v is accumulated."""
    d = x._b.scratch
    rec = d.get("_traced_writes", {}).pop(value, None)
    if rec is None:
        return _write_of_sum(x, key, value, d.get("_traced_read_atoms"))
    if rec[0] is not x or not _same(rec[1], key) or rec[2] is not x.atom:
        return False
    if rec[3] is not None:
        index_add(x, key, rec[3])
    return True


def _same(k: Any, key: Any) -> bool:
    """The same traced index: one object, or one value (`dst[e]` evaluated twice)."""
    return k is key or isinstance(key, Tracer) and k.atom is key.atom


_EXTREMES = {P.maximum: "maximum", P.minimum: "minimum"}


def _write_of_sum(x: Any, key: Any, value: Any, reads: dict | None) -> bool:
    """`x[i] = x[i] + v` / `x[i] = x[i] - v` at one traced int i: the sum is one of the last
    operations recorded, with the read of x[i] (x unchanged since) as an operand; and
    `x[i] = np.maximum(x[i], v)` (or minimum): a scatter-max of v into x at i."""
    if not reads or not isinstance(value, Tracer) or value.dtype != x.dtype:
        return False
    recent = x._b.eqns[-4:]
    for e in reversed(recent):
        if e.out is not value.atom:
            continue
        if e.prim in _EXTREMES:
            return _write_of_extreme(x, key, value, reads, e)
        if e.prim is P.where:
            return _write_of_builtin_extreme(x, key, reads, e, recent)
        if e.prim not in (P.add, P.sub):
            return False
        for j, a in enumerate(e.inputs):
            rec = reads.get(a)
            if rec is None or rec[0] is not x or not _same(rec[1], key) or rec[2] is not x.atom \
                    or a.aval.shape != value.shape or (e.prim is P.sub and j == 1):
                continue
            v = Tracer(x._b, e.inputs[1 - j])
            index_add(x, key, _ops.negative(astype(v, x.dtype)) if e.prim is P.sub else v)
            return True
        return False
    return False


def _write_of_extreme(x: Any, key: Any, value: Any, reads: dict, e: Any) -> bool:
    """`x[i] = np.maximum(x[i], v)` at traced i: x = scatter_reduce_along(x, v, i), which a
    chain of such writes joins into one (batch/extremes.py)."""
    for j, a in enumerate(e.inputs):
        rec = reads.get(a)
        if rec is None or rec[0] is not x or not _same(rec[1], key) or rec[2] is not x.atom \
                or a.aval.shape != value.shape:
            continue
        v = e.inputs[1 - j]
        if v.aval.dtype != x.dtype:
            return False
        index_reduce(x, key, Tracer(x._b, v), _EXTREMES[e.prim])
        return True
    return False


_BUILTIN = {P.gt: "builtin_max", P.lt: "builtin_min"}  # (a NaN value never wins: sorting.py)


def _write_of_builtin_extreme(x: Any, key: Any, reads: dict, e: Any, recent: Any) -> bool:
    """`x[i] = max(x[i], v)` (Python's builtin, traced as where(v > x[i], v, x[i])) or min
    (`<`) at traced i: x = scatter_reduce_along(x, v, i), as `_write_of_extreme`."""
    c, v, r = e.inputs
    rec = reads.get(r)
    if rec is None or rec[0] is not x or not _same(rec[1], key) or rec[2] is not x.atom \
            or v.aval != r.aval or v.aval.dtype != x.dtype:
        return False
    d = next((q for q in recent if q.out is c), None)
    if d is None or d.prim not in _BUILTIN or d.inputs[0] is not v or d.inputs[1] is not r:
        return False
    op = _BUILTIN[d.prim]
    index_reduce(x, key, Tracer(x._b, v), op)
    return True


def _along_axis(a: Tracer, indices: Any, v: Any) -> tuple:
    """A scatter at one traced integer array among full slices, as one along an axis: the
    buffer with its index arrays merged (and the view back), the axis, the values with the
    index's axes flattened into it, and the flat index shaped to broadcast against them."""
    if indices.__class__ is Tracer and a.ndim:  # (a[i], the common case: the same answer)
        merged, back, axis, idx = a, None, 0, indices
    else:
        merged, indices, back = merge_index_arrays(a, indices)
        axis, idx = traced_index_axis(indices, merged.ndim)
    s = merged.shape
    vals = _ops.broadcast_to(asarray(v), s[:axis] + idx.shape + s[axis + 1:])
    vals = operand_reshape(vals, s[:axis] + (idx.size,) + s[axis + 1:])
    flat = operand_reshape(idx, (1,) * axis + (idx.size,) + (1,) * (len(s) - axis - 1))
    return merged, back, axis, vals, flat


def index_reduce(a: Tracer, indices: Any, v: Any, op: str) -> None:
    """In-place `np.<op>.at(a, indices, v)` (op maximum or minimum, or Python's builtin_max or
    builtin_min) where the index holds one
    traced integer array with full slices."""
    merged, back, axis, vals, flat = _along_axis(a, indices, v)
    new = P.scatter_reduce_along(merged, vals, flat, axis=axis, op=op)
    a._replace((new if back is None else back(new)).atom)


def index_add(a: Tracer, indices: Any, v: Any) -> None:
    """In-place `a[indices] += v`, accumulating at repeated indices (NumPy's add.at); the
    index may hold one traced integer array with full slices."""
    if _has_tracer(indices):
        merged, back, axis, vals, flat = _along_axis(a, indices, v)
        add = P.scatter_add_along(vals, flat, axis=axis, size=merged.shape[axis])
        new = _ops.add(a, add if back is None else back(add))
        # (the buffer's new value, not a write of the whole region: a chain of these is the
        # sum a + s_1 + s_2 + ... that batching folds, not a recurrence through a[...])
        a._replace((new if new.dtype == a.dtype else astype(new, a.dtype)).atom)
        return
    a._write(P.normalize_index(indices, a.shape), v, P.setitem_add)


def bincount(x: Any, weights: Any = None, minlength: Any = 0) -> Any:
    """numpy.bincount: how many times (or the sum of `weights` where) each non-negative int
    occurs in `x`. With positions `x` known while tracing, the length is known and traced
    weights are summed into it as np.add.at would (a segment sum: `np.bincount(dst,
    weights=msg, minlength=n)`), in float64 as NumPy's; traced positions give a
    data-dependent length."""
    if _has_tracer(x) or isinstance(x, Tracer) or isinstance(minlength, Tracer):
        raise TraceError("numpy.bincount of traced positions has a data-dependent length, "
                         "which vecgrad cannot trace (shapes must be known while tracing). "
                         "Sum into a buffer of known length instead: b = vnp.zeros(n); "
                         "np.add.at(b, x, weights)")
    if not isinstance(weights, Tracer):
        return _np.bincount(x, weights, minlength)
    x = _np.asarray(x)
    n = len(_np.bincount(x, None, minlength))  # (NumPy's own checks of x and minlength)
    if _shape(weights) != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    if not x.size:  # (NumPy's counts of no positions, even with weights: intp zeros)
        return _np.bincount(x, None, minlength)
    if weights.dtype.kind == "c":
        raise TypeError(f"Cannot cast array data from {weights.dtype!r} to "
                        "dtype('float64') according to the rule 'safe'")
    out = zeros(n, _np.float64)
    index_add(out, x, astype(weights, _np.float64))
    return out


def _has_tracer(x: Any) -> bool:
    if isinstance(x, Tracer):
        return True
    return isinstance(x, tuple) and any(isinstance(k, Tracer) for k in x)
