"""Complex numbers: the parts of a real value, and conj cancelling itself.

conj, real and imag of a real array are the array and zeros; conj(conj(z)) is z; and the
conj that abs's VJP puts on a cotangent cancels the conj of a conj's or an FFT's VJP.
All exact.
"""
from __future__ import annotations

from .. import primitives as P
from ..ir import Eqn
from .engine import Ctx
from .identities import same


def _real(a: object) -> bool:
    return a.aval.dtype.kind != "c"


def of_real(e: Eqn, c: Ctx) -> object:
    return same(e, e.inputs[0]) if _real(e.inputs[0]) else None


def imag_of_real(e: Eqn, c: Ctx) -> object:
    a = e.out.aval
    return (P.full, (), {"shape": a.shape, "dtype": a.dtype, "value": 0}) \
        if _real(e.inputs[0]) else None


def of_conj(e: Eqn, c: Ctx) -> object:
    """conj(conj(x)) = x; real, abs of conj(x) are those of x."""
    s = c.def_of(e.inputs[0], P.conj)
    if s is None:
        return None
    return same(e, s.inputs[0]) if e.prim is P.conj else (e.prim, s.inputs, {})


def imag_of_conj(e: Eqn, c: Ctx) -> object:
    s = c.def_of(e.inputs[0], P.conj)
    return None if s is None else (P.neg, (c.emit(P.imag, s.inputs, {}, e.src),), {})


def conj_of_scaled_conj(e: Eqn, c: Ctx) -> object:
    """conj(r * conj(z)) = r * z and conj(conj(z) / r) = z / r for real r: what abs's VJP
    (g / |z| * conj(z)) meets in the VJP of a conj or of an FFT."""
    m = c.def_of(e.inputs[0], P.mul) or c.def_of(e.inputs[0], P.div)
    if m is None:
        return None
    x, y = m.inputs
    for k, (r, z) in enumerate(((x, y), (y, x))):
        s = c.def_of(z, P.conj)
        if s is not None and _real(r) and (m.prim is P.mul or k == 1):
            ins = (r, s.inputs[0]) if k == 0 else (s.inputs[0], r)
            if m.prim.shape_rule(*[a.aval for a in ins]) == e.out.aval:
                return m.prim, ins, {}
    return None
