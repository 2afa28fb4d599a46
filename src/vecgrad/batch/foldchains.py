"""Before batching: running maxima (minima) kept per key in a Python list or dict are one scatter.

`best[k] = max(best[k], v)` with `best` a Python list or dict and k a Python int traces no
buffer: each key's running maximum is a chain of selections through its own carry,
c' = where(v > c, v, c) (builtins.max; `np.maximum(best[k], v)`: c' = maximum(c, v)), and the
keys interleave the chains' links. Batching merges the chains' t-th links, one round per
link of the longest chain, and chains of unequal lengths leave ragged rounds that no scan
rolls (2,000 steps over 64 keys: 74x NumPy's np.maximum.at). A maximum is associative,
commutative and exact, so a group of such chains (c0_j each chain's first carry) is one
scatter with the chains' values and their chain's number j_t as positions:

    chain j's result = max(..max(max(c0_j, v_1), v_2).., v_l) = scatter_max([c0_j], [v_t], [j_t])[j]

Python's max keeps its carry unless v is strictly greater, so a NaN v never wins and a NaN
carry is kept: the scatter's op builtin_max (primitives/sorting.py), as extremes' builtin links
(where np.maximum links join Python's max ones, NaN values of the latter are taken as -inf).
The gradient shares a cotangent among equal winners (scatter_reduce_along's VJP, as
extremes' chains; Python's own chain rule gives it to the earliest). Chains of one length are
left alone: batching merges their links into uniform rounds, which `scans` rolls into one
running extreme with Python's tie rule (affine.python_extreme). Chains whose result another
chain's link reads (`best[1] = max(best[1], best[0] + x)`) are left out of the group, so the
scatter, placed at the group's last link, never reads what it defines.

Over an edge list, `best[v] = max(best[v], x[u] * w)` traces max(0.0, x[u] * w) once for
every node v whose first edge comes from u (hash-consed): a first step shared by several
chains. Each of them starts from the Python number with the shared steps as its first links
(kept in the graph for the others), so the scatter starts from constants rather than from a
stack of first carries computed apart (edge_tuples_max: 14 final equations, not 26).
"""
from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn, Graph, Params, Var, uses
from .affine import full_slices
from .census import census
from .extremes import _emit

_CMP = {P.gt: "maximum", P.lt: "minimum"}  # where(v > c, v, c): Python's max
_FLIPPED = {P.lt: "maximum", P.gt: "minimum"}  # where(c < v, v, c): the same
_NP = {P.maximum: "maximum", P.minimum: "minimum"}
_STEPS = frozenset([P.where, P.maximum, P.minimum])
_PRIM, _OUT = operator.itemgetter(0), operator.itemgetter(3)


def keyed_folds(g: Graph) -> bool:
    """Whether g may hold running extremes through carries of their own (a quick look)."""
    prims = census(g)
    return P.maximum in prims or P.minimum in prims or \
        P.where in prims and (P.gt in prims or P.lt in prims)


class _Chain:
    """One key's running extreme: its first carry `init`, the operation, and its links
    (equations, with the comparison of a where, its value v and whether v is Python's: a
    NaN v never wins); `kept`: how many first links stay (other chains start from them)."""

    __slots__ = ("init", "kept", "links", "op")

    def __init__(self, init: Any, op: str, kept: int = 0):
        self.init, self.op, self.links, self.kept = init, op, [], kept


def _step(e: Eqn, cmps: dict) -> tuple | None:
    """e as one step: (op, carry, value, comparison or None), the carry the where's kept
    operand (np.maximum's: both orders, decided by the caller), or None."""
    if e.prim is not P.where:
        a, b = e.inputs
        return _NP[e.prim], a, b, None
    cond, v, c = e.inputs
    cmp = cmps.get(cond) if cond.__class__ is Var else None
    if cmp is None or v is c:
        return None
    x, y = cmp.inputs
    op = _CMP[cmp.prim] if _same(x, v) and _same(y, c) else \
        _FLIPPED[cmp.prim] if _same(x, c) and _same(y, v) else None
    return None if op is None else (op, c, v, cmp)


def _same(a: Any, b: Any) -> bool:
    """One value: one variable, or constants of one content (a Python number traced twice,
    `max(0.0, v)`, may be two constants)."""
    return a is b or a.__class__ is Const and b.__class__ is Const and a.key() == b.key()


def _chains(g: Graph, n_uses: Any) -> list[_Chain]:
    """The chains of steps of g, each step's carry the previous step's result read by it
    alone (with n_uses: its where and comparison; without: any reads, a first look)."""
    eqns = g.eqns
    cmps = {e.out: e for e in itertools.compress(eqns, map(_CMP.__contains__, map(_PRIM, eqns)))}
    ends: dict[Var, _Chain] = {}
    firsts: dict[Var, tuple] = {}  # a step from a Python number or such a step (_prefix)
    for e in itertools.compress(eqns, map(_STEPS.__contains__, map(_PRIM, eqns))):
        s = _step(e, cmps)
        if s is None or e.out.aval.dtype.kind not in "fi":
            continue
        op, c, v, cmp = s
        if cmp is None and ends.get(c) is None and ends.get(v) is not None:
            c, v = v, c  # (np.maximum(v, best[k]): the carry second)
        if v.aval == e.out.aval and (c.__class__ is Const or c in firsts):
            firsts[e.out] = (op, c, (e, cmp, v))
        if v.aval != e.out.aval or n_uses is not None and cmp is not None and \
                n_uses.get(cmp.out) != 1:
            continue
        ch = ends.get(c)
        if ch is not None and (ch.op != op or c.aval != e.out.aval or n_uses is not None and
                               n_uses.get(c) != (1 if cmp is None else 2)):
            ch = None
        if ch is None:
            if c.aval.dtype != e.out.aval.dtype or \
                    np.broadcast_shapes(c.aval.shape, e.out.aval.shape) != e.out.aval.shape:
                continue
            ch = _from_prefix(firsts, c, op) or _Chain(c, op)
        else:
            del ends[c]
        ch.links.append((e, cmp, v))
        ends[e.out] = ch
    return [ch for ch in ends.values() if len(ch.links) > 1]


_PREFIX = 8  # (the longest shared prefix looked for: a bounded walk per chain)


def _from_prefix(firsts: dict, c: Var, op: str) -> _Chain | None:
    """A chain from the Python number that the steps to c, shared with other chains, started
    from (`max(0.0, x[u] * w)` for each edge from u is one equation, traced once: several
    keys' chains start from it), those steps its first links, kept in the graph for the
    others: max is associative, so max(max(0.0, v), ...) is the scatter of v among the
    chain's values into 0.0."""
    links = []
    while len(links) < _PREFIX:
        rec = firsts.get(c)
        if rec is None or rec[0] != op:
            return None
        links.append(rec[2])
        c = rec[1]
        if c.__class__ is Const:
            ch = _Chain(c, op, kept=len(links))
            ch.links.extend(reversed(links))
            return ch
    return None


def _groups(chains: list[_Chain]) -> list[list[_Chain]]:
    """Chains of one operation and shape, more than one length among them (module doc)."""
    by: dict[tuple, list[_Chain]] = {}
    for ch in chains:
        by.setdefault((ch.op, ch.links[0][0].out.aval), []).append(ch)
    return [gr for gr in by.values()
            if len({len(ch.links) for ch in gr}) > 1 and max(len(ch.links) for ch in gr) > 2]


def _placed(g: Graph, groups: list[list[_Chain]], where: dict
            ) -> list[tuple[int, list[_Chain]]]:
    """Each group's members whose result is first read after the group's last link (the
    place of its scatter), with that place; groups left with one length dropped."""
    ends = {ch.links[-1][0].out for gr in groups for ch in gr}
    first: dict[Var, int] = {}
    for i, e in enumerate(g.eqns):
        for a in e.inputs:
            if a in ends and a not in first:
                first[a] = i
    out = []
    for gr in groups:
        while True:
            at = max(where[id(ch.links[-1][0])] for ch in gr)
            keep = [ch for ch in gr if first.get(ch.links[-1][0].out, len(where)) > at]
            if len(keep) == len(gr):
                break
            gr = keep
        if _groups(gr):  # (numbered in the order their results are first read: a list
            # read back by key reads the scatter's positions 0, 1, ..., a slice, where the
            # order of the chains' last links made it a gather of a permutation, and its VJP)
            out.append((at, sorted(gr, key=lambda ch: first.get(ch.links[-1][0].out,
                                                                  len(where)))))
    return out


def join_keyed_folds(g: Graph) -> Graph:
    """Groups of running extremes through their own carries, their links interleaved (a
    Python list or dict of maxima written by key), become one scatter each (module doc)."""
    if not _groups(_chains(g, None)):
        return g
    n_uses = uses(g)
    outs = {a for a in g.outputs if a.__class__ is Var}
    chains = [ch for ch in _chains(g, n_uses)
              if not any(e.out in outs for e, _, _ in ch.links[:-1])]
    where = {id(e): i for i, e in enumerate(g.eqns)}
    placed = _placed(g, _groups(chains), where)
    if not placed:
        return g
    gone = {id(x) for _, gr in placed for ch in gr for e, cmp, _ in ch.links[ch.kept:]
            for x in (e, cmp) if x is not None}
    at = {i: gr for i, gr in placed}
    eqns: list[Eqn] = []
    seen: dict = {}  # (stacks of values made so far: see _stacked)
    for i, e in enumerate(g.eqns):
        gr = at.get(i)
        if gr is not None:
            _joined(eqns, gr, where, e.src, seen)
        elif id(e) not in gone:
            eqns.append(e)
    return g.replace(eqns=tuple(eqns))


def _joined(eqns: list[Eqn], group: list[_Chain], order: dict, src: Any, seen: dict
            ) -> None:
    """The group's scatter (first carries; the values in the trace's order, so that the
    loop's values batch in theirs, with their chain's number as positions) and each chain's
    result read back from it under its own name."""
    aval = group[0].links[0][0].out.aval
    shape, dt, op = aval.shape, aval.dtype, group[0].op
    base = _stacked(eqns, [_full(eqns, ch.init, shape, src) for ch in group], src)
    links = sorted(((order[id(e)], j, v, cmp is not None) for j, ch in enumerate(group)
                    for e, cmp, v in ch.links), key=operator.itemgetter(0))
    vals = _stacked(eqns, [ln[2] for ln in links], src, seen)
    clean = np.array([ln[3] for ln in links])
    if clean.all():  # (Python's max throughout: builtin_max, where a NaN value never wins)
        op = "builtin_max" if op == "maximum" else "builtin_min"
    elif dt.kind == "f" and clean.any():  # (some links np.maximum: NaN as -inf in the others)
        nan = _emit(eqns, P.isnan, (vals,), {}, src)
        nan = _emit(eqns, P.logical_and, (nan, Const(clean.reshape((-1,) + (1,) * len(
            shape)))), {}, src)
        inf = Const(np.array(-np.inf if op == "maximum" else np.inf, dt))
        vals = _emit(eqns, P.where, (nan, inf, vals), {}, src)
    pos = Const(np.array([ln[1] for ln in links], np.int64).reshape((-1,) + (1,) * len(shape)))
    out = _emit(eqns, P.scatter_reduce_along, (base, vals, pos), {"axis": 0, "op": op}, src)
    for j, ch in enumerate(group):
        eqns.append(Eqn(P.getitem, (out,), Params({"idx": (j,) + full_slices(shape)}),
                        ch.links[-1][0].out, src))


def _full(eqns: list[Eqn], a: Any, shape: tuple, src: Any) -> Any:
    """A first carry (a Python number, or a value that broadcasts) at the chains' shape."""
    if a.__class__ is Const:
        return Const(np.broadcast_to(a.value, shape))
    if a.aval.shape == shape:
        return a
    return _emit(eqns, P.broadcast_to, (a,), {"shape": shape}, src)


def _stacked(eqns: list[Eqn], parts: list, src: Any, seen: dict | None = None) -> Any:
    """The parts stacked; one stack for the groups that stack the same values (`hi[k] =
    max(hi[k], x); lo[k] = min(lo[k], x)`: two equal stacks were batched as a stack of two
    broadcast copies, split again after). `seen` holds them with their parts (so that the
    parts' ids stay theirs)."""
    if all(p.__class__ is Const for p in parts):
        return Const(np.stack([p.value for p in parts]))
    if seen is None:
        return _emit(eqns, P.stack, tuple(parts), {"axis": 0}, src)
    key = tuple(map(id, parts))
    hit = seen.get(key)
    if hit is None:
        hit = seen[key] = (_emit(eqns, P.stack, tuple(parts), {"axis": 0}, src), parts)
    return hit[0]


__all__ = ["join_keyed_folds", "keyed_folds"]
