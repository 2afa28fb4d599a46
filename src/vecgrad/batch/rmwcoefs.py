"""The coefficient of a read in a value computed from it: is `v` affine in x[p], v = a x[p] +
b, with a a constant or c0 + c1 s for one 0-d value s (a decay rate passed in)? rmwchains
asks it of each read-modify-write's value; its links' rates are these coefficients, and
links compose by their product."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn, Var

ZERO = (0.0, 0.0, None)


def _coef(a: Any, read: Var, start: int, defs: dict, order: dict, dep: dict) -> tuple | None:
    """The coefficient of `read` in a, where a is affine in it, as (c0, c1, s): c0 + c1 s,
    s a 0-d value that does not depend on it (a decay rate passed in) or None (None: not
    affine, or not provably so; `ZERO`: a does not depend on it). Values defined before the
    read do not depend on it (the trace is in order). `dep` collects the coefficients of the
    values after it (never zero for a value that depends on it: such a value is refused, as
    its equations would be dropped with the read)."""
    if a is read:
        return 1.0, 0.0, None
    if a.__class__ is not Var or order.get(a, -1) <= start:
        return ZERO
    c = dep.get(a)
    if c is not None:
        return c
    d = defs[a]
    ins = [_coef(x, read, start, defs, order, dep) for x in d.inputs]
    if any(c is None for c in ins):
        return None
    moved = [c is not ZERO for c in ins]
    c = _rule(d, ins, moved) if any(moved) else ZERO
    if c is None or (any(moved) and not nonzero(c)):
        return None
    dep[a] = c
    return c


def nonzero(c: tuple) -> bool:
    return bool(c[0] or (c[1] and c[2] is not None))


def _scalar(a: Any) -> float | None:
    if a.__class__ is Const and not a.value.shape and a.value.dtype.kind == "f" and \
            np.isfinite(a.value):
        return float(a.value)
    return None


def _sum(p: tuple, q: tuple, k: float) -> tuple | None:
    """p + k q (k = 1 or -1), one symbol at most."""
    if p[2] is not None and q[2] is not None and p[2] is not q[2]:
        return None
    return p[0] + k * q[0], p[1] + k * q[1], p[2] if p[2] is not None else q[2]


def _rule(d: Eqn, c: list, moved: list) -> tuple | None:
    """The coefficient of d's result from its operands' (some operand depends on the read)."""
    p = d.prim
    if p is P.add or p is P.sub:
        return _sum(c[0], c[1], 1.0 if p is P.add else -1.0)
    if p is P.reshape:
        return c[0]
    if p is P.neg:
        return -c[0][0], -c[0][1], c[0][2]
    if (p is P.mul or p is P.div) and not moved[1]:
        return _scaled(c[0], d.inputs[1], p is P.div)
    if p is P.mul and not moved[0]:
        return _scaled(c[1], d.inputs[0], False)
    return None


def _scaled(c: tuple, k: Any, inverse: bool) -> tuple | None:
    """c times (or over) the independent operand k: a finite constant, or (times) a 0-d float
    value that becomes the symbol."""
    v = _scalar(k)
    if v is not None:
        if inverse:
            if not v:
                return None
            v = 1.0 / v
        return c[0] * v, c[1] * v, c[2]
    if inverse or c[2] is not None or k.__class__ is not Var or k.aval.shape or \
            k.aval.dtype.kind != "f":
        return None
    return 0.0, c[0], k


def plus_one(c: tuple) -> tuple:
    """x[p] + (c x[p] + b): the coefficient 1 + c."""
    return c[0] + 1.0, c[1], c[2]


def _same_rate(p: tuple, q: tuple) -> bool:
    return p[0] == q[0] and p[1] == q[1] and p[2] is q[2]


def joins(p: tuple, q: tuple) -> bool:
    """Links of rates p and q join: one rate, or two constants (`b[k] *= 0.95; b[k] += x`:
    a chain of mixed rates, which rmwreads scans)."""
    return _same_rate(p, q) or p[2] is None and q[2] is None


def mixed(chain: list) -> bool:
    return any(not _same_rate(ln.a, chain[0].a) for ln in chain)


def read_coef(vals: Any, read: Var, defs: dict, order: dict, zero: bool = False
            ) -> tuple | None:
    """(a, the variables that depend on the read) of vals = a read + b, or None; with `zero`,
    a may be 0 (vals does not read x[p]: `s[k] += x` after a read of s[k] used elsewhere)."""
    dep: dict = {}
    a = _coef(vals, read, order[read], defs, order, dep)
    if a is None or not (zero or nonzero(a)) or \
            (a[2] is not None and a[2].aval.dtype != vals.aval.dtype):
        return None
    return a, {v for v, c in dep.items() if c is not ZERO}


def product(p: tuple, q: tuple) -> tuple | None:
    """The rate (c0 + c1 s)(d0 + d1 s) with one symbol at most: None where both have one."""
    if p[1] and p[2] is not None and q[1] and q[2] is not None:
        return None
    if p[2] is None or not p[1]:
        return p[0] * q[0], p[0] * q[1], q[2]
    return p[0] * q[0], q[0] * p[1], p[2]


__all__ = ["ZERO", "joins", "mixed", "nonzero", "plus_one", "product", "read_coef"]
