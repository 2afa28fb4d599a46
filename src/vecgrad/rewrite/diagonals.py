"""Rewrite rules for products of two gathers whose (row, row) pairs lie on a few diagonals.

A loop over the neighbours j of each row i (`for j in range(max(0, i - b), min(n, i + b +
1))`) batches into one product of two gathers, q[I] and k[J], with a pair (I, J) per term:
every term's rows copied twice, and in the gradient two segment sums of those copies. The
pairs of one shift d = J - I are runs of consecutive rows, so the product over them is a
product of two slices, q[lo:hi] and k[lo + d:hi + d]; a few such products, joined, then put
back into the terms' order by one gather of the (much smaller) results, are the same values.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Eqn
from ..primitives.linalg import parse_spec

MAX_PAIR_RUNS = 16  # products of slices a gathered product may become (each one call)
# Elements a run's gathers would copy, at least, for its slices to pay: a run costs a few
# calls forward and backward (~1-2 us each), a gathered element a few ns (its copy, and its
# segment sum in the gradient).
RUN_ELEMS = 512


def diagonal_runs(rows_x: np.ndarray, rows_y: np.ndarray) -> tuple[list, np.ndarray] | None:
    """The distinct pairs (rows_x, rows_y) as runs (lo, hi, d): rows lo..hi-1 of x against
    rows lo+d..hi+d-1 of y, in run order, and each pair's position in that order (None when
    they make more than MAX_PAIR_RUNS runs, or fewer than 4 terms per run on average: a
    call per run costs more than gathering so few terms)."""
    if rows_x.ndim != 1 or rows_x.shape != rows_y.shape or not rows_x.size:
        return None
    pairs = np.stack([rows_y.astype(np.int64) - rows_x, rows_x.astype(np.int64)], axis=1)
    uniq, where = np.unique(pairs, axis=0, return_inverse=True)  # (sorted by d, then row)
    d, r = uniq[:, 0], uniq[:, 1]
    cut = np.flatnonzero((np.diff(d) != 0) | (np.diff(r) != 1)) + 1
    if len(cut) + 1 > MAX_PAIR_RUNS or 4 * (len(cut) + 1) > len(pairs):
        return None
    starts, ends = np.r_[0, cut], np.r_[cut, len(uniq)]
    runs = [(int(r[a]), int(r[b - 1]) + 1, int(d[a])) for a, b in zip(starts, ends)]
    return runs, where.reshape(-1)


def einsum_of_diagonal_pairs(e: Eqn, ctx: Any) -> Any:
    """einsum(x[I], y[J]) over the terms' axis (the first letter of both operands and of the
    result) = the einsums of slices x[lo:hi], y[lo+d:hi+d] per run of pairs on one
    diagonal, joined, then gathered into the terms' order (see diagonal_runs)."""
    if len(e.inputs) != 2:
        return None
    (a, b), out = parse_spec(e.params["spec"])
    if not a or not b or not out or not a[0] == b[0] == out[0] or a[0] in a[1:] + b[1:] + out[1:]:
        return None
    tx, ty = (ctx.def_of(v, P.take) for v in e.inputs)
    if tx is None or ty is None or tx.params["axis"] != 0 or ty.params["axis"] != 0 or \
            any(ctx.reads(v) != 1 for v in e.inputs):
        return None
    found = diagonal_runs(np.asarray(tx.params["ids"].arr), np.asarray(ty.params["ids"].arr))
    if found is None:
        return None
    runs, where = found
    x, y = tx.inputs[0], ty.inputs[0]
    if where.size * max(x.aval.size // max(x.aval.shape[0], 1), 1) < RUN_ELEMS * len(runs):
        return None  # (rows too few or too short: the calls per run cost more than the gathers)

    def rows(v: Any, lo: int, hi: int) -> Any:
        idx = (P.Sl(lo, hi, 1),) + tuple(P.Sl(0, n, 1) for n in v.aval.shape[1:])
        return ctx.emit(P.getitem, (v,), {"idx": P.BasicIndex(idx)}, e.src)
    pieces = [ctx.emit(P.einsum, (rows(x, lo, hi), rows(y, lo + d, hi + d)),
                       {"spec": e.params["spec"]}, e.src) for lo, hi, d in runs]
    joined = pieces[0] if len(pieces) == 1 else \
        ctx.emit(P.concatenate, tuple(pieces), {"axis": 0}, e.src)
    if np.array_equal(where, np.arange(joined.aval.shape[0])):
        return joined
    return P.take, (joined,), {"ids": P.Adv(where.astype(np.intp)), "axis": 0}


__all__ = ["MAX_PAIR_RUNS", "RUN_ELEMS", "diagonal_runs", "einsum_of_diagonal_pairs"]
