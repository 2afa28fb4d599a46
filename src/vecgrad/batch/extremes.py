"""Before batching: chains of scatter-maxima (and minima) into one buffer are one.

`buf[b] = np.maximum(buf[b], v)` in a loop, at traced positions b (`for a, b in zip(src, dst)`)
or at Python-int positions that repeat (`pooled[c] = np.maximum(pooled[c], h[i] @ W)` over a
list of cluster ids), is a chain of writes, each reading the previous one's result: a
recurrence as traced (a rolled loop of 3,000 steps: 50,000x the hand-vectorized
`np.maximum.at`; or one round of the batch pass per repeat of a position: 31x). Maximum and
minimum are associative and commutative and exact, so the chain is one scatter:

    scatter_max(scatter_max(x, v_1, i_1), v_2, i_2) = scatter_max(x, [v_1, v_2], [i_1, i_2])

with the same value as the loop's order, NaNs included (np.maximum.at propagates them as
np.maximum does). Its gradient shares a cotangent among the winners of a position, as np.max
does (the loop's own chain rule at an exact tie between two steps gives 0.5 to each of the
two, a different subgradient; ties of floats computed apart are rare).

The tracer writes a traced-position update as `scatter_reduce_along` (numpy/_indexing.py);
here a basic-index update `x.at[c].set(maximum(x[c], v))` becomes one too, and links whose
result only the next link reads are joined: values and positions concatenated along the
axis, so the per-step values batch as one operation feeding one scatter.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn, Graph, Params, Var, uses
from .census import census

_OPS = ("maximum", "minimum", "builtin_max", "builtin_min")


_EXTREME = {P.maximum: "maximum", P.minimum: "minimum"}


def scatter_extremes(g: Graph) -> bool:
    """Whether g holds a scatter-max or -min, or a write of a maximum or minimum (np's, or
    Python's builtin: a where of a comparison) (a quick look)."""
    prims = census(g)
    if not (P.scatter_reduce_along in prims or P.setitem in prims and (
            P.maximum in prims or P.minimum in prims or
            P.where in prims and (P.gt in prims or P.lt in prims))):
        return False
    # (and a chain of two: a write into the result of another, each a scatter-reduce or a
    # write of an extreme, as `join_extremes` needs; it costs about 1 us per operation)
    reduce, setitem, extreme = P.scatter_reduce_along, P.setitem, (*_EXTREME, P.where)
    made: set[Var] = set()  # results of maxima, minima and wheres
    links: set[Var] = set()  # results of writes that may be links
    for e in g.eqns:
        p = e.prim
        if p in extreme:
            made.add(e.out)
        elif p is reduce or p is setitem and e.inputs[1] in made:
            if e.inputs[0] in links:
                return True
            links.add(e.out)
    return False


class _Link:
    """One write of a chain: into `base`, the values `vals` (an atom, or a row to reshape)
    at `idx` (an atom), by `op` along `axis`; `read` is the base's read it maximizes with."""

    __slots__ = ("axis", "base", "e", "idx", "op", "read", "row", "vals")

    def __init__(self, e, base, vals, idx, op, axis, read=None, row=None):
        self.e, self.base, self.vals, self.idx = e, base, vals, idx
        self.op, self.axis, self.read, self.row = op, axis, read, row


def _link(e: Eqn, defs: dict, n_uses: dict) -> _Link | None:
    """e as a scatter-extreme write: a scatter_reduce_along, or x.at[c].set(maximum(x[c], v))
    at a Python-int row c (every other axis whole), with the read x[c] and the maximum used
    there only (`x[c] = maximum(x[c], x[c] * 0.5)` reads the previous link in its value)."""
    if e.prim is P.scatter_reduce_along:
        if e.params["op"] not in _OPS:
            return None
        return _Link(e, e.inputs[0], e.inputs[1], e.inputs[2], e.params["op"],
                     e.params["axis"])
    if e.prim is not P.setitem:
        return None
    x, m = e.inputs
    idx = e.params["idx"]
    d = defs.get(m) if m.__class__ is Var else None
    if d is None or d.prim not in _EXTREME and d.prim is not P.where or not idx or \
            idx[0].__class__ is not int or \
            not all(k == P.Sl(0, n, 1) for k, n in zip(idx[1:], x.aval.shape[1:])) or \
            len(idx) != x.aval.ndim or m.aval.dtype != x.aval.dtype or n_uses.get(m) != 1:
        return None
    if d.prim is P.where:
        return _builtin_link(e, x, idx, d, defs, n_uses)
    for j, r in enumerate(d.inputs):
        rd = defs.get(r) if r.__class__ is Var else None
        v = d.inputs[1 - j]
        if rd is not None and rd.prim is P.getitem and rd.inputs[0] is x and \
                rd.params["idx"] == idx and v.aval.dtype == x.aval.dtype and \
                n_uses.get(r) == 1 and v is not r:
            c = idx[0] % x.aval.shape[0]
            pos = Const(np.full((1,) * x.aval.ndim, c, dtype=np.int64))
            return _Link(e, x, v, pos, _EXTREME[d.prim], 0, read=r, row=m.aval.shape)
    return None


_BUILTIN = {P.gt: "builtin_max", P.lt: "builtin_min"}


def _builtin_link(e: Eqn, x: Any, idx: tuple, d: Eqn, defs: dict, n_uses: dict
                  ) -> _Link | None:
    """x.at[c].set(max(x[c], v)) with Python's builtin max (where(v > x[c], v, x[c]),
    pybuiltins; min: `<`), the comparison and the read used there only: a link of Python's
    builtin_max (min) of the values v (a NaN v never wins: primitives/sorting.py)."""
    cond, v, r = d.inputs
    c = defs.get(cond) if cond.__class__ is Var else None
    rd = defs.get(r) if r.__class__ is Var else None
    if c is None or c.prim not in _BUILTIN or c.inputs[0] is not v or c.inputs[1] is not r \
            or n_uses.get(cond) != 1 or rd is None or rd.prim is not P.getitem or \
            rd.inputs[0] is not x or rd.params["idx"] != idx or n_uses.get(r) != 2 or \
            v.aval != r.aval or v is r:
        return None
    pos = Const(np.full((1,) * x.aval.ndim, idx[0] % x.aval.shape[0], dtype=np.int64))
    return _Link(e, x, v, pos, _BUILTIN[c.prim], 0, read=r, row=r.aval.shape)


def join_extremes(g: Graph) -> Graph:
    """Chains of scatter-maxima (or minima) into one buffer, each link read only by the
    next (and by its own read of the position it writes), become one scatter of the
    concatenated values and positions (module doc). Chains of writes at Python-int rows
    that never repeat a row are left to the batch pass (one elementwise maximum)."""
    n_uses = uses(g)
    outs = {a for a in g.outputs if a.__class__ is Var}
    defs: dict[Var, Eqn] = {}
    chains: dict[Var, list[_Link]] = {}  # a link's result -> the chain's links up to it
    absorbed: set[int] = set()
    for e in g.eqns:
        defs[e.out] = e
        ln = _link(e, defs, n_uses)
        if ln is None:
            continue
        prev = chains.get(ln.base)
        own = 1 if ln.read is not None else 0  # (the link's own read of the base)
        if prev is not None and prev[-1].op == ln.op and prev[-1].axis == ln.axis and \
                n_uses.get(ln.base) == 1 + own and ln.base not in outs:
            chains[e.out] = chains.pop(ln.base) + [ln]
            absorbed.add(id(prev[-1].e))
        else:
            chains[e.out] = [ln]
    return joined_chains(g, [c for c in chains.values() if len(c) > 1 and _pays(c)], _joined)


def link_chains(g: Graph, link: Any, follows: Any) -> list[list]:
    """The chains of two links or more of g: `link(e)` is e as a link (a record with `.e`
    and `.base`) or None; a link extends the chain that ends at its base where `follows(last
    link, link)` and the base is no output."""
    outs = {a for a in g.outputs if a.__class__ is Var}
    chains: dict[Var, list] = {}  # a link's result -> the chain's links up to it
    for e in g.eqns:
        ln = link(e)
        if ln is None:
            continue
        prev = chains.get(ln.base)
        if prev is not None and ln.base not in outs and follows(prev[-1], ln):
            chains[e.out] = chains.pop(ln.base) + [ln]
        else:
            chains[e.out] = [ln]
    return [c for c in chains.values() if len(c) > 1]


def joined_chains(g: Graph, chains: list, join: Any) -> Graph:
    """g with each chain of links (records with the equation `.e`) made one equation: every
    link but the last dropped, the last replaced by `join(eqns, chain, e)`, which may append
    the equations it needs to `eqns` first and returns the one that takes e's result."""
    global _SEEN
    if not chains:
        return g
    ends = {id(c[-1].e): c for c in chains}
    gone = {id(ln.e) for c in chains for ln in c[:-1]}
    eqns: list[Eqn] = []
    _SEEN = {}
    try:
        for e in g.eqns:
            if id(e) in gone:
                continue
            chain = ends.get(id(e))
            eqns.append(e if chain is None else join(eqns, chain, e))
    finally:
        _SEEN = None
    return g.replace(eqns=tuple(eqns))


# While joined_chains runs: the concatenations made so far, by axis and operands (with the
# operands, which keeps their ids from being reused). Two chains of one loop over the same
# values (`hi[k] = max(hi[k], x); lo[k] = min(lo[k], x)`) then scatter one concatenation;
# two equal ones were batched as a stack of two broadcast copies, split again after.
_SEEN: dict | None = None


def _joined(eqns: list[Eqn], chain: list[_Link], e: Eqn) -> Eqn:
    """The chain's one scatter-reduce (its values and positions concatenated)."""
    vals = [_as_values(eqns, ln) for ln in chain]
    parts = [_concat(eqns, vals, chain[0].axis, e.src),
             _concat(eqns, [ln.idx for ln in chain], chain[0].axis, e.src)]
    ps = Params({"axis": chain[0].axis, "op": chain[0].op})
    return Eqn(P.scatter_reduce_along, (chain[0].base, *parts), ps, e.out, e.src)


def _pays(chain: list[_Link]) -> bool:
    """A chain of scatters, or of writes at rows of which some repeat."""
    if any(ln.read is None for ln in chain):
        return True
    rows = [int(ln.idx.value.ravel()[0]) for ln in chain]
    return len(set(rows)) < len(rows)


def _as_values(eqns: list[Eqn], ln: _Link) -> Any:
    if ln.row is None:
        return ln.vals
    v = ln.vals
    if v.aval.shape != ln.row:
        v = _emit(eqns, P.broadcast_to, (v,), {"shape": ln.row}, ln.e.src)
    return _emit(eqns, P.reshape, (v,), {"shape": (1,) + ln.row}, ln.e.src)


def _concat(eqns: list[Eqn], parts: list, axis: int, src: Any) -> Any:
    if len(parts) == 1:
        return parts[0]
    if all(p.__class__ is Const for p in parts):
        return Const(np.concatenate([p.value for p in parts], axis=axis))
    if _SEEN is None:
        return _emit(eqns, P.concatenate, tuple(parts), {"axis": axis}, src)
    key = (axis, tuple(map(id, parts)))
    hit = _SEEN.get(key)
    if hit is None:
        hit = _SEEN[key] = (_emit(eqns, P.concatenate, tuple(parts), {"axis": axis}, src),
                            parts)
    return hit[0]


def _emit(eqns: list[Eqn], prim: P.Primitive, ins: tuple, params: dict, src: Any) -> Var:
    ps = Params(params)
    v = Var(prim.shape_rule(*[a.aval for a in ins], **ps))
    eqns.append(Eqn(prim, ins, ps, v, src))
    return v


__all__ = ["join_extremes", "joined_chains", "link_chains", "scatter_extremes"]
