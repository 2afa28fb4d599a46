"""Before batching: reads of one array at index lists of one length are slices of one gather.

A loop over k-nearest-neighbour lists, a fixed-degree mesh's faces or sentences of one length
reads `X[nbrs[i]]` once per iteration, each read at its own list. A read's list is part of
its index, so no two reads have one index pattern: batching took each for a value of its
own, ran the reads one by one and stacked their results for the work after them (150 lists
of 4: 17x the hand-vectorized forward). Here the lists of every read of one array along one
axis, all of one length n, are concatenated into one read G = X[concat(lists)], and member
m's read is the slice G[m n : (m + 1) n]: a basic read at a position affine in m, which
batching takes as a view of G (`G.reshape(M, n, ...)`), and whose gradients are slice
additions into G's one cotangent, scattered into X's once. Basic reads of a member's read
(`p = X[f]; p[1, :3] - p[0, :3]`, a mesh face's corners) are reads of G at positions in m
too (composed here: the normalization that composes views ran before).

Groups whose reads have several lengths are listmaps' (tiles of one gather, segment sums);
they are left alone here. Values are unchanged: G's rows are the reads' rows.
"""
from __future__ import annotations

import numpy as np

from .. import primitives as P
from ..index import Adv, ramp_as_basic
from ..ir import Eqn, Graph, Params, Var
from .lists import _list_read
from .regions import compose, split

MIN_READS = 2  # reads in a group, at least


def _one_ramp(reads: list[Eqn]) -> bool:
    """Whether every read's list is a ramp of one step (`x[[t, t + d, t + 2 d]]` moving with
    t): batching reads those as slices of one pattern, a view already. Two-element lists
    are ramps of any step (`X[[u, v]]` of an edge): steps that differ are no one pattern."""
    pats = set()
    for r in reads:
        b = ramp_as_basic(r.params["idx"])
        if b is None:
            return False
        pats.add(split(b)[0])
        if len(pats) > 1:
            return False
    return True


def one_length_lists(g: Graph) -> Graph:
    """g with every group of list reads of one length read through one gather (module
    doc); g itself when there is none."""
    groups: dict[tuple, list[Eqn]] = {}
    for e in g.eqns:
        if e.prim is P.getitem:
            j = _list_read(e)
            if j is not None:
                rest = tuple(k for q, k in enumerate(e.params["idx"]) if q != j)
                groups.setdefault((e.inputs[0], j, rest), []).append(e)
    groups = {k: ms for k, ms in groups.items() if len(ms) >= MIN_READS and
              len({len(m.params["idx"][k[1]].arr) for m in ms}) == 1 and not _one_ramp(ms)}
    if not groups:
        return g
    member = {id(e): (k, m) for k, ms in groups.items() for m, e in enumerate(ms)}
    made: dict[tuple, Var] = {}
    views: dict[Var, tuple[Var, tuple]] = {}  # a read of a member's read -> (G, index)
    out: list[Eqn] = []
    for e in g.eqns:
        km = member.get(id(e))
        if km is None:
            v = views.get(e.inputs[0]) if e.prim is P.getitem else None
            idx = compose(v[1], e.params["idx"]) if v is not None and \
                P.is_basic(e.params["idx"]) else None
            if idx is not None:  # (`p = X[f]; p[1, :3]`: a read of G, at a position in m)
                e = Eqn(P.getitem, (v[0],), Params({"idx": P.BasicIndex(idx)}), e.out, e.src)
                views[e.out] = (v[0], idx)
            out.append(e)
            continue
        k, m = km
        base, j, rest = k
        G = made.get(k)
        if G is None:
            ids = np.concatenate([r.params["idx"][j].arr for r in groups[k]])
            idx = rest[:j] + (Adv(ids),) + rest[j:]
            ps = Params({"idx": idx})
            G = made[k] = Var(P.getitem.shape_rule(base.aval, **ps))
            out.append(Eqn(P.getitem, (base,), ps, G, e.src))
        n = e.out.aval.shape[j]
        sl = P.BasicIndex(P.Sl(m * n, (m + 1) * n, 1) if q == j else P.Sl(0, d, 1)
                          for q, d in enumerate(G.aval.shape))
        out.append(Eqn(P.getitem, (G,), Params({"idx": sl}), e.out, e.src))
        views[e.out] = (G, tuple(sl))
    return g.replace(eqns=tuple(out))
