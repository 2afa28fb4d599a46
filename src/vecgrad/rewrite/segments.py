"""Rewrite rules for sums of segment sums: the cotangent of an array read by several gathers
(one per level of a tree, one per group of a batched loop) is a sum of scatter-adds into
arrays of its full size. Summing them as one segment sum over the values joined end to end
touches the full-size array once, instead of once per gather and once more per addition.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Eqn


def _parts(a: Any, ctx: Any) -> tuple[list, np.ndarray, int, int] | None:
    """(values, ids, axis, num) of a segment sum read only here, its values split back into
    the pieces a concatenation joined (so that joins do not nest)."""
    s = ctx.def_of(a, P.segment_sum)
    if s is None or ctx.n_uses(a) != 1:
        return None
    axis, v = s.params["axis"], s.inputs[0]
    c = ctx.def_of(v, P.concatenate)
    vals = list(c.inputs) if c is not None and c.params["axis"] == axis and \
        ctx.n_uses(v) == 1 else [v]
    return vals, s.params["ids"].arr, axis, s.params["num"]


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


def _joined(vals: list, ids: np.ndarray, axis: int, num: int, e: Eqn, ctx: Any) -> Any:
    v = vals[0] if len(vals) == 1 else ctx.emit(P.concatenate, tuple(vals), {"axis": axis},
                                                e.src)
    return P.segment_sum, (v,), {"ids": P.Adv(ids), "axis": axis, "num": num}


def sum_of_segment_sums(e: Eqn, ctx: Any) -> Any:
    """segment_sum(u, i) + segment_sum(v, j) = segment_sum(concat(u, v), concat(i, j))."""
    a, b = (_parts(x, ctx) for x in e.inputs)
    if a is None or b is None or a[2:] != b[2:] or e.inputs[0] is e.inputs[1]:
        return None
    vals = a[0] + b[0]
    if any(v.aval.dtype != e.out.aval.dtype for v in vals):
        return None
    return _joined(vals, np.concatenate([a[1], b[1]]), a[2], a[3], e, ctx)


def row_into_segment_sum(e: Eqn, ctx: Any) -> Any:
    """segment_sum(u, i).at[r].add(v) = segment_sum(concat(u, v[None]), concat(i, [r])) for a
    write of one whole slice along the segment axis."""
    a = _parts(e.inputs[0], ctx)
    v = e.inputs[1]
    if a is None or v.aval.dtype != e.out.aval.dtype:
        return None
    vals, ids, axis, num = a
    r = _row(e, axis, num)
    if r is None:
        return None
    shape = e.out.aval.shape
    piece = shape[:axis] + (1,) + shape[axis + 1:]
    if v.aval.shape != shape[:axis] + shape[axis + 1:]:
        v = ctx.emit(P.broadcast_to, (v,), {"shape": shape[:axis] + shape[axis + 1:]}, e.src)
    v = ctx.emit(P.reshape, (v,), {"shape": piece}, e.src)
    return _joined(vals + [v], np.concatenate([ids, [r]]), axis, num, e, ctx)


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


__all__ = ["gather_of_broadcast", "row_into_segment_sum", "sum_of_scatter",
           "sum_of_segment_sums"]
