"""A running maximum (or minimum) read only at a few rows near its ends.

m = cummax(y) along an axis of n rows, read only at rows < H (the head) and rows >= n - K
(the tail), with H and K a few rows, as an online softmax leaves it once its terms are one
exp each (rewrite/telescope.py): its first rows are those of cummax(y[:H]) and its rows
from j0 on those of

    cummax(concat(max(y[:j0+1]), y[j0+1:]))        (max is associative: m[j] = max(m[j0],
                                                     y[j0+1..j]))

one reduction and a few rows, where the whole scan costs a pass that NumPy runs slowly
(np.maximum.accumulate along rows) and its gradient a running argmax and a scatter; the
reduction's gradient shares the cotangent among tied maxima (as a reduction's does
everywhere). Both forms compare the same values: equal bit for bit, NaNs where the scan has
them (np.max and np.maximum both propagate NaN).

The rule needs every reader of m in the graph: it runs as a sweep of its own after the
simplifier's (whose rules leave the scan's other readers dead), and only where all of them
are such reads, so that the scan goes dead and no reduction is added beside it.
"""
from __future__ import annotations

from typing import Any

from .. import primitives as P
from ..ir import Eqn, Graph
from .engine import Rule, rewrite

# The rows of a head or a tail that the rule computes one by one (a loop's steps peeled).
ROWS = 8
_TOTAL = {P.cummax: P.reduce_max, P.cummin: P.reduce_min}


def _rows_read(q: Eqn, s: Eqn) -> tuple[int, int] | None:
    """The rows [lo, hi) of s's scan axis that reader q reads (a basic index), else None."""
    if q.prim is not P.getitem or not P.is_basic(q.params["idx"]):
        return None
    idx, a, n = q.params["idx"], s.params["axis"], s.out.aval.shape[s.params["axis"]]
    if len(idx) != s.out.aval.ndim or not all(isinstance(k, (int, P.Sl)) for k in idx):
        return None
    k = idx[a]
    if isinstance(k, int):
        k = k + n if k < 0 else k
        return (k, k + 1) if 0 <= k < n else None
    return (k.start, k.stop) if k.step == 1 and 0 <= k.start < k.stop <= n else None


def _plan(s: Eqn, ctx: Any) -> tuple[int, int] | None:
    """(head, j0): every reader of the scan reads rows < head or rows >= j0 (both a few
    rows from their end), else None."""
    n = s.out.aval.shape[s.params["axis"]]
    if n <= 2 * ROWS or s.params.get("reverse", False):
        return None
    head, j0 = 0, n
    for q in ctx.all_readers.get(s.out, ()):
        r = _rows_read(q, s)
        if r is None:
            return None
        if r[1] <= ROWS:
            head = max(head, r[1])
        elif r[0] >= n - ROWS:
            j0 = min(j0, r[0])
        else:
            return None
    return head, j0


def few_rows_of_running_extreme(e: Eqn, ctx: Any) -> Any:
    s = ctx.def_of(e.inputs[0])
    if s is None or s.prim not in _TOTAL or s.out.aval.dtype.kind not in "fiu":
        return None
    plan = _plan(s, ctx)
    r = _rows_read(e, s)
    if plan is None or r is None:
        return None
    (head, j0), y, a = plan, s.inputs[0], s.params["axis"]
    n, shape = s.out.aval.shape[a], s.out.aval.shape

    def em(prim: P.Primitive, *xs: Any, **params: Any) -> Any:
        return ctx.emit(prim, xs, params, e.src)

    def part(lo: int, hi: int) -> Any:
        idx = tuple(P.Sl(lo, hi, 1) if i == a else P.Sl(0, d, 1) for i, d in enumerate(shape))
        return em(P.getitem, y, idx=P.BasicIndex(idx))
    if r[1] <= head:
        base, off = em(s.prim, part(0, head), axis=a), 0
    else:
        total = em(_TOTAL[s.prim], part(0, j0 + 1), axes=(a,))
        total = em(P.reshape, total, shape=shape[:a] + (1,) + shape[a + 1:])
        base, off = total, j0
        if j0 + 1 < n:
            base = em(s.prim, em(P.concatenate, total, part(j0 + 1, n), axis=a), axis=a)
    idx = list(e.params["idx"])
    k = idx[a]
    idx[a] = (k + n if k < 0 else k) - off if isinstance(k, int) else \
        P.Sl(k.start - off, k.stop - off, 1)
    return P.getitem, (base,), {"idx": P.BasicIndex(tuple(idx))}


RULES = [Rule(P.getitem, few_rows_of_running_extreme,
              "cummax(y)[j] = max(max(y[:j0+1]), y[j0+1..j]) for rows j >= j0 near the end, "
              "cummax(y[:h])[j] for rows j < h: the scan read at a few rows only")]


def running_extremes_read_at_ends(g: Graph) -> Graph:
    """The sweep of RULES, where g has a running maximum or minimum at all."""
    if not any(e.prim in _TOTAL for e in g.eqns):
        return g
    return rewrite(g, RULES)


__all__ = ["RULES", "running_extremes_read_at_ends"]
