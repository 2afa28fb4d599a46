"""Stacking, splitting, tiling, padding, flipping and triangle/diagonal helpers of
`vecgrad.numpy`, built from the shape and indexing primitives (so each is batched and
differentiated through them, with no rule of its own).

Where NumPy returns a view (flip, rot90, the at-least-nd family, split), so does vecgrad: a write
through it reaches the base array. Where NumPy copies (tile, repeat, pad, roll, stacking), the
result is a new value.
"""
from __future__ import annotations

import builtins
import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as _np

from ..errors import ShapeError, unsupported
from ..tracing import Tracer
from . import _dtype, _ops, _shape, asarray, astype, zeros

__all__ = [
    "append",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block",
    "broadcast_arrays",
    "broadcast_shapes",
    "c_",
    "column_stack",
    "concatenate",
    "cross",
    "delete",
    "diag",
    "diagflat",
    "diagonal",
    "dsplit",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "insert",
    "kron",
    "meshgrid",
    "pad",
    "r_",
    "repeat",
    "resize",
    "roll",
    "rollaxis",
    "rot90",
    "row_stack",
    "tile",
    "trace",
    "tril",
    "triu",
    "vsplit",
    "vstack",
]

broadcast_shapes = _np.broadcast_shapes


def _nd(a: Any) -> int:
    return len(_shape(a))


def _axis(axis: int, nd: int) -> int:
    if not -nd <= axis < nd:
        raise _np.exceptions.AxisError(axis, nd)
    return axis % nd


def fresh(out: Any, *inputs: Any) -> Any:
    """`out` as a new array, where NumPy returns one but the composition may have given an
    input itself or a view of one (a trivial pad, a one-piece concatenation)."""
    if isinstance(out, Tracer):
        return out.copy() if out._view is not None or any(out is a for a in inputs) else out
    if isinstance(out, _np.ndarray) and (out.base is not None or any(out is a for a in inputs)):
        return out.copy()
    return out


def _at_axis(k: Any, axis: int) -> tuple:
    """An index that applies `k` along `axis` and takes everything elsewhere."""
    return (slice(None),) * axis + (k,)


# ------------------------------------------------------------------------- at least n-d

def _atleast(arys: tuple, fn: Any) -> Any:
    res = tuple(fn(asarray(a)) for a in arys)
    return res[0] if len(res) == 1 else res


def atleast_1d(*arys: Any) -> Any:
    """Views with at least one axis (a 0-d array becomes shape (1,))."""
    return _atleast(arys, lambda a: _ops.reshape(a, (1,), always_view=True) if _nd(a) == 0
                    else a)


def atleast_2d(*arys: Any) -> Any:
    """Views with at least two axes: (n,) becomes (1, n)."""
    return _atleast(arys, lambda a: _ops.reshape(a, (1,) * (2 - _nd(a)) + _shape(a),
                                                 always_view=True) if _nd(a) < 2 else a)


def atleast_3d(*arys: Any) -> Any:
    """Views with at least three axes: (n,) becomes (1, n, 1), (m, n) becomes (m, n, 1)."""
    def up(a: Any) -> Any:
        s = _shape(a)
        new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s))
        return a if new is None else _ops.reshape(a, new, always_view=True)
    return _atleast(arys, up)


# ---------------------------------------------------------------------------- stacking

def concatenate(arrays: Sequence[Any], axis: int | None = 0, out: Any = None,
                dtype: Any = None, casting: str = "same_kind") -> Any:
    """Join arrays along an existing axis (`axis=None` flattens them first)."""
    if out is not None:
        raise unsupported("numpy.concatenate with out=")
    arrays = [asarray(a) for a in arrays]
    if axis is None:
        arrays, axis = [_ops.ravel(a) for a in arrays], 0
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    return fresh(_ops.concatenate(arrays, axis), *arrays)


def vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays as rows (1-d arrays become rows)."""
    return concatenate([atleast_2d(a) for a in _seq(tup, "vstack")], 0, dtype=dtype)


row_stack = vstack


def hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays column-wise (along axis 1, or axis 0 for 1-d arrays)."""
    arrs = [atleast_1d(a) for a in _seq(tup, "hstack")]
    return concatenate(arrs, 0 if arrs and _nd(arrs[0]) == 1 else 1, dtype=dtype)


def dstack(tup: Sequence[Any]) -> Any:
    """Stack arrays along the third axis."""
    return concatenate([atleast_3d(a) for a in _seq(tup, "dstack")], 2)


def column_stack(tup: Sequence[Any]) -> Any:
    """Stack 1-d arrays as columns of a 2-d array (2-d arrays as they are)."""
    def col(a: Any) -> Any:
        a = asarray(a)
        return _ops.reshape(a, (-1, 1)) if _nd(a) < 2 else a
    return concatenate([col(a) for a in _seq(tup, "column_stack")], 1)


def _seq(tup: Any, name: str) -> list:
    """The arrays to stack: a list or tuple, or (as NumPy iterates it) an array's rows."""
    if isinstance(tup, (Tracer, _np.ndarray)):
        return list(tup)
    if not isinstance(tup, (list, tuple)):
        raise TypeError(f"arrays to {name} must be passed as a sequence (list or tuple)")
    return list(tup)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """`arr` with `values` appended (both flattened when `axis` is None)."""
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        return concatenate([_ops.ravel(arr), _ops.ravel(values)], 0)
    return concatenate([arr, values], axis)


def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks (the innermost list joins along the
    last axis)."""
    def depth(x: Any) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0
    d = depth(arrays)
    nd = builtins.max([d] + [_nd(a) for a in _leaves(arrays)])

    def join(x: Any, level: int) -> Any:
        if not isinstance(x, list):
            a = asarray(x)
            return _ops.reshape(a, (1,) * (nd - _nd(a)) + _shape(a)) if _nd(a) < nd else a
        return concatenate([join(v, level + 1) for v in x], axis=nd - d + level)
    return join(arrays, 0)


def _leaves(x: Any) -> list:
    return [v for e in x for v in _leaves(e)] if isinstance(x, list) else [x]


# ----------------------------------------------------------------------------- splitting

def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split into sub-arrays (views); an integer need not divide the axis evenly."""
    n = _shape(ary)[_axis(axis, _nd(ary))]
    if isinstance(indices_or_sections, (int, _np.integer)):
        s = int(indices_or_sections)
        if s <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, s)
        sizes = [each + 1] * extra + [each] * (s - extra)
        return _ops.split(ary, list(itertools.accumulate(sizes))[:-1], axis)
    return _ops.split(ary, list(indices_or_sections), axis)


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split along axis 1 (axis 0 for 1-d arrays)."""
    if _nd(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _ops.split(ary, indices_or_sections, 1 if _nd(ary) > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split along axis 0 (at least 2-d arrays)."""
    if _nd(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _ops.split(ary, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split along axis 2 (at least 3-d arrays)."""
    if _nd(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _ops.split(ary, indices_or_sections, 2)


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

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array (modes constant, edge, reflect, symmetric, wrap, empty; `reflect_type`
    'even'). Values are copies of the input (or constants), so the gradient sums the copies
    back onto the elements they came from."""
    a = asarray(array)
    nd = _nd(a)
    widths = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (nd, 2))
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    if callable(mode) or mode not in _PAD_MODES:
        raise unsupported(f"numpy.pad with mode={mode!r}")
    if kwargs.get("reflect_type", "even") != "even":
        raise unsupported("numpy.pad with reflect_type='odd'")
    consts = _np.broadcast_to(_np.asarray(kwargs.get("constant_values", 0)), (nd, 2)) \
        if mode == "constant" else None
    for ax, (lo, hi) in enumerate(widths.tolist()):
        if lo == hi == 0:
            continue
        n = _shape(a)[ax]
        if mode in ("constant", "empty") or n == 0:
            if mode != "constant" and n == 0 and mode != "empty":
                raise ValueError(f"can't extend empty axis {ax} using modes other than "
                                 "'constant' or 'empty'")
            cv = (0, 0) if consts is None else consts[ax]
            a = _pad_constant(a, ax, lo, hi, cv)
        else:
            src = _np.pad(_np.arange(n), (lo, hi), mode=mode)
            a = gather_runs(a, src, ax)
    return fresh(a, array)


def _pad_constant(a: Any, ax: int, lo: int, hi: int, cv: Any) -> Any:
    parts = []
    for w, v in ((lo, cv[0]), (hi, cv[1])):
        s = list(_shape(a))
        s[ax] = w
        parts.append(_np.full(tuple(s), v, dtype=_dtype(a)) if w else None)
    return _ops.concatenate([p for p in (parts[0], a, parts[1]) if p is not None], ax)


# ---------------------------------------------------------------------- flips and rotations

def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along `axis` (all axes by default): a view."""
    m = asarray(m)
    nd = _nd(m)
    axes = range(nd) if axis is None else [_axis(a, nd) for a in
                                           (axis if isinstance(axis, (tuple, list)) else [axis])]
    key = [slice(None)] * nd
    for a in axes:
        key[a] = slice(None, None, -1)
    return m[tuple(key)] if nd else m


def fliplr(m: Any) -> Any:
    """Reverse the columns (axis 1): a view."""
    if _nd(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    """Reverse the rows (axis 0): a view."""
    if _nd(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Any:
    """Rotate by 90 degrees `k` times in the plane of `axes`: a view."""
    m = asarray(m)
    nd = _nd(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = _axis(axes[0], nd), _axis(axes[1], nd)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k %= 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return _ops.transpose(flip(m, a1), perm) if k == 1 else flip(_ops.transpose(m, perm), a1)


# ------------------------------------------------------------------ triangles and diagonals

def tril(m: Any, k: int = 0) -> Any:
    """Lower triangle of the last two axes (entries above the k-th diagonal zeroed)."""
    m = asarray(m)
    mask = _np.tri(*_shape(m)[-2:], k=k, dtype=bool)
    return _ops.where(mask, m, _np.zeros(1, _dtype(m)))


def triu(m: Any, k: int = 0) -> Any:
    """Upper triangle of the last two axes (entries below the k-th diagonal zeroed)."""
    m = asarray(m)
    mask = _np.tri(*_shape(m)[-2:], k=k - 1, dtype=bool)
    return _ops.where(mask, _np.zeros(1, _dtype(m)), m)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The `offset` diagonal of the plane (axis1, axis2), as a new last axis."""
    a = asarray(a)
    nd = _nd(a)
    if nd < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1, a2 = _axis(axis1, nd), _axis(axis2, nd)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = _ops.moveaxis(a, (a1, a2), (-2, -1))
    n1, n2 = _shape(x)[-2:]
    r0, c0 = builtins.max(0, -offset), builtins.max(0, offset)
    n = builtins.max(0, builtins.min(n1 - r0, n2 - c0))
    x = x[..., r0:r0 + n, c0:c0 + n]
    out = _ops.einsum("...ii->...i", x)
    if isinstance(out, Tracer):  # NumPy's diagonal is a read-only view
        out._readonly = "the read-only view returned by np.diagonal"
    return out


def diag(v: Any, k: int = 0) -> Any:
    """The k-th diagonal of a 2-d array, or a 2-d array with the 1-d `v` on its k-th diagonal."""
    v = asarray(v)
    if _nd(v) == 2:
        return diagonal(v, k)
    if _nd(v) != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = _shape(v)[0]
    m = n + builtins.abs(k)
    if k:
        v = _ops.concatenate([v, _np.zeros(builtins.abs(k), _dtype(v))], 0)
    eye = _np.eye(m, k=k, dtype=_dtype(v))
    return _ops.multiply(_ops.reshape(v, (m, 1)) if k >= 0 else v, eye)


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-d array with the flattened input on its k-th diagonal."""
    return diag(_ops.ravel(asarray(v)), k)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """Sum along the `offset` diagonal of the plane (axis1, axis2)."""
    d = diagonal(a, offset, axis1, axis2)
    return _ops.sum(d if dtype is None else astype(d, dtype), axis=-1)


# --------------------------------------------------------------------------- products

def kron(a: Any, b: Any) -> Any:
    """Kronecker product: blocks of b scaled by the entries of a."""
    a, b = asarray(a), asarray(b)
    na, nb = _nd(a), _nd(b)
    if na == 0 or nb == 0:
        return _ops.multiply(a, b)
    nd = builtins.max(na, nb)
    sa, sb = (1,) * (nd - na) + _shape(a), (1,) * (nd - nb) + _shape(b)
    aa = _ops.reshape(a, tuple(x for d in sa for x in (d, 1)))
    bb = _ops.reshape(b, tuple(x for d in sb for x in (1, d)))
    return _ops.reshape(_ops.multiply(aa, bb), tuple(p * q for p, q in zip(sa, sb)))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross product of 3-vectors (or 2-vectors) along the given axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _ops.moveaxis(asarray(a), _axis(axisa, _nd(a)), -1)
    b = _ops.moveaxis(asarray(b), _axis(axisb, _nd(b)), -1)
    la, lb = _shape(a)[-1], _shape(b)[-1]
    if la not in (2, 3) or lb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if la == 2 and lb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = _ops.subtract(_ops.multiply(a0, b1), _ops.multiply(a1, b0))
    if la == 2 and lb == 2:
        return z
    if la == 3 and lb == 3:
        a2, b2 = a[..., 2], b[..., 2]
        x = _ops.subtract(_ops.multiply(a1, b2), _ops.multiply(a2, b1))
        y = _ops.subtract(_ops.multiply(a2, b0), _ops.multiply(a0, b2))
    elif la == 2:
        b2 = b[..., 2]
        x, y = _ops.multiply(a1, b2), _ops.negative(_ops.multiply(a0, b2))
    else:
        a2 = a[..., 2]
        x, y = _ops.negative(_ops.multiply(a2, b1)), _ops.multiply(a2, b0)
    shape = _np.broadcast_shapes(_shape(x), _shape(y), _shape(z))
    out = _ops.stack([_ops.broadcast_to(c, shape) for c in (x, y, z)], -1)
    return _ops.moveaxis(out, -1, _axis(axisc, len(shape) + 1))


# ---------------------------------------------------------------------- broadcasting grids

def broadcast_arrays(*args: Any, subok: bool = False) -> tuple:
    """The arguments broadcast against each other."""
    arrs = [asarray(a) for a in args]
    shape = _np.broadcast_shapes(*[_shape(a) for a in arrs])
    return tuple(_ops.broadcast_to(a, shape) for a in arrs)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """Coordinate arrays from coordinate vectors ('xy' Cartesian or 'ij' matrix indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    outs = []
    for i, x in enumerate(xi):
        s = [1] * nd
        s[i] = -1
        outs.append(_ops.reshape(asarray(x), tuple(s)))
    if indexing == "xy" and nd > 1:
        outs = [_ops.swapaxes(o, 0, 1) for o in outs]
    if not sparse:
        outs = list(broadcast_arrays(*outs))
    return tuple(fresh(o) for o in outs) if copy else tuple(outs)


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
        items = []
        for k in key:
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                start = 0 if k.start is None else k.start
                a = _np.linspace(start, k.stop, int(builtins.abs(step))) \
                    if isinstance(step, complex) else _np.arange(start, k.stop, step)
            else:
                a = asarray(k)
            items.append(self._ndmin(a, ndmin, trans1d))
        return concatenate(items, axis)

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
