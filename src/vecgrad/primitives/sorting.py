"""Sorting, data-dependent orderings, and the gather/scatter pair along one axis with a
*traced* integer index (NumPy's take_along_axis and its transpose, a scatter-add).

sort and partition reorder their input by a permutation that depends on the data; their VJP
recomputes it (argsort / argpartition, which have no gradient) and scatters the cotangent back
through it. Index operands are never differentiated. An index may be negative (it wraps, as in
NumPy); an out-of-range index raises IndexError when the compiled code runs, as NumPy does.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ComplexError, ShapeError
from ..ir import Aval
from .core import REGISTRY, Primitive, register
from .elementwise import cast, div, eq, le, lt, maximum, mul, reduce_sum, where
from .shapes import _lift
from .structural import BasicIndex, Sl, broadcast_to, getitem, reshape, transpose

__all__ = ["argmax", "argmin", "argpartition", "argsort", "nonempty", "partition",
           "scatter_add_along",
           "scatter_reduce_along",
           "scatter_summed", "searchsorted", "sort", "take_along", "winner_shares"]

_INTP = np.dtype(np.intp)


def _check_axis(name: str, x: Aval, axis: int) -> None:
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"{name}: axis {axis} out of range for an array of shape {x.shape}")


def _along(name: str, impl: Callable, vjp: Callable | None, int_out: bool = False
           ) -> Primitive:
    """An op along `axis` whose result has its input's shape (sort, argsort, partition...)."""
    def shape_rule(x: Aval, axis: int, **p: Any) -> Aval:
        _check_axis(name, x, axis)
        return Aval(x.shape, _INTP if int_out else x.dtype)

    def batch(n: int, b: tuple, x: Any, axis: int, **p: Any) -> Any:
        return prim(x, axis=axis + 1, **p)
    prim = register(Primitive(name, impl, shape_rule, vjp, batch))
    return prim


def _argpartition(x: np.ndarray, axis: int, kth: tuple[int, ...]) -> np.ndarray:
    return np.argpartition(x, kth, axis=axis)


def _partition(x: np.ndarray, axis: int, kth: tuple[int, ...]) -> np.ndarray:
    # the values through the same permutation as the VJP uses (np.partition may arrange the
    # elements off the kth positions differently)
    return np.take_along_axis(x, _argpartition(x, axis, kth), axis)


def _permuted_vjp(perm: Callable) -> Callable:
    def vjp(g: Any, ans: Any, x: Any, axis: int, **p: Any) -> tuple:
        return (scatter_add_along(g, perm(x, axis=axis, **p), axis=axis, size=x.shape[axis],
                                  unique=True),)  # a permutation: its inverse
    return vjp


argsort = _along("argsort", lambda x, axis, kind: np.argsort(x, axis, kind), None, True)
argpartition = _along("argpartition", _argpartition, None, True)
sort = _along("sort", lambda x, axis, kind: np.sort(x, axis, kind), _permuted_vjp(
    lambda x, axis, kind: argsort(x, axis=axis, kind=kind)))
partition = _along("partition", _partition, _permuted_vjp(
    lambda x, axis, kth: argpartition(x, axis=axis, kth=kth)))


# --- argmax / argmin over one axis (the axis is removed) ------------------------------------

def _arg_extreme(name: str, fn: Callable) -> Primitive:
    def shape_rule(x: Aval, axis: int) -> Aval:
        _check_axis(name, x, axis)
        if x.shape[axis] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        return Aval(x.shape[:axis] + x.shape[axis + 1:], _INTP)

    def batch(n: int, b: tuple, x: Any, axis: int) -> Any:
        return prim(x, axis=axis + 1)
    prim = register(Primitive(name, lambda x, axis: fn(x, axis), shape_rule, None, batch))
    return prim


argmax = _arg_extreme("argmax", np.argmax)
argmin = _arg_extreme("argmin", np.argmin)


# --- a condition NumPy checks on values (checked when the compiled code runs) ---------------

_ERRORS = {"ValueError": ValueError, "TypeError": TypeError,
           "ZeroDivisionError": ZeroDivisionError}


def _nonempty(m: np.ndarray, axes: tuple[int, ...], error: str, msg: str) -> np.ndarray:
    if not np.all(np.any(m, axis=axes)):
        raise _ERRORS[error](msg)
    return m


def _nonempty_shape(m: Aval, axes: tuple[int, ...], error: str, msg: str) -> Aval:
    if m.dtype != np.bool_ or not all(0 <= a < m.ndim for a in axes) or error not in _ERRORS:
        raise ShapeError(f"nonempty: a boolean mask with axes {axes}, not {m} ({error})")
    return m


# nonempty(m) is m, or NumPy's error `error(msg)` where some instance of m (its positions off
# `axes`; axes=(): every entry) is all False: a value NumPy checks (np.max(x[m]) of an empty
# selection, weights summing to 0) reads its mask through it, so the check runs exactly where
# the value is computed; batched, each instance is checked (NumPy raises at the first)
nonempty = register(Primitive(
    "nonempty", _nonempty, _nonempty_shape, None,
    lambda n, b, m, axes, **p: nonempty(m, axes=tuple(a + 1 for a in axes), **p)))


# --- gather and scatter-add along an axis with a traced index -------------------------------

def _gather_shape(x: Aval, idx: Aval, axis: int) -> Aval:
    if idx.dtype.kind not in "iu":
        raise ShapeError(f"take_along_axis: indices must be integers, not {idx.dtype}")
    if x.ndim != idx.ndim:
        raise ShapeError(f"take_along_axis: the index (shape {idx.shape}) must have as many "
                         f"dimensions as the array (shape {x.shape})")
    _check_axis("take_along_axis", x, axis)
    try:
        s = np.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                idx.shape[:axis] + idx.shape[axis + 1:])
    except ValueError:
        raise ShapeError(f"take_along_axis: shapes {x.shape} and {idx.shape} do not broadcast "
                         f"off axis {axis}") from None
    return Aval(s[:axis] + (idx.shape[axis],) + s[axis:], x.dtype)


def _batch_along(prim_name: str) -> Callable:
    def rule(n: int, batched: tuple[bool, ...], a: Any, idx: Any, axis: int, **p: Any) -> Any:
        rank = max(a.ndim - batched[0], idx.ndim - batched[1])
        a, idx = [_lift(v, rank) if b else reshape(v, shape=(1,) * (rank + 1 - v.ndim) + v.shape)
                  for v, b in zip((a, idx), batched)]
        return REGISTRY[prim_name](a, idx, axis=axis + 1, **p)
    return rule


def _take_along(x: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    if all(d == 1 for i, d in enumerate(idx.shape) if i != axis):
        # one index vector for every fiber (x[:, i]): np.take, several times faster than
        # take_along_axis's broadcast fancy index
        return np.take(x, idx.reshape(-1), axis)
    if all(d == 1 for d in x.shape[:axis]) and all(d == 1 for d in idx.shape[axis + 1:]):
        # an index per leading position into one array (x[s] batched over edges s: x of
        # shape (1, n, f), idx (E, 1, 1)): np.take of whole trailing blocks
        return np.take(x.reshape(x.shape[axis:]), idx.reshape(idx.shape[:axis + 1]), 0)
    return np.take_along_axis(x, idx, axis)


def scatter_summed(op: Callable, g: Any, gshape: tuple, idx: Any, ishape: tuple, axis: int,
                   size: int, dims: list[int]) -> Any:
    """scatter_add_along(g, idx, axis, size) summed over the dimensions `dims` (off the axis,
    kept with length 1), computed as one scatter with those dimensions joined to the axis, so
    the unsummed array is never made. `op(prim, *inputs, **params)` emits an operation (a
    primitive call while tracing a VJP, an equation of a rewrite)."""
    n = len(gshape)
    joined = (*dims, axis)
    full = {d: max(gshape[d], ishape[d]) for d in joined}
    rest = [d for d in range(n) if d not in joined]
    perm = (*dims, axis, *rest)
    moved = perm != tuple(range(n))
    merged = math.prod(full.values())

    def flat(x: Any, shape: tuple) -> Any:
        want = tuple(full.get(d, shape[d]) for d in range(n))
        x = op(broadcast_to, x, shape=want) if want != shape else x
        x = op(transpose, x, perm=perm) if moved else x
        return op(reshape, x, shape=(merged,) + tuple(shape[d] for d in rest))

    out = op(scatter_add_along, flat(g, gshape), flat(idx, ishape), axis=0, size=size)
    kept = np.broadcast_shapes(*[tuple(s[d] for d in rest) for s in (gshape, ishape)])
    out = op(reshape, out, shape=(1,) * len(dims) + (size,) + kept)
    return op(transpose, out, perm=tuple(int(i) for i in np.argsort(perm))) if moved else out


def _call(prim: Primitive, *ins: Any, **params: Any) -> Any:
    return prim(*ins, **params)


def _take_along_vjp(g: Any, ans: Any, x: Any, idx: Any, axis: int) -> tuple:
    """The scatter-add of g into x's shape. Where x has length 1 off the axis and the gather
    broadcast it (a batched gather from one unbatched array: x (1, n, f), idx (B, k, 1)),
    those dimensions join the axis first, so the scatter writes x's shape, not the broadcast
    (B, n, f) that a sum would then reduce (8,000 edge reads of a (1000, 16) table made a
    (8000, 1000, 16) cotangent)."""
    size = x.shape[axis]
    bdims = [d for d in range(x.ndim) if d != axis and x.shape[d] == 1 and g.shape[d] > 1]
    if not bdims:
        return scatter_add_along(g, idx, axis=axis, size=size), None
    return scatter_summed(_call, g, g.shape, idx, idx.shape, axis, size, bdims), None


take_along = register(Primitive(
    "take_along", _take_along, _gather_shape, _take_along_vjp, _batch_along("take_along")))


def _scatter_shape(g: Aval, idx: Aval, axis: int, size: int, unique: bool = False) -> Aval:
    s = _gather_shape(g, idx, axis).shape
    if g.shape[axis] not in (1, idx.shape[axis]):
        raise ShapeError(f"scatter_add_along: values of shape {g.shape} do not match the "
                         f"index of shape {idx.shape} along axis {axis}")
    return Aval(s[:axis] + (size,) + s[axis + 1:], g.dtype)


def _flat_positions(idx: np.ndarray, s: tuple, shape: tuple, axis: int) -> np.ndarray:
    """The C-order positions in `shape` of the entries idx[..., j, ...] (broadcast to s)."""
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    flat = idx.astype(np.intp, copy=False) * strides[axis]
    for d, n in enumerate(s):
        if d != axis and n > 1:
            flat = flat + (np.arange(n) * strides[d]).reshape((n,) + (1,) * (len(s) - d - 1))
    return np.broadcast_to(flat, s).ravel()


def _scatter_add_along(g: np.ndarray, idx: np.ndarray, axis: int, size: int,
                       unique: bool = False) -> np.ndarray:
    """out[..., idx[..., j, ...], ...] += g[..., j, ...] along `axis`, repeated indices
    accumulating: a segment sum on flat positions, by np.add.at on a flat float64 buffer
    (NumPy's unbuffered fast path since 1.25: 1.2-1.7x faster than np.bincount from 2,000 to
    10^6 entries, measured with NumPy 2.4, and the same additions in the same order), else
    np.bincount (float64 sums of float32 values: more accurate than adding in float32; several
    times faster than np.add.at on an N-d buffer, and than sorting with np.add.reduceat).
    `unique`: no index repeats within a fiber (the inverse of sort's permutation), so the
    values are put in place."""
    s = _gather_shape(Aval(g.shape, g.dtype), Aval(idx.shape, idx.dtype), axis).shape
    shape = s[:axis] + (size,) + s[axis + 1:]
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise IndexError(f"index out of bounds for axis {axis} with size {size}")
    if idx.size and idx.min() < 0:
        idx = np.where(idx < 0, idx + size, idx)
    if unique:
        out = np.zeros(shape, g.dtype)
        np.put_along_axis(out, np.broadcast_to(idx, s), np.broadcast_to(g, s), axis)
        return out
    flat, total = _flat_positions(idx, s, shape, axis), math.prod(shape)
    # (a broadcast view as weights makes np.bincount several times slower than an array)
    w = g.ravel() if g.shape == s else np.broadcast_to(g, s).ravel()
    if g.dtype == np.float64 and flat.size >= 1000:
        out = np.zeros(total)
        np.add.at(out, flat, w)
    elif g.dtype.kind == "c":
        out = np.bincount(flat, w.real, total) + 1j * np.bincount(flat, w.imag, total)
    elif g.dtype.kind == "f":
        out = np.bincount(flat, w, total)
    else:
        out = np.zeros(total, g.dtype)
        np.add.at(out, flat, w)
    return out.astype(g.dtype, copy=False).reshape(shape)


scatter_add_along = register(Primitive(
    "scatter_add_along", _scatter_add_along, _scatter_shape,
    lambda ct, ans, g, idx, axis, size, unique=False: (take_along(ct, idx, axis=axis), None),
    _batch_along("scatter_add_along")))


# --- ufunc.at along an axis with a traced index: maximum, minimum, multiply -----------------
# np.maximum.at(a, idx, v) (and minimum, multiply) at a traced index: a copy of a with each
# v[..., j, ...] combined into a[..., idx[..., j, ...], ...] in order, repeated indices
# combining. The impl is NumPy's own ufunc.at on flat positions (the same applications in the
# same order per element). Gradients: ties of a maximum / minimum share the cotangent (as
# reduce_max's); a product's factor gets the product of the others, exact where some are 0.
# builtin_max (builtin_min) is Python's max(c, v) = v if v > c else c in order: a NaN value
# never wins, a NaN already in a stays (np.maximum.at of the values with NaN as -inf); its
# winners are the values equal to the result, so its gradient is the maximum's, and a NaN
# value gets none without a where to mask it.

_AT_OPS = {"maximum": np.maximum, "minimum": np.minimum, "multiply": np.multiply,
           "builtin_max": np.maximum, "builtin_min": np.minimum}
_SKIP_NAN = {"builtin_max": np.fmax, "builtin_min": np.fmin}  # (with -inf, inf: NaN -> it)


def builtin_values(v: np.ndarray, op: str) -> np.ndarray:
    """The values np.maximum.at (minimum) takes for builtin_max (min): NaN as -inf (inf)."""
    if v.dtype.kind != "f":
        return v
    return _SKIP_NAN[op](v, -np.inf if op == "builtin_max" else np.inf)


def _reduce_at_shape(a: Aval, v: Aval, idx: Aval, axis: int, op: str) -> Aval:
    if op not in _AT_OPS:
        raise ShapeError(f"scatter_reduce_along: op must be one of {sorted(_AT_OPS)}, not {op!r}")
    if op != "multiply" and (a.dtype.kind == "c" or v.dtype.kind == "c"):
        raise ComplexError(f"numpy.{op}.at" if op in ("maximum", "minimum") else
                           f"Python's {op[8:]}() of complex values")
    if v.dtype.kind == "c" and a.dtype.kind != "c":
        raise ComplexError("numpy.multiply.at into a real array", why="the imaginary part "
                           "would be dropped")
    s = _gather_shape(a, idx, axis).shape
    if v.shape != s or s[:axis] + s[axis + 1:] != a.shape[:axis] + a.shape[axis + 1:]:
        raise ShapeError(f"scatter_reduce_along: values of shape {v.shape} do not fill the "
                         f"region of an index of shape {idx.shape} into shape {a.shape}")
    return Aval(a.shape, a.dtype)


def _reduce_at(a: np.ndarray, v: np.ndarray, idx: np.ndarray, axis: int, op: str
               ) -> np.ndarray:
    size = a.shape[axis]
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise IndexError(f"index out of bounds for axis {axis} with size {size}")
    if idx.size and idx.min() < 0:
        idx = np.where(idx < 0, idx + size, idx)
    out = np.array(a, copy=True, order="C")
    flat = _flat_positions(idx, v.shape, a.shape, axis)
    v = np.asarray(v, a.dtype)
    _AT_OPS[op].at(out.reshape(-1), flat, (builtin_values(v, op) if op in _SKIP_NAN else v
                                           ).ravel())
    return out


def _reduce_at_vjp(g: Any, ans: Any, a: Any, v: Any, idx: Any, axis: int, op: str) -> tuple:
    size = a.shape[axis]
    if op != "multiply":  # the winners share g: a's entry and each v equal to the result
        both = winner_shares(g, a, v, idx, ans, axis=axis)
        return _part(both, axis, 0, size), _part(both, axis, size, both.shape[axis]), None
    # the product of the others, exact where factors are 0 and its own derivative (as
    # reduce_prod's VJP): p, the product of the nonzero factors, over x, times the product
    # of the zero factors other than x, by their number n0: 1, the other zero's value (zs,
    # their sum, or zs - x for a zero x), or 0 (three zeros or more). zs and zs - x are 0 in value;
    # their derivatives are the second-order terms (the VJP of this VJP), not dead code
    za, zv = eq(a, 0), eq(v, 0)
    a1, v1 = where(za, 1.0, a), where(zv, 1.0, v)
    i64 = np.dtype(np.int64)
    n0 = cast(za, dtype=i64) + scatter_add_along(cast(zv, dtype=i64), idx, axis=axis, size=size)
    zs = where(za, a, 0.0) + scatter_add_along(where(zv, v, 0.0), idx, axis=axis, size=size)
    p = scatter_reduce_along(a1, v1, idx, axis=axis, op="multiply")

    def others(g: Any, p: Any, n0: Any, zs: Any, x: Any, x1: Any, z: Any) -> Any:
        one, two = eq(n0, 1), eq(n0, 2)
        at_zero = where(one, 1.0, where(two, zs, 0.0)) - where(two, x, 0.0)
        at_other = where(eq(n0, 0), 1.0, where(one, zs, 0.0))
        return g * p / x1 * where(z, at_zero, at_other)

    def gathered(y: Any) -> Any:
        return take_along(y, idx, axis=axis)
    ga = others(g, p, n0, zs, a, a1, za)
    gv = others(gathered(g), gathered(p), gathered(n0), gathered(zs), v, v1, zv)
    return ga, gv, None


def _reduce_at_batch(n: int, b: tuple, a: Any, v: Any, idx: Any, axis: int, op: str) -> Any:
    a, v = [x if bx else broadcast_to(reshape(x, shape=(1,) + x.shape), shape=(n,) + x.shape)
            for x, bx in zip((a, v), b)]
    idx = idx if b[2] else reshape(idx, shape=(1,) + idx.shape)
    return scatter_reduce_along(a, v, idx, axis=axis + 1, op=op)


scatter_reduce_along = register(Primitive(
    "scatter_reduce_along", _reduce_at, _reduce_at_shape, _reduce_at_vjp, _reduce_at_batch))


# --- the cotangents of a scatter-max / -min: its winners share ------------------------------
# winner_shares(g, a, v, idx, ans) is scatter_reduce_along's VJP for maximum and minimum, its
# two cotangents packed along `axis` (a's, then v's: the IR's equations have one result;
# spectral.py packs alike): each position's winners (a's entry and every value equal to the
# result ans there) share its cotangent g, as reduce_max's ties do; a NaN result gives none.
# As one operation, the 1-d case (every keyed running maximum: `best[k] = max(best[k], v)`)
# touches the values once (a gather, a comparison, the winners' positions) and then only
# the winners: 8 NumPy calls over every value before (2 gathers, 2 casts, a scatter-add).

def _shares_shape(g: Aval, a: Aval, v: Aval, idx: Aval, ans: Aval, axis: int) -> Aval:
    s = _gather_shape(a, idx, axis).shape
    if not g.shape == a.shape == ans.shape or v.shape != s or \
            s[:axis] + s[axis + 1:] != a.shape[:axis] + a.shape[axis + 1:]:
        raise ShapeError(f"winner_shares: cotangent {g.shape}, base {a.shape}, values "
                         f"{v.shape}, index {idx.shape} and result {ans.shape} do not match")
    return Aval(a.shape[:axis] + (a.shape[axis] + v.shape[axis],) + a.shape[axis + 1:], g.dtype)


def _winner_shares(g: np.ndarray, a: np.ndarray, v: np.ndarray, idx: np.ndarray,
                   ans: np.ndarray, axis: int) -> np.ndarray:
    size = a.shape[axis]
    if axis == 0:  # (packed along the first axis: a's and v's cotangents one after the other)
        return _winner_shares_rows(g, a, v, idx, ans).reshape((size + v.shape[0],) +
                                                              a.shape[1:])
    idx = np.where(idx < 0, idx + size, idx)
    hit_a = a == ans
    hit_v = v == _take_along(ans, idx, axis)
    cnt = _scatter_add_along(hit_v.astype(g.dtype), idx, axis, size) + hit_a
    share = g / np.maximum(cnt, 1).astype(g.dtype, copy=False)
    return np.concatenate([share * hit_a, _take_along(share, idx, axis) * hit_v],
                          axis).astype(g.dtype, copy=False)


def _winner_shares_rows(g: np.ndarray, a: np.ndarray, v: np.ndarray, idx: np.ndarray,
                        ans: np.ndarray) -> np.ndarray:
    """Along the first axis, flat: the values touched once (a gather of rows, a comparison,
    the winners' positions), then only the winners, few beside the values (one per entry of
    the result and tie). A row index (n, 1, ..., 1) gathers whole rows; another, entries."""
    size, inner = a.shape[0], a.size // max(a.shape[0], 1)
    rows = all(d == 1 for d in idx.shape[1:])
    pos = idx.reshape(-1).astype(np.intp, copy=False) if rows else _flat_positions(
        np.where(idx < 0, idx + size, idx), v.shape, a.shape, 0)
    flat = ans.reshape(-1)
    got = np.take(ans, pos, 0) if rows else flat[pos]  # (wraps negative rows, as NumPy)
    hit = (v.reshape(-1) == got.reshape(-1)).nonzero()[0]  # (flatnonzero: 2x its cost)
    at = pos[hit] if inner == 1 or not rows else pos[hit // inner] * inner + hit % inner
    if rows and at.size and at.min() < 0:
        at = np.where(at < 0, at + a.size, at)
    hit_a = (a == ans).reshape(-1)
    cnt = np.bincount(at, minlength=a.size) + hit_a
    share = g.reshape(-1) / np.maximum(cnt, 1).astype(g.dtype, copy=False)
    out = np.zeros(a.size + v.size, g.dtype)
    np.multiply(share, hit_a, out=out[:a.size])
    out[a.size + hit] = share[at]
    return out


def _part(x: Any, axis: int, start: int, stop: int) -> Any:
    whole = tuple(Sl(0, d, 1) for d in x.shape)
    return getitem(x, idx=BasicIndex(whole[:axis] + (Sl(start, stop, 1),) + whole[axis + 1:]))


def _shares_vjp(ct: Any, ans_: Any, g: Any, a: Any, v: Any, idx: Any, ans: Any, axis: int
                ) -> tuple:
    """Linear in g: the transpose, each winner's cotangent summed into its position and
    divided by the position's count (the hits are constant almost everywhere)."""
    size = a.shape[axis]
    hit_a = cast(eq(a, ans), dtype=ct.dtype)
    hit_v = cast(eq(v, take_along(ans, idx, axis=axis)), dtype=ct.dtype)
    cnt = hit_a + scatter_add_along(hit_v, idx, axis=axis, size=size)
    back = mul(_part(ct, axis, 0, size), hit_a) + scatter_add_along(
        mul(_part(ct, axis, size, ct.shape[axis]), hit_v), idx, axis=axis, size=size)
    return div(back, maximum(cnt, 1.0)), None, None, None, None


def _shares_batch(n: int, b: tuple, g: Any, a: Any, v: Any, idx: Any, ans: Any, axis: int
                  ) -> Any:
    g, a, v, ans = [x if bx else broadcast_to(reshape(x, shape=(1,) + x.shape),
                                              shape=(n,) + x.shape)
                    for x, bx in zip((g, a, v, ans), (b[0], b[1], b[2], b[4]))]
    idx = idx if b[3] else reshape(idx, shape=(1,) + idx.shape)
    return winner_shares(g, a, v, idx, ans, axis=axis + 1)


winner_shares = register(Primitive(
    "winner_shares", _winner_shares, _shares_shape, _shares_vjp, _shares_batch))


# --- insertion positions into a sorted vector -----------------------------------------------

def _searchsorted_shape(a: Aval, v: Aval, side: str) -> Aval:
    if a.ndim != 1:
        raise ShapeError(f"searchsorted: the sorted array must be 1-d, not of shape {a.shape}")
    return Aval(v.shape, _INTP)


def _searchsorted_batch(n: int, batched: tuple[bool, ...], a: Any, v: Any, side: str) -> Any:
    """With a sorted row per instance, the position is the number of entries below v (or at
    most v for side='right'): one comparison per pair, exact for non-NaN values."""
    if not batched[0]:
        return searchsorted(a, v, side=side)
    vs = v.shape[1:] if batched[1] else v.shape
    vb = v if batched[1] else reshape(v, shape=(1,) + vs)
    rows = reshape(a, shape=(n,) + (1,) * len(vs) + (a.shape[1],))
    below = (lt if side == "left" else le)(rows, reshape(vb, shape=vb.shape + (1,)))
    return reduce_sum(cast(below, dtype=_INTP), axes=(len(vs) + 1,))


searchsorted = register(Primitive(
    "searchsorted", lambda a, v, side: np.searchsorted(a, v, side), _searchsorted_shape, None,
    _searchsorted_batch))
