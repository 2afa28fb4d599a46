"""Joins of reads at single positions: a stack or concatenate of k reads of one array at
single positions (ints, or one-wide slices) of a run of its axes is one read of it.

Where they come from: the values a scan or loop stacked over its steps are read back one
step at a time by work that batching merged across the steps in some member order (the
pairs (x_t, y_t) of two carries, one carry's rows after a peeled first step). Left as
they are, such joins hold one read per step: the graph grows with the trip count.

    join(x[.., p_1, ..], ..., x[.., p_k, ..]) = reshape(x')[.., P, ..]

x' is x with the run of axes [lo, hi) the positions vary on merged into one (a reshape), P
the positions raveled over it: a strided slice where they step evenly (a view), else a
`take`. The pieces' elements are the rows of the result in order, so the result is that
read reshaped (when every axis before the joined one has one element) or with the joined
axis moved into place (when the pieces' shapes are the read's rows' shapes: one-element
axes aside, both keep x's other axes in x's order).
"""
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Eqn

MIN_RUN = 2  # pieces at least, for a run to be read as one


def _piece(a: Atom, ctx: Any) -> tuple[Any, tuple, tuple] | None:
    """(base, idx, new axes) of a read base[idx] by ints and slices over every axis of base,
    with one-element axes inserted where the read's index has None (`x[k, :, None]`, a
    column put back: the pieces' own shapes, which `_shape` reads, hold those axes)."""
    d = ctx.def_of(a, P.getitem)
    if d is None or not P.is_basic(d.params["idx"]):
        return None
    full = tuple(d.params["idx"])
    idx = tuple(k for k in full if k is not None)
    if len(idx) != d.inputs[0].aval.ndim or not all(isinstance(k, (int, P.Sl)) for k in idx):
        return None
    return d.inputs[0], idx, tuple(i for i, k in enumerate(full) if k is None)


def _unit(k: Any) -> bool:
    return isinstance(k, int) or (k.step == 1 and k.stop == k.start + 1)


def _key(base: Any, idx: tuple, new: tuple = ()) -> tuple:
    """Pieces of one run have equal keys: one base, ints where ints are and one-wide
    slices where those are, every other slice equal, new axes at the same places."""
    return (id(base), new) + tuple(("i" if isinstance(k, int) else "u") if _unit(k) else k
                                   for k in idx)


def _plan(base: Any, idxs: list[tuple]) -> tuple | None:
    """(lo, hi, positions, q, shape): the pieces vary on base's axes [lo, hi), at these
    raveled positions; their read has its rows on axis q and this shape."""
    vary = [j for j in range(len(idxs[0])) if len({i[j] for i in idxs}) > 1]
    if not vary:
        return None
    lo, hi = vary[0], vary[-1] + 1
    if any(not _unit(ix[m]) for ix in idxs for m in range(lo, hi)):
        return None
    dims = base.aval.shape[lo:hi]
    pos = [int(np.ravel_multi_index(tuple(k if isinstance(k, int) else k.start
                                          for k in i[lo:hi]), dims)) for i in idxs]
    head, tail = idxs[0][:lo], idxs[0][hi:]
    q = sum(isinstance(k, P.Sl) for k in head)
    kept = [len(k) for k in head + tail if isinstance(k, P.Sl)]
    return lo, hi, pos, q, tuple(kept[:q] + [len(pos)] + kept[q:])


def _read(base: Any, idx: tuple, plan: tuple, ctx: Any, src: Any) -> Atom:
    """The read of base at the planned positions."""
    lo, hi, pos, q, _ = plan
    shape = base.aval.shape
    n = math.prod(shape[lo:hi])
    x = base
    if hi - lo > 1:
        x = ctx.emit(P.reshape, (base,), {"shape": shape[:lo] + (n,) + shape[hi:]}, src)
    head, tail = idx[:lo], idx[hi:]
    step = pos[1] - pos[0]
    if step and all(b - a == step for a, b in itertools.pairwise(pos)):
        sl = P.Sl(pos[0], pos[-1] + step, step)  # (stop -1: past the first element)
        return ctx.emit(P.getitem, (x,), {"idx": P.BasicIndex(head + (sl,) + tail)}, src)
    whole = ctx.emit(P.getitem, (x,), {"idx": P.BasicIndex(head + (P.Sl(0, n, 1),) + tail)},
                     src)
    return ctx.emit(P.take, (whole,), {"ids": P.Adv(np.array(pos)), "axis": q}, src)


def _shape(gs: tuple, q: int, piece: tuple, k: int, stack: bool) -> tuple | None:
    """How the pieces' join along k (stacked, or concatenated) is made from their read (of
    shape gs, rows on q): ("reshape", shape) or ("transpose", perm); None if neither."""
    n = gs[q]
    want = piece[:k] + (n,) + piece[k:] if stack else \
        piece[:k] + (piece[k] * n,) + piece[k + 1:]
    if all(d == 1 for d in gs[:q]) and all(d == 1 for d in want[:k]):
        # (every element before the rows' axis is one: the rows are the flat order)
        return "reshape", want
    rows = gs[:q] + gs[q + 1:]
    if rows != (piece if stack else piece[:k] + piece[k + 1:]) or \
            (not stack and piece[k] != 1):
        return None
    perm = list(range(len(gs)))
    perm.insert(k, perm.pop(q))
    return "transpose", tuple(perm)


def _runs(pieces: list) -> list[tuple[int, int]]:
    """Maximal runs (start, stop) of at least MIN_RUN operands read from one base alike."""
    runs = []
    i = 0
    while i < len(pieces):
        j = i + 1
        if pieces[i] is not None:
            key = _key(*pieces[i])
            while j < len(pieces) and pieces[j] is not None and \
                    pieces[j][0] is pieces[i][0] and _key(*pieces[j]) == key:
                j += 1
        if j - i >= MIN_RUN:
            runs.append((i, j))
        i = j
    return runs


def join_of_reads(e: Eqn, ctx: Any) -> Any:
    """stack / concatenate of reads of one array at single positions = one read of it (see
    the module doc); runs of such pieces among other operands each become one read."""
    stack = e.prim is P.stack
    k = e.params["axis"]
    pieces = [_piece(a, ctx) for a in e.inputs]
    runs = _runs(pieces)
    made = []
    for i, j in runs:  # (everything checked before anything is emitted)
        plan = _plan(pieces[i][0], [pieces[m][1] for m in range(i, j)])
        how = plan and _shape(plan[4], plan[3], e.inputs[i].aval.shape, k, stack)
        if not how:
            return None
        made.append((i, j, plan, how))
    if not made:
        return None
    parts: list[Atom] = []
    last = 0
    for i, j, plan, (kind, arg) in made:
        g = _read(pieces[i][0], pieces[i][1], plan, ctx, e.src)
        if kind == "transpose":
            g = ctx.emit(P.transpose, (g,), {"perm": arg}, e.src)
        elif g.aval.shape != arg:
            g = ctx.emit(P.reshape, (g,), {"shape": arg}, e.src)
        parts += [_one(a, k, stack, ctx, e.src) for a in e.inputs[last:i]] + [g]
        last = j
    parts += [_one(a, k, stack, ctx, e.src) for a in e.inputs[last:]]
    if len(parts) == 1:
        return parts[0]
    return P.concatenate, tuple(parts), {"axis": k}


def _one(a: Atom, k: int, stack: bool, ctx: Any, src: Any) -> Atom:
    """An operand of the join as a part of a concatenate along k."""
    if not stack:
        return a
    s = a.aval.shape
    return ctx.emit(P.reshape, (a,), {"shape": s[:k] + (1,) + s[k:]}, src)


__all__ = ["join_of_reads"]
