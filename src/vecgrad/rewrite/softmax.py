"""Stable log-domain forms: hand-written softmax and logsumexp become the fused, stable
primitives (one pass, no overflow for large inputs, and the fused VJP `p * (g - sum(g * p))`),
and log(logistic(x)) becomes -logaddexp(0, -x).

The primitives take one axis; a hand-written form over a run of adjacent axes (`np.max(X)`
of a matrix, then `np.sum(np.exp(X - m))`) runs on x with that run reshaped into one axis,
which is a view."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn
from .engine import Ctx


def _run(axes: tuple[int, ...]) -> bool:
    """Whether the reduced axes are one run of adjacent axes (then one reshape joins them)."""
    return bool(axes) and tuple(axes) == tuple(range(axes[0], axes[0] + len(axes)))


def _kept(a: Atom, ctx: Any, prim: P.Primitive) -> tuple[Atom, tuple[int, ...]] | None:
    """a = reshape(prim(x, axes)) back to keepdims form (or broadcast of that), or prim(x,
    axes) itself where the axes lead (broadcasting puts the result back in place): returns
    (x, axes), the axes one run."""
    b = ctx.def_of(a, P.broadcast_to)
    a = b.inputs[0] if b else a
    r = ctx.def_of(a, P.reshape)
    red = ctx.def_of(r.inputs[0] if r else a, prim)
    if red is None or not _run(red.params["axes"]):
        return None
    axes = tuple(red.params["axes"])
    x = red.inputs[0]
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.aval.shape))
    if r is not None and r.out.aval.shape != kept:
        return None
    if r is None and axes[0] != 0:  # without keepdims, only leading axes broadcast back
        return None
    return x, axes


def _shifted(d: Atom, ctx: Any) -> tuple[Atom, tuple[int, ...] | None]:
    """d = x - max(x, axes, keepdims) gives (x, axes); anything else is itself (no shift)."""
    s = ctx.def_of(d, P.sub)
    if s is not None:
        m = _kept(s.inputs[1], ctx, P.reduce_max)
        if m is not None and m[0] is s.inputs[0]:
            return s.inputs[0], m[1]
    return d, None


def _joined(x: Atom, axes: tuple[int, ...], ctx: Ctx, src: Any) -> tuple[Atom, int]:
    """x with the run of axes reshaped into one (x itself for one axis), and that axis."""
    if len(axes) == 1:
        return x, axes[0]
    s = x.aval.shape
    n = int(np.prod([s[i] for i in axes], dtype=np.int64))
    shape = s[:axes[0]] + (n,) + s[axes[-1] + 1:]
    return ctx.emit(P.reshape, (x,), {"shape": shape}, src), axes[0]


def softmax_pattern(e: Eqn, ctx: Any) -> Any:
    """exp(x - max(x)) / sum(exp(x - max(x))) along a run of axes -> softmax(x)."""
    num, den = e.inputs
    ex = ctx.def_of(num, P.exp)
    s = _kept(den, ctx, P.reduce_sum)
    if ex is None or s is None or s[0] is not num or e.out.aval != num.aval:
        return None
    x, axes = _shifted(ex.inputs[0], ctx)
    if axes is not None and axes != s[1] or 0 in x.aval.shape:  # (softmax shifts by the
        return None  # max, which an empty axis has not: NumPy's exp / sum of it is empty)
    if len(s[1]) == 1:
        return P.softmax, (x,), {"axis": s[1][0]}
    j, axis = _joined(x, s[1], ctx, e.src)
    p = ctx.emit(P.softmax, (j,), {"axis": axis}, e.src)
    return P.reshape, (p,), {"shape": e.out.aval.shape}


def _log_sum_exp(lg: Eqn | None, ctx: Any) -> tuple[Atom, tuple | None, tuple] | None:
    """lg = log(sum(exp(d), axes)), the sum possibly reshaped to keepdims form: returns
    (x, the max-shift axes of d = x - max(x) or None, the summed axes, one run)."""
    if lg is None:
        return None
    r = ctx.def_of(lg.inputs[0], P.reshape)
    red = ctx.def_of(r.inputs[0] if r else lg.inputs[0], P.reduce_sum)
    ex = ctx.def_of(red.inputs[0], P.exp) if red is not None else None
    if ex is None or not _run(red.params["axes"]):
        return None
    x, k = _shifted(ex.inputs[0], ctx)
    return x, k, tuple(red.params["axes"])


def _max_of(m: Atom, ctx: Any) -> Eqn | None:
    r = ctx.def_of(m, P.reshape)
    return ctx.def_of(r.inputs[0] if r else m, P.reduce_max)


def logsumexp_pattern(e: Eqn, ctx: Any) -> Any:
    """log(sum(exp(x - m))) + m (or m + log(...)) with m = max(x), or plain log(sum(exp(x))),
    along a run of axes -> logsumexp(x) (reshaped when written in keepdims form)."""
    if e.prim is P.log:
        found, m = _log_sum_exp(e, ctx), None
    else:  # (either operand order: users write m + log(...) as often as log(...) + m)
        found = m = None
        for a, m in (e.inputs, e.inputs[::-1]):
            ra = ctx.def_of(a, P.reshape)
            found = _log_sum_exp(ctx.def_of(ra.inputs[0] if ra else a, P.log), ctx)
            if found is not None:
                break
    if found is None:
        return None
    x, k, axes = found
    if m is None and k is not None:
        return None  # log(sum(exp(x - m))) alone is not logsumexp(x)
    if m is not None:
        mx = _max_of(m, ctx)
        if k != axes or mx is None or mx.inputs[0] is not x or tuple(mx.params["axes"]) != axes \
                or e.inputs[0].aval != e.inputs[1].aval:
            return None
    if e.out.aval.dtype != x.aval.dtype or 0 in x.aval.shape:  # (log(0) = -inf over an
        return None  # empty axis, where a fused logsumexp would take the max of nothing)
    j, axis = _joined(x, axes, ctx, e.src)
    lse = ctx.emit(P.logsumexp, (j,), {"axis": axis}, e.src)
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


def _finite_const(a: Atom, like: Atom) -> bool:
    return isinstance(a, Const) and a.value.dtype == like.aval.dtype and \
        bool(np.isfinite(a.value).all())


def logistic_share(e: Eqn, c: Ctx) -> object:
    """where(x == L, 1, exp(x - L)) = logistic(x - k) for L = logaddexp(x, k), k a finite
    constant: logaddexp's VJP (x's share of the sum, 1 where x is the result) against a
    constant is a logistic, one pass instead of four (eq, sub, exp, where). Equal values:
    e^x / (e^k + e^x) = logistic(x - k); 1 at x = inf and wherever x dominates (logistic
    rounds to 1 there), 0 at x = -inf, nan at nan."""
    cond, one, ex = e.inputs
    if not (isinstance(one, Const) and one.value.ndim == 0 and one.value == 1):
        return None
    q, x_exp = c.def_of(cond, P.eq), c.def_of(ex, P.exp)
    s = c.def_of(x_exp.inputs[0], P.sub) if x_exp is not None else None
    if q is None or s is None or tuple(q.inputs) != tuple(s.inputs):
        return None
    x, lse = s.inputs
    la = c.def_of(lse, P.logaddexp)
    if la is None or x not in la.inputs or e.out.aval.dtype.kind != "f":
        return None
    k = la.inputs[1] if la.inputs[0] is x else la.inputs[0]
    if not _finite_const(k, x) or x.aval != e.out.aval:
        return None
    d = x if not k.value.any() else c.emit(P.sub, (x, k), {}, e.src)
    return (P.logistic, (d,), {}) if d.aval == e.out.aval else None
