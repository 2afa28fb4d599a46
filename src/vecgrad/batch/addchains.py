"""Before batching: chains of scatter-adds at static index arrays into one buffer are one.

`np.add.at(acc, idx[c0:c1], v[c0:c1])` over chunks (or over groups of an edge list, one
index array per group) is, at a static `idx`, a `setitem_add` whose index holds that chunk's
integer array: each iteration's index is another constant, so the writes are not isomorphic
(their keys hold the arrays), and each link writes the previous one's result: 8 scatters of
500 values where NumPy's own is one of 4,000 (7.9x the hand-vectorized np.add.at). A
scatter-add accumulates its values one after the other (np.add.at is unbuffered), so

    add_at(add_at(x, i_1, v_1), i_2, v_2) = add_at(x, [i_1, i_2], [v_1, v_2])

exactly: the same additions per element, in the same order. The links' index arrays and
values are concatenated along the index's axis, so the per-step values batch as one operation
feeding one scatter (its gradient one gather). A link's result read by anything but the next
link ends the chain (a read between two adds sees the partial sum).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..index import Adv, Sl, index_shape
from ..ir import Eqn, Graph, Params, uses
from .census import census
from .extremes import _concat, _emit, joined_chains, link_chains


def static_add_chains(g: Graph) -> bool:
    """Whether g may hold two scatter-adds at static index arrays (a quick look)."""
    if P.setitem_add not in census(g):
        return False
    n = 0
    for e in g.eqns:
        if e.prim is P.setitem_add and not P.is_basic(e.params["idx"]):
            n += 1
            if n == 2:
                return True
    return False


class _Link:
    """One `np.add.at(x, idx, v)`: its equation, the buffer x, the values v (broadcast to
    the region), the index's shape `key` (its slices, "A" for each array), the axis of the
    region that the arrays index, and their length there."""

    __slots__ = ("axis", "base", "e", "key", "n", "vals")

    def __init__(self, e, base, vals, key, axis, n):
        self.e, self.base, self.vals, self.key, self.axis, self.n = e, base, vals, key, axis, n


def _link(e: Eqn) -> _Link | None:
    """e as a link: a setitem_add whose index is 1-d integer arrays of one length among
    slices (ints beside them would move NumPy's axes: left as they are), its value of the
    buffer's dtype."""
    if e.prim is not P.setitem_add:
        return None
    idx = e.params["idx"]
    if P.is_basic(idx) or not all(k.__class__ in (Adv, Sl) for k in idx):
        return None
    x, v = e.inputs
    advs = [j for j, k in enumerate(idx) if k.__class__ is Adv]
    lens = {idx[j].arr.shape for j in advs}
    if len(lens) != 1 or len(next(iter(lens))) != 1 or v.aval.dtype != x.aval.dtype:
        return None
    joint = advs[-1] - advs[0] == len(advs) - 1  # (apart: NumPy puts their axis first)
    axis = advs[0] if joint else 0  # (every index before the first array is a slice)
    key = tuple("A" if k.__class__ is Adv else k for k in idx)
    return _Link(e, x, v, key, axis, idx[advs[0]].arr.shape[0])


def join_static_adds(g: Graph) -> Graph:
    """Chains of setitem_add at static index arrays of one shape of index into one buffer,
    each link's result read only by the next, become one setitem_add of the concatenated
    values and index arrays (module doc); also where every link holds one index array (the
    batch pass would leave a rolled loop of scatters)."""
    n_uses = uses(g)

    def follows(p: _Link, ln: _Link) -> bool:
        return p.key == ln.key and n_uses.get(ln.base) == 1

    return joined_chains(g, link_chains(g, _link, follows), _joined)


def _joined(eqns: list[Eqn], chain: list[_Link], e: Eqn) -> Eqn:
    """The chain's one setitem_add: values concatenated along the arrays' axis of the
    region (`_spread` where no link's value varies along it), each index array
    concatenated."""
    idx0 = chain[0].e.params["idx"]
    idx = tuple(Adv(np.concatenate([ln.e.params["idx"][j].arr for ln in chain]))
                if k.__class__ is Adv else k for j, k in enumerate(idx0))
    x = chain[0].base
    region = index_shape(x.aval.shape, idx)
    v = _spread(eqns, chain, region, e.src)
    if v is None:
        vals = [_emit(eqns, P.broadcast_to, (ln.vals,), {"shape": _region(ln)}, ln.e.src)
                if ln.vals.aval.shape != _region(ln) else ln.vals for ln in chain]
        v = _concat(eqns, vals, chain[0].axis, e.src)
    return Eqn(P.setitem_add, (x, v), Params({"idx": idx}), e.out, e.src)


def _region(ln: _Link) -> tuple:
    return index_shape(ln.base.aval.shape, ln.e.params["idx"])


def _spread(eqns: list[Eqn], chain: list[_Link], region: tuple, src: Any) -> Any:
    """The joined values where each link's value is constant along the arrays' axis
    (`np.add.at(counts, doc, w[d])`, a weight per document), or None: one value (every
    link's the same) broadcast, or the links' values stacked along the axis and repeated
    by the links' lengths (a broadcast where they are equal, else a gather): not one
    broadcast per link, concatenated."""
    q, n = chain[0].axis, len(region)
    shapes = [(1,) * (n - ln.vals.aval.ndim) + ln.vals.aval.shape for ln in chain]
    if any(s[q] != 1 for s in shapes):
        return None
    if all(ln.vals is chain[0].vals for ln in chain):
        return _emit(eqns, P.broadcast_to, (chain[0].vals,), {"shape": region}, src)
    cell = region[:q] + (1,) + region[q + 1:]
    cells = [ln.vals if ln.vals.aval.shape == cell else
             _emit(eqns, P.broadcast_to, (ln.vals,), {"shape": cell}, ln.e.src)
             for ln in chain]
    col = _concat(eqns, cells, q, src)  # (the links' values along the axis, one each)
    lens = [ln.n for ln in chain]
    if len(set(lens)) == 1:
        wide = region[:q] + (len(chain), lens[0]) + region[q + 1:]
        col = _emit(eqns, P.reshape, (col,), {"shape": wide[:q + 1] + (1,) + wide[q + 2:]},
                    src)
        col = _emit(eqns, P.broadcast_to, (col,), {"shape": wide}, src)
        return _emit(eqns, P.reshape, (col,), {"shape": region}, src)
    at = (Sl(0, d, 1) for d in region[:q])
    rep = Adv(np.repeat(np.arange(len(chain)), lens))
    return _emit(eqns, P.getitem, (col,), {"idx": (*at, rep, *(Sl(0, d, 1) for d in region[q + 1:]))},
                 src)


__all__ = ["join_static_adds", "static_add_chains"]
