"""Before batching: buffers that each iteration makes for itself become one stacked buffer.

A loop body that makes a buffer of its own and fills it by index (`buf = zeros(7); buf[4:7]
+= u; buf[0:3] += v`, a Q matrix filled entry by entry per component, the tangent buffers of a
Jacobian inlined once per observation) traces, per iteration, a chain of writes on a base that
no other chain extends. `deps` tracks each chain as a buffer of its own, and writes merge only
within one buffer: the iterations' chains ran one after another, F buffers of k writes each.

Chains with the same writes (primitive, index and value shape, in order) on bases of one
shape are *siblings*. When none reads another's values, they become one buffer S of shape
(F, *shape): member f's base is written as S[f] (nothing when the base is zeros), its writes
are at S[f, idx], its reads S[f, idx], and any other use of a version is the read S[f]. `deps`
then sees the members' writes at one index as independent writes of one pattern into one
buffer, which merge (and the writes of one member still merge by region as before).

Left alone: a chain whose versions are used after a later write of it (but for reads of
elements no later write touched: the rewrite reads S at the point of use) or forked, writes at integer arrays, and siblings that depend on
each other (a recurrence, each iteration's buffer made from the last one's: stacking gains
nothing there and would hide the recurrence's shape from `scans`).
"""
from __future__ import annotations

from itertools import compress
from operator import itemgetter
from typing import Any

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Graph, Params, Var, uses
from .census import census
from .chains import WRITES


class _Chain:
    __slots__ = ("at", "base", "fam", "member", "ok", "users", "writes")

    def __init__(self, base: Atom):
        self.base = base
        self.writes: list[Eqn] = []
        self.at: list[int] = []  # the positions of its writes in g
        self.users: list[int] = []  # the positions of the other equations using its versions
        self.ok = True
        self.fam = self.member = -1


def sibling_writes(g: Graph) -> bool:
    """Whether g may hold sibling chains (a quick look): two writes or more whose base no
    write made. Only those begin chains that can qualify (`_chains` starts a chain on a
    write's result only at a fork, which never does), and a family takes two (one buffer
    filled in place, seeds/000's `out[i, j, k] = ...`, is one chain: 0.49 us/op for nothing)."""
    if census(g).isdisjoint(WRITES):
        return False
    eqns = g.eqns
    writes = list(compress(eqns, map(_IS_WRITE, map(_PRIM, eqns))))
    made = set(map(_OUT, writes))
    return sum(1 for e in writes if e.inputs[0] not in made) >= 2


_PRIM, _OUT = itemgetter(0), itemgetter(3)
_IS_WRITE = frozenset(WRITES).__contains__


def stack_siblings(g: Graph) -> Graph:
    """g with each family of independent sibling chains as one stacked buffer (module doc)."""
    chains, ver = _chains(g)
    fams = _families(chains, g)
    if not fams:
        return g
    _independent(g, chains, ver, fams)
    fams = [f for f in fams if all(chains[c].ok for c in f)]
    if not fams:
        return g
    for i, fam in enumerate(fams):
        for m, c in enumerate(fam):
            chains[c].fam, chains[c].member = i, m
    return _rewrite(g, chains, ver, fams)


def _chains(g: Graph) -> tuple[list[_Chain], dict[Var, tuple[int, int]]]:
    """The chains of writes, each version's (chain, writes made), and which chains qualify:
    basic indices, no fork, every version used only while it is its chain's newest."""
    chains: list[_Chain] = []
    tail: dict[Var, int] = {}  # a chain's newest version -> the chain
    ver: dict[Var, tuple[int, int]] = {}
    getitem = P.getitem
    for j, e in enumerate(g.eqns):
        ins = e.inputs
        if e.prim in WRITES:
            b = ins[0]
            c = tail.pop(b, None) if b.__class__ is Var else None
            if c is None:
                c = len(chains)
                chains.append(_Chain(b))
                old = ver.get(b) if b.__class__ is Var else None
                if old is not None:  # a fork from an older version
                    chains[old[0]].ok = chains[c].ok = False
            ch = chains[c]
            ch.writes.append(e)
            ch.at.append(j)
            if not P.is_basic(e.params["idx"]):
                ch.ok = False
            tail[e.out] = c
            ver[e.out] = (c, len(ch.writes))
            rest = ins[1:]
        elif e.prim is getitem and ins[0].__class__ is Var and ins[0] in ver:
            rest = ()
            c, k = ver[ins[0]]
            w = chains[c].writes
            chains[c].users.append(j)
            if not P.is_basic(e.params["idx"]) or len(w) - k > 8 or not all(
                    _apart(x.params["idx"], e.params["idx"]) for x in w[k:]):
                chains[c].ok = False  # (a read of an older version where later writes wrote)
        else:
            rest = ins
        for a in rest:
            v = ver.get(a) if a.__class__ is Var else None
            if v is not None:
                chains[v[0]].users.append(j)
                if len(chains[v[0]].writes) != v[1]:
                    chains[v[0]].ok = False  # a version used after a later write
    for a in g.outputs:
        v = ver.get(a) if a.__class__ is Var else None
        if v is not None and len(chains[v[0]].writes) != v[1]:
            chains[v[0]].ok = False
    for ch in chains:
        if ch.ok and _repeats_an_element(ch):
            ch.ok = False
    return chains, ver


def _repeats_an_element(ch: _Chain) -> bool:
    """Whether the chain writes one element (all-int index) twice: a read-modify-write chain
    at Python ints (`s[key] += x` over repeated keys, a sum and a count read before each
    update), which rmwchains joins whole; stacked with its siblings, its writes would be at
    two ints each and no longer one chain."""
    seen = set()
    for w in ch.writes:
        idx = tuple(w.params["idx"])
        if all(isinstance(k, int) for k in idx):
            if idx in seen:
                return True
            seen.add(idx)
    return False


def _apart(w: tuple, r: tuple) -> bool:
    """Whether two basic indices of one array surely select no common element."""
    if len(w) != len(r) or any(k is None for k in w + r):
        return False
    for a, b in zip(w, r):
        ra = range(a, a + 1) if isinstance(a, int) else range(a.start, a.stop, a.step)
        rb = range(b, b + 1) if isinstance(b, int) else range(b.start, b.stop, b.step)
        if ra.step == rb.step == 1:
            if ra.stop <= rb.start or rb.stop <= ra.start or not ra or not rb:
                return True
        elif min(len(ra), len(rb)) <= 64 and not set(ra).intersection(rb):
            return True
    return False


def _families(chains: list[_Chain], g: Graph) -> list[list[int]]:
    """Sibling chains grouped (two or more each). A single write into a temporary (a base
    only it uses) is left out: `deps` already batches those as plain equations."""
    n_uses: dict | None = None
    groups: dict[tuple, list[int]] = {}
    for c, ch in enumerate(chains):
        if not ch.ok:
            continue
        if len(ch.writes) == 1 and ch.base.__class__ is Var:
            if n_uses is None:
                n_uses = uses(g)
            if n_uses.get(ch.base, 0) == 1:
                continue
        key = (ch.base.aval, tuple((w.prim, w.params["idx"], w.inputs[1].aval)
                                   for w in ch.writes))
        groups.setdefault(key, []).append(c)
    return [cs for cs in groups.values() if len(cs) > 1 and not _fills(chains[cs[0]])]


def _fills(ch: _Chain) -> bool:
    """Whether the chain sets each row of its buffer once, in full, from one line of the
    program (`beta[k] = ...` in a loop over k): batching reads such buffers from the group of
    those rows already (`_Emitter._filled`), which a stacked buffer would only copy."""
    shape = ch.base.aval.shape
    if not shape or len(ch.writes) != shape[0]:
        return False
    rest = tuple(P.Sl(0, d, 1) for d in shape[1:])
    src, rows = ch.writes[0].src, set()
    for w in ch.writes:
        idx = tuple(w.params["idx"])
        if w.prim is not P.setitem or w.src != src or not isinstance(idx[0], int) or \
                idx[1:] != rest[:len(idx) - 1]:
            return False
        rows.add(idx[0])
    return len(rows) == shape[0]


def _independent(g: Graph, chains: list[_Chain], ver: dict, fams: list[list[int]]) -> None:
    """Mark not ok every chain of a family in which one member's writes read (through any
    path) another member's versions. Each value carries, per family, the lowest and highest
    member it depends on; a member's write may depend on itself only. (Only the equations
    between the families' first and last writes can carry such a path.)"""
    fam_of = {c: (i, m) for i, fam in enumerate(fams) for m, c in enumerate(fam)}
    writes = {w.out: fam_of[c] for c in fam_of for w in chains[c].writes}
    lo = min(chains[c].at[0] for c in fam_of)
    hi = max(chains[c].at[-1] for c in fam_of)
    taint: dict[Var, dict[int, tuple[int, int]]] = {}
    bad: set[int] = set()
    tget, untainted = taint.get, taint.keys().isdisjoint
    for e in g.eqns[lo:hi + 1]:
        mine = writes.get(e.out)
        if mine is None and untainted(e.inputs):
            continue
        t: dict[int, tuple[int, int]] | None = None
        for a in e.inputs:
            ta = tget(a) if a.__class__ is Var else None
            if ta is None or ta is t:
                continue
            if t is None:
                t = ta
                continue
            t = dict(t)
            for f, (a0, a1) in ta.items():
                o = t.get(f)
                t[f] = (a0, a1) if o is None else (min(a0, o[0]), max(a1, o[1]))
        if mine is not None:
            f, m = mine
            o = t.get(f) if t is not None else None
            if o is not None and o != (m, m):
                bad.add(f)
            elif o is None:
                t = dict(t) if t is not None else {}
                t[f] = (m, m)
        if t is not None:
            taint[e.out] = t
    for f in bad:
        for c in fams[f]:
            chains[c].ok = False


_ZEROS = frozenset([P.full, P.broadcast_to, P.reshape])  # (what `_zero` looks through)


def _zero(a: Atom, defs: dict[Var, Eqn]) -> bool:
    """Whether a is zeros (a constant, `full` of 0, or a broadcast or reshape of one)."""
    while True:
        if a.__class__ is Const:
            return a.value.size <= 1 << 16 and not a.value.any()
        d = defs.get(a)
        if d is None:
            return False
        if d.prim is P.full:
            return d.params["value"] == 0
        if d.prim not in (P.broadcast_to, P.reshape):
            return False
        a = d.inputs[0]


def _rewrite(g: Graph, chains: list[_Chain], ver: dict, fams: list[list[int]]) -> Graph:
    """g with each family's chains as one buffer S (see the module doc). Only the members'
    writes and the equations that use their versions change; the rest is copied in runs."""
    members = [chains[c] for fam in fams for c in fam]
    of = {w.out: ch for ch in members for w in ch.writes}  # every version -> its chain
    touched = sorted({j for ch in members for j in ch.at + ch.users})
    defs = {e.out: e for e in g.eqns if e.prim in _ZEROS} \
        if any(ch.base.__class__ is Var for ch in members) else {}
    eqns: list[Eqn] = []
    cur: list[Var | None] = [None] * len(fams)  # each family's newest version of S
    whole: dict[Var, Var] = {}  # a version -> its read S[f]

    def emit(prim: P.Primitive, ins: tuple, params: dict, src: Any) -> Var:
        ps = Params(params)
        v = Var(prim.shape_rule(*[a.aval for a in ins], **ps))
        eqns.append(Eqn(prim, ins, ps, v, src))
        return v

    def sub(a: Atom, src: Any) -> Atom:
        ch = of.get(a) if a.__class__ is Var else None
        if ch is None:
            return a
        r = whole.get(a)
        if r is None:
            full = tuple(P.Sl(0, d, 1) for d in a.aval.shape)
            r = whole[a] = emit(P.getitem, (cur[ch.fam],),
                                {"idx": P.BasicIndex((ch.member,) + full)}, src)
        return r

    done = 0
    for j in touched:
        eqns.extend(g.eqns[done:j])
        done = j + 1
        e = g.eqns[j]
        ch = of.get(e.out)
        if ch is not None:
            fam, f, shape = ch.fam, ch.member, ch.base.aval.shape
            if cur[fam] is None:
                cur[fam] = emit(P.full, (), {"shape": (len(fams[fam]),) + shape,
                                             "dtype": ch.base.aval.dtype, "value": 0}, e.src)
            if e is ch.writes[0] and not _zero(ch.base, defs):
                full = tuple(P.Sl(0, d, 1) for d in shape)
                cur[fam] = emit(P.setitem, (cur[fam], ch.base),
                                {"idx": P.BasicIndex((f,) + full)}, e.src)
            idx = P.BasicIndex((f,) + tuple(e.params["idx"]))
            cur[fam] = emit(e.prim, (cur[fam], sub(e.inputs[1], e.src)),
                            {**e.params, "idx": idx}, e.src)
            continue
        ch = of.get(e.inputs[0]) if e.prim is P.getitem else None
        if ch is not None:
            idx = P.BasicIndex((ch.member,) + tuple(e.params["idx"]))
            eqns.append(Eqn(P.getitem, (cur[ch.fam],), Params({**e.params, "idx": idx}),
                            e.out, e.src))
            continue
        eqns.append(Eqn(e.prim, tuple(sub(a, e.src) for a in e.inputs), e.params, e.out, e.src))
    eqns.extend(g.eqns[done:])
    outs = [sub(a, None) for a in g.outputs]
    return g.replace(eqns=tuple(eqns), outputs=tuple(outs))


__all__ = ["sibling_writes", "stack_siblings"]
