"""Index recognition for batching (issue 14, item 2: affine positions).

A group of reads `x[idx_m]` (or writes) has one index pattern and, per member m, positions
P[m]: its ints and slice starts. When P is affine in the members' loop indices,
    P[m] = P[0] + sum_l digit_l(m) * S[l]      (m in mixed radix: the loop nest)
the stacked operand is an affine view of x: slicing, reshapes, transposes, reversals and
broadcasts when the axes tile (grids, strided ranges, column blocks, descending loops), and
one `strided` view otherwise (overlapping sliding windows, diagonals). Only positions with no
such form are gathered by index: one `take`, or one integer-array read.

Writes are the same geometry backwards: a basic slice assignment when the positions tile,
`strided_add` for overlapping additions (one strided add per window offset), and otherwise
one integer-array scatter, whose repeated additions are a `segment_sum` first.

All functions emit through traced operations, so they run inside the batch pass's Builder.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import primitives as P
from ..primitives import Adv, Sl
from ..primitives.elementwise import _lift
from .affine import full_slices as _full
from .regions import INT, SlPat


def _ramp_digits(q: np.ndarray) -> list[tuple[int, int]] | None:
    """Write q[m] = q[0] + sum_l digit_l(m) * stride_l, digits in row-major mixed radix.
    Returns [(size, stride)] outermost first, or None when q has no such form."""
    dims: list[tuple[int, int]] = []
    while len(q) > 1:
        s = int(q[1] - q[0])
        bad = np.flatnonzero(q != q[0] + s * np.arange(len(q)))
        d = int(bad[0]) if len(bad) else len(q)
        if len(q) % d:
            return None
        rows = q.reshape(-1, d)
        if not np.array_equal(rows - rows[:, :1], np.broadcast_to(s * np.arange(d), rows.shape)):
            return None
        dims.append((d, s))
        q = rows[:, 0]
    return dims[::-1]


def digits(pos: np.ndarray) -> tuple[list[int], np.ndarray] | None:
    """The loop nest of a position matrix (M, c): digit sizes (outermost first) and strides
    (L, c) with pos[m] = pos[0] + sum_l digit_l(m) * strides[l]; None if not affine."""
    M, c = pos.shape
    if M == 1:
        return [], np.zeros((0, c), np.int64)
    bounds = {M}
    for j in range(c):
        ds = _ramp_digits(pos[:, j])
        if ds is None:
            return None
        acc = 1
        for n, _ in reversed(ds):
            acc *= n
            bounds.add(acc)
    bounds = sorted(bounds)
    sizes, prev = [], 1
    for b in bounds:
        if b % prev:
            return None
        if b // prev > 1:
            sizes.append(b // prev)
        prev = b
    sizes = sizes[::-1]  # outermost first
    unit = [math.prod(sizes[l + 1:]) for l in range(len(sizes))]
    strides = np.array([pos[u] - pos[0] for u in unit], dtype=np.int64).reshape(len(sizes), c)
    idx = np.indices(sizes).reshape(len(sizes), M) if sizes else np.zeros((0, M), np.int64)
    if not np.array_equal(pos[0] + idx.T @ strides, pos):
        return None
    return sizes, strides


# ------------------------------------------------------------------------------ geometry

def _geometry(pattern: tuple, axes: tuple[int, ...], pos: np.ndarray, ds: tuple
              ) -> tuple[list[int], list[tuple[int, tuple[int, ...]]]]:
    """(start per array axis, dims): the member digits first, then the region's own axes."""
    sizes, strides = ds
    col = dict(zip(axes, range(len(axes))))
    arr_axis: list[int | None] = []
    ax = 0
    for k in pattern:
        arr_axis.append(None if k is None else ax)
        ax += k is not None
    nd = ax
    start = [0] * nd
    for j, a in enumerate(arr_axis):
        if a is not None:
            start[a] = int(pos[0, col[j]])
    dims = []
    for l, n in enumerate(sizes):
        st = [0] * nd
        for j, a in enumerate(arr_axis):
            if a is not None:
                st[a] = int(strides[l, col[j]])
        dims.append((n, tuple(st)))
    for j, k in enumerate(pattern):
        if k is None:
            dims.append((1, (0,) * nd))
        elif isinstance(k, SlPat):
            st = [0] * nd
            st[arr_axis[j]] = k[1]
            dims.append((k[0], tuple(st)))
    return start, dims


def _basic(shape: tuple[int, ...], start: list[int], dims: list) -> tuple | None:
    """Slicing that realizes the view, when its dims tile the array's axes: (index, the dims
    (k) of each sliced axis, largest step first, the dims to reverse), else None."""
    nd = len(shape)
    start = list(start)
    by_axis: dict[int, list[tuple[int, int]]] = {}
    flips = []
    for k, (n, st) in enumerate(dims):
        nz = [a for a in range(nd) if st[a]]
        if n == 0:
            return None
        if n == 1 or not nz:
            continue
        if len(nz) > 1:
            return None
        a, s = nz[0], st[nz[0]]
        if s < 0:
            start[a] += (n - 1) * s
            s = -s
            flips.append(k)
        by_axis.setdefault(a, []).append((s, k))
    idx: list = []
    groups: list[list[int]] = []
    for a in range(nd):
        ds = sorted(by_axis.get(a, []))
        if not ds:
            idx.append(start[a])
            continue
        expect = ds[0][0]
        for s, k in ds:
            if s != expect:
                return None
            expect = s * dims[k][0]
        total = expect // ds[0][0]
        s0 = ds[0][0]
        if len(ds) == 1 and ds[0][1] in flips:  # one reversed dim: a negative-step slice
            k = ds[0][1]
            flips.remove(k)
            hi = start[a] + s0 * (total - 1)
            lo = hi - s0 * total
            idx.append(Sl(hi, -1 if lo < 0 else lo, -s0))
        else:
            idx.append(Sl(start[a], start[a] + s0 * (total - 1) + 1, s0))
        groups.append([k for _, k in reversed(ds)])
    return tuple(idx), groups, flips


def view_steps(shape: tuple[int, ...], start: list[int], dims: list
               ) -> list[tuple[P.Primitive, dict]] | None:
    """The view as basic operations (slicing, reshapes, a transpose, reversals, a broadcast),
    each (primitive, params), when its dims tile the array's axes; else None."""
    geo = _basic(shape, start, dims)
    if geo is None:
        return None
    idx, groups, flips = geo
    out_shape = tuple(n for n, _ in dims)
    steps: list[tuple[P.Primitive, dict]] = []
    cur = P.index_shape(shape, idx)
    if idx != _full(shape):
        steps.append((P.getitem, {"idx": P.BasicIndex(idx)}))
    split = tuple(dims[k][0] for g in groups for k in g)
    if split != cur:
        steps.append((P.reshape, {"shape": split}))
    order = [k for g in groups for k in g]
    perm = sorted(range(len(order)), key=lambda i: order[i])
    if perm != list(range(len(perm))):
        steps.append((P.transpose, {"perm": tuple(perm)}))
    if flips:
        ks = sorted(order)
        steps.append((P.getitem, {"idx": P.BasicIndex(
            Sl(dims[k][0] - 1, -1, -1) if k in flips else Sl(0, dims[k][0], 1) for k in ks)}))
    kept = set(order)
    lifted = tuple(n if k in kept else 1 for k, (n, _) in enumerate(dims))
    if lifted != tuple(dims[k][0] for k in sorted(order)):
        steps.append((P.reshape, {"shape": lifted}))
    if lifted != out_shape:
        steps.append((P.broadcast_to, {"shape": out_shape}))
    return steps


def view(base: Any, start: list[int], dims: list) -> Any:
    """The affine view of `base` with output axes `dims` (see the module doc)."""
    steps = view_steps(base.shape, start, dims)
    if steps is None:
        return P.strided(base, start=tuple(start), dims=tuple(dims))
    x = base
    for prim, params in steps:
        x = prim(x, **params)
    return x


# ------------------------------------------------------------------------------- reads

def read(base: Any, pattern: tuple, axes: tuple[int, ...], pos: np.ndarray) -> Any:
    """Stack base[pattern at pos[m]] over members m: shape (M, *region)."""
    M = len(pos)
    ds = digits(pos)
    if ds is not None:
        start, dims = _geometry(pattern, axes, pos, ds)
        x = view(base, start, dims)
        region = x.shape[len(ds[0]):]
        return x if len(ds[0]) == 1 else P.reshape(x, shape=(M,) + region)
    return _gather(base, pattern, axes, pos)


def extrapolate(M: int, have: list[int], pos: np.ndarray) -> np.ndarray | None:
    """Positions for all M members from those of the members `have`, when they are affine in
    a loop nest of M iterations (one or two loops; the iteration counts are tried)."""
    cands = [(M,)] + [(d, M // d) for d in range(2, M) if M % d == 0]
    h = np.array(have)
    for sizes in cands:
        D = np.indices(sizes).reshape(len(sizes), M).T
        A = np.concatenate([np.ones((M, 1), np.int64), D], axis=1)
        X, *_ = np.linalg.lstsq(A[h].astype(float), pos.astype(float), rcond=None)
        X = np.rint(X).astype(np.int64)
        if np.array_equal(A[h] @ X, pos):
            return A @ X
    return None


def _extent(shape: tuple, pattern: tuple, axes: tuple, pos: np.ndarray) -> tuple:
    """Per array axis, the lowest and highest index the reads at `pos` touch."""
    lo, hi = [0] * len(shape), [d - 1 for d in shape]
    col = dict(zip(axes, range(len(axes))))
    ax = 0
    for j, k in enumerate(pattern):
        if k is None:
            continue
        v = pos[:, col[j]]
        if k == INT:
            lo[ax], hi[ax] = int(v.min()), int(v.max())
        else:
            n, st = k
            ends = v + (n - 1) * st
            lo[ax] = int(min(v.min(), ends.min()))
            hi[ax] = int(max(v.max(), ends.max()))
        ax += 1
    return lo, hi


def off_array(shape: tuple, pattern: tuple, axes: tuple, pos: np.ndarray) -> bool:
    """Whether every read at `pos` lies wholly off the array (in a zero padding)."""
    col = dict(zip(axes, range(len(axes))))
    for p in pos:
        out = False
        ax = 0
        for j, k in enumerate(pattern):
            if k is None:
                continue
            v = int(p[col[j]])
            last = v if k == INT else v + (k[0] - 1) * k[1]
            if max(v, last) < 0 or min(v, last) >= shape[ax]:
                out = True
            ax += 1
        if not out:
            return False
    return True


def padded(base: Any, pattern: tuple, axes: tuple, poss: list[np.ndarray]
           ) -> tuple[Any, np.ndarray]:
    """base padded with zeros as far as the reads at any of `poss` run off it (the array
    itself when they do not), and the shift to add to positions to read the padded array."""
    lo, hi = _extent(base.shape, pattern, axes, np.concatenate(poss))
    pad_lo = [max(0, -v) for v in lo]
    pad_hi = [max(0, v - d + 1) for v, d in zip(hi, base.shape)]
    shift = np.zeros(poss[0].shape[1], np.int64)
    if not any(pad_lo) and not any(pad_hi):
        return base, shift
    shape = tuple(d + a + b for d, a, b in zip(base.shape, pad_lo, pad_hi))
    z = P.full(shape=shape, dtype=base.dtype, value=0.0)
    idx = P.BasicIndex(Sl(a, a + d, 1) for a, d in zip(pad_lo, base.shape))
    col = dict(zip(axes, range(len(axes))))
    ax = 0
    for j, k in enumerate(pattern):
        if k is not None:
            shift[col[j]] = pad_lo[ax]
            ax += 1
    return P.setitem(z, base, idx=idx), shift


def rows(g: Any, q: np.ndarray) -> Any:
    """Rows q of g along axis 0 (a batched value), by a view where q is affine."""
    q = np.asarray(q, np.int64)
    if len(q) == g.shape[0] and np.array_equal(q, np.arange(len(q))):
        return g
    pattern = (INT,) + tuple(SlPat((d, 1)) for d in g.shape[1:])
    pos = np.zeros((len(q), g.ndim), np.int64)
    pos[:, 0] = q
    return read(g, pattern, tuple(range(g.ndim)), pos)


def _gather(base: Any, pattern: tuple, axes: tuple[int, ...], pos: np.ndarray) -> Any:
    """Irregular positions: one `take` when one int position varies, else an integer-array
    read (or, for irregular slice starts, the rows stacked one by one)."""
    from .regions import join
    varying = [j for j in range(len(axes)) if not np.all(pos[:, j] == pos[0, j])]
    if any(pattern[axes[j]] != INT for j in varying):
        return P.stack(*[P.getitem(base, idx=P.BasicIndex(join(pattern, axes, tuple(p))))
                         for p in pos.tolist()], axis=0)
    fixed = list(join(pattern, axes, tuple(pos[0].tolist())))
    if len(varying) == 1:
        a = axes[varying[0]]
        fixed[a] = Sl(0, base.shape[_arr_axis(pattern, a)], 1)
        x = P.getitem(base, idx=P.BasicIndex(fixed))
        out_axis = sum(1 for k in fixed[:a] if not isinstance(k, int))
        x = P.take(x, ids=Adv(pos[:, varying[0]]), axis=out_axis)
        if out_axis:
            perm = (out_axis,) + tuple(i for i in range(x.ndim) if i != out_axis)
            x = P.transpose(x, perm=perm)
        return x
    for j in varying:
        fixed[axes[j]] = Adv(pos[:, j])
    idx = tuple(fixed)
    x = P.getitem(base, idx=idx)
    perm = _adv_front_perm(idx, x.ndim)
    return P.transpose(x, perm=perm) if perm != tuple(range(x.ndim)) else x


def _arr_axis(pattern: tuple, j: int) -> int:
    return sum(1 for k in pattern[:j] if k is not None)


def _adv_front_perm(idx: tuple, out_ndim: int) -> tuple[int, ...]:
    """Permutation bringing NumPy's advanced-index result axis to the front."""
    adv = [i for i, k in enumerate(idx) if isinstance(k, (Adv, int))]
    advs = [i for i, k in enumerate(idx) if isinstance(k, Adv)]
    if adv[-1] - adv[0] + 1 != len(adv) and len(advs) > 0:
        return tuple(range(out_ndim))  # separated advanced indices already go first
    pos = sum(1 for k in idx[:advs[0]] if not isinstance(k, int))
    return (pos,) + tuple(i for i in range(out_ndim) if i != pos)


# ------------------------------------------------------------------------------ writes

def write(prim: P.Primitive, base: Any, vals: Any, pattern: tuple, axes: tuple[int, ...],
          pos: np.ndarray) -> Any:
    """Apply base[pattern at pos[m]] (=|+=) vals[m] for all m. Positions of a set are distinct
    (the dependence analysis orders overlapping sets); additions may repeat."""
    from .regions import join
    M = len(pos)
    region = P.index_shape(base.shape, join(pattern, axes, tuple(pos[0].tolist())))
    vals = _lift(vals, len(region))
    ds = digits(pos)
    if ds is not None:
        start, dims = _geometry(pattern, axes, pos, ds)
        geo = _basic(base.shape, start, dims)
        v = P.reshape(vals, shape=tuple(ds[0]) + vals.shape[1:]) if len(ds[0]) != 1 else vals
        if geo is not None and _no_repeats(dims):
            return _basic_write(prim, base, v, dims, geo)
        if prim is P.setitem_add:
            v = P.broadcast_to(v, shape=tuple(n for n, _ in dims))
            return P.strided_add(base, v, start=tuple(start), dims=tuple(dims))
    uniq, inv = np.unique(pos, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    if len(uniq) < M and prim is P.setitem:  # the last write to a position wins
        last = np.zeros(len(uniq), np.int64)
        last[inv] = np.arange(M)
        return write(prim, base, rows(vals, last), pattern, axes, uniq)
    if len(uniq) < M:
        seg = _segment_write(base, vals, pattern, axes, pos, region)
        if seg is not None:
            return seg
    if len(uniq) < M:  # repeated additions: sum each position's values first
        vals = P.broadcast_to(vals, shape=(M,) + region)
        vals = P.segment_sum(vals, ids=Adv(inv), axis=0, num=len(uniq))
        return write(prim, base, vals, pattern, axes, uniq)
    fixed = list(join(pattern, axes, tuple(pos[0].tolist())))
    for j in range(len(axes)):
        if pattern[axes[j]] == INT:
            fixed[axes[j]] = Adv(pos[:, j])
        elif not np.all(pos[:, j] == pos[0, j]):
            return _one_by_one(prim, base, vals, pattern, axes, pos)
    idx = tuple(fixed)
    v = P.broadcast_to(vals, shape=(M,) + region)
    perm = _adv_front_perm(idx, len(region) + 1)
    if perm != tuple(range(len(perm))):
        v = P.transpose(v, perm=tuple(np.argsort(perm).tolist()))
    return prim(base, v, idx=idx)


def _segment_write(base: Any, vals: Any, pattern: tuple, axes: tuple, pos: np.ndarray,
                   region: tuple) -> Any:
    """Additions at repeated positions along one axis (`agg[dst[e]] += m_e`): one segment
    sum straight into that axis's length, added to the buffer's slab."""
    from .regions import join
    varying = [j for j in range(len(axes)) if not np.all(pos[:, j] == pos[0, j])]
    if len(varying) != 1 or pattern[axes[varying[0]]] != INT:
        return None
    j = varying[0]
    a = axes[j]
    n = base.shape[_arr_axis(pattern, a)]
    idx = list(join(pattern, axes, tuple(pos[0].tolist())))
    idx[a] = Sl(0, n, 1)
    k = sum(1 for e in idx[:a] if not isinstance(e, int))  # the axis's place in the slab
    v = P.broadcast_to(vals, shape=(len(pos),) + region)
    s = P.segment_sum(v, ids=Adv(pos[:, j]), axis=0, num=n)
    if k:
        s = P.transpose(s, perm=tuple(range(1, k + 1)) + (0,) + tuple(range(k + 1, s.ndim)))
    if idx == list(_full(base.shape)):
        s = s if s.dtype == base.dtype else P.cast(s, dtype=base.dtype)
        return s if _zeros(base) else P.add(base, s)
    return P.setitem_add(base, s, idx=P.BasicIndex(idx))


def _zeros(x: Any) -> bool:
    """Whether x is a constant array of zeros (a fresh `vnp.zeros` buffer)."""
    from ..ir import Const
    a = x.atom
    return isinstance(a, Const) and a.value.size <= 1 << 24 and not a.value.any()


def _no_repeats(dims: list) -> bool:
    return all(n <= 1 or any(st) for n, st in dims)


def _basic_write(prim: P.Primitive, base: Any, v: Any, dims: list, geo: tuple) -> Any:
    idx, groups, flips = geo
    out_shape = tuple(n for n, _ in dims)
    v = P.broadcast_to(v, shape=out_shape) if v.shape != out_shape else v
    if flips:
        v = P.getitem(v, idx=P.BasicIndex(Sl(n - 1, -1, -1) if k in flips else Sl(0, n, 1)
                                          for k, (n, _) in enumerate(dims)))
    order = [k for g in groups for k in g]
    rest = [k for k in range(len(dims)) if k not in order]  # size-1 dims
    v = P.transpose(v, perm=tuple(order + rest)) if order + rest != list(range(len(dims))) \
        else v
    merged = P.index_shape(base.shape, idx)
    if v.shape != merged:
        v = P.reshape(v, shape=merged)
    if prim is P.setitem and idx == _full(base.shape):
        return v if v.dtype == base.dtype else P.cast(v, dtype=base.dtype)  # fully covered
    return prim(base, v, idx=P.BasicIndex(idx))


def _one_by_one(prim: P.Primitive, base: Any, vals: Any, pattern: tuple, axes: tuple,
                pos: np.ndarray) -> Any:
    from .regions import join
    for m, p in enumerate(pos.tolist()):
        row = P.getitem(vals, idx=P.BasicIndex((m,) + _full(vals.shape[1:])))
        base = prim(base, row, idx=P.BasicIndex(join(pattern, axes, tuple(p))))
    return base


__all__ = ["digits", "read", "rows", "view", "write"]
