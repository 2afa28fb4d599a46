"""Values read only at a few small places: each read computed from the parts it needs.

narrow.py computes a read v[r] from its operands' parts where v has that one reader. After a
rule has left a large value read at a few small places only (the first and last steps of a
scan whose steady steps became a closed form: rewrite/telescope.py), each of them is
computed from its operands' parts, through elementwise operations and the views batching
writes:

    f(a, b)[r]              = f(a[r_a], b[r_b])          f elementwise
    strided(x)[r]           = x[r']                      r stepping along x's own axes
    concatenate(xs, a)[r]   = concatenate(xs_i[r_i], a)  the parts r meets
    take(x, ids, a)[r]      = take(x[r'], ids[r_a], a')  (x[r'] where r_a picks one; and
                                                          x[:, ids] alike)
    x[r1][r2]               = x[r]                       one view
    reshape(x)[r]           = reshape(x[r'])             unit axes added or dropped

Applied only where the value's readers are all basic reads that together read at most 1/8
of it: every one is narrowed in one sweep, so the value goes dead, and the work only
shrinks. The narrowed reads meet the value's operands in the next sweep (runrows.py).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Eqn
from .narrow import _read, _sub_index


def _basic(idx: Any, ndim: int) -> bool:
    return P.is_basic(idx) and len(idx) == ndim and \
        all(isinstance(k, (int, P.Sl)) for k in idx)


def _small_reads(v: Any, ctx: Any) -> bool:
    """Every reader of v is a basic read, and all of them together read at most 1/8 of v."""
    got = ctx.memo.get(("fewreads", v))
    if got is None:
        qs = ctx.all_readers.get(v, ())
        got = bool(qs) and all(q.prim is P.getitem and _basic(q.params["idx"], v.aval.ndim)
                               for q in qs) and \
            8 * sum(math.prod(q.out.aval.shape) for q in qs) <= math.prod(v.aval.shape)
        ctx.memo[("fewreads", v)] = got
    return got


def _of(e: Eqn, prim: P.Primitive | None, ctx: Any) -> Eqn | None:
    """The definition of e's operand (of `prim`), where e reads it at a few small places."""
    d = ctx.def_of(e.inputs[0], prim)
    ok = d is not None and _basic(e.params["idx"], d.out.aval.ndim) and \
        _small_reads(d.out, ctx)
    return d if ok else None


def _range(first: int, n: int, step: int) -> P.Sl:
    """The slice of n positions from `first` by `step` (n >= 1; its stop -1 where it runs
    down to 0, as P.Sl has it)."""
    return P.Sl(first, first + (n - 1) * step + (1 if step > 0 else -1), step)


def few_reads_of_elementwise(e: Eqn, ctx: Any) -> Any:
    d = _of(e, None, ctx)
    if d is None or not d.prim.elementwise or len(d.inputs) > 3:
        return None
    r, out = tuple(e.params["idx"]), d.out.aval.shape
    return d.prim, tuple(_read(ctx, a, _sub_index(a.aval.shape, out, r), e.src)
                         for a in d.inputs), dict(d.params)


def read_of_windows(e: Eqn, ctx: Any) -> Any:
    """strided(x)[r] = x[r'] where the read steps along x's own axes, one each in order (a
    window's row: batching's windows of a stacked carry read at one step)."""
    w = ctx.def_of(e.inputs[0], P.strided)
    idx = e.params["idx"]
    if w is None or not _basic(idx, len(w.params["dims"])):
        return None
    at = list(w.params["start"])
    axes: list = []
    for k, (_, st) in zip(idx, w.params["dims"]):
        first = k if isinstance(k, int) else k.start
        at = [a + first * s for a, s in zip(at, st)]
        if isinstance(k, P.Sl):
            nz = [j for j, s in enumerate(st) if s]
            if len(nz) != 1 or len(k) == 0 or (axes and axes[-1][0] >= nz[0]):
                return None
            axes.append((nz[0], len(k), st[nz[0]] * k.step))
    new: list = list(at)
    for j, n, step in axes:
        new[j] = _range(at[j], n, step)
    return P.getitem, (w.inputs[0],), {"idx": P.BasicIndex(tuple(new))}


def few_reads_of_concatenate(e: Eqn, ctx: Any, d: Eqn | None = None) -> Any:
    d = d or _of(e, P.concatenate, ctx)
    if d is None:
        return None
    a, idx = d.params["axis"], tuple(e.params["idx"])
    k = idx[a]
    if isinstance(k, P.Sl) and (k.step != 1 or len(k) == 0):
        return None
    lo, hi = (k, k + 1) if isinstance(k, int) else (k.start, k.stop)
    parts, at = [], 0
    for x in d.inputs:
        n = x.aval.shape[a]
        s, t = max(lo, at), min(hi, at + n)
        if s < t:
            local = s - at if isinstance(k, int) else P.Sl(s - at, t - at, 1)
            parts.append(_read(ctx, x, idx[:a] + (local,) + idx[a + 1:], e.src))
        at += n
    if len(parts) == 1:
        return parts[0]
    axis = sum(1 for j in idx[:a] if isinstance(j, P.Sl))
    return P.concatenate, tuple(parts), {"axis": axis}


def read_of_one_part(e: Eqn, ctx: Any) -> Any:
    """concatenate(xs, a)[.., i, ..] = xs_i[.., 0, ..], xs_i one row along a: batching's
    stacked carries read back one by one, at any number of reads (a view of the part, and the
    join may die). Slices of longer parts are left to the few-reads sweeps: a padded
    signal's join read at its middle measured 5-9% slower read from its parts (causal_*,
    residual_conv_stack)."""
    d = ctx.def_of(e.inputs[0], P.concatenate)
    if d is None or not _basic(e.params["idx"], d.out.aval.ndim):
        return None
    k = e.params["idx"][d.params["axis"]]
    at = 0
    for x in d.inputs:
        if isinstance(k, int) and at == k and x.aval.shape[d.params["axis"]] == 1:
            return few_reads_of_concatenate(e, ctx, d)
        at += x.aval.shape[d.params["axis"]]
    return None


def _gather(d: Eqn) -> tuple[int, np.ndarray] | None:
    """(axis, ids) for d = take(x, ids, axis) or x[:, .., ids, .., :] (one 1-D array)."""
    if d.prim is P.take:
        return d.params["axis"], d.params["ids"].arr
    idx = d.params["idx"] if d.prim is P.getitem else ()
    adv = [j for j, k in enumerate(idx) if isinstance(k, P.Adv)]
    x = d.inputs[0].aval.shape
    if len(adv) != 1 or len(idx) != len(x) or idx[adv[0]].arr.ndim != 1 or not all(
            isinstance(k, P.Sl) and k == P.Sl(0, n, 1)
            for j, (k, n) in enumerate(zip(idx, x)) if j != adv[0]):
        return None
    ids = idx[adv[0]].arr
    return adv[0], np.where(ids < 0, ids + x[adv[0]], ids)


def few_reads_of_take(e: Eqn, ctx: Any) -> Any:
    d = _of(e, None, ctx)
    g = _gather(d) if d is not None else None
    if g is None:
        return None
    (a, ids), idx = g, tuple(e.params["idx"])
    k = idx[a]
    if isinstance(k, int):
        return P.getitem, (d.inputs[0],), {"idx": P.BasicIndex(
            idx[:a] + (int(ids[k]),) + idx[a + 1:])}
    if len(k) == 0:
        return None
    picked = np.asarray(ids)[np.arange(k.start, k.stop, k.step)]  # (P.Sl: a range)
    lo, hi = int(picked.min()), int(picked.max()) + 1  # (the rows between the picked ones)
    x = _read(ctx, d.inputs[0], idx[:a] + (P.Sl(lo, hi, 1),) + idx[a + 1:], e.src)
    axis = sum(1 for j in idx[:a] if isinstance(j, P.Sl))
    return P.take, (x,), {"ids": P.Adv(picked - lo), "axis": axis}


def read_of_read(e: Eqn, ctx: Any) -> Any:
    """x[r1][r2] = x[r], both basic (ints and slices): one view."""
    d = ctx.def_of(e.inputs[0], P.getitem)
    if d is None or not _basic(d.params["idx"], d.inputs[0].aval.ndim) or \
            not _basic(e.params["idx"], d.out.aval.ndim):
        return None
    second = iter(e.params["idx"])
    new: list = []
    for k in d.params["idx"]:
        if isinstance(k, int):
            new.append(k)
            continue
        j = next(second)
        if isinstance(j, int):
            new.append(k.start + (j + len(k) if j < 0 else j) * k.step)
        elif len(j) == 0:
            return None
        else:
            new.append(_range(k.start + j.start * k.step, len(j), k.step * j.step))
    return P.getitem, (d.inputs[0],), {"idx": P.BasicIndex(tuple(new))}


def few_reads_of_unit_reshape(e: Eqn, ctx: Any) -> Any:
    """reshape(x)[r] = reshape(x[r']), the reshape adding or dropping unit axes only."""
    d = _of(e, P.reshape, ctx)
    if d is None:
        return None
    x, y = d.inputs[0].aval.shape, d.out.aval.shape
    idx = e.params["idx"]
    if [n for n in x if n != 1] != [n for n in y if n != 1] or any(
            n == 1 and k not in (0, P.Sl(0, 1, 1)) for k, n in zip(idx, y)):
        return None
    kept = iter([k for k, n in zip(idx, y) if n != 1])
    r = tuple(next(kept) if n != 1 else P.Sl(0, 1, 1) for n in x)
    v = _read(ctx, d.inputs[0], r, e.src)
    return v if v.aval.shape == e.out.aval.shape else \
        (P.reshape, (v,), {"shape": e.out.aval.shape})


def whole_read_of_reshape(e: Eqn, ctx: Any) -> Any:
    """reshape(x)[r] = reshape(x), r reading every element (unit axes at 0 or 0:1, the
    others whole): what a part of a join of reshaped values becomes (read_of_one_part)."""
    d = ctx.def_of(e.inputs[0], P.reshape)
    idx = e.params["idx"]
    if d is None or not _basic(idx, d.out.aval.ndim) or any(
            k not in ((0, P.Sl(0, 1, 1)) if n == 1 else (P.Sl(0, n, 1),))
            for k, n in zip(idx, d.out.aval.shape)):
        return None
    return P.reshape, (d.inputs[0],), {"shape": e.out.aval.shape}


__all__ = ["few_reads_of_concatenate", "few_reads_of_elementwise", "few_reads_of_take",
           "few_reads_of_unit_reshape", "read_of_one_part", "read_of_read", "read_of_windows",
           "whole_read_of_reshape"]
