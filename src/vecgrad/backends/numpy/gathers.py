"""NumPy kernels of the gathers and scatter-adds: a segment sum or a scatter-add through
integer arrays runs as whichever plan `kernels.choose` picks for its positions and shapes, once,
when compiling: measured on this machine the first time and read from the choice cache after,
or by a rough cost model in deterministic mode (no timing: the same code in every process);
`strided` is a view; `strided_add` adds into a dead buffer in place."""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable

import numpy as np

from ... import kernels
from ...ir import Aval
from ...primitives import gathers as G
from ...primitives import sorting as S
from ...primitives.structural import Adv, Sl, to_key
from .lowering import Lowering
from .timing import timings


def _segment_plans(ids: np.ndarray, num: int, shape: tuple[int, ...], axis: int,
                   dtype: np.dtype) -> tuple[list[Callable], bool]:
    """Candidate ways to run one segment sum, each taking v and returning the result; and
    whether the ids are CSR segments (sorted, filling every segment)."""
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

    sorted_ids = E > 0 and bool(np.all(s == ids))  # (CSR segments: no gather by `order`)
    every = len(uniq) == num  # (no empty segment: no zero-filled result to scatter into)

    # (single precision adds in double, as bincount does: a long segment's sum in float32
    # drifts by many ulps)
    acc = np.promote_types(dtype, np.float64) if dtype.kind in "fc" else None

    def reduceat(v: np.ndarray) -> np.ndarray:
        if sorted_ids and every:  # (along the axis in place: no copy of the values)
            return np.add.reduceat(v, starts, axis=axis, dtype=acc).astype(dtype, copy=False)
        r = rows(v) if sorted_ids else rows(v)[order]
        o = np.zeros((num, R), dtype)
        if E:
            o[uniq] = np.add.reduceat(r, starts, axis=0, dtype=acc)
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

        def add_at(v: np.ndarray) -> np.ndarray:  # (NumPy's 1-d fast path, float64 only:
            o = np.zeros(num * R, dtype)          # bincount sums float32 in float64)
            np.add.at(o, flat_ids, rows(v).ravel())
            return finish(o.reshape(num, R))
        if dtype.kind == "f":
            cands.append(bincount)
        if dtype == np.float64:
            cands.append(add_at)
    if num * E <= 1 << 20:
        onehot = np.zeros((num, E), dtype)
        onehot[ids, np.arange(E)] = 1

        def product(v: np.ndarray) -> np.ndarray:
            return finish(onehot @ rows(v))
        cands.append(product)
    return cands, sorted_ids and every


def _pick(family: str, cands: list[Callable], key: tuple, xs: Callable[[], list[np.ndarray]],
          model: Callable[[kernels.Machine], dict[str, float]]) -> Callable:
    """The candidate `kernels.choose` picks (by name): measured the first time on this
    machine (these plans' costs depend on the positions more than a model can say), the
    model's choice in deterministic mode."""
    if len(cands) == 1:
        return cands[0]
    by = {c.__name__: c for c in cands}
    key = key + (tuple(by),)  # (a choice stored before a new candidate existed is not taken)
    name = kernels.choose(family, key, lambda m: {n: model(m)[n] for n in by},
                          lambda: dict(zip(by, timings(cands, xs()))), tune=True)
    return by[name]


def _digest(a: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=12).hexdigest()


def _segment_model(E: int, R: int, num: int, itemsize: int, csr: bool = False) -> Callable:
    """Rough seconds of each segment-sum plan: passes over the E*R values and the num*R
    result, a sort's gather (none for `csr`: sorted ids filling every segment), bincount's
    int64 positions, the one-hot product's multiply-adds."""
    n, out = E * R, num * R
    passes = 1 if csr else 3

    def model(m: kernels.Machine) -> dict[str, float]:
        gemm = m.gemm64 if itemsize == 8 else m.gemm32
        return {"scatter": 2 * m.call + m.copy * 2 * (n + out) * itemsize,
                "reduceat": 4 * m.call + m.copy * (passes * n + out) * itemsize + m.loop * n,
                "bincount": 3 * m.call + 4 * m.loop * n + m.copy * (16 * n + 8 * out),
                "add_at": 3 * m.call + 3 * m.loop * n + m.copy * (10 * n + 8 * out),
                "product": 2 * m.call + gemm * num * n + m.copy * num * E * itemsize}
    return model


def _choose_segment(ids: np.ndarray, num: int, shape: tuple[int, ...], axis: int,
                    dtype: np.dtype) -> Callable:
    cands, csr = _segment_plans(ids, num, shape, axis, dtype)
    E = len(ids)
    R = int(np.prod(shape, dtype=np.int64)) // max(E, 1)
    return _pick("segment_sum", cands, (shape, axis, num, dtype.str, _digest(ids)),
                 lambda: [np.ones(shape, dtype)], _segment_model(E, R, num, dtype.itemsize, csr))


def _segment_sum(avals: list[Aval], ids: Adv, axis: int, num: int) -> Callable:
    v = avals[0]
    return _choose_segment(ids.arr, num, v.shape, axis, v.dtype)


# ------------------------------------------------------- scatter-add through integer arrays

@functools.lru_cache(maxsize=256)
def scatter_add_plan(idx: tuple, shape: tuple[int, ...], dtype: np.dtype) -> Callable:
    """`f(base, v)`: base[idx] += v in place for an integer-array index, repeated positions
    accumulating (as `np.add.at`, which is the reference). Distinct positions take a buffered
    fancy add; repeated ones take np.add.at itself, or are summed per position first (by
    `np.bincount` over elements, or a measured segment sum over rows when the positions index
    whole rows): whichever is measured fastest."""
    key = to_key(idx)
    size = int(np.prod(shape, dtype=np.int64))
    flat = np.arange(size, dtype=np.int64).reshape(shape)[key]
    uniq, inv = np.unique(flat.ravel(), return_inverse=True)
    if len(uniq) == flat.size:
        def distinct(base: np.ndarray, v: np.ndarray) -> np.ndarray:
            base[key] += v
            return base
        return distinct

    def add_at(base: np.ndarray, v: np.ndarray) -> np.ndarray:
        np.add.at(base, key, v)
        return base
    if dtype.kind not in "fc":
        return add_at
    cands = [_by_element(flat, uniq, inv.reshape(-1), size, dtype), add_at]
    rows = _row_plan(idx, shape, dtype, flat)
    if rows is not None:
        cands.append(rows)
    n, b = flat.size, dtype.itemsize

    def model(m: kernels.Machine) -> dict[str, float]:  # (rows: a segment sum and one add)
        return {"by_element": 3 * m.call + 4 * m.loop * n + m.copy * (16 + 2 * b) * n,
                "add_at": 2 * m.call + 3 * m.loop * n + m.copy * (10 + b) * n,
                "rows": 4 * m.call + m.loop * n + m.copy * 4 * b * n}
    return _pick("scatter_add", cands, (shape, dtype.str, _digest(flat)),
                 lambda: [np.zeros(shape, dtype), np.ones(flat.shape, dtype)], model)


def _by_element(flat: np.ndarray, uniq: np.ndarray, inv: np.ndarray, size: int,
                dtype: np.dtype) -> Callable:
    """The values summed per position by np.bincount, then added: over the whole base
    where it is not much larger than the values (one dense add), else at the positions hit.
    The base is this kernel's own (a contiguous copy, or a dead buffer)."""
    pos = flat.reshape(-1)
    dense = size <= 4 * pos.size

    def sums(vv: np.ndarray) -> np.ndarray:
        ids, num = (pos, size) if dense else (inv, len(uniq))
        if dtype.kind == "c":
            return np.bincount(ids, vv.real, num) + 1j * np.bincount(ids, vv.imag, num)
        return np.bincount(ids, vv, num)

    def by_element(base: np.ndarray, v: np.ndarray) -> np.ndarray:
        vv = v.reshape(-1) if v.shape == flat.shape else \
            np.broadcast_to(v, flat.shape).reshape(-1)
        s = sums(vv).astype(dtype, copy=False)
        out = base.reshape(-1) if base.flags.c_contiguous else base.flat
        if dense:
            out[...] += s  # (np.broadcast_to and base.flat: a third of the time before)
        else:
            out[uniq] += s
        return base
    return by_element


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
    run = _choose_segment(inv.reshape(-1), len(uniq), (len(ids),) + shape[1:], 0, dtype)

    def rows(base: np.ndarray, v: np.ndarray) -> np.ndarray:
        base[uniq] += run(np.broadcast_to(v, flat.shape))
        return base
    return rows


# ------------------------------------------------- take_along / scatter_add_along, decided once

def _take_along(avals: list[Aval], axis: int) -> Callable:
    """take_along's branch chosen when compiling from the operands' shapes (the impl decides
    on every call, several Python steps for a small program's gather)."""
    x, idx = avals
    if all(d == 1 for i, d in enumerate(idx.shape) if i != axis):
        if x.ndim == 1:
            return np.take
        return lambda x, i: np.take(x, i.reshape(-1), axis)
    if all(d == 1 for d in x.shape[:axis]) and all(d == 1 for d in idx.shape[axis + 1:]):
        # (an index per leading position into one array: the impl's second branch)
        xs, ishape = x.shape[axis:], idx.shape[:axis + 1]
        return lambda x, i: np.take(x.reshape(xs), i.reshape(ishape), 0)
    if x.ndim > 1 and idx.ndim == x.ndim and all(
            idx.shape[d] == x.shape[d] for d in range(x.ndim) if d != axis):
        return _flat_take_along(x.shape, idx.shape, axis)
    return functools.partial(S._take_along, axis=axis)


def _flat_offsets(shape: tuple, ishape: tuple, axis: int) -> tuple[np.ndarray, int]:
    """The flat (C-order) position in `shape` of index entry [j_0, .., j_a, ..] less
    idx * stride along `axis` (an array of ishape, computed once), and that stride."""
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    offs = np.zeros(ishape, np.intp)
    for d, n in enumerate(ishape):
        if d != axis:
            offs += (np.arange(n) * strides[d]).reshape((n,) + (1,) * (len(ishape) - d - 1))
    return offs, strides[axis]


def _flat_take_along(shape: tuple, ishape: tuple, axis: int) -> Callable:
    """take_along_axis of an index of x's shape off the axis as one np.take of flat positions
    (3x faster than its broadcast fancy index for (300, 16) rows); a negative or
    out-of-range index goes to the impl (which wraps it or raises as NumPy does)."""
    offs, st = _flat_offsets(shape, ishape, axis)
    n = shape[axis]

    def run(x: np.ndarray, i: np.ndarray) -> np.ndarray:
        if (i.size and (i.min() < 0 or i.max() >= n)) or not x.flags.c_contiguous:
            return S._take_along(x, i, axis)  # (a strided x: no copy of all of it)
        return x.reshape(-1).take(i * st + offs)
    return run


def _flat_put_along(g: Aval, ishape: tuple, axis: int, size: int) -> Callable:
    """A scatter of unique positions (a permutation's inverse, or part of one) of an index of
    the values' shape as one write at flat positions (5x faster than np.put_along_axis for
    (300, 16) rows); a negative or out-of-range index goes to the impl."""
    shape = ishape[:axis] + (size,) + ishape[axis + 1:]
    offs, st = _flat_offsets(shape, ishape, axis)
    total, dtype = int(np.prod(shape, dtype=np.int64)), g.dtype

    def run(v: np.ndarray, i: np.ndarray) -> np.ndarray:
        if i.size and (i.min() < 0 or i.max() >= size):
            return S._scatter_add_along(v, i, axis, size, True)
        out = np.zeros(total, dtype)
        out[i * st + offs] = v
        return out.reshape(shape)
    return run


def _scatter_add_along(avals: list[Aval], axis: int, size: int, unique: bool = False
                       ) -> Callable:
    """A 1-D float64 scatter-add (a histogram, an edge list's per-node sum, one value's
    cotangent put back at its position) is `np.add.at` into zeros, without the impl's shape
    and bounds bookkeeping on every call (np.add.at checks the bounds and wraps negative
    positions itself, as NumPy's indexing does). Below 1,000 values the impl runs
    np.bincount: the same additions in the same order into float64 zeros, so the same sums;
    the bookkeeping cost 15-30 us against np.add.at's 1-2 us for a few values, at load 7 to
    12 (three such scatters of one value were a sixth of sum_after_add's gradient); every
    other case runs the impl."""
    g, idx = avals
    if unique and g.ndim == 1 and idx.shape == g.shape:  # (a permutation's inverse: a plain
        def put(v: np.ndarray, i: np.ndarray) -> np.ndarray:  # write, 4x faster at 2,000
            out = np.zeros(size, v.dtype)  # than the impl's np.put_along_axis)
            out[i] = v
            return out
        return put
    if unique and g.ndim > 1 and idx.shape == g.shape:
        return _flat_put_along(g, idx.shape, axis, size)
    if not unique and g.ndim > 1 and g.dtype == np.float64:
        return _scatter_rows(avals, axis, size)
    if not unique and g.ndim == 1 and idx.shape == g.shape and g.dtype == np.float64:
        def run(v: np.ndarray, i: np.ndarray) -> np.ndarray:
            out = np.zeros(size)
            np.add.at(out, i, v)
            return out
        return run
    return functools.partial(S._scatter_add_along, axis=axis, size=size, unique=unique)


def _scatter_rows(avals: list[Aval], axis: int, size: int) -> Callable:
    """An N-d float64 scatter-add as the impl runs it (each value added at its flat position
    of the result, in C order: the same sums), its positions off the axis computed once here:
    the impl's shape and position bookkeeping cost 15-25 us a call for a (2, 1) scatter into
    (2, 64), the first step of two stacked sibling buffers, at load 13."""
    g, idx = avals
    s = S._gather_shape(g, idx, axis).shape
    shape = s[:axis] + (size,) + s[axis + 1:]
    base, st = _flat_offsets(shape, s, axis)
    total = int(np.prod(shape, dtype=np.int64))

    def run(v: np.ndarray, i: np.ndarray) -> np.ndarray:
        if i.size:
            lo, hi = i.min(), i.max()
            if lo < -size or hi >= size:
                raise IndexError(f"index out of bounds for axis {axis} with size {size}")
            if lo < 0:
                i = np.where(i < 0, i + size, i)
        flat = (i * st + base).ravel()
        w = v.ravel() if v.shape == s else np.broadcast_to(v, s).ravel()
        out = np.zeros(total)
        np.add.at(out, flat, w)
        return out.reshape(shape)
    return run


def _reduce_at_1d(avals: list[Aval], op: str) -> Callable | None:
    """`np.<op>.at(out, i, v)` for a 1-D buffer, values and index of one shape and dtype
    (NumPy's ufunc.at checks the bounds and wraps negative positions itself, as its indexing
    does), or None where the impl's flat positions are needed. At 3,000 values into 1,000:
    5 us against the impl's 15 us (its bounds scans, its positions' copy)."""
    a, v, idx = avals
    if a.ndim != 1 or v.shape != idx.shape or v.dtype != a.dtype:
        return None
    return S._AT_OPS[op].at


def _scatter_reduce_along(avals: list[Aval], axis: int, op: str) -> Callable:
    """A 1-D scatter-max / min / product (the chains `buf[k] = max(buf[k], v)`) is ufunc.at
    into a copy of the buffer; every other case runs the impl."""
    at = _reduce_at_1d(avals, op)
    if at is None:
        return functools.partial(S._reduce_at, axis=axis, op=op)
    if op in S._SKIP_NAN and avals[1].dtype.kind == "f":
        return functools.partial(_builtin_reduce_at, at=at, op=op)

    def run(a: np.ndarray, v: np.ndarray, i: np.ndarray) -> np.ndarray:
        out = a.copy()
        at(out, i, v)
        return out
    return run


def _builtin_reduce_at(a: np.ndarray, v: np.ndarray, i: np.ndarray, at: Callable, op: str
                       ) -> np.ndarray:
    """Python's max per position: np.maximum.at, the values cleaned of NaN (as -inf) only
    where one is there (np.maximum.at would warn of it; a test costs 1-2 us, the cleaning
    3-4 at 4,000 values)."""
    out = a.copy()
    at(out, i, S.builtin_values(v, op) if np.isnan(v).any() else v)
    return out


def _scatter_reduce_inplace(a: np.ndarray, v: np.ndarray, i: np.ndarray, axis: int, op: str
                            ) -> np.ndarray:
    """The same into the buffer itself when nothing reads it after (codegen's `inplace`)."""
    if a.ndim != 1 or v.shape != i.shape or v.dtype != a.dtype or not a.flags.writeable:
        return S._reduce_at(a, v, i, axis=axis, op=op)
    S._AT_OPS[op].at(a, i, S.builtin_values(v, op) if op in S._SKIP_NAN and np.isnan(
        v).any() else v)
    return a


def _winner_shares(avals: list[Aval], axis: int) -> Callable:
    """A 1-D scatter-max / min's cotangents (every keyed running maximum, `best[k] =
    max(best[k], v)` over a list, a dict, an edge list or a buffer) as the impl computes them
    (the same divisions, so the same bits), without its shape bookkeeping: the winners are
    found by one gather of the result and one comparison, and only they are touched after.
    At 4,000 values into 40 or 300: 15-18 us for the impl, 10-12 us here (timeit minima, load
    12). Every other case (rows, another axis, a float32 cotangent) runs the impl."""
    g, a, v, idx, _ = avals
    if axis or a.ndim != 1 or v.ndim != 1 or v.shape != idx.shape or g.dtype != np.float64:
        return functools.partial(S._winner_shares, axis=axis)
    size, n = a.shape[0], v.shape[0]

    def run(g: np.ndarray, a: np.ndarray, v: np.ndarray, i: np.ndarray, ans: np.ndarray
            ) -> np.ndarray:
        hit = (v == ans.take(i)).nonzero()[0]  # (take wraps negative positions, as NumPy)
        at = i[hit]
        hit_a = a == ans
        cnt = hit_a.astype(np.float64)
        np.add.at(cnt, at, 1.0)  # (the winners per position, negative positions wrapped)
        share = g / np.maximum(cnt, 1.0)
        out = np.zeros(size + n)
        np.multiply(share, hit_a, out=out[:size])
        out[size + hit] = share[at]
        return out
    return run


def _strided_lower(avals: list[Aval], start: tuple, dims: tuple) -> Callable:
    """The view of a row-major array as one `np.ndarray` call on its buffer, its offset
    and steps computed once here: `as_strided` builds the same view through an array
    interface dict, 10-30 us a call (more than a small program's whole window product);
    this is under a microsecond. Read-only, as `as_strided`'s view; any other operand (not
    row-major, another dtype, empty) takes the impl."""
    x = avals[0]
    cst = G.c_strides(x.shape)
    size = x.dtype.itemsize
    offset = sum(s * c for s, c in zip(start, cst)) * size
    shape = tuple(n for n, _ in dims)
    steps = tuple(sum(st * c for st, c in zip(sts, cst)) * size for _, sts in dims)

    def run(a: np.ndarray) -> np.ndarray:
        if a.__class__ is not np.ndarray or not a.flags.c_contiguous or not a.size or \
                a.shape != x.shape or a.dtype.itemsize != size:
            return G._strided_impl(a, start, dims)
        v = np.ndarray(shape, a.dtype, a, offset, steps)
        v.flags.writeable = False
        return v
    return run


def _strided_add_inplace(base: np.ndarray, v: np.ndarray, start: tuple, dims: tuple
                         ) -> np.ndarray:
    v = np.asarray(v)
    if np.result_type(base, v) != base.dtype:  # (a complex v into a real buffer: a new one)
        return G._strided_add_impl(base, v, start, dims)
    return G._add_into(base, v, start, dims)


def _segment_extreme(name: str) -> Callable:
    """A segment maximum (minimum): np.maximum.reduceat (minimum) along the axis where the ids
    are sorted and fill every segment (packed ragged slices), else the impl's ufunc.at."""
    impl, red = getattr(G, name).impl, {"segment_max": np.maximum,
                                        "segment_min": np.minimum}[name]

    def lower(avals: list[Aval], ids: Adv, axis: int, num: int) -> Callable:
        a = ids.arr
        d = np.diff(a)  # (runs 0, 1, ..., num - 1 in order: steps of 0 or 1 only)
        if not len(a) or a[0] != 0 or a[-1] != num - 1 or np.any((d != 0) & (d != 1)):
            return functools.partial(impl, ids=ids, axis=axis, num=num)
        starts = np.flatnonzero(np.r_[True, d != 0])
        return functools.partial(red.reduceat, indices=starts, axis=axis)
    return lower


LOWERINGS = {
    "segment_max": Lowering(lower=_segment_extreme("segment_max")),
    "segment_min": Lowering(lower=_segment_extreme("segment_min")),
    "strided": Lowering(lower=_strided_lower, view=True),
    "strided_add": Lowering(inplace=_strided_add_inplace),
    "take": Lowering(lower=lambda avals, ids, axis: functools.partial(np.take, indices=ids.arr,
                                                                      axis=axis)),
    "segment_sum": Lowering(lower=_segment_sum),
    "take_along": Lowering(lower=_take_along),
    "scatter_add_along": Lowering(lower=_scatter_add_along),
    "scatter_reduce_along": Lowering(lower=_scatter_reduce_along, inplace=_scatter_reduce_inplace),
    "winner_shares": Lowering(lower=_winner_shares),
}
