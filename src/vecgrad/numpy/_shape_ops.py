"""Stacking, splitting, flipping and triangle/diagonal helpers and products (kron, cross) of
`vecgrad.numpy`, built from the shape and indexing primitives (so each is batched and
differentiated through them, with no rule of its own).

Where NumPy returns a view (flip, rot90, the at-least-nd family, split), so does vecgrad: a write
through it reaches the base array; np.diagonal's read-only view is read-only here too. Where
NumPy copies (stacking, triangles), the result is a new value.
"""
from __future__ import annotations

import builtins
import itertools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as _np

from ..errors import unsupported
from ..tracing import Tracer
from . import _contract, _ops
from ._base import _dtype, _nd, _shape, asarray, astype, takes_out

__all__ = [
    "append",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block",
    "broadcast_arrays",
    "broadcast_shapes",
    "column_stack",
    "concatenate",
    "cross",
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
    "kron",
    "meshgrid",
    "rot90",
    "row_stack",
    "trace",
    "tril",
    "triu",
    "vsplit",
    "vstack",
]

broadcast_shapes = _np.broadcast_shapes


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
    out = _contract.einsum("...ii->...i", x)
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


@takes_out
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
