"""np.logaddexp(x, y) as NumPy's SIMD exp and log1p loops.

NumPy's logaddexp loop calls the scalar libm exp and log1p once per element: about 10 ns per
float64 (30 us on 3,000, 4 to 8 ms on 100,000 measured here), where its vectorized exp,
log1p, abs and clip loops together take about a third of that. Every softplus a user writes
as `np.logaddexp(0, z)`, every `-log(sigmoid(z))` (simplified to one) and every log-space
sum pays it. The kernel computes NumPy's own formula, a pass per step:

    logaddexp(x, y) = max(x, y) + log1p(exp(-|x - y|))

Equal to NumPy's result to rounding (within 3 units in the last place measured, 16 where the
sum cancels: x near -y against y's scale); the same at infinities and NaN. Against a finite
scalar constant c the max is the clip loop and |x - c| never meets inf - inf; between two
arrays, where both are the same infinity (|x - y| = NaN, NumPy's result that infinity) the
correction term is set to 0. Results of fewer than SMALL elements (PAIR_SMALL between two
arrays) keep the ufunc: six calls cost more than the loop saves there (CPU time, float64:
against 0.0, 3.1 us against 3.5 at 256 elements, 5.7 against 4.4 at 512; two arrays, 5.4
against 6.9 at 512, 10.4 against 8.3 at 1,024)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import primitives as P
from ...ir import Const, Eqn
from .clamp import _CLIP

SMALL = 512
PAIR_SMALL = 1024


def _tail(t: np.ndarray) -> np.ndarray:
    """log1p(exp(-|t|)), in t's buffer."""
    np.abs(t, out=t)
    np.negative(t, out=t)
    np.exp(t, out=t)
    return np.log1p(t, out=t)


class LogAddExp:
    """`f(a, b, out=None)` = logaddexp(a, b); `big` is the array operand's position when the
    other is the scalar constant `c` (None: two arrays)."""

    nout = 1

    def __init__(self, big: int | None, c: Any = None):
        self.big, self.c = big, c

    def __call__(self, a: Any, b: Any, out: Any = None) -> Any:
        if self.big is None:
            return self._pair(a, b, out)
        x, c = (a, self.c) if self.big == 0 else (b, self.c)
        t = _tail(np.subtract(x, c) if c else np.abs(x))
        m = _CLIP(x, c, np.inf, out=out)  # (last: out may be x's own buffer)
        return np.add(m, t, out=m)

    @staticmethod
    def _pair(a: Any, b: Any, out: Any) -> Any:
        with np.errstate(invalid="ignore"):  # (inf - inf, fixed below, as NumPy's loop)
            t = _tail(np.subtract(a, b))
        if np.isnan(np.add.reduce(t, axis=None)):  # (t is in [0, log 2] elsewhere)
            t[np.isnan(t) & np.equal(a, b)] = 0.0
        m = np.maximum(a, b, out=out)
        return np.add(m, t, out=m)


def logaddexp(e: Eqn) -> Callable[..., Any] | None:
    """The SIMD form of logaddexp for float operands of the result's dtype (module doc), or
    None."""
    if e.prim is not P.logaddexp:
        return None
    out = e.out.aval
    if out.dtype.kind != "f" or out.size < SMALL:
        return None
    consts = [k for k, a in enumerate(e.inputs) if a.__class__ is Const]
    if not consts:
        ok = out.size >= PAIR_SMALL and all(a.aval.dtype == out.dtype for a in e.inputs)
        return LogAddExp(None) if ok else None
    if len(consts) != 1:
        return None
    c, x = e.inputs[consts[0]], e.inputs[1 - consts[0]]
    if c.aval.ndim != 0 or x.aval != out or c.value.dtype.kind not in "fiub":
        return None
    v = out.dtype.type(c.value)
    if not np.isfinite(v) or float(v) != float(c.value):
        return None  # (a bound that rounds in the result's dtype: left to NumPy's promotion)
    return LogAddExp(1 - consts[0], v)


__all__ = ["PAIR_SMALL", "SMALL", "LogAddExp", "logaddexp"]
