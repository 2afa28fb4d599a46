"""Common-subexpression elimination. Repeated loop-invariant work (the norm of `a[:, j]`
recomputed for every `i`) collapses to one equation, which makes CSE the first hoist."""
from __future__ import annotations

from ..ir import Atom, Const, Eqn, Graph, Var


def substitute(a: Atom, env: dict[Var, Atom]) -> Atom:
    return env.get(a, a) if isinstance(a, Var) else a


def cse(g: Graph) -> Graph:
    env: dict[Var, Atom] = {}
    seen: dict[tuple, Var] = {}
    consts: dict[object, Const] = {}
    eqns = []
    for e in g.eqns:
        ins = tuple(consts.setdefault(a.key(), a) if isinstance(a, Const) else env.get(a, a)
                    for a in e.inputs)
        key = (e.prim, e.params, tuple(a.key() if isinstance(a, Const) else a for a in ins))
        hit = seen.get(key)
        if hit is not None:
            env[e.out] = hit
            continue
        seen[key] = e.out
        eqns.append(e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src))
    return g.replace(eqns=tuple(eqns), outputs=tuple(substitute(a, env) for a in g.outputs))
