"""Contractions with a few entries scattered into zeros (a one-hot vector and its kin).

The cotangent of a read at traced positions (`max(rows)` picks row i: argmax, then a gather)
is its values scattered into zeros: k = scatter_add_along(v, idx, size=n), m entries v[j] at
positions idx[j] of n. A VJP then contracts k with whole arrays, n * B multiply-adds where
m * B are not zeros:

    sum_a k[a] A[a, ..]  = sum_j v[j] A[idx[j], ..]          (the letter a contracted)
    k[a] B[..]           = scatter(v[j] B[..], idx, size=n)   (a kept: rows written in zeros)

The first gathers m rows of A and contracts them (dw = X[i] for the max over rows, not a pass
over X); the second computes the m nonzero rows and writes them into zeros (an outer product
of a one-hot and w: zeros with one row w). Repeated positions add, as the scatter adds them.
Exact up to the order of additions (the zeros added in the original add nothing). Taken where
m is at most n / SPARSE.
"""
from __future__ import annotations

import string
from typing import Any

from .. import primitives as P
from ..ir import Eqn
from ..primitives.linalg import make_spec, parse_spec

SPARSE = 4


def _scattered(k: Any, ctx: Any) -> tuple[Any, Any, int] | None:
    """k = scatter_add_along(v, idx, axis=0, size=n), 1-D, m = len(idx) <= n / SPARSE:
    (v, idx, n)."""
    s = ctx.def_of(k, P.scatter_add_along)
    if s is None or k.aval.ndim != 1:
        return None
    v, idx = s.inputs
    n = s.params["size"]
    if v.aval.shape != idx.aval.shape or idx.aval.ndim != 1 or \
            idx.aval.shape[0] * SPARSE > n:
        return None
    return v, idx, n


def einsum_of_scattered(e: Eqn, ctx: Any) -> Any:
    """einsum(.., scatter(v, idx, n) as 'a', ..) = the contraction of v with the entries at
    idx (module doc): operands reading 'a' are gathered at idx, and where 'a' is an output
    letter the m rows computed are scattered into zeros."""
    ins, out = parse_spec(e.params["spec"])
    for p, (k, s) in enumerate(zip(e.inputs, ins)):
        found = _scattered(k, ctx) if len(s) == 1 else None
        if found is not None:
            break
    else:
        return None
    v, idx, n = found
    a = s
    if a in out and any(a in t for q, t in enumerate(ins) if q != p):
        return None  # (a diagonal: left as it is)
    j = next(ch for ch in string.ascii_letters if ch not in e.params["spec"])
    m = idx.aval.shape[0]
    new_ins, operands = [], []
    for q, (x, t) in enumerate(zip(e.inputs, ins)):
        if q == p:
            operands.append(v)
        elif a in t:  # x at the scattered positions along a
            if t.count(a) != 1:
                return None
            ax = t.index(a)
            shape = tuple(m if d == ax else 1 for d in range(x.aval.ndim))
            at = ctx.emit(P.reshape, (idx,), {"shape": shape}, e.src)
            operands.append(ctx.emit(P.take_along, (x, at), {"axis": ax}, e.src))
        else:
            operands.append(x)
        new_ins.append(t.replace(a, j))
    rows = ctx.emit(P.einsum, tuple(operands), {"spec": make_spec(new_ins, out.replace(a, j))},
                    e.src)
    if a not in out:
        return rows if rows.aval == e.out.aval else None
    ax = out.index(a)
    if rows.aval.shape[:ax] + (n,) + rows.aval.shape[ax + 1:] != e.out.aval.shape or \
            rows.aval.dtype != e.out.aval.dtype:
        return None
    shape = tuple(m if d == ax else 1 for d in range(len(out)))
    at = ctx.emit(P.reshape, (idx,), {"shape": shape}, e.src)
    return P.scatter_add_along, (rows, at), {"axis": ax, "size": n}


__all__ = ["einsum_of_scattered"]
