"""Identities: neutral elements, involutions, constants folded, contractions by ones.

x * 1, x + 0, -(-x), transpose(transpose(x)), reshape(reshape(x)), an einsum by ones or of an
einsum: forms that tracing, batching and the VJP rules leave behind, each replaced by the
value it stands for (exact: no rounding is added or removed).
"""
from __future__ import annotations

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn, Var
from ..primitives.linalg import make_spec, parse_spec
from .contract import inline_subscripts
from .engine import Ctx


def no_axes(e: Eqn, c: Ctx) -> object:
    x = e.inputs[0]
    return x if not e.params["axes"] and e.out.aval == x.aval else None


def einsum_of_einsum(e: Eqn, c: Ctx) -> object:
    """einsum('ii->i', einsum('ji,jk->ik', a, b)) = einsum('ji,ji->i', a, b): a reindexing
    of a contraction's result (diag(A.T @ B), its sum, its transpose) is one contraction,
    with no intermediate product."""
    (outer,), out = parse_spec(e.params["spec"])
    s = c.def_of(e.inputs[0], P.einsum)
    if s is None or c.n_uses(e.inputs[0]) != 1 or s.out.aval.dtype != e.out.aval.dtype:
        return None
    ins, inner = parse_spec(s.params["spec"])
    if len(set(inner)) != len(inner):
        return None
    return P.einsum, s.inputs, {"spec": make_spec(inline_subscripts([outer], out, 0, ins,
                                                                     inner), out)}


def same_shape(e: Eqn, c: Ctx) -> object:
    return e.inputs[0] if e.inputs[0].aval == e.out.aval else None


def reshape_reshape(e: Eqn, c: Ctx) -> object:
    s = c.def_of(e.inputs[0], P.reshape)
    return (P.reshape, (s.inputs[0],), e.params) if s else None


def transpose_id(e: Eqn, c: Ctx) -> object:
    return e.inputs[0] if e.params["perm"] == tuple(range(len(e.params["perm"]))) else None


def transpose_transpose(e: Eqn, c: Ctx) -> object:
    s = c.def_of(e.inputs[0], P.transpose)
    if s is None:
        return None
    return P.transpose, (s.inputs[0],), {"perm": tuple(s.params["perm"][p]
                                                       for p in e.params["perm"])}


def _scalar(a: object, value: float) -> bool:
    return isinstance(a, Const) and a.value.ndim == 0 and a.value == value


def einsum_by_one(e: Eqn, c: Ctx) -> object:
    ins, out = parse_spec(e.params["spec"])
    keep = [i for i, (s, a) in enumerate(zip(ins, e.inputs)) if not (s == "" and _scalar(a, 1))]
    if len(keep) == len(ins) or not keep or \
            np.result_type(*[e.inputs[i].aval.dtype for i in keep]) != e.out.aval.dtype:
        return None
    if len(keep) == 1 and ins[keep[0]] == out and e.inputs[keep[0]].aval == e.out.aval:
        return e.inputs[keep[0]]
    return P.einsum, tuple(e.inputs[i] for i in keep), {
        "spec": make_spec([ins[i] for i in keep], out)}


def _ones(a: object) -> bool:
    return isinstance(a, Const) and a.value.size <= 1 << 20 and bool(np.all(a.value == 1))


def einsum_by_ones(e: Eqn, c: Ctx) -> object:
    """An operand of ones multiplies by one: drop it (its letters that no other operand has
    are axes of the output: a broadcast view)."""
    ins, out = parse_spec(e.params["spec"])
    for i, a in enumerate(e.inputs):
        if ins[i] == "" or len(ins) < 2 or not _ones(a):
            continue
        rest = [j for j in range(len(ins)) if j != i]
        others = set("".join(ins[j] for j in rest))
        alone = [ch for ch in ins[i] if ch not in others]
        if any(ch not in out for ch in alone) or len(set(ins[i])) != len(ins[i]) or \
                np.result_type(*[e.inputs[j].aval.dtype for j in rest]) != e.out.aval.dtype:
            continue  # (a letter summed over ones alone multiplies by its length)
        sub = "".join(ch for ch in out if ch not in alone)
        x = c.emit(P.einsum, tuple(e.inputs[j] for j in rest),
                   {"spec": make_spec([ins[j] for j in rest], sub)}, e.src)
        if not alone:
            return x
        kd = tuple(1 if ch in alone else d for ch, d in zip(out, e.out.aval.shape))
        x = c.emit(P.reshape, (x,), {"shape": kd}, e.src)
        return P.broadcast_to, (x,), {"shape": e.out.aval.shape}
    return None


def times_one(e: Eqn, c: Ctx) -> object:
    for x, y in (e.inputs, e.inputs[::-1]):
        if _scalar(y, 1) and x.aval == e.out.aval:
            return x
    return None


def plus_zero(e: Eqn, c: Ctx) -> object:
    """(also zeros made by `full`: the base of a buffer that batching stacked, then added
    into whole)"""
    for x, y in (e.inputs, e.inputs[::-1]):
        if x.aval == e.out.aval and (_scalar(y, 0) or _made_zeros(y, c)):
            return x
    return None


def _made_zeros(a: object, c: Ctx) -> bool:
    d = c.def_of(a, P.full) if a.__class__ is Var else None
    return d is not None and d.params["value"] == 0


def uniform_operand(e: Eqn, c: Ctx) -> object:
    """A constant operand whose elements are all equal (a folded `broadcast_to(1.0)`, the
    cotangent of a sum, also a [1, 1] one) becomes one 0-d constant when broadcasting gives the
    same result:
    no array of ones to keep and read, and `x * 1` then goes."""
    ins = list(e.inputs)
    changed = False
    for k, a in enumerate(ins):
        if isinstance(a, Const) and a.value.ndim and a.value.size:
            v = a.value.reshape(-1)
            if _one_value(v) and not np.isnan(v[0]):
                ins[k] = Const(np.asarray(v[0], a.value.dtype))
                changed = True
    if not changed or e.prim.shape_rule(*[a.aval for a in ins], **e.params) != e.out.aval:
        return None
    return e.prim, tuple(ins), e.params


def _one_value(v: np.ndarray) -> bool:
    """All elements the same bits (-0.0 and 0.0 differ: arctan2, copysign and 1 / x tell)."""
    b = np.ascontiguousarray(v).view(np.uint8).reshape(v.size, -1)
    return bool((b == b[0]).all())


def periodic_operand(e: Eqn, c: Ctx) -> object:
    """f(reshape(x), C) = reshape(f(x, C')) where C, seen in x's shape, repeats along some
    axes and C' is one period (those axes of length 1): batching stacks a Python list of
    constant coefficients once per iteration (`X[i, j] * COEF[j]` flattened over (i, j));
    one row of them broadcasts the same values, and the product in x's shape lets the
    reshapes cancel (then sum(x * C', j) is a contraction). Exact: the same products."""
    if len(e.inputs) != 2:
        return None
    for k in (0, 1):
        r, a = c.def_of(e.inputs[k], P.reshape), e.inputs[1 - k]
        if r is not None and isinstance(a, Const) and a.aval.shape == e.out.aval.shape:
            break
    else:
        return None
    x = r.inputs[0]
    if x.aval.ndim < 2 or not a.value.size or e.inputs[k].aval.shape != e.out.aval.shape:
        return None
    v = a.value.reshape(x.aval.shape)
    for ax in range(v.ndim):
        if v.shape[ax] > 1 and (v == v.take([0], axis=ax)).all():
            v = v.take([0], axis=ax)
    if v.size == a.value.size:
        return None
    ins = [x, Const(v)] if k == 0 else [Const(v), x]
    inner = c.emit(e.prim, tuple(ins), dict(e.params), e.src)
    if inner.aval.shape != x.aval.shape:
        return None
    return P.reshape, (inner,), {"shape": e.out.aval.shape}


def neg_neg(e: Eqn, c: Ctx) -> object:
    n = c.def_of(e.inputs[0], P.neg)
    return same(e, n.inputs[0]) if n is not None else None


def double(e: Eqn, c: Ctx) -> object:
    x, y = e.inputs
    if x is y and x.aval.dtype.kind == "f":
        c.dropped_use(x)
        return P.mul, (x, Const(np.asarray(2, x.aval.dtype))), {}
    return None


def _view(e: Eqn) -> bool:
    """Whether e's result is a view of its one operand (no new elements)."""
    return e.prim is P.reshape or e.prim is P.transpose or \
        e.prim is P.getitem and P.is_basic(e.params["idx"])


def fold(e: Eqn, c: Ctx) -> object:
    if not e.inputs or not all(isinstance(a, Const) for a in e.inputs):
        return None
    view = _view(e)
    if e.out.aval.size > 1 << 16 and not view:  # keep big results out of the compiled
        return None  # constants (a view of a constant adds none: a per-member coefficient
    with np.errstate(all="ignore"):  # vector reshaped must stay a constant at any size)
        v = e.prim.impl(*[a.value for a in e.inputs], **e.params)
    if view and isinstance(v, np.ndarray) and v.ndim and v.dtype == e.out.aval.dtype:
        v = v.view()  # read-only, so that nothing writes into the constant it views
        v.flags.writeable = False
    else:
        v = np.array(v, dtype=e.out.aval.dtype)  # (a copy, never a view of an input)
    return Const(v) if v.shape == e.out.aval.shape else None


def same(e: Eqn, a: object) -> object:
    """a, where it has the type of e's result (a rule's replacement by an existing value)."""
    return a if a.aval == e.out.aval else None


def where_of_where(e: Eqn, c: Ctx) -> object:
    """where(m, where(m, x, y), z) = where(m, x, z) and where(m, x, where(m, y, z)) =
    where(m, x, z): the inner selection's other branch is never read (a masked read's fill
    then masked again, x[m] summed: its gradient's two selections). Only where the result's
    shape and dtype stay the same."""
    m, a, b = e.inputs
    for pos in (1, 2):
        s = c.def_of(e.inputs[pos], P.where)
        if s is None or s.inputs[0] is not m:
            continue
        ins = (m, s.inputs[pos], b) if pos == 1 else (m, a, s.inputs[pos])
        if P.where.shape_rule(*[x.aval for x in ins]) == e.out.aval:
            return P.where, ins, {}
    return None
