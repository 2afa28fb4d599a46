"""Repeating, tiling, rolling, padding, deleting and inserting (copies, as NumPy's), built
from slices of the input gathered in runs, and NumPy's index tricks r_ and c_."""
from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as _np

from ..errors import ShapeError, unsupported
from ..tracing import Tracer
from . import _ops
from ._base import _dtype, _shape, asarray, astype, zeros
from ._shape_ops import _at_axis, _axis, _nd, concatenate, fresh

__all__ = [
    "c_",
    "delete",
    "insert",
    "r_",
    "repeat",
    "resize",
    "roll",
    "rollaxis",
    "tile",
]


# ------------------------------------------------------------ gathers along one axis by runs

def gather_runs(a: Any, src: _np.ndarray, axis: int) -> Any:
    """a[..., src, ...] along `axis` for a static index vector, as a concatenation of slices
    (views, whose gradients are slice adds) and broadcasts of single elements: the index
    vectors of pad, roll and delete are a few runs of step +1, -1 or 0."""
    src = _np.asarray(src, dtype=_np.int64)
    n = _shape(a)[axis]
    if len(src) == n and _np.array_equal(src, _np.arange(n)):
        return a
    pieces, i = [], 0
    while i < len(src):
        j = i + 1
        step = int(src[j] - src[i]) if j < len(src) else 1
        if step not in (-1, 0, 1):
            step = 1
        while j < len(src) and src[j] - src[j - 1] == step:
            j += 1
        pieces.append(_run(a, int(src[i]), step, j - i, axis))
        i = j
    return pieces[0] if len(pieces) == 1 else _ops.concatenate(pieces, axis)


def _run(a: Any, start: int, step: int, length: int, axis: int) -> Any:
    if step == 0:
        one = a[_at_axis(slice(start, start + 1), axis)]
        s = list(_shape(one))
        s[axis] = length
        return _ops.broadcast_to(one, tuple(s))
    stop = start + step * length
    return a[_at_axis(slice(start, None if stop < 0 else stop, step), axis)]


# ------------------------------------------------------------------------- tile and friends

def repeat(a: Any, repeats: Any, axis: int | None = None) -> Any:
    """Repeat each element `repeats` times along `axis` (the flattened array by default)."""
    a = asarray(a)
    if axis is None:
        a, axis = _ops.ravel(a), 0
    axis = _axis(axis, _nd(a))
    if isinstance(repeats, Tracer):
        raise ShapeError("repeat with traced repeat counts has a data-dependent shape: pass "
                         "the counts as a NumPy array or Python ints")
    reps = _np.asarray(repeats)
    if reps.ndim == 0 or reps.size == 1:
        r, s = int(reps.reshape(())), _shape(a)
        if r < 0:
            raise ValueError("repeats may not contain negative values.")
        wide = _ops.broadcast_to(_ops.reshape(a, s[:axis + 1] + (1,) + s[axis + 1:]),
                                 s[:axis + 1] + (r,) + s[axis + 1:])
        return fresh(_ops.reshape(wide, s[:axis] + (s[axis] * r,) + s[axis + 1:]), a)
    return a[_at_axis(_np.repeat(_np.arange(_shape(a)[axis]), reps), axis)]


def tile(A: Any, reps: Any) -> Any:
    """Repeat the whole array `reps` times (per axis)."""
    A = asarray(A)
    reps = (int(reps),) if _np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    d = builtins.max(len(reps), _nd(A))
    reps = (1,) * (d - len(reps)) + reps
    s = (1,) * (d - _nd(A)) + _shape(A)
    inter = tuple(x for pair in zip((1,) * d, s) for x in pair)
    wide = tuple(x for pair in zip(reps, s) for x in pair)
    out = _ops.broadcast_to(_ops.reshape(A, inter), wide)
    return fresh(_ops.reshape(out, tuple(r * n for r, n in zip(reps, s))), A)


def resize(a: Any, new_shape: Any) -> Any:
    """A new array of `new_shape` filled with repeated copies of `a` (in C order)."""
    new_shape = (int(new_shape),) if _np.ndim(new_shape) == 0 else tuple(new_shape)
    flat = _ops.ravel(asarray(a))
    size, n = math.prod(new_shape), _shape(flat)[0]
    if size == 0 or n == 0:
        return zeros(new_shape, _dtype(a))
    return fresh(_ops.reshape(gather_runs(flat, _np.arange(size) % n, 0), new_shape), a)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Roll elements along `axis` (the flattened array by default); a copy."""
    a = x = asarray(a)
    if axis is None:
        return _ops.reshape(roll(_ops.ravel(a), shift, 0), _shape(a))
    shifts, axes = _np.broadcast_arrays(_np.asarray(shift), _np.asarray(axis))
    for s, ax in zip(shifts.reshape(-1), axes.reshape(-1)):
        ax = _axis(int(ax), _nd(a))
        n = _shape(a)[ax]
        if n:
            a = gather_runs(a, _np.roll(_np.arange(n), int(s)), ax)
    return fresh(a, x)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Roll `axis` backwards until it lies before `start` (a view)."""
    n = _nd(a)
    axis = _axis(axis, n)
    start = start + n if start < 0 else start
    if not 0 <= start <= n:
        raise _np.exceptions.AxisError(f"start={start} out of range for {n} dimensions")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return _ops.transpose(a, axes)


def delete(arr: Any, obj: Any, axis: int | None = None) -> Any:
    """`arr` without the entries `obj` (static) along `axis` (flattened if None)."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = _ops.ravel(arr), 0
    axis = _axis(axis, _nd(arr))
    keep = _np.delete(_np.arange(_shape(arr)[axis]), obj)
    return fresh(gather_runs(arr, keep, axis), arr)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """`arr` with `values` inserted before the static positions `obj` along `axis`."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = _ops.ravel(arr), 0
    axis = _axis(axis, _nd(arr))
    if isinstance(obj, Tracer):
        raise ShapeError("insert at traced positions: pass the positions as Python ints or a "
                         "NumPy array")
    values = asarray(values)
    region = list(_shape(arr))
    if _np.ndim(obj) == 0:  # NumPy: values gain leading axes, then their first axis moves
        values = _ops.reshape(values, (1,) * (_nd(arr) - _nd(values)) + _shape(values))
        values = _ops.moveaxis(values, 0, axis)
        region[axis] = _shape(values)[axis]
    else:
        region[axis] = len(_np.asarray(obj).reshape(-1))
    values = _ops.broadcast_to(astype(values, _dtype(arr)), tuple(region))
    n, k = _shape(arr)[axis], region[axis]
    src = _np.insert(_np.arange(n), obj, n + _np.arange(k))
    return gather_runs(concatenate([arr, values], axis), src, axis)


# ---------------------------------------------------------------------------------- pad

# ------------------------------------------------------------------------ index tricks

class _Concatenator:
    """`vnp.r_` and `vnp.c_`: concatenate arrays, scalars and slices (as ranges)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Any:
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if key and isinstance(key[0], str):
            spec = [int(x) for x in key[0].split(",")] if key[0] not in ("r", "c") else None
            if spec is None:
                raise unsupported(f"numpy index trick directive {key[0]!r}")
            axis, ndmin, trans1d = (spec + [ndmin, trans1d][len(spec) - 1:])[:3]
            key = key[1:]
        items, kinds = [], []  # (NumPy's dtype: of the arrays, and of scalars weakly)
        for k in key:
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                start = 0 if k.start is None else k.start
                a = _np.linspace(start, k.stop, int(builtins.abs(step))) \
                    if isinstance(step, complex) else _np.arange(start, k.stop, step)
            else:
                a = asarray(k)
            weak = isinstance(k, Tracer) and k._weak
            kinds.append(k if type(k) in _np.ScalarType else k._kind if weak else _dtype(a))
            items.append(self._ndmin(a, ndmin, trans1d))
        dt = _np.result_type(*kinds)
        items = [self._ndmin(_np.array(k, dt), ndmin, trans1d) if type(k) in _np.ScalarType
                 else a for k, a in zip(key, items)]  # (a Python int out of dt's range raises)
        return concatenate([astype(a, dt) for a in items], axis)

    @staticmethod
    def _ndmin(a: Any, ndmin: int, trans1d: int) -> Any:
        """NumPy's AxisConcatenator: leading unit axes up to `ndmin`, then the item's own
        axes moved to start at `trans1d`."""
        nd, target = _nd(a), builtins.max(ndmin, 1)
        if nd >= target:
            return a
        out = _ops.reshape(a, (1,) * (target - nd) + _shape(a))
        if ndmin > 1 and trans1d != -1:
            k2, k1 = ndmin - nd, trans1d
            k1 = k1 + k2 + 1 if k1 < 0 else k1
            axes = list(range(ndmin))
            out = _ops.transpose(out, axes[:k1] + axes[k2:] + axes[k1:k2])
        return out


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)
