"""Reassociating chains of contractions (after AD, where the gradient's chains appear).

With z = A @ B (n x m, large) used only by contractions such as C^T @ z and sum(z, 0),
contracting (C^T @ A) @ B instead never forms z: the gradient of a layer whose input has few
features. A pairwise step that some other contraction of the graph already computes costs
nothing (CSE merges the two): the loss sum(wt * einsum(alpha, H)) then reuses the backward's
einsum(wt, H) instead of streaming H twice (seeds/001). Einsums of three to five operands
are then split into pairs the same way (`split_wide`): AD's n einsums of n operands share
their pairs once CSE merges them.
"""
from __future__ import annotations

import string
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Eqn, Graph, Var, dce
from ..ir import uses as count_uses
from ..primitives.linalg import make_spec, parse_spec
from .contract import _as_spec, inline_subscripts
from .cse import cse
from .engine import Ctx


class Known:
    """The graph's two-operand contractions by `_pair_key` (each key's equations in graph
    order), seen without the equations in `skip` (the chain being replaced) and, given
    `ready`, those whose operands it does not hold (not computed yet). The table is
    built once per sweep and shared: built again for each candidate chain, it scanned the
    whole graph once per contraction (quadratic in the number of contractions)."""

    def __init__(self, table: dict[tuple, list[Eqn]], skip: frozenset[Var] = frozenset(),
                 ready: set | None = None):
        self.table, self.skip, self.ready = table, skip, ready

    def without(self, skip: set[Var]) -> Known:
        return Known(self.table, frozenset(skip))

    def get(self, key: tuple) -> Eqn | None:
        """The first contraction with this key, outside `skip`."""
        for e in self.table.get(key, ()):
            if e.out not in self.skip and (self.ready is None or all(
                    a in self.ready for a in e.inputs if isinstance(a, Var))):
                return e
        return None

    def __contains__(self, key: tuple) -> bool:
        return self.get(key) is not None

    def __bool__(self) -> bool:
        return bool(self.table)


def _pair_key(x: Atom, sx: str, y: Atom, sy: str, res: str) -> tuple:
    """A contraction of two operands, its letters renamed in order of appearance and its
    output order ignored (an intermediate may come in any order); operands in id order."""
    if id(y) < id(x):
        x, sx, y, sy = y, sy, x, sx
    ren = {c: string.ascii_letters[i] for i, c in enumerate(dict.fromkeys(sx + sy))}
    return (id(x), id(y), "".join(ren[c] for c in sx), "".join(ren[c] for c in sy),
            "".join(sorted(ren[c] for c in res)))


def _known(g: Graph) -> Known:
    table: dict[tuple, list[Eqn]] = {}
    for e in g.eqns:
        spec = _as_spec(e) if e.prim is P.einsum and len(e.inputs) == 2 else None
        if spec is not None:
            (sa, sb), out = parse_spec(spec)
            table.setdefault(_pair_key(e.inputs[0], sa, e.inputs[1], sb, out), []).append(e)
    return Known(table)


def _cost(subs: list[str], out: str, dims: dict[str, int], ops: list | None = None,
          known: Known | None = None, big_first: bool = False) -> tuple[float, list]:
    """Cheapest pairwise contraction order (exhaustive for the few operands seen here):
    (multiply-adds, [(i, j, result letters), ...]). `ops` are the operands (None for
    intermediates); a step that `known` already computes is free. `big_first`: a step's
    result letters in the order of its larger operand's (its layout, not a transposed one)."""
    if len(subs) == 1:
        return float(np.prod([dims[c] for c in subs[0]])), []
    ops = ops if ops is not None else [None] * len(subs)
    best: tuple[float, list] = (float("inf"), [])
    for i in range(len(subs)):
        for j in range(i + 1, len(subs)):
            rest = [s for k, s in enumerate(subs) if k not in (i, j)]
            keep = set(out).union(*rest) if rest else set(out)
            a, b = sorted((subs[i], subs[j]), key=lambda t: -np.prod([dims[c] for c in t])) \
                if big_first else (subs[i], subs[j])
            res = "".join(c for c in dict.fromkeys(a + b) if c in keep)
            step = float(np.prod([dims[c] for c in set(subs[i] + subs[j])]))
            if known and ops[i] is not None and ops[j] is not None and \
                    _pair_key(ops[i], subs[i], ops[j], subs[j], res) in known:
                step = 0.0
            rest_ops = [o for k, o in enumerate(ops) if k not in (i, j)] + [None]
            sub_cost, order = _cost(rest + [res], out, dims, rest_ops, known, big_first)
            if step + sub_cost < best[0]:
                best = (step + sub_cost, [(i, j, res)] + order)
    return best


def _merge(consumer: Eqn, k: int, inner: Eqn) -> tuple[list, list[str], str]:
    """Substitute inner's einsum for operand k of consumer: operands, subscripts, output."""
    c_ins, c_out = parse_spec(_as_spec(consumer))
    subs = inline_subscripts(c_ins, c_out, k, *parse_spec(_as_spec(inner)))
    ops = list(consumer.inputs[:k]) + list(inner.inputs) + list(consumer.inputs[k + 1:])
    return ops, subs, c_out


def reassociate(g: Graph, rounds: int = 4) -> Graph:
    """Reassociate chains of contractions to a fixpoint (see `_reassociate_once`), then merge the
    reused contractions with CSE."""
    g0 = g
    for _ in range(rounds):
        new = _reassociate_once(g)
        if new is g:
            break
        g = new
    g = split_wide(g)
    return g if g is g0 else cse(g)


WIDE_MAX = 5  # operands: the exhaustive order search (_cost) grows factorially past this


def split_wide(g: Graph) -> Graph:
    """Each einsum of 3 to WIDE_MAX operands as pairwise contractions, in the cheapest order
    given the pairwise steps the graph computes before it (free: CSE merges them). AD turns
    one einsum of n operands into n einsums that share most of their pairs (the weighted
    Gram X^T diag(w) X: w * X four times): split, each pair is computed once."""
    wide = {e.out for e in g.eqns if e.prim is P.einsum and
            3 <= len(e.inputs) <= WIDE_MAX and _as_spec(e)}
    if not wide:
        return g
    table = _known(g).table
    defined = {a for a in g.inputs if isinstance(a, Var)}
    known = Known(table, ready=defined)  # (a pair computed later in the graph is not free)
    ctx = Ctx({}, count_uses(g))
    env: dict[Var, Atom] = {}
    for e in g.eqns:
        ins = tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs)
        if e.out in wide:
            n = len(ctx.eqns)
            ins_s, out = parse_spec(e.params["spec"])
            r = _emit_order(ctx, list(ins), ins_s, out, e, known, env)
            for new in ctx.eqns[n:]:  # (later wide einsums may share these pairs)
                if new.prim is P.einsum and len(new.inputs) == 2:
                    (sa, sb), res = parse_spec(new.params["spec"])
                    table.setdefault(_pair_key(*new.inputs[:1], sa, new.inputs[1], sb, res),
                                     []).append(new)
                    defined.add(new.out)
        else:
            r = ctx.add(Eqn(e.prim, ins, e.params, e.out, e.src))
        if r is not e.out:
            env[e.out] = r
        defined.add(e.out)
    outs = tuple(env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    return dce(g.replace(eqns=tuple(ctx.eqns), outputs=outs))


def _spec_cost(e: Eqn) -> float:
    ins, out = parse_spec(_as_spec(e))
    dims = {ch: d for a, s in zip(e.inputs, ins) for ch, d in zip(s, a.aval.shape)}
    return _cost(ins, out, dims)[0]


def _reassociate_once(g: Graph) -> Graph:
    """Merge each contraction z whose readers are all contractions into its readers, where
    the best order of the merged chains costs less than half of z and its readers now."""
    n_uses = count_uses(g)
    consumers: dict[Var, list[Eqn]] = {}
    for e in g.eqns:
        for a in e.inputs:
            if isinstance(a, Var):
                consumers.setdefault(a, []).append(e)
    outputs = {a for a in g.outputs if isinstance(a, Var)}
    replace: dict[Var, tuple] = {}  # consumer out -> (ops, subs, out)
    table: Known | None = None
    for z in (e for e in g.eqns if e.prim is P.einsum and _as_spec(e) and e.out not in outputs):
        cs = consumers.get(z.out, [])
        if not cs or len(cs) != n_uses.get(z.out) or any(
                _as_spec(c) is None or c.out in replace or c.inputs.count(z.out) != 1
                for c in cs):
            continue
        table = _known(g) if table is None else table
        known = table.without({z.out} | {c.out for c in cs})  # not the chain being replaced
        plans = [_merge(c, c.inputs.index(z.out), z) for c in cs]
        now = _spec_cost(z) + sum(_spec_cost(c) for c in cs)
        fused = sum(_cost(subs, out, _dims(ops, subs), ops, known)[0]
                    for ops, subs, out in plans)
        if fused < 0.5 * now:
            for c, p in zip(cs, plans):
                replace[c.out] = (*p, known)
    if not replace:
        return g
    ctx = Ctx({}, n_uses)
    env: dict[Var, Var] = {}
    for e in g.eqns:
        ins = tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs)
        if e.out in replace:
            ops, subs, out, known = replace[e.out]
            ops = [env.get(a, a) if isinstance(a, Var) else a for a in ops]
            env[e.out] = _emit_order(ctx, ops, subs, out, e, known)
        else:
            new = ctx.add(Eqn(e.prim, ins, e.params, e.out, e.src))
            if new is not e.out:  # (an equal equation kept before: Ctx.add shares it)
                env[e.out] = new
    outs = tuple(env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    return dce(g.replace(eqns=tuple(ctx.eqns), outputs=outs))


def _dims(ops: list, subs: list[str]) -> dict[str, int]:
    return {ch: d for a, s in zip(ops, subs) for ch, d in zip(s, a.aval.shape)}


def _emit_order(ctx: Any, ops: list, subs: list[str], out: str, e: Eqn, known: Known,
                env: dict | None = None) -> Any:
    # (split_wide passes env, its remapped values, and orders result letters big first)
    _, order = _cost(subs, out, _dims(ops, subs), list(ops), known, env is not None)
    orig = list(ops)  # None marks an intermediate, as in _cost
    ops, subs = list(ops), list(subs)
    for i, j, res in order:
        last = len(ops) == 2
        hit = known.get(_pair_key(orig[i], subs[i], orig[j], subs[j], res)) \
            if orig[i] is not None and orig[j] is not None else None
        if hit is not None:
            # the same contraction as `hit`, emitted with its exact spec so that CSE merges
            # the two; its result letters, in hit's order, in our names
            h_ins = tuple(env.get(a, a) for a in hit.inputs) if env else hit.inputs
            r = ctx.emit(P.einsum, h_ins, dict(hit.params), e.src)
            res = _renamed_out(hit, ops[i], subs[i], ops[j], subs[j])
            if last and res != out:
                r = ctx.emit(P.einsum, (r,), {"spec": f"{res}->{out}"}, e.src)
        else:
            spec = make_spec([subs[i], subs[j]], out if last else res)
            r = ctx.emit(P.einsum, (ops[i], ops[j]), {"spec": spec}, e.src)
        ops = [o for k, o in enumerate(ops) if k not in (i, j)] + [r]
        orig = [o for k, o in enumerate(orig) if k not in (i, j)] + [None]
        subs = [s for k, s in enumerate(subs) if k not in (i, j)] + [out if last else res]
    if len(ops) == 1 and subs[0] != out:  # a single operand left (e.g. a lone reduction)
        return ctx.emit(P.einsum, (ops[0],), {"spec": subs[0] + "->" + out}, e.src)
    return ops[0]


def _renamed_out(hit: Eqn, x: Atom, sx: str, y: Atom, sy: str) -> str:
    """hit's output letters in our names, for our step contracting x (letters sx) with y."""
    (ha, hb), hout = parse_spec(hit.params["spec"])
    for (p, sp), (q, sq) in (((x, sx), (y, sy)), ((y, sy), (x, sx))):
        if hit.inputs[0] is p and hit.inputs[1] is q:
            ren: dict[str, str] = {}
            if all(ren.setdefault(a, b) == b for a, b in zip(ha + hb, sp + sq)):
                return "".join(ren[c] for c in hout)
    raise AssertionError("a known contraction that does not match its key")
