"""Dead loop outputs: a stacked output (y) of a loop that nothing reads leaves its step.

A loop returns one flat array (its final carry, then each stacked y: `primitives.loop`), and
its readers take slices of it. The VJP of a loop stacks, per step, every forward value its
backward step reads; once `loops` has hoisted the backward's carry-free work out of the
backward loop, or the backward step turns out not to read a value at all (a step linear in
its carry), some of those stacks are read by nobody, yet the forward loop still writes a row
of each per step. This pass drops them (and the work only they needed) from the step, and
moves each reader's slice to the output's new offset. A carry leaves too where its final
value is read by nobody and nothing kept depends on it.

A stacked y that is a basic slice of another stacked y of the same step (a backward step's
cotangent `ct` and `ct[1:]`, both read after the loop) is stacked once: its readers slice
the other's stack, and the step writes one row fewer per step.
"""
from __future__ import annotations

import math
from typing import Any

from .. import primitives as P
from ..ir import Eqn, Graph, Params, Var, dce


def prune_loop_outputs(g: Graph) -> Graph:
    """g with each loop's unread stacked outputs removed from its step (see module doc).
    Again while something changed: a backward loop that no longer reads a sliced operand
    leaves the forward loop's stack of it unread (a few rounds at most)."""
    for _ in range(4):
        if not any(e.prim is P.loop for e in g.eqns):
            return g
        new = _prune_once(g)
        if new is g:
            return g
        g = new
    return g


def _prune_once(g: Graph) -> Graph:
    readers: dict[Var, list[int]] = {}
    for i, e in enumerate(g.eqns):
        for a in e.inputs:
            if isinstance(a, Var):
                readers.setdefault(a, []).append(i)
    returned = {a for a in g.outputs if isinstance(a, Var)}
    eqns = list(g.eqns)
    changed = False
    for i, e in enumerate(g.eqns):
        if e.prim is not P.loop or e.out in returned:
            continue
        made = _pruned(e, [eqns[j] for j in readers.get(e.out, [])])
        if made is None:
            continue
        loop, moved = made
        eqns[i] = loop
        for j in readers.get(e.out, []):
            eqns[j] = moved[id(g.eqns[j])]
        changed = True
    if not changed:
        return g
    flat = [q for e in eqns for q in (e if isinstance(e, list) else [e])]
    return dce(g.replace(eqns=tuple(flat)))


def _span(r: Eqn) -> tuple[int, int] | None:
    """The flat positions [lo, hi) a reader of a loop's result reads (None: not a plain
    one-axis read)."""
    idx = r.params.get("idx") if r.prim is P.getitem else None
    if not idx or len(idx) != 1:
        return None
    k = idx[0]
    if isinstance(k, int):
        return k, k + 1
    if isinstance(k, P.Sl) and k.step > 0:
        return (k.start, k.stop) if len(k) else (k.start, k.start)
    return None


def _pruned(e: Eqn, readers: list[Eqn]) -> tuple[Eqn, dict[int, Any]] | None:
    """The loop without its unread ys, and each reader moved to the new offsets."""
    p = e.params
    body, nc = p["body"], p["n_carry"]
    lay = P.layout(body, p["length"], nc)
    ends = [o + math.prod(s) for o, s in lay]
    owner: dict[int, int] = {}  # reader -> the output it reads
    for r in readers:
        sp = _span(r)
        if sp is None:
            return None
        ks = [k for k, (o, _) in enumerate(lay) if o <= sp[0] and sp[1] <= ends[k]]
        if not ks:
            return None
        owner[id(r)] = ks[-1] if sp[0] == sp[1] else ks[0]
    used = set(owner.values())
    views = _views(body, nc, lay, ends, readers, owner)
    used -= set(views)
    used |= {i for i, _ in views.values()}
    keep = [k for k in range(len(body.outputs)) if k < nc or k in used]
    dead = _dead_carries(body, nc, used, keep)
    keep = [k for k in keep if k not in dead]
    step = dce(body.replace(outputs=tuple(body.outputs[k] for k in keep)))
    read = {a for q in step.eqns for a in q.inputs} | set(step.outputs)
    # (inputs the step no longer reads: dead carries, and slices or invariants that only
    # the dropped work read)
    gone = dead | {i for i in range(nc, len(body.inputs)) if body.inputs[i] not in read}
    if len(keep) == len(body.outputs) and not gone:
        return None
    nx = p["n_xs"] - sum(nc <= i < nc + p["n_xs"] for i in gone)
    step = step.replace(inputs=tuple(v for i, v in enumerate(body.inputs) if i not in gone))
    params = {**p, "body": step, "n_carry": nc - len(dead), "n_xs": nx}
    new_lay = P.layout(step, p["length"], nc - len(dead))
    shift = {k: new_lay[n][0] - lay[k][0] for n, k in enumerate(keep)}
    operands = tuple(a for i, a in enumerate(e.inputs) if i not in gone)
    out = Var(P.loop.shape_rule(*[a.aval for a in operands], **params))
    loop = Eqn(e.prim, operands, Params(params), out, e.src)
    moved: dict[int, Any] = {}
    for r in readers:
        if owner[id(r)] in views:
            i, idx = views[owner[id(r)]]
            moved[id(r)] = _slice_of_stack(r, out, new_lay[keep.index(i)], idx)
            continue
        d = shift[owner[id(r)]]
        k = r.params["idx"][0]
        k = k + d if isinstance(k, int) else P.Sl(k.start + d, k.stop + d, k.step)
        idx = type(r.params["idx"])((k,))
        moved[id(r)] = Eqn(r.prim, (out,), Params({**r.params, "idx": idx}), r.out, r.src)
    return loop, moved


def _dead_carries(body: Graph, nc: int, used: set[int], keep: list[int]) -> set[int]:
    """The carries whose final value nothing reads and that nothing kept depends on (an
    accumulator of the cotangent of an input that is not differentiated: an integrator's
    dt): they leave the step with the work only they need."""
    dead = {i for i in range(nc) if i not in used}
    while dead:
        live = [body.outputs[k] for k in keep if k not in dead]
        need = {a for a in live if isinstance(a, Var)}
        for q in reversed(body.eqns):
            if q.out in need:
                need.update(a for a in q.inputs if isinstance(a, Var))
        still = {i for i in dead if body.inputs[i] not in need}
        if still == dead:
            break
        dead = still
    return dead


def _views(body: Graph, nc: int, lay: list, ends: list[int], readers: list[Eqn],
           owner: dict[int, int]) -> dict[int, tuple[int, tuple]]:
    """The stacked ys that are a basic slice of another stacked y of the step, each read
    whole by its readers: y index -> (the other's index, the slice's index)."""
    defs = {e.out: e for e in body.eqns}
    first: dict[Var, int] = {}
    for k in range(nc, len(body.outputs)):
        first.setdefault(body.outputs[k], k)
    whole: dict[int, bool] = {}
    for r in readers:
        k = owner[id(r)]
        sp = _span(r)
        whole[k] = whole.get(k, True) and sp == (lay[k][0], ends[k])
    out = {}
    for k in range(nc, len(body.outputs)):
        d = defs.get(body.outputs[k])
        if d is None or d.prim is not P.getitem or not whole.get(k):
            continue
        i = first.get(d.inputs[0])
        idx = d.params["idx"]
        if i is None or i == k or not P.is_basic(idx) or any(x is None for x in idx):
            continue
        out[k] = (i, tuple(idx))
    # (a y that others are views of stays: no chains)
    return {k: v for k, v in out.items() if v[0] not in out}


def _slice_of_stack(r: Eqn, loop: Var, at: tuple[int, tuple[int, ...]], idx: tuple
                    ) -> list[Eqn]:
    """Equations giving `r.out` (a flat read of a dropped y) from the stack it is a slice of:
    the stack read whole, shaped, sliced per step, and flattened as r read it."""
    off, shape = at
    flat = Var(P.getitem.shape_rule(loop.aval, idx=P.BasicIndex(
        (P.Sl(off, off + math.prod(shape), 1),))))
    e1 = Eqn(P.getitem, (loop,), Params(idx=P.BasicIndex((P.Sl(off, off + math.prod(shape),
                                                                  1),))), flat, r.src)
    stack = Var(P.reshape.shape_rule(flat.aval, shape=shape))
    e2 = Eqn(P.reshape, (flat,), Params(shape=shape), stack, r.src)
    sub = P.BasicIndex((P.Sl(0, shape[0], 1),) + idx)
    part = Var(P.getitem.shape_rule(stack.aval, idx=sub))
    e3 = Eqn(P.getitem, (stack,), Params(idx=sub), part, r.src)
    e4 = Eqn(P.reshape, (part,), Params(shape=r.out.aval.shape), r.out, r.src)
    return [e1, e2, e3, e4]
