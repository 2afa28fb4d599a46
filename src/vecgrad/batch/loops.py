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
`share_forward` made the forward loop a view of its residual-storing copy.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Aval, Const, Eqn, Graph, Params, Var, dce, uses
from ..rewrite.cse import cse
from ..rewrite.engine import Rule, rewrite
from ..rewrite.simplify import simplify
from ..tracing import Builder, Tracer
from .affine import (
    MAX_COUPLED,
    ONE,
    ZERO,
    affine,
    decayed_extreme,
    fold_said,
    linear,
    one,
    python_extreme,
)
from .affine import full_slices as _full
from .carries import emit_unstacked, narrow_reads, several_carries, splits, unstack
from .scalarize import scalarize


def clean(body: Graph) -> Graph:
    """A step graph simplified (outside passes never look inside a loop), with the sums that
    batching wrote as one reduction over stacked pieces written as additions again: inside a
    sequential step, stacking the pieces costs a copy that k - 1 additions do not."""
    return rewrite(simplify(cse(dce(body))), STEP_RULES)


def _sum_of_pieces(e: Eqn, ctx: Any) -> Any:
    """reduce_sum over the pieces of a concatenate (one row each, split onto their own axis
    by a reshape) = the sum of the pieces."""
    if len(e.params["axes"]) != 1:
        return None
    r = ctx.def_of(e.inputs[0], P.reshape)
    x = r.inputs[0] if r is not None else e.inputs[0]
    c = ctx.def_of(x, P.concatenate)
    if c is None or (r is not None and ctx.n_uses(x) != 1) or len(c.inputs) > 8:
        return None
    a, b = c.params["axis"], e.params["axes"][0]
    R, X, O = e.inputs[0].aval.shape, x.aval.shape, e.out.aval.shape
    if R[b] != len(c.inputs) or any(p.aval.shape[a] != 1 for p in c.inputs) or \
            [d for d in X[:a] + X[a + 1:] if d != 1] != [d for d in O if d != 1] or \
            [d for d in R[:b] + R[b + 1:] if d != 1] != [d for d in O if d != 1] or \
            any(p.aval.dtype != e.out.aval.dtype for p in c.inputs):
        return None
    terms = [p if p.aval.shape == O else ctx.emit(P.reshape, (p,), {"shape": O}, e.src)
             for p in c.inputs]
    acc = terms[0]
    for t in terms[1:-1]:
        acc = ctx.emit(P.add, (acc, t), {}, e.src)
    return (P.add, (acc, terms[-1]), {}) if len(terms) > 1 else acc


STEP_RULES = [Rule(P.reduce_sum, _sum_of_pieces,
                   "sum(reshape(concatenate(x_1, ..., x_k)), pieces' axis) = x_1 + ... + x_k")]


def regroup_sums(body: Graph, carry: list[Var]) -> Graph:
    """(c + a) + b = c + (a + b) when c depends on the carry and a, b do not: the carry-free
    part of a sum then leaves the loop (W @ h + U @ x[t] + b: U @ x[t] + b is computed for
    every step at once; b may broadcast, a bias b[:, None] over a batch)."""
    dep = _dependents(body, set(carry))
    n_uses = uses(body)
    defs: dict[Var, Eqn] = {}
    eqns: list[Eqn] = []
    for e in body.eqns:
        if e.prim is P.add and e.out in dep:
            for a, b in (e.inputs, e.inputs[::-1]):
                d = defs.get(a) if isinstance(a, Var) else None
                if d is None or d.prim is not P.add or n_uses.get(a) != 1 or b in dep or \
                        a.aval != e.out.aval or b.aval.dtype != e.out.aval.dtype:
                    continue
                p, q = d.inputs
                if (p in dep) == (q in dep):
                    continue
                c, f = (p, q) if p in dep else (q, p)
                # (b may broadcast, as a bias b[:, None]: f + b must still have f's shape,
                # and c the result's)
                if c.aval != e.out.aval or f.aval.dtype != e.out.aval.dtype or \
                        P.add.shape_rule(f.aval, b.aval) != e.out.aval:
                    continue
                t = Var(e.out.aval)
                eqns.append(Eqn(P.add, (f, b), Params(), t, e.src))
                e = Eqn(P.add, (c, t), Params(), e.out, e.src)
                break
        defs[e.out] = e
        eqns.append(e)
    return dce(body.replace(eqns=tuple(eqns)))


# ------------------------------------------------------------------ splitting a step

class _Plan:
    """A step split for emission (see the module doc)."""

    def __init__(self, body: Graph, nc: int, nx: int):
        self.body, self.nc, self.nx = body, nc, nx
        ins = body.inputs
        self.carry = list(ins[:nc])
        self.acc: dict[int, Atom] = {}  # carry index -> the value added each step
        n_uses = uses(body)
        defs = {e.out: e for e in body.eqns}
        for i, c in enumerate(self.carry):
            e = defs.get(body.outputs[i])
            if e is not None and e.prim is P.add and n_uses.get(c, 0) == 1 and \
                    n_uses.get(e.out, 0) == 1 and c in e.inputs and e.inputs[0] is not \
                    e.inputs[1] and all(a.aval == c.aval for a in e.inputs):
                v = e.inputs[1] if e.inputs[0] is c else e.inputs[0]
                if not _depends(body, v, {c}) and not _matrix_product(defs.get(v)):
                    self.acc[i] = v
        live = [c for i, c in enumerate(self.carry) if i not in self.acc]
        self.dep = _dependents(body, set(live))
        outs = [o for i, o in enumerate(body.outputs[:nc]) if i not in self.acc]
        anc = _ancestors(body, outs)
        gone = {body.outputs[i] for i in self.acc}  # the accumulating adds
        eqns = [e for e in body.eqns if e.out not in gone]
        self.core = [e for e in eqns if e.out in self.dep and e.out in anc]
        core_outs = {e.out for e in self.core}
        self.pre = [e for e in eqns if e.out not in self.dep]
        self.post = [e for e in eqns if e.out in self.dep and e.out not in core_outs]
        self.live = [i for i in range(nc) if i not in self.acc]
        self.read = {a for e in self.post for a in e.inputs if isinstance(a, Var)}
        self.read |= {a for a in body.outputs[nc:] if isinstance(a, Var)}
        self.read |= {a for a in self.acc.values() if isinstance(a, Var)}

    @property
    def trivial(self) -> bool:
        """Nothing to hoist: the loop stays as it is."""
        return not (self.acc or self.pre or self.post)


# A per-step matrix product of at least this many multiply-adds stays accumulated in the loop.
KEEP_MACS = 1 << 18


def _matrix_product(e: Eqn | None) -> bool:
    """A large contraction that sums over an axis of its own: summing it over the steps too
    contracts the step axis with that one, which takes a transposed copy of both stacked
    operands. Measured (NumPy, one BLAS thread, thread CPU time, 100 steps of D_t @ H_t.T
    with D_t (m, k), H_t (n, k); a step at a time against the transposed copies and one
    product): m, k, n = 32, 8, 32: 179 against 52 us; 64, 32, 32: 451 / 336; 64, 32, 64:
    674 / 609; 64, 64, 64: 1,362 / 1,483; 256, 32, 64: 2,695 / 2,523; 256, 64, 64: 5,054 /
    5,341. Break-even is near KEEP_MACS a step, and in whole gradients the larger products
    lose (the patterns' LSTM, 256 x 32 x 64: 17.0 ms kept against 17.8 hoisted; its tanh
    RNN, 64 x 32 x 64: 3.72 against 3.50). Below it, and for an outer product (sum_t
    d_t h_t^T), the sum is hoisted: one matrix product after the loop."""
    if e is None or e.prim is not P.einsum:
        return False
    ins, out = e.params["spec"].split("->")
    size: dict[str, int] = {}
    for s, a in zip(ins.split(","), e.inputs):
        size.update(zip(s, a.aval.shape))
    return bool(set(ins.replace(",", "")) - set(out)) and math.prod(size.values()) >= KEEP_MACS


def _depends(g: Graph, a: Atom, on: set[Var]) -> bool:
    return isinstance(a, Var) and a in _dependents(g, on)


def _dependents(g: Graph, on: set[Var]) -> set[Var]:
    dep = set(on)
    for e in g.eqns:
        if any(isinstance(a, Var) and a in dep for a in e.inputs):
            dep.add(e.out)
    return dep


def _ancestors(g: Graph, outs: list[Atom]) -> set[Var]:
    need = {a for a in outs if isinstance(a, Var)}
    for e in reversed(g.eqns):
        if e.out in need:
            need.update(a for a in e.inputs if isinstance(a, Var))
    return need


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
    plan = _Plan(body, n_carry, n_xs)
    if len(plan.live) > 1 and not _scans_only(body, n_carry, n_xs, reverse):
        # (carries updated by one stacked operation with other work: their own parts)
        narrow = regroup_sums(clean(narrow_reads(body, always=True)),
                              list(body.inputs[:n_carry]))
        if _scans_only(narrow, n_carry, n_xs, reverse):
            body, plan = narrow, _Plan(narrow, n_carry, n_xs)
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
    plan = _Plan(regroup_sums(body, list(body.inputs[:nc])), nc, nx)
    return "sums" if not plan.live else "scan" if (affine(plan) or linear(plan)) else ""


def _scans_only(body: Graph, nc: int, nx: int, reverse: bool) -> bool:
    """Whether the loop `body` describes is emitted as scans and sums, through the rewrites
    of several carries where it has them."""
    if _ready(body, nc, nx):
        return True
    body = clean(body)
    body = regroup_sums(body, list(body.inputs[:nc]))
    plan = _Plan(body, nc, nx)
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


def _stacked(x: tuple[Any, bool], n: int) -> Any:
    v, batched = x
    return v if batched else P.broadcast_to(v, shape=(n,) + v.shape)


def _emit_split(plan: _Plan, lin: Any, T: int, operands: list[Any], reverse: bool) -> Emitted:
    body, nc, nx = plan.body, plan.nc, plan.nx
    env: dict[Var, tuple[Any, bool]] = {}
    for i, (v, x) in enumerate(zip(body.inputs, operands)):
        env[v] = (x, nc <= i < nc + nx)
    pre = plan.pre + (lin[2] if lin else [])
    _vmap(pre, env, T)
    if lin is not None and lin[0] == "linear":
        (made, text), whole = _emit_linear(plan, lin[1], env, T, operands, reverse), None
    elif lin is not None:
        made, text, whole = _emit_scan(plan, lin, env, T, operands, reverse)
    else:
        (made, text), whole = _emit_core(plan, env, T, operands, reverse), None
    _vmap(plan.post, env, T)
    final = []
    for i in range(nc):
        if i in plan.acc:
            final.append(operands[i] + _sum0(_value(plan.acc[i], env), T))
        else:
            final.append(made[i])
    ys = [_stacked(_value(o, env), T) for o in body.outputs[nc:]]
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


def _value(a: Atom, env: dict) -> tuple[Any, bool]:
    if isinstance(a, Const):
        return Tracer(next(iter(env.values()))[0]._b, a), False
    return env[a]


def _emit_core(plan: _Plan, env: dict, T: int, operands: list[Any], reverse: bool
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


def _emit_scan(plan: _Plan, lin: Any, env: dict, T: int, operands: list[Any], reverse: bool
               ) -> tuple[dict[int, Any], str, Any]:
    """The scan a linear core is: computed in the order the loop runs its steps (a reversed
    loop scans reversed views) and put back in step order."""
    kind, forms, _ = lin
    i = plan.live[0]
    c, out = plan.carry[i], plan.body.outputs[i]
    init = operands[i]
    s = c.aval.shape
    A, B = forms[out]
    run = (lambda x: P.flip(x)) if reverse else (lambda x: x)  # step order <-> run order
    whole = None
    if kind == "affine_scan":
        a, batched = _value(A, env) if A is not ONE else (Tracer(init._b, one(c)), False)
        a = run(a) if batched else P.reshape(a, shape=(1,) + a.shape)
        b = run(_stacked(_value(B, env), T)) if B is not ZERO else \
            P.full(shape=(T,) + s, dtype=c.aval.dtype, value=0.0)
        a, b = (v if v.dtype == c.aval.dtype else P.cast(v, dtype=c.aval.dtype) for v in (a, b))
        traj = P.affine_scan(init, a, b)
    else:
        x = run(_rows_to(_stacked(_value(A if kind == "cumprod" else B, env), T), s))
        if x.dtype != c.aval.dtype:  # (bool or float32 terms added into a float64 carry)
            x = P.cast(x, dtype=c.aval.dtype)
    if kind in ("decmax", "decmin"):  # (m = max(k m, x): from the initial value)
        v = P.concatenate(_row(init, s), x, axis=0)
        traj = decayed_extreme(v, A.value, kind == "decmax")
    elif kind.endswith("/post"):  # c[t] = sel(c[t-1], x[t]) + a: see _post_shifted
        traj = _post_shifted(plan, env, init, x, kind, A, run)
    elif kind.startswith("py"):  # (Python's max/min fold: always from the initial value)
        whole = python_extreme(P.concatenate(_row(init, s), x, axis=0), kind, A)
        traj = P.getitem(whole, idx=(P.Sl(1, T + 1, 1),) + _full(s))
        if init.shape != s or reverse:
            whole = None
    elif kind != "affine_scan":
        neutral = {"cumsum": 0.0, "cumprod": 1.0, "cummax": -np.inf, "cummin": np.inf}[kind]
        prim = {"cumsum": P.cumsum, "cumprod": P.cumprod, "cummax": P.cummax,
                "cummin": P.cummin}[kind]
        kw = {"reverse": False} if prim is P.cumsum else {}
        if isinstance(init.atom, Const) and np.all(init.atom.value == neutral):
            traj = prim(x, axis=0, **kw)
        else:  # the initial value first, so the scan runs in the loop's own order
            whole = prim(P.concatenate(_row(init, s), x, axis=0), axis=0, **kw)
            traj = P.getitem(whole, idx=(P.Sl(1, T + 1, 1),) + _full(s))
            if init.shape != s or reverse:
                whole = None
    env[out] = (run(traj), True)
    need = [v for v in forms if v in plan.read and v is not out]
    if need:  # core values the post work reads: v = A_v * c[t-1] + B_v, batched
        prev = _row(init, s) if T == 1 else P.concatenate(
            _row(init, s), P.getitem(traj, idx=(P.Sl(0, T - 1, 1),) + _full(s)), axis=0)
        env[c] = prev = (run(prev), True)
        for v in need:
            fa, fb = forms[v]
            vs = v.aval.shape  # (a value may hold the carry broadcast over leading axes)
            p0 = prev[0] if vs == s else _rows_to(prev[0], vs)
            term = p0 if fa is ONE else p0 * _rows_to(_stacked(_value(fa, env), T), vs)
            env[v] = (term if fb is ZERO else
                      term + _rows_to(_stacked(_value(fb, env), T), vs), True)
    last = P.getitem(traj, idx=(T - 1,) + _full(s))
    said = fold_said(kind, A) if kind.startswith("py") else kind
    return {i: last}, f"{said} -> {traj.aval}", whole


def _post_shifted(plan: _Plan, env: dict, init: Any, x: Any, kind: str, k: Any,
                  run: Any) -> Any:
    """The carry c[t] = z[t] + a of a selection z[t] = sel(c[t-1], x[t]) (the loop cut one
    equation after the shift): z[1] = sel(c[0], x[1]) as the loop selects, then z[t] =
    sel(z[t-1] + a, x[t]), the shifted fold (fold_pick), from it. The selections, which
    the work after the loop reads, are z (in step order); the carries z + a, as the loop's
    own add rounds them."""
    s = init.shape
    base = kind[:-len("/post")]
    first = python_extreme(P.concatenate(_row(init, s), _rows(x, 0, 1, s), axis=0), base)
    z = python_extreme(P.concatenate(_rows(first, 1, 2, s), _rows(x, 1, x.shape[0], s),
                                     axis=0), base, k) if x.shape[0] > 1 else \
        _rows(first, 1, 2, s)
    sel = next(a for a in plan.core[-1].inputs if isinstance(a, Var))
    env[sel] = (run(z), True)
    return z + np.asarray(k.value)


def _rows(v: Any, a: int, b: int, s: tuple) -> Any:
    return P.getitem(v, idx=(P.Sl(a, b, 1),) + _full(s))


def _emit_linear(plan: _Plan, forms: dict, env: dict, T: int, operands: list[Any],
                 reverse: bool) -> tuple[dict[int, Any], str]:
    """The linear system of several carries as one `linear_scan` over k x k matrices (per
    element of the state), in the loop's run order; the values post work reads are
    recomputed from the carries' previous states, batched."""
    live = plan.live
    k = len(live)
    cs = [plan.carry[i] for i in live]
    s, dt = cs[0].aval.shape, cs[0].aval.dtype
    b0 = operands[live[0]]._b
    run = (lambda x: P.flip(x)) if reverse else (lambda x: x)

    def part(f: Any) -> tuple[Any, bool]:  # a coefficient or carry-free part, as a value
        if f is ONE or f is ZERO:
            return Tracer(b0, one(cs[0]) if f is ONE else Const(np.zeros((), dt))), False
        v, batched = _value(f, env)
        return (v if v.dtype == dt else P.cast(v, dtype=dt)), batched
    rows = [forms[plan.body.outputs[i]] for i in live]
    coefs = [[part(r[j]) for j in range(k)] for r in rows]
    if any(bt for row in coefs for _, bt in row):  # (T, k, k, *s): per-step matrices
        A = P.stack(*[P.stack(*[_rows_to(_stacked(x, T), s) for x in row], axis=1)
                      for row in coefs], axis=1)
        A = run(A)
    else:  # (1, k, k, *s): one matrix for every step
        A = P.stack(*[P.stack(*[P.broadcast_to(x, shape=s) for x, _ in row], axis=0)
                      for row in coefs], axis=0)
        A = P.reshape(A, shape=(1,) + A.shape)
    B = run(P.stack(*[_rows_to(_stacked(part(r[k]), T), s) for r in rows], axis=1))
    init = P.stack(*[P.broadcast_to(operands[i] if operands[i].dtype == dt else
                                    P.cast(operands[i], dtype=dt), shape=s) for i in live],
                   axis=0)
    traj = run(P.linear_scan(init, A, B))  # (T, k, *s), in step order
    full = _full(s)
    made = {}
    prev = {}
    for j, i in enumerate(live):
        tj = P.getitem(traj, idx=(P.Sl(0, T, 1), j) + full)
        env[plan.body.outputs[i]] = (tj, True)
        made[i] = P.getitem(tj, idx=(T - 1 if not reverse else 0,) + full)
        first = P.broadcast_to(operands[i], shape=s)
        prev[j] = shift_prev(tj, first, reverse)
    for v in [v for v in forms if v in plan.read and v not in env]:
        f = forms[v]  # v = sum_j A_vj * c_j[t-1] + B_v, batched
        vs = v.aval.shape
        acc = None if f[k] is ZERO else _rows_to(_stacked(part(f[k]), T), vs)
        for j in range(k):
            if f[j] is ZERO:
                continue
            p = _rows_to(prev[j], vs)
            term = p if f[j] is ONE else p * _rows_to(_stacked(part(f[j]), T), vs)
            acc = term if acc is None else acc + term
        env[v] = (acc if acc is not None else P.full(shape=(T,) + vs, dtype=dt, value=0.0),
                  True)
    for j, c in enumerate(cs):  # (post work reads each step's carry-in)
        env[c] = (prev[j], True)
    return made, f"linear_scan of {k} coupled carries -> {traj.aval}"


def shift_prev(traj: Any, first: Any, reverse: bool) -> Any:
    """The state before each step, in step order: [first, traj[0], ..., traj[T-2]] (for a
    loop run backwards, [traj[1], ..., traj[T-1], first])."""
    T = traj.shape[0]
    if T == 1:
        return P.reshape(first, shape=(1,) + first.shape)
    if reverse:
        return P.flip(P.shift_down(P.flip(traj), first))
    return P.shift_down(traj, first)


def _row(x: Any, s: tuple[int, ...]) -> Any:
    """x broadcast to the state shape s, as one row (1, *s)."""
    return P.reshape(P.broadcast_to(x, shape=s), shape=(1,) + s)


def _rows_to(x: Any, s: tuple[int, ...]) -> Any:
    """Stacked values (T, *r), each broadcast to the state shape s: (T, *s)."""
    T = x.shape[0]
    x = P.reshape(x, shape=(T,) + (1,) * (len(s) - x.ndim + 1) + x.shape[1:])
    return P.broadcast_to(x, shape=(T,) + s) if x.shape[1:] != s else x


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
    plan = _Plan(body, p["n_carry"], p["n_xs"])
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
