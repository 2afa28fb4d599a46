"""Array operations of `vecgrad.numpy`: elementwise (from `_elementwise`), reductions, shapes,
contractions."""
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
from ._elementwise import (  # (re-exported: _ops is vecgrad.numpy's operations)
    abs,
    absolute,
    add,
    angle,
    clip,
    conj,
    conjugate,
    cos,
    divide,
    equal,
    exp,
    expm1,
    greater,
    greater_equal,
    imag,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    positive,
    power,
    real,
    sign,
    sin,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tanh,
    true_divide,
    where,
)

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


def _joined(arrays: Sequence[Any]) -> None:
    """`max(x32[i], 0.0)` (pybuiltins' EitherScalar) joined into an array: NumPy makes the
    Python number a float64 array, so the array's dtype may depend on which item won."""
    for x in arrays:
        if getattr(x, "_either", False):
            x.check_either([_dtype(a) for a in arrays if not getattr(a, "_weak", False)],
                           True)  # (a Python number in the list: its int64 / float64)


def concatenate(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays along an existing axis."""
    _joined(arrays)
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
    _joined(arrays)
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
