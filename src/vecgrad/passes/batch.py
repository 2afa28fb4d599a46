"""Autobatching: isomorphic equations from different loop iterations become one equation.

This is DyNet-style operation batching done statically on the trace. Every node (equation,
write chain or add chain, see `chains`) gets a depth, the longest path from the inputs.
Nodes of equal depth cannot depend on each other, so nodes with equal depth and equal key
(primitive, params, operand shapes) are merged into a group and emitted once, through the
primitive's batching rule, on operands stacked along a new leading axis. Recurrences keep
growing in depth and so stay sequential, and correct.

Stacking an operand costs nothing when it is already the output of one group in order,
and is a reshape/transpose/broadcast when the rows form a grid (`gather`).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Graph, Var
from ..tracing import Builder, Tracer
from .chains import Node, build_nodes, forward_reads, node_key, write_positions
from .cse import cse
from .dce import dce
from .gather import grid_read, grid_write, realize_rows


class _Batcher:
    def __init__(self, g: Graph):
        self.b = Builder(g.inputs)
        self.env: dict[Var, Atom] = {v: v for v in g.inputs}
        self.rows: dict[Var, tuple[Tracer, int]] = {}
        self.cache: dict[Var, Tracer] = {}
        # a batched read's member -> (source, pattern, int axes, its position): a consumer
        # reads its own rows from the source (a view when they form a grid)
        self.reads: dict[Var, tuple[Tracer, tuple, tuple, tuple]] = {}
        self.notes: list[dict] = []

    # -- operands ---------------------------------------------------------------------
    def source(self, a: Atom) -> Any:
        if isinstance(a, Var) and a in self.rows:
            return ("group", id(self.rows[a][0]))
        return ("atom", a.key() if isinstance(a, Const) else a)

    def group_of(self, a: Atom) -> Any:
        """Operands from different batch groups are not mixed in one group (that would cost a
        concatenation and a gather back); operands that are not batched may differ."""
        hit = self.rows.get(a)  # (constants hash by identity and are never in rows)
        return None if hit is None else id(hit[0])

    def ref(self, a: Atom) -> Tracer:
        if isinstance(a, Const):
            return Tracer(self.b, a)
        if a in self.rows:
            if a not in self.cache:
                g, r = self.rows[a]
                self.cache[a] = P.getitem(g, idx=(r,) + tuple(P.Sl(0, d, 1) for d in g.shape[1:]))
            return self.cache[a]
        return Tracer(self.b, self.env[a])

    def gather(self, atoms: list[Atom]) -> tuple[Tracer, bool]:
        """Stack the operands of a group's members along a new axis 0 (shared: not stacked)."""
        a0 = atoms[0]
        if all(a is a0 for a in atoms):
            return self.ref(a0), False
        if all(isinstance(a, Const) for a in atoms):
            return Tracer(self.b, Const(np.stack([a.value for a in atoms]))), True
        reads = [self.reads.get(a) if isinstance(a, Var) else None for a in atoms]
        r0 = reads[0]
        if r0 is not None and all(r is not None and r[0] is r0[0] and r[1:3] == r0[1:3]
                                  for r in reads):
            pos = np.array([r[3] for r in reads], dtype=np.int64).reshape(len(atoms), len(r0[3]))
            return grid_read(r0[0], r0[1], list(r0[2]), pos), True
        hits = [self.rows.get(a) for a in atoms]
        g0 = hits[0][0] if hits[0] is not None else None
        if g0 is not None and all(h is not None and h[0] is g0 for h in hits):
            return realize_rows(g0, np.fromiter((h[1] for h in hits), np.int64, len(hits))), True
        runs: list[tuple[Any, list[Atom]]] = []
        for a in atoms:
            s = self.source(a) if isinstance(a, Var) and a in self.rows else ("other",)
            if runs and runs[-1][0] == s:
                runs[-1][1].append(a)
            else:
                runs.append((s, [a]))
        parts = [self._run(s, run) for s, run in runs]
        return (parts[0] if len(parts) == 1 else P.concatenate(*parts, axis=0)), True

    def _run(self, s: Any, run: list[Atom]) -> Tracer:
        if s[0] == "group":
            g = self.rows[run[0]][0]
            return realize_rows(g, np.array([self.rows[a][1] for a in run]))
        xs = [self.ref(a) for a in run]
        return P.reshape(xs[0], shape=(1,) + xs[0].shape) if len(xs) == 1 else \
            P.stack(*xs, axis=0)

    # -- emission ---------------------------------------------------------------------
    def emit(self, members: list[Node]) -> None:
        first = members[0]
        self.b.src = first.src
        n = len(members)
        if first.kind == "write":
            out = self._write(first)
        elif first.kind == "sum":
            out = self._collect(members, lambda x: P.reduce_sum(x, axes=(1,)))
        elif first.eqn.prim is P.concatenate and _uniform(first):
            out = self._collect(members, lambda x: _merge_axis(x, first.eqn.params["axis"]))
        elif first.eqn.prim is P.stack and _uniform(first):
            out = self._collect(members, lambda x: _move_axis1(x, first.eqn.params["axis"]))
        elif n == 1:
            return self._single(first)
        elif first.eqn.prim is P.getitem and P.is_basic(first.eqn.params["idx"]):
            out = self._getitem(members)
        else:
            out, why = self._batched(members)
            if out is None:  # stays correct, one equation per member; say why
                self.notes.append({"kind": "unbatched", "src": first.src,
                                   "what": first.eqn.prim.name, "count": n, "reason": why})
                for m in members:
                    self._single(m)
                return
        if n == 1:  # a single collective node (write chain, add chain, concatenate)
            self.env[first.out] = out.atom
        else:
            for i, m in enumerate(members):
                self.rows[m.out] = (out, i)
        self._note(members, out)

    def _single(self, n: Node) -> None:
        e = n.eqn
        ins = tuple(self.ref(a).atom for a in e.inputs)
        self.b.eqns.append(Eqn(e.prim, ins, e.params, e.out, e.src))
        self.env[e.out] = e.out

    def _batched(self, members: list[Node]) -> tuple[Tracer | None, str]:
        e = members[0].eqn
        if e.prim.batch is None:
            return None, f"`{e.prim.name}` has no batching rule"
        ops = [self.gather([m.operands[p] for m in members]) for p in range(len(e.inputs))]
        try:
            return e.prim.batch(len(members), tuple(b for _, b in ops), *[x for x, _ in ops],
                                **e.params), ""
        except P.NotBatchable as ex:
            return None, f"{len(members)} `{e.prim.name}` operations could not be merged: {ex}"

    def _getitem(self, members: list[Node]) -> Tracer:
        from .chains import pattern_of
        pat, axes, _ = pattern_of(members[0].eqn.params["idx"])
        pos = np.array([pattern_of(m.eqn.params["idx"])[2] for m in members],
                       dtype=np.int64).reshape(len(members), len(axes))
        bases = [m.operands[0] for m in members]
        if all(isinstance(a, Var) and a in self.rows for a in bases) and \
                len({id(self.rows[a][0]) for a in bases}) == 1:
            g = self.rows[bases[0]][0]
            q = np.array([self.rows[a][1] for a in bases])
        elif all(a is bases[0] for a in bases):
            return self._read(members, self.ref(bases[0]), pat, axes, pos)
        else:
            g, _ = self.gather(bases)
            q = np.arange(len(members))
        pos = np.concatenate([q[:, None], pos], axis=1)
        return self._read(members, g, (-1,) + pat, [0] + [a + 1 for a in axes], pos)

    def _read(self, members: list[Node], src: Tracer, pat: tuple, axes: list[int],
              pos: np.ndarray) -> Tracer:
        for m, p in zip(members, pos):
            self.reads[m.out] = (src, pat, tuple(axes), tuple(int(v) for v in p))
        return grid_read(src, pat, axes, pos)

    def _collect(self, members: list[Node], finish: Any) -> Tracer:
        """Stack the n x k operands of n collective nodes as (n, k, ...) and finish them."""
        k = len(members[0].operands)
        x, batched = self.gather([a for m in members for a in m.operands])
        if not batched:
            x = P.broadcast_to(x, shape=(len(members) * k,) + x.shape)
        x = P.reshape(x, shape=(len(members), k) + x.shape[1:])
        out = finish(x)
        return P.reshape(out, shape=out.shape[1:]) if len(members) == 1 else out

    def _write(self, n: Node) -> Tracer:
        prim, pat, axes, _ = n.write
        vals, batched = self.gather(n.operands[1:])
        k = len(n.operands) - 1
        if not batched:
            vals = P.broadcast_to(P.reshape(vals, shape=(1,) + vals.shape),
                                  shape=(k,) + vals.shape)
        return grid_write(prim, self.ref(n.operands[0]), vals, pat, axes, write_positions(n))

    def _note(self, members: list[Node], out: Tracer) -> None:
        first = members[0]
        what = first.kind if first.kind != "eqn" else first.eqn.prim.name
        count = sum(m.members for m in members)
        if count > 1:
            made = self.b.eqns[-1] if self.b.eqns else None
            self.notes.append({"kind": "batched", "src": first.src, "what": what,
                               "count": count, "became": _describe(made), "shape": out.shape})


def _uniform(n: Node) -> bool:
    ops = n.operands
    return len(ops) >= 3 and all(a.aval == ops[0].aval for a in ops)


def _merge_axis(x: Any, axis: int) -> Any:
    """(n, k, *s) -> (n, *s with k pieces joined along `axis`)."""
    s = x.shape[2:]
    perm = (0,) + tuple(range(2, 2 + axis)) + (1,) + tuple(range(2 + axis, 2 + len(s)))
    x = P.transpose(x, perm=perm) if perm != tuple(range(len(perm))) else x
    return P.reshape(x, shape=(x.shape[0],) + s[:axis] + (x.shape[1 + axis] * s[axis],)
                     + s[axis + 1:])


def _move_axis1(x: Any, axis: int) -> Any:
    """(n, k, *s) -> (n, *s[:axis], k, *s[axis:]): k pieces stacked along `axis`."""
    perm = (0,) + tuple(range(2, 2 + axis)) + (1,) + tuple(range(2 + axis, x.ndim))
    return P.transpose(x, perm=perm) if perm != tuple(range(x.ndim)) else x


def _describe(e: Eqn | None) -> str:
    if e is None:
        return "?"
    ps = ", ".join(f"{k}={v}" for k, v in e.params.items() if k != "idx")
    return f"{e.prim.name}" + (f"[{ps}]" if ps else "") + f" -> {e.out.aval}"


def _depths(g: Graph, nodes: list[Node]) -> list[Node]:
    """Nodes in a topological order (by their last equation), each with its depth."""
    pos = {e.out: i for i, e in enumerate(g.eqns)}
    nodes = sorted(nodes, key=lambda n: pos[n.out])
    depth: dict[Var, int] = {}
    get = depth.get
    for n in nodes:
        d = 0
        for a in n.operands:
            da = get(a, 0)  # constants and graph inputs are at depth 0
            d = max(d, da)
        n.depth = depth[n.out] = d + 1
    return nodes


def _sequential_notes(nodes: list[Node], groups: list[list[Node]]) -> list[dict]:
    singles: dict[tuple, list[Node]] = defaultdict(list)
    for grp in groups:
        if len(grp) == 1 and grp[0].kind == "eqn":
            n = grp[0]
            singles[(n.src, n.eqn.prim.name, n.eqn.out.aval)].append(n)
    out = []
    for (src, name, _), ns in singles.items():
        if len(ns) > 1 and src is not None:
            out.append({"kind": "sequential", "src": src, "what": name, "count": len(ns),
                        "reason": f"{len(ns)} `{name}` operations at {src} each depend on the "
                                  "previous one (a recurrence), so they run one at a time"})
    return out


def batch(g: Graph) -> Graph:
    """Merge isomorphic, independent equations into batched ones (see module doc)."""
    g = forward_reads(g)
    nodes = _depths(g, build_nodes(g))
    st = _Batcher(g)
    levels: dict[int, list[Node]] = defaultdict(list)
    for n in nodes:
        levels[n.depth].append(n)
    all_groups = []
    for d in sorted(levels):
        groups: dict[tuple, list[Node]] = {}
        for n in levels[d]:
            groups.setdefault(node_key(n, st.group_of), []).append(n)
        for members in groups.values():
            st.emit(members)
            all_groups.append(members)
    st.b.src = None
    outs = [st.ref(a).atom for a in g.outputs]
    notes = tuple(st.notes) + tuple(_sequential_notes(nodes, all_groups))
    return dce(cse(st.b.build(outs, g.notes + notes)))
