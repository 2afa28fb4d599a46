"""Special functions (scipy.special) as elementwise primitives, one line each: name, SciPy's
function, and the VJP as a formula in other primitives.

SciPy is optional: an impl imports it on its first call, so `import vecgrad` never does.
Orders and shape parameters without a closed-form derivative (the order v of a Bessel
function, a of gammainc, the degrees of freedom of stdtr) return `NoGrad`: a gradient asked
with respect to them raises NoGradientError instead of being silently zero.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .core import NoGrad
from .elementwise import elementwise, exp, log, log1p, sign

__all__ = [
    "beta", "betainc", "betaln", "digamma", "erf", "erfc", "erfcinv", "erfinv", "exp1",
    "expi", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn", "i0", "i0e", "i1", "i1e",
    "iv", "ive", "j0", "j1", "jv", "log_ndtr", "ndtr", "ndtri", "nograd", "polygamma", "rgamma", "stdtr",
    "y0", "y1", "yn", "yv", "zeta",
]


class _SciPy:
    """scipy.special.<name>, resolved on the first call (SciPy is an optional dependency)."""

    __slots__ = ("fn", "name")

    def __init__(self, name: str):
        self.name, self.fn = name, None

    def __call__(self, *xs: Any) -> Any:
        fn = self.fn
        if fn is None:
            try:
                import scipy.special
            except ImportError:
                raise ImportError(f"scipy.special.{self.name} needs SciPy: pip install "
                                  "'vecgrad[scipy]'") from None
            fn = self.fn = getattr(scipy.special, self.name)
        return fn(*xs)

    def __repr__(self) -> str:
        return f"scipy.special.{self.name}"


def _no(fn: str, arg: str) -> NoGrad:
    return NoGrad(f"scipy.special.{fn} with respect to {arg}")


_REAL = "vecgrad's special functions take real input (their VJPs are real formulas)"


def special(name: str, vjp: Callable | None, holomorphic: bool = False) -> Any:
    """An elementwise primitive computed by scipy.special; `vjp(g, ans, *ins)` -> tuple.
    `holomorphic`: SciPy takes complex input and the VJP formula holds for it too (under
    JAX's convention a holomorphic function's VJP is g * f'(z), no conjugate)."""
    return elementwise(name, _SciPy(name), vjp, real_input=None if holomorphic else _REAL)


def special1(name: str, vjp: Callable | None, holomorphic: bool = False) -> Any:
    """A one-input special function; `vjp(g, ans, x)` -> the cotangent."""
    return special(name, None if vjp is None else (lambda g, ans, x: (vjp(g, ans, x),)),
                   holomorphic)


_2_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)

# --- gamma family ------------------------------------------------------------------------
polygamma = special("polygamma", lambda g, ans, n, x: (None, g * polygamma(n + 1, x)))
digamma = special1("digamma", lambda g, ans, x: g * polygamma(1, x))
gammaln = special1("gammaln", lambda g, ans, x: g * digamma(x))
gamma = special1("gamma", lambda g, ans, x: g * ans * digamma(x))
rgamma = special1("rgamma", lambda g, ans, x: -g * ans * digamma(x))  # 1/gamma
gammasgn = special1("gammasgn", None)


def _gammainc_dx(a: Any, x: Any) -> Any:  # the integrand x^(a-1) e^-x / gamma(a)
    return exp((a - 1) * log(x) - x - gammaln(a))


gammainc = special("gammainc", lambda g, ans, a, x: (_no("gammainc", "a"),
                                                     g * _gammainc_dx(a, x)))
gammaincc = special("gammaincc", lambda g, ans, a, x: (_no("gammaincc", "a"),
                                                       -g * _gammainc_dx(a, x)))
betaln = special("betaln", lambda g, ans, a, b: (g * (digamma(a) - digamma(a + b)),
                                                 g * (digamma(b) - digamma(a + b))))
beta = special("beta", lambda g, ans, a, b: (g * ans * (digamma(a) - digamma(a + b)),
                                             g * ans * (digamma(b) - digamma(a + b))))
betainc = special("betainc", lambda g, ans, a, b, x: (
    _no("betainc", "a"), _no("betainc", "b"),
    g * exp((a - 1) * log(x) + (b - 1) * log1p(-x) - betaln(a, b))))
# Hurwitz zeta(x, q): d/dq = -x zeta(x + 1, q)
zeta = special("zeta", lambda g, ans, x, q: (_no("zeta", "x"), -g * x * zeta(x + 1, q)))

# --- error functions and the normal distribution -----------------------------------------
erf = special1("erf", lambda g, ans, x: g * _2_SQRT_PI * exp(-x * x), holomorphic=True)
erfc = special1("erfc", lambda g, ans, x: -g * _2_SQRT_PI * exp(-x * x), holomorphic=True)
erfinv = special1("erfinv", lambda g, ans, x: g / _2_SQRT_PI * exp(ans * ans))
erfcinv = special1("erfcinv", lambda g, ans, x: -g / _2_SQRT_PI * exp(ans * ans))
ndtr = special1("ndtr", lambda g, ans, x: g * exp(-0.5 * x * x) / _SQRT_2PI)
ndtri = special1("ndtri", lambda g, ans, x: g * _SQRT_2PI * exp(0.5 * ans * ans))
log_ndtr = special1("log_ndtr", lambda g, ans, x: g * exp(-0.5 * x * x - _LOG_SQRT_2PI - ans))
# Student's t CDF stdtr(df, t): d/dt is the t density
stdtr = special("stdtr", lambda g, ans, df, t: (_no("stdtr", "df"), g * exp(
    gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * log(df * math.pi)
    - (df + 1) / 2 * log1p(t * t / df))))
expi = special1("expi", lambda g, ans, x: g * exp(x) / x, holomorphic=True)
exp1 = special1("exp1", lambda g, ans, x: -g * exp(-x) / x, holomorphic=True)

# --- Bessel functions (orders v, n: no gradient) ---------------------------------------------
j0 = special1("j0", lambda g, ans, x: -g * j1(x))
j1 = special1("j1", lambda g, ans, x: g * 0.5 * (j0(x) - jv(2, x)))
y0 = special1("y0", lambda g, ans, x: -g * y1(x))
y1 = special1("y1", lambda g, ans, x: g * 0.5 * (y0(x) - yv(2, x)))
jv = special("jv", lambda g, ans, v, x: (_no("jv", "the order v"),
                                         g * 0.5 * (jv(v - 1, x) - jv(v + 1, x))), True)
yv = special("yv", lambda g, ans, v, x: (_no("yv", "the order v"),
                                         g * 0.5 * (yv(v - 1, x) - yv(v + 1, x))), True)
yn = special("yn", lambda g, ans, n, x: (None, g * 0.5 * (yv(n - 1, x) - yv(n + 1, x))))
i0 = special1("i0", lambda g, ans, x: g * i1(x))
i1 = special1("i1", lambda g, ans, x: g * 0.5 * (i0(x) + iv(2, x)))
iv = special("iv", lambda g, ans, v, x: (_no("iv", "the order v"),
                                         g * 0.5 * (iv(v - 1, x) + iv(v + 1, x))), True)
# exponentially scaled: ive = iv e^-|x|, so d ive = (iv' - sign(x) iv) e^-|x|
i0e = special1("i0e", lambda g, ans, x: g * (i1e(x) - sign(x) * ans))
i1e = special1("i1e", lambda g, ans, x: g * (0.5 * (i0e(x) + ive(2, x)) - sign(x) * ans))
ive = special("ive", lambda g, ans, v, x: (
    _no("ive", "the order v"), g * (0.5 * (ive(v - 1, x) + ive(v + 1, x)) - sign(x) * ans)))



# --- an identity with no gradient: for compositions that must not be differentiated --------
nograd = elementwise("nograd", lambda x, what: np.positive(x),
                     lambda g, ans, x, what: (NoGrad(what),))
