"""Stable log-domain forms: hand-written softmax and logsumexp become the fused, stable
primitives (one pass, no overflow for large inputs, and the fused VJP `p * (g - sum(g * p))`),
and log(logistic(x)) becomes -logaddexp(0, -x)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn
from .engine import Ctx


def _kept(a: Atom, ctx: Any, prim: P.Primitive) -> tuple[Atom, int] | None:
    """a = reshape(prim(x, axes=(k,))) back to keepdims form (or broadcast of that):
    returns (x, k)."""
    b = ctx.def_of(a, P.broadcast_to)
    a = b.inputs[0] if b else a
    r = ctx.def_of(a, P.reshape)
    red = ctx.def_of(r.inputs[0] if r else a, prim)
    if red is None or len(red.params["axes"]) != 1:
        return None
    k = red.params["axes"][0]
    x = red.inputs[0]
    if r is not None and r.out.aval.shape != x.aval.shape[:k] + (1,) + x.aval.shape[k + 1:]:
        return None
    if r is None and k != 0:  # without keepdims, only a leading axis broadcasts back in place
        return None
    return x, k


def _shifted(d: Atom, ctx: Any) -> tuple[Atom, int | None]:
    """d = x - max(x, k, keepdims) gives (x, k); anything else is itself (no shift)."""
    s = ctx.def_of(d, P.sub)
    if s is not None:
        m = _kept(s.inputs[1], ctx, P.reduce_max)
        if m is not None and m[0] is s.inputs[0]:
            return s.inputs[0], m[1]
    return d, None


def softmax_pattern(e: Eqn, ctx: Any) -> Any:
    """exp(x - max(x)) / sum(exp(x - max(x))) along one axis -> softmax(x)."""
    num, den = e.inputs
    ex = ctx.def_of(num, P.exp)
    s = _kept(den, ctx, P.reduce_sum)
    if ex is None or s is None or s[0] is not num or e.out.aval != num.aval:
        return None
    x, k = _shifted(ex.inputs[0], ctx)
    if k is not None and k != s[1] or 0 in x.aval.shape:  # (softmax shifts by the max,
        return None  # which an empty axis has not: NumPy's exp / sum of it is empty)
    return P.softmax, (x,), {"axis": s[1]}


def _log_sum_exp(lg: Eqn | None, ctx: Any) -> tuple[Atom, int | None, int] | None:
    """lg = log(sum(exp(d), axis)), the sum possibly reshaped to keepdims form: returns
    (x, the max-shift axis of d = x - max(x) or None, the summed axis)."""
    if lg is None:
        return None
    r = ctx.def_of(lg.inputs[0], P.reshape)
    red = ctx.def_of(r.inputs[0] if r else lg.inputs[0], P.reduce_sum)
    ex = ctx.def_of(red.inputs[0], P.exp) if red is not None else None
    if ex is None or len(red.params["axes"]) != 1:
        return None
    x, k = _shifted(ex.inputs[0], ctx)
    return x, k, red.params["axes"][0]


def _max_of(m: Atom, ctx: Any) -> Eqn | None:
    r = ctx.def_of(m, P.reshape)
    return ctx.def_of(r.inputs[0] if r else m, P.reduce_max)


def logsumexp_pattern(e: Eqn, ctx: Any) -> Any:
    """log(sum(exp(x - m))) + m with m = max(x), or plain log(sum(exp(x))), along one axis ->
    logsumexp(x) (reshaped when written in keepdims form)."""
    if e.prim is P.log:
        found, m = _log_sum_exp(e, ctx), None
    else:
        a, m = e.inputs
        ra = ctx.def_of(a, P.reshape)
        found = _log_sum_exp(ctx.def_of(ra.inputs[0] if ra else a, P.log), ctx)
    if found is None:
        return None
    x, k, axis = found
    if m is None and k is not None:
        return None  # log(sum(exp(x - m))) alone is not logsumexp(x)
    if m is not None:
        mx = _max_of(m, ctx)
        if k != axis or mx is None or mx.inputs[0] is not x or mx.params["axes"] != (axis,) \
                or e.inputs[0].aval != e.inputs[1].aval:
            return None
    if e.out.aval.dtype != x.aval.dtype or 0 in x.aval.shape:  # (log(0) = -inf over an
        return None  # empty axis, where a fused logsumexp would take the max of nothing)
    lse = ctx.emit(P.logsumexp, (x,), {"axis": axis}, e.src)
    return (P.reshape, (lse,), {"shape": e.out.aval.shape}) \
        if lse.aval.shape != e.out.aval.shape else lse


def log_of_logistic(e: Eqn, c: Ctx) -> object:
    """log(logistic(x)) = -logaddexp(0, -x): one pass instead of two, and exact where the
    logistic rounds to 0 (x < -745: log gave -inf) or to 1 (x > 37: log gave 0)."""
    s = c.def_of(e.inputs[0], P.logistic)
    if s is None or c.n_uses(e.inputs[0]) != 1 or e.out.aval.dtype.kind != "f":
        return None
    x = s.inputs[0]
    zero = Const(np.asarray(0, e.out.aval.dtype))
    y = c.emit(P.logaddexp, (zero, c.emit(P.neg, (x,), {}, e.src)), {}, e.src)
    return (P.neg, (y,), {}) if y.aval == e.out.aval else None
