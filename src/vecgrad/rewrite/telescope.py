"""The end of a linear recurrence whose coefficients telescope.

`affine_scan(c0, a, b)` computes c[t] = a[t] c[t-1] + b[t] (t < T); its last row is

    c[T-1] = (prod_{r<T} a[r]) c0 + sum_s (prod_{s<r<T} a[r]) b[s].

When the coefficients are a[t] = exp(u[k+t] - u[k+t+1]) for consecutive rows of one array u
(an online softmax's rescaling s e^(m_old - m_new), u its running maximum; any sum kept
relative to a moving reference; or exp(u[k+t+1] - u[k+t]), the same with -u), the
products telescope, prod_{s<r<T} a[r] =
exp(u[k+s+1] - u[k+T]), so

    c[T-1] = exp(u[k] - u[k+T]) c0 + sum_s exp(u[k+s+1] - u[k+T]) b[s]

is elementwise work and one sum over the steps: no scan forward and none (its adjoint)
backward. Each weight is one exp of a difference where the scan multiplies up to T rounded
factors, and it overflows only where that product of the coefficients does.

The coefficients reach the scan through the views batching wrote (rows sliced, unit axes
added, parts of a stacked carry taken and joined): `_rows` follows those to the array whose
consecutive rows they are.
"""
from __future__ import annotations

import math
from typing import Any

from .. import primitives as P
from ..ir import Atom, Eqn, Params


def _unit_pick(k: Any, n: int) -> bool:
    return n == 1 and (k == 0 or k == P.Sl(0, 1, 1))


def _whole_row(rest: tuple, shape: tuple) -> bool:
    return all(k == P.Sl(0, n, 1) or _unit_pick(k, n) for k, n in zip(rest, shape))


def _rows(x: Atom, lead: P.Sl, rest: tuple, ctx: Any, depth: int = 0
          ) -> tuple[Atom, int] | None:
    """(u, k) with x[lead, *rest][t] = u[k + t] element for element (the rows equal up to
    unit axes), following views; None if they are not one array's consecutive rows."""
    d = ctx.def_of(x)
    got = _through(d, lead, rest, ctx) if d is not None and depth < 32 else None
    deeper = _rows(*got, ctx, depth + 1) if got is not None else None
    if deeper is not None:
        return deeper
    if _whole_row(rest, x.aval.shape[1:]) and lead.step == 1:
        return x, lead.start
    return None


def _through(d: Eqn, lead: P.Sl, rest: tuple, ctx: Any) -> tuple | None:
    """What x[lead, *rest] reads of d's operand (an index into it), for d a view."""
    x = d.out.aval.shape
    if d.prim is P.getitem and P.is_basic(d.params["idx"]):
        idx = tuple(d.params["idx"])
        split = _split_rows(d, idx, ctx)
        if split is not None:  # y[i, a:b] of y = reshape(z): z's rows i*m+a .. i*m+b
            d, idx = split
        if len(idx) != len(d.inputs[0].aval.shape) or not isinstance(idx[0], P.Sl) or \
                idx[0].step != 1 or lead.step != 1 or \
                not all(isinstance(k, (int, P.Sl)) for k in idx):
            return None
        it = iter(rest)
        new = []
        for k in idx[1:]:
            if isinstance(k, int):
                new.append(k)
                continue
            r = next(it)
            if k.step != 1 or (isinstance(r, P.Sl) and r.step != 1):
                return None
            new.append(k.start + r if isinstance(r, int) else
                       P.Sl(k.start + r.start, k.start + r.stop, 1))
        s = idx[0].start
        return d.inputs[0], P.Sl(s + lead.start, s + lead.stop, 1), tuple(new)
    if d.prim is P.reshape:
        y = d.inputs[0].aval.shape
        if y[:1] != x[:1] or [n for n in y[1:] if n != 1] != [n for n in x[1:] if n != 1]:
            return None
        kept = [k for k, n in zip(rest, x[1:]) if n != 1]
        if any(not _unit_pick(k, n) for k, n in zip(rest, x[1:]) if n == 1):
            return None
        it = iter(kept)
        return d.inputs[0], lead, tuple(P.Sl(0, 1, 1) if n == 1 else next(it) for n in y[1:])
    if d.prim is P.take and d.params["axis"] >= 1:
        j = d.params["axis"] - 1
        if not isinstance(rest[j], int):
            return None
        pick = int(d.params["ids"].arr[rest[j]])
        return d.inputs[0], lead, rest[:j] + (pick,) + rest[j + 1:]
    if d.prim is P.concatenate and d.params["axis"] == 0:
        at = lead.start
        for part in d.inputs:
            n = part.aval.shape[0]
            if at < n:
                return (part, P.Sl(at, at + len(lead), 1), rest) if at + len(lead) <= n \
                    else None
            at -= n
    if d.prim is P.concatenate and d.params["axis"] >= 1:
        j = d.params["axis"] - 1
        if not isinstance(rest[j], int):
            return None
        at = rest[j]
        for part in d.inputs:
            n = part.aval.shape[j + 1]
            if at < n:
                return part, lead, rest[:j] + (at,) + rest[j + 1:]
            at -= n
    return None


def _split_rows(d: Eqn, idx: tuple, ctx: Any) -> tuple[Eqn, tuple] | None:
    """For d = y[i, a:b, ...] with y = reshape(z) splitting z's rows into (n, m): a read
    z[i*m+a : i*m+b, ...] (as a getitem equation of z) and its index."""
    if len(idx) < 2 or not isinstance(idx[0], int) or not isinstance(idx[1], P.Sl) or \
            idx[1].step != 1:
        return None
    r = ctx.def_of(d.inputs[0], P.reshape)
    y = d.inputs[0].aval.shape
    if r is None or r.inputs[0].aval.shape != (y[0] * y[1],) + y[2:]:
        return None
    o = idx[0] * y[1]
    new = (P.Sl(o + idx[1].start, o + idx[1].stop, 1),) + idx[2:]
    return Eqn(P.getitem, (r.inputs[0],), Params(idx=P.BasicIndex(new)), d.out, d.src), new


def _telescoping(a: Atom, T: int, ctx: Any) -> tuple[Atom, int, bool] | None:
    """(u, k, down) with a[t] = exp(u[k+t] - u[k+t+1]) for t < T (down), or a[t] =
    exp(u[k+t+1] - u[k+t]) (not down: the same with -u), else None."""
    full = tuple(P.Sl(0, n, 1) for n in a.aval.shape[1:])
    r = _rows(a, P.Sl(0, T, 1), full, ctx)
    if r is None:
        return None
    ex = ctx.def_of(r[0], P.exp)
    sub = ctx.def_of(ex.inputs[0], P.sub) if ex is not None else None
    if sub is None or sub.inputs[0].aval != sub.inputs[1].aval or \
            sub.out.aval != ex.out.aval or math.prod(ex.out.aval.shape[1:]) != \
            math.prod(a.aval.shape[1:]):
        return None
    rows = P.Sl(r[1], r[1] + T, 1)
    whole = tuple(P.Sl(0, n, 1) for n in sub.out.aval.shape[1:])
    p = _rows(sub.inputs[0], rows, whole, ctx)
    q = _rows(sub.inputs[1], rows, whole, ctx)
    if p is None or q is None or p[0] is not q[0] or abs(q[1] - p[1]) != 1 or \
            math.prod(p[0].aval.shape[1:]) != math.prod(a.aval.shape[1:]):
        return None
    return p[0], min(p[1], q[1]), q[1] > p[1]


def end_of_telescoping_scan(e: Eqn, ctx: Any) -> Any:
    """affine_scan(c0, exp(u[k:k+T] - u[k+1:k+T+1]), b)[T-1] = exp(u[k] - u[k+T]) c0 +
    sum_s exp(u[k+s+1] - u[k+T]) b[s], the scan read at its last row only (module doc)."""
    s = ctx.def_of(e.inputs[0], P.affine_scan)
    if s is None:
        return None
    a = s.inputs[1]
    T = s.out.aval.shape[0]
    if a.aval.shape[0] != T or T < 2 or s.out.aval.dtype.kind != "f":
        return None

    def at_end(q: Eqn) -> bool:
        k = q.params.get("idx") if q.prim is P.getitem else None
        return k is not None and P.is_basic(k) and len(k) == s.out.aval.ndim and \
            k[0] == T - 1 and all(isinstance(j, (int, P.Sl)) for j in k)
    if not at_end(e) or not all(at_end(q) for q in ctx.all_readers.get(s.out, [e])):
        return None
    tel = _telescoping(a, T, ctx)
    if tel is None:
        return None
    return _emit_end(e, s, *tel, ctx)


def _emit_end(e: Eqn, s: Eqn, u: Atom, k: int, down: bool, ctx: Any) -> Any:
    c0, a, b = s.inputs
    T, row = s.out.aval.shape[0], s.out.aval.shape[1:]
    src = e.src
    whole = tuple(P.Sl(0, n, 1) for n in u.aval.shape[1:])

    def em(prim: P.Primitive, *xs: Atom, **params: Any) -> Atom:
        return ctx.emit(prim, xs, params, src)

    def coef(x: Atom, n: int) -> Atom:  # rows of u as a's rows, padded as the scan pads a
        shape = (n,) + (1,) * (len(row) + 1 - a.aval.ndim) + a.aval.shape[1:]
        return x if x.aval.shape == shape else em(P.reshape, x, shape=shape)
    last = em(P.getitem, u, idx=P.BasicIndex((P.Sl(k + T, k + T + 1, 1),) + whole))
    lo = em(P.getitem, u, idx=P.BasicIndex((P.Sl(k + 1, k + T + 1, 1),) + whole))
    def ratio(x: Atom, n: int) -> Atom:  # exp(x - last), or exp(last - x) with -u
        return coef(em(P.exp, em(P.sub, x, last) if down else em(P.sub, last, x)), n)
    w = ratio(lo, T)
    bp = b.aval.shape
    bb = b if b.aval.ndim == len(row) + 1 else \
        em(P.reshape, b, shape=bp[:1] + (1,) * (len(row) + 1 - len(bp)) + bp[1:])
    total = em(P.reduce_sum, em(P.mul, w, bb), axes=(0,))
    first = em(P.getitem, u, idx=P.BasicIndex((P.Sl(k, k + 1, 1),) + whole))
    g0 = ratio(first, 1)
    g0 = em(P.reshape, g0, shape=g0.aval.shape[1:])
    out = em(P.add, total, em(P.mul, g0, c0))
    if out.aval.shape != row:
        out = em(P.broadcast_to, out, shape=row)
    if out.aval.dtype != s.out.aval.dtype:
        out = em(P.cast, out, dtype=s.out.aval.dtype)
    rest = tuple(e.params["idx"])[1:]
    if _whole_row(rest, row) and all(isinstance(j, P.Sl) for j in rest):
        return out
    return P.getitem, (out,), {"idx": P.BasicIndex(rest)}


__all__ = ["end_of_telescoping_scan"]
