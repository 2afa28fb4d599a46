"""Rewrite rules for data-dependent orderings: a sort whose permutation is computed too (the
gradient of np.sort is a scatter through argsort), and a scatter through a permutation of a
cotangent that is zero outside one slice (the cotangent of `np.sort(row)[-k:]`, a top-k).

A per-row sort in a loop batches into one sort along the last axis; its gradient then costs
the sort, an argsort of the same rows and a scatter of the whole array. With these rules it
costs the argsort, a gather of the k values read and a scatter of k values per row.
"""
from __future__ import annotations

from typing import Any

from .. import primitives as P
from ..ir import Eqn
from .cells import _is_zero

_PERMUTATION = {P.sort: P.argsort, P.partition: P.argpartition}


def sort_by_permutation(e: Eqn, ctx: Any) -> Any:
    """sort(x) = take_along(x, argsort(x)) where argsort(x) (same axis) is computed anyway
    (partition and argpartition alike, with the same kth): one ordering instead of two. The
    values are equal entry by entry (ties are equal values; NaNs go last in both)."""
    x = e.inputs[0]
    perm = _PERMUTATION[e.prim]
    for q in ctx.all_readers.get(x, ()):
        if q.prim is perm and q.inputs[0] is x and q.params["axis"] == e.params["axis"] and \
                q.params.get("kth") == e.params.get("kth"):
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
