"""Indexing functions of `vecgrad.numpy`: take, take_along_axis, put, choose, compress,
and reads and writes through a *traced* integer index (`x[idx]` where idx is
an array argument of the traced function, e.g. an edge list).

A traced index along one axis is a gather (`take_along`), whose gradient is a scatter-add; an
accumulation at a traced index (`np.add.at(buf, idx, v)`, see `_accumulate`) is that
scatter-add. Functions whose result shape depends on the data (nonzero, argwhere, unique,
boolean masks that are traced) raise a typed error: shapes must be known while tracing.
"""
from __future__ import annotations

from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import CastingError, ShapeError, TraceError, unsupported, user_src
from ..tracing import TRACED_ROW, Tracer, as_view
from . import _ops
from ._base import _axis1, _dtype, _nd, _shape, asarray, astype, takes_out
from ._masked import select
from ._mixed_keys import _data_dependent, _python_int, _standin, split_basic
from ._shape_ops import fresh

__all__ = [
    "argwhere", "choose", "compress", "copyto", "extract", "flatnonzero", "nonzero", "place",
    "put", "put_along_axis", "putmask", "searchsorted", "take", "take_along_axis", "unique",
    "where",
]


# ------------------------------------------------------------- gathers with traced indices

def _check_int_index(dtype: Any) -> None:
    if dtype == bool:
        raise _data_dependent("indexing with a traced boolean mask")
    if dtype.kind not in "iu":
        raise TraceError(f"a traced (data-dependent) index must be an integer array, not "
                         f"{dtype}: cast it with .astype(int)")

def operand_reshape(a: Any, shape: tuple[int, ...]) -> Any:
    """`a` reshaped (Python ints), where the result is only an operand of the primitive that
    comes next (a gather's or scatter's index or values): whether it is a view, which
    `_ops.reshape` works out from simulated strides, is never seen."""
    return a if _shape(a) == shape else P.reshape(a, shape=shape)


def _take_traced(a: Any, idx: Tracer, axis: int) -> Any:
    """a[(:,) * axis + (idx,)] for a traced integer index of any shape."""
    _check_int_index(idx.dtype)
    s = _shape(a)
    k = idx.size
    flat = operand_reshape(idx, (1,) * axis + (k,) + (1,) * (len(s) - axis - 1))
    out = P.take_along(a, flat, axis=axis)
    return _ops.reshape(out, s[:axis] + idx.shape + s[axis + 1:])


def traced_index_axis(key: Any, ndim: int) -> tuple[int, Tracer]:
    """(axis, idx) for an index made of one traced integer array and full slices (`x[i]`,
    `x[:, i]`, `x[..., i]`); raises TraceError for anything else."""
    key = key if isinstance(key, tuple) else (key,)
    traced = [i for i, k in enumerate(key) if isinstance(k, Tracer)]
    ok = len(traced) == 1 and sum(k is Ellipsis for k in key) <= 1 and all(
        isinstance(k, slice) and k == slice(None) or k is Ellipsis
        for i, k in enumerate(key) if i != traced[0])
    ell = any(k is Ellipsis for k in key)
    if not ok or len(key) - ell > ndim:
        raise TraceError(
            "indexing with a traced (data-dependent) index is supported for one integer array "
            "among slices (x[i], x[:, i], x[i, 1:], x[..., i]) or several among full slices "
            "(x[i, j], x[i, :, j]); for other forms use vnp.take_along_axis, index in two "
            "steps (x[i][:, 1:3, 0]), or index with static Python ints, slices or NumPy arrays")
    t = traced[0]
    if any(k is Ellipsis for k in key[:t]):
        axis = ndim - (len(key) - t)
    else:
        axis = t
    return axis, key[t]


def _is_advanced(k: Any) -> bool:
    """An integer array index (traced or NumPy) or a Python/NumPy integer, which NumPy
    broadcasts with the other array indices of the key."""
    if isinstance(k, Tracer):
        return True
    if isinstance(k, (bool, _np.bool_)):
        return False
    return isinstance(k, (int, _np.integer)) or isinstance(k, _np.ndarray) and \
        k.dtype.kind in "iu"


def merge_index_arrays(x: Any, key: Any) -> tuple[Any, Any, Any]:
    """(x', key', back) with x'[key'] == x[key] and back(x') == x, where a key of several integer array indices, one
    of them traced, and full slices (`f[rows, cols]`, `x[i, :, j]`, `x[i, 0]`) becomes one
    traced index into x's indexed axes merged into one. As in NumPy, adjacent array indices
    put their broadcast shape in their place and separated ones put it first (x' is then x
    with the indexed axes moved first); negative indices count from the end, and an index
    out of bounds raises IndexError (it is mapped past the merged axis). Other keys are
    returned unchanged (back is None)."""
    if not isinstance(key, tuple):
        return x, key, None
    nd = _nd(x)
    ells = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ells) == 1:
        e = ells[0]
        key = key[:e] + (slice(None),) * (nd - len(key) + 1) + key[e + 1:]
    pos = [i for i, k in enumerate(key) if _is_advanced(k)]
    rest_full = all(isinstance(k, slice) and k == slice(None)
                    for i, k in enumerate(key) if i not in pos)
    if len(ells) > 1 or len(pos) < 2 or not rest_full or len(key) > nd or \
            not any(isinstance(key[i], Tracer) for i in pos):
        return x, key, None
    for i in pos:
        _check_int_index(_dtype(key[i]))
    shapes = [_shape(key[i]) for i in pos]
    try:
        _np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes " + " ".join(map(str, shapes))) from None
    shape = _shape(x)
    perm = list(range(nd))
    if pos != list(range(pos[0], pos[0] + len(pos))):  # separated: indexed axes first
        perm = pos + [i for i in range(nd) if i not in pos]
        x = _ops.transpose(x, perm)
        shape = tuple(shape[i] for i in perm)
        key, pos = tuple(key[i] for i in pos), list(range(len(pos)))
    first, dims = pos[0], [shape[i] for i in pos]
    flat: Any = 0
    ok: Any = True
    for i, n in zip(pos, dims):
        k = asarray(key[i])
        _check_int_index(_dtype(k))
        k = _ops.where(k < 0, k + n, k)
        ok = (k >= 0) & (k < n) & ok
        flat = flat * n + k
    size = int(_np.prod(dims))
    flat = _ops.where(ok, flat, size)  # out of bounds: the gather raises IndexError
    x = _ops.reshape(x, shape[:first] + (size,) + shape[first + len(pos):])

    def back(y: Any) -> Any:
        y = _ops.reshape(y, shape)
        return y if perm == sorted(perm) else _ops.transpose(y, list(_np.argsort(perm)))
    return x, (slice(None),) * first + (flat,), back



def traced_getitem(x: Any, key: Any) -> Any:
    """`x[key]` for a key holding traced integer arrays (a gather; see module doc). With one
    traced integer scalar and otherwise basic indices (x[i], x[:, i], x[i, 1:]) NumPy's
    result is a view of x (basic indexing): so is this one, re-read after x changes and
    written back at i."""
    if key.__class__ is Tracer and x.__class__ is Tracer and _scalar_int(key) and x.ndim:
        s = x.shape  # (x[i], the common case: _take_traced along axis 0; the reshape of
        out = P.take_along(x, P.reshape(key, shape=(1,) * len(s)), axis=0)  # its result
        out = P.reshape(out, shape=s[1:])  # is always a view here, overridden below)
        r = _ROW_PROBE  # (traced_row's and _int_region's answers, without their look)
    else:
        sel = select(x, key)
        if sel is not None:  # x[mask]: kept for `x[mask] *= c` and `y[mask] = x[mask]`
            return sel
        out = traced_row(x, key)
        r = _int_region(x, key)
    if r is not None and out.ndim:
        as_view(out, x, TRACED_ROW, {"key": key, "probe": r[2]})
    elif r is not None:  # one element: a NumPy scalar (`t += 0.5` on an int one is t + 0.5)
        out = Tracer(x._b, out.atom)
    if isinstance(key, Tracer) and not key.shape:  # x[i] at one traced int: see below
        d = x._b.scratch
        d.setdefault("_traced_reads", {})[out] = d.setdefault("_traced_read_atoms", {})[
            out.atom] = (x, key, x.atom)
    return out


_ROW_PROBE = (None, None, (0,))  # (_int_region's third item, all that x[i] needs of it)


def _scalar_int(t: Tracer) -> bool:
    """Whether a traced index is one integer (0-d, of an integer dtype)."""
    aval = t._atom.aval
    return not aval.shape and aval.dtype.kind in "iu"


def traced_row(x: Any, key: Any) -> Any:
    """The value of `x[key]` (a traced index): a gather along one axis (several integer
    indices merged into one), or traced integers among basic indices (x[i, 1:], x[i, j, :])
    read from the region they select in, one axis at a time."""
    if isinstance(key, tuple) and any(_python_int(k) for k in key):
        split = split_basic(x, key)  # x[i, 0, idx] reads the row x[i, 0] (a region of x
        if split is not None and any(_python_int(k) for k in split[0]):  # per i), not x
            return traced_row(x[split[0]], split[1])
    try:
        xm, km, _ = merge_index_arrays(x, key)
        axis, idx = traced_index_axis(km, _nd(xm))
    except TraceError:
        sl = _array_among_slices(x, key)
        if sl is not None:  # x[idx, 1:], x[::-1, idx, None]: the slices, then the gather
            t, full, q = sl
            return _take_traced(x[full], t, q)
        r = _int_region(x, key)
        if r is None:
            split = split_basic(x, key)
            if split is None:
                raise
            return traced_row(x[split[0]], split[1])
        ts, full, _ = r
        out = x[full]
        for t, q, n in reversed(ts):  # (the last axis first: the others keep their place)
            out = _take_traced(out, t, q)  # (a gather wraps negative positions itself)
        return out
    if idx.dtype == bool:
        raise _data_dependent("indexing with a traced boolean mask")
    return _take_traced(xm, idx, axis)


def _array_among_slices(x: Any, key: Any) -> tuple | None:
    """For a key of one traced integer array among slices, None and one Ellipsis (one
    advanced index, so NumPy puts its shape in its place): (the index, the key with it ->
    `:`, the axis of x[that key] it gathers along); else None."""
    if not isinstance(key, tuple):
        return None
    traced = [i for i, k in enumerate(key) if isinstance(k, Tracer)]
    if len(traced) != 1 or not key[traced[0]].shape or \
            key[traced[0]].dtype.kind not in "iu" or sum(k is Ellipsis for k in key) > 1 or \
            not all(isinstance(k, slice) or k is None or k is Ellipsis
                    for i, k in enumerate(key) if i != traced[0]):
        return None
    p = traced[0]
    used = sum(k is not None and k is not Ellipsis for k in key)
    if used > _nd(x):
        return None
    q = sum(_nd(x) - used if k is Ellipsis else 1 for k in key[:p])
    return key[p], key[:p] + (slice(None),) + key[p + 1:], q


def _int_region(x: Any, key: Any) -> tuple | None:
    """For a key of traced integer scalars among basic indices (ints, slices, None,
    Ellipsis): ([(t, the axis q where t indexes the region, its length n)] by q, the key
    with each t -> `:` (the region), the key with each t -> 0); else None."""
    if isinstance(key, Tracer):  # (x[i], the common case, quickly)
        ok = not key.shape and key.dtype.kind in "iu" and _nd(x) > 0
        return ([(key, 0, _shape(x)[0])], (slice(None),), (0,)) if ok else None
    if not isinstance(key, tuple):
        return None
    traced = [i for i, k in enumerate(key) if isinstance(k, Tracer)]
    if not traced or any(key[i].shape or key[i].dtype.kind not in "iu" for i in traced) \
            or any(isinstance(k, (list, _np.ndarray, bool, _np.bool_)) for k in key):
        return None
    shape = _shape(x)
    full = tuple(slice(None) if i in traced else k for i, k in enumerate(key))
    probe = tuple(0 if i in traced else k for i, k in enumerate(key))
    used = sum(k is not None and k is not Ellipsis for k in key)
    axes = [sum(len(shape) - used if k is Ellipsis else k is not None for k in key[:p])
            for p in traced]
    if max(axes) >= len(shape):
        return None
    marked = list(shape)  # (each axis a t indexes, made of a unique size in the region)
    for j, ax in enumerate(axes):
        marked[ax] = max(shape) + 7 + j
    try:
        region = _standin(tuple(marked))[full].shape
        _standin(shape)[probe]
    except (IndexError, TypeError, ValueError):
        return None
    ts = sorted([(key[p], region.index(marked[ax]), shape[ax]) for p, ax in zip(traced, axes)],
                key=lambda r: r[1])
    return ts, full, probe


def write_at_traced(x: Any, key: Any, value: Any) -> bool:
    """`x[key] = value` where key holds traced integer *scalars* (`buf[dst[e]] = v`,
    `buf[b, 0] = v`, `buf[:, b] = v`, `buf[i, j] = v`) and otherwise ints, slices, None and
    Ellipsis: NumPy writes the one region they select. Here the region R = x[key with each
    t -> :] is rewritten as where(arange(n) == t (for each t), v, R): exactly that write
    (and its gradient), with NumPy's negative positions and its IndexError out of bounds
    (t is read through a gather). False for other keys (traced arrays: repeated positions
    would make the result depend on the write order)."""
    r = _int_region(x, key)
    if r is None:
        return False
    ts, full, probe = r
    one = _standin(_shape(x))[probe].shape
    rank = len(one) + len(ts)
    hit: Any = True
    for t, q, n in ts:
        pos = _take_traced(_np.arange(n), t, 0)  # t in [0, n): the gather wraps negative
        at = _ops.equal(_np.arange(n), pos)  # positions and raises out of range, as NumPy
        hit = _ops.logical_and(hit, _ops.reshape(at, (n,) + (1,) * (rank - q - 1)))
    v = _ops.expand_dims(_ops.broadcast_to(asarray(value), one), tuple(q for _, q, _ in ts))
    x[full] = astype(_ops.where(hit, v, x[full]), _dtype(x))
    return True


@takes_out
def take(a: Any, indices: Any, axis: int | None = None, out: Any = None,
         mode: str = "raise") -> Any:
    """Elements of `a` at `indices` along `axis` (of the flattened array by default)."""
    a = asarray(a)
    if axis is None:
        a, axis = _ops.ravel(a), 0
    axis = _axis1(axis, _nd(a))
    n = _shape(a)[axis]
    if isinstance(indices, Tracer):
        idx = indices
        if mode == "wrap":
            idx = P.remainder(idx, n)
        elif mode == "clip":
            idx = _ops.clip(idx, 0, n - 1)
        return _take_traced(a, idx, axis)
    idx = _np.asarray(indices)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = _np.clip(idx, 0, n - 1)
    return a[(slice(None),) * axis + (idx,)]


def take_along_axis(arr: Any, indices: Any, axis: int | None = -1) -> Any:
    """Values at `indices` along `axis` (the index has arr's number of dimensions and
    broadcasts against it elsewhere)."""
    arr = asarray(arr)
    if axis is None:
        if _nd(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = _ops.ravel(arr), 0
    axis = _axis1(axis, _nd(arr))
    idx = indices if isinstance(indices, Tracer) else _np.asarray(indices)
    if _dtype(idx).kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if _nd(idx) != _nd(arr):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return P.take_along(arr, idx, axis=axis)


def _along_key(idx: Any, shape: tuple, axis: int) -> tuple:
    """NumPy's fancy index for put_along_axis: `idx` (static or traced) along `axis`, the
    positions along every other axis, all broadcast to one shape."""
    nd = len(shape)
    grids = [_np.arange(shape[d]).reshape([shape[d] if e == d else 1 for e in range(nd)])
             for d in range(nd)]
    full = _np.broadcast_shapes(_shape(idx), *[g.shape for d, g in enumerate(grids)
                                               if d != axis])
    return tuple(_ops.broadcast_to(idx, full) if d == axis and isinstance(idx, Tracer) else
                 _np.broadcast_to(idx if d == axis else grids[d], full) for d in range(nd))


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None) -> None:
    """In-place `arr[... indices ...] = values` along `axis` (static or traced indices: a
    traced index, such as an argmax, writes through the traced-index write)."""
    if axis is None:
        raise unsupported("numpy.put_along_axis with axis=None")
    axis = _axis1(axis, _nd(arr))
    idx = indices if isinstance(indices, Tracer) else _np.asarray(indices)
    if _dtype(idx).kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if _nd(idx) != _nd(arr):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    arr[_along_key(idx, _shape(arr), axis)] = values


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """In-place write of `v` at the flat positions `ind` (v repeats if shorter)."""
    if isinstance(ind, Tracer):
        raise unsupported("numpy.put with traced indices")
    ind = _np.asarray(ind).reshape(-1)
    n = int(_np.prod(_shape(a)))
    if mode == "wrap":
        ind = ind % n
    elif mode == "clip":
        ind = _np.clip(ind, 0, n - 1)
    v = _ops.ravel(asarray(v))
    if _shape(v)[0] != len(ind):
        v = take(v, _np.arange(len(ind)) % _shape(v)[0])
    flat = _ops.reshape(a, (-1,), always_view=True)
    flat[ind] = v


def putmask(a: Any, mask: Any, values: Any) -> None:
    """In-place `a[mask] = values` (values repeat if shorter), for a static or traced mask of
    a's shape when `values` broadcasts to it. Array values cast by NumPy's 'safe' rule
    (Python scalars by any)."""
    if not isinstance(values, (bool, int, float, complex)):
        _check_cast("putmask", values, a, "safe")
    a[...] = _ops.where(mask, _ops.broadcast_to(asarray(values), _shape(a)), a)


def _check_cast(op: str, src: Any, dst: Any, casting: str) -> None:
    """NumPy's refusal to cast `src`'s values into `dst` by `casting` (a Python scalar
    counts as its default dtype: 2.5 is float64, 2 is int64)."""
    frm = _np.dtype(type(src)) if isinstance(src, (bool, int, float, complex)) else _dtype(src)
    if not _np.can_cast(frm, _dtype(dst), casting):
        raise CastingError(op, frm, _dtype(dst), user_src(3), casting)


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """In-place copy of `src` (broadcast) into `dst` where `where` holds, cast by the rule
    `casting` (NumPy's refusal raises CastingError, a TypeError)."""
    _check_cast("copyto", src, dst, casting)
    src = astype(_ops.broadcast_to(asarray(src), _shape(dst)), _dtype(dst))
    dst[...] = src if where is True else _ops.where(where, src, dst)


def place(arr: Any, mask: Any, vals: Any) -> None:
    """In-place `arr[mask] = vals`, `vals` repeated: the k-th selected entry (in flat order)
    takes vals[k % len(vals)]. A traced mask picks each entry's value by a running count of
    the selected ones (no data-dependent shape: one gather and one selection)."""
    vals = _ops.ravel(asarray(vals))
    if _np.size(mask) != int(_np.prod(_shape(arr))):
        raise ValueError("place: mask and data must be the same size")
    if not isinstance(mask, Tracer):
        m = _np.asarray(mask, bool).reshape(_shape(arr))
        k = int(m.sum())
        arr[m] = take(vals, _np.arange(k) % _shape(vals)[0]) if k else vals[:0]
        return
    n = _shape(vals)[0]
    if n == 0:  # (NumPy raises where the mask selects anything, which a trace cannot know)
        raise TraceError("numpy.place with a traced mask and empty `vals`: NumPy raises "
                         "ValueError where the mask selects an entry, which vecgrad cannot "
                         "know while tracing. Pass at least one value")
    m = _ops.reshape(asarray(mask).astype(bool), (-1,))
    k = P.cumsum(m.astype(_np.intp), axis=0) - 1  # (each selected entry's rank)
    v = take(vals, P.remainder(k, n)) if n > 1 else _ops.broadcast_to(vals, _shape(k))
    flat = _ops.reshape(arr, (-1,), always_view=True)
    flat[...] = _ops.where(m, v, flat)


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """The entry of `choices[a]` at each position (a integer, possibly traced)."""
    choices = [asarray(c) for c in choices]
    n = len(choices)
    if mode == "wrap":
        a = P.remainder(a, n)
    elif mode == "clip":
        a = _ops.clip(a, 0, n - 1)
    elif not isinstance(a, Tracer) and (_np.min(a) < 0 or _np.max(a) >= n):
        raise ValueError("invalid entry in choice array")
    out = choices[-1]
    for k in range(n - 2, -1, -1):
        out = _ops.where(_ops.equal(a, k), choices[k], out)
    shape = _np.broadcast_shapes(_shape(a), *[_shape(c) for c in choices])
    return fresh(_ops.broadcast_to(out, shape), *choices)


def compress(condition: Any, a: Any, axis: int | None = None, out: Any = None) -> Any:
    """The slices of `a` along `axis` where the static `condition` holds."""
    if isinstance(condition, Tracer):
        raise _data_dependent("numpy.compress with a traced condition")
    a = asarray(a)
    if axis is None:
        a, axis = _ops.ravel(a), 0
    axis = _axis1(axis, _nd(a))
    c = _np.asarray(condition, bool)
    keep = _np.nonzero(c)[0]
    if len(c) > _shape(a)[axis] and c[_shape(a)[axis]:].any():
        raise IndexError("condition out of bounds")
    return a[(slice(None),) * axis + (keep,)]


def extract(condition: Any, arr: Any) -> Any:
    """The entries of the flattened `arr` where the static `condition` holds."""
    if isinstance(condition, Tracer):
        raise _data_dependent("numpy.extract with a traced condition")
    return take(_ops.ravel(asarray(arr)), _np.nonzero(_np.ravel(condition))[0])


# ------------------------------------------------------------- data-dependent shapes

def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """Select x where `condition` holds, else y; with only a condition, `nonzero`."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _ops.where(condition, x, y)


def nonzero(a: Any) -> tuple:
    """Indices of the nonzero entries (only of untraced arrays: the count is data-dependent)."""
    if isinstance(a, Tracer):
        raise _data_dependent("numpy.nonzero (or where with one argument)")
    return _np.nonzero(a)


def flatnonzero(a: Any) -> Any:
    """Flat indices of the nonzero entries (untraced arrays only)."""
    if isinstance(a, Tracer):
        raise _data_dependent("numpy.flatnonzero")
    return _np.flatnonzero(a)


def argwhere(a: Any) -> Any:
    """Indices of the nonzero entries, one row each (untraced arrays only)."""
    if isinstance(a, Tracer):
        raise _data_dependent("numpy.argwhere")
    return _np.argwhere(a)


def unique(ar: Any, *args: Any, **kwargs: Any) -> Any:
    """The sorted unique entries (untraced arrays only)."""
    if isinstance(ar, Tracer):
        raise _data_dependent("numpy.unique")
    return _np.unique(ar, *args, **kwargs)


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    """Insertion indices of v into the sorted 1-d `a` (no gradient)."""
    if sorter is not None:
        a = take(a, sorter)
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if _nd(a) != 1:
        raise ShapeError("searchsorted: a must be 1-dimensional")
    return P.searchsorted(a, v, side=side)


