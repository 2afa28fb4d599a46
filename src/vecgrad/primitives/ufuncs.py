"""NumPy's remaining elementwise functions (trigonometric, hyperbolic, logarithms, rounding,
remainders, bitwise and floating-point classification), one line each through the family
helpers of `elementwise`. Gradients are NumPy-autograd's and JAX's: rounding, comparisons and
classification have none (zero), `remainder` and `fmod` differentiate in both arguments.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .elementwise import (
    _nograd,
    _tie,
    cos,
    elementwise,
    eq,
    exp,
    logical_and,
    logical_not,
    sign,
    sqrt,
    unary,
    where,
)

__all__ = [
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "bitwise_and",
    "bitwise_count",
    "bitwise_or",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "copysign",
    "cosh",
    "deg2rad",
    "exp2",
    "fabs",
    "fix",
    "floor",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "frexp_exponent",
    "gcd",
    "heaviside",
    "hypot",
    "invert",
    "isfinite",
    "isinf",
    "isnan",
    "lcm",
    "left_shift",
    "log2",
    "log10",
    "logaddexp",
    "logaddexp2",
    "logical_xor",
    "nan_to_num",
    "nextafter",
    "rad2deg",
    "reciprocal",
    "remainder",
    "right_shift",
    "rint",
    "round_",
    "signbit",
    "sinc",
    "sinh",
    "spacing",
    "tan",
    "trunc",
]

_LN2, _LN10 = math.log(2.0), math.log(10.0)


# --- unary: name, impl, VJP (g, ans, x) -> cotangent --------------------------------------
tan = unary("tan", np.tan, lambda g, ans, x: g * (1 + ans * ans))  # sec^2 = 1 + tan^2
sinh = unary("sinh", np.sinh, lambda g, ans, x: g * cosh(x))
cosh = unary("cosh", np.cosh, lambda g, ans, x: g * sinh(x))
arcsin = unary("arcsin", np.arcsin, lambda g, ans, x: g / sqrt(1 - x * x))
arccos = unary("arccos", np.arccos, lambda g, ans, x: -g / sqrt(1 - x * x))
arctan = unary("arctan", np.arctan, lambda g, ans, x: g / (1 + x * x))
arcsinh = unary("arcsinh", np.arcsinh, lambda g, ans, x: g / sqrt(x * x + 1))
arccosh = unary("arccosh", np.arccosh, lambda g, ans, x: g / sqrt(x * x - 1))
arctanh = unary("arctanh", np.arctanh, lambda g, ans, x: g / (1 - x * x))
log2 = unary("log2", np.log2, lambda g, ans, x: g / (x * _LN2))
log10 = unary("log10", np.log10, lambda g, ans, x: g / (x * _LN10))
exp2 = unary("exp2", np.exp2, lambda g, ans, x: g * ans * _LN2)
cbrt = unary("cbrt", np.cbrt, lambda g, ans, x: g / (3 * ans * ans))  # x^(1/3)' = 1/(3 x^(2/3))
reciprocal = unary("reciprocal", np.reciprocal, lambda g, ans, x: -g * ans * ans)
fabs = unary("fabs", np.fabs, lambda g, ans, x: g * sign(x))
deg2rad = unary("deg2rad", np.deg2rad, lambda g, ans, x: g * (math.pi / 180))
rad2deg = unary("rad2deg", np.rad2deg, lambda g, ans, x: g * (180 / math.pi))


def _sinc_vjp(g: Any, ans: Any, x: Any) -> Any:
    # sinc(x) = sin(pi x) / (pi x): sinc'(x) = (cos(pi x) - sinc(x)) / x, and at x = 0 its
    # Taylor polynomial -pi^2 x / 3 + pi^4 x^3 / 30 (value 0, and the exact derivatives of
    # sinc' there up to the third: a VJP of this VJP is exact at 0 too)
    zero = eq(x, 0)
    safe = where(zero, 1, x)
    x2 = x * x
    return g * where(zero, x * (-math.pi ** 2 / 3 + x2 * (math.pi ** 4 / 30)),
                     (cos(x * math.pi) - ans) / safe)


sinc = unary("sinc", np.sinc, _sinc_vjp)
nan_to_num = elementwise(  # the gradient passes where x is finite, as autograd
    "nan_to_num", np.nan_to_num, lambda g, ans, x, **p: (where(isfinite(x), g, 0),))

# --- rounding and classification: no gradient (zero almost everywhere) --------------------
floor = _nograd("floor", np.floor)
ceil = _nograd("ceil", np.ceil)
trunc = _nograd("trunc", np.trunc)
rint = _nograd("rint", np.rint)
fix = _nograd("fix", np.fix)
round_ = _nograd("round", np.round)  # param decimals
isnan = _nograd("isnan", np.isnan)
isinf = _nograd("isinf", np.isinf)
isfinite = _nograd("isfinite", np.isfinite)
signbit = _nograd("signbit", np.signbit)
logical_xor = _nograd("logical_xor", np.logical_xor)
floor_divide = _nograd("floor_divide", np.floor_divide)
bitwise_and = _nograd("bitwise_and", np.bitwise_and)
bitwise_or = _nograd("bitwise_or", np.bitwise_or)
bitwise_xor = _nograd("bitwise_xor", np.bitwise_xor)
invert = _nograd("invert", np.invert)
left_shift = _nograd("left_shift", np.left_shift)
right_shift = _nograd("right_shift", np.right_shift)
frexp_exponent = _nograd("frexp_exponent", lambda x: np.frexp(x)[1])
spacing = _nograd("spacing", np.spacing)
gcd = _nograd("gcd", np.gcd)
lcm = _nograd("lcm", np.lcm)
bitwise_count = _nograd("bitwise_count", np.bitwise_count)


# --- binary: name, impl, VJP (g, ans, x, y) -> (gx, gy) in the broadcast shape -----------
def _fshare(x: Any, y: Any, share: Any) -> Any:
    """fmax/fmin's share of the cotangent for x: `share` (1 where x is chosen, 1/2 on ties)
    among numbers; a NaN loses to a number."""
    nx, ny = logical_not(eq(x, x)), logical_not(eq(y, y))
    return where(logical_and(ny, logical_not(nx)), 1.0, where(nx, 0.0, share))


def _logaddexp_vjp(pow_: Any) -> Any:
    """d logaddexp(x, y) / dx = b^(x - ans), the share of x in the sum; 1 where x is the
    result (a dominant x, or an infinite one: not inf - inf = nan; log-space programs meet
    logaddexp(-inf, -inf) at every masked entry), so 1 for each of two equal infinities, as
    JAX's rule gives. One select more than the plain formula: two more to also keep NumPy's
    'invalid value' warning of inf - inf away cost 5-8% on softplus-heavy gradients."""
    def share(x: Any, y: Any, ans: Any) -> Any:
        return where(eq(x, ans), 1.0, pow_(x - ans))
    return lambda g, ans, x, y: (g * share(x, y, ans), g * share(y, x, ans))


logaddexp = elementwise("logaddexp", np.logaddexp, _logaddexp_vjp(exp))
logaddexp2 = elementwise("logaddexp2", np.logaddexp2, _logaddexp_vjp(exp2))
arctan2 = elementwise(  # d atan(x/y) = (y dx - x dy) / (x^2 + y^2)
    "arctan2", np.arctan2,
    lambda g, ans, x, y: (g * y / (x * x + y * y), -g * x / (x * x + y * y)))
def _hypot_vjp(g: Any, ans: Any, x: Any, y: Any) -> tuple:
    """d hypot = (x dx + y dy) / hypot; at the origin the subgradient 0 (not 0/0 = nan, which
    poisoned a gradient even where hypot's argument did not depend on the input)."""
    safe = where(eq(ans, 0), 1, ans)
    return g * x / safe, g * y / safe


hypot = elementwise("hypot", np.hypot, _hypot_vjp)
remainder = elementwise(  # x mod y = x - floor(x / y) y
    "remainder", np.remainder, lambda g, ans, x, y: (g, -g * floor_divide(x, y)))
fmod = elementwise(  # C's fmod: x - trunc(x / y) y
    "fmod", np.fmod, lambda g, ans, x, y: (g, -g * trunc(x / y)))
copysign = elementwise(  # |x| with y's sign: d/dx = +-1, nothing for y
    "copysign", np.copysign,
    lambda g, ans, x, y: (where(eq(signbit(x), signbit(y)), g, -g), None))
nextafter = elementwise(  # x moved by one ulp towards y: d/dx = 1 (as central differences
    "nextafter", np.nextafter, lambda g, ans, x, y: (g, None))  # see it), nothing for y
heaviside = elementwise(  # 0, h0 or 1: only h0 (taken where x == 0) has a gradient
    "heaviside", np.heaviside, lambda g, ans, x, h0: (None, where(eq(x, 0), g, 0)))
fmax = elementwise("fmax", np.fmax, lambda g, ans, x, y: (
    g * _fshare(x, y, _tie(x, y, g)), g * _fshare(y, x, _tie(y, x, g))))
fmin = elementwise("fmin", np.fmin, lambda g, ans, x, y: (
    g * _fshare(x, y, _tie(y, x, g)), g * _fshare(y, x, _tie(x, y, g))))
