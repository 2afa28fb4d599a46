"""Before batching: put reads, writes and sums in the form the dependence analysis reads best.

- Views composed: `x[S][I]` reads `x[S∘I]`, and a write through a view written back
  (`v = out[S]; v[I] = y`, traced as `out[S] = (out[S] with [I] = y)`) writes `out[S∘I] = y`.
  A read or write then names exactly the elements it touches.
- Read-modify-write by addition: `x[I] = x[I] + d` (or `- d`) is `x[I] += d`. Additions into a
  buffer commute, so repeated positions stop ordering each other (`agg[dst[e]] += m_e`).
- Add chains: a tree of `+`/`-` whose inner results are used once, over terms of one shape
  (Python's `sum`, `acc += f(x)`, `1 + a*r + b*r**2`), is one sum of signed terms (`sums`).
"""
from __future__ import annotations

import itertools
from itertools import compress, repeat
from operator import is_, itemgetter
from typing import Any

from .. import primitives as P
from ..index import ramp_as_basic
from ..ir import Atom, Const, Eqn, Graph, Params, Var, uses
from .regions import compose

WRITES = (P.setitem, P.setitem_add)
_PRIM = itemgetter(0)  # an equation's primitive
_INS, _OUT, _FIRST = itemgetter(1), itemgetter(3), itemgetter(0)  # its inputs, its result


def _eqn(prim: P.Primitive, ins: tuple, params: dict, src: Any) -> Eqn:
    ps = Params(params)
    return Eqn(prim, ins, ps, Var(prim.shape_rule(*[a.aval for a in ins], **ps)), src)


def _basic(e: Eqn | None) -> bool:
    return e is not None and P.is_basic(e.params["idx"])


def normalize(g: Graph, n_uses: dict | None = None) -> Graph:
    """Compose view reads and write-backs, and turn additive read-modify-writes into
    accumulating writes (see the module doc). Values are unchanged."""
    eqns = g.eqns
    if _unchanged(eqns):
        return g
    n_uses = uses(g) if n_uses is None else n_uses
    defs: dict[Var, Eqn] = {}
    written: dict[Var, tuple] = {}  # a set's result -> (its value, its index), as traced
    env: dict[Var, Atom] = {}  # writes dropped: their results are their bases
    out: list[Eqn] = []
    changed = False
    kept = (P.getitem, P.setitem, P.setitem_add, P.add, P.sub)
    getitem, setitem, setitem_add = P.getitem, P.setitem, P.setitem_add
    for e in eqns:
        prim = e.prim
        if env:
            ins = tuple([env.get(a, a) if a.__class__ is Var else a for a in e.inputs])
            if ins != e.inputs:
                e = Eqn(prim, ins, e.params, e.out, e.src)
        if prim not in kept:
            out.append(e)
            continue
        if prim is setitem and written.get(e.inputs[0]) == (e.inputs[1], e.params["idx"]):
            env[e.out] = e.inputs[0]  # x[i] = v again (x[i] -= v traces the write twice)
            changed = True
            continue
        if prim is setitem:
            inner = defs.get(e.inputs[0])
            if inner is not None and inner.prim is setitem and n_uses.get(inner.out) == 1 \
                    and inner.params["idx"] == e.params["idx"] and _basic(e):
                # x.at[r].set(u).at[r].set(v) = x.at[r].set(v), u read nowhere else: a view's
                # write-back after each write through it (`vw = buf[1:]; vw[i] += d`)
                e = Eqn(setitem, (inner.inputs[0], e.inputs[1]), e.params, e.out, e.src)
                changed = True
            written[e.out] = (e.inputs[1], e.params["idx"])
        if prim is getitem:
            inner = defs.get(e.inputs[0])
            ramp = None if inner is None or _basic(e) else ramp_as_basic(e.params["idx"])
            if inner is not None and inner.prim is getitem and _basic(inner) and (
                    _basic(e) or ramp is not None):  # (a ramp list reads as its slice)
                idx = compose(inner.params["idx"], ramp or e.params["idx"])
                if idx is not None:
                    e = Eqn(getitem, inner.inputs, {"idx": P.BasicIndex(idx)}, e.out, e.src)
                    changed = True
            elif not _basic(e) and ramp_as_basic(e.params["idx"]) is None and (
                    inner is not None and inner.prim in WRITES or
                    e.inputs[0].__class__ is Const):  # (a buffer, or its initial value)
                parts = _narrowed(e)
                if parts is not None:
                    out.append(parts[0])
                    defs[parts[0].out] = parts[0]
                    e = Eqn(getitem, (parts[0].out,), Params({"idx": parts[1]}), e.out, e.src)
                    changed = True
        elif prim is setitem or prim is setitem_add:
            if _basic(e):
                rewritten = _write_back(e, defs, n_uses) or _rmw(e, defs)
            elif prim is setitem and ramp_as_basic(e.params["idx"]) is not None:
                rewritten = _rmw(e, defs)  # (a ramp list repeats no position: x[I] + d adds)
            else:
                rewritten = None
            if rewritten is not None:
                for w in rewritten[:-1]:
                    out.append(w)
                    defs[w.out] = w
                last = rewritten[-1]
                e = Eqn(last.prim, last.inputs, last.params, e.out, e.src)
                changed = True
        out.append(e)
        defs[e.out] = e
    if not changed:
        return g
    outs = tuple(env.get(a, a) if a.__class__ is Var else a for a in g.outputs)
    return g.replace(eqns=tuple(out), outputs=outs)


def _unchanged(eqns: tuple[Eqn, ...]) -> bool:
    """Whether `normalize` would leave these equations as they are, quickly: with no write,
    only a read of a read's result can change (a composed view)."""
    prims = list(map(_PRIM, eqns))
    if P.setitem in prims or P.setitem_add in prims:
        return False
    is_read = list(map(is_, prims, repeat(P.getitem)))  # (in C: this runs on every trace)
    reads = set(map(_OUT, compress(eqns, is_read)))
    return not reads or reads.isdisjoint(map(_FIRST, map(_INS, compress(eqns, is_read))))


def _narrowed(e: Eqn) -> tuple[Eqn, tuple] | None:
    """A buffer's read at one 1-d integer list among ints and slices (`buf[[i, i]]`,
    `h[[j, j + 2, j + 1]]`) as the slice its positions span, then the list relative to it:
    (the slice's read, the index into it), when the span is narrower than the axis. The
    slice is a basic read, whose region the dependence analysis knows exactly (a list's
    is the whole buffer): iterations reading and writing apart no longer order each other."""
    idx = e.params["idx"]
    adv = [i for i, k in enumerate(idx) if k.__class__ is P.Adv]
    if len(adv) != 1 or any(k is None for k in idx):
        return None
    a = adv[0]
    arr = idx[a].arr
    n = e.inputs[0].aval.shape[a]
    if arr.ndim != 1 or not arr.size or arr.min() < 0 or arr.max() >= n:
        return None
    lo, hi = int(arr.min()), int(arr.max()) + 1
    joint = [i for i, k in enumerate(idx) if k.__class__ is P.Adv or isinstance(k, int)]
    if hi - lo == n or joint[-1] - joint[0] != len(joint) - 1:
        return None  # (nothing narrower; ints apart from the list: its axis goes first)
    outer = idx[:a] + (P.Sl(lo, hi, 1),) + idx[a + 1:]
    read = _eqn(P.getitem, (e.inputs[0],), {"idx": P.BasicIndex(outer)}, e.src)
    p = sum(not isinstance(k, int) for k in idx[:a])
    nd = read.out.aval.ndim
    inner = tuple(P.Adv(arr - lo) if j == p else P.Sl(0, read.out.aval.shape[j], 1)
                  for j in range(nd))
    return read, inner


def _write_back(e: Eqn, defs: dict, n_uses: dict) -> list[Eqn] | None:
    """out[S] = (writes W_1..W_k into r = out[S] at I_1..I_k)  ->  W_j into out at S∘I_j."""
    if e.prim is not P.setitem:
        return None
    base, val = e.inputs
    chain = []
    cur = val
    while cur.__class__ is Var and n_uses.get(cur, 0) == 1:
        w = defs.get(cur)
        if w is None or w.prim not in WRITES or not _basic(w):
            break
        chain.append(w)
        cur = w.inputs[0]
    r = defs.get(cur) if cur.__class__ is Var else None
    if not chain or r is None or r.prim is not P.getitem or r.inputs[0] is not base \
            or r.params["idx"] != e.params["idx"] or val.aval != r.out.aval:
        return None
    S = e.params["idx"]
    out: list[Eqn] = []
    prev: Atom = base
    for w in reversed(chain):
        idx = compose(S, w.params["idx"])
        if idx is None:
            return None
        out.append(_eqn(w.prim, (prev, w.inputs[1]), {"idx": P.BasicIndex(idx)}, w.src))
        prev = out[-1].out
    return out


def _rmw(e: Eqn, defs: dict) -> list[Eqn] | None:
    """x[I] = x[I] + d  ->  x[I] += d (and x[I] - d -> x[I] += -d)."""
    if e.prim is not P.setitem:
        return None
    base, val = e.inputs
    v = defs.get(val) if val.__class__ is Var else None
    if v is None or v.prim not in (P.add, P.sub) or v.out.aval.dtype != base.aval.dtype:
        return None
    for k, d in ((0, v.inputs[1]), (1, v.inputs[0])):
        r = defs.get(v.inputs[k]) if v.inputs[k].__class__ is Var else None
        if r is None or r.prim is not P.getitem or r.inputs[0] is not base \
                or r.params["idx"] != e.params["idx"] or r.out.aval != v.out.aval:
            continue
        if v.prim is P.sub and (k == 1 or d.aval.dtype.kind == "b"):
            return None  # d - x[I] is not an accumulation (and NumPy has no -bool)
        out = []
        if v.prim is P.sub:  # (negated in x's dtype, as the subtraction computes: -d in a
            if d.aval.dtype != base.aval.dtype:  # uint8 or at int8's minimum would wrap)
                out.append(_eqn(P.cast, (d,), {"dtype": base.aval.dtype}, v.src))
                d = out[-1].out
            out.append(_eqn(P.neg, (d,), {}, v.src))
            d = out[-1].out
        idx = e.params["idx"]
        if idx.__class__ is not P.BasicIndex:
            idx = ramp_as_basic(idx) or idx
        out.append(_eqn(P.setitem_add, (base, d), {"idx": idx}, e.src))
        return out
    return None


# ------------------------------------------------------------------------------ add chains

def _is_zero(a: Atom) -> bool:
    return isinstance(a, Const) and a.value.size <= 1 << 16 and not a.value.any()


class Sum:
    """A chain of adds: `out = sum(sign_i * term_i)`. `parts` are the vars of the chains it
    absorbed whole (each a Sum of its own), `inplace` the vars of the adds it grew by one term
    (`s = s + t`: one Sum for the whole run, which those vars map to as well); `terms`/`signs`
    are kept by the chain that no other absorbed, and `eqns` (the adds it stands for, in
    program order) by the chains `sums` returns."""

    __slots__ = ("eqns", "inplace", "last", "parts", "signs", "terms")

    def __init__(self, terms: list[Atom], signs: list[int], last: Var, parts: list[Var]):
        self.terms, self.signs, self.last, self.parts = terms, signs, last, parts
        self.inplace: list[Var] = []
        self.eqns: list[Eqn] = []


def sums(g: Graph, n_uses: dict | None = None) -> tuple[dict[Var, Sum], set[Var]]:
    """Add chains of `g`: the chains of three or more terms by their result var, and the vars
    of the inner adds they absorbed (no longer computed). `n_uses`: `uses(g)`, if known."""
    eqns = g.eqns
    adds = list(compress(eqns, map(_ADDS.__contains__, map(_PRIM, eqns))))
    if set(map(_OUT, adds)).isdisjoint(itertools.chain.from_iterable(map(_INS, adds))):
        return {}, set()  # (no add reads another's result: no chain of three terms)
    return _chains(g, n_uses)


def _chains(g: Graph, n_uses: dict | None) -> tuple[dict[Var, Sum], set[Var]]:
    """`sums`, by a walk over the adds (see `sums`)."""
    n_uses = uses(g) if n_uses is None else n_uses
    # (an add of two plain terms, the most common, is kept as the tuple (x, y, sign of y)
    # until a longer chain takes it in: most never are, and need no Sum)
    chains: dict[Var, Sum | tuple] = {}
    pos: dict[Var, int] = {}
    sub = P.sub
    eqns = g.eqns
    for i in compress(range(len(eqns)), map(_ADDS.__contains__, map(_PRIM, eqns))):
        e = eqns[i]
        out = e.out
        pos[out] = i
        aval = out.aval
        if aval.dtype.kind == "b":  # (bool + bool is a logical or: no signed sum, no count)
            continue
        x, y = e.inputs
        sy = -1 if e.prim is sub else 1
        parts: list[Var] = []
        cx = chains.get(x)
        if y.__class__ is Var and y not in chains:
            if cx is None and x.__class__ is Var:  # (common cases, quickly: two plain terms,
                if x.aval == aval and y.aval == aval:  # a chain of two terms)
                    chains[out] = (x, y, sy)
                continue
            if cx.__class__ is tuple:
                cx = _sum(chains, x)
            if cx is not None and cx.terms is not None and n_uses.get(x, 0) == 1 and \
                    x.aval == aval and y.aval == aval:  # (a chain and a term: `s = s + t`,
                cx.terms.append(y)  # as _terms and the general case below: the chain grows)
                cx.signs.append(sy)
                cx.inplace.append(x)
                cx.last = out
                chains[out] = cx
                continue
        # a zero (a boundary: `(u[i-1] if i > 0 else 0.0) + ...`) stays a term, so that the
        # terms of the sums of different iterations line up (emission folds it away)
        if _is_zero(x) and y.aval == aval:
            terms, signs = _terms(y, sy, chains, n_uses, parts)
            terms, signs = [x] + terms, [1] + signs
        elif _is_zero(y) and x.aval == aval:
            terms, signs = _terms(x, 1, chains, n_uses, parts)
            terms += [y]
            signs += [sy]
        elif x.aval == aval and y.aval == aval:
            terms, signs = _terms(x, 1, chains, n_uses, parts)
            t2, s2 = _terms(y, sy, chains, n_uses, parts)
            if len(t2) > len(terms):  # extend the longer list in place (linear overall)
                terms, signs, t2, s2 = t2, s2, terms, signs
            terms += t2
            signs += s2
        else:
            continue
        chains[out] = Sum(terms, signs, out, parts)
    out_: dict[Var, Sum] = {}
    absorbed: set[Var] = set()
    for v, c in chains.items():
        if c.__class__ is tuple or c.terms is None or c.last is not v or len(c.terms) < 3:
            continue  # too short to be more than an add, absorbed by another chain (its
            # terms moved there), or an inner add of a chain grown in place
        out_[v] = c
        mine = [v]
        todo = [c]
        while todo:
            cp = todo.pop()
            mine += cp.inplace
            mine += cp.parts
            todo += map(chains.__getitem__, cp.parts)
        absorbed.update(mine[1:])
        c.eqns = list(map(eqns.__getitem__, sorted(map(pos.__getitem__, mine))))
    return out_, absorbed


_ADDS = frozenset((P.add, P.sub))


def _sum(chains: dict, v: Var) -> Sum:
    """The chain of `v`, as a Sum (a two-term add becomes one: see `sums`)."""
    c = chains[v]
    if c.__class__ is tuple:
        x, y, sy = c
        c = chains[v] = Sum([x, y], [1, sy], v, [])
    return c


def _terms(a: Atom, sign: int, chains: dict, n_uses: dict, parts: list) -> tuple[list, list]:
    c = chains.get(a) if a.__class__ is Var else None
    if c.__class__ is tuple:
        c = _sum(chains, a)
    if c is None or c.terms is None or n_uses.get(a, 0) != 1:
        return [a], [sign]
    terms, signs = c.terms, c.signs
    c.terms = c.signs = None  # moved into the chain that uses it
    parts.append(a)
    if sign < 0:
        signs = [-s for s in signs]
    return terms, signs


__all__ = ["WRITES", "Sum", "normalize", "sums"]
