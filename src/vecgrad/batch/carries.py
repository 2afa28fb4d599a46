"""Loops with several carries, reduced to loops (and scans) of fewer.

A rolled step often carries more than one value: a running mean and its squared error, a
velocity and a position, a running maximum and the sum rescaled by it. The scan recognition
in `loops` takes one carry at a time; two exact rewrites bring a step to that form.

- **A derived carry is recomputed, not carried.** When carry k's new value is a function of
  the other carries' new values and the step's inputs only (`diff = x[t + 1] - mu'`, where the
  cut between iterations fell inside one), then from the second step on, c_k(t) =
  F_k(c_j(t), xs(t - 1)): the first step runs on its own (peeled), and the loop over the other
  steps computes c_k from the carries it keeps and the previous step's inputs.
- **Fission by carry groups.** Carries are grouped by the strongly connected components of
  "the new value of i reads the old value of j", in a topological order. The step splits into
  one loop per group; a later group reads the earlier groups' values stacked over the steps,
  as per-step inputs. A group that is an affine carry (in the values of earlier groups) then
  becomes a scan: `m = max(m, x); s = s * exp(m_old - m) + exp(x - m)` is a cumulative
  maximum followed by an affine scan, `v = b * v + g; p = p - lr * v` two of them.

Both apply only where they leave something a scan computes (`ready`): neither splits a
nonlinear recurrence into several sequential loops. Loops that run backwards (the gradient's)
are left alone by the peeling, which needs the first step in run order.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Aval, Eqn, Graph, Params, Var, dce
from ..tracing import Tracer
from .affine import full_slices as _full

# (body, n_carry, n_xs) -> what emitting it gives: "scan" (with sums over the steps),
# "sums" only, or "" (a loop)
Ready = Callable[[Graph, int, int], str]


# ------------------------------------------------------------------ analysis

def _carry_deps(body: Graph, nc: int, cut: set[Atom] = frozenset()) -> dict[Var, frozenset]:
    """For each value of the step, the carries (indices) whose old values it reads; the
    values in `cut` count as reading none (they are leaves)."""
    dep: dict[Var, frozenset] = {c: frozenset((i,)) for i, c in enumerate(body.inputs[:nc])}
    empty: frozenset = frozenset()
    for e in body.eqns:
        s = empty
        for a in e.inputs:
            if isinstance(a, Var) and a not in cut:
                s = s | dep.get(a, empty)
        dep[e.out] = s
    return dep


def _derived(body: Graph, nc: int) -> int | None:
    """A carry whose new value reads no old carry once the other carries' new values are
    leaves (and that is not the old value of a carry: a lag is not derived)."""
    outs = body.outputs[:nc]
    carries = set(body.inputs[:nc])
    for k in range(nc):
        o = outs[k]
        if not isinstance(o, Var) or o in carries or o.aval != body.inputs[k].aval:
            continue
        cut = {outs[j] for j in range(nc) if j != k}
        if o in cut or not _carry_deps(body, nc, cut).get(o, frozenset()):
            return k
    return None


def _groups(body: Graph, nc: int, live: list[int]) -> list[list[int]]:
    """The live carries grouped by strongly connected components of the dependence of new
    values on old ones, in a topological order (what a group reads comes first); carries
    that are not live (accumulators) form one last group."""
    dep = _carry_deps(body, nc)
    outs = body.outputs[:nc]
    reads = {i: {j for j in dep.get(outs[i], ()) if j in live} if isinstance(outs[i], Var)
             else set() for i in live}
    reach = {i: set(reads[i]) for i in live}  # (a handful of carries: a closure is cheap)
    for _ in live:
        for i in live:
            for j in list(reach[i]):
                reach[i] |= reach[j]
    groups: list[list[int]] = []
    placed: set[int] = set()
    while len(placed) < len(live):
        for i in live:
            if i in placed:
                continue
            scc = [j for j in live if j == i or (j in reach[i] and i in reach[j])]
            if all(d in placed or d in scc for j in scc for d in reach[j]):
                groups.append(scc)
                placed.update(scc)
                break
        else:  # (unreachable: the condensation of a graph is acyclic)
            return [list(live)]
    rest = [i for i in range(nc) if i not in live]
    return groups + ([rest] if rest else [])


# ------------------------------------------------------------------ derived carries

def _eliminate(body: Graph, nc: int, nx: int, k: int) -> tuple[Graph, list[int]]:
    """The step without carry k, which it computes from the other carries and the previous
    step's inputs (new per-step inputs, after the original ones). Returns the step (its
    last output is carry k's new value, for the final carry) and the positions among the
    original xs of the previous-step inputs it added."""
    ins, outs = body.inputs, body.outputs
    xs = ins[nc:nc + nx]
    leaves = {outs[j]: ins[j] for j in range(nc) if j != k}
    defs = {e.out: e for e in body.eqns}
    seen: set[Var] = set()
    todo = [outs[k]]
    while todo:  # the values carry k's new value is computed from, back to the leaves
        a = todo.pop()
        if isinstance(a, Var) and a not in seen and a not in leaves:
            seen.add(a)
            todo += defs[a].inputs if a in defs else ()
    need = [e for e in body.eqns if e.out in seen]
    used_xs = [i for i, x in enumerate(xs) if x in seen]
    prev = {xs[i]: Var(xs[i].aval) for i in used_xs}
    env: dict[Atom, Atom] = {**leaves, **prev}
    eqns: list[Eqn] = []
    for e in need:
        out = Var(e.out.aval)
        eqns.append(Eqn(e.prim, tuple(env.get(a, a) for a in e.inputs), e.params, out, e.src))
        env[e.out] = out
    sub = {ins[k]: env.get(outs[k], outs[k])}
    eqns += [Eqn(e.prim, tuple(sub.get(a, a) for a in e.inputs), e.params, e.out, e.src)
             for e in body.eqns]
    keep = [j for j in range(nc) if j != k]
    new_ins = tuple(ins[j] for j in keep) + tuple(xs) + tuple(prev.values()) + ins[nc + nx:]
    new_outs = tuple(sub.get(outs[j], outs[j]) for j in keep) + \
        tuple(sub.get(o, o) for o in outs[nc:]) + (outs[k],)
    return Graph(new_ins, tuple(eqns), new_outs), used_xs


def _peel(body: Graph, T: int, nc: int, nx: int, operands: list[Any], reverse: bool
          ) -> list[Any]:
    """The first step run (unbatched) on the operands: its outputs, as tracers. (T is the
    loop's: a loop with no per-step input has only invariants after its carries.)"""
    b = operands[0]._b
    first = T - 1 if reverse else 0
    env: dict[Atom, Atom] = {}
    for i, (v, x) in enumerate(zip(body.inputs, operands)):
        env[v] = P.getitem(x, idx=(first,) + _full(x.shape[1:])).atom if nc <= i < nc + nx \
            else x.atom
    for e in body.eqns:
        env[e.out] = b.emit(e.prim, [env.get(a, a) if isinstance(a, Var) else a
                                     for a in e.inputs], dict(e.params))
    return [Tracer(b, env[o] if isinstance(o, Var) else o) for o in body.outputs]


def _rows(x: Any, lo: int, hi: int) -> Any:
    return P.getitem(x, idx=(P.Sl(lo, hi, 1),) + _full(x.shape[1:]))


def _emit_eliminated(body: Graph, T: int, nc: int, nx: int, k: int, new: Graph,
                     used_xs: list[int], operands: list[Any], emit: Any) -> Any:
    first = _peel(body, T, nc, nx, operands, False)
    keep = [j for j in range(nc) if j != k]
    xs = operands[nc:nc + nx]
    ops = [first[j] for j in keep] + [_rows(x, 1, T) for x in xs] + \
        [_rows(xs[i], 0, T - 1) for i in used_xs] + list(operands[nc + nx:])
    made = emit(new, T - 1, nc - 1, nx + len(used_xs), ops)
    final = list(made.final)
    final.insert(k, P.getitem(made.ys[-1], idx=(T - 2,) + _full(made.ys[-1].shape[1:])))
    ys = [P.concatenate(P.reshape(y0, shape=(1,) + y0.shape), y, axis=0)
          for y0, y in zip(first[nc:], made.ys[:-1])]
    return type(made)(final, ys, f"first step peeled (a carry recomputed); {made.became}")


# ------------------------------------------------------------------ fission

class _Sub:
    """One group's step: `body` with inputs carries + xs (original ones, then imports from
    earlier groups) + invariants; outputs new carries + (original ys it computes) +
    (exports)."""

    def __init__(self, carries: list[int]):
        self.carries = carries
        self.xs: list[int] = []  # positions of the original xs it reads
        self.imports: list[Var] = []
        self.invs: list[int] = []  # positions (in body.inputs) of the invariants it reads
        self.ys: list[int] = []  # original ys (positions among them) it computes
        self.exports: list[Var] = []
        self.body: Graph | None = None


def _split(body: Graph, nc: int, nx: int, groups: list[list[int]]) -> list[_Sub]:
    ins, outs = body.inputs, body.outputs
    gid = {i: g for g, cs in enumerate(groups) for i in cs}
    dt = body.outputs[0].aval.dtype
    owner: dict[Var, int] = {ins[i]: gid[i] for i in range(nc)}
    defs = {e.out: e for e in body.eqns}
    order = {id(e): i for i, e in enumerate(body.eqns)}
    for e in body.eqns:
        owner[e.out] = max((owner.get(a, 0) for a in e.inputs if isinstance(a, Var)),
                           default=0)
    subs = [_Sub(cs) for cs in groups]
    made: list[list[Eqn]] = [[] for _ in groups]
    inside: list[set[Var]] = [set() for _ in groups]
    for e in body.eqns:
        made[owner[e.out]].append(e)
        inside[owner[e.out]].add(e.out)
    for i in range(nc):
        inside[gid[i]].add(ins[i])
    for q, o in enumerate(outs[nc:]):
        subs[owner.get(o, 0) if isinstance(o, Var) else 0].ys.append(q)

    xset = {v: i for i, v in enumerate(ins[nc:nc + nx])}
    iset = {v: i for i, v in enumerate(ins[nc + nx:], nc + nx)}
    for g, s in enumerate(subs):
        need = _reader(g, s, subs, inside[g], made[g], owner, defs, xset, iset, dt)
        for a in [outs[i] for i in s.carries] + [outs[nc + q] for q in s.ys]:
            need(a)
        j = 0
        while j < len(made[g]):
            for a in made[g][j].inputs:
                need(a)
            j += 1
        made[g].sort(key=lambda e: order[id(e)])
    for g, s in enumerate(subs):
        new_ins = tuple(ins[i] for i in s.carries) + tuple(ins[nc + i] for i in s.xs) + \
            tuple(s.imports) + tuple(ins[i] for i in s.invs)
        # (an input var read as an output: an import, or a value it holds already)
        s.body = Graph(new_ins, _dedup(made[g]), tuple(outs[i] for i in s.carries) +
                       tuple(outs[nc + q] for q in s.ys) + tuple(s.exports))
    return subs


def _reader(g: int, s: _Sub, subs: list[_Sub], inside: set[Var], made: list[Eqn],
            owner: dict[Var, int], defs: dict[Var, Eqn], xset: dict, iset: dict,
            dt: Any) -> Callable[[Atom], None]:
    """What group g does with a value it reads and does not compute: an original input is
    passed in; a value of an earlier group is exported there and imported here when it is a
    float, and computed again here otherwise (a comparison's mask: a loop packs outputs of
    one dtype)."""
    def need(a: Atom) -> None:
        if not isinstance(a, Var) or a in inside:
            return
        inside.add(a)
        if a in xset:
            s.xs.append(xset[a])
        elif a in iset:
            s.invs.append(iset[a])
        elif a.aval.dtype != dt and a in defs:
            made.append(defs[a])
        else:
            if a not in subs[owner[a]].exports:
                subs[owner[a]].exports.append(a)
            s.imports.append(a)
    return need


def _dedup(eqns: list[Eqn]) -> tuple[Eqn, ...]:
    seen: set[Var] = set()
    out = []
    for e in eqns:
        if e.out not in seen:
            seen.add(e.out)
            out.append(e)
    return tuple(out)


def _emit_fission(body: Graph, T: int, nc: int, nx: int, subs: list[_Sub], operands: list[Any],
                  reverse: bool, emit: Any) -> Any:
    stacked: dict[Var, Any] = {}
    final: dict[int, Any] = {}
    ys: dict[int, Any] = {}
    text = []
    made = None
    for s in subs:
        ops = [operands[i] for i in s.carries] + [operands[nc + i] for i in s.xs] + \
            [stacked[a] for a in s.imports] + [operands[i] for i in s.invs]
        made = emit(s.body, T, len(s.carries), len(s.xs) + len(s.imports), ops,
                    reverse=reverse)
        final.update(zip(s.carries, made.final))
        ys.update(zip(s.ys, made.ys[:len(s.ys)]))
        stacked.update(zip(s.exports, made.ys[len(s.ys):]))
        text.append(made.became)
    return type(made)([final[i] for i in range(nc)], [ys[q] for q in range(len(ys))],
                      "; then ".join(text))


# ------------------------------------------------------------------ stacked carries

def unstack(body: Graph, nc: int, nx: int, rows_of: int | None = None
            ) -> tuple[Graph, list[int]] | None:
    """The step with each carry whose new value is a `stack` of rows (batching merged the
    isomorphic updates of several values into one) carried as its rows, and the reads of
    stacked values split by row (`narrow_reads`); with the number of rows of each original
    carry (1: kept whole). With `rows_of`, also a carry of at most that many rows whose new
    value is no stack (batching merged the updates of a running product and of a sum it
    scales into one product by a stacked operand): its new value read row by row, the
    reads narrowed. None when no carry is such a stack."""
    defs = {e.out: e for e in body.eqns}
    rows = []
    for k in range(nc):
        d = defs.get(body.outputs[k])
        c = body.inputs[k].aval
        ok = d is not None and d.prim is P.stack and d.params["axis"] == 0 and d.out.aval == c
        rows.append(len(d.inputs) if ok else c.shape[0] if rows_of is not None and
                    c.ndim > 1 and 2 <= c.shape[0] <= rows_of and c.dtype.kind == "f" else 1)
    if all(r == 1 for r in rows):
        return None
    ins: list[Var] = []
    outs: list[Atom] = []
    eqns: list[Eqn] = []
    tail: list[Eqn] = []  # (the rows of new values that are no stack: read, then narrowed)
    for k in range(nc):
        c = body.inputs[k]
        if rows[k] == 1:
            ins.append(c)
            outs.append(body.outputs[k])
            continue
        row = Aval(c.aval.shape[1:], c.aval.dtype)
        parts = [Var(row) for _ in range(rows[k])]
        ins += parts
        eqns.append(Eqn(P.stack, tuple(parts), Params(axis=0), c, None))
        d = defs.get(body.outputs[k])
        if d is not None and d.prim is P.stack:
            outs += d.inputs
            continue
        for i in range(rows[k]):
            tail.append(Eqn(P.getitem, (body.outputs[k],), Params(idx=P.BasicIndex(
                (i,) + tuple(P.Sl(0, n, 1) for n in row.shape))), Var(row), None))
            outs.append(tail[-1].out)
    new = Graph(tuple(ins) + body.inputs[nc:], tuple(eqns) + body.eqns + tuple(tail),
                tuple(outs) + body.outputs[nc:])
    return narrow_reads(new, always=bool(tail)), rows


def narrow_reads(body: Graph, always: bool = False) -> Graph:
    """Inside a step, a value read only in parts is computed in those parts: a row of a
    stack is the stacked operand (of a `take` of constant rows, the row it takes), and a
    part of an elementwise result is the operation on its operands' parts (f(a, b)[r] =
    f(a[r], b[r])), when every reader of the result reads a part of it: together the parts
    cost what the whole did, and no per-step stack (a copy) is made. With `always`, also
    where the whole is read too (batching merged the updates of several carries with
    other work into one stacked operation: the carries' parts, computed on their own, may
    then be scans, and the whole is computed after the loop)."""
    defs = {e.out: e for e in body.eqns}
    readers: dict[Var, list[Eqn]] = {}
    for e in body.eqns:
        for a in e.inputs:
            if isinstance(a, Var):
                readers.setdefault(a, []).append(e)
    outs = {a for a in body.outputs if isinstance(a, Var)}

    def parts_only(u: Var) -> bool:
        return u not in outs and all(r.prim is P.getitem and _plain(r.params["idx"], u)
                                     for r in readers.get(u, ()))
    eqns: list[Eqn] = []
    env: dict[Var, Atom] = {}

    def read(u: Atom, idx: tuple, src: Any) -> Atom:
        if all(isinstance(k, P.Sl) and k == P.Sl(0, n, 1) for k, n in zip(idx, u.aval.shape)):
            return env.get(u, u) if isinstance(u, Var) else u
        d = defs.get(u) if isinstance(u, Var) else None
        if d is not None and d.prim is P.stack and d.params["axis"] == 0 and \
                isinstance(idx[0], int):
            return read(d.inputs[idx[0]], idx[1:], src)
        if d is not None and d.prim is P.take and d.params["axis"] == 0 and \
                isinstance(idx[0], int):
            ids = np.asarray(d.params["ids"].arr).reshape(-1)
            if ids.size == u.aval.shape[0]:
                j = int(ids[idx[0]])
                return read(d.inputs[0], (j + d.inputs[0].aval.shape[0] * (j < 0),) +
                            idx[1:], src)
        through = _through(d, idx) if d is not None else None
        if through is not None:  # (a read of a reshape or broadcast: of its operand)
            r = read(d.inputs[0], through, src)
            shape = P.index_shape(u.aval.shape, idx)
            return r if r.aval.shape == shape else \
                _emit(eqns, P.reshape, (r,), {"shape": shape}, src)
        if d is not None and d.prim.elementwise and len(d.inputs) <= 3 and (
                always or parts_only(u)):
            shape = d.out.aval.shape
            ins = tuple(read(a, _operand_index(a.aval.shape, shape, idx), src)
                        for a in d.inputs)
            return _emit(eqns, d.prim, ins, dict(d.params), src)
        return _emit(eqns, P.getitem, (env.get(u, u),), {"idx": P.BasicIndex(idx)}, src)
    for e in body.eqns:
        if e.prim is P.getitem and _plain(e.params["idx"], e.inputs[0]):
            env[e.out] = read(e.inputs[0], tuple(e.params["idx"]), e.src)
            continue
        ins = tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs)
        eqns.append(e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src))
    out = tuple(env.get(a, a) if isinstance(a, Var) else a for a in body.outputs)
    return dce(Graph(body.inputs, tuple(eqns), out))


def _through(d: Eqn, idx: tuple) -> tuple | None:
    """The index into d's operand that reads what idx reads of d's result, for d a
    reshape (idx: ints, then whole slices over a trailing block the reshape keeps whole)
    or a broadcast_to (ints on every axis it adds or widens); None otherwise."""
    x, out = d.inputs[0].aval.shape, d.out.aval.shape
    if d.prim is P.broadcast_to:
        lead = len(out) - len(x)
        if not all(isinstance(k, int) for k in idx[:lead]):
            return None
        new = []
        for k, n, m in zip(idx[lead:], x, out[lead:]):
            if n != m and not isinstance(k, int):
                return None
            new.append(0 if n != m else k)
        return tuple(new)
    if d.prim is not P.reshape:
        return None
    m = next((i for i, k in enumerate(idx) if not isinstance(k, int)), len(idx))
    if not m or any(k != P.Sl(0, n, 1) for k, n in zip(idx[m:], out[m:])):
        return None
    rows = math.prod(out[:m])
    lead = next((j for j in range(len(x) + 1) if math.prod(x[:j]) == rows), None)
    if lead is None or math.prod(x[lead:]) != math.prod(out[m:]):
        return None
    at = np.unravel_index(int(np.ravel_multi_index(idx[:m], out[:m])), x[:lead])
    return tuple(int(i) for i in at) + tuple(P.Sl(0, n, 1) for n in x[lead:])


def _plain(idx: Any, u: Atom) -> bool:
    """A basic index over every axis of u, of ints and slices."""
    return P.is_basic(idx) and len(idx) == u.aval.ndim and all(
        isinstance(k, (int, P.Sl)) for k in idx)


def _operand_index(shape: tuple[int, ...], out: tuple[int, ...], r: tuple) -> tuple:
    """r (an index over `out`) as it reads an operand of `shape` that broadcasts to out."""
    lead = len(out) - len(shape)
    return tuple(k if d == n else 0 if isinstance(k, int) else P.Sl(0, 1, 1)
                 for d, n, k in zip(shape, out[lead:], r[lead:]))


def _emit(eqns: list[Eqn], prim: P.Primitive, ins: tuple, params: dict, src: Any) -> Var:
    ps = Params.of(params) if params else Params()
    out = Var(prim.shape_rule(*[a.aval for a in ins], **params))
    eqns.append(Eqn(prim, ins, ps, out, src))
    return out


def emit_unstacked(body: Graph, length: int, nc: int, nx: int, new: Graph, rows: list[int],
                   operands: list[Any], emit: Any, reverse: bool) -> Any:
    """The loop over the unstacked step `new` (see `unstack`), its final carries stacked
    back."""
    ops: list[Any] = []
    whole = []  # (carries kept as they are)
    for k in range(nc):
        x = operands[k]
        part = new.inputs[len(ops)].aval.shape  # (a row, or an element: see scalarize)
        whole.append(rows[k] == 1 and part == body.inputs[k].aval.shape)
        if whole[k]:
            ops.append(x)
            continue
        x = P.reshape(P.broadcast_to(x, shape=body.inputs[k].aval.shape),
                      shape=(rows[k],) + part)
        ops += [P.getitem(x, idx=(i,) + _full(part)) for i in range(rows[k])]
    made = emit(new, length, sum(rows), nx, ops + list(operands[nc:]), reverse=reverse)
    final, j = [], 0
    for k in range(nc):
        final.append(made.final[j] if whole[k] else P.reshape(P.stack(
            *made.final[j:j + rows[k]], axis=0), shape=body.inputs[k].aval.shape))
        j += rows[k]
    return type(made)(final, made.ys, f"a stacked carry as {sum(rows)} carries; "
                      f"{made.became}")


# ------------------------------------------------------------------ the entry point

def _how(body: Graph, nc: int, nx: int, live: list[int], ready: Ready, reverse: bool,
         depth: int = 0) -> tuple | None:
    """How to bring a step of several live carries to scans: ("derived", k, step, xs) or
    ("split", subs), or None."""
    if len(live) < 2 or depth > 8:
        return None
    k = None if reverse else _derived(body, nc)
    if k is not None:
        new, used = _eliminate(body, nc, nx, k)
        if (ready(new, nc - 1, nx + len(used)) or _how(
                new, nc - 1, nx + len(used), [j - (j > k) for j in live if j != k], ready,
                reverse, depth + 1) is not None):
            return ("derived", k, new, used)
    groups = _groups(body, nc, live)
    if sum(1 for g in groups if g[0] in live) < 2:
        return None
    subs = _split(body, nc, nx, groups)
    # a group is a scan, sums over the steps only, or a loop; without a scan nothing is
    # gained (a loop's accumulators stay in it: see loopplan.matrix_product)
    ok = [ready(s.body, len(s.carries), len(s.xs) + len(s.imports)) == "scan" or
          _how(s.body, len(s.carries), len(s.xs) + len(s.imports), list(range(len(
              s.carries))), ready, reverse, depth + 1) is not None for s in subs]
    if not any(ok):
        return None
    merged: list[list] = []  # adjacent groups that are no scans run as one loop
    for g, f in zip(groups, ok):
        if merged and not f and not merged[-1][1]:
            merged[-1][0].extend(g)
        else:
            merged.append([list(g), f])
    if len(merged) < 2:
        return None
    return ("split", _split(body, nc, nx, [sorted(g) for g, _ in merged])
            if len(merged) < len(groups) else subs)


def splits(body: Graph, nc: int, nx: int, live: list[int], ready: Ready, reverse: bool) -> bool:
    """Whether `several_carries` rewrites the loop `body` describes."""
    return _how(body, nc, nx, live, ready, reverse) is not None


def several_carries(body: Graph, length: int, nc: int, nx: int, live: list[int],
                    operands: list[Any], ready: Ready, emit: Any, reverse: bool) -> Any:
    """The loop `body` describes, emitted as fewer-carry loops and scans (the module doc),
    or None when neither rewrite leaves a scan. `emit` emits a loop (loops.emit_loop)."""
    if length < 2:
        return None
    how = _how(body, nc, nx, live, ready, reverse)
    if how is None:
        return None
    if how[0] == "derived":
        _, k, new, used = how
        return _emit_eliminated(body, length, nc, nx, k, new, used, operands, emit)
    return _emit_fission(body, length, nc, nx, how[1], operands, reverse, emit)


__all__ = ["emit_unstacked", "narrow_reads", "several_carries", "splits", "unstack"]
