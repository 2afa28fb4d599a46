"""NumPy kernels of the gathers and scatter-adds: a segment sum or a scatter-add through
integer arrays runs as whichever plan measures fastest for its positions and shapes (chosen
once, when compiling); `strided` is a view; `strided_add` adds into a dead buffer in place."""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ...ir import Aval
from ...primitives import gathers as G
from ...primitives.structural import Adv, Sl, to_key
from .lowering import VIEW, Lowering
from .timing import fastest, time_call


def _segment_plans(ids: np.ndarray, num: int, shape: tuple[int, ...], axis: int,
                   dtype: np.dtype) -> list[Callable]:
    """Candidate ways to run one segment sum; each takes v and returns the result."""
    rest = shape[:axis] + shape[axis + 1:]
    R = int(np.prod(rest, dtype=np.int64))
    E = len(ids)
    out_shape = (num,) + rest

    def rows(v: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(G._move(v, axis)).reshape(E, R)

    def finish(o: np.ndarray) -> np.ndarray:
        o = o.reshape(out_shape)
        return np.moveaxis(o, 0, axis) if axis else o

    order = np.argsort(ids, kind="stable")
    s = ids[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]]) if E else np.zeros(0, np.int64)
    uniq = s[starts] if E else s
    cands: list[Callable] = []

    def reduceat(v: np.ndarray) -> np.ndarray:
        o = np.zeros((num, R), dtype)
        if E:
            o[uniq] = np.add.reduceat(rows(v)[order], starts, axis=0)
        return finish(o)
    cands.append(reduceat)
    if len(uniq) == E:  # distinct ids: a plain scatter
        def scatter(v: np.ndarray) -> np.ndarray:
            o = np.zeros((num, R), dtype)
            o[ids] = rows(v)
            return finish(o)
        cands.append(scatter)
    if num * R < 1 << 24:
        flat_ids = (ids[:, None] * R + np.arange(R)).ravel() if R > 1 else ids

        def bincount(v: np.ndarray) -> np.ndarray:
            o = np.bincount(flat_ids, weights=rows(v).ravel(), minlength=num * R)
            return finish(o.astype(dtype, copy=False).reshape(num, R))
        if dtype.kind == "f":
            cands.append(bincount)
    if num * E <= 1 << 20:
        onehot = np.zeros((num, E), dtype)
        onehot[ids, np.arange(E)] = 1

        def product(v: np.ndarray) -> np.ndarray:
            return finish(onehot @ rows(v))
        cands.append(product)
    return cands


def _segment_sum(avals: list[Aval], ids: Adv, axis: int, num: int) -> Callable:
    v = avals[0]
    cands = _segment_plans(ids.arr, num, v.shape, axis, v.dtype)
    return cands[0] if len(cands) == 1 else fastest(cands, [v.shape], [v.dtype])


# ------------------------------------------------------- scatter-add through integer arrays

@functools.lru_cache(maxsize=256)
def scatter_add_plan(idx: tuple, shape: tuple[int, ...], dtype: np.dtype) -> Callable:
    """`f(base, v)`: base[idx] += v in place for an integer-array index, repeated positions
    accumulating (as `np.add.at`, which is the reference). Distinct positions take a buffered
    fancy add; repeated ones are summed per position first (by `np.bincount` over elements,
    or a measured segment sum over rows when the positions index whole rows)."""
    key = to_key(idx)
    size = int(np.prod(shape, dtype=np.int64))
    flat = np.arange(size, dtype=np.int64).reshape(shape)[key]
    uniq, inv = np.unique(flat.ravel(), return_inverse=True)
    if len(uniq) == flat.size:
        def distinct(base: np.ndarray, v: np.ndarray) -> np.ndarray:
            base[key] += v
            return base
        return distinct
    if dtype.kind not in "fc":
        def exact(base: np.ndarray, v: np.ndarray) -> np.ndarray:
            np.add.at(base, key, v)
            return base
        return exact
    inv = inv.reshape(-1)

    def by_element(base: np.ndarray, v: np.ndarray) -> np.ndarray:
        vv = np.broadcast_to(v, flat.shape).ravel()
        if dtype.kind == "c":
            s = np.bincount(inv, vv.real, len(uniq)) + 1j * np.bincount(inv, vv.imag, len(uniq))
        else:
            s = np.bincount(inv, vv, len(uniq))
        base.flat[uniq] += s.astype(dtype, copy=False)
        return base
    cands = [by_element]
    rows = _row_plan(idx, shape, dtype, flat)
    if rows is not None:
        cands.append(rows)
    if len(cands) == 1:
        return by_element
    return min(cands, key=lambda c: time_call(c, [np.zeros(shape, dtype),
                                                   np.ones(flat.shape, dtype)]))


def _row_plan(idx: tuple, shape: tuple[int, ...], dtype: np.dtype, flat: np.ndarray
              ) -> Callable | None:
    """Positions that pick whole rows (one leading 1-D integer array, full slices after):
    a measured segment sum over the rows, then one buffered add into the distinct rows."""
    if not (isinstance(idx[0], Adv) and idx[0].arr.ndim == 1 and all(
            isinstance(k, Sl) and k.start == 0 and k.step == 1 and len(k) == d
            for k, d in zip(idx[1:], shape[1:])) and len(idx) == len(shape)):
        return None
    ids = idx[0].arr
    uniq, inv = np.unique(ids, return_inverse=True)
    seg = _segment_plans(inv.reshape(-1), len(uniq), (len(ids),) + shape[1:], 0, dtype)
    run = seg[0] if len(seg) == 1 else fastest(seg, [(len(ids),) + shape[1:]], [dtype])

    def rows(base: np.ndarray, v: np.ndarray) -> np.ndarray:
        base[uniq] += run(np.broadcast_to(v, flat.shape))
        return base
    return rows


def _strided_add_inplace(base: np.ndarray, v: np.ndarray, start: tuple, dims: tuple
                         ) -> np.ndarray:
    v = np.asarray(v)
    if np.result_type(base, v) != base.dtype:  # (a complex v into a real buffer: a new one)
        return G._strided_add_impl(base, v, start, dims)
    return G._add_into(base, v, start, dims)


LOWERINGS = {
    "strided": VIEW,
    "strided_add": Lowering(inplace=_strided_add_inplace),
    "take": Lowering(lower=lambda avals, ids, axis: functools.partial(np.take, indices=ids.arr,
                                                                      axis=axis)),
    "segment_sum": Lowering(lower=_segment_sum),
}
