"""Rewrite rules for sums of segment sums: the cotangent of an array read by several gathers
(one per level of a tree, one per group of a batched loop) is a sum of scatter-adds into
arrays of its full size. Summing them as one segment sum over the values joined end to end
touches the full-size array once, instead of once per gather and once more per addition.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn

# The values a chain of joins has gathered, as a tree of pieces (joined in O(1), read in order
# once, when the join is built): ("leaf", values, ids, dtype) or ("join", left, right, dtype),
# dtype the values' common dtype (None: they differ).
Pieces = tuple


def _leaf(vals: tuple, ids: Any) -> Pieces:
    dts = {v.aval.dtype for v in vals}
    return ("leaf", vals, ids, dts.pop() if len(dts) == 1 else None)


def _join(a: Pieces, b: Pieces) -> Pieces:
    return ("join", a, b, a[3] if a[3] == b[3] else None)


def _flatten(p: Pieces) -> tuple[list, np.ndarray]:
    vals: list = []
    ids: list = []
    todo = [p]
    while todo:
        q = todo.pop()
        if q[0] == "leaf":
            vals.extend(q[1])
            ids.append(q[2])
        else:
            todo += [q[2], q[1]]
    return vals, np.concatenate(ids)


def _parts(a: Any, ctx: Any) -> tuple[Pieces, int, int] | None:
    """(values, axis, num) of a segment sum read only here, its values split back into the
    pieces a concatenation joined (so that joins do not nest); or of a chain's link whose
    join was deferred."""
    d = ctx.deferred(a)
    if d is not None:
        return d
    s = ctx.def_of(a, P.segment_sum)
    if s is None or ctx.n_uses(a) != 1:
        return None
    axis, v = s.params["axis"], s.inputs[0]
    c = ctx.def_of(v, P.concatenate)
    vals = tuple(c.inputs) if c is not None and c.params["axis"] == axis and \
        ctx.n_uses(v) == 1 else (v,)
    return _leaf(vals, s.params["ids"].arr), axis, s.params["num"]


def _row(e: Eqn, axis: int, num: int) -> int | None:
    """The position of a write of one slice along `axis` (whole along every other axis)."""
    idx = e.params["idx"]
    shape = e.out.aval.shape
    if not P.is_basic(idx) or len(idx) != len(shape) or not isinstance(idx[axis], int):
        return None
    if any(not (isinstance(k, P.Sl) and k.start == 0 and k.step == 1 and len(k) == d)
           for i, (k, d) in enumerate(zip(idx, shape)) if i != axis):
        return None
    return idx[axis]


def _joined(vals: list, ids: np.ndarray, axis: int, num: int, src: Any, ctx: Any) -> tuple:
    v = vals[0] if len(vals) == 1 else ctx.emit(P.concatenate, tuple(vals), {"axis": axis}, src)
    return P.segment_sum, (v,), {"ids": P.Adv(ids), "axis": axis, "num": num}


def _continues(rd: Eqn, v: Any, axis: int, num: int) -> bool:
    """Whether rd, the one reader of v, looks like the next link of its chain: a write of a
    whole row into v, or v added to something (which may or may not turn out to be a
    segment sum: the join is then built there, a little later than at v)."""
    if rd.prim is P.setitem_add:
        return rd.inputs[0] is v and rd.inputs[1].aval.dtype == rd.out.aval.dtype and \
            _row(rd, axis, num) is not None
    return rd.prim is P.add and v in rd.inputs


def _commit(e: Eqn, ctx: Any, parts: Pieces, axis: int, num: int) -> Any:
    """e's joined segment sum: built now at a chain's end; while the chain goes on, deferred
    (e kept as it is for its reader, the next link, which extends `parts`): each link costs
    O(1), where building every link's join was quadratic in the chain's length."""
    for x in e.inputs:
        ctx.take(x)
    rd = ctx.reader(e.out)
    if rd is not None and _continues(rd, e.out, axis, num):
        def build() -> Any:
            prim, ins, params = _joined(*_flatten(parts), axis, num, e.src, ctx)
            return ctx.emit(prim, ins, params, e.src)
        ctx.defer(e.out, rd, (parts, axis, num), build)
        return None
    return _joined(*_flatten(parts), axis, num, e.src, ctx)


def sum_of_segment_sums(e: Eqn, ctx: Any) -> Any:
    """segment_sum(u, i) + segment_sum(v, j) = segment_sum(concat(u, v), concat(i, j))."""
    a, b = (_parts(x, ctx) for x in e.inputs)
    if a is None or b is None or a[1:] != b[1:] or e.inputs[0] is e.inputs[1]:
        return None
    parts = _join(a[0], b[0])
    if parts[3] != e.out.aval.dtype:
        return None
    return _commit(e, ctx, parts, a[1], a[2])


def row_into_segment_sum(e: Eqn, ctx: Any) -> Any:
    """segment_sum(u, i).at[r].add(v) = segment_sum(concat(u, v[None]), concat(i, [r])) for a
    write of one whole slice along the segment axis."""
    a = _parts(e.inputs[0], ctx)
    v = e.inputs[1]
    if a is None or v.aval.dtype != e.out.aval.dtype:
        return None
    parts, axis, num = a
    r = _row(e, axis, num)
    if r is None:
        return None
    shape = e.out.aval.shape
    piece = shape[:axis] + (1,) + shape[axis + 1:]
    if v.aval.shape != shape[:axis] + shape[axis + 1:]:
        v = ctx.emit(P.broadcast_to, (v,), {"shape": shape[:axis] + shape[axis + 1:]}, e.src)
    v = ctx.emit(P.reshape, (v,), {"shape": piece}, e.src)
    return _commit(e, ctx, _join(parts, _leaf((v,), [r])), axis, num)


def sum_of_scatter(e: Eqn, ctx: Any) -> Any:
    """sum(scatter_add_along(g, i, axis), dims) = one scatter with `dims` joined to the axis:
    a batched accumulation at traced indices (np.add.at(agg, dst[e], m) in a loop) scatters
    each iteration into its own (n, f) slab of a (B, n, f) array that the sum then reduces."""
    s = ctx.def_of(e.inputs[0], P.scatter_add_along)
    dims = sorted(e.params["axes"])
    if s is None or ctx.n_uses(e.inputs[0]) != 1 or not dims or s.params["axis"] in dims \
            or s.params.get("unique"):
        return None
    g, idx = s.inputs

    def op(prim: Any, *ins: Any, **params: Any) -> Any:
        return ctx.emit(prim, ins, params, e.src)

    out = P.scatter_summed(op, g, g.aval.shape, idx, idx.aval.shape, s.params["axis"],
                           s.params["size"], dims)
    return P.reshape, (out,), {"shape": e.out.aval.shape}


def gather_of_broadcast(e: Eqn, ctx: Any) -> Any:
    """take_along(broadcast_to(x), i) = take_along(x, i) when the gather's own broadcasting
    off the axis gives the same shape (the cotangent of a summed scatter, read back)."""
    b = ctx.def_of(e.inputs[0], P.broadcast_to)
    if b is None:
        return None
    x, idx, axis = b.inputs[0], e.inputs[1], e.params["axis"]
    xs, bs = x.aval.shape, b.out.aval.shape
    if len(xs) != len(bs) or xs[axis] != bs[axis]:
        return None
    try:
        if P.take_along.shape_rule(x.aval, idx.aval, axis=axis).shape != e.out.aval.shape:
            return None
    except Exception:  # noqa: BLE001 - shapes that do not broadcast: leave it
        return None
    return P.take_along, (x, idx), {"axis": axis}


def _squeezed_axes(big: tuple[int, ...], small: tuple[int, ...]) -> list[int] | None:
    """The axes of `big` that `small` keeps, when small is big without some length-1 axes."""
    kept, j = [], 0
    for i, d in enumerate(big):
        if j < len(small) and small[j] == d:
            kept.append(i)
            j += 1
        elif d != 1:
            return None
    return kept if j == len(small) else None


def slice_of_gather(e: Eqn, ctx: Any) -> Any:
    """take_along(x, i)[s] = take_along(x[s'], i[s]) (through a reshape that drops length-1
    axes) when slices are all that read the gather: each slice gathers only its own rows,
    and its cotangent scatters from where it is, not through an interleaved concatenation
    (an (E, 2) edge array read as x[s] - x[d]: two gathers, two scatters)."""
    idx, f = e.params["idx"], e.inputs[0]
    r = ctx.def_of(f, P.reshape)
    src = r.inputs[0] if r is not None and ctx.n_uses(r.inputs[0]) == 1 else f
    t = ctx.def_of(src, P.take_along)
    readers = ctx.all_readers.get(f, [])
    if t is None or not readers or any(q.prim is not P.getitem for q in readers) or \
            not all(isinstance(k, P.Sl) for k in idx) or len(idx) != f.aval.ndim or \
            e.out.aval.size >= f.aval.size:
        return None
    kept = _squeezed_axes(src.aval.shape, f.aval.shape)
    if kept is None:
        return None
    full = [P.Sl(0, d, 1) for d in src.aval.shape]
    for a, k in zip(kept, idx):
        full[a] = k
    x, i = t.inputs
    axis = t.params["axis"]

    def cut(v: Any, skip: int | None) -> Any:
        ks = tuple(k if v.aval.shape[a] > 1 and a != skip else P.Sl(0, v.aval.shape[a], 1)
                   for a, k in enumerate(full))
        if all(k.start == 0 and k.step == 1 and len(k) == d
               for k, d in zip(ks, v.aval.shape)):
            return v
        return ctx.emit(P.getitem, (v,), {"idx": ks}, e.src)
    g = ctx.emit(P.take_along, (cut(x, axis), cut(i, None)), {"axis": axis}, e.src)
    if g.aval.shape == e.out.aval.shape:
        return g
    return P.reshape, (g,), {"shape": e.out.aval.shape}


def scatter_of_scaled(e: Eqn, ctx: Any) -> Any:
    """scatter_add_along(-g, i) = -scatter_add_along(g, i), and c * g with a scalar c alike
    (through a reshape of the scaled g): the sign or the factor goes on the result, much
    smaller than g (the sources' and destinations' cotangents of |x[s] - x[d]|^2). Where
    other readers keep -g, the result's negation costs little next to it."""
    g = e.inputs[0]
    r = ctx.def_of(g, P.reshape)
    v = r.inputs[0] if r is not None else g
    n = ctx.def_of(v, P.neg) or ctx.def_of(v, P.mul)
    if n is None or e.out.aval.size * 2 > g.aval.size:
        return None
    if n.prim is P.neg:
        y, c = n.inputs[0], None
    else:
        small = [k for k, a in enumerate(n.inputs) if a.aval.size == 1]
        if not small or n.inputs[1 - small[0]].aval.shape != v.aval.shape or \
                n.inputs[small[0]].aval.dtype != g.aval.dtype:
            return None
        y, c = n.inputs[1 - small[0]], n.inputs[small[0]]
    if y.aval.shape != g.aval.shape:
        y = ctx.emit(P.reshape, (y,), {"shape": g.aval.shape}, e.src)
    s = ctx.emit(P.scatter_add_along, (y, e.inputs[1]), dict(e.params), e.src)
    if c is None:
        return P.neg, (s,), {}
    if c.aval.ndim:
        c = ctx.emit(P.reshape, (c,), {"shape": ()}, e.src)
    return P.mul, (s, c), {}


def outer_factors(i1: np.ndarray, i2: np.ndarray) -> int | None:
    """p such that i1 = repeat(I, p) and i2 = tile(J, len(i1) // p), with 1 < p < len(i1):
    the index pairs (i1[k], i2[k]) are every pair of I x J, row by row (None otherwise)."""
    n = i1.size
    if i1.ndim != 1 or i1.shape != i2.shape or n < 4:
        return None
    # p is the period of i2 and the run length of i1: i1 changes only at multiples of p
    changes = np.flatnonzero(np.diff(i1)) + 1
    g = int(np.gcd.reduce(np.r_[changes, n]))
    for p in range(2, g + 1):
        if g % p or n % p:
            continue
        a, b = i1.reshape(n // p, p), i2.reshape(n // p, p)
        if np.all(a == a[:, :1]) and np.all(b == b[:1]) and n // p > 1:
            return p
    return None


def grid_of_gathers(e: Eqn, ctx: Any) -> Any:
    """f(x[i1], y[i2]) = f(x[I][:, None], y[J][None]).reshape(...) when the pairs (i1, i2)
    are every pair of two index lists I x J (a nested loop `for i in I for j in J`): two
    small gathers and one broadcast operation make the (|I|, |J|) grid, where the gathers of
    every pair cost a copy each; the gradient sums the grid's axes before scattering."""
    if len(e.inputs) != 2:
        return None
    ts = [ctx.def_of(a, P.take) for a in e.inputs]
    if any(t is None or t.params["axis"] != 0 or ctx.reads(a) != 1
           for t, a in zip(ts, e.inputs)):
        return None
    ids = [np.asarray(t.params["ids"].arr) for t in ts]
    rest = e.out.aval.shape[1:]
    if any(a.aval.shape[1:] != rest for a in e.inputs):
        return None
    for k in (0, 1):  # which operand is repeated (the outer index)
        p = outer_factors(ids[k], ids[1 - k])
        if p is None:
            continue
        m = ids[k].size // p
        small = []
        for j, (t, i) in enumerate(zip(ts, ids)):
            lst = i.reshape(m, p)[:, 0] if j == k else i[:p]
            g = ctx.emit(P.take, (t.inputs[0],), {"ids": P.Adv(lst), "axis": 0}, e.src)
            shape = (m, 1) + rest if j == k else (1, p) + rest
            small.append(ctx.emit(P.reshape, (g,), {"shape": shape}, e.src))
        grid = ctx.emit(e.prim, tuple(small), dict(e.params), e.src)
        return P.reshape, (grid,), {"shape": e.out.aval.shape}
    return None


MAX_SHIFTS = 8  # shifted slices a gathered segment sum may become (each one pass)


def shifted_runs(ids: np.ndarray, seg: np.ndarray, num: int) -> list[tuple[int, int, int]] | None:
    """segment_sum(x[ids], seg) as a sum of shifted slices: the runs (lo, hi, d) with
    out[lo:hi] += x[lo + d:hi + d], when the pairs (seg, ids) split into at most MAX_SHIFTS
    such runs (runs of consecutive segments at one shift d = ids - seg), each segment met
    once per shift (None otherwise)."""
    if ids.ndim != 1 or ids.shape != seg.shape or not ids.size:
        return None
    d = ids.astype(np.int64) - seg
    shifts, inv = np.unique(d, return_inverse=True)
    runs = []
    for k, sh in enumerate(shifts):
        s = np.sort(seg[inv == k])
        step = np.diff(s)
        if np.any(step == 0) or s[-1] >= num:
            return None  # (a term met twice in a segment)
        cut = np.flatnonzero(step != 1) + 1
        if len(runs) + len(cut) + 1 > MAX_SHIFTS:
            return None
        for a, b in zip(np.r_[0, cut], np.r_[cut, s.size]):
            runs.append((int(s[a]), int(s[b - 1]) + 1, int(sh)))
    return runs


MAX_BOXES = 12  # shifted boxes a gathered segment sum over a grid may become (each one pass)


def _boxes_of(pts: np.ndarray) -> list[tuple[tuple, tuple]]:
    """Distinct points (rows of coordinates, sorted) as boxes (lo, hi): runs of consecutive
    first coordinates whose points on the remaining axes form the same boxes are merged."""
    if pts.shape[1] == 0:
        return [((), ())]
    out: list = []
    heads, starts = np.unique(pts[:, 0], return_index=True)
    ends = list(starts[1:]) + [len(pts)]
    prev = None
    for h, a, b in zip(heads, starts, ends):
        sub = _boxes_of(pts[a:b, 1:])
        if prev is not None and prev[1] == sub and prev[0][-1] == h - 1:
            prev[0].append(int(h))
        else:
            prev = ([int(h)], sub)
            out.append(prev)
        if len(out) > MAX_BOXES:
            break
    return [((hs[0],) + lo, (hs[-1] + 1,) + hi) for hs, sub in out for lo, hi in sub]


def shifted_boxes(pos: tuple, seg: np.ndarray, grid: tuple,
                  weight: np.ndarray | None = None) -> list[tuple] | None:
    """segment_sum(x[pos], seg) over the segments laid out as `grid` (C order), as shifted
    boxes: (lo, hi, d) with out[lo:hi] += x[lo + d:hi + d] on every axis of the grid, when
    the terms of each shift d = pos - coords(seg) meet each segment at most once and all
    shifts' segments make at most MAX_BOXES boxes (None otherwise). The neighbour sums of a
    2-D loop whose terms hit the image's edge by `if i > 0:` branches are four boxes. With
    a `weight` per term, the classes are (shift, weight) and each box is (lo, hi, d, w)."""
    if len(pos) != len(grid) or any(a.shape != seg.shape for a in pos) or not seg.size:
        return None
    coords = np.stack(np.unravel_index(seg, grid), axis=1)
    d = np.stack([np.asarray(p, np.int64) for p in pos], axis=1) - coords
    key = d if weight is None else np.concatenate([d.astype(np.float64),
                                                   weight.reshape(-1, 1)], axis=1)
    classes, inv = np.unique(key, axis=0, return_inverse=True)
    if len(classes) > MAX_BOXES:
        return None
    inv = inv.reshape(-1)
    boxes: list = []
    for k, c in enumerate(classes):
        mine = coords[inv == k]
        pts = np.unique(mine, axis=0)  # (sorted)
        if len(pts) != len(mine):
            return None  # (a term met twice in a segment)
        sh = tuple(int(v) for v in c[:d.shape[1]])
        boxes += [(lo, hi, sh) if weight is None else (lo, hi, sh, float(c[-1]))
                  for lo, hi in _boxes_of(pts)]
        if len(boxes) > MAX_BOXES:
            return None
    if len(boxes) > 4 + seg.size // 32:
        return None  # (tiny boxes: a call each costs more than the gather's share per term)
    return boxes


def _box_grid(x_shape: tuple, k: int, num: int) -> tuple | None:
    """The segments' layout for a gather at k coordinates of an array of x_shape: its first
    k axes (a loop over every pixel), when they hold num segments."""
    grid = tuple(x_shape[:k])
    return grid if int(np.prod(grid)) == num else None


def _pixel_positions(t: Eqn) -> tuple | None:
    """The integer arrays of a gather x[rows, cols, ...] (two or more, 1-D, then whole axes)."""
    shape = t.inputs[0].aval.shape
    idx = tuple(t.params["idx"])
    while idx and isinstance(idx[-1], P.Sl) and idx[-1] == P.Sl(0, shape[len(idx) - 1], 1):
        idx = idx[:-1]  # (whole trailing axes)
    if len(idx) < 2 or not all(isinstance(k, P.Adv) and k.arr.ndim == 1 for k in idx):
        return None
    return tuple(np.asarray(k.arr) for k in idx)


def _pixel_gather(t: Eqn, ctx: Any) -> tuple | None:
    """(x, positions) of a gather x[rows, cols, ...], or of the same gather through x's
    flattened leading axes (take(reshape(x), rows * W + cols): cells.gather_of_cells)."""
    if t.prim is P.getitem:
        pos = _pixel_positions(t)
        return None if pos is None else (t.inputs[0], pos)
    r = ctx.def_of(t.inputs[0], P.reshape) if t.prim is P.take and t.params["axis"] == 0 \
        else None
    if r is None:
        return None
    x, flat = r.inputs[0], r.out.aval.shape
    lead = x.aval.ndim - (len(flat) - 1)
    if lead < 2 or x.aval.shape[lead:] != flat[1:]:
        return None
    ids = np.asarray(t.params["ids"].arr)
    if ids.ndim != 1:
        return None
    return x, tuple(np.unravel_index(ids, x.aval.shape[:lead]))


def _term_weights(c: Any, n: int, ndim: int) -> np.ndarray | None:
    """The per-term weights (float64, exact) of a constant factor c of n terms of rank ndim
    (a scalar, or a column of shape (n, 1, ...)); None for any other constant."""
    if not isinstance(c, Const):
        return None
    cv = np.asarray(c.value)
    if cv.ndim > ndim or np.prod(cv.shape[1:], dtype=int) != 1 or cv.dtype.kind != "f" or \
            cv.ndim == ndim and cv.shape[0] not in (1, n) or not np.all(np.isfinite(cv)):
        return None
    w = np.broadcast_to(cv.reshape(-1)[:n] if cv.ndim == ndim else cv.reshape(-1)[:1], (n,))
    w64 = w.astype(np.float64)
    return w64 if np.array_equal(w64.astype(cv.dtype), w) else None


def _weighted_gather(v: Any, ctx: Any, shared: bool = False) -> tuple | None:
    """(x, positions, weights or None) when `v` is a gather x[rows, cols, ...], c * that
    gather with c a constant per term, or take(either, ids) on the terms' axis (the products
    hash-consed into one per pixel, picked per use); each read once but inside a take."""
    if not shared and ctx.reads(v) != 1:
        return None
    e = ctx.def_of(v)
    if e is None:
        return None
    if e.prim is P.getitem or e.prim is P.take:
        px = _pixel_gather(e, ctx)
        if px is not None:
            return px[0], px[1], None
    if e.prim is P.take and e.params["axis"] == 0 and not shared:
        inner = _weighted_gather(e.inputs[0], ctx, shared=True)
        if inner is None:
            return None
        ids = np.asarray(e.params["ids"].arr)
        x, pos, w = inner
        return x, tuple(p[ids] for p in pos), None if w is None else w[ids]
    if e.prim is not P.mul:
        return None
    for c, g in (e.inputs, e.inputs[::-1]):
        t = ctx.def_of(g)
        if t is None or (not shared and ctx.reads(g) != 1):
            continue
        px = _pixel_gather(t, ctx)
        w = None if px is None else _term_weights(c, g.aval.shape[0], len(g.aval.shape))
        if w is not None and v.aval.shape == g.aval.shape:
            return px[0], px[1], w
    return None


def segment_sum_of_boxes(e: Eqn, ctx: Any) -> Any:
    """segment_sum(x[rows, cols, ...], seg) over the pixels of x = a few shifted boxes of x
    added into the result laid out as those pixels (see shifted_boxes); a constant weight
    per term (s = s + 0.5 * u[i, j + 1]) scales each box of its weight."""
    if e.params["axis"] != 0:
        return None
    found = _weighted_gather(e.inputs[0], ctx)
    if found is None:
        return None
    x, pos, weight = found
    grid = _box_grid(x.aval.shape, len(pos), e.params["num"])
    boxes = None if grid is None else shifted_boxes(
        pos, np.asarray(e.params["ids"].arr), grid, weight)
    if boxes is None:
        return None
    rest = x.aval.shape[len(pos):]
    shape = grid + rest
    whole = tuple(P.Sl(0, n, 1) for n in rest)
    dt = e.out.aval.dtype

    def box(lo: tuple, hi: tuple, d: tuple = ()) -> Any:
        d = d or (0,) * len(lo)
        return P.BasicIndex(tuple(P.Sl(a + s, b + s, 1) for a, b, s in zip(lo, hi, d)) + whole)

    def piece(b: tuple) -> Any:
        v = ctx.emit(P.getitem, (x,), {"idx": box(*b[:3])}, e.src)
        if len(b) == 4 and b[3] != 1.0:
            v = ctx.emit(P.mul, (Const(np.asarray(b[3], dt)), v), {}, e.src)
        return v
    boxes.sort(key=lambda b: -int(np.prod(np.subtract(b[1], b[0]))))
    if (boxes[0][0], boxes[0][1]) == ((0,) * len(grid), grid):
        out, todo = piece(boxes[0]), boxes[1:]
    else:
        out = ctx.emit(P.full, (), {"shape": shape, "dtype": dt, "value": 0.0}, e.src)
        todo = boxes
    for b in todo:
        out = ctx.emit(P.setitem_add, (out, piece(b)), {"idx": box(b[0], b[1])}, e.src)
    return P.reshape, (out,), {"shape": e.out.aval.shape}


def segment_sum_of_shifts(e: Eqn, ctx: Any) -> Any:
    """segment_sum(take(x, ids), seg) = sum over shifts d of x[lo+d:hi+d] placed at lo:hi,
    when the (segment, position) pairs lie on a few diagonals: the ragged neighbour sums of
    a loop whose terms hit a boundary (`s = 0; if i > 0: s += u[i-1]; if i < n-1: s +=
    u[i+1]`) are two shifted slices, not a gather of every term and a scatter-add. Each
    slice is one pass over its rows."""
    t = ctx.def_of(e.inputs[0], P.take)
    if t is None or t.params["axis"] != e.params["axis"] or ctx.reads(e.inputs[0]) != 1:
        return None
    axis, num = e.params["axis"], e.params["num"]
    ids, seg = np.asarray(t.params["ids"].arr), np.asarray(e.params["ids"].arr)
    runs = shifted_runs(ids, seg, num)
    if runs is None:
        return None
    x = t.inputs[0]
    shape = e.out.aval.shape

    def rows(lo: int, hi: int) -> tuple:
        return tuple(P.Sl(lo, hi, 1) if a == axis else P.Sl(0, n, 1)
                     for a, n in enumerate(x.aval.shape))

    def piece(lo: int, hi: int, sh: int) -> Any:
        return ctx.emit(P.getitem, (x,), {"idx": P.BasicIndex(rows(lo + sh, hi + sh))}, e.src)
    runs.sort(key=lambda r: r[0] - r[1])  # the longest run first: it may cover every row
    lo, hi, sh = runs[0]
    if (lo, hi) == (0, num):
        out = piece(lo, hi, sh)
        rest = runs[1:]
    else:
        out = ctx.emit(P.full, (), {"shape": shape, "dtype": e.out.aval.dtype, "value": 0.0},
                       e.src)
        rest = runs
    for lo, hi, sh in rest:
        where = tuple(P.Sl(lo, hi, 1) if a == axis else P.Sl(0, n, 1)
                      for a, n in enumerate(shape))
        out = ctx.emit(P.setitem_add, (out, piece(lo, hi, sh)), {"idx": P.BasicIndex(where)},
                       e.src)
    return out


__all__ = ["gather_of_broadcast", "grid_of_gathers", "outer_factors",
           "row_into_segment_sum", "scatter_of_scaled",
           "segment_sum_of_boxes", "segment_sum_of_shifts", "shifted_boxes",
           "shifted_runs", "slice_of_gather", "sum_of_scatter",
           "sum_of_segment_sums"]
