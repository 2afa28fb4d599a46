"""What a loop's step is made of: the step simplified (`clean`, `regroup_sums`), and split
by what depends on the carry (`Plan`: accumulators, pre, core and post work; loops.py's
module doc says how each part is emitted)."""
from __future__ import annotations

import math
from typing import Any

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Graph, Params, Var, dce, uses
from ..rewrite.cse import cse
from ..rewrite.engine import Rule, rewrite
from ..rewrite.simplify import simplify
from ..tracing import Tracer


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
    dep = dependents(body, set(carry))
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

class Plan:
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
                if not depends(body, v, {c}) and not matrix_product(defs.get(v)):
                    self.acc[i] = v
        live = [c for i, c in enumerate(self.carry) if i not in self.acc]
        self.dep = dependents(body, set(live))
        outs = [o for i, o in enumerate(body.outputs[:nc]) if i not in self.acc]
        anc = ancestors(body, outs)
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


def matrix_product(e: Eqn | None) -> bool:
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


def depends(g: Graph, a: Atom, on: set[Var]) -> bool:
    return isinstance(a, Var) and a in dependents(g, on)


def dependents(g: Graph, on: set[Var]) -> set[Var]:
    dep = set(on)
    for e in g.eqns:
        if any(isinstance(a, Var) and a in dep for a in e.inputs):
            dep.add(e.out)
    return dep


def ancestors(g: Graph, outs: list[Atom]) -> set[Var]:
    need = {a for a in outs if isinstance(a, Var)}
    for e in reversed(g.eqns):
        if e.out in need:
            need.update(a for a in e.inputs if isinstance(a, Var))
    return need



def value_of(a: Atom, env: dict) -> tuple[Any, bool]:
    if isinstance(a, Const):
        return Tracer(next(iter(env.values()))[0]._b, a), False
    return env[a]



def stacked(x: tuple[Any, bool], n: int) -> Any:
    v, batched = x
    return v if batched else P.broadcast_to(v, shape=(n,) + v.shape)


