"""Before batching: a buffer scaled by a constant between scatters into it (a decayed
accumulation) is the scatters of scaled values.

An eligibility trace (`buf *= 0.99; buf[idx[i]] += x[i]` in a loop) scales the whole buffer
at every step: each scatter's result is read by a multiplication of all of it, so the
scatters cannot be summed in any order (a chain of 12,000 equations at n = 2,000 with static
positions, a rolled loop with traced ones: 190x and 43x np.bincount). Scaling distributes over
the sums, so

    ((b c_1 + s_1) c_2 + s_2) ... = b (c_1 c_2 ...) + s_1 (c_2 ...) + s_2 (...) + ...

each scatter's values multiplied by the product of the constants after it (a constant each,
known while compiling), and the buffer's first value by all of them: a chain of additions
that batching sums as one segment sum. The same sum in another order: equal to rounding
(an ulp per term); infinities and NaNs propagate as in the loop (c finite, so x c is inf or
NaN where x is). Only scatters are moved (`buf[k] += v`, `np.add.at`, an add of a
`scatter_add_along`): dense recurrences (`h = 0.9 h + x[t]`) are scans' (closed_form).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn, Graph, Params, Var, uses
from .census import census

_SCALE, _SCATTER, _ADD = "scale", "scatter", "add"


def decayed_scatters(g: Graph) -> bool:
    """Whether g may hold a buffer scaled between scatters (a quick look): a scatter into
    the result of a multiplication by a constant, as the first scatter of every chain that
    `scale_scatters` rewrites is (it costs about 1 us per operation where nothing is)."""
    prims = census(g)
    if P.mul not in prims or P.setitem_add not in prims and P.scatter_add_along not in prims:
        return False
    mul, scatter_add, add, sub, scatter = P.mul, P.setitem_add, P.add, P.sub, \
        P.scatter_add_along
    scaled: set[Var] = set()  # results of a multiplication by a constant
    scattered: set[Var] = set()  # results of a scatter_add_along
    for e in g.eqns:
        p = e.prim
        if p is mul:
            a, b = e.inputs
            if a.__class__ is Const or b.__class__ is Const:
                scaled.add(e.out)
        elif p is scatter:
            scattered.add(e.out)
        elif scaled and (p is scatter_add or p is add or p is sub):
            a, b = e.inputs[:2]
            if p is scatter_add and a in scaled or \
                    p is not scatter_add and a in scaled and b in scattered or \
                    p is add and b in scaled and a in scattered:
                return True
    return False


def _scale(e: Eqn) -> tuple | None:
    """(base, c) of `base * c`, c a finite 0-d float constant of base's dtype."""
    if e.prim is not P.mul:
        return None
    for b, c in (e.inputs, e.inputs[::-1]):
        if c.__class__ is Const and not c.value.shape and b.aval == e.out.aval and \
                e.out.aval.dtype.kind == "f" and np.isfinite(c.value) and \
                np.result_type(c.value.dtype, b.aval.dtype) == b.aval.dtype:
            return b, c.value.astype(b.aval.dtype)
    return None


def _links(e: Eqn, defs: dict, n_uses: dict) -> list:
    """The ways e may continue a chain: [(kind, position of the base among e's inputs)]."""
    if e.prim is P.setitem_add:
        return [(_SCATTER, 0)] if e.inputs[1].aval.dtype == e.out.aval.dtype else []
    if e.prim is not P.add and e.prim is not P.sub:
        return []
    out = []
    for j, (b, s) in enumerate((e.inputs, e.inputs[::-1])):
        d = defs.get(s) if s.__class__ is Var else None
        if (e.prim is P.add or j == 0) and b.aval == e.out.aval == s.aval and d is not None \
                and d.prim is P.scatter_add_along and n_uses.get(s) == 1:
            out.append((_ADD, j))
    return out


def scale_scatters(g: Graph) -> Graph:
    """Chains of a buffer's versions, scaled by constants and added scatters to, each
    version read only by the next link, with the scalings moved onto the scatters' values
    (module doc)."""
    n_uses = uses(g)
    outs = {a for a in g.outputs if a.__class__ is Var}
    defs: dict[Var, Eqn] = {}
    chains: dict[Var, list] = {}  # a chain's last version -> [(kind, eqn, base position, c)]
    for e in g.eqns:
        defs[e.out] = e
        sc = _scale(e)
        prev = None
        if sc is not None:
            prev = _open(chains, sc[0], n_uses, outs)
            chains[e.out] = (prev or []) + [(_SCALE, e, e.inputs.index(sc[0]), sc[1])]
            continue
        for kind, j in _links(e, defs, n_uses):
            prev = _open(chains, e.inputs[j], n_uses, outs)
            if prev is not None:
                chains[e.out] = prev + [(kind, e, j, None)]
                break
    todo = {id(c[-1][1]): c for c in chains.values() if _pays(c)}
    if not todo:
        return g
    return _rewrite(g, todo)


def _open(chains: dict, base: Any, n_uses: dict, outs: set) -> list | None:
    """The chain ending in `base` if a next link may extend it (base read there only)."""
    if base.__class__ is not Var or n_uses.get(base) != 1 or base in outs:
        return None
    return chains.pop(base, None)


def _pays(chain: list) -> bool:
    """A scaling with a scatter after it (products of constants alone are left as written:
    their rounding is the program's)."""
    return any(k != _SCALE for k, *_ in chain[1:])


def _rewrite(g: Graph, todo: dict) -> Graph:
    weight: dict[int, tuple] = {}  # a link's eqn id -> (the product of the scalings after
    first: dict[int, Any] = {}  # it, its base's position); the first link's -> all of them
    drop: set[int] = set()
    for chain in todo.values():
        w = np.ones((), chain[0][3].dtype)
        for kind, e, j, c in reversed(chain):
            if kind == _SCALE:
                w = w * c
                drop.add(id(e))
            else:
                weight[id(e)] = w, j
        first[id(chain[0][1])] = w
    defs = {e.out: e for e in g.eqns}
    sub: dict[Var, Any] = {}
    eqns: list[Eqn] = []
    for e in g.eqns:
        ins = tuple(sub.get(a, a) if a.__class__ is Var else a for a in e.inputs)
        if id(e) in first:  # (the chain's first value, scaled by everything)
            base = ins[e.inputs.index(_scale(e)[0])]
            sub[e.out] = _emit(eqns, P.mul, (base, Const(first[id(e)])), e)
            continue
        if id(e) in drop:
            sub[e.out] = ins[e.inputs.index(_scale(e)[0])]
            continue
        wj = weight.get(id(e))
        if wj is not None and wj[0] != 1:
            ins = _scaled(eqns, e, ins, wj, defs)
        eqns.append(e if ins == e.inputs else Eqn(e.prim, ins, e.params, e.out, e.src))
    outputs = tuple(sub.get(a, a) if a.__class__ is Var else a for a in g.outputs)
    return g.replace(eqns=tuple(eqns), outputs=outputs)


def _scaled(eqns: list[Eqn], e: Eqn, ins: tuple, wj: tuple, defs: dict) -> tuple:
    """e's inputs with its scatter's values scaled by w (the scatter read here only)."""
    w, j = wj
    if e.prim is P.setitem_add:
        return ins[0], _emit(eqns, P.mul, (ins[1], Const(w)), e)
    s = defs[e.inputs[1 - j]]
    v = _emit(eqns, P.mul, (s.inputs[0], Const(w)), e)
    new = _emit(eqns, P.scatter_add_along, (v, *s.inputs[1:]), e, s.params)
    return (ins[0], new) if j == 0 else (new, ins[1])


def _emit(eqns: list[Eqn], prim: P.Primitive, ins: tuple, e: Eqn, params: Any = None) -> Var:
    ps = Params(params or {})
    v = Var(prim.shape_rule(*[a.aval for a in ins], **ps))
    eqns.append(Eqn(prim, ins, ps, v, e.src))
    return v


__all__ = ["decayed_scatters", "scale_scatters"]
