"""Sharing a forward loop with its copy: the VJP of a loop emits a residual-storing copy of
the forward loop (the same operands, the residuals as extra outputs); on the gradient graph
the copy runs in the original's place and the original's readers read the front of the
copy's result, whose layout begins with the original's (primitives/loop.py), so the forward
runs once."""
from __future__ import annotations

from .. import primitives as P
from ..ir import Eqn, Graph, Params, Var
from ..notes import Augments


def share_forward(g: Graph) -> Graph:
    """A forward loop and its residual-storing copy (emitted by the loop's VJP, with the same
    operands) run once: the copy takes the original's place, and the original's readers
    read the copy's result, whose layout begins with the original's."""
    copies: dict[tuple, Eqn] = {}
    for e in g.eqns:
        if e.prim is P.loop:
            for n in e.params["body"].notes:
                if isinstance(n, Augments):
                    copies[(id(n.body), e.inputs)] = e
    moved: dict[Var, Eqn] = {}
    for e in g.eqns if copies else ():
        c = copies.get((id(e.params["body"]), e.inputs)) if e.prim is P.loop else None
        if c is not None and all(c.params.get(k) == e.params.get(k)
                                 for k in ("length", "n_carry", "n_xs", "reverse")):
            moved[e.out] = c
    if not moved:
        return g
    done = {c.out for c in moved.values()}
    eqns: list[Eqn] = []
    to: dict[Var, Eqn] = {}  # original result -> its copy
    prefix: dict[Var, Var] = {}
    for e in g.eqns:
        if e.out in done:
            continue
        c = moved.get(e.out)
        if c is not None:
            eqns.append(c)
            to[e.out] = c
            continue
        ins = list(e.inputs)
        for k, a in enumerate(ins):
            if not isinstance(a, Var) or a not in to:
                continue
            if e.prim is P.getitem and len(e.params["idx"]) == 1:
                ins[k] = to[a].out  # reads one of the original's outputs: same offsets
            else:
                ins[k] = _prefix(a, to[a], prefix, eqns, e.src)
        eqns.append(e if tuple(ins) == e.inputs else Eqn(e.prim, tuple(ins), e.params, e.out,
                                                         e.src))
    # (a graph output that is the original's whole result is the copy's prefix too)
    outs = [_prefix(a, to[a], prefix, eqns, None) if isinstance(a, Var) and a in to else a
            for a in g.outputs]
    return g.replace(eqns=tuple(eqns), outputs=tuple(outs))


def _prefix(a: Var, c: Eqn, prefix: dict[Var, Var], eqns: list[Eqn], src) -> Var:
    """The original loop's result `a` read from the front of its copy's result (once)."""
    if a not in prefix:
        prefix[a] = Var(a.aval)
        eqns.append(Eqn(P.getitem, (c.out,), Params(
            idx=P.BasicIndex((P.Sl(0, a.aval.shape[0], 1),))), prefix[a], src))
    return prefix[a]
