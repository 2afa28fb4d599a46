"""Logistic-loss forms as users write them, made stable: the sigmoid written out,
1 / (1 + exp(-z)), becomes the logistic primitive (the same values, bit for bit: its impl is
that formula; its VJP s (1 - s) is finite where exp(-z) overflows, where the written form's
gradient is inf * 0 = NaN), and the log of the complement of a logistic, log(1 - s) or
log1p(-s) (binary cross-entropy's second term), becomes -logaddexp(0, z): NumPy's form
cancels to log(0) = -inf for z > 37 and loses digits well before, the new one is exact.

log(logistic(z)) itself is softmax.py's rule; the three together take
y log(s) + (1 - y) log(1 - s) to -y softplus(-z) - (1 - y) softplus(z)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn
from .engine import Ctx


def _is_one(a: Atom) -> bool:
    return isinstance(a, Const) and a.aval.ndim == 0 and a.value.dtype.kind in "fiub" and \
        a.value == 1


def _float(e: Eqn) -> bool:
    return e.out.aval.dtype.kind == "f"


def logistic_of_exp(e: Eqn, c: Ctx) -> Any:
    """1 / (1 + exp(u)) = logistic(-u), either order of the sum, the sum read only here."""
    if not (_float(e) and _is_one(e.inputs[0])):
        return None
    s = c.def_of(e.inputs[1], P.add)
    if s is None or c.n_uses(e.inputs[1]) != 1:
        return None
    for one, ex in (s.inputs, s.inputs[::-1]):
        x = c.def_of(ex, P.exp)
        if _is_one(one) and x is not None:
            break
    else:
        return None
    u = x.inputs[0]
    if u.aval != e.out.aval:  # (no broadcast of the sum, no promotion past u's dtype)
        return None
    n = c.def_of(u, P.neg)
    z = n.inputs[0] if n is not None and n.inputs[0].aval == u.aval else \
        c.emit(P.neg, (u,), {}, e.src)
    return P.logistic, (z,), {}


def log_of_complement(e: Eqn, c: Ctx) -> Any:
    """log(1 - logistic(z)) = log1p(-logistic(z)) = -logaddexp(0, z)."""
    if not _float(e):
        return None
    if e.prim is P.log:
        d = c.def_of(e.inputs[0], P.sub)
        if d is None or not _is_one(d.inputs[0]):
            return None
        s = d.inputs[1]
    else:
        n = c.def_of(e.inputs[0], P.neg)
        if n is None:
            return None
        s = n.inputs[0]
    q = c.def_of(s, P.logistic)
    if q is None or q.inputs[0].aval != e.out.aval:
        return None
    zero = Const(np.asarray(0, e.out.aval.dtype))
    return P.neg, (c.emit(P.logaddexp, (zero, q.inputs[0]), {}, e.src),), {}


__all__ = ["log_of_complement", "logistic_of_exp"]
