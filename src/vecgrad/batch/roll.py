"""Rolling: each recurrence found by `recur` becomes one loop (or scan) in place of its
unrolled iterations.

A region's step is the graph of one iteration: its carry is the members the next iteration
reads, its per-step inputs (xs) are the outside values that differ between iterations
(stacked into one array: a strided view when they are reads of one array at affine
positions), its invariants are those that do not. Outside reads of a member of iteration k
become reads of row k of that member's stacked values (or of the final carry), which the
batching pass then merges. The graph is re-emitted in a topological order of the equations
left and the regions, found by one depth-first search; a region that would need its own
result as an input (some path leaves it and comes back) is left unrolled.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Graph, Var, dce
from ..notes import Recurrence
from ..tracing import Builder, Tracer
from .affine import full_slices as _full
from .recur import MIN_TRIPS, Region, find_regions, step_inits


class _Cycle(Exception):
    def __init__(self, regions: set[int]):
        self.regions = regions


def roll(g: Graph, emit: Any, keep: Any = None, rounds: int = 6) -> tuple[Graph, list[dict]]:
    """Replace each rollable recurrence of g by what `emit(body, length, n_carry, n_xs,
    operands, src)` builds (it returns the final carry and the stacked ys, as tracers, and
    a description for explain). Returns the graph and one note per rolled region. `keep(g,
    regions)`, if given, chooses the regions rolled; `rounds` bounds find_regions' label
    refinement."""
    found = find_regions(g, rounds)
    users = _outside_uses(g, found) if found else set()
    regions = [r for r in found if _typed(g, r, users)]
    if keep is not None:
        regions = keep(g, regions)
    trims = 0
    while regions:
        try:
            order = _order(g, regions)
        except _Cycle as c:
            # A region whose first step's carried-in values are computed from that step
            # (an irregular first iteration the step numbering took half of) starts one
            # step later; a region still on a cycle after that is left unrolled.
            trims += 1
            regions = [r if i not in c.regions else _later(g, r) if trims <= 2 else None
                       for i, r in enumerate(regions)]
            regions = [r for r in regions if r is not None]
            continue
        return _emit(g, regions, order, emit)
    return g, []


def _later(g: Graph, r: Region) -> Region | None:
    """r without its first step, its initial values read from that step; None if too short."""
    if r.length - 1 < MIN_TRIPS:
        return None
    init = step_inits(g, r.steps[1], r.sig)
    return None if init is None else Region(r.steps[1:], r.sig, init)


def _typed(g: Graph, r: Region, users: set[Var]) -> bool:
    """A loop packs its outputs (carries, and members read outside the region) in one
    dtype and differentiates a float carry; a member only its own step reads (the
    comparison of Python's `max(m, x)`) may have any dtype."""
    carries = set(_carries(r))
    dts = {g.eqns[i].out.aval.dtype for j, i in enumerate(r.steps[0])
           if j in carries or any(g.eqns[st[j]].out in users for st in r.steps)}
    return len(dts) == 1 and next(iter(dts)).kind == "f"


def _carries(r: Region) -> list[int]:
    return sorted({c[1] for codes in r.sig for c in codes if c[0] == "p"})


def _order(g: Graph, regions: list[Region]) -> list[Any]:
    """A topological order of the equations outside regions and the regions (as ("R", i)),
    close to the original order; raises _Cycle naming the regions on a cycle."""
    pos = {e.out: i for i, e in enumerate(g.eqns)}
    member: dict[int, int] = {}
    for ri, r in enumerate(regions):
        for step in r.steps:
            for i in step:
                member[i] = ri

    def node(i: int) -> Any:
        ri = member.get(i)
        return i if ri is None else ("R", ri)

    def deps(n: Any) -> list[Any]:
        atoms = _region_inputs(g, regions[n[1]]) if isinstance(n, tuple) else g.eqns[n].inputs
        return [node(pos[a]) for a in atoms if isinstance(a, Var) and a in pos]
    state: dict[Any, int] = {}
    out: list[Any] = []
    for i in range(len(g.eqns)):
        root = node(i)
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(deps(root)))]
        while stack:
            n, it = stack[-1]
            d = next(it, None)
            if d is None:
                stack.pop()
                state[n] = 2
                out.append(n)
            elif d == n:  # a region reading its own result from outside its steps
                raise _Cycle({n[1]})
            elif d not in state:
                state[d] = 1
                stack.append((d, iter(deps(d))))
            elif state[d] == 1:
                raise _Cycle({m[1] for m, _ in stack if isinstance(m, tuple)} |
                             ({d[1]} if isinstance(d, tuple) else set()))
    return out


def _region_inputs(g: Graph, r: Region) -> list[Atom]:
    out = list(r.init.values())
    for step in r.steps:
        for j, i in enumerate(step):
            out += [a for a, c in zip(g.eqns[i].inputs, r.sig[j]) if c[0] == "x"]
    return out


def _emit(g: Graph, regions: list[Region], order: list[Any], emit: Any
          ) -> tuple[Graph, list[dict]]:
    users = _outside_uses(g, regions)
    b = Builder(g.inputs, hash_cons=False)
    env = _Env(b)
    notes = []
    with b:
        for n in order:
            if isinstance(n, tuple):
                notes.append(_emit_region(g, regions[n[1]], users, b, env, emit))
                continue
            e = g.eqns[n]
            if e.prim is P.stack and any(isinstance(a, Var) and a in env.rows for a in e.inputs):
                b.src = e.src
                env.atoms[e.out] = env.stack(e.inputs, e.params["axis"]).atom
                continue
            ins = tuple([env(a) for a in e.inputs])
            b.eqns.append(e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src))
    b.src = None
    return dce(b.build([env(a) for a in g.outputs], g.notes)), notes


class _Env:
    """What replaces a rolled member outside its region: the final carry, or row k of its
    stacked values (a read made on first use; a stack of consecutive rows is a slice)."""

    def __init__(self, b: Builder):
        self.b = b
        self.atoms: dict[Var, Atom] = {}
        self.rows: dict[Var, tuple[Tracer, int]] = {}
        self.with_init: dict[int, tuple[Atom, Tracer]] = {}  # stacked ys -> (init, rows)

    def __call__(self, a: Atom) -> Atom:
        if not isinstance(a, Var):
            return a
        hit = self.atoms.get(a)
        if hit is None and a in self.rows:
            y, k = self.rows[a]
            hit = self.atoms[a] = P.getitem(y, idx=(k,) + _full(y.shape[1:])).atom
        return a if hit is None else hit

    def stack(self, atoms: tuple[Atom, ...], axis: int) -> Tracer:
        """stack(atoms, axis), taking runs of consecutive rows of one stacked value whole."""
        parts: list[Tracer] = []

        def row(j: int) -> tuple[Tracer, int] | None:
            return self.rows.get(atoms[j]) if j < len(atoms) and isinstance(atoms[j], Var) \
                else None

        def run(i: int, y: Tracer, k: int) -> int:  # end of the run rows k, k+1, ... of y
            j = i
            while (r := row(j)) is not None and r[0] is y and r[1] == k + j - i:
                j += 1
            return j
        i = 0
        while i < len(atoms):
            r, nxt = row(i), row(i + 1)
            w = self.with_init.get(id(nxt[0])) if nxt is not None and nxt[1] == 0 else None
            if w is not None and self(atoms[i]) is w[0]:  # the initial value, then states
                j = run(i + 1, nxt[0], 0)
                y = w[1]
                parts.append(y if j - i == y.shape[0] else
                             P.getitem(y, idx=(P.Sl(0, j - i, 1),) + _full(y.shape[1:])))
                i = j
                continue
            if r is not None:
                j = run(i, r[0], r[1])
                y = r[0]
                if j - i == y.shape[0] and r[1] == 0:
                    parts.append(y)
                else:
                    parts.append(P.getitem(y, idx=(P.Sl(r[1], r[1] + j - i, 1),) +
                                           _full(y.shape[1:])))
            else:
                j = i + 1
                x = Tracer(self.b, self(atoms[i]))
                parts.append(P.reshape(x, shape=(1,) + x.shape))
            i = j
        out = parts[0] if len(parts) == 1 else P.concatenate(*parts, axis=0)
        if axis:
            out = P.transpose(out, perm=tuple(range(1, axis + 1)) + (0,) +
                              tuple(range(axis + 1, out.ndim)))
        return out


def _outside_uses(g: Graph, regions: list[Region]) -> set[Var]:
    """Members read by an equation outside their region, or returned."""
    member: dict[Var, int] = {}
    for ri, r in enumerate(regions):
        for step in r.steps:
            for i in step:
                member[g.eqns[i].out] = ri
    used = {a for a in g.outputs if isinstance(a, Var) and a in member}
    inside = {g.eqns[i].out: ri for ri, r in enumerate(regions) for st in r.steps for i in st}
    for e in g.eqns:
        mine = inside.get(e.out)
        for a in e.inputs:
            if isinstance(a, Var) and a in member and member[a] != mine:
                used.add(a)
    return used


def _same(atoms: list[Atom]) -> bool:
    a0 = atoms[0]
    if isinstance(a0, Const):
        return all(isinstance(a, Const) and (a is a0 or a.key() == a0.key()) for a in atoms)
    return all(a is a0 for a in atoms)


def _emit_region(g: Graph, r: Region, users: set[Var], b: Builder, env: _Env,
                 emit: Any) -> dict:
    T, nm = r.length, len(r.sig)
    carries = _carries(r)
    last = r.steps[-1]
    outs_of = [[g.eqns[i].out for i in step] for step in r.steps]
    ys = [j for j in range(nm)
          if any(outs_of[k][j] in users for k in range(T - 1)) or
          (outs_of[-1][j] in users and j not in carries)]
    # the step's inputs: carry, per-step values (distinct sequences), invariants
    c_in = {j: Var(g.eqns[last[j]].out.aval) for j in carries}
    xs_seqs: dict[tuple, Var] = {}
    invs: dict[Any, Var] = {}
    body_eqns: list[Eqn] = []
    body_out: dict[int, Var] = {}
    x_atoms: list[list[Atom]] = []
    inv_atoms: list[Atom] = []
    for j in step_order(r.sig):
        e0 = g.eqns[last[j]]
        ins: list[Atom] = []
        for p, code in enumerate(r.sig[j]):
            if code[0] == "g":
                ins.append(body_out[code[1]])
            elif code[0] == "p":
                ins.append(c_in[code[1]])
            else:
                seq = [env(a) for a in (g.eqns[step[j]].inputs[p] for step in r.steps)]
                if _same(seq):
                    a0 = seq[0]
                    if isinstance(a0, Const):
                        ins.append(a0)
                        continue
                    if a0 not in invs:
                        invs[a0] = Var(a0.aval)
                        inv_atoms.append(a0)
                    ins.append(invs[a0])
                else:
                    key = tuple(map(id, seq))
                    if key not in xs_seqs:
                        xs_seqs[key] = Var(seq[0].aval)
                        x_atoms.append(seq)
                    ins.append(xs_seqs[key])
        out = Var(e0.out.aval)
        body_eqns.append(Eqn(e0.prim, tuple(ins), e0.params, out, e0.src))
        body_out[j] = out
    body = Graph(tuple(c_in[j] for j in carries) + tuple(xs_seqs.values()) + tuple(invs.values()),
                 tuple(body_eqns), tuple(body_out[j] for j in carries + ys))
    src = _region_src(g, r)
    b.src = src
    init = [Tracer(b, env(a)) for a in (r.init[j] for j in carries)]
    xs = [stack_rows(b, seq) for seq in x_atoms]
    consts = [Tracer(b, a) for a in inv_atoms]
    made = emit(body, T, len(carries), len(xs), init + xs + consts, src)
    final, stacked, became = made.final, made.ys, made.became
    for k, whole in made.with_init.items():  # the initial value, then every state
        env.with_init[id(stacked[k])] = (init[carries.index(ys[k])].atom, whole)
    for k, step_outs in enumerate(outs_of):
        for j, v in enumerate(step_outs):
            if v not in users:
                continue
            if j in ys:
                env.rows[v] = (stacked[ys.index(j)], k)
            else:
                env.atoms[v] = final[carries.index(j)].atom
    return Recurrence(src, "", T, became,
                      "each step reads the previous step's result (a recurrence)",
                      tuple(sorted({e.src for e in body_eqns if e.src}, key=lambda s: s.line)))


def step_order(sig: tuple) -> list[int]:
    """The members of a step, each after the members of the same step it reads (("g", i)
    operands): a region that starts mid-iteration (`o[i] = tanh(o[i-1] + x[i])` run twice
    over the rows) lists a member before one it reads."""
    order: list[int] = []
    done, entered = [False] * len(sig), [False] * len(sig)
    for j0 in range(len(sig)):
        stack = [(j0, False)]
        while stack:
            j, ready = stack.pop()
            if ready:
                done[j] = True
                order.append(j)
                continue
            if entered[j]:
                continue
            entered[j] = True
            stack.append((j, True))
            stack += [(c[1], False) for c in sig[j] if c[0] == "g" and not done[c[1]]]
    return order


def _region_src(g: Graph, r: Region) -> Any:
    """The line the recurrence is reported at: where most of one step's work is written."""
    c = Counter(g.eqns[i].src for i in r.steps[-1] if g.eqns[i].src is not None)
    return c.most_common(1)[0][0] if c else None


# ------------------------------------------------------------------ stacking per-step inputs

def stack_rows(b: Builder, atoms: list[Atom], depth: int = 0) -> Tracer:
    """The values of `atoms` stacked along a new axis 0: a view when they are reads of one
    array at affine positions (through reshapes/transposes), else one stack."""
    T = len(atoms)
    if all(isinstance(a, Const) for a in atoms):
        return Tracer(b, Const(np.stack([a.value for a in atoms])))
    defs = _defs(b)
    es = [defs.get(a) if isinstance(a, Var) else None for a in atoms]
    e0 = es[0]
    if depth < 6 and e0 is not None and all(
            e is not None and e.prim is e0.prim and e.inputs[0].aval == e0.inputs[0].aval
            and len(e.inputs) == 1 for e in es):
        if e0.prim is P.getitem and all(e.inputs[0] is e0.inputs[0] for e in es):
            view = _affine_read(Tracer(b, e0.inputs[0]), [e.params["idx"] for e in es],
                                e0.out.aval.shape)
            if view is not None:
                return view
        elif e0.prim in (P.reshape, P.transpose) and all(e.params == e0.params for e in es):
            inner = stack_rows(b, [e.inputs[0] for e in es], depth + 1)
            return e0.prim.batch(T, (True,), inner, **e0.params)
    return P.stack(*[Tracer(b, a) for a in atoms], axis=0)


def _defs(b: Builder) -> dict[Var, Eqn]:
    d = getattr(b, "_defs", None)
    if d is None:
        d = b._defs = ({}, 0)  # type: ignore[attr-defined]
    table, seen = d
    for e in b.eqns[seen:]:
        table[e.out] = e
    b._defs = (table, len(b.eqns))  # type: ignore[attr-defined]
    return table


def _affine_read(base: Tracer, idxs: list[tuple], row: tuple[int, ...]) -> Tracer | None:
    """base[idx_k] for all k as one view (T, *row), when the idx_k differ in one component
    by a constant step: an int, a one-wide slice, or back-to-back windows."""
    i0 = idxs[0]
    if not P.is_basic(i0) or any(len(i) != len(i0) or not P.is_basic(i) for i in idxs):
        return None
    diff = [c for c in range(len(i0)) if any(i[c] != i0[c] for i in idxs)]
    if len(diff) != 1:
        return None
    c = diff[0]
    T = len(idxs)
    k0, k1 = i0[c], idxs[1][c]
    if isinstance(k0, int) and all(isinstance(i[c], int) for i in idxs):
        start, step, width = k0, k1 - k0, 0
    elif isinstance(k0, P.Sl) and all(isinstance(i[c], P.Sl) and len(i[c]) == len(k0) and
                                      i[c].step == k0.step for i in idxs):
        start, step, width = k0.start, k1.start - k0.start, len(k0)
        if width != 1 and not (k0.step == 1 and step == width):
            return None
    else:
        return None
    starts = [i[c] if isinstance(i[c], int) else i[c].start for i in idxs]
    if step == 0 or starts != [start + k * step for k in range(T)]:
        return None
    axis = sum(1 for k in i0[:c] if not isinstance(k, int))
    if width > 1:  # windows side by side: one slice, split into (T, width)
        sl = P.Sl(start, start + T * width, 1)
        v = P.getitem(base, idx=i0[:c] + (sl,) + i0[c + 1:])
        v = P.reshape(v, shape=v.shape[:axis] + (T, width) + v.shape[axis + 1:])
    else:
        stop = start + T * step
        sl = P.Sl(start, stop if stop >= 0 else -1, step)
        v = P.getitem(base, idx=i0[:c] + (sl,) + i0[c + 1:])
    if axis:
        perm = (axis,) + tuple(a for a in range(v.ndim) if a != axis)
        v = P.transpose(v, perm=perm)
    return P.reshape(v, shape=(T,) + row) if v.shape != (T,) + row else v
