"""Before batching: row-wise work on rows picked by static index lists runs once, on one gather.

A loop over neighbour lists that maps each list's rows (`x[nb] @ W`, `np.tanh(x[nb] + b)`,
pieces appended then concatenated) reads the array once per member at that member's own
list: the reads have as many shapes as there are list lengths, so they and everything computed
from them ran one by one (2,000x the hand-vectorized forward). Each read is a *tile* of one
gather at the concatenated lists,

    x[..., ids_m, ...] = G[..., start_m:end_m, ...],   G = x[..., concat(ids), ...]

and a row-wise operation (elementwise with operands that do not vary along the list's axis; a
two-operand einsum whose letter on that axis is free in the tile and absent from the other
operand; a sum over other axes) of tiles of one gather, alike, is a tile of that operation on
the whole:  op(G[a:b]) = op(G)[a:b].  A sum over the list's axis is one segment sum (as in
lists.py). Repeated to a fixpoint, a chain of row-wise work becomes one operation per step, and
`np.concatenate` of the tiles in order is the whole (simplify's concatenate_of_slices).

Only groups pay: two or more reads of one array along one axis, and per operation two or more
tiles covering at least half the gather's rows (the operation is computed on all its rows).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..index import Adv
from ..ir import Const, Eqn, Graph, Params, Var
from ..primitives.linalg import parse_spec
from .lists import _list_read

_MAX_ROUNDS = 8  # row-wise steps followed (each round moves every chain one step)


class _Gather:
    """One gather at the concatenated lists: its value, its list axis, each tile's rows."""

    __slots__ = ("axis", "bounds", "owner", "var")

    def __init__(self, var: Var, axis: int, lengths: list[int]):
        self.var, self.axis = var, axis
        ends = np.cumsum(lengths)
        self.bounds = [(int(e - n), int(e)) for e, n in zip(ends, lengths)]
        self.owner = np.repeat(np.arange(len(lengths)), lengths)


def _emit(eqns: list[Eqn], prim: P.Primitive, ins: tuple, params: dict, src: Any) -> Var:
    ps = Params(params)
    v = Var(prim.shape_rule(*[a.aval for a in ins], **ps))
    eqns.append(Eqn(prim, ins, ps, v, src))
    return v


def _tile(eqns: list[Eqn], whole: Var, axis: int, a: int, b: int, src: Any) -> Var:
    idx = tuple(P.Sl(a, b, 1) if q == axis else P.Sl(0, d, 1)
                for q, d in enumerate(whole.aval.shape))
    return _emit(eqns, P.getitem, (whole,), {"idx": P.BasicIndex(idx)}, src)


def _gathers(g: Graph) -> tuple[Graph, dict] | None:
    """Pass 1: reads of one array at two or more lists of different lengths become tiles of
    one gather (lists of one length batch as one 2-d gather already)."""
    groups: dict[tuple, list[Eqn]] = {}
    for e in g.eqns:
        if e.prim is P.getitem:
            j = _list_read(e)
            if j is not None:
                rest = tuple(k for q, k in enumerate(e.params["idx"]) if q != j)
                groups.setdefault((e.inputs[0], j, rest), []).append(e)
    groups = {k: ms for k, ms in groups.items() if len(ms) > 1 and
              len({len(m.params["idx"][k[1]].arr) for m in ms}) > 1}
    if not groups:
        return None
    member = {id(e): (k, m) for k, ms in groups.items() for m, e in enumerate(ms)}
    made: dict[tuple, _Gather] = {}
    eqns: list[Eqn] = []
    env: dict[Var, Var] = {}
    tiles: dict[Var, tuple[_Gather, int]] = {}
    for e in g.eqns:
        km = member.get(id(e))
        if km is None:
            eqns.append(e)
            continue
        k, m = km
        base, j, rest = k
        if k not in made:
            ids = [m.params["idx"][j].arr for m in groups[k]]
            n = base.aval.shape[j]
            flat = np.concatenate(ids)
            flat = np.where(flat < 0, flat + n, flat)
            idx = rest[:j] + (Adv(flat),) + rest[j:]
            v = _emit(eqns, P.getitem, (base,), {"idx": idx}, e.src)
            made[k] = _Gather(v, j, [len(a) for a in ids])
        G = made[k]
        a, b = G.bounds[m]
        t = _tile(eqns, G.var, j, a, b, e.src)
        env[e.out] = t
        tiles[t] = (G, m)
    return _substitute(g, eqns, env), tiles


def _substitute(g: Graph, eqns: list[Eqn], env: dict[Var, Var]) -> Graph:
    out = []
    for e in eqns:
        if any(isinstance(a, Var) and a in env for a in e.inputs):
            e = Eqn(e.prim, tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs),
                    e.params, e.out, e.src)
        out.append(e)
    outs = tuple(env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    return g.replace(eqns=tuple(out), outputs=outs)


def _rowwise(e: Eqn, tiles: dict) -> tuple[int, int] | None:
    """(the tile operand's position, the list axis in the result) where `e` maps one tile
    row-wise along its list axis; None otherwise."""
    pos = [q for q, a in enumerate(e.inputs) if a.__class__ is Var and a in tiles]
    if not pos or any(e.inputs[q] is not e.inputs[pos[0]] for q in pos):
        return None  # (one tile, perhaps read twice: h * h)
    q = pos[0]
    t = e.inputs[q]
    j = tiles[t][0].axis
    out = e.out.aval
    if e.prim.elementwise:
        if t.aval.shape != out.shape:
            return None
        for a in e.inputs:
            off = j - (out.ndim - a.aval.ndim)
            if a is not t and off >= 0 and a.aval.shape[off] != 1:
                return None
        return q, j
    if len(pos) > 1:
        return None
    if e.prim is P.einsum and len(e.inputs) == 2:
        ins, o = parse_spec(e.params["spec"])
        c = ins[q][j]
        if c in o and c not in ins[1 - q] and ins[q].count(c) == 1 and o.count(c) == 1:
            return q, o.index(c)
        return None
    if e.prim is P.reduce_sum and j not in e.params["axes"]:
        return q, j - sum(1 for a in e.params["axes"] if a < j)
    return None


def _summed(e: Eqn, tiles: dict) -> bool:
    """`e` sums one tile over its list axis (a segment of one segment sum)."""
    return e.prim is P.reduce_sum and e.inputs[0].__class__ is Var and \
        e.inputs[0] in tiles and tiles[e.inputs[0]][0].axis in e.params["axes"]


def _key(a: Any) -> Any:
    return a if a.__class__ is Var else ("const", a.key() if isinstance(a, Const) else a)


def _round(g: Graph, tiles: dict) -> Graph | None:
    """One round: the row-wise operations (and sums over the list axis) of two or more tiles
    of one gather, alike, become one operation on the whole gather, tiled."""
    groups: dict[tuple, list[Eqn]] = {}
    how: dict[int, tuple] = {}
    for e in g.eqns:
        r = _rowwise(e, tiles)
        if r is not None:
            q, oax = r
            G = tiles[e.inputs[q]][0]
            k = ("map", e.prim, e.params, id(G),
                 tuple(None if a is e.inputs[q] else _key(a) for a in e.inputs))
        elif _summed(e, tiles):
            q, oax, G = 0, None, tiles[e.inputs[0]][0]
            k = ("sum", e.params["axes"], id(G))
        else:
            continue
        groups.setdefault(k, []).append(e)
        how[id(e)] = (k, q, oax, G)
    keep = set()
    for k, ms in groups.items():
        G = how[id(ms[0])][3]
        covered = 0
        for e in ms:
            a, b = G.bounds[tiles[e.inputs[how[id(e)][1]]][1]]
            covered += b - a
        if len(ms) > 1 and 2 * covered >= G.bounds[-1][1]:
            keep.add(k)
    if not keep:
        return None
    made: dict[tuple, Any] = {}
    eqns: list[Eqn] = []
    env: dict[Var, Var] = {}
    for e in g.eqns:
        h = how.get(id(e))
        if h is None or h[0] not in keep:
            eqns.append(e)
            continue
        k, q, oax, G = h
        m = tiles[e.inputs[q]][1]
        if k[0] == "map":
            if k not in made:
                ins = tuple(G.var if a is e.inputs[q] else a for a in e.inputs)
                W = _emit(eqns, e.prim, ins, dict(e.params), e.src)
                made[k] = W2 = _Gather(W, oax, [])
                W2.bounds, W2.owner = G.bounds, G.owner
            W2 = made[k]
            a, b = W2.bounds[m]
            t = _tile(eqns, W2.var, oax, a, b, e.src)
            tiles[t] = (W2, m)
            env[e.out] = t
            continue
        j, axes = G.axis, e.params["axes"]
        if k not in made:
            made[k] = _emit(eqns, P.segment_sum, (G.var,), {
                "ids": Adv(G.owner), "axis": j, "num": len(G.bounds)}, e.src)
        S = made[k]
        row = tuple(m if i == j else P.Sl(0, d, 1) for i, d in enumerate(S.aval.shape))
        v = _emit(eqns, P.getitem, (S,), {"idx": P.BasicIndex(row)}, e.src)
        left = tuple(a - (a > j) for a in axes if a != j)
        env[e.out] = _emit(eqns, P.reduce_sum, (v,), {"axes": left}, e.src) if left else v
    return _substitute(g, eqns, env)


def list_maps(g: Graph) -> Graph:
    """Row-wise work on rows picked by static lists of different lengths (two or more reads
    of one array) runs once on one gather, each member's value a tile of it (module doc)."""
    first = _gathers(g)
    if first is None:
        return g
    g, tiles = first
    for _ in range(_MAX_ROUNDS):
        nxt = _round(g, tiles)
        if nxt is None:
            break
        g = nxt
    return g


__all__ = ["list_maps"]
