"""The dependence graph that batching schedules (issue 14, item 1: dependence by region).

The trace is SSA: `buf[i] = v` makes a new version of `buf`, so every read of a buffer depends,
through the version chain, on every earlier write. Batching needs the real dependences, by
region. This module builds them in one pass over the (normalized, see `chains`) graph:

- A *buffer* is a chain of versions made by writes (`setitem`, `setitem_add`). Its reads and
  writes become nodes; instead of the version chain they get edges from the writes and reads
  whose regions overlap theirs: read after write (RAW), write after read (WAR), write after
  write (WAW). Additions into a buffer commute, so adds between two reads of their elements
  (a *run*) do not order each other.
- Regions are tracked per element: each buffer keeps a NumPy array holding, per element, the
  node that wrote it last. A read or write looks up only its own region (no walk back through
  earlier writes), so the pass is linear in the trace size. Axes that every access takes whole
  are not tracked (a buffer written row by row is tracked per row).
- A read whose region one write stored in full is that write's value (`forward`), so reading
  back what an iteration just wrote depends on the value, not on the buffer.
- A write whose every element a later write overwrites before anything reads it is dead.
- Any other use of a version (a whole-array operation, an output, a fork) is a *snapshot*: a
  read of the whole buffer at that version.

Nodes carry a *key*: nodes of equal key are isomorphic and may be merged into one operation
when neither depends on the other (see `agenda`). Positions (ints and slice starts) are not
part of the key; operand sources are not either.
The nodes and edges are recorded in a `nodes.Plan`.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np

from .. import primitives as P
from ..index import ramp_as_basic
from ..ir import Atom, Eqn, Graph, Params, Var, dce, uses
from .census import census
from .chains import WRITES, Sum, sums
from .nodes import BREAD, EQN, JOIN, READ, SNAP, SUM, WRITE, Buffer, Plan
from .regions import relative, restricted_ndim, split, track_key

_PRIM = itemgetter(0)  # an equation's primitive
_RECENT = 8  # an addition's value is read back only this many writes later (`value_at`)


def _basic(idx: tuple) -> bool:
    """Whether a read or write at idx has basic positions: ints and slices, or a list that
    is a ramp (`x[[t, t + d, t + 2 d]]`: the slice it equals, regions.split)."""
    return P.is_basic(idx) or ramp_as_basic(idx) is not None


def _as_basic(idx: tuple) -> tuple:
    """idx, or the slice of the ramp list it holds (the same positions: see `_basic`)."""
    return idx if idx.__class__ is P.BasicIndex else ramp_as_basic(idx) or idx


def _scan(g: Graph, n_uses: dict | None = None
          ) -> tuple[dict[Var, int], list[Atom], list[int], set[Var]]:
    """Buffers: each version's buffer, each buffer's base and tracked rank, and the versions
    some operation uses whole (they need a snapshot).

    A write into a temporary (a computed value that only this write uses, whose result no
    write uses: `r = x[i].copy(); r[0] += b`, once per iteration) is no buffer: it is an
    equation like any other, so that the iterations' writes, each into its own temporary,
    batch as one."""
    buf_of: dict[Var, int] = {}
    cur: list[Var] = []
    bases: list[Atom] = []
    ndim: list[int] = []
    snap: set[Var] = set()
    if census(g).isdisjoint(WRITES):  # (no write: no buffer, and nothing to look at)
        return buf_of, bases, ndim, snap
    prims = list(map(_PRIM, g.eqns))  # (before the first write, no equation is a buffer's)
    first = min([prims.index(w) for w in WRITES if w in prims], default=len(prims))
    written = {e.inputs[0] for e in g.eqns[first:] if e.prim in WRITES}
    made: set[Var] | None = None  # results of equations (not inputs: those are the caller's),
    outs = set(g.outputs)  # collected where first asked (most writes extend a chain)
    for e in g.eqns[first:]:
        ins = e.inputs
        if e.prim in WRITES:
            b = ins[0]
            bid = buf_of.get(b) if b.__class__ is Var else None
            if bid is None and b.__class__ is Var and e.out not in written \
                    and e.out not in outs:
                if made is None:
                    made = {x.out for x in g.eqns}
                if b in made:
                    if n_uses is None:
                        n_uses = uses(g)
                    if n_uses.get(b, 0) == 1:  # a write into a temporary: an equation (see
                        snap.update(a for a in ins[1:] if a.__class__ is Var and a in buf_of)
                        continue  # the doc), whose value may be a buffer's version, used whole
            if bid is None or cur[bid] is not b:
                if bid is not None:
                    snap.add(b)  # a fork from an older version
                bid = len(bases)
                bases.append(b)
                cur.append(b)
                ndim.append(0)
            buf_of[e.out] = bid
            cur[bid] = e.out
            if ndim[bid] < b.aval.ndim:  # (a rank at most: once there, nothing to look at)
                ndim[bid] = max(ndim[bid], restricted_ndim(e.params["idx"], b.aval.shape))
            rest = ins[1:]
        elif e.prim is P.getitem and ins[0] in buf_of and _basic(e.params["idx"]) \
                and cur[buf_of[ins[0]]] is ins[0]:
            bid = buf_of[ins[0]]
            if ndim[bid] < ins[0].aval.ndim:
                ndim[bid] = max(ndim[bid], restricted_ndim(e.params["idx"], ins[0].aval.shape))
            continue
        else:
            rest = ins
        for a in rest:
            if a.__class__ is Var and a in buf_of:
                snap.add(a)
    snap.update(a for a in g.outputs if a.__class__ is Var and a in buf_of)
    return buf_of, bases, ndim, snap


def _ids(sub: np.ndarray, counts: bool = False) -> Any:
    """The distinct writer ids in a region (with how many elements each holds)."""
    if sub.__class__ is np.int64:  # one element (a NumPy scalar)
        return ([int(sub)], [1]) if counts else [int(sub)]
    if sub.size == 0:  # an empty region (`x[5:5]`, `trace(x, offset=n)`) touches nothing
        return ([], []) if counts else []
    if sub.size == 1:
        u = int(sub.reshape(-1)[0])
        return ([u], [1]) if counts else [u]
    lo, hi = int(sub.min()), int(sub.max())
    if lo == hi:
        return ([lo], [sub.size]) if counts else [lo]
    if counts:
        u, c = np.unique(sub, return_counts=True)
        return u.tolist(), c.tolist()
    return np.unique(sub).tolist()


class _Builder:
    """Builds a Plan in one pass over the equations (see the module doc)."""

    def __init__(self, g: Graph, record: bool = False, n_uses: dict | None = None):
        self.p = Plan(g)
        self.buf_of, bases, ndims, self.snap = _scan(g, n_uses)
        # (kept for `plan`'s second pass, which only reads served by a buffer's write need:
        # none without buffers)
        self.seen: list[Eqn] | None = [] if record and bases else None
        self.p.buffers = [Buffer(b, n) for b, n in zip(bases, ndims)]
        self.cur: list[Atom | None] = [None] * len(bases)  # each buffer's newest version
        self.was_read: set[int] = set()  # writes some read depends on
        self.live: dict[int, int] = {}  # write -> elements it still holds
        self.region: dict[int, tuple] = {}  # write -> its index
        self.order: dict[int, list[int]] = {}  # write -> the nodes it must follow
        self.run_of: dict[int, int] = {}  # add in a closed run -> the run's join
        self.prior: dict[int, int] = {}  # add -> the one node that wrote its region before
        self.values: dict[tuple, Var | None] = {}  # (write, index) -> value_at's answer
        self.nwrites = [0] * len(bases)  # writes into each buffer so far
        self.sums, self.absorbed = sums(g, n_uses)
        self.special = {P.add, P.sub, P.setitem, P.setitem_add, P.getitem}
        self.fast_ids: dict[tuple, int] = {}  # see eqn_node

    # -- nodes ----------------------------------------------------------------------------
    def node(self, kind: str, key: Any, out: Var | None, ops: tuple, eqn: Eqn | None,
             info: Any = None, deps: list[int] = (), members: int = 1) -> int:
        p = self.p
        i = p.add(kind, key, out, ops, eqn, info, members)
        prod, dead, succ = p.prod, p.dead, p.succ
        n = 0
        for a in ops:
            if a.__class__ is Var:
                u = prod.get(a)
                if u is not None and not dead[u]:
                    succ[u].append(i)
                    n += 1
        for u in deps:
            if u >= 0 and u != i and not dead[u]:
                succ[u].append(i)
                n += 1
        p.npred[i] = n
        return i

    def eqn_node(self, e: Eqn, ins: tuple) -> None:
        """An EQN node (Plan.add and node, inlined)."""
        p = self.p
        i = len(p.kind)
        k = self.fast_ids.get(_fast_key(e.prim, e.params, ins))
        if k is None:
            k = self.key_id(e.prim, e.params, ins)
        out = e.out
        p.kind.append(EQN)
        p.key.append(k)
        p.out.append(out)
        p.ops.append(ins)
        p.eqn.append(e if ins is e.inputs else Eqn(e.prim, ins, e.params, out, e.src))
        p.info.append(None)
        p.members.append(1)
        p.succ.append([])
        p.dead.append(False)
        prod = p.prod
        tab, lo, size, xget = prod.tab, prod.lo, prod.size, prod.extra.get
        j = out.num - lo
        if 0 <= j < size:
            tab[j] = i
        else:
            prod.extra[out] = i
        dead, succ = p.dead, p.succ
        n = 0
        for a in ins:
            if a.__class__ is Var:
                j = a.num - lo
                u = tab[j] if 0 <= j < size else xget(a)
                if u is not None and not dead[u]:
                    succ[u].append(i)
                    n += 1
        p.npred.append(n)

    def join(self, deps: list[int]) -> int:
        return self.node(JOIN, None, None, (), None, deps=deps)

    def eqn(self, e: Eqn) -> None:
        p = self.p
        out = e.out
        ins = tuple([p.resolve(a) for a in e.inputs]) if p.alias else e.inputs
        if self.seen is not None:  # (kept for `plan`'s second pass: see _record)
            self.seen.append(e if ins is e.inputs else Eqn(e.prim, ins, e.params, out, e.src))
        if out in self.absorbed:
            return
        prim = e.prim
        if prim not in self.special:  # the common case, quickly
            self.eqn_node(e, ins)
            return
        s = self.sums.get(out)
        if s is not None:
            terms = tuple([p.resolve(a) for a in s.terms])
            self.node(SUM, (SUM, out.aval), out, terms, e, (tuple(s.signs), s.eqns),
                      members=len(terms) - 1)
        elif prim in WRITES and out in self.buf_of:
            self.write(e, ins)
        elif prim is P.getitem and _basic(e.params["idx"]):
            b = ins[0]
            bid = self.buf_of.get(b) if b.__class__ is Var else None
            if bid is not None and self.cur[bid] is b:
                self.read(e, bid)
                return
            pat, axes, pos = split(e.params["idx"])
            self.node(READ, (READ, pat, b.aval), out, (b,), e, (pat, axes, pos))
        else:
            self.eqn_node(e, ins)

    # -- buffers --------------------------------------------------------------------------
    def buffer(self, bid: int) -> Buffer:
        B = self.p.buffers[bid]
        if B.base_node < 0:
            B.base = self.p.resolve(B.base)
            B.base_node = self.node(JOIN, None, None, (B.base,), None)
            B.wv = np.full(B.shape[:B.ndim], B.base_node, dtype=np.int64)
            B.rv = np.full(B.shape[:B.ndim], -1, dtype=np.int64)
        return B

    def add_reader(self, B: Buffer, key: tuple, q: int) -> None:
        """Record read q on its elements: each element's reads-since-its-write become q, or a
        join of the earlier ones and q (one join per distinct earlier set)."""
        sub = B.rv[key]
        ids = _ids(sub)
        if ids == [-1]:
            B.rv[key] = q
            return
        if np.ndim(sub) == 0:
            B.rv[key] = q if ids[0] < 0 else self.join([ids[0], q])
            return
        new = sub.copy()
        for r in ids:
            new[sub == r] = q if r < 0 else self.join([r, q])
        B.rv[key] = new

    def close_run(self, B: Buffer) -> None:
        if B.run:
            j = self.join([m for m in B.run if not self.p.dead[m]])
            for m in B.run:
                self.run_of[m] = j
        B.run, B.run_set = None, set()

    def reader_deps(self, B: Buffer, ids: list[int]) -> list[int]:
        deps = []
        for u in ids:
            if u in B.run_set:
                self.close_run(B)
            deps.append(self.run_of.get(u, u))
        return deps

    def read(self, e: Eqn, bid: int) -> None:
        B = self.buffer(bid)
        idx = _as_basic(e.params["idx"])
        key = track_key(idx, B.ndim)
        ids = _ids(B.wv[key])
        if len(ids) == 1 and self.forward(e, B, ids[0]):
            return
        deps = self.reader_deps(B, ids) if ids else [B.base_node]  # (empty: needs the base)
        pat, axes, pos = split(idx)
        q = self.node(BREAD, (BREAD, bid, pat), e.out, (), e, (bid, pat, axes, pos), deps)
        self.was_read.update(ids)
        self.add_reader(B, key, q)

    def forward(self, e: Eqn, B: Buffer, u: int) -> bool:
        """Serve the read from the value one write left (see the module doc)."""
        v = self.value_at(e, B, u, _as_basic(e.params["idx"]))
        if v is None or v.aval != e.out.aval:
            return False
        self.p.alias[e.out] = v
        return True

    def value_at(self, e: Eqn, B: Buffer, u: int, idx: tuple) -> Var | None:
        """What write u left at idx (inside u's region), or None. A set left its value; an
        addition left what its region held before plus its value, where that is known: the
        base's elements (nothing wrote them) or one set's value. So `y[i] += a * y[i - 1]`
        reads back a value, not the buffer, and is a recurrence of values (a scan), not of
        buffer versions. Only one level: an addition onto an addition stays a buffer read, as
        additions in a run commute (histograms keep their scatter-add); and only an addition
        among the buffer's last `_RECENT` writes (a recurrence reads back what the last steps
        added; a later pass reading a histogram's buckets would otherwise split into the
        buckets one addition filled and the others, data-dependently). Memoized: the next
        step's read of the same element (`y[i - 2]` after `y[i - 1]`) is the same value."""
        key = (u, idx)
        v = self.values.get(key, key)
        if v is key:
            v = self.values[key] = self._value_at(e, B, u, idx)
        return v

    def _value_at(self, e: Eqn, B: Buffer, u: int, idx: tuple) -> Var | None:
        p = self.p
        if p.kind[u] != WRITE or p.dead[u]:
            return None
        prim = p.eqn[u].prim
        rel = relative(self.region[u], idx)
        if rel is None or prim not in (P.setitem, P.setitem_add):
            return None
        v = p.ops[u][0]
        if prim is P.setitem_add and v.aval.dtype != B.base.aval.dtype:
            return None  # (`+=` of another dtype casts the sum, not the value)
        region = P.index_shape(B.shape, self.region[u])
        if v.aval.shape != region:
            v = self.synth(P.broadcast_to, (v,), {"shape": region}, e)
        if v.aval.dtype != B.base.aval.dtype:
            v = self.synth(P.cast, (v,), {"dtype": B.base.aval.dtype}, e)
        if not all(isinstance(k, P.Sl) and k.start == 0 and k.step == 1 and len(k) == d
                   for k, d in zip(rel, region)):
            v = self.synth(P.getitem, (v,), {"idx": P.BasicIndex(rel)}, e)
        if prim is P.setitem:
            return v
        w, bid, nth = self.prior.get(u, (None, 0, 0))
        if self.nwrites[bid] - nth > _RECENT:
            return None
        if w == B.base_node:
            before = self.synth(P.getitem, (B.base,), {"idx": P.BasicIndex(idx)}, e)
        elif w is not None and p.eqn[w] is not None and p.eqn[w].prim is P.setitem:
            before = self.value_at(e, B, w, idx)
        else:
            return None
        return None if before is None else self.synth(P.add, (before, v), {}, e)

    def synth(self, prim: P.Primitive, ins: tuple, params: dict, like: Eqn) -> Var:
        ps = Params(params)
        out = Var(prim.shape_rule(*[a.aval for a in ins], **ps))
        self.eqn(Eqn(prim, ins, ps, out, like.src))
        return out

    def write(self, e: Eqn, ins: tuple) -> None:
        bid = self.buf_of[e.out]
        B = self.buffer(bid)
        idx = _as_basic(e.params["idx"])
        key = track_key(idx, B.ndim)
        sub = B.wv[key]
        ids, counts = _ids(sub, counts=True)
        add = e.prim is P.setitem_add
        deps = [] if ids else [B.base_node]  # (an empty region: it needs the base only)
        if add:
            for u in ids:
                if u in B.run_set:  # additions in one run commute: what u waited for, w does
                    deps += self.order.get(u, ())
                else:
                    deps.append(self.run_of.get(u, u))  # WAW (a closed run: all of it)
            deps = list(dict.fromkeys(deps))
        else:
            deps += self.reader_deps(B, ids)  # WAW (an addition in a run: the whole run)
        rids = _ids(B.rv[key])
        if rids != [-1]:
            deps += [r for r in rids if r >= 0]  # WAR: the reads of these elements
            B.rv[key] = -1
        if B.whole_pending:
            B.whole_join = self.join(B.whole_pending + [B.whole_join])
            B.whole_pending = []
        deps.append(B.whole_join)
        if P.is_basic(idx):
            pat, axes, pos = split(idx)
        else:
            pat, axes, pos = idx, (), ()
        w = self.node(WRITE, (WRITE, bid, e.prim, pat, ins[1].aval), None, (ins[1],), e,
                      (bid, pat, axes, pos), deps)
        self.order[w] = deps
        if add:
            if len(ids) == 1:
                self.prior[w] = (ids[0], bid, self.nwrites[bid])
            if B.run is None:
                B.run = []
            B.run.append(w)
            B.run_set.add(w)
        else:
            self.close_run(B)
            for u, c in zip(ids, counts):
                self.supersede(B, u, c)
        self.live[w] = sub.size
        self.region[w] = idx
        B.since_whole.append(w)
        self.nwrites[bid] += 1
        B.wv[key] = w
        self.cur[bid] = e.out
        if e.out in self.snap:
            self.snapshot(B, bid, e.out, e)

    def supersede(self, B: Buffer, u: int, n: int) -> None:
        """A set overwrote n elements of u's: u is dead once it holds none and nothing read it."""
        left = self.live.get(u)
        if left is None:
            return
        left -= n
        self.live[u] = left
        if left == 0 and u not in self.was_read \
                and u not in self.run_of and u > B.last_whole:
            p = self.p
            after = list(p.succ[u])
            p.kill(u)
            before = [q for q in self.order.pop(u, ()) if q >= 0 and not p.dead[q]]
            for s in after:  # what u waited for, its successors wait for
                for q in before:
                    if s != q:
                        p.succ[q].append(s)
                        p.npred[s] += 1
                if s in self.order:
                    self.order[s] = list(dict.fromkeys(self.order[s] + before))

    def snapshot(self, B: Buffer, bid: int, version: Var, e: Eqn) -> None:
        deps = [B.last_whole if B.last_whole >= 0 else B.base_node]
        deps += self.reader_deps(B, [w for w in B.since_whole if not self.p.dead[w]])
        s = self.node(SNAP, None, version, (), e, bid, deps)
        B.last_whole, B.since_whole = s, []
        B.whole_pending.append(s)

    def build(self) -> Plan:
        """One pass over the equations. The common nodes are made right here, as `eqn`
        would make them (this loop runs once per traced operation): an EQN node (no buffer,
        no sum: not in `special`, or an add that is no chain's), a READ of a value that is no
        buffer's, and nothing for an add a chain absorbed."""
        p = self.p
        eqn, special, seen, fast_ids = self.eqn, self.special, self.seen, self.fast_ids
        key_ids, key_of = p.key_ids, p.key_of
        kind, keys, outs, ops, eqns, info = p.kind, p.key, p.out, p.ops, p.eqn, p.info
        members, succ, dead, npred, prod = p.members, p.succ, p.dead, p.npred, p.prod
        tab, lo, size, extra = prod.tab, prod.lo, prod.size, prod.extra
        xget, fast_get = extra.get, fast_ids.get
        adds, chains, absorbed = (P.add, P.sub), self.sums, self.absorbed
        getitem, buf_of, is_basic = P.getitem, self.buf_of, P.is_basic
        alias = p.alias
        for e in p.g.eqns:
            prim, ins, params, out, _ = e
            nk, nfo = EQN, None
            if alias:
                eqn(e)
                continue
            if prim in special:
                if prim in adds:
                    if out in absorbed:
                        if seen is not None:
                            seen.append(e)
                        continue
                    if out in chains:
                        eqn(e)
                        continue
                elif prim is getitem and ins[0] not in buf_of and (
                        is_basic(params["idx"]) or ramp_as_basic(params["idx"])):
                    nk = READ
                else:
                    eqn(e)
                    continue
            if seen is not None:
                seen.append(e)
            i = len(kind)
            if nk is READ:
                nfo = split(params["idx"])
                # (keyed first by identities, as EQN nodes: the pattern is kept alive by
                # `info`, and split shares one object per pattern)
                fk = (READ, id(nfo[0]), id(ins[0].aval))
                k = fast_get(fk)
                if k is None:
                    key = (READ, nfo[0], ins[0].aval)
                    k = key_ids.get(key)
                    if k is None:
                        k = key_ids[key] = len(key_ids)
                        key_of.append(key)
                    fast_ids[fk] = k
            else:  # (_fast_key, inlined)
                n = len(ins)
                if n == 2:
                    k = fast_get((prim, id(params), id(ins[0].aval), id(ins[1].aval)))
                elif n == 1:
                    k = fast_get((prim, id(params), id(ins[0].aval)))
                else:
                    k = fast_get(_fast_key(prim, params, ins))
                if k is None:
                    k = self.key_id(prim, params, ins)
            kind.append(nk)
            keys.append(k)
            outs.append(out)
            ops.append(ins)
            eqns.append(e)
            info.append(nfo)
            members.append(1)
            succ.append([])
            dead.append(False)
            j = out.num - lo
            if 0 <= j < size:
                tab[j] = i
            else:
                extra[out] = i
            n = 0
            for a in ins:
                if a.__class__ is Var:
                    j = a.num - lo
                    u = tab[j] if 0 <= j < size else xget(a)
                    if u is not None and not dead[u]:
                        succ[u].append(i)
                        n += 1
            npred.append(n)
        return p

    def key_id(self, prim: P.Primitive, params: Params, ins: tuple) -> int:
        """The interned group key of an EQN node (found by `_fast_key` from now on)."""
        p = self.p
        key = (prim, params, tuple([a.aval for a in ins]))
        k = p.key_ids.get(key)
        if k is None:
            k = p.key_ids[key] = len(p.key_ids)
            p.key_of.append(key)
        self.fast_ids[_fast_key(prim, params, ins)] = k
        return k


def _fast_key(prim: P.Primitive, params: Params, ins: tuple) -> tuple:
    """An EQN node's group key by the identities of its parts (the graph keeps them alive;
    equal params and avals are mostly one object: tracing interns them), which hash in C,
    unlike Params and Aval."""
    n = len(ins)
    if n == 2:
        return (prim, id(params), id(ins[0].aval), id(ins[1].aval))
    if n == 1:
        return (prim, id(params), id(ins[0].aval))
    return (prim, id(params), *[id(a.aval) for a in ins])


def plan(g: Graph, n_uses: dict | None = None) -> Plan:
    """The dependence graph of `g` (normalized by `chains.normalize`). When reads were served
    by the values writes stored, the graph is planned again without them: the writes they kept
    alive may be dead, and chains of adds through a buffer (`c[i] = c[i-1] + x[i]`, only the
    last read) are then sums. `n_uses`: `uses(g)`, if known."""
    b = _Builder(g, record=True, n_uses=n_uses)
    p = b.build()
    if not p.alias:
        return p
    add, sub = P.add, P.sub
    added = {a for e in g.eqns if e.prim is add or e.prim is sub for a in e.inputs}
    if not any(v in added for v in p.alias):
        return p  # (writes only forwarded reads kept alive are dropped after emission)
    keep = [e for e in b.seen if e.out not in p.alias]
    outs = tuple(p.resolve(a) if a.__class__ is Var else a for a in g.outputs)
    return _Builder(dce(g.replace(eqns=tuple(keep), outputs=outs))).build()


__all__ = ["BREAD", "EQN", "JOIN", "READ", "SNAP", "SUM", "WRITE", "Buffer", "Plan", "Sum",
           "plan"]
