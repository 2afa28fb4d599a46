"""Reads of a reshaped view composed into one view of its base.

Batching a loop over `zip(x[:-1], x[1:])` (pairs, triples of neighbours) reads the windows of
width k of x, flattens them (`reshape(windows(x), (n * k,))`, a copy: the windows overlap)
and takes every k-th element from offset j: that is x[j:j + n], a plain slice. A read whose
positions are whole steps of a flattened group of the view's axes picks fixed positions on
the group's inner axes and a strided run on its outer axis, so it is itself a strided view of
the base: no copy of the windows (exact: the same elements). An elementwise function of the
flattened windows (`exp(a) + exp(b)` over the pairs) runs on x first, once per element of x
instead of once per window entry, and the reads then find the view.
"""
from __future__ import annotations

import math

from .. import primitives as P
from ..ir import Eqn
from .engine import Ctx


def _merged(view: tuple[int, ...], shape: tuple[int, ...]) -> list[list[int]] | None:
    """The view's axes each axis of `shape` flattens (consecutive runs, in order), or None
    where the reshape splits an axis (sizes of one taken as not merged: None)."""
    if 1 in view or 1 in shape or 0 in view:
        return None
    groups, a = [], 0
    for n in shape:
        g, p = [], 1
        while p < n and a < len(view):
            g.append(a)
            p *= view[a]
            a += 1
        if p != n:
            return None
        groups.append(g)
    return groups if a == len(view) else None


def _digits(r: int, sizes: list[int]) -> list[int]:
    """r as a multi-index over axes of `sizes` (C order)."""
    out = []
    for n in reversed(sizes):
        r, d = divmod(r, n)
        out.append(d)
    return out[::-1]


def read_of_reshaped_view(e: Eqn, c: Ctx) -> object:
    """reshape(strided(x))[r] = strided'(x), where r reads each flattened group of the view's
    axes at whole steps of its inner positions (`windows(x, k).reshape(-1)[j::k]` = x[j:j+n])."""
    idx = e.params["idx"]
    r = c.def_of(e.inputs[0], P.reshape)
    s = c.def_of(r.inputs[0], P.strided) if r is not None else None
    if s is None or len(idx) != r.out.aval.ndim or \
            not all(type(k) is int or isinstance(k, P.Sl) for k in idx):
        return None
    view, dims = s.out.aval.shape, s.params["dims"]
    groups = _merged(view, r.out.aval.shape)
    if groups is None or all(len(g) == 1 for g in groups):
        return None  # (a reshape that merges nothing: the read of a view, not of a copy)
    start = list(s.params["start"])

    def move(axis: int, by: int) -> None:
        for b, st in enumerate(dims[axis][1]):
            start[b] += by * st

    out = []
    for k, g in zip(idx, groups):
        inner = math.prod(view[a] for a in g[1:])
        first = k if type(k) is int else k.start
        if type(k) is not int and (len(k) == 0 or len(k) > 1 and k.step % inner):
            return None  # (an empty read, or steps that move the inner positions)
        for a, d in zip(g, _digits(first, [view[a] for a in g])):
            move(a, d)
        if type(k) is not int:
            step = k.step // inner if len(k) > 1 else 0
            out.append((len(k), tuple(step * st for st in dims[g[0]][1])))
    if not out:
        return None  # (one element: left to the reads of one element)
    params = {"start": tuple(start), "dims": tuple(out)}
    if P.strided.shape_rule(s.inputs[0].aval, **params) != e.out.aval:
        return None
    return P.strided, (s.inputs[0],), params


def elementwise_of_reshaped_view(e: Eqn, c: Ctx) -> object:
    """f(reshape(windows(x)), scalars) = reshape(windows(f(x, scalars))) where the windows
    overlap: f once per element of x, not once per window entry (batch/windows.py's
    elementwise_of_windows, through the flattening)."""
    big = [k for k, a in enumerate(e.inputs) if a.aval.ndim]
    if len(big) != 1:
        return None
    r = c.def_of(e.inputs[big[0]], P.reshape)
    s = c.def_of(r.inputs[0], P.strided) if r is not None else None
    if s is None or s.out.aval.size <= s.inputs[0].aval.size or \
            e.out.aval.shape != r.out.aval.shape or \
            _merged(s.out.aval.shape, r.out.aval.shape) is None:
        return None
    ins = tuple(s.inputs[0] if k == big[0] else a for k, a in enumerate(e.inputs))
    y = c.emit(e.prim, ins, e.params, e.src)
    if y.aval.shape != s.inputs[0].aval.shape:
        return None
    v = c.emit(P.strided, (y,), s.params, e.src)
    return P.reshape, (v,), {"shape": e.out.aval.shape}


__all__ = ["elementwise_of_reshaped_view", "read_of_reshaped_view"]
