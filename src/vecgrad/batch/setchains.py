"""Before batching: chains of writes at traced positions into one buffer are one write.

`out[perm[i]] = v_i` in a loop, at a traced integer perm[i] (an array argument, or computed
from one), is traced as a selection over the whole region the index runs along
(numpy/_indexing.write_at_traced: `R' = where(arange(n) == p_i, v_i, R)`), each link reading
the previous one's result: a recurrence of n work per step (a rolled loop: 581 ms where NumPy's
`out[perm] = v` takes 22 us). The chain is one write with NumPy's semantics for repeated
positions (the last write wins), the construction of `numpy/_scatter.write_at_index_array`:

    last = scatter_max(-1, [0, 1, .., E-1], [p_1, .., p_E])     the last link writing each position
    R'   = where(last >= 0, [v_1, .., v_E][last], R)

a gather, no arithmetic, so every value is the loop's (signed zeros and NaNs too); its
gradient is a scatter of the cotangent's rows to the last writers. Links whose result only the
next link reads (and its own read of the region) join; values and positions are concatenated,
so the per-step values batch as one operation.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn, Graph, Var, uses
from .census import census
from .extremes import _concat, _emit, joined_chains, link_chains


def traced_set_writes(g: Graph) -> bool:
    """Whether g may hold writes at traced positions (a quick look)."""
    prims = census(g)
    return P.setitem in prims and P.where in prims and P.take_along in prims and \
        P.logical_and in prims


class _Link:
    """One write `x[idx] = where(arange(n) == pos along axis q, v, x[idx])`: its equation,
    base x, the read of the region, the value v (n -> 1 at axis q) and the position (i64[1])."""

    __slots__ = ("axis", "base", "e", "pos", "read", "vals")

    def __init__(self, e, base, read, vals, pos, axis):
        self.e, self.base, self.read, self.vals, self.pos, self.axis = \
            e, base, read, vals, pos, axis


def _def(a: Any, defs: dict, prim: P.Primitive) -> Eqn | None:
    d = defs.get(a) if a.__class__ is Var else None
    return d if d is not None and d.prim is prim else None


def _is_ramp(a: Any, n: int) -> bool:
    return a.__class__ is Const and a.value.shape == (n,) and \
        np.array_equal(a.value, np.arange(n))


def _link(e: Eqn, defs: dict, n_uses: dict) -> _Link | None:
    """e as one write at a traced position (module doc), or None."""
    if e.prim is not P.setitem:
        return None
    x, new = e.inputs
    w = _def(new, defs, P.where)
    if w is None or n_uses.get(new) != 1 or new.aval.dtype != x.aval.dtype:
        return None
    hit, v, r = w.inputs
    rd = _def(r, defs, P.getitem)
    h = _def(hit, defs, P.logical_and)
    if rd is None or rd.inputs[0] is not x or rd.params["idx"] != e.params["idx"] or \
            n_uses.get(r) != 1 or h is None or v.aval.dtype != x.aval.dtype or \
            new.aval != r.aval:
        return None  # (the mask may be shared: two writes at one position, hash-consed)
    t, at = h.inputs
    if t.__class__ is not Const or t.value.shape or t.value.item() is not True:
        return None
    rs = _def(at, defs, P.reshape)
    eq = _def(rs.inputs[0] if rs is not None else at, defs, P.eq)
    region = r.aval.shape
    q = len(region) - at.aval.ndim
    if eq is None or q < 0 or at.aval.shape != (region[q],) + (1,) * (len(region) - q - 1):
        return None
    n = region[q]
    ramp, p0 = eq.inputs
    p1 = _def(p0, defs, P.reshape)
    pos = p1.inputs[0] if p1 is not None else None
    tk = _def(pos, defs, P.take_along)
    if not _is_ramp(ramp, n) or tk is None or not _is_ramp(tk.inputs[0], n) or \
            pos.aval.shape != (1,) or v.aval.shape != region[:q] + (1,) + region[q + 1:]:
        return None  # (pos: the position, n's ramp gathered at it, so in [0, n))
    return _Link(e, x, r, v, pos, q)


def join_set_writes(g: Graph) -> Graph:
    """Chains of writes at traced positions into one buffer, each link's result read only by
    the next link, become one last-writer write (module doc)."""
    n_uses = uses(g)
    defs: dict[Var, Eqn] = {}

    def link(e: Eqn) -> _Link | None:
        defs[e.out] = e
        return _link(e, defs, n_uses)

    def follows(p: _Link, ln: _Link) -> bool:
        return p.axis == ln.axis and p.e.params["idx"] == ln.e.params["idx"] and \
            n_uses.get(ln.base) == 2

    return joined_chains(g, link_chains(g, link, follows), _joined)


def _joined(eqns: list[Eqn], chain: list[_Link], e: Eqn) -> Eqn:
    """The chain's one write (the last link's equation, its result unchanged)."""
    q, src, first = chain[0].axis, e.src, chain[0]
    region = first.read.aval.shape
    size = len(chain)
    one = (1,) * q, (1,) * (len(region) - q - 1)
    vals = _concat(eqns, [ln.vals for ln in chain], q, src)
    pos = _concat(eqns, [ln.pos for ln in chain], 0, src)
    pos = _emit(eqns, P.reshape, (pos,), {"shape": one[0] + (size,) + one[1]}, src)
    members = Const(np.arange(size, dtype=np.int64).reshape(one[0] + (size,) + one[1]))
    none = Const(np.full(one[0] + (region[q],) + one[1], -1, np.int64))
    last = _emit(eqns, P.scatter_reduce_along, (none, members, pos),
                 {"axis": q, "op": "maximum"}, src)
    at = _emit(eqns, P.maximum, (last, Const(np.int64(0))), {}, src)
    got = _emit(eqns, P.take_along, (vals, at), {"axis": q}, src)
    hit = _emit(eqns, P.ge, (last, Const(np.int64(0))), {}, src)
    new = _emit(eqns, P.where, (hit, got, first.read), {}, src)
    return Eqn(P.setitem, (first.base, new), e.params, e.out, src)


__all__ = ["join_set_writes", "traced_set_writes"]
