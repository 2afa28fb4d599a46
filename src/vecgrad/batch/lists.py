"""Before batching: sums over rows picked by static index lists become one segment sum.

A loop over a dict of neighbour lists (`x[nb].mean(0)`) or a list of token lists
(`E[doc].sum(0)`) reads the array once per member at that member's own list: the reads, and
their sums, have as many shapes as there are list lengths and differ by their index even
where the lengths agree, so they cannot batch as they are (they ran one by one: 250x the
hand-vectorized forward). Each sum is one segment of a single segment sum over all the lists:

    sum(x[..., ids_m, ...], axes) = sum(segment_sum(x[..., concat(ids), ...], owner)[m], rest)

with owner[r] the member whose list holds row r. The group becomes one gather at the
concatenated lists and one segment sum (whose lowering picks reduceat, bincount or a product
by measurement, and whose gradient is a gather); each member's value is a read of its row,
at a position that moves with the members, which the batch pass merges into one view. The
additions per member are those of its own sum, in its list's order.

Only reads whose index holds one integer list and otherwise slices are taken, summed along
the list's axis, in groups of two or more (a lone `x[nb].sum(0)` stays).
"""
from __future__ import annotations

import numpy as np

from .. import primitives as P
from ..index import Adv
from ..ir import Eqn, Graph, Params, Var


def list_reads(g: Graph) -> bool:
    """Whether some read's index holds a 1-d integer list (a quick look per read)."""
    getitem = P.getitem
    for e in g.eqns:
        if e.prim is getitem and e.params["idx"].__class__ is not P.BasicIndex and \
                any(k.__class__ is Adv for k in e.params["idx"]):
            return True
    return False


def _list_read(r: Eqn) -> int | None:
    """The position of the list in a read `x[:, ids, :]` (one 1-d list, the rest slices)."""
    idx = r.params["idx"]
    if idx.__class__ is P.BasicIndex or len(idx) != r.inputs[0].aval.ndim:
        return None
    advs = [j for j, k in enumerate(idx) if k.__class__ is Adv]
    if len(advs) != 1 or idx[advs[0]].arr.ndim != 1 or not len(idx[advs[0]].arr) or \
            not all(k.__class__ is P.Sl for j, k in enumerate(idx) if j != advs[0]):
        return None
    return advs[0]


def _candidate(e: Eqn, defs: dict[Var, Eqn]) -> tuple | None:
    """(group key, ids) of `reduce_sum(x[..., ids, ...], axes)` with the list's axis summed."""
    r = defs.get(e.inputs[0])
    if r is None:
        return None
    j = _list_read(r)
    if j is None or j not in e.params["axes"]:
        return None
    idx = r.params["idx"]
    rest = tuple(k for i, k in enumerate(idx) if i != j)
    return (r.inputs[0], j, rest, e.params["axes"]), idx[j].arr


def list_sums(g: Graph) -> Graph:
    """Sums over rows picked by static lists, two or more over one array alike, become one
    gather and one segment sum (see the module doc)."""
    defs: dict[Var, Eqn] = {}
    found: dict[Var, tuple] = {}
    groups: dict[tuple, list[np.ndarray]] = {}
    for e in g.eqns:
        if e.prim is P.getitem:
            defs[e.out] = e
        elif e.prim is P.reduce_sum:
            c = _candidate(e, defs)
            if c is not None:
                found[e.out] = (c[0], len(groups.setdefault(c[0], [])))
                groups[c[0]].append(c[1])
    keep = {k for k, ms in groups.items() if len(ms) > 1}
    if not keep:
        return g
    segs: dict[tuple, Var] = {}
    eqns: list[Eqn] = []
    env: dict[Var, Var] = {}

    def emit(prim: P.Primitive, ins: tuple, params: dict, src: object) -> Var:
        ps = Params(params)
        v = Var(prim.shape_rule(*[a.aval for a in ins], **ps))
        eqns.append(Eqn(prim, ins, ps, v, src))
        return v
    for e in g.eqns:
        if env:
            e = Eqn(e.prim, tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs),
                    e.params, e.out, e.src)
        c = found.get(e.out)
        if c is None or c[0] not in keep:
            eqns.append(e)
            continue
        key, m = c
        base, j, rest, axes = key
        if key not in segs:
            ids = groups[key]
            n = base.aval.shape[j]
            flat = np.concatenate(ids)
            flat = np.where(flat < 0, flat + n, flat)
            owner = np.repeat(np.arange(len(ids)), [len(a) for a in ids])
            idx = rest[:j] + (Adv(flat),) + rest[j:]
            rows = emit(P.getitem, (base,), {"idx": idx}, e.src)
            segs[key] = emit(P.segment_sum, (rows,), {"ids": Adv(owner), "axis": j,
                                                      "num": len(ids)}, e.src)
        s = segs[key]
        row = tuple(m if i == j else P.Sl(0, d, 1) for i, d in enumerate(s.aval.shape))
        v = emit(P.getitem, (s,), {"idx": P.BasicIndex(row)}, e.src)
        left = tuple(a - (a > j) for a in axes if a != j)
        env[e.out] = emit(P.reduce_sum, (v,), {"axes": left}, e.src) if left else v
    outs = tuple(env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    return g.replace(eqns=tuple(eqns), outputs=outs)


__all__ = ["list_reads", "list_sums"]
