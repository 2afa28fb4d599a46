"""A batched group's operands (see `batching`): each member's inputs stacked along a new
leading axis, as cheaply as their sources allow. Stacking costs nothing when the operand
already is one group's output in order, is a view when positions are affine (`gather`), and
operands from several sources are gathered once per source."""
from __future__ import annotations

import itertools
from operator import attrgetter, itemgetter

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Var, var_span
from ..tracing import Builder, Tracer
from . import gather
from .nodes import Plan
from .regions import join
from .sums import partition

_FIRST, _SECOND, _THIRD, _POS = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(3)
_NUM = attrgetter("num")


class RowTable:
    """Which row of which batched group each member value is: per value number, the group's
    index in `groups` and the row, in two arrays over the span of the plan's results (dense
    for a trace, see `ir.Var`); a group's rows are set and looked up in bulk, by value
    numbers, where a dict keyed by vars would make a tuple per member and hash the vars'
    addresses all over a table as big as the trace (its cost per member grew with the
    trace). Values outside the span are in `extra`."""

    def __init__(self, eqns: list) -> None:
        self.lo, self.size = var_span(eqns)
        self.gid = np.full(self.size, -1, np.int64)
        self.row = np.zeros(self.size, np.int64)
        self.groups: list[Tracer] = []
        self.ids: dict[int, int] = {}  # id(group) -> its index (a group is one Tracer)
        self.extra: dict[Var, tuple[int, int]] = {}

    def set(self, outs: list[Var], g: Tracer) -> None:
        """`outs[r]` is row r of the group g."""
        k = self.ids.get(id(g))
        if k is None:
            k = self.ids[id(g)] = len(self.groups)
            self.groups.append(g)
        j = np.fromiter(map(_NUM, outs), np.int64, len(outs)) - self.lo
        inside = (j >= 0) & (j < self.size)
        r = np.arange(len(outs))
        self.gid[j[inside]] = k
        self.row[j[inside]] = r[inside]
        for q in np.flatnonzero(~inside).tolist():
            self.extra[outs[q]] = (k, q)

    def get(self, a: Atom) -> tuple[Tracer, int] | None:
        """(group, row) of one value, or None."""
        if a.__class__ is not Var:
            return None
        j = a.num - self.lo
        if 0 <= j < self.size:
            k = int(self.gid[j])
            return (self.groups[k], int(self.row[j])) if k >= 0 else None
        h = self.extra.get(a)
        return (self.groups[h[0]], h[1]) if h is not None else None

    def lookup(self, atoms: list[Atom]) -> tuple[np.ndarray, np.ndarray]:
        """Per atom, its group's index (-1: no group's row) and its row."""
        n, lo = len(atoms), self.lo
        try:
            j = np.fromiter(map(_NUM, atoms), np.int64, n) - lo
        except AttributeError:  # (constants)
            j = np.fromiter((a.num if a.__class__ is Var else -1 for a in atoms), np.int64,
                            n) - lo
            j[np.fromiter((a.__class__ is not Var for a in atoms), bool, n)] = -1
        inside = (j >= 0) & (j < self.size)
        if inside.all():
            return self.gid[j], self.row[j]
        at = np.where(inside, j, 0)
        gid = np.where(inside, self.gid[at] if self.size else -1, -1)
        row = np.where(inside, self.row[at] if self.size else 0, 0)
        if self.extra:
            for q in np.flatnonzero(~inside).tolist():
                h = self.extra.get(atoms[q]) if atoms[q].__class__ is Var else None
                if h is not None:
                    gid[q], row[q] = h
        return gid, row

    def one_group(self, atoms: list[Atom]) -> bool:
        """Whether all atoms are rows of one group."""
        gid = self.lookup(atoms)[0]
        return bool(gid[0] >= 0 and (gid == gid[0]).all())


def one_read(rs: list) -> bool:
    """Whether `rs`, entries of `Operands.reads` (None: no read), are reads of one array with
    one pattern."""
    r0, n = rs[0], len(rs)  # (in C: list.count compares by identity first)
    if r0 is None or None in rs or list(map(_SECOND, rs)).count(r0[1]) != n or \
            list(map(_THIRD, rs)).count(r0[2]) != n:
        return False
    ts = list(map(_FIRST, rs))  # (Tracers compare by value: by id here)
    if list(map(id, ts)).count(id(r0[0])) == n:
        return True
    src = r0[0].atom  # (several Tracers: each read once)
    return all(t.atom is src for t in dict(zip(map(id, ts), ts)).values())


class Operands:
    """The emitter's tables (which group row, read or slab each member value is) and the
    stacking of operands they allow."""

    def __init__(self, p: Plan):
        self.p = p
        self.b = Builder(p.g.inputs)
        self.env: dict[Var, Atom] = {v: v for v in p.g.inputs}
        self.rows = RowTable(p.g.eqns)  # member var -> (its group, its row)
        self.cache: dict[Var, Tracer] = {}
        # a read's member -> (array, pattern, position axes, positions): consumers gather
        # their operands straight from the array, in their own member order
        self.reads: dict[Var, tuple[Tracer, tuple, tuple, tuple]] = {}
        self.cur: dict[int, Tracer] = {}  # buffer -> its version at this point
        # a value that is rows q of a group (a per-iteration buffer filled from one group's
        # rows): members' operands that are such slabs of one group are read from the group
        self.slabs: dict[Atom, tuple[Tracer, np.ndarray]] = {}

    def ref(self, a: Atom) -> Tracer:
        if isinstance(a, Const):
            return Tracer(self.b, a)
        t = self.cache.get(a)
        if t is not None:
            return t
        hit = self.rows.get(a)
        if hit is not None:
            g, r = hit
            t = P.getitem(g, idx=P.BasicIndex((r,) + tuple(P.Sl(0, d, 1) for d in g.shape[1:])))
        else:
            rd = self.reads.get(a)
            if rd is None:
                return Tracer(self.b, self.env[a])
            src, pat, axes, pos = rd
            t = P.getitem(src, idx=P.BasicIndex(join(pat, axes, pos)))
        self.cache[a] = t
        return t

    def operand(self, atoms: list[Atom], one: bool = False) -> tuple[Tracer, bool]:
        """The operands of a group's members stacked along a new axis 0 (a loop invariant,
        the same atom for every member, is passed once: not stacked). `one`: `atoms` are
        known to have one `_source`."""
        a0 = atoms[0]
        if atoms.count(a0) == len(atoms):  # (atoms compare by identity)
            return self.ref(a0), False
        if one:
            return self._part(atoms), True
        if all(isinstance(a, Const) for a in atoms):
            k0 = a0.key()
            if all(a.key() == k0 for a in atoms):  # one constant, by contents: shared
                return self.ref(a0), False
            return Tracer(self.b, Const(np.stack([a.value for a in atoms]))), True
        if self._one_source(atoms):  # (not one atom: rows of one group, or reads alike)
            return self._part(atoms), True
        srcs = [self._source(a) for a in atoms]
        if srcs[0][0] in "grs" and all(s == srcs[0] for s in srcs):
            return self._part(atoms), True
        return self._mixed(atoms, srcs), True

    def _one_source(self, atoms: list[Atom]) -> bool:
        """Whether all `atoms` have one `_source`, quickly for the common cases (one atom,
        rows of one group, reads of one array with one pattern); False may be wrong."""
        a0 = atoms[0]
        if atoms.count(a0) == len(atoms):  # (atoms compare by identity)
            return True
        rows = self.rows
        if rows.get(a0) is not None:
            return rows.one_group(atoms)
        reads = self.reads
        if a0 not in reads:
            return False
        return one_read(list(map(reads.get, atoms))) and not (rows.lookup(atoms)[0] >= 0).any()

    def _source(self, a: Atom) -> tuple:
        """Where a member operand comes from: a group's rows ("g"), reads of one array with one
        pattern ("r": gathered together as one view), equal-sized runs of a group's rows
        ("s", a slab each), or one value ("a": a loop invariant when several members use
        it)."""
        if a.__class__ is Var:
            h = self.rows.get(a)
            if h is not None:
                return ("g", id(h[0]))
            rd = self.reads.get(a)
            if rd is not None:
                return ("r", rd[0].atom, rd[1], rd[2])
            sl = self.slabs.get(self.env.get(a))
            if sl is not None:
                return ("s", id(sl[0]), len(sl[1]))
        return ("a", a)

    def _group_rows(self, atoms: list[Atom]) -> tuple[Tracer, np.ndarray]:
        """The group all `atoms` are rows of, and their rows."""
        return self.rows.get(atoms[0])[0], self._rows_of(atoms)

    def _rows_of(self, atoms: list[Atom]) -> np.ndarray:
        """The rows of `atoms` in their groups (each is a group's row)."""
        gid, row = self.rows.lookup(atoms)
        if (gid < 0).any():
            raise KeyError("not a group's row")
        return row

    def _part(self, atoms: list[Atom]) -> Tracer:
        """Stack operands that all come from one source (see `_source`)."""
        h0 = self.rows.get(atoms[0])
        if h0 is not None:
            q = self._rows_of(atoms)
            x = gather.rows(h0[0], q)
            if x.atom.__class__ is Var and x.atom not in self.slabs:
                self.slabs[x.atom] = (h0[0], q)
            return x
        if atoms[0] not in self.reads:  # slabs of one group: its rows, one slab per member
            slabs = [self.slabs[self.env[a]] for a in atoms]
            g, k = slabs[0][0], len(slabs[0][1])
            x = gather.rows(g, np.concatenate([q for _, q in slabs]))
            return P.reshape(x, shape=(len(atoms), k) + g.shape[1:])
        src, pat, axes, pos0 = self.reads[atoms[0]]
        k = len(pos0)  # (one pattern: as many positions each; read in C, not as a list of tuples)
        pos = np.fromiter(itertools.chain.from_iterable(
            map(_POS, map(self.reads.__getitem__, atoms))), np.int64, k * len(atoms))
        return gather.read(src, pat, axes, pos.reshape(len(atoms), k))

    def _mixed(self, atoms: list[Atom], srcs: list) -> Tracer:
        """Operands from several sources: one gather per source, one concatenation, and one
        read of its rows in member order (never one stack per run). The distinct single
        values are stacked once, so a value several members use (a loop invariant of an inner
        loop, `Qs[k]` for every point i) is one row, read as a broadcast view where the
        members' rows are affine."""
        pieces, row = [], np.empty(len(atoms), np.int64)
        start = 0
        values: dict[Atom, int] = {}
        for m, s in enumerate(srcs):
            if s[0] == "a":
                row[m] = values.setdefault(atoms[m], len(values))
        for s, ms in partition([s if s[0] != "a" else ("a",) for s in srcs]).items():
            if s[0] == "a":
                xs = [self.ref(a) for a in values]
                pieces.append(P.stack(*xs, axis=0) if len(xs) > 1 else
                              P.reshape(xs[0], shape=(1,) + xs[0].shape))
                row[ms] += start
                start += len(values)
                continue
            part = self._part([atoms[m] for m in ms])
            pieces.append(part)
            row[ms] = start + np.arange(len(ms))
            start += part.shape[0]
        x = pieces[0] if len(pieces) == 1 else P.concatenate(*pieces, axis=0)
        return gather.rows(x, row)

    def buffer(self, bid: int) -> Tracer:
        t = self.cur.get(bid)
        if t is None:
            t = self.cur[bid] = self.ref(self.p.buffers[bid].base)
        return t


__all__ = ["Operands", "RowTable", "one_read"]
