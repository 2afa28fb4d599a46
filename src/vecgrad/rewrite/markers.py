"""After differentiation, the equations that only steered it compute nothing: a stop_gradient
is its operand, and a custom_vjp_call is the value it passes through (its last operand).
Lowering drops them (a nested transformation's staged graph keeps them: an enclosing AD may
still differentiate through them)."""
from __future__ import annotations

from ..ir import Atom, Graph, Var

AD_ONLY = {"stop_gradient": 0, "custom_vjp_call": -1}  # primitive -> the operand it passes


def strip_ad_markers(g: Graph) -> Graph:
    """Replace each AD-only equation by the operand it passes through."""
    if not any(e.prim.name in AD_ONLY for e in g.eqns):
        return g
    env: dict[Var, Atom] = {}
    eqns = []
    for e in g.eqns:
        ins = tuple(env.get(a, a) if a.__class__ is Var else a for a in e.inputs)
        k = AD_ONLY.get(e.prim.name)
        if k is not None:
            env[e.out] = ins[k]
            continue
        eqns.append(e if ins == e.inputs else e._replace(inputs=ins))
    return g.replace(eqns=tuple(eqns), outputs=tuple(env.get(a, a) if a.__class__ is Var
                                                     else a for a in g.outputs))
