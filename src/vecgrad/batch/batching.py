"""Autobatching: isomorphic, independent operations from different loop iterations become one.

This is DyNet-style operation batching done statically on the trace:
1. `chains.normalize`: view reads and write-backs composed, additive read-modify-writes made
   accumulations;
2. `deps.plan`: the dependence graph by region (a buffer's read depends on the writes that
   overlap it, not on its version chain), add chains as sums, keys that abstract positions;
3. `agenda.schedule`: groups of ready nodes of one key, across depths;
4. here: each group is emitted once, through the primitive's batching rule, on operands
   stacked along a new leading axis (`operands`). Stacking costs nothing when the operand
   already is one group's output in order, and is a view when positions are affine (`gather`);
   operands from several sources are gathered once per source.

Recurrences stay sequential, and correct: a member that depends on another is never ready
with it.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from operator import itemgetter
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Graph, Var, dce, uses
from ..rewrite.cse import cse
from ..tracing import Tracer
from . import gather
from .addchains import join_static_adds, static_add_chains
from .agenda import schedule
from .chains import normalize
from .concats import flatten_concats, growing_concats
from .decays import decayed_scatters, scale_scatters
from .deps import plan
from .extremes import join_extremes, scatter_extremes
from .foldchains import join_keyed_folds, keyed_folds
from .listgather import one_length_lists
from .listmaps import list_maps
from .lists import list_reads, list_sums
from .nodes import BREAD, READ, SNAP, SUM, WRITE, Plan
from .notes import Notes
from .operands import Operands, one_read
from .packed import packed_rows
from .ragged import cumulative_sums, partial_slices
from .regions import INT, SlPat, join
from .rmwchains import affine_rmw_writes, join_affine_rmw
from .setchains import join_set_writes, traced_set_writes
from .siblings import sibling_writes, stack_siblings
from .sums import BIG, emit_sums, partition

_POS = itemgetter(3)
_OUT = itemgetter(3)  # an equation's result

# A group whose members' operands come from more combinations of sources than this (or that
# has a combination only one member uses) runs as one operation on concatenated operands;
# otherwise as one operation per combination, each reading its operands as views.
MAX_SPLIT = 4
# ... or than MAX_SPLIT_BIG, where every combination's members hold BIG elements or more:
# a call per combination then costs less than the concatenation's copy (several lags'
# differences `x[t] - x[t - L]`, each lag a run of positions)
MAX_SPLIT_BIG = 16
# A group whose read positions are affine in at most MAX_RUNS runs of at least MIN_RUN members
# each runs as one operation per run, on views (see `_Emitter._affine_runs`).
MAX_RUNS, MIN_RUN = 8, 8


class _Emitter(Operands):
    """Emits each scheduled group once (see the module doc); its operands come from
    `Operands`."""

    def __init__(self, p: Plan):
        super().__init__(p)
        self.notes = Notes(p)

    # -- emission ---------------------------------------------------------------------------
    def emit(self, members: list[int]) -> None:
        p = self.p
        i0 = members[0]
        kind = p.kind[i0]
        e = p.eqn[i0]
        self.b.src = e.src if e is not None else None
        if kind == SNAP:
            self.env[p.out[i0]] = self.buffer(p.info[i0]).atom
            return
        self.notes.group(members)
        if kind == WRITE:
            self._write(self._ascending(members, None))
        elif kind == BREAD:
            self._read(members, self.buffer(p.info[i0][0]), p.info)
        elif kind == READ:
            self._plain_read(members)
        elif kind == SUM:
            self._sum(members)
        elif e.prim in (P.concatenate, P.stack) and _uniform(e):
            axis = e.params["axis"]
            fin = (lambda x, lead: _merge_axis(x, axis, lead)) if e.prim is P.concatenate \
                else (lambda x, lead: _move_axis1(x, axis, lead))
            self._set_rows(members, self._collect(members, fin))
        elif len(members) == 1:
            self._single(i0)
        elif self._copies_big(members):
            self._unbatched(members, f"{len(members)} `{e.prim.name}` operations on arrays of "
                            f"{p.out[i0].aval.size:,} elements each ran one by one: merging "
                            "them would copy operands read at positions with no affine form")
        else:  # (the members' operands by position, read once for the checks and the emission:
            cols = [list(c) for c in zip(*map(p.ops.__getitem__, members))]  # a big group's
            order = self._ascending(members, cols)
            if order is not members:
                members = order
                cols = [list(c) for c in zip(*map(p.ops.__getitem__, members))]
            parts = self._by_source(members, cols)  # ops lie far apart in memory)
            if parts is None:  # (each operand from one source: not checked again)
                runs = self._affine_runs(members, cols)
                if len(runs) == 1:
                    self._batched(members, one=True, cols=cols)
                    return
                for run in runs:
                    self._batched(run, one=True) if len(run) > 1 else self._single(run[0])
                return
            for part in (q for ms in parts for q in self._affine_runs(ms)):
                if len(part) == 1:
                    self._single(part[0])
                else:
                    self._batched(part)

    def _ascending(self, members: list[int], cols: list[list[Any]] | None) -> list[int]:
        """`members` in ascending order of their positions when they run backwards (a loop
        over `reversed(range(n))` or `range(n - 1, -1, -1)`): the members of a group are
        independent, so their order is free, and in ascending order the views of their reads
        and writes step forwards, which NumPy's kernels (BLAS above all) run far faster than
        at negative strides. The positions are those of the first operand column in `cols`
        that varies (reads' positions, or rows of one group), or with `cols` None the
        members' write positions. O(1) when the first member's positions are not past the
        last's (the common case); kept when no order makes them affine."""
        if len(members) < 2:
            return members
        info = self.p.info
        for col in cols if cols is not None else [None]:
            pos = (lambda m: info[m][3]) if col is None else self._positions(col)
            if pos is None:
                continue
            try:
                first, last = map(pos, (members[0], members[-1]) if col is None
                                  else (col[0], col[-1]))
                if first == last:
                    continue
                if first < last:
                    return members
                at = np.array([pos(a) for a in (members if col is None else col)], np.int64)
            except (KeyError, ValueError, TypeError):  # (not one kind of position throughout)
                return members
            at = at.reshape(len(members), -1)
            order = np.lexsort(at.T[::-1])
            if gather.digits(at[order]) is None:
                return members  # (not affine in any order: a gather either way)
            return [members[k] for k in order]
        return members

    def _positions(self, col: list[Any]) -> Any:
        """How to read a member's positions in the operand column `col` (a read's positions,
        or a row of the group that the column's first value is a row of: KeyError for a
        value that is neither); None when its ends have none."""
        a0, a1 = col[0], col[-1]
        if a0.__class__ is not Var:
            return None
        reads, rows = self.reads, self.rows
        if a0 in reads and a1 in reads:
            src, pat, axes, _ = reads[a0]  # (Tracers compare by value: by atom here)
            return lambda a: reads[a][3] if reads[a][0].atom is src.atom and \
                reads[a][1:3] == (pat, axes) else reads[None]
        h0, h1 = rows.get(a0), rows.get(a1)
        if h0 is not None and h1 is not None and h0[0] is h1[0]:
            g = h0[0]

            def row(a: Atom) -> tuple[int]:
                h = rows.get(a)
                if h is None or h[0] is not g:
                    raise KeyError(a)
                return (h[1],)
            return row
        return None

    def _by_source(self, members: list[int], operands: list[list[Atom]]
                   ) -> list[list[int]] | None:
        """Members split by where their operands come from, when there are few such
        combinations: each part then reads its operands as views (a loop invariant passed
        once), with no concatenation. Values only one member uses count as one source.
        None (the common case) when each operand comes from one source. `operands`: the
        members' operands by position."""
        one = list(map(self._one_source, operands))
        if all(one):
            return None
        ops = self.p.ops
        cols = []
        for col, same in zip(operands, one):
            if same:  # (one source: no member of 2 or more is loose in it)
                cols.append([self._source(col[0])] * len(col))
                continue
            col = list(map(self._source, col))
            n = Counter(col)
            cols.append([("loose",) if c[0] == "a" and n[c] == 1 else c for c in col])
        parts: dict[tuple, list[int]] = {}
        for m, key in zip(members, zip(*cols)):
            parts.setdefault(key, []).append(m)
        sizes = list(map(len, parts.values()))
        # (a member alone in its combination runs alone beside a long run: one value made
        # outside a loop, `w.ravel()` beside every window's `.ravel()`, must not make the
        # windows one concatenated copy; but not one with a constant where the others read,
        # a zero boundary `x[i - 1] if i > 0 else 0.0`, padded with the others)
        few = len(parts) <= MAX_SPLIT or len(parts) <= MAX_SPLIT_BIG and \
            min(sizes) * max(a.aval.size for a in ops[members[0]]) >= BIG
        lone = [(k, ops[ms[0]]) for k, ms in parts.items() if len(ms) == 1]
        split = few and (min(sizes) > 1 or any(_invariant(k, o) for k, o in lone) or
                         max(sizes) >= MIN_RUN and not any(_boundary(k, o, parts)
                                                           for k, o in lone))
        out = list(parts.values()) if split else [members]
        # a few members whose operands are unrelated values: stacking them costs more than
        # it saves (one stack per operand against one call per member)
        return [q for ms in out for q in _few_loose(ms, cols, members)]

    def _affine_runs(self, ms: list[int], ops: list[list[Atom]] | None = None
                     ) -> list[list[int]]:
        """Members whose reads sit at positions that are affine only piecewise (the pairs
        (t, t-L) of a loop over t inside a loop over a few lags L), split into those few long
        runs: each reads its operands as views, and their gradients are slice additions, where
        one gather of all positions would copy them and sum its gradient by segment. `ops`:
        the members' operands by position, if known."""
        if len(ms) < 2 * MIN_RUN:
            return [ms]
        p, reads = self.p, self.reads
        cols = []
        M = len(ms)
        for col in zip(*map(p.ops.__getitem__, ms)) if ops is None else ops:
            r0, r1, rm, rl = map(reads.get, (col[0], col[1], col[M // 2], col[-1]))
            if r0 is None or not r0[3] or r1 is None or rm is None or rl is None:
                continue  # (the common case, quickly: no read, or not all reads)
            if all(a + (M // 2) * (b - a) == c and a + (M - 1) * (b - a) == z
                   for a, b, c, z in zip(r0[3], r1[3], rm[3], rl[3])):
                continue  # (one ramp at four samples: affine, as the view will find)
            rd = list(map(reads.get, col))
            if not one_read(rd):
                continue  # (only reads of one array with one pattern: one position each)
            pos = np.fromiter(itertools.chain.from_iterable(map(_POS, rd)), np.int64
                              ).reshape(len(ms), -1)  # (one pattern: as many positions each)
            d = np.diff(pos, axis=0)
            if (d == d[0]).all() or gather.digits(pos) is not None:
                continue  # (affine: one view already)
            cols.append(pos)
        if not cols:
            return [ms]
        d = np.diff(np.concatenate(cols, axis=1), axis=0)
        runs, start = [], 0
        while start < M:
            if len(runs) == MAX_RUNS:
                return self._affine_classes(ms)
            bad = np.flatnonzero(np.any(d[start:] != d[start], axis=1)) if start < M - 1 \
                else np.zeros(0, np.int64)
            end = start + int(bad[0]) + 1 if len(bad) else M
            runs.append(ms[start:end])
            start = end
        return runs if min(map(len, runs)) >= MIN_RUN else self._affine_classes(ms)

    def _affine_classes(self, ms: list[int]) -> list[list[int]]:
        """Members split by the position of one read that takes a few values only (the tap d
        of `out[i] += w[d + 1] * x[i + d]` under bounds checks, which leave the taps of the
        edge rows out), when every read is affine within each class: a few views (and, for
        the writes they feed, slice additions) instead of one gather and a segment sum."""
        p, reads = self.p, self.reads
        cols = []
        for col in zip(*map(p.ops.__getitem__, ms)):
            rd = [reads.get(a) for a in col]
            if any(r is None for r in rd) or len({(r[0].atom, r[1], r[2]) for r in rd}) > 1:
                continue
            cols.append(np.array(list(map(_POS, rd)), np.int64).reshape(len(ms), -1))
        for pos in cols:
            if not pos.shape[1]:
                continue
            keys, inv = np.unique(pos, axis=0, return_inverse=True)
            if not 1 < len(keys) <= MAX_RUNS:
                continue
            inv = inv.reshape(-1)
            parts = [np.flatnonzero(inv == k) for k in range(len(keys))]
            if min(map(len, parts)) >= MIN_RUN and all(
                    gather.digits(c[q]) is not None for q in parts for c in cols):
                return [[ms[i] for i in q] for q in parts]
        return [ms]

    def _copies_big(self, members: list[int]) -> bool:
        """Whether merging `members`, an elementwise operation on arrays of BIG elements or
        more each, would copy an operand: reads at positions with no affine form gathered,
        or values made one by one stacked (a Sobel filter's taps `c * img[a:a+H, b:b+W]`
        over the kernel's nonzero entries). Each member is a whole-array pass already: the
        copy, and its gradient's segment sum, cost more than the calls merging saves."""
        p = self.p
        if not p.eqn[members[0]].prim.elementwise or p.out[members[0]].aval.size < BIG:
            return False
        for col in zip(*map(p.ops.__getitem__, members)):
            col = list(col)
            if col.count(col[0]) == len(col) or all(a.__class__ is Const for a in col):
                continue
            srcs = {self._source(a) for a in col}
            s = next(iter(srcs))
            if len(srcs) > 1 or s[0] == "a":
                return True
            if s[0] == "r":
                pos = np.fromiter(itertools.chain.from_iterable(
                    map(_POS, map(self.reads.__getitem__, col))), np.int64)
                if gather.digits(pos.reshape(len(col), -1)) is None:
                    return True
        return False

    def _single(self, i: int) -> None:
        e = self.p.eqn[i]
        ins = tuple(self.ref(a).atom for a in self.p.ops[i])
        self.b.eqns.append(Eqn(e.prim, ins, e.params, e.out, e.src))
        self.env[e.out] = e.out

    def _set_rows(self, members: list[int], out: Tracer) -> None:
        p = self.p
        if len(members) == 1:
            self.env[p.out[members[0]]] = out.atom
        else:
            self.rows.set(list(map(p.out.__getitem__, members)), out)
        self.notes.batched(members, out, self.b.eqns[-1] if self.b.eqns else None)

    def _batched(self, members: list[int], one: bool = False,
                 cols: list[list[Atom]] | None = None) -> None:
        p = self.p
        e = p.eqn[members[0]]
        n = len(members)
        if e.prim.batch is None:
            return self._unbatched(members, f"`{e.prim.name}` has no batching rule")
        if cols is None:
            cols = [list(c) for c in zip(*map(p.ops.__getitem__, members))]
        ops = [self.operand(col, one) for col in cols]
        if not any(b for _, b in ops):  # the same operation on the same values: run it once
            out = e.prim(*[x for x, _ in ops], **e.params)
            for m in members:
                self.env[p.out[m]] = out.atom
            return
        try:
            out = e.prim.batch(n, tuple(b for _, b in ops), *[x for x, _ in ops], **e.params)
        except P.NotBatchable as ex:
            return self._unbatched(members, f"{n} `{e.prim.name}` operations could not be "
                                            f"merged: {ex}")
        self._set_rows(members, out)

    def _unbatched(self, members: list[int], why: str) -> None:
        self.notes.unbatched(members, why)
        for m in members:
            self._single(m)

    def _plain_read(self, members: list[int]) -> None:
        p = self.p
        info, ops, out, reads = p.info, p.ops, p.out, self.reads
        shifted: dict[tuple, tuple] = {}  # (pattern, axes) -> the same behind a row axis
        refs: dict[int, Tracer] = {}  # id(base) -> its ref: one Tracer per array read
        bases = [ops[m][0] for m in members]
        if bases.count(bases[0]) == len(bases) and self.rows.get(bases[0]) is None:
            # one array, no group's row (a scalar loop's reads of a vector): each a read of
            # it as it is, as below, recorded in bulk
            src = self.ref(bases[0])
            reads.update(zip(map(out.__getitem__, members),
                             map((src,).__add__, map(info.__getitem__, members))))
            self.notes.batched(members, None, None)
            return
        gid, row = self.rows.lookup(bases)  # (each base's group and row, in bulk)
        groups = self.rows.groups
        for m, base, k, r in zip(members, bases, gid.tolist(), row.tolist()):
            pat, axes, pos = info[m]
            if k >= 0:  # a read of a group member: a read of the group at its row
                src = groups[k]
                pa = shifted.get((pat, axes))
                if pa is None:
                    pa = shifted[(pat, axes)] = ((INT,) + pat,
                                                 (0,) + tuple(a + 1 for a in axes))
                pat, axes, pos = pa[0], pa[1], (r,) + pos
            else:
                src = refs.get(id(base))
                if src is None:
                    src = refs[id(base)] = self.ref(base)
            reads[out[m]] = (src, pat, axes, pos)
        self.notes.batched(members, None, None)

    def _read(self, members: list[int], base: Tracer, info: list) -> None:
        p = self.p
        for m in members:
            pat, axes, pos = info[m][-3:]
            self.reads[p.out[m]] = (base, pat, axes, pos)
        self.notes.batched(members, None, None)

    def _write(self, members: list[int]) -> None:
        p = self.p
        i0 = members[0]
        bid, pat, axes, _ = p.info[i0]
        prim = p.eqn[i0].prim
        base = self.buffer(bid)
        if P.is_basic(p.eqn[i0].params["idx"]) and not math.prod(
                P.index_shape(base.shape, p.eqn[i0].params["idx"])):
            self.cur[bid] = base  # (writes of no elements: one pattern, all empty)
            return
        if len(members) == 1 or not P.is_basic(p.eqn[i0].params["idx"]):
            for m in members:
                base = prim(base, self.ref(p.ops[m][0]), idx=p.eqn[m].params["idx"])
            self.cur[bid] = base
            self.notes.batched(members, base, None)
            return
        filled = self._filled(members, base, p.eqn[i0].params["idx"]) \
            if prim is P.setitem else None
        if filled is not None:
            self.cur[bid] = filled
            self.notes.batched(members, filled, None)
            return
        parts = partition([self._source(p.ops[m][0]) for m in members])
        for ks in parts.values():  # one write per source of the values
            ms = [members[k] for k in ks]
            vals, batched = self.operand([p.ops[m][0] for m in ms])
            if not batched:  # one value written at every position: a broadcast view
                vals = P.broadcast_to(P.reshape(vals, shape=(1,) + vals.shape),
                                      shape=(len(ms),) + vals.shape)
            pos = np.array([p.info[m][3] for m in ms], np.int64).reshape(len(ms), -1)
            base = gather.write(prim, base, vals, pat, axes, pos)
        self.cur[bid] = base
        self.notes.batched(members, base, None)

    def _filled(self, members: list[int], base: Tracer, idx0: Any) -> Tracer | None:
        """A buffer whose rows the members write, each once, from rows of one group (a
        per-iteration buffer filled by index, `beta[k] = ...` in a loop over k): its value is
        those rows in position order, read from the group, and remembered as a slab of it
        so that the iterations' buffers are read from the group together."""
        p = self.p
        n = base.shape[0] if base.ndim else 0
        h0 = self.rows.get(p.ops[members[0]][0])
        if len(members) != n or h0 is None or h0[0].shape[1:] != base.shape[1:] \
                or h0[0].dtype != base.dtype or len(idx0) != base.ndim:
            return None
        rest = tuple(P.Sl(0, d, 1) for d in base.shape[1:])
        at = np.empty(n, np.int64)
        seen = np.zeros(n, bool)
        for m in members:
            h = self.rows.get(p.ops[m][0])
            idx = join(*p.info[m][1:])
            if h is None or h[0] is not h0[0] or not isinstance(idx[0], int) \
                    or tuple(idx[1:]) != rest or not 0 <= idx[0] < n or seen[idx[0]]:
                return None
            seen[idx[0]] = True
            at[idx[0]] = h[1]
        x = gather.rows(h0[0], at)
        if x.atom.__class__ is Var:
            self.slabs.setdefault(x.atom, (h0[0], at))
        return x

    def _collect(self, members: list[int], finish: Any) -> Tracer:
        """Stack the n x k operands of n collective nodes as (n, k, ...) and finish them
        (`finish(x, lead)`, lead the number of axes before k: one node has no n axis, so that
        a stack along its last axis is one transpose, which a contraction before it absorbs)."""
        p = self.p
        k = len(p.ops[members[0]])
        x, batched = self.operand([a for m in members for a in p.ops[m]])
        if not batched:
            x = P.broadcast_to(x, shape=(len(members) * k,) + x.shape)
        if len(members) == 1:
            return finish(x, 0)
        return finish(P.reshape(x, shape=(len(members), k) + x.shape[1:]), 1)

    def _sum(self, members: list[int]) -> None:
        self._set_rows(members, emit_sums(self, members))


def _boundary(key: tuple, ops: list[Atom], parts: dict[tuple, list[int]]) -> bool:
    """Whether a member alone in its source combination `key` is a boundary case of a long
    run: it reads what the run reads but for constants in some places (`x[i - 1] if i > 0
    else 0.0`), so it pads the run's operands. A member that differs elsewhere (a loop
    invariant term `1e-3 * w.sum()` beside per-sample terms) runs on its own."""
    const = [a.__class__ is Const for a in ops]
    return any(len(ms) >= MIN_RUN and any(const) and all(
        c or a == b for a, b, c in zip(key, k, const)) for k, ms in parts.items())


def _invariant(key: tuple, ops: list[Atom]) -> bool:
    """Whether a member alone in its source combination `key` reads only constants and values
    every member shares: a loop invariant beside the run (a mask's count `where(m, ones, 0)`,
    made once where the ones are one constant), which runs alone however short the run.
    Padded in, the run's operand was concatenated with it and every result taken back out."""
    return all(a.__class__ is Const or k[0] == "a" for k, a in zip(key, ops))


def _few_loose(ms: list[int], cols: list[list[tuple]], members: list[int]) -> list[list[int]]:
    at = {m: k for k, m in enumerate(members)}
    loose = sum(1 for c in cols if any(c[at[m]][0] == "loose" for m in ms))
    return [[m] for m in ms] if loose and len(ms) <= 2 * loose else [ms]


def _uniform(e: Eqn) -> bool:
    ops = e.inputs
    return len(ops) >= 3 and all(a.aval == ops[0].aval for a in ops)


def _k_to(x: Any, axis: int, lead: int) -> Any:
    """(*n, k, *s) -> (*n, *s[:axis], k, *s[axis:]), n the `lead` axes."""
    perm = tuple(range(lead)) + tuple(range(lead + 1, lead + 1 + axis)) + (lead,) + \
        tuple(range(lead + 1 + axis, x.ndim))
    return P.transpose(x, perm=perm) if perm != tuple(range(x.ndim)) else x


def _merge_axis(x: Any, axis: int, lead: int) -> Any:
    """(*n, k, *s) -> (*n, *s with k pieces joined along `axis`)."""
    n, k, s = x.shape[:lead], x.shape[lead], x.shape[lead + 1:]
    return P.reshape(_k_to(x, axis, lead), shape=n + s[:axis] + (k * s[axis],) + s[axis + 1:])


def _move_axis1(x: Any, axis: int, lead: int) -> Any:
    """(*n, k, *s) -> (*n, *s[:axis], k, *s[axis:]): k pieces stacked along `axis`."""
    return _k_to(x, axis, lead)


def batch(g: Graph) -> Graph:
    """Merge isomorphic, independent equations into batched ones (see module doc). Where the
    pass merged most of the graph and left many isomorphic equations (an inner loop's groups,
    one per outer iteration: a buffer reset per row, filled by a chain of writes, becomes one
    segment sum per row), it runs once more, on the graph it made."""
    out = _batch_once(g)
    if 2 * len(out.eqns) <= len(g.eqns) and _repeats(out):
        again = _batch_once(out)
        if len(again.eqns) < len(out.eqns):
            return again
    return out


def _repeats(g: Graph) -> bool:
    """Whether MIN_RUN equations of g have one primitive, parameters and input shapes (not
    elementwise or structural ones: those repeat in any graph; and not a handful, which a
    second pass would only restack)."""
    seen: dict[tuple, int] = {}
    for e in g.eqns:
        if e.prim.elementwise or e.prim in _CHEAP:
            continue
        k = (e.prim, e.params, tuple(a.aval for a in e.inputs))
        seen[k] = n = seen.get(k, 0) + 1
        if n >= MIN_RUN:
            return True
    return False


_CHEAP = frozenset([P.getitem, P.reshape, P.transpose, P.broadcast_to, P.stack, P.concatenate,
                    P.setitem, P.setitem_add])


def _batch_once(g: Graph) -> Graph:
    n_uses = uses(g)  # (one count serves both when nothing is rewritten or dead)
    g0, g = g, normalize(g, n_uses)
    if g is not g0 or not all(map(n_uses.__contains__, map(_OUT, g.eqns))):  # (something unused: the
        g = dce(g)  # last dead equation is; `x[i] += v` traces a read of x[i] nothing uses)
    if growing_concats(g):  # (an array grown by np.append / concatenate: see concats)
        g1 = flatten_concats(g)
        if g1 is not g:
            g = dce(g1)
    if sibling_writes(g):  # (each iteration's own buffer, filled by index: see siblings)
        g1 = stack_siblings(g)
        if g1 is not g:
            g = dce(g1)
    if decayed_scatters(g):  # (a buffer scaled between scatters into it: see decays)
        g1 = scale_scatters(g)
        if g1 is not g:
            g = dce(g1)
    if keyed_folds(g):  # (running maxima per key of a Python list: one scatter, see foldchains)
        g1 = join_keyed_folds(g)
        if g1 is not g:
            g = dce(g1)
    if static_add_chains(g):  # (chains of np.add.at at static index arrays: see addchains)
        g1 = join_static_adds(g)
        if g1 is not g:
            g = dce(g1)
    if scatter_extremes(g):  # (chains of scatter-maxima: one scatter, see extremes)
        g = dce(join_extremes(g))
    if affine_rmw_writes(g):  # (chains of x[k] = a x[k] + b at traced k: see rmwchains)
        g1 = join_affine_rmw(g)
        if g1 is not g:
            g = dce(g1)
    if traced_set_writes(g):  # (chains of writes at traced positions: one, see setchains)
        g = dce(join_set_writes(g))
    ragged = partial_slices(g)
    if ragged:  # (growing and shrinking slices: see ragged and packed)
        g1 = packed_rows(cumulative_sums(g))
        if g1 is not g:
            g = dce(g1)
    lists = list_reads(g)
    if lists:  # (sums over rows picked by index lists, and row-wise work on
        g1 = list_sums(g)  # lists of several lengths: see lists, listmaps)
        if g1 is not g:
            g = dce(g1)
    if lists or ragged:  # (and on disjoint row ranges of several lengths: CSR segments)
        g1 = list_maps(g, segments=ragged)
        if g1 is not g:
            g = dce(g1)
    if lists:  # (lists of one length: slices of one gather, see listgather)
        g = one_length_lists(g)
    p = plan(g, n_uses if g is g0 else None)
    em = _Emitter(p)
    for members in schedule(p):
        em.emit(members)
    em.b.src = None
    outs = [em.ref(p.resolve(a)).atom if a.__class__ is Var else a for a in p.g.outputs]
    return dce(cse(em.b.build(outs, g.notes + em.notes.finish())))


__all__ = ["SlPat", "batch", "join"]
