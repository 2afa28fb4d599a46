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
added, parts of a stacked carry taken and joined, a gather that puts a run of rows in order):
`_rows` follows those to the array whose consecutive rows they are. Where batching peeled a
loop's first steps (an online softmax whose state starts at the first row: the scan's first
coefficient is exp(m_1 - x_0), its others exp(m_{t+1} - m_t)), the first r0 < 4 rows need
not telescope: they run one by one, c[r0-1] = a[r0-1] (.. (a[0] c0 + b[0]) ..) + b[r0-1],
and the rest is the end above from c[r0-1]; the rows of b are read where the gather took them
from, so the gather goes dead.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Aval, Eqn, Params, Var

# Steps before the telescoping rows (a loop's first steps, peeled by batching) run one by one.
HEAD = 3


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
    w = ctx.def_of(d.inputs[0], P.strided) if d.prim is P.getitem else None
    if w is not None and P.is_basic(d.params["idx"]) and d.params["idx"] and \
            isinstance(d.params["idx"][0], int):
        return _through_windows(tuple(d.params["idx"]), w, lead, rest)
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
    if d.prim is P.take and d.params["axis"] == 0 and lead.step == 1:
        ids = d.params["ids"].arr[lead.start:lead.stop]  # (a run of consecutive rows)
        n = d.inputs[0].aval.shape[0]
        ids = np.where(ids < 0, ids + n, ids)
        if ids.ndim != 1 or len(ids) != len(lead) or np.any(np.diff(ids) != 1):
            return None
        return d.inputs[0], P.Sl(int(ids[0]), int(ids[0]) + len(lead), 1), rest
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


def _through_windows(idx: tuple, w: Eqn, lead: P.Sl, rest: tuple) -> tuple | None:
    """x[lead, *rest] for x = z[idx] (idx[0] an int) and z = strided(v) (batching's windows
    of rows, z[i, j] = v[i + j]): the read of v, where x's row axis steps along v's rows and
    its other axes along v's others, one each; else None."""
    start, dims = w.params["start"], w.params["dims"]
    nv = len(start)
    if len(idx) != len(dims) or lead.step != 1 or not all(
            isinstance(k, int) or k.step == 1 for k in idx):
        return None
    at = list(start)
    for k, (_, st) in zip(idx, dims):  # the int axes' offsets
        if isinstance(k, int):
            at = [a + k * s for a, s in zip(at, st)]
    out: list = [None] * nv
    sliced = [(k, st) for k, (_, st) in zip(idx, dims) if not isinstance(k, int)]
    if not sliced or len(sliced) != len(rest) + 1:
        return None
    for n, ((k, st), r) in enumerate(zip(sliced, (lead,) + tuple(rest))):
        axes = [j for j, s in enumerate(st) if s]
        if len(axes) != 1 or st[axes[0]] != 1 or (axes[0] == 0) != (n == 0) or \
                out[axes[0]] is not None or (isinstance(r, P.Sl) and r.step != 1):
            return None
        j, o = axes[0], at[axes[0]] + k.start
        out[j] = o + r if isinstance(r, int) else P.Sl(o + r.start, o + r.stop, 1)
    new = tuple(at[j] if v is None else v for j, v in enumerate(out))
    return w.inputs[0], new[0], new[1:]


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


def _telescoping(a: Atom, r0: int, T: int, ctx: Any) -> tuple[Atom, int, bool] | None:
    """(u, k, down) with a[r0+t] = exp(u[k+t] - u[k+t+1]) for t < T - r0 (down), or
    a[r0+t] = exp(u[k+t+1] - u[k+t]) (not down: the same with -u), else None."""
    full = tuple(P.Sl(0, n, 1) for n in a.aval.shape[1:])
    r = _rows(a, P.Sl(r0, T, 1), full, ctx)
    T -= r0
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
    sum_s exp(u[k+s+1] - u[k+T]) b[s], the scan read at its last row only (module doc); the
    first HEAD rows of its coefficients may be others', those steps run one by one."""
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
    for r0 in range(min(HEAD, T - 2) + 1):
        tel = _telescoping(a, r0, T, ctx)
        if tel is not None:
            return _emit_end(e, _after_head(s, r0, ctx, e.src) if r0 else s, *tel, ctx)
    return None


def _read_rows(x: Atom, lo: int, hi: int, ctx: Any, src: Any) -> Atom:
    """x[lo:hi], read from the array whose consecutive rows they are where views and gathers
    lead to one (so that a gather which only put rows in order goes dead)."""
    want = (hi - lo,) + x.aval.shape[1:]
    r = _rows(x, P.Sl(lo, hi, 1), tuple(P.Sl(0, n, 1) for n in want[1:]), ctx)
    if r is not None:
        x, lo = r
    idx = (P.Sl(lo, lo + want[0], 1),) + tuple(P.Sl(0, n, 1) for n in x.aval.shape[1:])
    v = ctx.emit(P.getitem, (x,), {"idx": P.BasicIndex(idx)}, src)
    return v if v.aval.shape == want else ctx.emit(P.reshape, (v,), {"shape": want}, src)


def _after_head(s: Eqn, r0: int, ctx: Any, src: Any) -> Eqn:
    """The scan s from its row r0 on (not emitted: what _emit_end reads of it), its initial
    state the first r0 steps run one by one as s runs them (c = a[i] c + b[i])."""
    c, a, b = s.inputs
    T, row = s.out.aval.shape[0], s.out.aval.shape[1:]

    def rows(x: Atom, lo: int, hi: int) -> Atom:
        return _read_rows(x, lo, hi, ctx, src)
    for i in range(r0):
        ai, bi = (ctx.emit(P.reshape, (rows(x, i, i + 1),), {"shape": x.aval.shape[1:]}, src)
                  for x in (a, b))
        c = ctx.emit(P.add, (ctx.emit(P.mul, (ai, c), {}, src), bi), {}, src)
    if c.aval.shape != row:
        c = ctx.emit(P.broadcast_to, (c,), {"shape": row}, src)
    if c.aval.dtype != s.out.aval.dtype:
        c = ctx.emit(P.cast, (c,), {"dtype": s.out.aval.dtype}, src)
    tail = (c, rows(a, r0, T), rows(b, r0, T))
    return Eqn(P.affine_scan, tail, Params(), Var(Aval((T - r0,) + row, s.out.aval.dtype)),
               s.src)


def _monotone(u: Atom, down: bool, ctx: Any) -> bool:
    """u's rows run up (a cummax along them: the coefficients exp(u[t] - u[t+1]) are <= 1,
    down) or down (a cummin, the coefficients exp(u[t+1] - u[t]))."""
    d = ctx.def_of(u, P.cummax if down else P.cummin)
    return d is not None and d.params["axis"] == 0 and not d.params.get("reverse", False)


def _exp_rows(x: Atom, rows: P.Sl, ctx: Any) -> tuple[Eqn, int] | None:
    """(sub, k) with x[rows] = exp(sub)[k:k+T] row for row (through views), sub's operands
    and result of one shape."""
    r = _rows(x, rows, tuple(P.Sl(0, n, 1) for n in x.aval.shape[1:]), ctx)
    ex = ctx.def_of(r[0], P.exp) if r is not None else None
    sub = ctx.def_of(ex.inputs[0], P.sub) if ex is not None else None
    ok = sub is not None and sub.inputs[0].aval == sub.inputs[1].aval == ex.out.aval
    return (sub, r[1]) if ok else None


def _exp_factor(b: Atom, T: int, ctx: Any) -> tuple[Eqn, int, Atom | None, int] | None:
    """(sub, k, W, kw): b[:T] = exp(sub)[k:k+T] * W[kw:kw+T] (W None: b is the exp alone),
    the product's operands of one shape."""
    r = _rows(b, P.Sl(0, T, 1), tuple(P.Sl(0, n, 1) for n in b.aval.shape[1:]), ctx)
    if r is None:
        return None
    got = _exp_rows(r[0], P.Sl(r[1], r[1] + T, 1), ctx)
    if got is not None:
        return got[0], got[1], None, 0
    d = ctx.def_of(r[0], P.mul)
    if d is None or d.inputs[0].aval != d.inputs[1].aval:
        return None
    for i in (0, 1):
        got = _exp_rows(d.inputs[i], P.Sl(r[1], r[1] + T, 1), ctx)
        if got is not None:
            return got[0], got[1], d.inputs[1 - i], r[1]
    return None


def _merged_terms(b: Atom, u: Atom, k: int, T: int, row: tuple, down: bool, last: Atom,
                  ctx: Any, src: Any) -> tuple[Atom, Atom] | None:
    """The end's terms exp(u[k+s+1] - u[k+T]) b[s] as one exponential each, and a guard,
    where b[s] = exp(y[k+s+1] - u[k+s+1]) W[s] (W optional) and u = cummax(y) (down; with
    a cummin, exp(u[k+T] - u[k+s+1]) exp(u[k+s+1] - y[k+s+1]) alike): an online softmax's
    p = e^(x - m_new). Then

        exp(u[j] - u[k+T]) exp(y[j] - u[j]) = exp(y[j] - u[k+T])     (u[j] finite)

    one exp of one difference each, no running maximum left but its last row (which a
    reduction gives, rewrite/runrows.py), and both sides are <= 1 (y[j] <= u[j] <= u[k+T]),
    so neither overflows where the other does not. Each difference is exact or within half
    an ulp of its own magnitude, so the terms agree to ~|y - u| eps (< 1e-13 relative while
    the exp has not underflowed). Where u[j] is not finite the product is NaN (inf - inf, or
    0 * inf), whatever y and u[k+T]; u being monotone, its rows k+1..k+T hold a non-finite
    value exactly where the first (-inf, running up) or the last (+inf, NaN) does, so the
    guard (f - f) + (l - l) of those two rows, 0 or NaN, keeps the NaNs where they were."""
    if not _monotone(u, down, ctx):
        return None
    y = ctx.def_of(u).inputs[0]
    row_n = math.prod(u.aval.shape[1:])
    got = _exp_factor(b, T, ctx)
    if got is None or math.prod(got[0].out.aval.shape[1:]) != row_n or \
            math.prod(row) != row_n:
        return None
    sub, ke, W, kw = got
    rows = P.Sl(ke, ke + T, 1)
    whole = tuple(P.Sl(0, n, 1) for n in sub.out.aval.shape[1:])
    val, ref = sub.inputs if down else sub.inputs[::-1]
    want = _rows(y, P.Sl(k + 1, k + T + 1, 1), whole, ctx)
    if not (_same(_rows(val, rows, whole, ctx), want) and
            _same(_rows(ref, rows, whole, ctx), (u, k + 1))):
        return None

    def em(prim: P.Primitive, *xs: Atom, **params: Any) -> Atom:
        return ctx.emit(prim, xs, params, src)
    yr = _read_rows(y, k + 1, k + T + 1, ctx, src)
    terms = em(P.exp, em(P.sub, yr, last) if down else em(P.sub, last, yr))
    if W is not None:
        wr = _read_rows(W, kw, kw + T, ctx, src)
        terms = em(P.mul, terms, em(P.reshape, wr, shape=terms.aval.shape))
    whole_u = tuple(P.Sl(0, n, 1) for n in u.aval.shape[1:])
    first = em(P.getitem, u, idx=P.BasicIndex((P.Sl(k + 1, k + 2, 1),) + whole_u))
    guard = em(P.add, em(P.sub, first, first), em(P.sub, last, last))
    return em(P.reshape, terms, shape=(T,) + row), em(P.reshape, guard, shape=row)


def _same(r: tuple[Atom, int] | None, want: tuple[Atom, int] | None) -> bool:
    return r is not None and want is not None and r[0] is want[0] and r[1] == want[1]


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
    merged = _merged_terms(b, u, k, T, row, down, last, ctx, src)
    if merged is not None:
        terms, guard = merged
        total = em(P.add, em(P.reduce_sum, terms, axes=(0,)), guard)
    else:
        bp = b.aval.shape
        bb = b if b.aval.ndim == len(row) + 1 else \
            em(P.reshape, b, shape=bp[:1] + (1,) * (len(row) + 1 - len(bp)) + bp[1:])
        total = em(P.reduce_sum, em(P.mul, ratio(lo, T), bb), axes=(0,))
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
