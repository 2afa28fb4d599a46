"""Regions: indexing that covers a whole array, and scans read at their end.

x[:, ..., :] is x; x[:, None] is a reshape; x.at[:, ..., :].add(v) is x + v (and x + v[::-1]
where the region runs backwards); a running total read only at its end is the total. Each
replaces an indexed form by the whole-array operation it stands for (exact).
"""
from __future__ import annotations

from .. import primitives as P
from ..ir import Eqn
from .engine import Ctx


def _whole(idx: list | tuple, shape: tuple[int, ...]) -> bool:
    """One slice per axis, each covering its axis in order."""
    return len(idx) == len(shape) and all(
        isinstance(k, P.Sl) and k.start == 0 and k.step == 1 and len(k) == d
        for k, d in zip(idx, shape))


def add_everywhere(e: Eqn, c: Ctx) -> object:
    x, v = e.inputs
    idx = e.params["idx"]
    shape = x.aval.shape
    # (axes covered in reverse: a group batched in the reverse of the rows' order; v's
    # elements land reversed there, so x + v[::-1], a view, not a copy through a buffer)
    if not P.is_basic(idx) or len(idx) != len(shape) or not all(
            isinstance(k, P.Sl) and len(k) == d and (k.step == 1 and k.start == 0 or
                                                     k.step == -1 and k.start == d - 1)
            for k, d in zip(idx, shape)) or P.add.shape_rule(x.aval, v.aval) != e.out.aval:
        return None
    if _whole(idx, shape):
        return P.add, (x, v), {}
    lead = len(shape) - v.aval.ndim
    rev = tuple(P.Sl(d - 1, -1, -1) if k.step == -1 and d > 1 else P.Sl(0, d, 1)
                for k, d in zip(idx[lead:], v.aval.shape))
    if all(k.step == 1 for k in rev):
        return P.add, (x, v), {}
    r = c.emit(P.getitem, (v,), {"idx": rev}, e.src)
    zero = c.def_of(x, P.full)  # (a cotangent's zeros: the reversed view itself)
    if zero is not None and zero.params["value"] == 0 and r.aval == e.out.aval:
        return r
    return P.add, (x, r), {}


def full_index(e: Eqn) -> bool:
    return _whole(e.params["idx"], e.inputs[0].aval.shape)


def index_is_reshape(e: Eqn, c: Ctx) -> object:
    """x[:, None, :] (full slices and new axes only) is a reshape, which rules see through."""
    idx = e.params["idx"]
    sls = [k for k in idx if k is not None]
    if len(sls) == len(idx) or not _whole(sls, e.inputs[0].aval.shape):
        return None
    return P.reshape, (e.inputs[0],), {"shape": e.out.aval.shape}


_SCAN_TOTALS = {P.cumsum: P.reduce_sum, P.cumprod: P.reduce_prod, P.cummax: P.reduce_max,
                P.cummin: P.reduce_min, P.fold_extreme: P.fold_total}


def end_of_scan(e: Eqn, c: Ctx) -> object:
    """A running total read only at its end is the total: a loop's running max `m =
    np.maximum(m, h)` (a cummax once batched) whose last value alone is used is one max, and
    its gradient one tie-sharing mask, not a running argmax and a scatter."""
    s = c.def_of(e.inputs[0])
    if s is None or s.prim not in _SCAN_TOTALS:
        return None
    a = s.params["axis"]
    end = 0 if s.params.get("reverse", False) else s.out.aval.shape[a] - 1
    idx = e.params["idx"]

    def at_end(q: Eqn) -> bool:
        if q.prim is not P.getitem:
            return False
        k = q.params["idx"]
        return P.is_basic(k) and len(k) == s.out.aval.ndim and k[a] == end and \
            all(isinstance(j, (int, P.Sl)) for j in k)
    if not at_end(e) or not all(at_end(q) for q in c.all_readers.get(s.out, [e])):
        return None
    params = {"axis": a, "greater": s.params["greater"]} if s.prim is P.fold_extreme \
        else {"axes": (a,)}  # (Python's fold: its first winner, NaNs as it skips them)
    t = c.emit(_SCAN_TOTALS[s.prim], (s.inputs[0],), params, e.src)
    rest = tuple(idx[:a]) + tuple(idx[a + 1:])
    if _whole(rest, t.aval.shape):
        return t
    return P.getitem, (t,), {"idx": P.BasicIndex(rest)}
