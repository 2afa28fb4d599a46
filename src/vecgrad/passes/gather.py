"""Index recognition for batching: turning "row q[m] of a batched value" and "position P[m]
of a base array" into reshapes, transposes, strided slices and broadcasts when the positions
form a grid, and into a real gather only when they are irregular.

All functions emit through traced operations, so they run inside the batch pass's Builder.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..primitives import Adv, Sl
from ..primitives.elementwise import _lift


def _digits(q: np.ndarray) -> list[tuple[int, int]] | None:
    """Write q[m] = offset + sum_l digit_l(m) * stride_l, digits in row-major mixed radix.
    Returns [(size, stride)] outermost first, or None when q has no such form."""
    dims: list[tuple[int, int]] = []
    while len(q) > 1:
        s = int(q[1] - q[0])
        ramp = q[0] + s * np.arange(len(q))
        bad = np.flatnonzero(q != ramp)
        d = int(bad[0]) if len(bad) else len(q)
        if len(q) % d:
            return None
        rows = q.reshape(-1, d)
        if not np.array_equal(rows - rows[:, :1], np.broadcast_to(s * np.arange(d), rows.shape)):
            return None
        dims.append((d, s))
        q = rows[:, 0]
    return dims[::-1]


def realize_rows(g: Any, q: np.ndarray) -> Any:
    """`g[q]` along axis 0 (g has a leading batch axis), by views where the map is regular."""
    n_g = g.shape[0]
    q = np.asarray(q, np.int64)
    if len(q) == n_g and np.array_equal(q, np.arange(n_g)):
        return g
    if len(q) == 0:
        return P.getitem(g, idx=(Adv(q),) + _full(g.shape[1:]))
    dims = _digits(q)
    if dims is not None:
        out = _strided_rows(g, int(q[0]), dims, len(q))
        if out is not None:
            return out
    return P.getitem(g, idx=(Adv(q),) + _full(g.shape[1:]))


def _full(shape: tuple[int, ...]) -> tuple:
    return tuple(Sl(0, d, 1) for d in shape)


def _strided_rows(g: Any, offset: int, dims: list[tuple[int, int]], n: int) -> Any:
    """Rows offset + sum digit*stride as slice + reshape + transpose + reversal + broadcast.
    A negative stride is the positive one read backwards (a descending loop)."""
    flip = {i for i, (d, s) in enumerate(dims) if s < 0}
    offset += sum((dims[i][0] - 1) * dims[i][1] for i in flip)
    dims = [(d, abs(s)) for d, s in dims]
    moving = sorted([(s, d, i) for i, (d, s) in enumerate(dims) if s != 0], reverse=True)
    expect = 1
    for s, d, _ in reversed(moving):  # strides must tile a contiguous block, row-major
        if s != expect:
            return None
        expect *= d
    block = expect
    member = g.shape[1:]
    x = g
    if (offset, block) != (0, g.shape[0]):
        x = P.getitem(g, idx=(Sl(offset, offset + block, 1),) + _full(member))
    x = P.reshape(x, shape=tuple(d for _, d, _ in moving) + member) if moving else \
        P.reshape(x, shape=member)
    order = [i for _, _, i in moving]  # dims currently in stride order; put them in digit order
    perm = sorted(range(len(order)), key=lambda k: order[k])
    nm = len(member)
    if perm != list(range(len(perm))):
        x = P.transpose(x, perm=tuple(perm) + tuple(range(len(perm), len(perm) + nm)))
    if flip:  # moving dims are now in digit order
        x = P.getitem(x, idx=tuple(Sl(d - 1, -1, -1) if i in flip else Sl(0, d, 1)
                                   for i, (d, s) in enumerate(dims) if s != 0) + _full(member))
    shape_kd = tuple(d if s != 0 else 1 for d, s in dims) + member
    if len(dims) != len(moving):
        x = P.reshape(x, shape=shape_kd)
        x = P.broadcast_to(x, shape=tuple(d for d, _ in dims) + member)
    return P.reshape(x, shape=(n,) + member)


def _adv_front_perm(idx: tuple, out_ndim: int) -> tuple[int, ...]:
    """Permutation bringing NumPy's advanced-index result axis to the front."""
    adv = [i for i, k in enumerate(idx) if isinstance(k, Adv)]
    if adv[-1] - adv[0] + 1 != len(adv):
        return tuple(range(out_ndim))  # separated advanced indices already go first
    pos = sum(1 for k in idx[:adv[0]] if not isinstance(k, int))
    return (pos,) + tuple(i for i in range(out_ndim) if i != pos)


def _grid(U: np.ndarray) -> list[Sl] | None:
    """Slices per column if the (sorted, unique) rows of U are a full Cartesian grid of
    arithmetic progressions."""
    sls, size = [], 1
    for c in range(U.shape[1]):
        vals = np.unique(U[:, c])
        step = int(vals[1] - vals[0]) if len(vals) > 1 else 1
        if len(vals) > 1 and not np.array_equal(np.diff(vals), np.full(len(vals) - 1, step)):
            return None
        sls.append(Sl(int(vals[0]), int(vals[0]) + step * (len(vals) - 1) + 1, step))
        size *= len(vals)
    return sls if size == len(U) else None


def _with(pattern: tuple, axes: list[int], entries: list) -> tuple:
    out = list(pattern)
    for a, e in zip(axes, entries):
        out[a] = e
    return tuple(out)


def grid_read(base: Any, pattern: tuple, int_axes: list[int], pos: np.ndarray) -> Any:
    """Stack base[pattern with pos[m] at int_axes] over members m: shape (k, *member)."""
    U, inv = np.unique(pos, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    sls = _grid(U)
    if sls is not None:
        idx = _with(pattern, int_axes, sls)
        x = P.getitem(base, idx=idx)
        out_axes = [i for i, k in enumerate(k for k in idx if not isinstance(k, int))]
        entry_axes = [j for j, k in enumerate(idx) if not isinstance(k, int)]
        front = [out_axes[entry_axes.index(a)] for a in int_axes]
        rest = [a for a in out_axes if a not in front]
        if front + rest != out_axes:
            x = P.transpose(x, perm=tuple(front + rest))
        member = tuple(x.shape[len(front):])
        x = P.reshape(x, shape=(len(U),) + member)
        return realize_rows(x, inv)
    # irregular positions: one gather, directly in member order
    idx = _with(pattern, int_axes, [Adv(pos[:, c]) for c in range(pos.shape[1])])
    x = P.getitem(base, idx=idx)
    perm = _adv_front_perm(idx, x.ndim)
    return P.transpose(x, perm=perm) if perm != tuple(range(x.ndim)) else x


def grid_write(prim: P.Primitive, base: Any, vals: Any, pattern: tuple, int_axes: list[int],
               pos: np.ndarray) -> Any:
    """Apply the writes base[pattern with pos[m]] (=|+=) vals[m] for all m, in order."""
    if prim is P.setitem:  # last write wins: drop writes that a later one overwrites
        seen: set[tuple] = set()
        keep = [m for m in range(len(pos) - 1, -1, -1)
                if not (tuple(pos[m]) in seen or seen.add(tuple(pos[m])))][::-1]
    else:
        keep = list(range(len(pos)))
    pos, rows = pos[keep], np.asarray(keep)
    region = P.index_shape(base.shape, pattern)  # a single write's region
    if not pos.shape[1]:  # no varying position: one region, written once (or added to)
        v = P.broadcast_to(_lift(realize_rows(vals, rows), len(region)),
                           shape=(len(pos),) + region)
        return prim(base, P.reduce_sum(v, axes=(0,)), idx=pattern)
    order = np.lexsort(pos.T[::-1])
    pos, rows = pos[order], rows[order]
    v = realize_rows(vals, rows)
    v = P.broadcast_to(_lift(v, len(region)), shape=(len(pos),) + region)
    sls = _grid(pos) if len(np.unique(pos, axis=0)) == len(pos) else None
    if sls is None:
        idx = _with(pattern, int_axes, [Adv(pos[:, c]) for c in range(pos.shape[1])])
        perm = _adv_front_perm(idx, len(region) + 1)
        v = P.transpose(v, perm=tuple(np.argsort(perm).tolist())) if perm != tuple(
            range(len(perm))) else v
        return prim(base, v, idx=idx)
    idx = _with(pattern, int_axes, sls)
    v = P.reshape(v, shape=tuple(len(s) for s in sls) + region)
    entry_axes = [j for j, k in enumerate(idx) if not isinstance(k, int)]
    pos_of = {a: entry_axes.index(a) for a in entry_axes}
    grid_dims = [pos_of[a] for a in int_axes]  # where each grid dim sits in the write region
    member_dims = [pos_of[a] for a in entry_axes if a not in int_axes]
    order_out = sorted(range(len(entry_axes)), key=lambda j: (grid_dims + member_dims)[j])
    if order_out != list(range(len(order_out))):
        v = P.transpose(v, perm=tuple(order_out))
    if prim is P.setitem and all(isinstance(k, Sl) and len(k) == d and k.step == 1
                                 for k, d in zip(idx, base.shape)) and len(idx) == len(base.shape):
        return v if v.dtype == base.dtype else P.cast(v, dtype=base.dtype)  # fully covered
    return prim(base, v, idx=idx)
