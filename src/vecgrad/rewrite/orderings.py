"""Rewrite rules for data-dependent orderings: a sort whose permutation is computed too (the
gradient of np.sort is a scatter through argsort), and a scatter through a permutation of a
cotangent that is zero outside one slice (the cotangent of `np.sort(row)[-k:]`, a top-k).

A per-row sort in a loop batches into one sort along the last axis; its gradient then costs
the sort, an argsort of the same rows and a scatter of the whole array. With these rules it
costs the argsort, a gather of the k values read and a scatter of k values per row; and where
only a few sorted positions are read (a median, a range: at most _MAX_PICKS), the sort, one
comparison and one argmax per position, and a scatter of those values: no argsort (which
costs 2.9x np.sort on (1000, 33) rows, NumPy 2.4).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn
from .cells import _is_zero

_PERMUTATION = {P.sort: P.argsort, P.partition: P.argpartition}
_MAX_PICKS = 8  # sorted positions read, past which the argsort is cheaper than the argmaxes


def sort_by_permutation(e: Eqn, ctx: Any) -> Any:
    """sort(x) = take_along(x, argsort(x)) where argsort(x) (same axis) is computed anyway
    (partition and argpartition alike, with the same kth): one ordering instead of two. The
    values are equal entry by entry (ties are equal values; NaNs go last in both)."""
    x = e.inputs[0]
    perm = _PERMUTATION[e.prim]
    for q in ctx.all_readers.get(x, ()):
        if q.prim is perm and q.inputs[0] is x and q.params["axis"] == e.params["axis"] and \
                q.params.get("kth") == e.params.get("kth") and not _only_picked(q, ctx):
            # (emitted with q's own parameters: q, kept later, is this equation)
            i = ctx.emit(perm, (x,), dict(q.params), e.src)
            return P.take_along, (x, i), {"axis": e.params["axis"]}
    return None


def scatter_of_slice(e: Eqn, ctx: Any) -> Any:
    """scatter_add_along(zeros.at[.., s, ..].set(v), i) = scatter_add_along(v, i[.., s, ..]),
    s a slice along the scatter's axis (any step) and every other axis whole: the positions
    outside s add zeros. A top-k's cotangent scatters k values per row, not the row."""
    g, i = e.inputs
    axis = e.params["axis"]
    w = ctx.def_of(g)
    if w is None or w.prim not in (P.setitem, P.setitem_add) or not _is_zero(w.inputs[0], ctx):
        return None
    idx, shape = w.params["idx"], g.aval.shape
    if len(idx) != len(shape) or not all(isinstance(k, P.Sl) for k in idx) or any(
            (k.start, k.step, len(k)) != (0, 1, d)
            for a, (k, d) in enumerate(zip(idx, shape)) if a != axis):
        return None
    k, v = idx[axis], w.inputs[1]
    if (len(k) == shape[axis] and k.step == 1) or i.aval.shape[axis] != shape[axis] or \
            v.aval.dtype != g.aval.dtype:
        return None  # (a write of the whole: nothing to narrow)
    region = shape[:axis] + (len(k),) + shape[axis + 1:]
    if v.aval.shape != region:
        v = ctx.emit(P.broadcast_to, (v,), {"shape": region}, e.src)
    cut = tuple(k if a == axis else P.Sl(0, d, 1) for a, d in enumerate(i.aval.shape))
    return P.scatter_add_along, (v, ctx.emit(P.getitem, (i,), {"idx": cut}, e.src)), dict(
        e.params)


def _zero(a: Any, defs: Any) -> bool:
    if isinstance(a, Const):
        return a.value.size <= 1 << 22 and not a.value.any()
    d = defs(a)
    return d is not None and d.prim is P.full and d.params["value"] == 0


def _cut(idx: tuple, shape: tuple, axis: int) -> list[int] | None:
    """The positions along `axis` of a static index that is whole on every other axis (an
    int or a slice there), or None."""
    if len(idx) != len(shape) or any(not isinstance(k, P.Sl) or (k.start, k.step, len(k)) !=
                                     (0, 1, d) for a, (k, d) in enumerate(zip(idx, shape))
                                     if a != axis):
        return None
    k = idx[axis]
    if isinstance(k, P.Sl):
        return list(range(k.start, k.stop, k.step))
    return [int(k) % shape[axis]] if isinstance(k, (int, np.integer)) else None


def _few(n: int, size: int) -> bool:
    return 0 < n <= _MAX_PICKS and n < size


def _picks(g: Any, axis: int, defs: Any) -> list[tuple[list[int], Any]] | None:
    """g = zeros with a few positions along `axis` set or added (setitem on zeros, then
    setitem_add, each index whole on the other axes): [(positions, values)] in the chain's
    order, or None. `defs` finds a value's definition (the rewritten or the input graph)."""
    shape, pieces, n = g.aval.shape, [], 0
    while not _zero(g, defs):
        w = defs(g)
        if w is None or w.prim not in (P.setitem, P.setitem_add) or n > _MAX_PICKS:
            return None
        pos = _cut(w.params["idx"], shape, axis)
        if pos is None or w.inputs[1].aval.dtype != g.aval.dtype:
            return None
        g, n = w.inputs[0], n + len(pos)
        if w.prim is P.setitem and not _zero(g, defs):
            return None  # (a write over earlier cotangents: not a sum of picks)
        pieces.append((pos, w.inputs[1]))
    return pieces if _few(n, shape[axis]) else None


def _picked_read(r: Eqn, q: Eqn, ctx: Any, defs: Any) -> bool:
    """r, a reader of argsort q, needs only a few of q's positions: a scatter of a few picks
    through q, or q[.., K, ..] read only by gathers of q's operand and by scatters."""
    x, axis, size = q.inputs[0], q.params["axis"], q.out.aval.shape[q.params["axis"]]
    if r.prim is P.scatter_add_along:
        return r.inputs[1] is q.out and r.params["axis"] == axis and \
            _picks(r.inputs[0], axis, defs) is not None
    if r.prim is not P.getitem:
        return False
    pos = _cut(r.params["idx"], q.out.aval.shape, axis)
    return pos is not None and _few(len(pos), size) and all(
        (u.prim is P.take_along and u.inputs == (x, r.out)) or
        (u.prim is P.scatter_add_along and u.inputs[1] is r.out and u.inputs[0] is not r.out
         and u.inputs[0].aval.shape == r.out.aval.shape)
        for u in ctx.all_readers.get(r.out, ()))


def _only_picked(q: Eqn, ctx: Any) -> bool:
    """Every reader of argsort q (in the graph being rewritten, looked at ahead) reads only a
    few of its positions (_picked_read), so the rules here need no argsort: the sort is then
    kept, not taken through q's permutation."""
    if q.prim is not P.argsort or q.inputs[0].aval.dtype.kind != "f":
        return False
    defs = ctx.memo.get(_only_picked)
    if defs is None:  # (built once per sweep, and only where an argsort meets its operand)
        defs = ctx.memo[_only_picked] = {e.out: e for e in ctx.input.eqns}
    rs = ctx.all_readers.get(q.out, ())
    return bool(rs) and all(_picked_read(r, q, ctx, defs.get) for r in rs)


def _argsort_cut(i: Any, ctx: Any) -> tuple[Eqn, tuple, list[int]] | None:
    """i = argsort(x)[.., K, ..] (x float, K a few positions): (the argsort, the index, K)."""
    w = ctx.def_of(i, P.getitem)
    q = ctx.def_of(w.inputs[0], P.argsort) if w is not None else None
    if q is None or q.inputs[0].aval.dtype.kind != "f":
        return None
    axis = q.params["axis"]
    pos = _cut(w.params["idx"], q.out.aval.shape, axis)
    return (q, w.params["idx"], pos) if pos is not None and _few(
        len(pos), q.out.aval.shape[axis]) else None


def gather_of_picks(e: Eqn, ctx: Any) -> Any:
    """take_along(x, argsort(x)[.., K, ..]) = sort(x)[.., K, ..], K a few positions, where every
    reader of the argsort reads a few positions (x[np.argsort(x)[-3:]], a top-k by argsort):
    the sort instead of the argsort (2.9x cheaper), the gradient by scatter_of_picks."""
    x, i = e.inputs
    c = _argsort_cut(i, ctx)
    if c is None or c[0].inputs[0] is not x or c[0].params["axis"] != e.params["axis"]:
        return None
    q, idx, _ = c
    # (q in the input graph: its readers there; the kept argsort is the same var)
    if not _only_picked(q, ctx):
        return None
    s = ctx.emit(P.sort, (x,), {"axis": q.params["axis"], "kind": q.params["kind"]}, e.src)
    return P.getitem, (s,), {"idx": idx}


def scatter_of_picks(e: Eqn, ctx: Any) -> Any:
    """scatter_add_along(zeros.at[.., K, ..].add(v), argsort(x)) = scatter_add_along(v, J),
    J[k] = the first index of x equal to sort(x)[k] (of a NaN, the first NaN), K a few
    positions: the cotangent of a sorted array read at a few positions (a median, a range)
    without the argsort; and scatter_add_along(v, argsort(x)[.., K, ..]) alike (a top-k by
    argsort). Ties take the first equal entry (a subgradient, as any order)."""
    g, i = e.inputs
    axis, q, c = e.params["axis"], ctx.def_of(i, P.argsort), _argsort_cut(i, ctx)
    if c is not None and g.aval.shape == i.aval.shape and c[0].params["axis"] == axis:
        q, picks = c[0], [(c[2], g)]  # (through argsort(x)[.., K, ..]: the picks are g's)
    elif q is None or q.params["axis"] != axis or q.inputs[0].aval.dtype.kind != "f" or \
            q.inputs[0].aval.shape != g.aval.shape:
        return None
    else:
        picks = _picks(g, axis, ctx.def_of)
    if picks is None:
        return None
    x, src, shape = q.inputs[0], e.src, q.out.aval.shape
    s = ctx.emit(P.sort, (x,), {"axis": axis, "kind": q.params["kind"]}, src)
    first_nan = ctx.emit(P.argmax, (ctx.emit(P.isnan, (x,), {}, src),), {"axis": axis}, src)
    one = shape[:axis] + (1,) + shape[axis + 1:]
    cols, vals = [], []
    for pos, v in picks:
        for k in pos:
            sk = ctx.emit(P.getitem, (s,), {"idx": tuple(
                P.Sl(k, k + 1, 1) if a == axis else P.Sl(0, d, 1)
                for a, d in enumerate(shape))}, src)
            j = ctx.emit(P.argmax, (ctx.emit(P.eq, (x, sk), {}, src),), {"axis": axis}, src)
            nan = ctx.emit(P.reshape, (ctx.emit(P.isnan, (sk,), {}, src),),
                           {"shape": j.aval.shape}, src)
            j = ctx.emit(P.where, (nan, first_nan, j), {}, src)
            cols.append(ctx.emit(P.reshape, (j,), {"shape": one}, src))
        region = shape[:axis] + (len(pos),) + shape[axis + 1:]
        if v.aval.shape != region:
            v = ctx.emit(P.reshape, (v,), {"shape": region}, src) if \
                v.aval.size == math.prod(region) else \
                ctx.emit(P.broadcast_to, (v,), {"shape": region}, src)
        vals.append(v)
    cat = (lambda xs: xs[0] if len(xs) == 1 else
           ctx.emit(P.concatenate, tuple(xs), {"axis": axis}, src))
    return P.scatter_add_along, (cat(vals), cat(cols)), {
        "axis": axis, "size": shape[axis], "unique": False}
