"""Emitting a loop well: what a step computes is split by what it depends on.

- An accumulator (`acc' = acc + v`, acc read nowhere else) leaves the carry: its final value
  is `init + sum(v)` over the stacked v.
- pre: work that does not depend on the carry (U @ x[t], the step's share of a cotangent)
  runs before the loop, batched over the steps (through the primitives' batching rules);
  post: work that depends on the carry but does not feed it (a per-step loss, the
  cotangents of the inputs) runs after it, batched on the stacked values.
- core: what is left is the recurrence. A single carry whose update is affine in it,
  `c' = A * c + B` (A, B computed from the inputs only), is a scan primitive: `cumsum` when
  A is 1, `cumprod` when B is 0, `affine_scan` otherwise; `c' = max(c, x)` is `cummax`.
  Several carries updated together linearly (`x, y = c x - s y + u[t], s x + c y`) are
  one `linear_scan` over k x k matrices. Anything else is a `loop` over the core's step
  (affine.py builds the forms).
- several carries (carries.py): a carry stacked from rows is carried as its rows, a derived
  carry is recomputed from the others after a peeled first step, and carries split into
  groups run one after another, so that each linear group becomes a scan.

The same treatment applies to the loops the VJP of a loop emits (`optimize_loops`), after
`share_forward` made the forward loop a view of its residual-storing copy. loopplan.py
simplifies and splits a step; loopscan.py emits a recognized core as a scan primitive.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Aval, Const, Eqn, Graph, Params, Var, dce
from ..tracing import Builder, Tracer
from .affine import MAX_COUPLED, affine, linear
from .carries import emit_unstacked, narrow_reads, several_carries, splits, unstack
from .loopplan import Plan, clean, regroup_sums, stacked, value_of
from .loopscan import emit_linear, emit_scan
from .scalarize import scalarize

# ------------------------------------------------------------------ emission

@dataclass
class Emitted:
    """What `emit_loop` made: the final carry and the stacked ys (tracers), what the loop
    became (for explain), and for some ys the same rows after the initial carry (T + 1 rows,
    when a scan computed them that way: a stack of the initial value and every state)."""

    final: list[Any]
    ys: list[Any]
    became: str
    with_init: dict[int, Any] = field(default_factory=dict)


def emit_loop(body: Graph, length: int, n_carry: int, n_xs: int, operands: list[Any],
              src: Any = None, reverse: bool = False, elements: bool = True) -> Emitted:
    """Emit (into the current trace) the loop `P.loop(*operands, body, ...)` computes, split
    and recognized as the module doc says. With `elements`, small
    carries batching stacked are also tried element by element (scalarize.py); the
    gradient's loops are not (their carries are cotangents of a real vector state: a
    matrix scan of per-step Jacobians would replace the compiled reverse loop).
    """
    body = clean(body)
    body = regroup_sums(body, list(body.inputs[:n_carry]))
    plan = Plan(body, n_carry, n_xs)
    if len(plan.live) > 1 and not _scans_only(body, n_carry, n_xs, reverse):
        # (carries updated by one stacked operation with other work: their own parts)
        narrow = regroup_sums(clean(narrow_reads(body, always=True)),
                              list(body.inputs[:n_carry]))
        if _scans_only(narrow, n_carry, n_xs, reverse):
            body, plan = narrow, Plan(narrow, n_carry, n_xs)
    if len(plan.live) > 1:
        made = several_carries(body, length, n_carry, n_xs, plan.live, operands, _ready,
                               functools.partial(emit_loop, elements=elements), reverse)
        if made is not None:
            return made
    lin = affine(plan) or linear(plan)
    if lin is None and plan.live:
        un = unstack(body, n_carry, n_xs)
        if elements and (un is None or not _scans_only(un[0], sum(un[1]), n_xs, reverse)):
            # (a few rows that batching updated by one operation, or small carries it
            # stacked from scalar updates: their rows, or elements)
            un = unstack(body, n_carry, n_xs, rows_of=MAX_COUPLED)
            if un is None or not _scans_only(un[0], sum(un[1]), n_xs, reverse):
                un = scalarize(body, n_carry)
        if un is not None and _scans_only(un[0], sum(un[1]), n_xs, reverse):
            return emit_unstacked(body, length, n_carry, n_xs, un[0], un[1], operands,
                                  functools.partial(emit_loop, elements=elements), reverse)
    if plan.trivial and lin is None:
        return _plain(body, length, n_carry, n_xs, operands, reverse)
    b = operands[0]._b if operands else None
    mark = len(b.eqns) if b is not None else 0
    try:
        return _emit_split(plan, lin, length, operands, reverse)
    except P.NotBatchable:
        del b.eqns[mark:]  # (nothing refers to them yet)
        return _plain(body, length, n_carry, n_xs, operands, reverse)


def _ready(body: Graph, nc: int, nx: int) -> str:
    """What the loop `body` describes is emitted as: "scan" (a scan, and maybe sums over
    the steps), "sums" (sums only), or "" (a loop)."""
    body = clean(body)
    plan = Plan(regroup_sums(body, list(body.inputs[:nc])), nc, nx)
    return "sums" if not plan.live else "scan" if (affine(plan) or linear(plan)) else ""


def _scans_only(body: Graph, nc: int, nx: int, reverse: bool) -> bool:
    """Whether the loop `body` describes is emitted as scans and sums, through the rewrites
    of several carries where it has them."""
    if _ready(body, nc, nx):
        return True
    body = clean(body)
    body = regroup_sums(body, list(body.inputs[:nc]))
    plan = Plan(body, nc, nx)
    return len(plan.live) > 1 and splits(body, nc, nx, plan.live, _ready, reverse)


def _plain(body: Graph, length: int, nc: int, nx: int, operands: list[Any],
           reverse: bool) -> Emitted:
    flat = P.loop(*operands, body=body, length=length, n_carry=nc, n_xs=nx, reverse=reverse)
    outs = P.loop_outputs(flat, body, length, nc)
    return Emitted(outs[:nc], outs[nc:], _loop_text(body, nc))


def _loop_text(body: Graph, nc: int) -> str:
    carry = ", ".join(str(v.aval) for v in body.inputs[:nc])
    return f"loop over a step of {len(body.eqns)} operations (carry {carry})"


def _vmap(eqns: list[Eqn], env: dict[Var, tuple[Any, bool]], n: int) -> None:
    """Emit eqns for all n steps at once: values flagged batched carry a leading step axis."""
    b = next(iter(env.values()))[0]._b if env else None
    for e in eqns:
        args = [(Tracer(b, a), False) if isinstance(a, Const) else env[a] for a in e.inputs]
        if any(f for _, f in args):
            env[e.out] = (e.prim.batch(n, tuple(f for _, f in args), *[x for x, _ in args],
                                       **e.params), True)
        else:
            env[e.out] = (Tracer(b, b.emit(e.prim, [x.atom for x, _ in args], e.params)), False)


def _emit_split(plan: Plan, lin: Any, T: int, operands: list[Any], reverse: bool) -> Emitted:
    body, nc, nx = plan.body, plan.nc, plan.nx
    env: dict[Var, tuple[Any, bool]] = {}
    for i, (v, x) in enumerate(zip(body.inputs, operands)):
        env[v] = (x, nc <= i < nc + nx)
    pre = plan.pre + (lin[2] if lin else [])
    _vmap(pre, env, T)
    if lin is not None and lin[0] == "linear":
        (made, text), whole = emit_linear(plan, lin[1], env, T, operands, reverse), None
    elif lin is not None:
        made, text, whole = emit_scan(plan, lin, env, T, operands, reverse)
    else:
        (made, text), whole = _emit_core(plan, env, T, operands, reverse), None
    _vmap(plan.post, env, T)
    final = []
    for i in range(nc):
        if i in plan.acc:
            final.append(operands[i] + _sum0(value_of(plan.acc[i], env), T))
        else:
            final.append(made[i])
    ys = [stacked(value_of(o, env), T) for o in body.outputs[nc:]]
    what = [text] + [f"sum over the steps (accumulator {operands[i].aval})" for i in plan.acc]
    out = plan.body.outputs[plan.live[0]] if whole is not None else None  # (one carry)
    with_init = {k: whole for k, o in enumerate(body.outputs[nc:]) if o is out}
    return Emitted(final, ys, "; ".join(what), with_init)


def _sum0(x: tuple[Any, bool], T: int) -> Any:
    """The sum over the steps of a (stacked) value; an einsum, so that simplification folds
    it into the contraction that made the value (sum_t outer(d_t, h_t) is one matmul)."""
    v, batched = x
    if not batched:
        return v * float(T)
    letters = "abcdefghijklmnopqrstuvwxyz"[:v.ndim]
    if v.aval.dtype.kind not in "fc":
        return P.reduce_sum(v, axes=(0,))
    return P.einsum(v, spec=f"{letters}->{letters[1:]}")

def _emit_core(plan: Plan, env: dict, T: int, operands: list[Any], reverse: bool
               ) -> tuple[dict[int, Any], str]:
    """The loop over the core; its values (and carry-ins) that post work reads come out
    stacked and enter env batched."""
    body, nc = plan.body, plan.nc
    core_outs = {e.out for e in plan.core}
    carry = [plan.carry[i] for i in plan.live]
    outs = [body.outputs[i] for i in plan.live]
    read = [a for e in plan.post for a in e.inputs] + list(body.outputs[nc:]) + \
        [plan.acc[i] for i in plan.acc]
    ys = list(dict.fromkeys(a for a in read if isinstance(a, Var) and
                            (a in core_outs or a in carry)))
    free = list(dict.fromkeys(a for e in plan.core for a in e.inputs + ()
                              if isinstance(a, Var) and a not in core_outs and a not in carry))
    free += [a for a in outs if isinstance(a, Var) and a not in core_outs and a not in carry
             and a not in free]
    if not outs and not ys:  # nothing of the core is read (e.g. a gradient's dead core)
        return {}, "loop with no live values (dropped)"
    xs = [a for a in free if env[a][1]]
    invs = [a for a in free if not env[a][1]]
    core, packed = _packed_ys(plan.core, ys, [o.aval.dtype for o in outs])
    if len({v.aval.dtype for v in outs + packed}) > 1:
        # (the core's integer values that post work reads, e.g. a sort's permutation in a
        # gradient: no one dtype packs them exactly; emit_loop keeps the loop whole)
        raise P.NotBatchable("a split loop's outputs mix dtypes")
    step = clean(Graph(tuple(carry) + tuple(xs) + tuple(invs), tuple(core),
                       tuple(outs) + tuple(packed)))
    flat = P.loop(*[operands[i] for i in plan.live], *[env[a][0] for a in xs],
                  *[env[a][0] for a in invs], body=step, length=T, n_carry=len(carry),
                  n_xs=len(xs), reverse=reverse)
    res = P.loop_outputs(flat, step, T, len(carry))
    for v, r in zip(ys, res[len(carry):]):
        env[v] = (r if r.dtype == v.aval.dtype else P.cast(r, dtype=v.aval.dtype), True)
    return dict(zip(plan.live, res[:len(carry)])), _loop_text(step, len(carry))


def _packed_ys(core: list[Eqn], ys: list[Var], dts: list) -> tuple[list[Eqn], list[Var]]:
    """A loop packs its outputs in one dtype: a comparison the work after the loop reads
    (Python's `max` keeps its `x > m`) leaves the step cast to the carries' dtype, and is
    cast back after the loop (exact: booleans are 0 and 1)."""
    dt = np.result_type(*dts) if dts else None
    if dt is None or all(v.aval.dtype == dt for v in ys):
        return core, ys
    core, out = list(core), []
    for v in ys:
        if v.aval.dtype != dt and v.aval.dtype.kind == "b":
            w = Var(Aval(v.aval.shape, dt))
            core.append(Eqn(P.cast, (v,), Params(dtype=dt), w, core[-1].src if core else None))
            v = w
        out.append(v)
    return core, out

# ------------------------------------------------------------------ on a whole graph

def optimize_loops(g: Graph) -> Graph:
    """Re-emit every loop of g whose step can be simplified, split or recognized (see the
    module doc), when its result is read through its outputs."""
    if not any(e.prim is P.loop for e in g.eqns):
        return g
    readers: dict[Var, list[Eqn]] = {}
    for e in g.eqns:
        for a in e.inputs:
            if isinstance(a, Var):
                readers.setdefault(a, []).append(e)
    b = Builder(g.inputs, hash_cons=False)
    env: dict[Var, Atom] = {}
    skip: set[Var] = set()
    with b:
        for e in g.eqns:
            if e.out in skip:
                continue
            ins = tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs)
            projs = _projections(e, readers.get(e.out, [])) if e.prim is P.loop and \
                e.out not in g.outputs else None
            if projs is not None and _worth(e):
                b.src = e.src
                p = e.params
                made = emit_loop(p["body"], p["length"], p["n_carry"], p["n_xs"],
                                 [Tracer(b, a) for a in ins], reverse=p.get("reverse", False),
                                 elements=False)
                parts = made.final + made.ys
                for k, rs in projs.items():
                    flat = P.reshape(parts[k], shape=(parts[k].size,)).atom
                    for r in rs:
                        env[r.out] = flat
                        skip.add(r.out)
                continue
            b.eqns.append(e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src))
    outs = [env.get(a, a) if isinstance(a, Var) else a for a in g.outputs]
    return dce(b.build(outs, g.notes))


def _worth(e: Eqn) -> bool:
    p = e.params
    body = clean(p["body"])
    body = regroup_sums(body, list(body.inputs[:p["n_carry"]]))
    plan = Plan(body, p["n_carry"], p["n_xs"])
    return not plan.trivial or (affine(plan) or linear(plan)) is not None or len(body.eqns) < len(
        p["body"].eqns) or splits(body, p["n_carry"], p["n_xs"], plan.live, _ready,
                                  p.get("reverse", False))


def _projections(e: Eqn, readers: list[Eqn]) -> dict[int, list[Eqn]] | None:
    """The readers of a loop's flat result, by output, when each reads one whole output."""
    p = e.params
    lay = P.layout(p["body"], p["length"], p["n_carry"])
    start = {off: k for k, (off, _) in enumerate(lay)}
    out: dict[int, list[Eqn]] = {}
    for r in readers:
        idx = r.params.get("idx") if r.prim is P.getitem else None
        if not idx or len(idx) != 1 or not isinstance(idx[0], P.Sl) or idx[0].step != 1:
            return None
        k = start.get(idx[0].start)
        if k is None or idx[0].stop - idx[0].start != math.prod(lay[k][1]):
            return None
        out.setdefault(k, []).append(r)
    return out
