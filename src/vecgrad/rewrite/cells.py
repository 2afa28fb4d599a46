"""Rewrite rules for writes into and reads from a grid at (row, col) lists: two or more
integer arrays over the leading axes address cells, which a scatter or a gather reaches
through the flattened leading axes with one index (np.bincount's and np.take's fast paths)
instead of NumPy's broadcast of several index arrays.

    x.at[r, c].add(u)   = x + segment_sum(u, r * W + c, H * W).reshape(H, W)   (no add into zeros)
    x[r, c]             = x.reshape(H * W, ...)[r * W + c]
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn


def _cells(idx: tuple, shape: tuple) -> tuple[np.ndarray, int] | None:
    """(flat positions, axes) of an index made of 1-d integer arrays of one length over the
    leading axes, whole slices after them (`G[r, c]`, `T[r, c, :]`): the cells' positions in
    the leading axes flattened (row-major), and how many axes those are (None otherwise)."""
    lead = 0
    while lead < len(idx) and idx[lead].__class__ is P.Adv:
        lead += 1
    if lead < 2 or any(k.__class__ is not P.Sl or k.start != 0 or k.step != 1 or len(k) != d
                       for k, d in zip(idx[lead:], shape[lead:])) or len(idx) != len(shape):
        return None
    arrs = [k.arr for k in idx[:lead]]
    if any(a.ndim != 1 or a.shape != arrs[0].shape for a in arrs):
        return None
    dims = shape[:lead]
    arrs = [np.where(a < 0, a + d, a) for a, d in zip(arrs, dims)]
    if any(a.size and (a.min() < 0 or a.max() >= d) for a, d in zip(arrs, dims)):
        return None
    return np.ravel_multi_index(arrs, dims).astype(np.int64), lead


def _is_zero(a: Any, ctx: Any) -> bool:
    if isinstance(a, Const):
        return a.value.size <= 1 << 22 and not a.value.any()
    d = ctx.def_of(a, P.full)
    return d is not None and d.params["value"] == 0


def scatter_into_cells(e: Eqn, ctx: Any) -> Any:
    """zeros.at[r, c].add(u) = segment_sum(u, r * W + c, H * W) reshaped (np.add.at's
    accumulation at repeated cells), and of segment_sum(v, i) = segment_sum(v, (r * W + c)[i]):
    one scatter into the flattened grid, where the per-cell sums were scattered again by
    two index arrays (values into a 2-D grid by (row, col) lists). Into a base x that is not
    zeros: x + that, where the cells are at least an eighth of x (an add over all of x)."""
    base, u = e.inputs
    shape = e.out.aval.shape
    cells = _cells(e.params["idx"], shape)
    if cells is None or u.aval.dtype != e.out.aval.dtype or base.aval != e.out.aval:
        return None
    flat, lead = cells
    zero = _is_zero(base, ctx)
    if u.aval.shape != (flat.size,) + shape[lead:] or \
            not zero and 8 * _flat_size(flat, shape[lead:]) < e.out.aval.size:
        return None  # (into a nonzero base: an add over all of it, worth it for many cells)
    inner = ctx.def_of(u, P.segment_sum)
    if inner is not None and inner.params["axis"] == 0 and ctx.reads(u) == 1:
        u, flat = inner.inputs[0], flat[np.asarray(inner.params["ids"].arr)]
    num = int(np.prod(shape[:lead]))
    s = ctx.emit(P.segment_sum, (u,), {"ids": P.Adv(flat), "axis": 0, "num": num}, e.src)
    if zero:
        return P.reshape, (s,), {"shape": shape}
    return P.add, (base, ctx.emit(P.reshape, (s,), {"shape": shape}, e.src)), {}


def gather_of_cells(e: Eqn, ctx: Any) -> Any:
    """x[r, c] = x.reshape(H * W, ...)[r * W + c]: one index into the flattened leading axes
    (a take, which gathers of it then compose with), where two index arrays broadcast
    together; only where the cells are at least an eighth of x (a reshape may copy x)."""
    x = e.inputs[0]
    shape = x.aval.shape
    cells = _cells(e.params["idx"], shape)
    if cells is None or 8 * _flat_size(cells[0], shape[cells[1]:]) < x.aval.size:
        return None
    flat, lead = cells
    rest = shape[lead:]
    r = ctx.emit(P.reshape, (x,), {"shape": (int(np.prod(shape[:lead])),) + rest}, e.src)
    return P.take, (r,), {"ids": P.Adv(flat), "axis": 0}


def _flat_size(flat: np.ndarray, rest: tuple) -> int:
    """The elements of the cells `flat` with trailing axes `rest`."""
    return int(flat.size * np.prod(rest, dtype=np.int64))


__all__ = ["gather_of_cells", "scatter_into_cells"]
