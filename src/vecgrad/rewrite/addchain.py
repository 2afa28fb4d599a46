"""Sums of many terms: small broadcasts of one shape, and terms added more than once.

A gradient accumulates a cotangent term by term: `g = a + r1 + b + r2 + r3`, where a and b
are full arrays and the r's are broadcasts of one shape (a normalisation's per-row terms,
(n, 1) against (n, d)). Added in that order, every r costs a pass over the full array; summed
among themselves first, they cost one. The terms are the same, only their order changes: the
rounding error stays within eps times the sum of their magnitudes, as before.

A term can also arrive twice: the VJP of a product of a value with itself (x * x, `r @ r`,
einsum('ab,ab->a', x, x)) gives one cotangent per operand, the same value, and the driver adds
both. k copies of t are k * t, one scaling, which the scalings then merge into t's own
factors (2 * (c * x) = (2 c) * x): a pass fewer.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn

# Terms gathered from one chain at most (a longer chain is taken in pieces of this many).
MAX_TERMS = 64


def _terms(e: Eqn, ctx: Any) -> list[Any]:
    """The terms of the chain of adds ending at e, in order, through adds of e's shape read
    only by the chain."""
    out, stack, shape = [], list(e.inputs[::-1]), e.out.aval.shape
    while stack:
        a = stack.pop()
        d = ctx.def_of(a, P.add)
        if d is not None and a.aval.shape == shape and ctx.n_uses(a) == 1 and \
                len(out) + len(stack) < MAX_TERMS:
            stack.extend(d.inputs[::-1])
        else:
            out.append(a)
    return out


def small_terms_first(e: Eqn, ctx: Any) -> Any:
    """a + r1 + b + r2 = (a + b) + (r1 + r2) where the r's have one shape, much smaller than
    the sum's: one pass over the full array for all of them."""
    if e.out.aval.ndim == 0 or e.out.aval.dtype.kind not in "fc":
        return None
    rd = ctx.reader(e.out)
    if rd is not None and rd.prim is P.add and rd.out.aval.shape == e.out.aval.shape:
        return None  # (not the chain's last add: its reader gathers the whole chain)
    terms = _terms(e, ctx)
    size, dt = e.out.aval.size, e.out.aval.dtype
    if any(t.aval.dtype != dt for t in terms):
        return None  # (the order of the promotions would change)
    groups: dict[tuple, list[Any]] = {}
    for t in terms:  # (strictly smaller: an empty sum's terms are all "size * 4 <= 0")
        if t.aval.size * 4 <= size and t.aval.size < size and t.aval.ndim:
            groups.setdefault(t.aval.shape, []).append(t)
    if not any(len(g) > 1 for g in groups.values()):
        return None
    small = {id(t) for g in groups.values() if len(g) > 1 for t in g}
    total = None
    for t in [t for t in terms if id(t) not in small] + \
            [_sum(ctx, g, e) for g in groups.values() if len(g) > 1]:
        total = t if total is None else ctx.emit(P.add, (total, t), {}, e.src)
    return total


def repeated_terms(e: Eqn, ctx: Any) -> Any:
    """a + t + b + t = (a + b) + 2 * t: each term added k times is added once, as k * t. As
    accurate: t + t = 2 * t exactly, and the sum has fewer roundings."""
    if e.out.aval.dtype.kind not in "fc":
        return None
    rd = ctx.reader(e.out)
    if rd is not None and rd.prim is P.add and rd.out.aval.shape == e.out.aval.shape:
        return None  # (not the chain's last add: its reader gathers the whole chain)
    terms = _terms(e, ctx)
    counts: dict[int, int] = {}
    for t in terms:
        counts[id(t)] = counts.get(id(t), 0) + 1
    if len(counts) == len(terms) or any(t.aval.dtype != e.out.aval.dtype for t in terms):
        return None
    total, seen = None, set()
    for t in terms:
        if id(t) in seen:
            continue
        seen.add(id(t))
        k = counts[id(t)]
        if k > 1:
            for _ in range(k - 1):
                ctx.dropped_use(t)
            t = ctx.emit(P.mul, (t, Const(np.asarray(k, t.aval.dtype))), {}, e.src)
        total = t if total is None else ctx.emit(P.add, (total, t), {}, e.src)
    return total if total.aval == e.out.aval else None


def _sum(ctx: Any, ts: list[Any], e: Eqn) -> Any:
    s = ts[0]
    for t in ts[1:]:
        s = ctx.emit(P.add, (s, t), {}, e.src)
    return s


__all__ = ["repeated_terms", "small_terms_first"]
