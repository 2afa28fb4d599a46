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


__all__ = ["row_into_segment_sum", "sum_of_segment_sums"]
