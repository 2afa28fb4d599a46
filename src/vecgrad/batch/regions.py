"""Index algebra for batching: what region of an array an index selects, composed and compared.

A normalized basic index (`primitives.normalize_index`) has one entry per array axis: an int,
an `Sl` (start, stop, step), or None (a new axis, which selects nothing). The batching pass
needs four things of such indices:

- `compose(S, I)`: the index of `x[S][I]` in `x` (a view read or written through again);
- `relative(W, R)`: the index of `x[R]` inside `x[W]` when R's region lies inside W's (a read
  served by the value a write stored);
- `split(idx)`: the index with its *positions* taken out. Ints and slice starts are positions;
  what stays (slice lengths and steps, the axes) is the pattern that groups operations;
- `track_key(idx, ndim)`: a NumPy index of the first `ndim` axes (the axes a buffer's region
  tracking keeps, see `deps`).
"""
from __future__ import annotations

import functools

from ..index import BasicIndex, ramp_as_basic
from ..primitives import Adv, Sl, to_key

INT = -1  # an int entry in a pattern: its value is a position


class SlPat(tuple):
    """A slice entry of a pattern: (length, step); its start is a position."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"sl[{self[0]}:{self[1]}]"


def _sl(start: int, n: int, step: int) -> Sl:
    stop = start + n * step
    return Sl(start, -1 if stop < 0 else stop, step)


_END = object()


def compose(outer: tuple, inner: tuple) -> tuple | None:
    """The index J with x[J] == x[outer][inner], or None (integer arrays, or a new axis of
    `outer` sliced to no elements). New axes (None) of either index stay new axes: `A[t]`
    then `[None, :]` is `A[t, None, :]`, a view that moves with t like `A[t]`."""
    if any(isinstance(k, Adv) for k in outer + inner):
        return None
    out: list = []
    it = iter(inner)
    for k in outer:
        if isinstance(k, int):
            out.append(k)
            continue
        j = next(it, _END)
        while j is None:  # inner's new axes before this axis
            out.append(None)
            j = next(it, _END)
        if j is _END:
            return None
        if k is None:  # an axis of length 1 that outer made: [0] drops it, [0:1] keeps it
            if isinstance(j, int):
                continue
            if len(j) != 1:
                return None
            out.append(None)
        elif isinstance(j, int):
            out.append(k.start + j * k.step)
        elif len(j):
            out.append(_sl(k.start + j.start * k.step, len(j), j.step * k.step))
        else:  # (an empty slice's start may lie outside the axis: none of its elements)
            out.append(Sl(0, 0, 1))
    rest = list(it)
    if any(j is not None for j in rest):
        return None
    return tuple(out + rest)


def relative(w: tuple, r: tuple) -> tuple | None:
    """The index J with x[r] == x[w][J] when r's region lies inside w's, else None."""
    if any(k is None or isinstance(k, Adv) for k in w + r) or len(w) != len(r):
        return None
    out: list = []
    for a, b in zip(w, r):
        if isinstance(a, int):
            if b != a:
                return None
            continue
        if isinstance(b, int):
            q, m = divmod(b - a.start, a.step)
            if m or not 0 <= q < len(a):
                return None
            out.append(q)
            continue
        n = len(b)
        if n == 0:
            out.append(Sl(0, 0, 1))
            continue
        q, m = divmod(b.start - a.start, a.step)
        last = b.start + (n - 1) * b.step
        q2, m2 = divmod(last - a.start, a.step)
        if m or m2 or not (0 <= q < len(a) and 0 <= q2 < len(a)):
            return None
        if n > 1 and b.step % a.step:
            return None
        out.append(_sl(q, n, b.step // a.step if n > 1 else 1))
    return tuple(out)


def split(idx: tuple) -> tuple[tuple, tuple[int, ...], tuple[int, ...]]:
    """(pattern, position axes, positions): ints become INT, slices SlPat(len, step), and the
    positions are the ints and slice starts, in axis order. (Batching splits every read's
    index; in a loop most indices are new, so a miss must be cheap: a dict, emptied when
    full, rather than an LRU's bookkeeping; and `x[i]` of a vector needs no table.)"""
    if len(idx) == 1 and idx[0].__class__ is int:
        return _INT1, _AXIS0, (idx[0],)
    s = _SPLITS.get(idx)
    if s is None:
        if len(_SPLITS) >= 65536:
            _SPLITS.clear()
            _PATTERNS.clear()
        s = _split(idx)
        pat = _PATTERNS.setdefault(s[0], s[0])  # (one object per pattern: see deps.build)
        s = _SPLITS[idx] = (pat, s[1], s[2])
    return s


_INT1, _AXIS0 = (INT,), (0,)
_SPLITS: dict[tuple, tuple] = {}
_PATTERNS: dict[tuple, tuple] = {}


def _split(idx: tuple) -> tuple[tuple, tuple[int, ...], tuple[int, ...]]:
    if idx.__class__ is not BasicIndex:  # a list that is a ramp reads as its slice:
        idx = ramp_as_basic(idx) or idx  # `x[[t, t + d, t + 2 d]]` moves with t
    pat, axes, vals = [], [], []
    for i, k in enumerate(idx):
        if isinstance(k, int):
            pat.append(INT)
            axes.append(i)
            vals.append(k)
        elif isinstance(k, Sl):
            pat.append(SlPat((len(k), k.step)))
            axes.append(i)
            vals.append(k.start)
        else:
            pat.append(k)
    return tuple(pat), tuple(axes), tuple(vals)


def join(pat: tuple, axes: tuple[int, ...], vals: tuple[int, ...]) -> tuple:
    """The inverse of `split`."""
    out = list(pat)
    for a, v in zip(axes, vals):
        k = pat[a]
        out[a] = v if k == INT else _sl(v, k[0], k[1])
    return tuple(out)


def is_full(k: object, d: int) -> bool:
    return isinstance(k, Sl) and k.start == 0 and k.step == 1 and len(k) == d


def restricted_ndim(idx: tuple, shape: tuple[int, ...]) -> int:
    """1 + the last array axis that `idx` does not take whole (0 if it takes every axis)."""
    n, ax = 0, 0
    for k in idx:
        if k is None:
            continue
        if not is_full(k, shape[ax]):
            n = ax + 1
        ax += 1
    return n


@functools.lru_cache(maxsize=65536)
def track_key(idx: tuple, ndim: int) -> tuple:
    """A NumPy index of the first `ndim` array axes of idx (new axes dropped)."""
    return to_key(tuple(k for k in idx if k is not None)[:ndim])


__all__ = ["INT", "SlPat", "compose", "is_full", "join", "relative", "restricted_ndim",
           "split", "track_key"]
