"""NumPy's ufuncs for traced code: the table of callables with NumPy's ufunc methods (`reduce`,
`accumulate`, `outer`, `at`; the `ufunc` object is in `_ufunc`), and the dispatch of
`np.<ufunc>(tracer, ...)` to them.

`vnp.add.at(buf, idx, v)` (or `np.add.at(buf, idx, v)` on a traced buffer) accumulates at
repeated indices, as NumPy's unbuffered `at` does; `buf[idx] += v` does not (NumPy's buffered
semantics), which is why repeated indices there are an error.
"""
from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import unsupported
from ..tracing import Tracer
from . import _ops, _ufunc
from ._base import _dtype, asarray, astype, takes_out
from ._ufunc import _write_out, ufunc

__all__ = [
    # the ufuncs of _ops, given their methods here
    "abs",
    "absolute",
    "add",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "around",
    "bitwise_and",
    "bitwise_count",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "clip",
    "copysign",
    "cos",
    "cosh",
    "deg2rad",
    "degrees",
    "divide",
    "divmod",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "fix",
    "float_power",
    "floor",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "frexp",
    "gcd",
    "greater",
    "greater_equal",
    "heaviside",
    "hypot",
    "invert",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "lcm",
    "ldexp",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "modf",
    "multiply",
    "nan_to_num",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "power",
    "rad2deg",
    "radians",
    "reciprocal",
    "remainder",
    "right_shift",
    "rint",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinc",
    "sinh",
    "spacing",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "trunc",
    "ufunc",
]


def _wrap(name: str, fn: Callable, nin: int, nout: int = 1) -> ufunc:
    return ufunc(name, fn, nin, nout)


def _prim_fn(prim: P.Primitive, nin: int, doc: str, **params: Any) -> Callable:
    if nin == 1:
        def f(x: Any) -> Any:
            return prim(x, **params)
    else:
        def f(x: Any, y: Any) -> Any:
            return prim(x, y, **params)
    f.__doc__ = doc
    return f


def _u(name: str, prim: P.Primitive, doc: str) -> ufunc:
    return _wrap(name, _prim_fn(prim, 1, doc), 1)


def _b(name: str, prim: P.Primitive, doc: str) -> ufunc:
    return _wrap(name, _prim_fn(prim, 2, doc), 2)


# --- the elementwise functions of _ops, as ufuncs ------------------------------------------
negative = _wrap("negative", _ops.negative, 1)
exp = _wrap("exp", _ops.exp, 1)
log = _wrap("log", _ops.log, 1)
log1p = _wrap("log1p", _ops.log1p, 1)
expm1 = _wrap("expm1", _ops.expm1, 1)
sqrt = _wrap("sqrt", _ops.sqrt, 1)
abs = _wrap("abs", _ops.abs, 1)
sign = _wrap("sign", _ops.sign, 1)
tanh = _wrap("tanh", _ops.tanh, 1)
sin = _wrap("sin", _ops.sin, 1)
cos = _wrap("cos", _ops.cos, 1)
logical_not = _wrap("logical_not", _ops.logical_not, 1)
positive = _wrap("positive", _ops.positive, 1)
square = _wrap("square", _ops.square, 1)
add = _wrap("add", _ops.add, 2)
subtract = _wrap("subtract", _ops.subtract, 2)
multiply = _wrap("multiply", _ops.multiply, 2)
divide = _wrap("divide", _ops.divide, 2)
for _name, _combine, _scan, _pad in (("subtract", _ops.subtract, add, 0),
                                     ("divide", _ops.divide, multiply, 1)):
    _ufunc._REDUCE[_name], _ufunc._ACCUMULATE[_name] = _ufunc._left_fold(
        _name, _combine, _scan, _pad)
maximum = _wrap("maximum", _ops.maximum, 2)
minimum = _wrap("minimum", _ops.minimum, 2)
power = _wrap("power", _ops.power, 2)
less = _wrap("less", _ops.less, 2)
less_equal = _wrap("less_equal", _ops.less_equal, 2)
greater = _wrap("greater", _ops.greater, 2)
greater_equal = _wrap("greater_equal", _ops.greater_equal, 2)
equal = _wrap("equal", _ops.equal, 2)
not_equal = _wrap("not_equal", _ops.not_equal, 2)
logical_and = _wrap("logical_and", _ops.logical_and, 2)
logical_or = _wrap("logical_or", _ops.logical_or, 2)
absolute = abs
true_divide = divide

# --- new unary ufuncs -----------------------------------------------------------------------
tan = _u("tan", P.tan, "Elementwise tangent.")
sinh = _u("sinh", P.sinh, "Elementwise hyperbolic sine.")
cosh = _u("cosh", P.cosh, "Elementwise hyperbolic cosine.")
arcsin = _u("arcsin", P.arcsin, "Elementwise inverse sine.")
arccos = _u("arccos", P.arccos, "Elementwise inverse cosine.")
arctan = _u("arctan", P.arctan, "Elementwise inverse tangent.")
arcsinh = _u("arcsinh", P.arcsinh, "Elementwise inverse hyperbolic sine.")
arccosh = _u("arccosh", P.arccosh, "Elementwise inverse hyperbolic cosine.")
arctanh = _u("arctanh", P.arctanh, "Elementwise inverse hyperbolic tangent.")
log2 = _u("log2", P.log2, "Elementwise base-2 logarithm.")
log10 = _u("log10", P.log10, "Elementwise base-10 logarithm.")
exp2 = _u("exp2", P.exp2, "Elementwise 2**x.")
cbrt = _u("cbrt", P.cbrt, "Elementwise cube root.")
reciprocal = _u("reciprocal", P.reciprocal, "Elementwise 1/x (integer division for ints).")
fabs = _u("fabs", P.fabs, "Elementwise absolute value of real numbers.")
floor = _u("floor", P.floor, "Elementwise floor (zero gradient).")
ceil = _u("ceil", P.ceil, "Elementwise ceiling (zero gradient).")
trunc = _u("trunc", P.trunc, "Elementwise rounding toward zero (zero gradient).")
rint = _u("rint", P.rint, "Elementwise rounding to the nearest integer (zero gradient).")
isnan = _u("isnan", P.isnan, "Elementwise test for NaN.")
isinf = _u("isinf", P.isinf, "Elementwise test for positive or negative infinity.")
isfinite = _u("isfinite", P.isfinite, "Elementwise test for finiteness.")
signbit = _u("signbit", P.signbit, "Elementwise test for a set sign bit (x < 0 or -0.0).")
invert = bitwise_not = bitwise_invert = _u(
    "invert", P.invert, "Elementwise bitwise NOT (logical NOT for booleans).")


deg2rad = radians = _u("deg2rad", P.deg2rad, "Degrees to radians.")
rad2deg = degrees = _u("rad2deg", P.rad2deg, "Radians to degrees.")


def _float(x: Any, ufunc: str) -> Any:
    """x, as the float array that NumPy's two-output `ufunc` computes in (its loop for x's
    dtype: an int8 or a bool computes in float16, an int16 in float32, wider ints float64)."""
    if _dtype(x).kind not in "biu":
        return x
    return astype(x, getattr(_np, ufunc)(_np.zeros(0, _dtype(x)))[0].dtype)


# --- new binary ufuncs ----------------------------------------------------------------------
logaddexp = _b("logaddexp", P.logaddexp, "log(exp(x) + exp(y)), computed stably.")
logaddexp2 = _b("logaddexp2", P.logaddexp2, "log2(2**x + 2**y), computed stably.")
arctan2 = _b("arctan2", P.arctan2, "Elementwise arctan(x1 / x2) in the correct quadrant.")
hypot = _b("hypot", P.hypot, "Elementwise sqrt(x1**2 + x2**2).")
remainder = mod = _b("remainder", P.remainder,
                     "Elementwise remainder with the divisor's sign (Python's %).")
fmod = _b("fmod", P.fmod, "Elementwise remainder with the dividend's sign (C's fmod).")
floor_divide = _b("floor_divide", P.floor_divide, "Elementwise x // y (zero gradient).")
copysign = _b("copysign", P.copysign, "Elementwise |x1| with the sign of x2.")
heaviside = _b("heaviside", P.heaviside, "Step function: 0, x2 at x1 == 0, or 1.")
fmax = _b("fmax", P.fmax, "Elementwise maximum that ignores NaNs.")
fmin = _b("fmin", P.fmin, "Elementwise minimum that ignores NaNs.")
logical_xor = _b("logical_xor", P.logical_xor, "Elementwise exclusive or.")
bitwise_and = _b("bitwise_and", P.bitwise_and, "Elementwise bitwise AND.")
bitwise_or = _b("bitwise_or", P.bitwise_or, "Elementwise bitwise OR.")
bitwise_xor = _b("bitwise_xor", P.bitwise_xor, "Elementwise bitwise XOR.")
left_shift = bitwise_left_shift = _b("left_shift", P.left_shift, "Elementwise x1 << x2.")
right_shift = bitwise_right_shift = _b("right_shift", P.right_shift, "Elementwise x1 >> x2.")
nextafter = _b("nextafter", P.nextafter,
               "The next float after x1 towards x2 (gradient 1 for x1, as x1 + one ulp).")
gcd = _b("gcd", P.gcd, "Elementwise greatest common divisor.")
lcm = _b("lcm", P.lcm, "Elementwise least common multiple.")
spacing = _u("spacing", P.spacing, "Distance to the nearest adjacent float (no gradient).")
bitwise_count = _u("bitwise_count", P.bitwise_count, "Number of 1-bits of |x|.")


def _float_power(x: Any, y: Any) -> Any:
    """x**y computed in float64 (or complex128)."""
    dt = _np.result_type(_np.float64, _dtype(x), _dtype(y))
    return _ops.power(astype(asarray(x), dt), y if isinstance(y, (int, float)) else
                      astype(asarray(y), dt))


def _ldexp(x: Any, e: Any) -> Any:
    """x * 2**e (exact: a power of two), in the dtype of NumPy's loop (a Python int x with
    integer exponents computes in float16, as NumPy's weak scalars do)."""
    def probe(v: Any) -> Any:
        return v if isinstance(v, (bool, int, float)) else _np.ones((), _dtype(v))
    dt = _np.ldexp(probe(x), probe(e)).dtype
    # (scaled in float64 by four parts of e, each a finite power of two, so that 0 * 2**300
    # stays 0 and a float16 x * 2**20 that fits is not x * inf; beyond |e| = 3200 every
    # nonzero float64 gives 0 or inf anyway)
    e = _ops.clip(astype(asarray(e), _np.float64), -3200.0, 3200.0)
    q = P.floor(_ops.multiply(e, 0.25))
    y = astype(asarray(x), _np.float64)
    for part in (q, q, q, _ops.subtract(e, _ops.multiply(q, 3.0))):
        y = _ops.multiply(y, P.exp2(part))
    return astype(y, dt)


def _divmod(x: Any, y: Any) -> tuple:
    """(x // y, x % y)."""
    return P.floor_divide(x, y), P.remainder(x, y)


def _modf(x: Any) -> tuple:
    """The fractional and integral parts of x (both with x's sign; of +-inf, +-0 and +-inf,
    where fmod(inf, 1) is NaN)."""
    x = _float(asarray(x), "modf")
    return P.where(P.isinf(x), P.copysign(0.0, x), P.fmod(x, 1.0)), P.trunc(x)


def _frexp(x: Any) -> tuple:
    """Mantissa and exponent, x = m * 2**e with 0.5 <= |m| < 1 (the gradient of m is 2**-e)."""
    x = _float(asarray(x), "frexp")
    e = P.frexp_exponent(x)
    return _ldexp(x, _ops.negative(e)), e


float_power = _wrap("float_power", _float_power, 2)
ldexp = _wrap("ldexp", _ldexp, 2)
divmod = _wrap("divmod", _divmod, 2, 2)
modf = _wrap("modf", _modf, 1, 2)
frexp = _wrap("frexp", _frexp, 1, 2)


# --- non-ufunc elementwise functions --------------------------------------------------------

def sinc(x: Any) -> Any:
    """sin(pi x) / (pi x), 1 at 0 (gradient 0 there)."""
    return P.sinc(x)


@takes_out
def fix(x: Any, out: Any = None) -> Any:
    """Round toward zero (zero gradient)."""
    return P.fix(x)


def round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    """Round to `decimals` places, half to even (zero gradient)."""
    res = P.round_(a, decimals=int(decimals))
    return res if out is None else _write_out("round", res, out, "same_kind")


around = round


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """Replace NaN by `nan` and infinities by `posinf`/`neginf` (default: the largest finite
    numbers); the gradient passes where x is finite. With `copy=False` an array is changed
    in place and returned, as in NumPy."""
    f = lambda v: None if v is None else float(v)
    res = P.nan_to_num(x, nan=float(nan), posinf=f(posinf), neginf=f(neginf))
    if copy or not isinstance(x, Tracer) or x._is_scalar():
        return res
    x[...] = res
    return x


def clip(a: Any, a_min: Any = _np._NoValue, a_max: Any = _np._NoValue, out: Any = None, *,
         min: Any = _np._NoValue, max: Any = _np._NoValue) -> Any:
    """Limit values to [min, max] (either bound may be None, an array, or traced). At a
    bound the gradient is split between the value and the bound, as JAX's."""
    if a_min is not _np._NoValue and min is not _np._NoValue or \
            a_max is not _np._NoValue and max is not _np._NoValue:
        raise TypeError("clip: pass each bound once (a_min or min, a_max or max)")
    lo = a_min if a_min is not _np._NoValue else None if min is _np._NoValue else min
    hi = a_max if a_max is not _np._NoValue else None if max is _np._NoValue else max
    res = _ops.clip(a, lo, hi)
    return res if out is None else _write_out("clip", res, out, "same_kind")


@takes_out
def isposinf(x: Any, out: Any = None) -> Any:
    """Elementwise test for +inf."""
    return _ops.logical_and(isinf(x), _ops.logical_not(signbit(x)))


@takes_out
def isneginf(x: Any, out: Any = None) -> Any:
    """Elementwise test for -inf."""
    return _ops.logical_and(isinf(x), signbit(x))


# --- dispatch of np.<ufunc>(tracer, ...) ----------------------------------------------------
_ALIASES = {"true_divide": "divide", "absolute": "abs", "conjugate": "conj"}
_CALLS: dict[Any, tuple[Callable, int]] = {}  # NumPy ufunc -> vecgrad's function, its nin


def dispatch_ufunc(uf: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """Route `np.<ufunc>(tracer, ...)` and its methods to vecgrad.numpy."""
    if not kwargs and method == "__call__":  # (the common case: found once per ufunc)
        fast = _CALLS.get(uf)
        if fast is not None and len(inputs) <= fast[1]:
            return fast[0](*inputs)  # (what vecgrad's ufunc.__call__ does without keywords)
    vnp = _ops.NAMESPACES["numpy"]
    if getattr(_np, uf.__name__, None) is not uf:  # not NumPy's: SciPy's special functions
        # (vecgrad.scipy, a layer above, imports SciPy, an optional package: it is loaded
        # by name the first time a SciPy ufunc meets a traced array)
        special = importlib.import_module("vecgrad.scipy.special").dispatch_ufunc
        out = special(uf, method, inputs, kwargs)
        if out is not None:
            return out
        raise unsupported(f"the ufunc {uf.__name__}")
    name = _ALIASES.get(uf.__name__, uf.__name__)
    fn = getattr(vnp, name, None)
    if fn is None:
        raise unsupported(f"numpy.{uf.__name__}")
    if isinstance(fn, ufunc):
        if method == "__call__" and len(_CALLS) < 1024:
            _CALLS[uf] = (fn._fn, fn.nin)
        m = fn if method == "__call__" else getattr(fn, method, None)
        if m is None:
            raise unsupported(f"numpy.{uf.__name__}.{method}")
        return m(*inputs, **kwargs)
    if method != "__call__":
        raise unsupported(f"numpy.{uf.__name__}.{method}")
    out = kwargs.pop("out", None)
    if out is not None:  # (a gufunc written with takes_out, e.g. matmul, writes into it)
        if "out" not in inspect.signature(fn).parameters:
            raise unsupported(f"numpy.{uf.__name__} with out=")
        kwargs["out"] = out
    return fn(*inputs, **kwargs)  # (gufuncs such as vecdot take axis=, keepdims=)

