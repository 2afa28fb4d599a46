"""Gathers move after the row-wise work they feed, when that work is then done on fewer rows.

    einsum(x[ids], y) = einsum(x, y)[ids]     ids along a letter free in the output, not in y
    x[a][b]           = x[a[b]]               two gathers along one axis: one
    einsum('ak,ak->a', x[I], y[J]) = (x @ y.T).ravel()[I * m + J]   dense pair sets

A loop that skips rows (`if not keep[i]: continue`, then `X[i] @ w`) batches as a gather of
the kept rows and a product on them; pieces of neighbour lists (`x[nb] @ W` per node) gather
each neighbour's row once per list it is in. The gather copies rows (2,120 of 3,000 rows of
32 floats) that the product then reads again, and its gradient scatters a cotangent as wide
as the copy back into the rows; with duplicates (2,744 list entries of 400 rows) the product
even runs on more rows than x has. Computed on x's own rows, the product is done once per
row, the gather copies the narrower result, and the gradient of the product is dense.

Only where that costs less: the product on x's rows reads no more than the gather would copy
(at least half of the rows gathered, or the gather read only here while repeating rows), and
its result is no wider per row than x's.

Dot products of row pairs (`np.dot(X[i], X[j])` over the pairs a mask keeps) are entries of
the Gram matrix x @ y.T. Where the pairs are dense enough in the (n, m) grid, one BLAS product
makes every entry and a gather picks the pairs' (its gradient: one scatter into the grid and
two products), where the gathers copy each pair's rows and the gradient scales and scatters
them back, several passes over (pairs, k). Chosen by a cost model (`dense_pairs_cheaper`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import primitives as P
from ..index import Adv
from ..ir import Eqn, Var
from ..primitives.linalg import parse_spec


def _list_index(e: Eqn) -> tuple[np.ndarray, int] | None:
    """(ids, axis) of a read `v[:, ids, :]` (one integer list, every other axis whole) or of
    `take(v, ids, axis)`; negative ids made positive."""
    if e.prim is P.take:
        return e.params["ids"].arr, e.params["axis"]
    idx, shape = e.params["idx"], e.inputs[0].aval.shape
    if P.is_basic(idx) or len(idx) != len(shape):
        return None
    j = None
    for q, (k, n) in enumerate(zip(idx, shape)):
        if k.__class__ is Adv and k.arr.ndim == 1 and j is None:
            j = q
        elif k.__class__ is not P.Sl or k.step != 1 or len(k) != n:
            return None
    if j is None:
        return None
    ids = idx[j].arr
    return np.where(ids < 0, ids + shape[j], ids), j


def gather_of(ctx: Any, a: Any) -> tuple[Var, Any, int] | None:
    """(x, ids, axis) when `a` is a gather of x's rows along one axis: ids an integer array
    (static), or a traced one of shape (m, 1, ..) read along axis 0, as `x[i]` for traced
    positions i traces (`take_along(x, i, 0)`, or `take_along(x[None], i, 1)` reshaped)."""
    d = ctx.def_of(a) if a.__class__ is Var else None
    if d is None:
        return None
    if d.prim is P.take or d.prim is P.getitem:
        g = _list_index(d)
        return None if g is None else (d.inputs[0], g[0], g[1])
    if d.prim is P.reshape:  # (x[None] gathered along axis 1, the unit axis dropped)
        t = ctx.def_of(d.inputs[0], P.take_along)
        r = ctx.def_of(t.inputs[0], P.reshape) if t is not None else None
        if r is None or t.params["axis"] != 1 or r.out.aval.shape != (1,) + r.inputs[0].aval.shape \
                or d.out.aval.shape != t.out.aval.shape[:1] + r.inputs[0].aval.shape[1:]:
            return None
        x, i = r.inputs[0], t.inputs[1]
        if i.aval.shape != t.out.aval.shape[:1] + (1,) * (x.aval.ndim):
            return None
        return x, i, 0
    if d.prim is P.take_along and d.params["axis"] == 0:
        x, i = d.inputs
        if i.aval.ndim == x.aval.ndim and all(n == 1 for n in i.aval.shape[1:]) and \
                d.out.aval.shape == i.aval.shape[:1] + x.aval.shape[1:]:
            return x, i, 0
    return None


def _gather_rows(ctx: Any, y: Any, ids: Any, q: int, src: Any) -> Any:
    """y's rows `ids` along axis q: a take (static ids) or a take_along (traced ids)."""
    if isinstance(ids, np.ndarray):
        return P.take, (y,), {"ids": Adv(ids), "axis": q}
    m = ids.aval.shape[0]
    shape = (1,) * q + (m,) + (1,) * (y.aval.ndim - q - 1)
    i = ctx.emit(P.reshape, (ids,), {"shape": shape}, src) if shape != ids.aval.shape else ids
    return P.take_along, (y, i), {"axis": q}


def einsum_of_gather(e: Eqn, ctx: Any) -> Any:
    """einsum(.., x[ids], ..) = einsum(.., x, ..)[ids] (module doc)."""
    ins, out = parse_spec(e.params["spec"])
    for k, a in enumerate(e.inputs):
        g = gather_of(ctx, a)
        if g is None:
            continue
        x, ids, j = g
        c = ins[k][j]
        if ins[k].count(c) != 1 or out.count(c) != 1 or \
                any(c in t for q, t in enumerate(ins) if q != k):
            continue
        n, m = x.aval.shape[j], a.aval.shape[j]
        w_in = math.prod(x.aval.shape) // max(n, 1)
        w_out = math.prod(e.out.aval.shape) // max(m, 1)
        if w_out > w_in or not (2 * m >= n if ctx.reads(a) == 1 else m > n):
            continue
        xs = tuple(x if q == k else b for q, b in enumerate(e.inputs))
        whole = ctx.emit(P.einsum, xs, dict(e.params), e.src)
        return _gather_rows(ctx, whole, ids, out.index(c), e.src)
    return None


# Costs per element, in units of one elementwise pass (measured with NumPy 2.4 on float64,
# one BLAS thread): a BLAS multiply-add in a (n, k) x (k, m) product, and a gathered pair's
# element through the forward and gradient of the gathers (copies, scaled copies, scatter-add).
DENSE_MAC = 0.06
SPARSE_PAIR_ELEMENT = 3.3
DENSE_PAIRS_MAX = 1 << 22  # grid entries (32 MB in float64)


def dense_pairs_cheaper(n: int, m: int, k: int, pairs: int) -> bool:
    """Whether the (n, m) Gram matrix and a gather of `pairs` entries cost at most half of
    the pairs' gathered rows of k elements each (the margin covers the model's error)."""
    grid = n * m
    return grid <= DENSE_PAIRS_MAX and 2 * grid * (1 + DENSE_MAC * k) <= \
        SPARSE_PAIR_ELEMENT * pairs * k


def einsum_of_pair_gathers(e: Eqn, ctx: Any) -> Any:
    """einsum('ak,ak->a', x[I], y[J]) = (x @ y.T).ravel()[I * m + J] (module doc)."""
    if len(e.inputs) != 2 or e.out.aval.dtype.kind != "f":
        return None
    ins, out = parse_spec(e.params["spec"])
    if len(ins[0]) != 2 or ins[0] != ins[1] or out != ins[0][:1]:
        return None
    ts = [ctx.def_of(a, P.take) for a in e.inputs]
    if any(t is None or t.params["axis"] != 0 or t.inputs[0].aval.ndim != 2 or
           ctx.reads(a) != 1 for t, a in zip(ts, e.inputs)):
        return None
    (x, y), (i, j) = [t.inputs[0] for t in ts], [t.params["ids"].arr for t in ts]
    (n, k), m = x.aval.shape, y.aval.shape[0]
    if i.ndim != 1 or not dense_pairs_cheaper(n, m, k, i.size):
        return None
    gram = ctx.emit(P.einsum, (x, y), {"spec": "ak,bk->ab"}, e.src)
    flat = ctx.emit(P.reshape, (gram,), {"shape": (n * m,)}, e.src)
    return P.take, (flat,), {"ids": Adv(np.where(i < 0, i + n, i) * m +
                                        np.where(j < 0, j + m, j)), "axis": 0}


def gather_of_gather(e: Eqn, ctx: Any) -> Any:
    """x[a][b] = x[a[b]] along one axis (module doc)."""
    outer = _list_index(e)
    inner = gather_of(ctx, e.inputs[0]) if outer is not None else None
    if inner is None or inner[2] != outer[1] or not isinstance(inner[1], np.ndarray):
        return None
    x, a, axis = inner
    return P.take, (x,), {"ids": Adv(a[outer[0]]), "axis": axis}


__all__ = ["dense_pairs_cheaper", "einsum_of_gather", "einsum_of_pair_gathers",
           "gather_of_gather"]
