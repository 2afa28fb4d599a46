"""Common-subexpression elimination. Repeated loop-invariant work (the norm of `a[:, j]`
recomputed for every `i`) collapses to one equation, which makes CSE the first hoist."""
from __future__ import annotations

from ..ir import Atom, Const, Eqn, Graph, Var


def substitute(a: Atom, env: dict[Var, Atom]) -> Atom:
    """`a` with a var replaced by its surviving copy in `env`."""
    return env.get(a, a) if isinstance(a, Var) else a


def cse(g: Graph) -> Graph:
    """Merge equations with the same primitive, params and inputs (constants by contents)."""
    # env maps each var to its surviving copy, and each constant to the first constant with
    # the same contents, so that equation keys can compare atoms by identity.
    env: dict[Atom, Atom] = {}
    by_contents: dict[tuple, Const] = {}
    seen: dict[tuple, Var] = {}
    eqns = []
    for e in g.eqns:
        for a in e.inputs:
            if a.__class__ is Const and a not in env:
                env[a] = by_contents.setdefault(a.key(), a)
        ins = tuple([env.get(a, a) for a in e.inputs])
        key = (e.prim, e.params, ins)
        hit = seen.get(key)
        if hit is not None:
            env[e.out] = hit
            continue
        seen[key] = e.out
        eqns.append(e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src))
    return g.replace(eqns=tuple(eqns), outputs=tuple(substitute(a, env) for a in g.outputs))
