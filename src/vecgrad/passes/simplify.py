"""Algebraic simplification by rewrite rules. Rules are data: the primitive they match, a
function that returns the replacement (an existing atom, or a new (prim, inputs, params)
equation) or None, and a one-line algebra comment. The driver applies them in one forward
sweep (each replacement is itself simplified), then removes dead code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .. import primitives as P
from ..ir import Atom, Eqn, Graph, Params, Var
from .dce import dce


@dataclass(frozen=True)
class Rule:
    prim: P.Primitive
    rewrite: Callable[[Eqn, dict[Var, Eqn]], Any]
    algebra: str


def _src(a: Atom, defs: dict[Var, Eqn], prim: P.Primitive) -> Eqn | None:
    e = defs.get(a) if isinstance(a, Var) else None
    return e if e is not None and e.prim is prim else None


def _full_index(e: Eqn) -> bool:
    idx, shape = e.params["idx"], e.inputs[0].aval.shape
    return len(idx) == len(shape) and all(
        isinstance(k, P.Sl) and k.start == 0 and k.step == 1 and len(k) == d
        for k, d in zip(idx, shape))


RULES: list[Rule] = [
    Rule(P.reshape, lambda e, d: e.inputs[0] if e.inputs[0].aval.shape == e.out.aval.shape
         else None, "reshape(x, x.shape) = x"),
    Rule(P.reshape, lambda e, d: (P.reshape, (s.inputs[0],), e.params)
         if (s := _src(e.inputs[0], d, P.reshape)) else None,
         "reshape(reshape(x, s1), s2) = reshape(x, s2)"),
    Rule(P.transpose, lambda e, d: e.inputs[0]
         if e.params["perm"] == tuple(range(len(e.params["perm"]))) else None,
         "transpose(x, id) = x"),
    Rule(P.transpose, lambda e, d: (P.transpose, (s.inputs[0],), {"perm": tuple(
        s.params["perm"][p] for p in e.params["perm"])})
         if (s := _src(e.inputs[0], d, P.transpose)) else None,
         "transpose(transpose(x, p), q) = transpose(x, p[q])"),
    Rule(P.broadcast_to, lambda e, d: e.inputs[0]
         if e.inputs[0].aval.shape == e.out.aval.shape else None, "broadcast_to(x, x.shape) = x"),
    Rule(P.getitem, lambda e, d: e.inputs[0] if _full_index(e) else None, "x[:, ..., :] = x"),
    Rule(P.cast, lambda e, d: e.inputs[0] if e.inputs[0].aval.dtype == e.params["dtype"]
         else None, "x.astype(x.dtype) = x"),
]

_BY_PRIM: dict[P.Primitive, list[Rule]] = {}
for _r in RULES:
    _BY_PRIM.setdefault(_r.prim, []).append(_r)


def simplify(g: Graph, rules: dict[P.Primitive, list[Rule]] | None = None) -> Graph:
    rules = _BY_PRIM if rules is None else rules
    env: dict[Var, Atom] = {}
    defs: dict[Var, Eqn] = {}
    eqns: list[Eqn] = []
    for e in g.eqns:
        ins = tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs)
        e = e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src)
        while True:
            r = next((r for rule in rules.get(e.prim, ()) if (r := rule.rewrite(e, defs))
                      is not None), None)
            if r is None or not isinstance(r, tuple):
                break
            prim, new_ins, params = r
            e = Eqn(prim, tuple(new_ins), Params(params), e.out, e.src)
        if r is not None:  # replaced by an existing value
            env[e.out] = r
            continue
        defs[e.out] = e
        eqns.append(e)
    outs = tuple(env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    return dce(g.replace(eqns=tuple(eqns), outputs=outs))
