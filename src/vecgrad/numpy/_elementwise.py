"""Elementwise operations of `vecgrad.numpy` (one primitive each, or a few with NumPy's dtype
rules: power, clip, real/imag views). `_ops` re-exports them with the reductions and shape
operations; `_ufuncs` gives them NumPy's ufunc methods."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as _np

from .. import primitives as P
from ..tracing import Tracer, as_view
from ._base import _dtype, astype


def _unary(prim: P.Primitive, doc: str) -> Callable:
    def f(x: Any) -> Any:
        return prim(x)
    f.__doc__ = doc
    return f


def _binary(prim: P.Primitive, doc: str) -> Callable:
    def f(x: Any, y: Any) -> Any:
        return prim(x, y)
    f.__doc__ = doc
    return f


negative = _unary(P.neg, "Elementwise -x.")
exp = _unary(P.exp, "Elementwise e**x.")
log = _unary(P.log, "Elementwise natural logarithm.")
log1p = _unary(P.log1p, "Elementwise log(1 + x), accurate for small x.")
expm1 = _unary(P.expm1, "Elementwise exp(x) - 1, accurate for small x.")
sqrt = _unary(P.sqrt, "Elementwise square root.")
abs = absolute = _unary(P.abs_, "Elementwise absolute value (gradient sign(x)).")
sign = _unary(P.sign, "Elementwise sign (zero gradient).")
tanh = _unary(P.tanh, "Elementwise hyperbolic tangent.")
sin = _unary(P.sin, "Elementwise sine.")
cos = _unary(P.cos, "Elementwise cosine.")
logical_not = _unary(P.logical_not, "Elementwise not.")
stop_gradient = _unary(P.stop_gradient, "Identity whose gradient is zero.")
add = _binary(P.add, "Elementwise x + y with broadcasting.")
subtract = _binary(P.sub, "Elementwise x - y with broadcasting.")
multiply = _binary(P.mul, "Elementwise x * y with broadcasting.")
divide = true_divide = _binary(P.div, "Elementwise x / y with broadcasting.")
maximum = _binary(P.maximum, "Elementwise maximum (ties split the gradient evenly).")
minimum = _binary(P.minimum, "Elementwise minimum (ties split the gradient evenly).")
less = _binary(P.lt, "Elementwise x < y.")
less_equal = _binary(P.le, "Elementwise x <= y.")
greater = _binary(P.gt, "Elementwise x > y.")
greater_equal = _binary(P.ge, "Elementwise x >= y.")
equal = _binary(P.eq, "Elementwise x == y.")
not_equal = _binary(P.ne, "Elementwise x != y.")
logical_and = _binary(P.logical_and, "Elementwise and.")
logical_or = _binary(P.logical_or, "Elementwise or.")


conj = conjugate = _unary(P.conj, "Elementwise complex conjugate.")


def real(x: Any) -> Any:
    """The real part. As in NumPy it is a view: of a complex array, writes through it change
    the array's real part; of a real array, it is the array itself."""
    if not isinstance(x, Tracer) or x.dtype.kind != "c":
        return x if isinstance(x, Tracer) else _np.real(x)
    return as_view(P.real(x), x, P.real, {})


def imag(x: Any) -> Any:
    """The imaginary part: a view of a complex array (writes through it change the array's
    imaginary part); of a real array, read-only zeros, as in NumPy."""
    if not isinstance(x, Tracer):
        return _np.imag(x)
    if x.dtype.kind != "c":
        out = P.imag(x)
        out._readonly = "the read-only imaginary part of a real array"
        return out
    return as_view(P.imag(x), x, P.imag, {})


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of complex numbers (0 or pi for real ones), in radians or degrees."""
    out = P.angle(z)
    return multiply(out, 180.0 / _np.pi) if deg else out


def positive(x: Any) -> Any:
    """Elementwise +x: the same values in a new array (a ufunc result: writing into it does
    not reach x), as NumPy's."""
    if not isinstance(x, Tracer):
        return _np.positive(x)
    if x.dtype == _np.bool_:
        raise TypeError("The numpy boolean positive, the unary `+` operator, is not "
                        "supported (as in NumPy)")
    return Tracer(x._b, x.atom)


def square(x: Any) -> Any:
    """Elementwise x**2."""
    return P.powc(x, p=2)


def power(x: Any, y: Any) -> Any:
    """Elementwise x**y. A number exponent gives NumPy 2's dtype: a Python number is weak
    (x's dtype, unless it cannot hold the result: ints or bools to a float power are
    float64, bools to an int power int64), a NumPy scalar is not (float32 ** np.float64(2)
    is float64). Always a new value (x ** 1 is not x)."""
    t = y.__class__
    if (t is int or t is float) and y != 1 and x.__class__ is Tracer and \
            x._atom.aval.dtype.kind in "fc":  # (the common case: a float array keeps its dtype)
        return P.powc(x, p=y)
    if isinstance(y, (int, float, _np.integer, _np.floating)) and \
            not isinstance(y, (bool, _np.bool_)):
        dt = _np.result_type(_dtype(x), y)
        p = float(y) if isinstance(y, (float, _np.floating)) else int(y)
        if dt != _dtype(x):
            x = astype(x, dt)
        elif p == 1 and isinstance(x, Tracer):  # (an either value stays either: w ** 1 of
            return x.copy() if x._depends else Tracer(x._b, x.atom)  # eig's w is real or not)
        return P.powc(x, p=p) if p != 1 else x
    return P.pow_(x, y)


def array_power(x: Any, y: Any) -> Any:
    """`x ** y` of an array: np.power, except NumPy's fast path for the exponent 2 (a Python
    int), which squares an array (a bool one is then int8; a NumPy scalar is not squared)."""
    if type(y) is int and y == 2 and isinstance(x, Tracer) and x.dtype == _np.bool_ \
            and not x._is_scalar():
        return square(x)
    return power(x, y)


def where(condition: Any, x: Any, y: Any) -> Any:
    """Select x where `condition` holds, else y (all three broadcast); an array, also 0-d."""
    out = P.where(condition, x, y)
    if isinstance(out, Tracer):
        out._ndarray = True
    return out


def _int_bound(b: Any, dt: _np.dtype) -> Any:
    """A Python int bound of an integer clip, brought into dt's range."""
    if type(b) is not int:
        return b
    info = _np.iinfo(dt)
    return int(info.min) if b < info.min else int(info.max) if b > info.max else b


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """Limit values to [a_min, a_max], in the dtype NumPy gives all three together (a bool
    array clipped to (-0.5, np.float32(1.5)) is float32, not maximum-then-minimum's float64)."""
    def weak(x: Any) -> Any:  # (Python scalars, and traced ones, count weakly)
        if isinstance(x, Tracer):
            return x._kind if x._weak else x.dtype
        return x if isinstance(x, (int, float, complex, _np.generic, _np.ndarray)) \
            else _np.asarray(x)
    at = _dtype(a)
    if at.kind in "iu" and not (isinstance(a, Tracer) and a._weak):
        # (NumPy's clip takes Python int bounds past the dtype's range as its ends:
        # np.clip(uint8_array, -1, 2) is uint8, where other ufuncs raise OverflowError)
        a_min, a_max = _int_bound(a_min, at), _int_bound(a_max, at)
    for x in (a, a_min, a_max):  # (max(x32[i], -1): float32 or a Python int, as the values say)
        if isinstance(x, Tracer) and x._depends:
            x.check_either([y.dtype for y in (a, a_min, a_max) if isinstance(
                y, (Tracer, _np.ndarray, _np.generic)) and not getattr(y, "_weak", False)])
    dt = _np.result_type(*[weak(x) for x in (a, a_min, a_max) if x is not None])
    if _dtype(a) != dt:
        a = astype(a, dt)
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a
