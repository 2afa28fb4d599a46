"""Basic reads (ints and slices) read through what was made of an array by layout alone.

Batching a loop that unpacks a few values per iteration (`i, j = np.argsort(r)[-2:]`, then
`r[j] - r[i]`) stacks the iterations' values, flattens the pairs into rows (reshape(c, (n *
k, 1))), gives each value its own copy of the row it reads (broadcast_to(x[:, None], (n, k,
m)) flattened) and reads each member back at every k-th row. Those reads are reads of the
arrays they came from:

    x[w][r]                        = x[w∘r]                   one read, not two
    reshape(x)[j::k] (x: (n, k))   = x[:, j]                  the flattened axes read apart
    broadcast_to(x, S)[r]          = x[r'] (broadcast, reshaped)  a broadcast axis read at a
                                                              position is x's one entry there

so that the rules reading them (a gather through an argsort read at a few positions is the
sort read there: orderings.py) see the arrays themselves. Each is exact: the same elements in
the same order. A reshape is read through only where it flattened a broadcast or a read (a
read of a computed array stays, for rowreads.py to join the reads of its rows into one).
"""
from __future__ import annotations

import math
from typing import Any

from .. import primitives as P
from ..ir import Eqn
from .engine import Ctx
from .views import _digits, _merged

_LAYOUT = (P.broadcast_to, P.getitem)  # (what batching reads pairs back through)


def _basic(idx: Any, ndim: int) -> bool:
    return len(idx) == ndim and all(type(k) is int or isinstance(k, P.Sl) for k in idx)


def read_of_read(e: Eqn, c: Ctx) -> object:
    """x[w][r] = x[w∘r], both reads of ints and slices on every axis."""
    w = c.def_of(e.inputs[0], P.getitem)
    r = e.params["idx"]
    if w is None or not _basic(w.params["idx"], w.inputs[0].aval.ndim) or \
            not _basic(r, e.inputs[0].aval.ndim):
        return None
    out, ks = [], iter(r)
    for k in w.params["idx"]:
        if type(k) is int:
            out.append(k)
            continue
        q = next(ks)
        if type(q) is int:
            out.append(k.start + q * k.step)
            continue
        if not len(q):
            return None  # (an empty read: left as it is)
        out.append(_slice(k.start + q.start * k.step, k.step * q.step, len(q)))
    return P.getitem, (w.inputs[0],), {"idx": P.BasicIndex(out)}


def _slice(start: int, step: int, n: int) -> Any:
    """The Sl of n positions from start by step (n > 0; one position steps by 1)."""
    if n == 1:
        return P.Sl(start, start + 1, 1)
    stop = start + (n - 1) * step + (1 if step > 0 else -1)
    return P.Sl(start, stop if stop >= 0 else -1, step)


def _ones_dropped(shape: tuple, idx: tuple | None = None) -> tuple:
    """shape's axes of size other than one (their numbers, sizes, and idx's entries there)."""
    keep = [a for a, d in enumerate(shape) if d != 1]
    return keep, tuple(shape[a] for a in keep), None if idx is None else [idx[a] for a in keep]


def _read_in_base(idx: list, groups: list, base: tuple) -> list | None:
    """Per axis of `base`, the int (a fixed position) or Sl that a read `idx` of
    reshape(base) (each read axis flattening the `groups` of base's axes) selects, or None
    where it does not read a basic region of base (a step that moves inner positions)."""
    out: list = [None] * len(base)
    for k, g in zip(idx, groups):
        inner = math.prod(base[a] for a in g[1:])
        first = k if type(k) is int else k.start
        if type(k) is not int and (len(k) == 0 or len(k) > 1 and k.step % inner):
            return None
        for a, d in zip(g, _digits(first, [base[a] for a in g])):
            out[a] = d
        if type(k) is not int and len(k) > 1:
            out[g[0]] = _slice(out[g[0]], k.step // inner, len(k))
    return out


def _fitted(x: Any, keep: list, sel: list, want: tuple) -> list:
    """x's index for `sel` on its axes `keep` (its other axes have one entry), each fixed
    position an int, or a one-wide slice where `want` has an axis of one entry for it."""
    at = dict(zip(keep, sel))
    ks = [at.get(a, 0) for a in range(x.aval.ndim)]
    left = [sum(type(k) is not int for k in ks[a:]) for a in range(len(ks) + 1)]
    out, p = [], 0
    for a, k in enumerate(ks):
        if type(k) is not int:
            out.append(k)
            p += 1
        elif p < len(want) and want[p] == 1 and len(want) - p > left[a + 1]:
            out.append(P.Sl(k, k + 1, 1))
            p += 1
        else:
            out.append(k)
    return out


def read_of_reshaped(e: Eqn, c: Ctx) -> object:
    """reshape(x)[r] = x[r'] (reshaped), where the reshape flattens runs of x's axes and r
    reads a flattened axis in part, at whole steps of its inner positions (reshape(c, (n *
    k, 1))[j::k, 0:1] = c[:, j:j+1])."""
    idx = e.params["idx"]
    r = c.def_of(e.inputs[0], P.reshape)
    if r is None or not _basic(idx, r.out.aval.ndim):
        return None
    x = r.inputs[0]
    keep, xs, _ = _ones_dropped(x.aval.shape)
    _, ys, yidx = _ones_dropped(r.out.aval.shape, idx)
    groups = _merged(xs, ys)
    if groups is None:
        return None
    whole = [type(k) is not int and len(k) == n and k.step == 1 for k, n in zip(yidx, ys)]
    if all(whole):  # (the read drops or adds axes of one entry only)
        want = e.out.aval.shape
        return x if x.aval.shape == want else (P.reshape, (x,), {"shape": want})
    if not any(c.def_of(x, p) is not None for p in _LAYOUT):
        return None  # (reads of a computed array are for the joins of reads: rowreads.py)
    sel = _read_in_base(yidx, groups, xs)
    if sel is None:
        return None
    want = e.out.aval.shape
    full = _fitted(x, keep, sel, want)
    if P.index_shape(x.aval.shape, full) == want:
        return P.getitem, (x,), {"idx": P.BasicIndex(full)}
    if all(len(g) == 1 for g in groups):
        return None  # (a reshape of ones only, whose read would need a reshape again)
    read = c.emit(P.getitem, (x,), {"idx": P.BasicIndex(full)}, e.src)
    return P.reshape, (read,), {"shape": want}


def read_of_broadcast(e: Eqn, c: Ctx) -> object:
    """broadcast_to(x, S)[r] = x[r'] broadcast to r's shape, where r reads a broadcast axis
    at one position (an int, or a one-wide slice): x's one entry there."""
    idx = e.params["idx"]
    b = c.def_of(e.inputs[0], P.broadcast_to)
    if b is None or not _basic(idx, b.out.aval.ndim):
        return None
    x, shape = b.inputs[0], b.out.aval.shape
    lead = len(shape) - x.aval.ndim
    spread = [a < lead or (x.aval.shape[a - lead] == 1 and d != 1) for a, d in enumerate(shape)]
    if not any(s and (type(k) is int or len(k) == 1) for s, k in zip(spread, idx)):
        return None  # (every broadcast axis read along: nothing read at one position)
    sel = [(0 if type(k) is int else P.Sl(0, 1, 1)) if s else k
           for a, (s, k) in enumerate(zip(spread, idx)) if a >= lead]
    before = tuple(1 if s else len(k) for s, k in zip(spread, idx) if type(k) is not int)
    want = e.out.aval.shape
    if P.index_shape(x.aval.shape, sel) == want:
        return P.getitem, (x,), {"idx": P.BasicIndex(sel)}
    read = c.emit(P.getitem, (x,), {"idx": P.BasicIndex(sel)}, e.src)
    if before == want:
        return P.reshape, (read,), {"shape": want}
    sized = c.emit(P.reshape, (read,), {"shape": before}, e.src)
    return P.broadcast_to, (sized,), {"shape": want}


__all__ = ["read_of_broadcast", "read_of_read", "read_of_reshaped"]
