"""Before batching: work on rows picked by static index lists runs once, on one gather.

A loop over neighbour lists that maps each list's rows (`x[nb] @ W`, `np.tanh(x[nb] + b)`,
pieces appended then concatenated) or normalizes over them (a softmax over each node's
neighbours: `p = np.exp(s - s.max()); p / p.sum(); p @ x[nb]`) reads the array once per
member at that member's own list: the reads have as many shapes as there are list lengths, so
they and everything computed from them ran one by one (1,000-2,000x the hand-vectorized
forward). Each read is a *tile* of one gather at the concatenated lists,

    x[..., ids_m, ...] = G[..., start_m:end_m, ...],   G = x[..., concat(ids), ...]

and alike operations of the members become one operation on the whole (each member's value
then a tile or a row of it):

- row-wise maps: elementwise with operands constant along the list's axis, a two-operand
  einsum whose letter there is free in the tile alone, a sum over other axes:
  op(G[a:b]) = op(G)[a:b];
- reductions over the list's axis (sum, max, min): one segment reduction S, member m's value
  its row S[m];
- a contraction of two tiles of one layout over the list's axis (`p @ x[nb]`, `s @ s`): their
  product, then one segment sum;
- elementwise work mixing tiles with member rows (`s - max_m`, `p / sum_m`): the rows spread
  to the tiles' rows by one gather at the owners (`S[owner]`); on rows alone, op(S)[m].

Repeated to a fixpoint; `np.concatenate` of the tiles in order is the whole (simplify's
concatenate_of_slices), and writes of the rows at moving positions batch as one view.

Only groups pay: two or more reads of one array along one axis at lists of several lengths
(lists of one length batch as one 2-d gather already), and per operation two or more members
(row-wise maps: covering at least half the gather's rows, which are all computed).
"""
from __future__ import annotations

import itertools
import math
from operator import itemgetter
from typing import Any

import numpy as np

from .. import primitives as P
from ..index import Adv
from ..ir import Const, Eqn, Graph, Params, Var
from ..primitives.linalg import make_spec, parse_spec
from .fields import fields
from .lists import _list_read
from .sharedreads import shared_list_reads

_MAX_ROUNDS = 12  # steps followed (each round moves every chain one step)
_OUT = itemgetter(3)  # an equation's result
_SEGMENT = {P.reduce_sum: "sum", P.reduce_max: "maximum", P.reduce_min: "minimum"}


class _Layout:
    """How the members' rows tile a gather: each member's (start, end), the owner of each
    row."""

    __slots__ = ("bounds", "owner", "rows")

    def __init__(self, lengths: list[int]):
        ends = np.cumsum(lengths)
        self.bounds = [(int(e - n), int(e)) for e, n in zip(ends, lengths)]
        self.owner = np.repeat(np.arange(len(lengths)), lengths)
        self.rows = int(ends[-1])


class _Tile:
    """A member's value `whole[..., start:end, ...]` (along `axis`)."""

    __slots__ = ("axis", "layout", "m", "whole")

    def __init__(self, whole: Var, axis: int, layout: _Layout, m: int):
        self.whole, self.axis, self.layout, self.m = whole, axis, layout, m


class _Row:
    """A member's value `whole[m]`: one row per member along axis 0."""

    __slots__ = ("layout", "m", "whole")

    def __init__(self, whole: Var, layout: _Layout, m: int):
        self.whole, self.layout, self.m = whole, layout, m


def _emit(eqns: list[Eqn], prim: P.Primitive, ins: tuple, params: dict, src: Any) -> Var:
    ps = Params(params)
    v = Var(prim.shape_rule(*[a.aval for a in ins], **ps))
    eqns.append(Eqn(prim, ins, ps, v, src))
    return v


def _tile_of(eqns: list[Eqn], whole: Var, axis: int, a: int, b: int, src: Any) -> Var:
    idx = tuple(P.Sl(a, b, 1) if q == axis else P.Sl(0, d, 1)
                for q, d in enumerate(whole.aval.shape))
    return _emit(eqns, P.getitem, (whole,), {"idx": P.BasicIndex(idx)}, src)


def _row_of(eqns: list[Eqn], whole: Var, m: int, src: Any) -> Var:
    idx = (m,) + tuple(P.Sl(0, d, 1) for d in whole.aval.shape[1:])
    return _emit(eqns, P.getitem, (whole,), {"idx": P.BasicIndex(idx)}, src)


def _substitute(g: Graph, eqns: list[Eqn], env: dict[Var, Var]) -> Graph:
    out = []
    apart = env.keys().isdisjoint  # (in C: most equations read nothing replaced; env holds
    for e in eqns:                 # vars only, and constants hash by identity)
        if not apart(e.inputs):
            e = Eqn(e.prim, tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs),
                    e.params, e.out, e.src)
        out.append(e)
    outs = tuple(env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    return g.replace(eqns=tuple(out), outputs=outs)


# ------------------------------------------------------------------ pass 1: one gather

def _segment_read(e: Eqn) -> tuple[int, range] | None:
    """(axis, rows) of a basic read `x[:, lo:hi, :]`: one unit-step slice that is a strict,
    non-empty part of its axis, every other axis read whole."""
    idx = e.params["idx"]
    shape = e.inputs[0].aval.shape
    if idx.__class__ is not P.BasicIndex or len(idx) != len(shape):
        return None
    j = None
    for q, (k, d) in enumerate(zip(idx, shape)):
        if k.__class__ is not P.Sl or k.step != 1:
            return None
        if 0 < len(k) < d:
            if j is not None:
                return None
            j = q
        elif len(k) != d:
            return None
    return None if j is None else (j, range(idx[j].start, idx[j].stop))


def _disjoint(rows: list[range]) -> bool:
    last = -1
    for r in sorted(rows, key=lambda r: r.start):
        if r.start < last:
            return False
        last = r.stop
    return True


def _gathers(g: Graph, segments: bool = False) -> tuple[Graph, dict] | None:
    """Reads of one array at two or more lists of different lengths become tiles of one
    gather (lists of one length batch as one 2-d gather already). With `segments`, so do
    basic reads of disjoint row ranges of several lengths (CSR rows through `indptr`,
    `x[lo:hi]` per segment): their gather is one slice when the ranges tile one."""
    groups: dict[tuple, list[Eqn]] = {}
    rows: dict[int, Any] = {}
    for e in g.eqns:
        if e.prim is P.getitem:
            j = _list_read(e)
            if j is not None:
                rest = tuple(k for q, k in enumerate(e.params["idx"]) if q != j)
                rows[id(e)] = e.params["idx"][j].arr
            elif segments and (s := _segment_read(e)) is not None:
                j, r = s
                rest = ("seg",)
                rows[id(e)] = r
            else:
                continue
            groups.setdefault((e.inputs[0], j, rest), []).append(e)
    groups = {k: ms for k, ms in groups.items() if len(ms) > 1 and
              len({len(rows[id(m)]) for m in ms}) > 1 and
              (k[2][:1] != ("seg",) or _disjoint([rows[id(m)] for m in ms]))}
    groups = _unpackings_dropped(groups, rows)
    if not groups:
        return None
    member = {id(e): (k, m) for k, ms in groups.items() for m, e in enumerate(ms)}
    made: dict[tuple, tuple[Var, _Layout]] = {}
    layouts: dict[tuple, _Layout] = {}  # (one layout for groups of equal lengths: their
    eqns: list[Eqn] = []  # tiles combine row by row)
    env: dict[Var, Var] = {}
    vals: dict[Var, Any] = {}
    for e in g.eqns:
        km = member.get(id(e))
        if km is None:
            eqns.append(e)
            continue
        k, m = km
        base, j, rest = k
        if k not in made:
            ids = [rows[id(r)] for r in groups[k]]
            lengths = tuple(len(a) for a in ids)
            lay = layouts.setdefault(lengths, _Layout(list(lengths)))
            made[k] = (_gather(eqns, base, j, ids, e), lay)
        G, lay = made[k]
        a, b = lay.bounds[m]
        t = _tile_of(eqns, G, j, a, b, e.src)
        env[e.out] = t
        vals[t] = _Tile(G, j, lay, m)
    return _substitute(g, eqns, env), vals


def _unpackings_dropped(groups: dict[tuple, list[Eqn]], rows: dict[int, Any]
                        ) -> dict[tuple, list[Eqn]]:
    """The groups but each iteration's own vector split into fields (see `fields`: their
    tiles would merge nothing, and the rounds cost as much as batching; ba at p = 1,000:
    1,000 groups of 3 reads, 0.4 s of CPU)."""
    drop = fields({k: tuple(len(rows[id(m)]) for m in ms) for k, ms in groups.items()})
    return {k: ms for k, ms in groups.items() if k not in drop} if drop else groups


def _gather(eqns: list[Eqn], base: Var, j: int, ids: list, e: Eqn) -> Var:
    """base's rows at the concatenated lists along axis j: a slice when they are one range."""
    if ids[0].__class__ is range:
        idx = _rows_index(base, j, ids)
    else:
        n = base.aval.shape[j]
        flat = np.concatenate(ids)
        rest = tuple(k for q, k in enumerate(e.params["idx"]) if q != j)
        idx = rest[:j] + (Adv(np.where(flat < 0, flat + n, flat)),) + rest[j:]
    return _emit(eqns, P.getitem, (base,), {"idx": idx}, e.src)


# ------------------------------------------------------------- the operations of members

def _key(a: Any) -> Any:
    return a if a.__class__ is Var else ("const", a.key() if isinstance(a, Const) else a)


def _row_read(a: Any, defs: dict) -> tuple[Var, int] | None:
    """(E, k) when `a` is a basic read `E[k]` of one row (every other axis whole)."""
    d = defs.get(a) if a.__class__ is Var else None
    if d is None or d.prim is not P.getitem:
        return None
    idx = d.params["idx"]
    shape = d.inputs[0].aval.shape
    if idx.__class__ is not P.BasicIndex or len(idx) != len(shape) or \
            idx[0].__class__ is not int or \
            not all(k == P.Sl(0, n, 1) for k, n in zip(idx[1:], shape[1:])):
        return None
    return d.inputs[0], idx[0] % shape[0]


def _classify(e: Eqn, vals: dict, defs: dict) -> tuple | None:
    """(group key, how) for an operation of member values that runs as one on the whole;
    how: ("map", out axis), ("seg", op, axis), ("dot", spec), ("rows",)."""
    ins = e.inputs
    mv = [vals.get(a) if a.__class__ is Var else None for a in ins]
    if all(v is None for v in mv):
        return None
    if len({id(v.layout) for v in mv if v is not None}) != 1 or \
            len({v.m for v in mv if v is not None}) != 1:
        return None  # (one member's values of one layout only)
    tiles = [v for v in mv if isinstance(v, _Tile)]
    rows = [v for v in mv if isinstance(v, _Row)]
    out = e.out.aval
    sig = tuple(("T", id(v.whole), v.axis) if isinstance(v, _Tile) else ("R", id(v.whole))
                if v is not None else _key(a) for a, v in zip(ins, mv))
    if e.prim.elementwise:
        if tiles:
            j = tiles[0].axis
            if any(t.axis != j for t in tiles) or any(a.aval.shape != out.shape for a, v in
                                                      zip(ins, mv) if isinstance(v, _Tile)):
                return None
            erows = []  # (operands E[k] read at a row k of their own per member: `h[i]`)
            kconsts = []  # (constants of the tile's shape, each member its own: `w[lo:hi]`)
            for q, (a, v) in enumerate(zip(ins, mv)):
                if isinstance(v, _Row):  # (a row spreads along the list's axis: its axes after)
                    if a.aval.ndim > out.ndim - j - 1:
                        return None
                elif a.__class__ is Const and a.aval.shape == out.shape:
                    kconsts.append(q)
                    sig = sig[:q] + (_const_tile_key(a, j),) + sig[q + 1:]
                elif v is None:
                    off = j - (out.ndim - a.aval.ndim)
                    if off >= 0 and a.aval.shape[off] != 1:
                        return None
                    r = _row_read(a, defs) if a.aval.ndim <= out.ndim - j - 1 else None
                    if r is not None:
                        erows.append(q)
                        sig = sig[:q] + (("E", id(r[0]), a.aval.shape),) + sig[q + 1:]
            return ("map", e.prim, e.params, sig), ("map", j, tuple(erows), tuple(kconsts))
        if any(a.aval.shape != out.shape for a, v in zip(ins, mv) if v is not None) or \
                any(a.aval.ndim > out.ndim for a in ins):
            return None
        return ("rows", e.prim, e.params, sig), ("rows",)
    if rows:
        return None
    if e.prim is P.take_along and mv[0] is None and isinstance(mv[1], _Tile) and \
            mv[1].axis == e.params["axis"]:  # x[ids[lo:hi]]: a row per index row
        return ("map", e.prim, e.params, sig), ("map", mv[1].axis)
    if e.prim is P.reshape:  # (k,) -> (k, 1): blocks before and after the list's axis
        qs = _reshaped_axes(ins[0].aval.shape, tiles[0].axis, out.shape)
        return ("alts", [(("reshape", (out.shape[:q], out.shape[q + 1:]), sig), ("map", q))
                         for q in qs]) if qs else None
    if e.prim is P.getitem and tiles:  # x[nb][:, 0]: whole along the list's axis
        j, idx = tiles[0].axis, e.params["idx"]
        n = ins[0].aval.shape[j]
        if not P.is_basic(idx) or len(idx) != ins[0].aval.ndim or \
                not all(isinstance(k, (int, P.Sl)) for k in idx) or idx[j] != P.Sl(0, n, 1):
            return None
        rest = tuple(None if q == j else k for q, k in enumerate(idx))
        return ("take", rest, sig), ("map", j - sum(isinstance(k, int) for k in idx[:j]))
    if e.prim in _SEGMENT and len(tiles) == 1:
        j = tiles[0].axis
        if j in e.params["axes"]:
            if not np.issubdtype(ins[0].aval.dtype, np.floating) and e.prim is not P.reduce_sum:
                return None
            return ("seg", e.prim, e.params, sig), ("seg", _SEGMENT[e.prim], j)
        if e.prim is P.reduce_sum:
            return ("map", e.prim, e.params, sig), (
                "map", j - sum(1 for a in e.params["axes"] if a < j))
        return None
    if e.prim is P.einsum and len(ins) == 2:
        (sa, sb), o = parse_spec(e.params["spec"])
        if len(tiles) == 1:
            q = 0 if isinstance(mv[0], _Tile) else 1
            c = (sa, sb)[q][tiles[0].axis]
            if c in o and c not in (sa, sb)[1 - q] and (sa, sb)[q].count(c) == 1 and \
                    o.count(c) == 1:
                return ("map", e.prim, e.params, sig), ("map", o.index(c))
            k, sk = ins[1 - q], (sa, sb)[1 - q]  # a member's own constant, contracted with it:
            if k.__class__ is Const and c not in o and sk.count(c) == 1 and \
                    (sa, sb)[q].count(c) == 1:  # (one product, then one segment sum)
                sig = sig[:1 - q] + (_const_tile_key(k, sk.index(c)),) + sig[2 - q:]
                return ("dot", e.prim, e.params, sig), ("dot", make_spec([sa, sb], c + o),
                                                        1 - q, sk.index(c))
            return None
        ta, tb = tiles
        c = sa[ta.axis]
        if sb[tb.axis] != c or c in o or sa.count(c) != 1 or sb.count(c) != 1:
            return None
        return ("dot", e.prim, e.params, sig), ("dot", make_spec([sa, sb], c + o))
    return None


def _reshaped_axes(shape: tuple, j: int, out: tuple) -> list[int]:
    """The axes of `out` that a reshape can keep axis j of `shape` as: the blocks before and
    after it reshape alone (then reshaping the whole with the rows there is the same map).
    Several where unit axes make it ambiguous (a list of length 1)."""
    pre, post = math.prod(shape[:j]), math.prod(shape[j + 1:])
    return [q for q, d in enumerate(out) if d == shape[j] and math.prod(out[:q]) == pre and
            math.prod(out[q + 1:]) == post]


def _round(g: Graph, vals: dict) -> Graph | None:
    """One round: alike operations of two or more members become one on the whole."""
    groups: dict[tuple, list[Eqn]] = {}
    how: dict[int, tuple] = {}
    pending = []
    defs = dict(zip(map(_OUT, g.eqns), g.eqns))
    apart = vals.keys().isdisjoint  # (each round walks every equation: those that read no
    for e in g.eqns:                # member's value, the most, which _classify passes over,
        if apart(e.inputs):         # are told in C)
            continue
        c = _classify(e, vals, defs)
        if c is None:
            continue
        if c[0] == "alts":  # (joins the group its options share with most others)
            if len(c[1]) > 1:
                pending.append((e, c[1]))
                continue
            c = c[1][0]
        groups.setdefault(c[0], []).append(e)
        how[id(e)] = c
    for e, opts in pending:
        c = max(opts, key=lambda o: len(groups.get(o[0], ())))
        groups.setdefault(c[0], []).append(e)
        how[id(e)] = c
    keep = set()
    for k, ms in groups.items():
        if len(ms) < 2:
            continue
        kind = how[id(ms[0])][1]
        lay = next(v.layout for v in (vals.get(a) for a in ms[0].inputs if
                                      a.__class__ is Var) if v is not None)
        if kind[0] == "map":
            covered = sum(b - a for a, b in (lay.bounds[_member(e, vals)] for e in ms))
            if 2 * covered < lay.rows:
                continue
        if (kind[0] == "map" and any(kind[2:4]) or kind[0] == "dot" and len(kind) > 2) and \
                not _one_per_member(ms, kind, lay, vals, defs):
            continue
        keep.add(k)
    if not keep:
        return None
    made: dict[tuple, Any] = {}
    spread: dict[tuple, Var] = {}
    eqns: list[Eqn] = []
    env: dict[Var, Var] = {}
    for e in g.eqns:
        h = how.get(id(e))
        if h is None or h[0] not in keep:
            eqns.append(e)
            continue
        k, kind = h
        mv = [vals.get(a) if a.__class__ is Var else None for a in e.inputs]
        lay = next(v.layout for v in mv if v is not None)
        m = _member(e, vals)
        if k not in made:
            made[k] = _whole_op(eqns, e, mv, kind, lay, spread, groups[k], vals, defs)
        W = made[k]
        if kind[0] == "map":
            a, b = lay.bounds[m]
            t = _tile_of(eqns, W, kind[1], a, b, e.src)
            vals[t] = _Tile(W, kind[1], lay, m)
        else:
            t = _row_of(eqns, W, m, e.src)
            vals[t] = _Row(W, lay, m)
        env[e.out] = t
    return _substitute(g, eqns, env)


def _one_per_member(ms: list[Eqn], kind: tuple, lay: _Layout, vals: dict, defs: dict
                    ) -> bool:
    """Whether every member has its rows E[k] and constants, one of each: a read of one list
    that two iterations share (merged when traced) is one member, whose operations in the
    two iterations may read different rows or constants (a silent wrong answer if merged)."""
    qs = kind[2] + kind[3] if kind[0] == "map" else (kind[2],)
    per: dict[int, tuple] = {}
    for e in ms:
        own = tuple(_row_read(e.inputs[q], defs)[1] if kind[0] == "map" and q in kind[2]
                    else id(e.inputs[q]) for q in qs)
        if per.setdefault(_member(e, vals), own) != own:
            return False
    return len(per) == len(lay.bounds)


def _member(e: Eqn, vals: dict) -> int:
    return next(v.m for v in (vals.get(a) for a in e.inputs if a.__class__ is Var)
                if v is not None)


def _whole_op(eqns: list[Eqn], e: Eqn, mv: list, kind: tuple, lay: _Layout,
              spread: dict[tuple, Var], group: list[Eqn], vals: dict, defs: dict) -> Var:
    """The one operation on the wholes that computes every member's value."""
    src = e.src
    if kind[0] == "map" and len(kind) > 2 and kind[2]:
        ins = list(e.inputs)
        for q in kind[2]:  # member m's E[k_m], spread to its rows: E[k[owner]]
            E = _row_read(e.inputs[q], defs)[0]
            ks = np.zeros(len(lay.bounds), dtype=np.int64)
            for x in group:
                ks[_member(x, vals)] = _row_read(x.inputs[q], defs)[1]
            a = e.inputs[q]
            shape = (lay.rows,) + (1,) * (e.out.aval.ndim - kind[1] - 1 - a.aval.ndim) + \
                a.aval.shape
            s = _emit(eqns, P.take, (E,), {"ids": Adv(ks[lay.owner]), "axis": 0}, src)
            if s.aval.shape != shape:
                s = _emit(eqns, P.reshape, (s,), {"shape": shape}, src)
            ins[q] = s
        e = Eqn(e.prim, tuple(ins), e.params, e.out, e.src)
        mv = [None if q in kind[2] else v for q, v in enumerate(mv)]
    if kind[0] == "seg":
        _, op, j = kind
        W = mv[0].whole
        if op == "sum":
            S = _emit(eqns, P.segment_sum, (W,), {"ids": Adv(lay.owner), "axis": j,
                                                   "num": len(lay.bounds)}, src)
        else:
            shape = W.aval.shape[:j] + (len(lay.bounds),) + W.aval.shape[j + 1:]
            start = _emit(eqns, P.full, (), {"shape": shape, "dtype": W.aval.dtype,
                                             "value": -np.inf if op == "maximum" else np.inf},
                          src)
            idx = Const(lay.owner.reshape((1,) * j + (-1,) + (1,) * (W.aval.ndim - j - 1)))
            S = _emit(eqns, P.scatter_reduce_along, (start, W, idx), {"axis": j, "op": op},
                      src)
        # the members' axis first; the other summed axes where that puts them
        left = tuple(a + 1 if a < j else a for a in e.params["axes"] if a != j)
        if j:
            S = _emit(eqns, P.transpose, (S,), {"perm": (j,) + tuple(
                q for q in range(S.aval.ndim) if q != j)}, src)
        if left:
            S = _emit(eqns, P.reduce_sum if op == "sum" else
                      P.reduce_max if op == "maximum" else P.reduce_min, (S,),
                      {"axes": left}, src)
        return S
    if kind[0] == "map" and len(kind) > 3 and kind[3]:
        ins = list(e.inputs)
        for q in kind[3]:
            ins[q] = _member_consts(group, q, kind[1], lay, vals)
        e = Eqn(e.prim, tuple(ins), e.params, e.out, e.src)
    if kind[0] == "dot":
        ins = [v.whole if isinstance(v, _Tile) else None for v in mv]
        if len(kind) > 2:
            ins[kind[2]] = _member_consts(group, kind[2], kind[3], lay, vals)
        prod = _emit(eqns, P.einsum, tuple(ins), {"spec": kind[1]}, src)
        return _emit(eqns, P.segment_sum, (prod,), {"ids": Adv(lay.owner), "axis": 0,
                                                     "num": len(lay.bounds)}, src)
    if e.prim is P.reshape:
        q = kind[1]
        shape = e.out.aval.shape[:q] + (lay.rows,) + e.out.aval.shape[q + 1:]
        return _emit(eqns, P.reshape, (mv[0].whole,), {"shape": shape}, src)
    if e.prim is P.getitem:
        W, j, idx = mv[0].whole, mv[0].axis, e.params["idx"]
        whole = tuple(P.Sl(0, lay.rows, 1) if q == j else k for q, k in enumerate(idx))
        return _emit(eqns, P.getitem, (W,), {"idx": P.BasicIndex(whole)}, src)
    ins = []
    out = e.out.aval
    for a, v in zip(e.inputs, mv):
        if isinstance(v, _Tile):
            ins.append(v.whole)
        elif isinstance(v, _Row) and kind[0] == "map":
            j = kind[1]  # S[owner], shaped to spread along the tiles' axis
            shape = (lay.rows,) + (1,) * (out.ndim - j - 1 - a.aval.ndim) + a.aval.shape
            if (id(v.whole), shape) not in spread:
                s = _emit(eqns, P.take, (v.whole,), {"ids": Adv(lay.owner), "axis": 0}, src)
                if s.aval.shape != shape:
                    s = _emit(eqns, P.reshape, (s,), {"shape": shape}, src)
                spread[id(v.whole), shape] = s
            ins.append(spread[id(v.whole), shape])
        elif isinstance(v, _Row):
            ins.append(v.whole)
        else:
            ins.append(a)
    return _emit(eqns, e.prim, tuple(ins), dict(e.params), src)


def _const_tile_key(a: Const, j: int) -> tuple:
    """What members' own constants along axis j must share to make one: all but j's length."""
    return ("K", a.aval.dtype.str, j, a.aval.shape[:j] + a.aval.shape[j + 1:])


def _member_consts(group: list[Eqn], q: int, axis: int, lay: _Layout, vals: dict) -> Const:
    """The members' constants (operand q of each) in the layout's order along `axis`: the
    whole that each member's constant is the tile of (every member has one)."""
    parts: list[Any] = [None] * len(lay.bounds)
    for x in group:
        parts[_member(x, vals)] = x.inputs[q].value
    return Const(np.concatenate(parts, axis=axis))


def _row_products(g: Graph) -> Graph:
    """einsum(x[k], c) for many rows k of x, c the same: rows of one einsum(x, c), so that
    work mixing them with tiles (a node's own score next to its neighbours') sees rows E[k]
    of one array. Only where they read at least half of x's rows."""
    defs = {e.out: e for e in g.eqns}
    groups: dict[tuple, list[tuple[Eqn, int, int]]] = {}
    for e in g.eqns:
        if e.prim is not P.einsum:
            continue
        rs = [(q, _row_read(a, defs)) for q, a in enumerate(e.inputs)]
        rs = [(q, r) for q, r in rs if r is not None]
        if len(rs) != 1:
            continue
        q, (x, k) = rs[0]
        key = (e.params["spec"], q, x, tuple(a for p, a in enumerate(e.inputs) if p != q))
        groups.setdefault(key, []).append((e, q, k))
    take = {id(e): (key, k) for key, ms in groups.items()
            if len(ms) > 1 and 2 * len({k for _, _, k in ms}) >= key[2].aval.shape[0]
            for e, _, k in ms}
    made: dict[tuple, Var] = {}
    eqns: list[Eqn] = []
    env: dict[Var, Var] = {}
    for e in g.eqns:
        hit = take.get(id(e))
        if hit is None:
            eqns.append(e)
            continue
        key, k = hit
        spec, q, x, _ = key
        if key not in made:
            ins_s, o = parse_spec(spec)
            r = next(c for c in "abcdefghijklmnopqrstuvwxyz" if c not in spec)
            ins_s = [r + t if p == q else t for p, t in enumerate(ins_s)]
            xs = tuple(x if p == q else a for p, a in enumerate(e.inputs))
            made[key] = _emit(eqns, P.einsum, xs, {"spec": make_spec(ins_s, r + o)}, e.src)
        env[e.out] = _row_of(eqns, made[key], k, e.src)
    return _substitute(g, eqns, env) if made else g


def list_maps(g: Graph, segments: bool = False) -> Graph:
    """Work on rows picked by static lists of different lengths (two or more reads of one
    array) runs once on one gather, each member's value a tile or a row of it (module doc);
    with `segments`, also work on disjoint basic row ranges of several lengths."""
    g0, g = g, shared_list_reads(g)
    first = _gathers(g, segments)
    if first is None:
        return g0
    tiled, vals = first
    h = _row_products(tiled)
    merged = h is not tiled
    for _ in range(_MAX_ROUNDS):
        nxt = _round(h, vals)
        if nxt is None:
            break
        h, merged = nxt, True
    out = _joins(h, vals)
    # (tiles that no work merged on and no join read whole are the reads they were, of one
    # gather: batching then merges the reads as reads, where the tiles of each member stay
    # one read per member, 1,000 for ba's Jacobian blocks)
    return out if merged or out is not h else g0


def _joins(g: Graph, vals: dict) -> Graph:
    """`np.concatenate` of tiles of one whole along its list axis is that whole's rows in the
    tiles' order: the whole itself, one slice of it, or one gather (a tile used twice, when
    two members read the same list)."""
    eqns = []
    joined = False
    for e in g.eqns:
        ts = [vals.get(a) if a.__class__ is Var else None for a in e.inputs]
        if e.prim is not P.concatenate or len(ts) < 2 or \
                not all(isinstance(t, _Tile) and t.whole is ts[0].whole and
                        t.axis == e.params["axis"] for t in ts):
            eqns.append(e)
            continue
        W, j = ts[0].whole, ts[0].axis
        ids = [range(*t.layout.bounds[t.m]) for t in ts]
        eqns.append(Eqn(P.getitem, (W,), Params({"idx": _rows_index(W, j, ids)}), e.out, e.src))
        joined = True
    return g.replace(eqns=tuple(eqns)) if joined else g


def _rows_index(base: Var, j: int, ids: list[range]) -> Any:
    """The index of base's rows `ids` (ranges, in order) along axis j: a slice when they
    follow each other, else an integer list."""
    shape = base.aval.shape
    if all(p.stop == q.start for p, q in itertools.pairwise(ids)):
        return P.BasicIndex(tuple(P.Sl(ids[0].start, ids[-1].stop, 1) if q == j else
                                  P.Sl(0, d, 1) for q, d in enumerate(shape)))
    flat = np.concatenate([np.arange(r.start, r.stop) for r in ids])
    return tuple(Adv(flat) if q == j else P.Sl(0, d, 1) for q, d in enumerate(shape))


__all__ = ["list_maps"]
