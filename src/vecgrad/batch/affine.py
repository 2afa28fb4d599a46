"""Affine forms: a step's values written as `v = A * c + B` in its one carry c, A and B
computed from the step's other inputs only. A carry whose new value has such a form is a scan
(`cumsum` when A is 1, `cumprod` when B is 0, `affine_scan` otherwise; `c' = max(c, x)` is
`cummax`). Forms are built along the step: sums, differences, products and quotients by
carry-free values, negation, a select between the carry and a new value (`where(m, x, c)`:
A = where(m, 0, 1)), and basic reads of a value that holds the carry broadcast over leading
axes (a window's rows)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Params, Var

ONE, ZERO = "one", "zero"  # the trivial parts of an affine form


def affine(plan: Any) -> tuple[str, dict, list[Eqn]] | None:
    """For a single carry updated affinely: (kind, forms, new equations), where forms maps
    each core value v to (A, B) with v = A * c + B, A and B computed from the inputs by the
    new equations (or ONE/ZERO)."""
    if len(plan.live) != 1:
        return None
    c = plan.carry[plan.live[0]]
    if c.aval.dtype.kind != "f":
        return None
    new: list[Eqn] = []

    def op(prim: P.Primitive, *xs: Atom, **params: Any) -> Atom:
        aval = prim.shape_rule(*[x.aval for x in xs], **params)
        e = Eqn(prim, tuple(xs), Params.of(params) if params else Params(), Var(aval), None)
        new.append(e)
        return e.out

    def scale(f: Any, k: Atom) -> Any:  # f * k
        return ZERO if f is ZERO else k if f is ONE else op(P.mul, f, k)

    def plus(f: Any, g: Any, minus: bool = False) -> Any:  # f + g, or f - g
        if g is ZERO:
            return f
        if f is ZERO:
            return op(P.neg, g if g is not ONE else one(c)) if minus else g
        f = one(c) if f is ONE else f
        g = one(c) if g is ONE else g
        return op(P.sub if minus else P.add, f, g)
    forms: dict[Var, tuple[Any, Any]] = {c: (ONE, ZERO)}
    out = plan.body.outputs[plan.live[0]]
    if len(plan.core) == 1 and plan.core[0].prim in (P.maximum, P.minimum) and \
            plan.core[0].out is out and c in plan.core[0].inputs:
        e = plan.core[0]
        x = e.inputs[1] if e.inputs[0] is c else e.inputs[0]
        if x is not c and e.out.aval == c.aval:
            return ("cummax" if e.prim is P.maximum else "cummin",
                    {c: (ONE, ZERO), out: (ONE, x)}, new)
    for e in plan.core:
        fs = [forms.get(a) if isinstance(a, Var) else None for a in e.inputs]
        if not holds(e.out.aval, c.aval):
            return None
        p = e.prim
        if p is P.getitem and fs[0] is not None:
            # v[idx] with idx full over the carry's axes: (A_v and B_v broadcast)[idx]
            v = e.inputs[0].aval.shape
            idx = e.params["idx"]
            k = len(c.aval.shape)
            if len(idx) != len(v) or any(not isinstance(i, P.Sl) or i != P.Sl(0, d, 1) for
                                         i, d in zip(idx[len(v) - k:], c.aval.shape)):
                return None
            forms[e.out] = tuple(x if x is ONE or x is ZERO else op(
                P.getitem, x if x.aval.shape == v else op(P.broadcast_to, x, shape=v), idx=idx)
                for x in fs[0])
        elif p in (P.add, P.sub) and any(fs):
            (u, fu), (v, fv) = zip(e.inputs, fs)
            fu = fu or (ZERO, u)
            fv = fv or (ZERO, v)
            forms[e.out] = (plus(fu[0], fv[0], p is P.sub), plus(fu[1], fv[1], p is P.sub))
        elif p in (P.mul, P.div) and sum(f is not None for f in fs) == 1 and \
                (fs[0] is not None or p is P.mul):
            k = e.inputs[1] if fs[0] is not None else e.inputs[0]
            f = fs[0] or fs[1]
            if p is P.div:
                forms[e.out] = tuple(ZERO if x is ZERO else op(P.div, one(c) if x is ONE
                                                                  else x, k) for x in f)
            else:
                forms[e.out] = (scale(f[0], k), scale(f[1], k))
        elif p is P.neg:
            forms[e.out] = tuple(ZERO if x is ZERO else op(P.neg, one(c) if x is ONE
                                                             else x) for x in fs[0])
        elif p is P.where and fs[0] is None and (fs[1] or fs[2]):
            # where(m, f, g) = where(m, A_f, A_g) * c + where(m, B_f, B_g): a select of the
            # carry and a new value is affine with a 0/1 coefficient (the scan composes
            # such steps exactly)
            m = e.inputs[0]
            fu, fv = (f or (ZERO, a) for f, a in zip(fs[1:], e.inputs[1:]))
            forms[e.out] = tuple(ZERO if x is ZERO and y is ZERO else op(
                P.where, m, zero(c) if x is ZERO else one(c) if x is ONE else x,
                zero(c) if y is ZERO else one(c) if y is ONE else y)
                for x, y in zip(fu, fv))
        else:
            return None
    A, B = forms.get(out, (None, None))
    if A is None or (A is ONE and B is ZERO):
        return None
    kind = "cumsum" if A is ONE else "cumprod" if B is ZERO else "affine_scan"
    return kind, forms, new


def holds(v: Any, c: Any) -> bool:
    """A value of aval v can be an affine form in a carry of aval c: c's dtype, and c's
    shape its trailing axes (the carry broadcast over leading ones, as a window's rows)."""
    return v.dtype == c.dtype and v.shape[len(v.shape) - len(c.shape):] == c.shape


def one(c: Var) -> Const:
    return Const(np.ones((), c.aval.dtype))


def zero(c: Var) -> Const:
    return Const(np.zeros((), c.aval.dtype))


__all__ = ["ONE", "ZERO", "affine", "holds", "one", "zero"]
