"""More of NumPy's namespace for traced code: vector products and the array-API names of
NumPy 2, index arithmetic and set membership, `apply_along_axis` / `apply_over_axes` /
`vectorize` (Python loops that vecgrad batches), geomspace/logspace with traced endpoints,
unwrap and sort_complex."""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import TraceError, unsupported
from ..tracing import Tracer
from . import _contract, _ops, _ufuncs
from ._base import _dtype, _nd, _shape, asarray, astype
from ._creation import linspace
from ._indexing import take
from ._order import argsort, sort
from ._scans import cumsum, diff
from ._shape_ops import concatenate
from ._stats import any as any_
from ._vectorize import vectorized_call

__all__ = [
    "acos",
    "acosh",
    "apply_along_axis",
    "apply_over_axes",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "concat",
    "digitize",
    "fill_diagonal",
    "geomspace",
    "i0",
    "isin",
    "ix_",
    "lexsort",
    "logspace",
    "matrix_transpose",
    "matvec",
    "permute_dims",
    "pow",
    "ravel_multi_index",
    "sort_complex",
    "unravel_index",
    "unstack",
    "unwrap",
    "vdot",
    "vecdot",
    "vecmat",
    "vectorize",
]


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 0, as np.i0 (integers
    promote to float64, float32 stays float32, complex raises TypeError)."""
    x = asarray(x)
    if _dtype(x).kind == "c":
        raise TypeError("i0 not supported for complex values")
    if _dtype(x).kind != "f":
        return P.i0(astype(x, _np.float64))
    return astype(P.i0(x), _dtype(x))  # (float16 stays float16, as NumPy's)


# ----------------------------------------------------------------------- vector products

def _conj(x: Any) -> Any:
    if _dtype(x).kind != "c":
        return x
    return _ops.conj(x)


def vdot(a: Any, b: Any, /) -> Any:
    """Dot product of the flattened arrays, conjugating the first."""
    return _contract.dot(_ops.ravel(_conj(asarray(a))), _ops.ravel(asarray(b)))


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, keepdims: bool = False, **kw: Any) -> Any:
    """Vector dot products along `axis`, conjugating x1, broadcasting the rest."""
    if kw.pop("out", None) is not None or kw:
        raise unsupported(f"numpy.vecdot with {sorted(kw) or ['out']}")
    x1 = _ops.moveaxis(asarray(x1), axis, -1)  # the axis of each operand, as a gufunc's
    x2 = _ops.moveaxis(asarray(x2), axis, -1)
    # (a gufunc: integers are summed in their own dtype, booleans with `or`, as NumPy's)
    out = _ops.sum(_ops.multiply(_conj(x1), x2), axis=-1,
                   dtype=_np.result_type(_dtype(x1), _dtype(x2)))
    return _ops.expand_dims(out, axis % (_nd(out) + 1)) if keepdims else out


def matvec(x1: Any, x2: Any, /, **kw: Any) -> Any:
    """Matrix-vector products over the last axes (broadcasting the rest)."""
    if kw.pop("out", None) is not None or kw:
        raise unsupported(f"numpy.matvec with {sorted(kw) or ['out']}")
    return _contract.einsum("...ij,...j->...i", *_bcast(x1, x2, 2, 1))


def vecmat(x1: Any, x2: Any, /, **kw: Any) -> Any:
    """Vector-matrix products (conjugating the vector) over the last axes."""
    if kw.pop("out", None) is not None or kw:
        raise unsupported(f"numpy.vecmat with {sorted(kw) or ['out']}")
    v, m = _bcast(_conj(asarray(x1)), x2, 1, 2)
    return _contract.einsum("...j,...ji->...i", v, m)


def _bcast(a: Any, b: Any, ka: int, kb: int) -> tuple:
    a, b = asarray(a), asarray(b)
    batch = _np.broadcast_shapes(_shape(a)[:_nd(a) - ka], _shape(b)[:_nd(b) - kb])
    return (_ops.broadcast_to(a, batch + _shape(a)[_nd(a) - ka:]),
            _ops.broadcast_to(b, batch + _shape(b)[_nd(b) - kb:]))


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes (a view)."""
    if _nd(x) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return _ops.swapaxes(x, -1, -2)


def permute_dims(a: Any, /, axes: Any = None) -> Any:
    """The array-API name of transpose."""
    return _ops.transpose(a, axes)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0, **kw: Any) -> Any:
    """The array-API name of concatenate."""
    return concatenate(arrays, axis, **kw)


def unstack(x: Any, /, *, axis: int = 0) -> tuple:
    """The slices along `axis`, as a tuple of views."""
    x = asarray(x)
    ax = axis % _nd(x)
    return tuple(x[(slice(None),) * ax + (i,)] for i in range(_shape(x)[ax]))


def _ufunc_alias(name: str) -> Any:
    return getattr(_ufuncs, name)


acos, acosh, asin, asinh = (_ufunc_alias(n) for n in ("arccos", "arccosh", "arcsin", "arcsinh"))
atan, atan2, atanh, pow = (_ufunc_alias(n) for n in ("arctan", "arctan2", "arctanh", "power"))


# ------------------------------------------------------------------------ sets and indices

def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: Any = None) -> Any:
    """Elementwise membership in `test_elements` (one comparison per pair)."""
    element, tests = asarray(element), _ops.ravel(asarray(test_elements))
    hit = any_(_ops.equal(_ops.expand_dims(element, -1), tests), axis=-1) \
        if _shape(tests)[0] else _np.zeros(_shape(element), bool)
    return _ops.logical_not(hit) if invert else hit


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """Indices of the bins (monotonic) that the values of x fall in. Traced bins: both
    directions searched and one picked as NumPy picks it (see _direction); bins neither
    increasing nor decreasing raise NumPy's ValueError where the compiled code runs."""
    if _dtype(x).kind == "c":
        raise TypeError("x may not be complex")  # (NumPy's words)
    side = "left" if right else "right"
    if isinstance(bins, Tracer):
        if _nd(bins) != 1:
            raise ValueError("object too deep for desired array")
        up = P.searchsorted(bins, x, side=side)
        if _shape(bins)[0] <= 1:
            return up
        down = _ops.subtract(_shape(bins)[0], P.searchsorted(bins[::-1], x, side=side))
        return _ops.where(_direction(bins), up, down)
    bins = _np.asarray(bins)
    if bins.ndim != 1:
        raise ValueError("object too deep for desired array")
    _np.digitize(_np.zeros(0), bins)  # (NumPy's check: bins neither way raise ValueError)
    neq = bins[1:] != bins[:1]
    if not neq.any() or bins[0] < bins[1:][neq.argmax()]:
        return P.searchsorted(bins, x, side=side)
    return _ops.subtract(len(bins), P.searchsorted(bins[::-1].copy(), x, side=side))


def _direction(a: Tracer) -> Tracer:
    """Whether NumPy takes the traced bins `a` as increasing (its check_array_monotonic: the
    first entry unequal to a[0] says the direction, increasing where none is; a step against
    it raises, a NaN never does), checked where the compiled code runs (P.nonempty)."""
    head, rest = a[0], a[1:]
    neq = _ufuncs.not_equal(rest, head)
    first = P.take_along(rest, _ops.reshape(P.argmax(neq, axis=0), (1,)), axis=0)[0]
    up = _ufuncs.logical_or(_ufuncs.logical_not(any_(neq)), head < first)
    ok = _ops.where(up, _ufuncs.logical_not(any_(a[:-1] > a[1:])),
                    _ufuncs.logical_not(any_(a[:-1] < a[1:])))
    ok = P.nonempty(_ops.reshape(ok, (1,)), axes=(0,), error="ValueError",
                    msg="bins must be monotonically increasing or decreasing")
    return _ufuncs.logical_and(up, ok[0])


def lexsort(keys: Any, axis: int = -1) -> Any:
    """Indices sorting by the last key, then the one before, ... (stable; no gradient)."""
    keys = [asarray(k) for k in keys] if isinstance(keys, (list, tuple)) else \
        [asarray(keys)[i] for i in range(_shape(keys)[0])]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    ax = axis % _nd(keys[0])
    idx = argsort(keys[0], ax, kind="stable")
    for k in keys[1:]:
        k = _ops.broadcast_to(k, _shape(idx))
        order = argsort(P.take_along(k, idx, axis=ax), ax, kind="stable")
        idx = P.take_along(idx, order, axis=ax)
    return idx


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple:
    """Flat indices into a tuple of coordinate arrays (C order)."""
    if order != "C":
        raise unsupported("numpy.unravel_index with order='F'")
    if not isinstance(indices, Tracer):
        return _np.unravel_index(indices, shape, order)
    shape = (int(shape),) if _np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    out, rest = [], indices
    for d in reversed(shape):
        out.append(P.remainder(rest, d))
        rest = P.floor_divide(rest, d)
    return tuple(reversed(out))


def ravel_multi_index(multi_index: Any, dims: Any, mode: str = "raise",
                      order: str = "C") -> Any:
    """Coordinate arrays into flat indices (C order; mode 'wrap' or 'clip' for traced
    coordinates, whose bounds cannot be checked while tracing)."""
    if not any(isinstance(m, Tracer) for m in multi_index):
        return _np.ravel_multi_index(multi_index, dims, mode=mode, order=order)
    if order != "C":
        raise unsupported("numpy.ravel_multi_index with order='F'")
    dims = tuple(int(d) for d in dims)
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    flat = None
    for m, d, md in zip(multi_index, dims, modes):
        if md == "wrap":
            m = P.remainder(m, d)
        elif md == "clip":
            m = _ops.clip(m, 0, d - 1)
        flat = m if flat is None else _ops.add(_ops.multiply(flat, d), m)
    return flat


def ix_(*args: Any) -> tuple:
    """Open-mesh index arrays from 1-d sequences."""
    n = len(args)
    out = []
    for k, a in enumerate(args):
        a = asarray(a)
        if _dtype(a) == bool:
            if isinstance(a, Tracer):
                raise TraceError("numpy.ix_ with a traced boolean array has a data-dependent "
                                 "shape")
            a = _np.nonzero(a)[0]
        out.append(_ops.reshape(a, (1,) * k + (-1,) + (1,) * (n - k - 1)))
    return tuple(out)


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """In-place write of `val` (repeated as needed) on the main diagonal; for more than two
    axes, all of equal length, on a[i, i, ..., i]."""
    s = _shape(a)
    if len(s) < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if len(s) == 2:
        step = s[1] + 1
        end = None if wrap else s[1] * s[1]
    else:
        if len(set(s)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(_np.cumprod(s[:-1]).sum())
    n = len(range(*slice(None, end, step).indices(math.prod(s))))
    val = _ops.ravel(asarray(val))
    if _shape(val)[0] not in (1, n):
        val = take(val, _np.arange(n) % _shape(val)[0])
    _ops.reshape(a, (-1,), always_view=True)[:end:step] = val


# ---------------------------------------------------------------- Python loops, batched

def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """func1d on every 1-d slice along `axis` (a Python loop that vecgrad batches)."""
    arr = asarray(arr)
    nd = _nd(arr)
    ax = axis % nd
    moved = _ops.moveaxis(arr, ax, -1)
    outer = _shape(moved)[:-1]
    if not outer or math.prod(outer) == 0:
        if not outer:
            return asarray(func1d(moved, *args, **kwargs))
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    res = [asarray(func1d(moved[i], *args, **kwargs)) for i in _np.ndindex(*outer)]
    out = _ops.reshape(_ops.stack(res), outer + _shape(res[0]))
    k = len(_shape(res[0]))  # the result's own axes go where `axis` was
    return _ops.moveaxis(out, tuple(range(len(outer), len(outer) + k)),
                         tuple(range(ax, ax + k))) if k else out


class vectorize:
    """`numpy.vectorize` for traced code: `pyfunc` runs on the elements (or, with a
    `signature`, on the core sub-arrays) in a Python loop, which vecgrad batches into
    whole-array operations."""

    def __init__(self, pyfunc: Callable, otypes: Any = None, doc: Any = None,
                 excluded: Any = None, cache: bool = False, signature: str | None = None):
        self.pyfunc, self.otypes, self.signature = pyfunc, otypes, signature
        self.excluded = set(excluded or ())
        self.__doc__ = doc or pyfunc.__doc__
        functools.update_wrapper(self, pyfunc, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.signature is None and not self.excluded:  # (per element, keywords too)
            return vectorized_call(self, args, kwargs)
        keep = {i: a for i, a in enumerate(args) if i in self.excluded}
        arrs = [asarray(a) for i, a in enumerate(args) if i not in self.excluded]
        cores = self._cores(len(arrs))
        loop = _np.broadcast_shapes(*[_shape(a)[:_nd(a) - c] for a, c in zip(arrs, cores)])
        arrs = [_ops.broadcast_to(a, loop + _shape(a)[_nd(a) - c:]) for a, c in zip(arrs, cores)]
        results = []
        for i in _np.ndindex(*loop):
            call = [a[i] for a in arrs]
            full = [keep[k] if k in keep else call.pop(0) for k in range(len(args))]
            results.append(self.pyfunc(*full, **kwargs))
        if not results:
            raise ValueError("cannot call `vectorize` on size 0 inputs")
        if isinstance(results[0], tuple):
            return tuple(self._assemble([r[k] for r in results], loop, k)
                         for k in range(len(results[0])))
        return self._assemble(results, loop, 0)

    def _cores(self, n: int) -> list[int]:
        if self.signature is None:
            return [0] * n
        ins = self.signature.replace(" ", "").split("->")[0]
        parts = [p for p in ins.strip("()").split("),(")] if ins != "()" else [""]
        return [len([d for d in p.split(",") if d]) for p in parts]

    def _assemble(self, results: list, loop: tuple, k: int) -> Any:
        out = _ops.stack([asarray(r) for r in results])
        out = _ops.reshape(out, loop + _shape(out)[1:])
        if self.otypes:
            out = astype(out, _np.dtype(self.otypes[k]))  # a typecode string or a list
        return out


def traced_vectorize(vec: Any, args: tuple, kwargs: dict) -> Any:
    """np.vectorize(...)(traced arguments) while tracing (pyarrays): as vnp.vectorize."""
    return vectorize(vec.pyfunc, vec.otypes, None, vec.excluded, False,
                     vec.signature)(*args, **kwargs)


# ------------------------------------------------------- more array functions

def apply_over_axes(func: Callable, a: Any, axes: Any) -> Any:
    """func(a, axis) over each axis in turn, keeping the number of dimensions."""
    val = asarray(a)
    nd = _nd(val)
    for axis in (axes if isinstance(axes, (list, tuple)) else [axes]):
        ax = axis % nd
        res = asarray(func(val, ax))
        if _nd(res) == nd:
            val = res
        elif _nd(res) == nd - 1:
            val = _ops.expand_dims(res, ax)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return val


def sort_complex(a: Any) -> Any:
    """Sort by real part, then imaginary part; the result is complex."""
    out = sort(a)
    dt = _np.result_type(_dtype(out), _np.complex64)
    return astype(out, dt)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """Numbers spaced evenly on a log scale from start to stop (differentiable in traced
    positive endpoints; the endpoints are exact)."""
    if not (isinstance(start, Tracer) or isinstance(stop, Tracer)):
        return _np.geomspace(start, stop, num, endpoint, dtype, axis)
    if axis != 0:
        raise unsupported("numpy.geomspace with traced endpoints and axis != 0")
    start, stop = asarray(start), asarray(stop)
    y = _ops.exp(linspace(_ops.log(start), _ops.log(stop), num, endpoint))
    if num > 0:
        y[0] = start
    if endpoint and num > 1:
        y[-1] = stop
    return y if dtype is None else astype(y, dtype)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """base ** linspace(start, stop) (differentiable in traced start, stop and base)."""
    if not any(isinstance(v, Tracer) for v in (start, stop, base)):
        return _np.logspace(start, stop, num, endpoint, base, dtype, axis)
    y = _ops.power(base, linspace(start, stop, num, endpoint, axis=axis))
    return y if dtype is None else astype(y, dtype)


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * _np.pi) -> Any:
    """Unwrap phase jumps larger than `discont` along `axis` (NumPy's algorithm; the
    corrections are piecewise constant, so the gradient passes straight through)."""
    p = asarray(p)
    nd = _nd(p)
    ax = axis % nd
    dd = diff(p, axis=ax)
    discont = period / 2 if discont is None else discont
    high = period / 2
    ddmod = _ops.subtract(P.remainder(_ops.add(dd, high), period), high)
    ddmod = _ops.where(_ops.logical_and(_ops.equal(ddmod, -high), _ops.greater(dd, 0)), high,
                       ddmod)
    corr = _ops.where(_ops.less(_ops.abs(dd), discont), 0.0, _ops.subtract(ddmod, dd))
    first = p[(slice(None),) * ax + (slice(0, 1),)]
    rest = _ops.add(p[(slice(None),) * ax + (slice(1, None),)], cumsum(corr, axis=ax))
    return _ops.concatenate([first, rest], ax)
