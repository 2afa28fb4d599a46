"""Array operations of `vecgrad.numpy`: elementwise, reductions, shapes, contractions."""
from __future__ import annotations

import builtins
import itertools
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import ShapeError, unsupported, user_src
from ..tracing import Tracer, as_view, c_contiguous, reshaped_view, strided
from ._base import _dtype, _shape, asarray, astype, copy, stack_new, takes_out

__all__ = [
    "abs",
    "absolute",
    "add",
    "amax",
    "amin",
    "angle",
    "broadcast_to",
    "clip",
    "concatenate",
    "conj",
    "conjugate",
    "cos",
    "divide",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "flatten",
    "greater",
    "greater_equal",
    "imag",
    "less",
    "less_equal",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "moveaxis",
    "multiply",
    "ndim",
    "negative",
    "not_equal",
    "positive",
    "power",
    "prod",
    "ravel",
    "real",
    "reshape",
    "shape",
    "sign",
    "sin",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "stop_gradient",
    "subtract",
    "sum",
    "swapaxes",
    "tanh",
    "transpose",
    "true_divide",
    "where",
]


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
        elif p == 1 and isinstance(x, Tracer):
            return Tracer(x._b, x.atom)
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
    dt = _np.result_type(*[weak(x) for x in (a, a_min, a_max) if x is not None])
    if _dtype(a) != dt:
        a = astype(a, dt)
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


# ------------------------------------------------------------------------------ reductions

def _int(x: Any, what: str = "an index") -> int:
    """`x` as a plain Python int. Every shape, axis and index parameter goes through here (or
    `_ints`, `_axis`, `_axes`), so NumPy integers never reach equation parameters."""
    if type(x) is int:
        return x
    if isinstance(x, Tracer):
        return x.__index__()  # raises ConcretizationError, naming the user's line
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(x).__name__}") from None


def _ints(xs: Any, what: str = "shape") -> tuple[int, ...]:
    """An int or a sequence of ints (NumPy integers, a 1-D integer array) as a tuple of ints."""
    if isinstance(xs, (tuple, list)) or isinstance(xs, _np.ndarray) and xs.ndim == 1:
        return tuple(_int(x, what) for x in xs)
    return (_int(xs, what),)


def _axis(axis: Any, ndim: int) -> int:
    """One axis, in range(ndim) (negative axes count from the end)."""
    a = _int(axis, "axis")
    if not -ndim <= a < ndim:
        raise _np.exceptions.AxisError(a, ndim)
    return a % ndim


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """An axis, a tuple of axes or None (all axes), sorted and in range(ndim)."""
    if axis is None:
        return tuple(range(ndim))
    out = tuple(sorted(_axis(a, ndim) for a in _ints(axis, "axis")))
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return out


def _reduce(prim: P.Primitive, x: Any, axis: Any, keepdims: bool, out: Any = None,
            initial: Any = _np._NoValue, where: Any = True) -> Any:
    """A reduction with NumPy's keywords: `where` masks entries out (they count as the
    reduction's identity, or `initial` for max/min), `initial` joins the reduction."""
    if out is not None:
        raise unsupported(f"numpy.{_REDUCTION_NAMES[prim]} with out= (assign the result "
                          "instead)")
    x = asarray(x) if isinstance(x, (list, tuple)) else x
    axes = _axes(axis, len(_shape(x)))
    ident = _IDENTITY.get(prim)
    if where is not True:
        if ident is None and initial is _np._NoValue:
            raise ValueError(f"reduction operation '{_REDUCTION_NAMES[prim]}' does not have an "
                             "identity, so to use a where mask one has to specify 'initial'")
        fill = ident if ident is not None else initial
        x = P.where(where, x, _np.asarray(fill, _dtype(x)))  # (as NumPy: x's dtype)
        x = broadcast_to(x, _np.broadcast_shapes(_shape(x), _np.shape(where)))
    if ident is None and 0 in [_shape(x)[i] for i in axes]:
        if initial is _np._NoValue:
            raise ValueError(f"zero-size array to reduction operation "
                             f"{_REDUCTION_NAMES[prim]} which has no identity")
        kept = [1 if i in axes else d for i, d in enumerate(_shape(x))
                if keepdims or i not in axes]
        return _np.full(kept, initial, _dtype(x))  # (a constant: nothing of x is read)
    r = prim(x, axes=axes)
    if initial is not _np._NoValue:
        join = {P.reduce_sum: add, P.reduce_prod: multiply, P.reduce_max: maximum,
                P.reduce_min: minimum}[prim]
        r = join(r, _np.asarray(initial, _dtype(r)))
    if keepdims:
        r = reshape(r, tuple(1 if i in axes else d for i, d in enumerate(_shape(x))))
    return r


_REDUCTION_NAMES = {P.reduce_sum: "sum", P.reduce_prod: "prod", P.reduce_max: "maximum",
                    P.reduce_min: "minimum"}
_IDENTITY = {P.reduce_sum: 0, P.reduce_prod: 1}


@takes_out
def sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = _np._NoValue, where: Any = True) -> Any:
    """Sum over `axis` (all axes by default), with NumPy's `initial` and `where`."""
    if a.__class__ is Tracer and axis is None and dtype is None and out is None and \
            not keepdims and initial is _np._NoValue and where is True:  # (np.sum(x))
        return P.reduce_sum(a, axes=tuple(range(len(a._atom.aval.shape))))
    a = asarray(a) if isinstance(a, (list, tuple)) else a
    a = a if dtype is None else astype(a, dtype)
    return _in(dtype, _reduce(P.reduce_sum, a, axis, keepdims, out, initial, where))


def _in(dtype: Any, r: Any) -> Any:
    """A sum or product asked for in a narrow integer or boolean `dtype`: the primitive
    accumulates small integers in int64, whose cast back is exact (integer arithmetic
    wraps the same modulo 2**bits; a boolean sum is `or`, a product `and`)."""
    return r if dtype is None or _dtype(r) == dtype else astype(r, dtype)


@takes_out
def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         *, where: Any = True) -> Any:
    """Arithmetic mean over `axis` (of the entries `where` selects). Of no elements it is
    nan, with NumPy's RuntimeWarning (given once, while tracing)."""
    a = asarray(a) if isinstance(a, (list, tuple)) else a
    if _dtype(a).kind in "biu":
        a = astype(a, dtype or _np.float64)
    if dtype is None and out is None and _dtype(a) == _np.float16:  # (NumPy accumulates
        # float16 in float32 and rounds the mean once)
        return astype(mean(astype(a, _np.float32), axis, None, None, keepdims, where=where),
                      _np.float16)
    total = sum(a, axis, dtype, out, keepdims, where=where)
    if dtype is not None and _np.dtype(dtype).kind in "biu":
        # NumPy sums in the integer dtype, divides, and casts the quotient back (truncating)
        return astype(_mean_of(a, axis, keepdims, where, astype(total, _np.float64)), dtype)
    return _mean_of(a, axis, keepdims, where, total)


def count_where(a: Any, axis: Any, keepdims: bool, where: Any, dtype: Any) -> Any:
    """The count of entries of `a` that the mask `where` selects along `axis`, in `dtype`
    (traced if the mask is): the n of a mean or variance with `where=`."""
    ones = broadcast_to(_np.ones((), dtype), _np.broadcast_shapes(_shape(a), _np.shape(where)))
    return sum(ones, axis, keepdims=keepdims, where=where)


def _mean_of(a: Any, axis: Any, keepdims: bool, where: Any, total: Any) -> Any:
    """`total` divided by the count of entries that `where` selects along `axis`."""
    if where is not True:
        return divide(total, count_where(a, axis, keepdims, where, _dtype(total)))
    n = math.prod(_shape(a)[i] for i in _axes(axis, len(_shape(a))))
    if n == 0:
        src = user_src(3)
        warnings.warn_explicit("Mean of empty slice", RuntimeWarning,
                               src.file if src else "<vecgrad>", src.line if src else 0)
    return multiply(total, 1.0 / n if n else _np.nan)


@takes_out
def max(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = _np._NoValue, where: Any = True) -> Any:
    """Maximum over `axis` (ties share the gradient), with NumPy's `initial` and `where`."""
    return _reduce(P.reduce_max, a, axis, keepdims, out, initial, where)


@takes_out
def min(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = _np._NoValue, where: Any = True) -> Any:
    """Minimum over `axis` (ties share the gradient), with NumPy's `initial` and `where`."""
    return _reduce(P.reduce_min, a, axis, keepdims, out, initial, where)


amax, amin = max, min


@takes_out
def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = _np._NoValue, where: Any = True) -> Any:
    """Product over `axis` (exact gradient, also where entries are zero), with NumPy's
    `initial` and `where`."""
    a = asarray(a) if isinstance(a, (list, tuple)) else a
    a = a if dtype is None else astype(a, dtype)
    return _in(dtype, _reduce(P.reduce_prod, a, axis, keepdims, out, initial, where))


# ---------------------------------------------------------------------------------- shapes

def shape(a: Any) -> tuple[int, ...]:
    """The shape of `a`."""
    return _shape(a)


def ndim(a: Any) -> int:
    """The number of axes of `a`."""
    return len(_shape(a))


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: bool | None = None, always_view: bool = False) -> Any:
    """Reshape (one entry may be -1), reading and writing in C or Fortran `order`. A view
    where NumPy makes one (the strides allow it), else a copy; `copy=True` always copies,
    `copy=False` raises where NumPy would copy."""
    newshape = _ints(newshape if shape is None else shape)
    order = _layout_order(a, order, "reshape")
    if order == "F":  # Fortran order is C order on the reversed axes
        return transpose(reshape(transpose(a), newshape[::-1], copy=copy), None)
    size = math.prod(_shape(a))
    if newshape.count(-1) == 1:
        rest = math.prod(d for d in newshape if d != -1)
        if rest == 0 or size % rest:
            raise ShapeError(f"cannot reshape array of size {size} into shape {newshape}")
        newshape = tuple(size // rest if d == -1 else d for d in newshape)
    if newshape == _shape(a) and not copy:
        return a
    out = P.reshape(a, shape=newshape)
    view = isinstance(a, Tracer) and not copy and (always_view or _reshape_is_view(a, newshape))
    if copy is False and isinstance(a, Tracer) and not view:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    if view:
        as_view(out, a, P.reshape, {"shape": newshape})
    elif isinstance(out, Tracer) and out is not a:
        out._ndarray = True
    return out


def _layout_order(a: Any, order: str, name: str) -> str:
    """'C' or 'F' for order C, F or A ('F' if `a` is Fortran- and not C-contiguous)."""
    if order in ("C", "F"):
        return order
    if order == "A":
        fl = strided(a).flags if isinstance(a, Tracer) else _np.asarray(a).flags
        return "F" if fl.f_contiguous and not fl.c_contiguous else "C"
    raise ValueError(f"{name}: order must be one of 'C', 'F', 'A'" +
                     (", 'K'" if name != "reshape" else "") + f", got {order!r}")


def _reshape_is_view(a: Tracer, shape: tuple[int, ...]) -> bool:
    if a._is_scalar():  # a NumPy scalar's reshape is a new array
        return False
    return c_contiguous(a) or reshaped_view(strided(a), shape) is not None


def ravel(a: Any, order: str = "C") -> Any:
    """Flatten to one axis in `order` (C, F, A, or K: memory order): a view where NumPy
    makes one (the elements are equally spaced in that order), else a copy."""
    a = _in_order(a, order, "ravel")
    if not isinstance(a, Tracer) or c_contiguous(a):
        return reshape(a, (-1,))
    return flatten(a)


def flatten(a: Any, order: str = "C") -> Any:
    """A flattened copy in `order` (always a copy, as `ndarray.flatten`)."""
    out = reshape(_in_order(a, order, "flatten"), (-1,))
    return copy(out) if out is a or isinstance(out, Tracer) and out._view is not None else out


def _in_order(a: Any, order: str, name: str) -> Any:
    """`a` with its axes permuted so that C order reads it in `order` (a view)."""
    if order == "K":
        if not isinstance(a, Tracer) or a._view is None and a._layout is None:
            return a  # (a fresh value in C order; one with a layout: np.sin(x.T) is F)
        st = strided(a).strides
        perm = sorted(range(len(st)), key=lambda i: -abs(st[i]))  # (stable: ties keep order)
        return transpose(a, perm)
    return transpose(a) if _layout_order(a, order, name) == "F" else a


def transpose(a: Any, axes: Any = None) -> Any:
    """Permute axes (reverse them by default)."""
    n = len(_shape(a))
    perm = tuple(reversed(range(n))) if axes is None else tuple(_axis(x, n) for x in
                                                               _ints(axes, "axes"))
    if sorted(perm) != list(range(n)):
        raise ValueError(f"axes {axes} don't match an array of {n} dimensions")
    if perm == tuple(range(n)):
        return a
    return as_view(P.transpose(a, perm=perm), a, P.transpose, {"perm": perm})


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Exchange two axes."""
    n = len(_shape(a))
    perm = list(range(n))
    i, j = _axis(axis1, n), _axis(axis2, n)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Move axes to new positions."""
    return transpose(a, _moveaxis_perm(len(_shape(a)), source, destination))


def _moveaxis_perm(n: int, source: Any, destination: Any) -> list[int]:
    src = [_axis(s, n) for s in _ints(source, "source")]
    dst = [_axis(d, n) for d in _ints(destination, "destination")]
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return order


def expand_dims(a: Any, axis: Any) -> Any:
    """Insert unit axes at `axis`."""
    axes = _ints(axis, "axis")
    n = len(_shape(a)) + len(axes)
    axes = set(_axes(axes, n))
    it = iter(_shape(a))
    return reshape(a, tuple(1 if i in axes else next(it) for i in range(n)), always_view=True)


def squeeze(a: Any, axis: Any = None) -> Any:
    """Remove unit axes (all of them, or those in `axis`)."""
    shp = _shape(a)
    axes = [i for i, d in enumerate(shp) if d == 1] if axis is None else _axes(axis, len(shp))
    if builtins.any(shp[i] != 1 for i in axes):
        raise ShapeError(f"cannot select an axis to squeeze out which has size not equal to one "
                         f"(shape {shp}, axis {axis})")
    return reshape(a, tuple(d for i, d in enumerate(shp) if i not in axes), always_view=True)


def broadcast_to(a: Any, shape: Any) -> Any:
    """Broadcast to `shape` (NumPy rules): a read-only view, as in NumPy."""
    shape = _ints(shape)
    if not isinstance(a, Tracer):
        return _np.broadcast_to(a, shape)
    params, ro = {"shape": shape}, a._readonly or "the read-only view returned by broadcast_to"
    if a.shape == shape:  # no operation, but still a read-only view of `a`
        return Tracer(a._b, a.atom, (a, P.reshape, params), readonly=ro)
    return as_view(P.broadcast_to(a, **params), a, P.broadcast_to, params, readonly=ro)


def concatenate(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays along an existing axis."""
    arrays = [asarray(x) for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    nd = len(_shape(arrays[0]))
    if nd == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, nd)
    if len(arrays) == 1:  # (a new array, as NumPy's: writes into it leave the input alone)
        return copy(arrays[0])
    return P.concatenate(*arrays, axis=axis)


@takes_out
def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None) -> Any:
    """Join arrays along a new axis."""
    arrays = [asarray(x) for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    return stack_new(arrays, _axis(axis, len(_shape(arrays[0])) + 1))


def split(a: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split into sub-arrays along `axis` (views)."""
    axis = _axis(axis, len(_shape(a)))
    n = _shape(a)[axis]
    if _np.ndim(indices_or_sections) == 0:
        k = _int(indices_or_sections, "sections")
        if k <= 0 or n % k:
            raise ShapeError(f"array split does not result in an equal division ({n} into "
                             f"{k})")
        bounds = list(range(0, n + 1, n // k))
    else:
        bounds = [0, *_ints(indices_or_sections, "indices"), n]
    pre = (slice(None),) * axis
    return [a[pre + (slice(lo, hi),)] for lo, hi in itertools.pairwise(bounds)]


# ---------------------------------------------------------------------- NumPy dispatching

def dispatch_function(func: Callable, args: tuple, kwargs: dict) -> Any:
    """Route `np.<function>(tracer, ...)` to vecgrad.numpy (or raise naming the function)."""
    fn = _DISPATCH.get(func)
    if fn is None:
        mod = func.__module__ or "numpy"
        ns = NAMESPACES.get(mod)
        fn = getattr(ns, func.__name__, None) if ns is not None else None
        if fn is None or not callable(fn):
            raise unsupported(f"{mod}.{func.__name__}")
        _DISPATCH[func] = fn
    return fn(*args, **kwargs)


_DISPATCH: dict[Callable, Callable] = {}  # NumPy function -> vecgrad.numpy's (found once)
# NumPy's module name -> vecgrad.numpy's module of the same functions: set by the package
# once all of them are defined (this module sits below them)
NAMESPACES: dict[str, Any] = {}
