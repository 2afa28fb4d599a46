"""Segmented scans along axis 0: a prefix sum (`segment_cumsum`) or a first-order affine
recurrence (`segment_affine`) restarted at every run start. The runs are consecutive rows; a
boolean `starts` (one per row) marks where each begins (row 0 always does). Forward:

    c[i] = b[i]                      where row i starts a run,
    c[i] = a[i] * c[i-1] + b[i]      otherwise (a = 1 for segment_cumsum);

`reverse=True` is the transposed map, each run scanned from its last row back:

    c[i] = b[i] + a[i+1] * c[i+1]    where row i+1 lies in row i's run, else c[i] = b[i].

So each one's VJP is the other direction with the same a and starts (the adjoint of the
recurrence), and a's cotangent is that times the neighbour state (zero at a run's first row,
where a is not used). Row i's rate never meets another run's state: no multiply by 0 selects,
so an inf or a NaN stays in its run as in the loop it came from (batch/rmwreads.py).

NumPy runs it on a padded (longest run x runs) layout, each run's rows counted from its
first (forward) or its last (reverse), so the padding always follows a run in the direction
scanned: the scan along the padded axis is np.cumsum (the loop's own order of additions,
exactly) or one add or multiply-add per step where the runs are short or the rows wide, else
Hillis-Steele doubling along the runs; where padding would cost more than a few times the
rows (one long run among many short ones), the doubling runs on the rows themselves with
each row's rank in its run. The last layout is kept (checked against the starts): a
gradient scans forward, then back with the same starts.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ComplexError, ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import logical_or, mul, where
from .scans import _sum_to, shift_down
from .structural import broadcast_to, full, reshape, transpose

__all__ = ["segment_affine", "segment_cumsum"]


# ------------------------------------------------------------------ the NumPy kernels

def runs(starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each run's first row, each row's run, and each row's rank in its run."""
    s = np.asarray(starts, bool).copy()
    if s.size:
        s[0] = True
    first = np.flatnonzero(s)
    run = np.cumsum(s, dtype=np.intp)
    run -= 1
    rank = np.arange(len(s))
    rank -= first[run]
    return first, run, rank


class _Layout:
    """The runs of one `starts`: R runs of at most M rows; `at(reverse)` each row's place in
    the rank-major (M, R) layout, counted from its run's first row (forward) or last
    (reverse), so that a run's padding always comes after it in the direction scanned."""

    __slots__ = ("M", "R", "_at", "first", "rank", "run", "starts")

    def __init__(self, starts: np.ndarray):
        self.starts = starts.copy()
        self.first, self.run, self.rank = runs(starts)
        self.R, self.M = len(self.first), int(self.rank.max()) + 1
        self._at: dict = {}

    def at(self, reverse: bool) -> np.ndarray:
        at = self._at.get(reverse)
        if at is None:
            if reverse:  # (rows from their run's last: its length - 1 - rank)
                ends = np.append(self.first[1:], len(self.rank))
                at = ends[self.run] - 1 - self.first[self.run]
                at -= self.rank
            else:
                at = self.rank.copy()
            at *= self.R
            at += self.run
            self._at[reverse] = at
        return at


_LAST: list = [None]  # (the last layout: a gradient scans one way then back with one starts)


def layout(starts: np.ndarray) -> _Layout:
    s = np.asarray(starts, bool)
    last = _LAST[0]
    if last is not None and last.starts.shape == s.shape and np.array_equal(last.starts, s):
        return last
    lay = _LAST[0] = _Layout(s)
    return lay


def flipped(a: np.ndarray | None, b: np.ndarray, starts: np.ndarray) -> tuple:
    """The reverse scan as a forward one: rows reversed, each run's last row its start, and
    row j's rate the one that joined it to the row after it (a[L-j]; row 0's is not used)."""
    L = len(starts)
    if not L:
        return a, b, starts
    ends = np.empty(L, bool)
    ends[:-1] = starts[1:]
    ends[-1] = True
    if a is not None:
        a = np.concatenate([a[:1], a[:0:-1]])
    return a, b[::-1], ends[::-1]


def _doubling(A: np.ndarray | None, B: np.ndarray, rank: np.ndarray | None, M: int
              ) -> np.ndarray:
    """Hillis-Steele along axis 0 (B and A modified in place): after the step of distance k
    each entry holds its run's map over the 2k entries ending at it (fewer at the run's
    start), so a run's first rate is never used. With `rank` (the rows flat), an entry closer
    than k to its run's start takes nothing from the one k before it."""
    k = 1
    while k < M:
        prev = B[:-k] if A is None else A[k:] * B[:-k]
        if rank is not None:
            same = (rank[k:] >= k).reshape((-1,) + (1,) * (B.ndim - 1))
            prev = np.where(same, prev, 0)
        B[k:] += prev
        if A is not None and 2 * k < M:
            pa = A[k:] * A[:-k]
            A[k:] = pa if rank is None else np.where(same, pa, A[k:])
        k *= 2
    return B


def scan(a: np.ndarray | None, b: np.ndarray, starts: np.ndarray, reverse: bool
         ) -> np.ndarray:
    """The segmented scan (module doc) of b (L, *cell); a broadcast to b's shape, or None (a
    prefix sum)."""
    L, cell = b.shape[0], b.shape[1:]
    if L == 0:
        return b.copy()
    lay = layout(starts)
    R, M = lay.R, lay.M
    with np.errstate(all="ignore"):
        if R * M > 8 * L + 64:  # (padding would cost more than the rows: scan them flat)
            if reverse:
                a, bf, sf = flipped(a, b, np.asarray(starts))
                return _doubling(None if a is None else a.copy(), bf.copy(), runs(sf)[2],
                                 M)[::-1]
            return _doubling(None if a is None else a.copy(), b.copy(), lay.rank, M)
        # (the rank-major layout (M, R): entry j of every run in one contiguous row, so each
        # step along a run is one whole-row operation; a run's padding after it)
        at = lay.at(reverse)
        Bp = np.zeros((M * R,) + cell, b.dtype)
        Bp[at] = b
        Bp = Bp.reshape((M, R) + cell)
        wide = Bp[0].size >= 256
        if a is None and not wide:  # (each run's own additions, in the loop's order)
            np.cumsum(Bp, axis=0, out=Bp)
            return Bp.reshape((M * R,) + cell)[at]
        Ap = None
        if a is not None:
            Ap = np.ones((M * R,) + cell, b.dtype)
            Ap[at[:-1] if reverse else at] = a[1:] if reverse else a  # (reverse: row i's
            Ap = Ap.reshape((M, R) + cell)  # step takes in row i+1's state at rate a[i+1])
        if wide or M <= 8:
            # (one add or multiply-add per step, the loop's order: about a microsecond of
            # call each; NumPy's accumulate along axis 0 walks each of a wide row's columns
            # with its own strided loop, 10x slower at 64 runs of 16 values)
            for j in range(1, M):
                Bp[j] += Bp[j - 1] if Ap is None else Ap[j] * Bp[j - 1]
        else:
            _doubling(Ap, Bp, None, M)
        return Bp.reshape((M * R,) + cell)[at]


# ------------------------------------------------------------------ the primitives

def _shape(name: str, b: Aval, starts: Aval, a: Aval | None = None) -> Aval:
    L = b.shape[0] if b.ndim else -1
    if b.ndim < 1 or starts.shape != (L,) or starts.dtype != np.bool_:
        raise ShapeError(f"{name}: values {b.shape} need a leading row axis and starts a "
                         f"boolean per row (got {starts.shape} {starts.dtype})")
    kinds = {b.dtype.kind} | ({a.dtype.kind} if a is not None else set())
    if "c" in kinds:
        raise ComplexError(name)
    if kinds != {"f"}:
        raise ShapeError(f"{name}: real floating values only (got {b.dtype})")
    if a is None:
        return Aval(b.shape, b.dtype)
    if a.ndim != b.ndim or a.shape[0] != L:
        raise ShapeError(f"{name}: rates {a.shape} need the values' rows and rank {b.shape}")
    try:
        cell = np.broadcast_shapes(a.shape[1:], b.shape[1:])
    except ValueError:
        raise ShapeError(f"{name}: rates {a.shape} and values {b.shape} do not broadcast") \
            from None
    return Aval((L,) + cell, np.result_type(a.dtype, b.dtype))


def _cumsum_impl(b: np.ndarray, starts: np.ndarray, reverse: bool = False) -> np.ndarray:
    return scan(None, np.asarray(b), np.asarray(starts), reverse)


def _affine_impl(a: np.ndarray, b: np.ndarray, starts: np.ndarray, reverse: bool = False
                 ) -> np.ndarray:
    out = _shape("segment_affine", Aval(np.shape(b), np.asarray(b).dtype),
                 Aval(np.shape(starts), np.asarray(starts).dtype),
                 Aval(np.shape(a), np.asarray(a).dtype))
    a = np.broadcast_to(np.asarray(a, out.dtype), out.shape)
    b = np.broadcast_to(np.asarray(b, out.dtype), out.shape)
    return scan(a, b, np.asarray(starts), reverse)


def _firsts(starts: Any) -> Any:
    """starts with row 0 marked, as a column for rows of `nd` axes."""
    L = starts.shape[0]
    return logical_or(starts, np.arange(L) == 0)


def _col(x: Any, nd: int) -> Any:
    return reshape(x, shape=x.shape + (1,) * (nd - 1)) if nd > 1 else x


def _cumsum_vjp(g: Any, ans: Any, b: Any, starts: Any, reverse: bool = False) -> tuple:
    return (segment_cumsum(g, starts, reverse=not reverse), None)


def _affine_vjp(g: Any, ans: Any, a: Any, b: Any, starts: Any, reverse: bool = False
                ) -> tuple:
    # the recurrence's adjoint is the other direction's scan with the same rates; a[i] scaled
    # the state next to row i (before it forward, the row's own one in reverse) into row i's
    # (forward) or row i-1's (reverse) state, so its cotangent takes that row's lam
    lam = segment_affine(a, g, starts, reverse=not reverse)
    first = _col(_firsts(starts), g.ndim)
    zero = full(shape=(), dtype=g.dtype, value=0.0)
    ga = mul(lam, shift_down(ans, zero)) if not reverse else mul(shift_down(lam, zero), ans)
    return (_sum_to(where(first, zero, ga), a), _sum_to(lam, b), None)


def _step_first(x: Any) -> Any:
    return transpose(x, perm=(1, 0) + tuple(range(2, x.ndim)))


def _batch(prim: Primitive, n: int, batched: tuple, ins: tuple, reverse: bool) -> Any:
    """Instances on axis 0. Shared starts: the instance axis goes right after the row axis
    (a wider cell). Starts per instance: the instances' rows end to end, each instance's
    row 0 a start."""
    *vals, starts = ins
    if not batched[-1]:
        vals = [_step_first(v) if f else reshape(v, shape=v.shape[:1] + (1,) + v.shape[1:])
                for v, f in zip(vals, batched)]
        if not any(batched[:-1]):
            vals[-1] = broadcast_to(vals[-1], shape=vals[-1].shape[:1] + (n,) +
                                    vals[-1].shape[2:])
        return _step_first(prim(*vals, starts, reverse=reverse))
    L = starts.shape[1]
    out = prim.shape_rule(*[Aval(v.shape[f:], v.dtype) for v, f in zip(vals, batched)],
                          Aval((L,), np.dtype(bool)), reverse=reverse) \
        if prim is segment_affine else None
    cell = out.shape[1:] if out is not None else vals[0].shape[1 + batched[0]:]
    flat = []
    for v, f in zip(vals, batched):
        v = v if f else reshape(v, shape=(1,) + v.shape)
        v = broadcast_to(v, shape=(n, L) + cell)
        flat.append(reshape(v, shape=(n * L,) + cell))
    heads = np.zeros((n, L), bool)
    heads[:, 0] = True
    s = logical_or(reshape(starts, shape=(n * L,)), heads.reshape(n * L))
    return reshape(prim(*flat, s, reverse=reverse), shape=(n, L) + cell)


def _affine_shape(a: Aval, b: Aval, starts: Aval, reverse: bool = False) -> Aval:
    return _shape("segment_affine", b, starts, a)


segment_cumsum = register(Primitive(
    "segment_cumsum", _cumsum_impl,
    lambda b, starts, reverse=False: _shape("segment_cumsum", b, starts), _cumsum_vjp,
    lambda n, batched, b, starts, reverse=False: _batch(segment_cumsum, n, batched,
                                                        (b, starts), reverse)))
segment_affine = register(Primitive(
    "segment_affine", _affine_impl, _affine_shape, _affine_vjp,
    lambda n, batched, a, b, starts, reverse=False: _batch(segment_affine, n, batched,
                                                           (a, b, starts), reverse)))
