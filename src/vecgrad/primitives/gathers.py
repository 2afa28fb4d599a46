"""Gathers and their adjoints, the primitives batching emits for positions that move with a loop.

- `strided(x, start, dims)`: an affine view. Output axis k walks `dims[k] = (size, steps)`,
  `steps` holding one step per axis of x, from the element `start`: sliding windows
  (`x[t:t+k]` for every t), 2-D patches, diagonals, reversed and broadcast axes. A view, no copy.
- `strided_add(base, v, start, dims)`: base with v added at those positions, where they repeat
  too (overlapping windows); the adjoint of `strided`. It runs as one strided add per window
  offset at most, never an element-wise scatter.
- `take(x, ids, axis)`: rows of x at static integer positions (reads by Python-int lists).
  Its gradient is `segment_sum`, or the inverse permutation when ids is a permutation.
- `segment_sum(v, ids, axis, num)`: rows of v summed by static segment id into `num` rows;
  the adjoint of `take`. How NumPy runs it (`np.bincount`, sorted `np.add.reduceat`, a one-hot
  product, or a plain scatter when the ids are distinct) is chosen by measurement when the
  code is compiled (backends/numpy/gathers.py); the impl is the reference semantics.
- `segment_max(v, ids, axis, num)`, `segment_min`: each segment's maximum (minimum), as np.max
  over its rows (packed ragged slices reduced by `np.max`, batch/packed.py).
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..errors import ComplexError, ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import cast, div, eq, maximum, mul
from .shapes import _lift
from .structural import Adv, broadcast_to, full

__all__ = ["segment_max", "segment_min", "segment_sum", "strided", "strided_add", "take"]


# ------------------------------------------------------------------------------- strided

def _check_dims(shape: tuple[int, ...], start: tuple[int, ...], dims: tuple) -> None:
    if len(start) != len(shape):
        raise ShapeError(f"strided: start {start} does not index an array of shape {shape}")
    for a, (s, d) in enumerate(zip(start, shape)):
        lo = s + sum(min(0, (n - 1) * st[a]) for n, st in dims if n > 0)
        hi = s + sum(max(0, (n - 1) * st[a]) for n, st in dims if n > 0)
        if any(n == 0 for n, _ in dims):
            continue
        if lo < 0 or hi >= d:
            raise ShapeError(f"strided: positions {lo}..{hi} out of bounds for axis {a} of "
                             f"size {d}")


def _strided_shape(x: Aval, start: tuple[int, ...], dims: tuple) -> Aval:
    _check_dims(x.shape, start, dims)
    return Aval(tuple(n for n, _ in dims), x.dtype)


def _view(x: np.ndarray, start: tuple[int, ...], dims: tuple, writeable: bool = False
          ) -> np.ndarray:
    x0 = x[tuple(slice(s, None) for s in start)] if any(start) else x
    strides = tuple(sum(st * b for st, b in zip(steps, x.strides)) for _, steps in dims)
    return np.lib.stride_tricks.as_strided(x0, tuple(n for n, _ in dims), strides,
                                           writeable=writeable)


def _strided_impl(x: np.ndarray, start: tuple[int, ...], dims: tuple) -> np.ndarray:
    return _view(np.asarray(x), start, dims)


def _strided_vjp(g: Any, ans: Any, x: Any, start: tuple, dims: tuple) -> tuple:
    z = full(shape=x.shape, dtype=g.dtype, value=0.0)
    return (strided_add(z, g, start=start, dims=dims),)


def _strided_batch(n: int, batched: tuple[bool, ...], x: Any, start: tuple, dims: tuple) -> Any:
    nd = len(start)
    head = (n, (1,) + (0,) * nd)
    return strided(x, start=(0,) + start,
                   dims=(head,) + tuple((m, (0,) + tuple(st)) for m, st in dims))


strided = register(Primitive("strided", _strided_impl, _strided_shape, _strided_vjp,
                             _strided_batch))


def _injective(sizes: list[int], strides: list[int]) -> bool:
    """A sufficient test that the positions sum_k i_k * strides[k] are distinct."""
    extent = 0
    for n, s in sorted(((n, abs(s)) for n, s in zip(sizes, strides) if n > 1),
                       key=lambda t: t[1]):
        if s <= extent:
            return False
        extent += (n - 1) * s
    return True


def _loop_axes(sizes: list[int], strides: list[int]) -> list[int]:
    """Axes to loop over (fewest iterations first) so that the rest are injective."""
    loop: list[int] = []
    rest = [k for k, n in enumerate(sizes) if n > 1]
    while not _injective([sizes[k] for k in rest], [strides[k] for k in rest]):
        best = None
        for k in sorted(rest, key=lambda k: sizes[k]):
            left = [j for j in rest if j != k]
            if _injective([sizes[j] for j in left], [strides[j] for j in left]):
                best = k
                break
        best = min(rest, key=lambda k: sizes[k]) if best is None else best
        loop.append(best)
        rest.remove(best)
    return loop


@functools.lru_cache(maxsize=256)
def _residue_split(sizes: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int] | None:
    """(axis, q): the fewest residue classes q along one axis whose members, q apart, no longer
    overlap (windows of width 64 every 27 positions: 3 classes instead of 64 offsets). Cached:
    the compiled code calls it with the same layout every time."""
    sizes, strides = list(sizes), list(strides)
    best = None
    for k, n in enumerate(sizes):
        if n < 2 or not strides[k]:
            continue
        limit = n if best is None else min(n, best[1])
        for q in range(2, limit):
            sz = sizes[:k] + [-(-n // q)] + sizes[k + 1:]
            if _injective(sz, strides[:k] + [q * strides[k]] + strides[k + 1:]):
                best = (k, q)
                break
    return best


def added_loops(shape: tuple[int, ...], dims: tuple) -> list[int]:
    """The axes of `dims` that `_add_into` loops over, adding one slice of v per combination,
    for a C-ordered base of `shape` (none where the positions do not overlap, or where it
    adds by residue classes instead)."""
    flat = [k for k, (n, st) in enumerate(dims) if n > 1 and not any(st)]
    kept = [k for k in range(len(dims)) if k not in flat]
    sizes = [dims[k][0] for k in kept]
    c = c_strides(shape)
    strides = [sum(s * b for s, b in zip(dims[k][1], c)) for k in kept]
    loop = _loop_axes(sizes, strides)
    split = _residue_split(tuple(sizes), tuple(strides))
    if not loop or split is not None and split[1] < math.prod(sizes[k] for k in loop):
        return []
    return [kept[k] for k in loop]


def c_strides(shape: tuple[int, ...]) -> list[int]:
    """Element strides of a C-ordered array of `shape`."""
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= max(d, 1)
    return out[::-1]


def _add_into(out: np.ndarray, v: np.ndarray, start: tuple, dims: tuple) -> np.ndarray:
    """out[positions] += v, accumulating repeated positions: sum broadcast axes first, then
    one strided add per combination of the looped (overlapping) axes."""
    region = tuple(n for n, _ in dims)
    if v.shape != region:
        v = np.broadcast_to(v, region)
    if v.size == 0:  # an empty region adds nothing (and looping over its other axes costs)
        return out
    flat, adds = _add_plan(out.shape, out.strides, start, dims)
    if flat:
        v = v.sum(axis=flat)
    if adds is not None:  # each add a basic slice of out (windows, patches): no as_strided
        for oidx, sel, perm in adds:
            w = out[oidx]
            np.add(w, v[sel].transpose(perm) if perm else v[sel], out=w)
        return out
    views = _view_plan(out.strides, start, tuple(d for k, d in enumerate(dims)
                                                 if k not in flat))
    whole = out.flags.c_contiguous  # (then a view is one ndarray call, not as_strided's)
    for off, shape, strides, sel, s, sub in views:
        w = np.ndarray(shape, out.dtype, out, off, strides) if whole else \
            _view(out, s, sub, writeable=True)
        w += v[sel]
    return out


@functools.lru_cache(maxsize=512)
def _view_plan(strides: tuple, start: tuple, dims: tuple) -> list[tuple]:
    """The strided adds of `_add_into` where they are no basic slices: (byte offset, shape,
    byte strides, index of v, start, dims) each, one per residue class or per combination of the looped
    axes. Cached: compiled code adds with the same layout at every call."""
    sizes = [n for n, _ in dims]
    bst = [sum(s * b for s, b in zip(st, strides)) for _, st in dims]
    loop = _loop_axes(sizes, bst)
    split = _residue_split(tuple(sizes), tuple(bst))
    out = []
    if split is not None and split[1] < math.prod(sizes[k] for k in loop):
        k, q = split  # q adds, each of every q-th entry along axis k (they no longer overlap)
        for r in range(min(q, sizes[k])):
            s = tuple(a + r * st for a, st in zip(start, dims[k][1]))
            sub = tuple((len(range(r, n, q)), tuple(q * b for b in st)) if j == k else (n, st)
                        for j, (n, st) in enumerate(dims))
            out.append((s, sub, (slice(None),) * k + (slice(r, None, q),)))
    else:
        out = _looped(start, dims, loop)
    return [(sum(a * b for a, b in zip(s, strides)), tuple(n for n, _ in sub),
             tuple(sum(x * b for x, b in zip(st, strides)) for _, st in sub), sel, s, sub)
            for s, sub, sel in out]


def _looped(start: tuple, dims: tuple, loop: list[int]) -> list[tuple]:
    """(start, dims, v index) of each add: one per combination of the looped axes."""
    keep = [k for k in range(len(dims)) if k not in loop]
    sub = tuple(dims[k] for k in keep)
    out = []
    for combo in np.ndindex(*[dims[k][0] for k in loop]):
        s = list(start)
        for k, i in zip(loop, combo):
            for a, st in enumerate(dims[k][1]):
                s[a] += i * st
        sel = [slice(None)] * len(dims)
        for k, i in zip(loop, combo):
            sel[k] = i
        out.append((tuple(s), sub, tuple(sel)))
    return out


@functools.lru_cache(maxsize=512)
def _add_plan(shape: tuple, strides: tuple, start: tuple, dims: tuple
              ) -> tuple[tuple[int, ...], list | None]:
    """How `_add_into` adds v at these positions: the broadcast axes it sums first, and, where
    every add of the loop (or the whole region, if it does not overlap) is a basic slice of
    out, the adds as (index of out, index of v, axes of v to transpose or ()); None otherwise.
    Cached: compiled code adds with the same layout at every call."""
    flat = tuple(k for k, (n, st) in enumerate(dims) if n > 1 and not any(st))
    dims = tuple(d for k, d in enumerate(dims) if k not in flat)
    sizes = [n for n, _ in dims]
    bstrides = [sum(s * b for s, b in zip(st, strides)) for _, st in dims]
    loop = _loop_axes(sizes, bstrides)
    split = _residue_split(tuple(sizes), tuple(bstrides))
    if split is not None and split[1] < math.prod(sizes[k] for k in loop):
        return flat, None
    adds = []
    keep = [k for k in range(len(dims)) if k not in loop]  # (the axes of each add's region)
    for s, sub, sel in _looped(start, dims, loop):
        basic = _basic_index(shape, s, sub)
        if basic is None:
            return flat, None
        oidx, drop, perm = basic
        drop = {keep[j] for j in drop}
        sel = tuple(0 if k in drop else x for k, x in enumerate(sel))
        adds.append((oidx, sel, perm))
    return flat, adds


def _basic_index(shape: tuple, s: tuple, sub: tuple) -> tuple | None:
    """(index of out, v axes of size 1 to drop, transpose of v or ()) making the region `sub`
    from `s` the basic slice out[index], or None where it is not one (an axis stepping over
    two axes of out, two axes over one)."""
    idx: list[Any] = list(s)
    axis_of: dict[int, int] = {}
    drop = set()
    for j, (n, st) in enumerate(sub):
        moves = [a for a, x in enumerate(st) if x]
        if n == 1:
            drop.add(j)
            continue
        if len(moves) != 1 or moves[0] in axis_of:
            return None
        a = moves[0]
        step, last = st[a], s[a] + st[a] * (n - 1)
        stop = last + (1 if step > 0 else -1)
        idx[a] = slice(s[a], stop if stop >= 0 else None, step)
        axis_of[a] = j
    kept = [j for j in range(len(sub)) if j not in drop]  # v's axes left after its index
    order = [kept.index(axis_of[a]) for a in sorted(axis_of)]
    perm = tuple(order) if order != sorted(order) else ()
    return (*idx, Ellipsis), drop, perm  # (the Ellipsis keeps a 0-d region a writable view)


def _strided_add_impl(base: np.ndarray, v: np.ndarray, start: tuple, dims: tuple) -> np.ndarray:
    v = np.asarray(v)
    out = np.array(base, dtype=np.result_type(base, v), order="C")
    return _add_into(out, v, start, dims)


def _strided_add_shape(base: Aval, v: Aval, start: tuple, dims: tuple) -> Aval:
    _check_dims(base.shape, start, dims)
    region = tuple(n for n, _ in dims)
    try:
        ok = np.broadcast_shapes(v.shape, region) == region
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"strided_add: a value of shape {v.shape} does not fit the region "
                         f"{region}")
    return Aval(base.shape, np.result_type(base.dtype, v.dtype))


def _strided_add_batch(n: int, batched: tuple[bool, ...], base: Any, v: Any, start: tuple,
                       dims: tuple) -> Any:
    if not batched[0]:
        base = broadcast_to(base, shape=(n,) + base.shape)
    if batched[1]:
        v = _lift(v, len(dims))
    head = (n, (1,) + (0,) * len(start))
    return strided_add(base, v, start=(0,) + start,
                       dims=(head,) + tuple((m, (0,) + tuple(st)) for m, st in dims))


strided_add = register(Primitive(
    "strided_add", _strided_add_impl, _strided_add_shape,
    lambda g, ans, base, v, start, dims: (g, strided(g, start=start, dims=dims)),
    _strided_add_batch))


# ------------------------------------------------------------------------ take, segment_sum

def _move(x: np.ndarray, axis: int) -> np.ndarray:
    return np.moveaxis(x, axis, 0) if axis else x


def _take_shape(x: Aval, ids: Adv, axis: int) -> Aval:
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"take: axis {axis} out of range for an array of shape {x.shape}")
    a = ids.arr
    if a.ndim != 1 or (a.size and (a.min() < 0 or a.max() >= x.shape[axis])):
        raise ShapeError(f"take: ids must be a 1-D array of positions in [0, {x.shape[axis]})")
    return Aval(x.shape[:axis] + (len(a),) + x.shape[axis + 1:], x.dtype)


@functools.lru_cache(maxsize=1024)
def _inverse(ids: Adv, num: int) -> Adv | None:
    a = ids.arr
    if len(a) != num or not np.array_equal(np.sort(a), np.arange(num)):
        return None
    inv = np.empty(num, np.int64)
    inv[a] = np.arange(num)
    return Adv(inv)


def _take_vjp(g: Any, ans: Any, x: Any, ids: Adv, axis: int) -> tuple:
    inv = _inverse(ids, x.shape[axis])
    if inv is not None:  # a permutation: its gradient is the inverse permutation
        return (take(g, ids=inv, axis=axis),)
    return (segment_sum(g, ids=ids, axis=axis, num=x.shape[axis]),)


take = register(Primitive(
    "take", lambda x, ids, axis: np.take(x, ids.arr, axis=axis), _take_shape, _take_vjp,
    lambda n, b, x, ids, axis: take(x, ids=ids, axis=axis + 1)))


def _segment_sum_shape(v: Aval, ids: Adv, axis: int, num: int) -> Aval:
    if not 0 <= axis < v.ndim or ids.arr.ndim != 1 or len(ids.arr) != v.shape[axis]:
        raise ShapeError(f"segment_sum: ids of shape {ids.arr.shape} do not label axis {axis} "
                         f"of an array of shape {v.shape}")
    if ids.arr.size and (ids.arr.min() < 0 or ids.arr.max() >= num):
        raise ShapeError(f"segment_sum: ids must lie in [0, {num})")
    return Aval(v.shape[:axis] + (num,) + v.shape[axis + 1:], v.dtype)


def _segment_sum_impl(v: np.ndarray, ids: Adv, axis: int, num: int) -> np.ndarray:
    v = np.asarray(v)
    out = np.zeros(v.shape[:axis] + (num,) + v.shape[axis + 1:], v.dtype)
    np.add.at(_move(out, axis), ids.arr, _move(v, axis))  # the reference semantics
    return out


def _segment_sum_vjp(g: Any, ans: Any, v: Any, ids: Adv, axis: int, num: int) -> tuple:
    return (take(g, ids=ids, axis=axis),)


segment_sum = register(Primitive(
    "segment_sum", _segment_sum_impl, _segment_sum_shape, _segment_sum_vjp,
    lambda n, b, v, ids, axis, num: segment_sum(v, ids=ids, axis=axis + 1, num=num)))


# (a segment's maximum or minimum: the rows of v with one id reduced, as np.max over them;
# an empty segment gets the reduction's identity, -inf for a maximum as np.maximum.reduce's
# initial. The rows equal to the result share its cotangent, as reduce_max's ties do.)
_EXTREMES = {"segment_max": np.maximum, "segment_min": np.minimum}


def extreme_identity(name: str, dtype: np.dtype) -> Any:
    """What an empty segment of `segment_max` (`segment_min`) of `dtype` holds."""
    if dtype.kind == "f":
        return -np.inf if name == "segment_max" else np.inf
    info = np.iinfo(dtype)
    return info.min if name == "segment_max" else info.max


def _segment_extreme(name: str) -> Primitive:
    def shape_rule(v: Aval, ids: Adv, axis: int, num: int) -> Aval:
        if v.dtype.kind == "c":
            raise ComplexError(name)
        if v.dtype.kind not in "fiu":
            raise ShapeError(f"{name}: values of dtype {v.dtype} (real floats or ints only)")
        return _segment_sum_shape(v, ids, axis, num)

    def impl(v: np.ndarray, ids: Adv, axis: int, num: int) -> np.ndarray:
        v = np.asarray(v)
        out = np.full(v.shape[:axis] + (num,) + v.shape[axis + 1:], extreme_identity(name, v.dtype),
                      v.dtype)
        _EXTREMES[name].at(_move(out, axis), ids.arr, _move(v, axis))
        return out

    def vjp(g: Any, ans: Any, v: Any, ids: Adv, axis: int, num: int) -> tuple:
        hit = cast(eq(v, take(ans, ids=ids, axis=axis)), dtype=g.dtype)
        cnt = segment_sum(hit, ids=ids, axis=axis, num=num)
        share = div(g, maximum(cnt, 1.0))  # (an empty segment: no row takes its share)
        return (mul(hit, take(share, ids=ids, axis=axis)),)

    def batch(n: int, b: tuple, v: Any, ids: Adv, axis: int, num: int) -> Any:
        return p(v, ids=ids, axis=axis + 1, num=num)

    p = register(Primitive(name, impl, shape_rule, vjp, batch))
    return p


segment_max = _segment_extreme("segment_max")
segment_min = _segment_extreme("segment_min")
