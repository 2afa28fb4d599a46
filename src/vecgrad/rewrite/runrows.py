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

The rule needs every reader of m in the graph, as the simplifier's sweep left them: it runs
in sweeps of its own after that one, and only where all of them are such reads, so that the
scan goes dead and no reduction is added beside it. The same sweeps narrow what the
simplifier left read at a few small places (fewreads.py: an online softmax's first and last
steps read the rescalings exp(m[t] - m[t+1]) of every step through batching's views), one
level per sweep, down to the scan's rows; they run while a long running extreme is left and
each shrinks the graph (the elements it computes, then those its views make): a few sweeps,
each linear, and the graph as it was where one does not shrink it.
"""
from __future__ import annotations

import math
from typing import Any

from .. import primitives as P
from ..ir import Eqn, Graph, Var
from .engine import Rule, rewrite
from .fewreads import (
    _basic,
    few_reads_of_concatenate,
    few_reads_of_elementwise,
    few_reads_of_take,
    few_reads_of_unit_reshape,
    read_of_read,
    read_of_windows,
)

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
              "cummax(y[:h])[j] for rows j < h: the scan read at a few rows only"),
         Rule(P.getitem, few_reads_of_elementwise,
              "f(a, b)[r] = f(a[r], b[r]), f(a, b) read only at a few small places"),
         Rule(P.getitem, read_of_windows,
              "strided(x)[r] = x[r'], the read stepping along x's own axes"),
         Rule(P.getitem, few_reads_of_concatenate,
              "concatenate(xs)[r] = concatenate(xs_i[r_i]), the parts r meets, read at a few "
              "small places"),
         Rule(P.getitem, few_reads_of_take,
              "take(x, ids, a)[r] = take(x[r'], ids[r_a]), read at a few small places"),
         Rule(P.getitem, read_of_read, "x[r1][r2] = x[r], both basic: one view"),
         Rule(P.getitem, few_reads_of_unit_reshape,
              "reshape(x)[r] = reshape(x[r']), unit axes only, read at a few small places")]
# Sweeps after the first: each narrows one more level of what the last left read at a few
# rows (an exp of a difference of the scan's rows, the difference, the scan).
SWEEPS = 8


def _candidate(g: Graph) -> bool:
    """A long running extreme (which the sweeps may leave read at a few rows), or a long
    cumulative sum or product whose closed form is read at a few small places only (a
    running mean read at its end once the sums that read its every row became two-pass:
    comoments.py): the sweeps bring the read down to the scan, whose end is its total."""
    scan = False
    for e in g.eqns:
        if (e.prim in _TOTAL or e.prim in _SUMS) and \
                e.out.aval.shape[e.params["axis"]] > 2 * ROWS:
            if e.prim in _TOTAL:
                return True
            scan = True
    return scan and _read_at_few_places(g)


def _read_at_few_places(g: Graph) -> bool:
    """Some value computed in g is read only by basic reads of at most 1/8 of it."""
    read: dict[Any, int] = {}
    for e in g.eqns:
        for a in e.inputs:
            if a.__class__ is Var and a in read:
                ok = e.prim is P.getitem and _basic(e.params["idx"], a.aval.ndim)
                read[a] = read[a] + math.prod(e.out.aval.shape) if ok and read[a] >= 0 else -1
        if e.out.aval.ndim and math.prod(e.out.aval.shape) > 2 * ROWS:
            read[e.out] = 0
    for v in g.outputs:
        read.pop(v, None)
    return any(0 < n and 8 * n <= math.prod(v.aval.shape) for v, n in read.items())


_SUMS = (P.cumsum, P.cumprod)


def running_extremes_read_at_ends(g: Graph, rules: list[Rule]) -> Graph:
    """Sweeps of RULES (with the simplifier's `rules`, so that what they narrow meets the
    others) while g has a long running extreme and they shrink g (the elements its
    equations make); g as it was where they do not."""
    for _ in range(SWEEPS):
        if not _candidate(g):
            break
        new = rewrite(g, RULES + rules)
        if _size(new) >= _size(g):
            break
        g = new
    return g


def _size(g: Graph) -> tuple[int, int]:
    """The elements g's equations compute (views compute none), then all they make: what
    the sweeps shrink."""
    made = [(math.prod(e.out.aval.shape), e.prim in _VIEWS or e.prim is P.getitem and
             P.is_basic(e.params["idx"])) for e in g.eqns]
    return sum(n for n, view in made if not view), sum(n for n, _ in made)


_VIEWS = (P.reshape, P.strided, P.transpose, P.broadcast_to)


__all__ = ["RULES", "running_extremes_read_at_ends"]
