"""Statistics and scans of `vecgrad.numpy`: var/std/average/cov, cumulative sums and
products, diff, the NaN-ignoring reductions, all/any, select and piecewise.
"""
from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import unsupported, user_src
from ..tracing import Tracer
from . import _contract, _ops
from ._base import _axis1, _dtype, _nd, _shape, asarray, astype, takes_out

__all__ = [
    "all",
    "any",
    "average",
    "corrcoef",
    "count_nonzero",
    "cov",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "ediff1d",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
    "piecewise",
    "ptp",
    "select",
    "std",
    "var",
]


def _count(a: Any, axis: Any) -> int:
    return math.prod(_shape(a)[i] for i in _ops._axes(axis, _nd(a)))


def _float(a: Any) -> Any:
    return astype(a, _np.float64) if _dtype(a).kind in "biu" else a


def _flat_or(a: Any, axis: int | None) -> tuple[Any, int]:
    """(a, axis) with axis normalized; the flattened array and 0 for axis=None."""
    a = asarray(a)
    if axis is None:
        return _ops.ravel(a), 0
    return a, _axis1(axis, _nd(a))


# ------------------------------------------------------------------------------ moments

@takes_out
def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
        keepdims: bool = False, *, where: Any = True, mean: Any = None,
        correction: Any = None) -> Any:
    """Variance: the mean squared deviation, divided by n - ddof (n: the entries `where`
    selects along `axis`, per position when it is an array)."""
    if correction is not None:
        ddof = correction
    dt = _var_dtype(a, dtype, "var")
    a = _float(asarray(a))
    if dt is not None and dt.kind == "f":
        a = astype(a, dt)
    m = _ops.mean(a, axis, keepdims=True, where=where) if mean is None else mean
    d = _ops.subtract(a, m)
    sq = _ops.multiply(d, d) if _dtype(d).kind != "c" else _ops.square(_ops.abs(d))
    total = _ops.sum(sq, axis, keepdims=keepdims, where=where)
    if where is True:
        return _in(_ops.divide(total, float(builtins.max(_count(a, axis) - ddof, 0))), dt)
    n = _ops.count_where(a, axis, keepdims, where, _dtype(total))
    return _in(_ops.divide(total, _ops.maximum(_ops.subtract(n, ddof), 0)), dt)


def _var_dtype(a: Any, dtype: Any, name: str) -> _np.dtype | None:
    """The dtype= of a variance: NumPy sums the squared deviations in it, so the result has
    it (a complex one too, whose values are then real). An integer or bool one rounds the
    mean and the result in NumPy, or raises; a real one of complex values drops their
    imaginary parts in the mean only: neither is traced."""
    if dtype is None:
        return None
    dt = _np.dtype(dtype)
    if dt.kind not in "fc" or (_dtype(a).kind == "c" and dt.kind != "c"):
        raise unsupported(f"numpy.{name} with dtype={dt} of {_dtype(a)} values (NumPy rounds "
                          "or drops parts on the way, or raises): pass a float dtype for "
                          "real values, a complex one for complex values, or cast the result")
    return dt


def _in(x: Any, dt: _np.dtype | None) -> Any:
    return x if dt is None or _dtype(x) == dt else astype(x, dt)


@takes_out
def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
        keepdims: bool = False, *, where: Any = True, mean: Any = None,
        correction: Any = None) -> Any:
    """Standard deviation: the square root of `var`."""
    return _sqrt0(var(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                      correction=correction))


def _nonzero(v: Any, msg: str) -> Any:
    """v, where the compiled code checks that no entry is 0 (NumPy's ZeroDivisionError(msg)
    at the user's line otherwise)."""
    return _checked(v, _ops.not_equal(v, 0), "ZeroDivisionError", msg)


def _sqrt0(v: Any) -> Any:
    """sqrt(v) whose gradient is 0 where v == 0 (a std of identical entries: a kink, like
    abs at 0; identically 0 for a single entry), not inf * 0 = nan."""
    zero = _ops.equal(v, 0)
    return _ops.where(zero, 0.0, _ops.sqrt(_ops.where(zero, 1.0, v)))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """Weighted average along `axis` (weights 1-d along a single axis, or a's shape). With
    weights that sum to zero NumPy raises ZeroDivisionError, as here: at once for weights
    known while tracing, where the compiled code runs for traced ones (P.nonempty)."""
    a = asarray(a)
    if weights is None:
        avg = _ops.mean(a, axis, keepdims=keepdims)
        scl = _np.asarray(_count(a, axis), _dtype(avg))
    else:
        if not isinstance(weights, Tracer) and _np.any(_np.sum(weights, axis=None if _np.ndim(
                weights) == 1 or axis is None else axis) == 0):  # (known now: NumPy's error)
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        w = asarray(weights)
        if _shape(w) != _shape(a):
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if _nd(w) != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            ax = _axis1(axis, _nd(a))
            if _shape(w)[0] != _shape(a)[ax]:
                raise ValueError("Length of weights not compatible with specified axis.")
            w = _ops.reshape(w, tuple(-1 if i == ax else 1 for i in range(_nd(a))))
            w = _ops.broadcast_to(w, _shape(a))
        rt = _np.result_type(_dtype(a), _dtype(w), *(["f8"] if _dtype(a).kind in "biu" else []))
        a, w = astype(a, rt), astype(w, rt)
        scl = _ops.sum(w, axis, keepdims=keepdims)
        avg = _ops.divide(_ops.sum(_ops.multiply(a, w), axis, keepdims=keepdims),
                          _nonzero(scl, "Weights sum to zero, can't be normalized")
                          if isinstance(weights, Tracer) else scl)
    if returned:
        if _shape(scl) != _shape(avg):
            scl = _ops.broadcast_to(scl, _shape(avg)).copy()
        return avg, scl
    return avg


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """Covariance matrix of the variables in the rows (rowvar) or columns of m (and y),
    with NumPy's frequency (`fweights`) and observation (`aweights`) weights. NumPy checks
    their values (integers, none negative, a nonzero sum): traced ones where the compiled
    code runs (NumPy's error at the user's line)."""
    traced = isinstance(fweights, Tracer) or isinstance(aweights, Tracer)
    w, aw = (None, None) if traced else _cov_weights(fweights, aweights)
    if dtype is None:  # (NumPy computes in float64 at least: float32 data give float64)
        dtype = _np.result_type(_dtype(m), _np.float64,
                                *(() if y is None else (_dtype(y),)))
    x = _float(asarray(m))
    if _nd(x) > 2:
        raise ValueError("m has more than 2 dimensions")
    x = _ops.reshape(x, (1, -1)) if _nd(x) < 2 else x
    if not rowvar and _shape(x)[0] != 1:
        x = _ops.transpose(x)
    if y is not None:
        yy = _float(asarray(y))
        yy = _ops.reshape(yy, (1, -1)) if _nd(yy) < 2 else yy
        if not rowvar and _shape(yy)[0] != 1:
            yy = _ops.transpose(yy)
        x = _ops.concatenate([x, yy], 0)
    if dtype is not None:
        x = astype(x, dtype)
    ddof = (0 if bias else 1) if ddof is None else ddof
    n = _shape(x)[1]
    if traced:
        return _traced_cov(x, fweights, aweights, ddof)
    if w is None:
        xc = _ops.subtract(x, _ops.mean(x, 1, keepdims=True))
        c = _ops.divide(_contract.einsum("ij,kj->ik", xc, _conj(xc)),
                        float(builtins.max(n - ddof, 0)))
        return _ops.squeeze(c) if _shape(c) == (1, 1) else c
    if len(w) != n:
        raise RuntimeError("incompatible numbers of samples and weights")
    ws = float(w.sum())  # NumPy's normalization of the weighted sum of squares
    fact = ws if ddof == 0 else ws - ddof if aw is None else ws - ddof * float(
        (w * aw).sum()) / ws
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    wc = _np.asarray(w, dtype=_dtype(x))
    xc = _ops.subtract(x, _ops.divide(_contract.einsum("ij,j->i", x, wc)[:, None], ws))
    c = _ops.divide(_contract.einsum("ij,kj,j->ik", xc, _conj(xc), wc), fact)
    return _ops.squeeze(c) if _shape(c) == (1, 1) else c


def _traced_cov(x: Any, fweights: Any, aweights: Any, ddof: Any) -> Any:
    """cov's weighted case with traced weights: NumPy's formula, its checks of the weights'
    values made where the compiled code runs (P.nonempty), in NumPy's order."""
    w = aw = None
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is None:
            continue
        v = astype(asarray(v), _np.float64)
        if _nd(v) > 1:
            raise RuntimeError(f"cannot handle multidimensional {name}")
        if _shape(v)[0] != _shape(x)[1]:
            raise RuntimeError(f"incompatible numbers of samples and {name}")
        if name == "fweights":
            v = _checked(v, _ops.equal(v, P.rint(v)), "TypeError",
                         "fweights must be integer")
        v = _checked(v, _ops.greater_equal(v, 0), "ValueError", f"{name} cannot be negative")
        w = v if w is None else _ops.multiply(w, v)
        aw = v if name == "aweights" else aw
    w = astype(w, _dtype(x)) if _dtype(x).kind == "c" else w
    ws = _nonzero(_ops.sum(w), "Weights sum to zero, can't be normalized")
    fact = ws if ddof == 0 else _ops.subtract(ws, ddof) if aw is None else _ops.subtract(
        ws, _ops.divide(_ops.multiply(ddof, _ops.sum(_ops.multiply(w, aw))), ws))
    fact = _ops.where(_ops.less_equal(fact, 0), 0.0, fact)  # (NumPy warns, then divides by 0)
    xc = _ops.subtract(x, _ops.divide(_contract.einsum("ij,j->i", x, w)[:, None], ws))
    c = _ops.divide(_contract.einsum("ij,kj,j->ik", xc, _conj(xc), w), fact)
    return _ops.squeeze(c) if _shape(c) == (1, 1) else c


def _checked(v: Any, ok: Any, error: str, msg: str) -> Any:
    """v, where the compiled code checks that `ok` holds everywhere (NumPy's error(msg) at
    the user's line otherwise)."""
    src = user_src(3)
    ok = P.nonempty(ok, axes=(), error=error,
                    msg=msg + (f" (at {src.file}:{src.line})" if src else ""))
    return _ops.where(ok, v, _np.nan)  # (ok is all True where this runs: v)


def _conj(x: Any) -> Any:
    """NumPy's covariance is X @ X^H: the second factor conjugated for complex data."""
    return _ops.conj(x) if _dtype(x).kind == "c" else x


def _cov_weights(fweights: Any, aweights: Any) -> tuple:
    """NumPy's checks of cov's weights, and their product (None when there are none)."""
    w = aw = None
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is None:
            continue
        if isinstance(v, Tracer):
            raise unsupported(f"numpy.cov with traced {name} (NumPy checks their values)")
        arr = _np.array(v, dtype=float)
        if name == "fweights" and not _np.all(arr == _np.around(arr)):
            raise TypeError("fweights must be integer")
        if arr.ndim > 1:
            raise RuntimeError(f"cannot handle multidimensional {name}")
        if _np.any(arr < 0):
            raise ValueError(f"{name} cannot be negative")
        w = arr if w is None else w * arr
        aw = arr if name == "aweights" else aw
    return w, aw


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """Pearson correlation coefficients (clipped to [-1, 1] as NumPy does)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if _nd(c) == 0:
        return _ops.divide(c, c)
    d = _ops.sqrt(_ops.real(_contract.einsum("ii->i", c)))  # (real, as NumPy's stddev)
    c = _ops.divide(_ops.divide(c, _ops.reshape(d, (-1, 1))), d)
    if _dtype(c).kind == "c":  # (NumPy clips the real and imaginary parts each)
        return _ops.add(_ops.clip(_ops.real(c), -1, 1),
                        _ops.multiply(_ops.clip(_ops.imag(c), -1, 1), 1j))
    return _ops.clip(c, -1, 1)


@takes_out
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range of values (maximum - minimum) along `axis`."""
    return _ops.subtract(_ops.max(a, axis, keepdims=keepdims), _ops.min(a, axis, keepdims=keepdims))


# --------------------------------------------------------------------------------- logic

def _truth(a: Any) -> Any:
    a = asarray(a)
    return a if _dtype(a) == bool else _ops.not_equal(a, 0)


@takes_out
def all(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = True) -> Any:
    """Whether all entries along `axis` are true (nonzero)."""
    return _logic(a, axis, keepdims, where, _ops.min, True, "all")


@takes_out
def any(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = True) -> Any:
    """Whether any entry along `axis` is true (nonzero)."""
    return _logic(a, axis, keepdims, where, _ops.max, False, "any")


def _logic(a: Any, axis: Any, keepdims: bool, where: Any, red: Callable, empty: bool,
           name: str) -> Any:
    if where is not True:
        raise unsupported(f"numpy.{name} with where=")
    t = _truth(a)
    if _count(t, axis) == 0:  # a reduction over nothing: the identity
        axes = _ops._axes(axis, _nd(t))
        s = tuple(1 if i in axes else d for i, d in enumerate(_shape(t)) if keepdims or
                  i not in axes)
        return _np.full(s, empty)
    return red(t, axis, keepdims=keepdims)


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The number of nonzero entries along `axis`."""
    return _ops.sum(astype(_truth(a), _np.intp), axis, keepdims=keepdims)


# --------------------------------------------------------------------------------- scans

def _scan(prim: P.Primitive, a: Any, axis: Any, dtype: Any, **params: Any) -> Any:
    a, ax = _flat_or(a, axis)
    if dtype is not None:
        a = astype(a, dtype)
    return _ops._in(dtype, prim(a, axis=ax, **params))


@takes_out
def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum along `axis` (of the flattened array by default)."""
    return _scan(P.cumsum, a, axis, dtype, reverse=False)


@takes_out
def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product along `axis` (exact gradient, also where entries are zero)."""
    return _scan(P.cumprod, a, axis, dtype)


def cummax(a: Any, axis: int = 0) -> Any:
    """Running maximum (`np.maximum.accumulate`): the gradient goes to the latest element
    attaining it."""
    return _scan(P.cummax, a, axis, None)


def cummin(a: Any, axis: int = 0) -> Any:
    """Running minimum (`np.minimum.accumulate`)."""
    return _scan(P.cummin, a, axis, None)


def cumall(a: Any, axis: int = 0) -> Any:
    """`np.logical_and.accumulate`."""
    return cummin(_truth(a), axis)


def cumany(a: Any, axis: int = 0) -> Any:
    """`np.logical_or.accumulate`."""
    return cummax(_truth(a), axis)


def _cumulative(fn: Callable, x: Any, axis: Any, dtype: Any, include_initial: bool,
                init: float) -> Any:
    x = asarray(x)
    if axis is None:
        if _nd(x) > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` "
                             "argument is required.")
        axis = 0
    res = fn(x, axis, dtype)
    if include_initial:
        ax = _axis1(axis, _nd(x))
        s = list(_shape(res))
        s[ax] = 1
        res = _ops.concatenate([_np.full(tuple(s), init, _dtype(res)), res], ax)
    return res


@takes_out
def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Any:
    """The array-API cumulative sum (optionally starting with 0)."""
    return _cumulative(cumsum, x, axis, dtype, include_initial, 0)


@takes_out
def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    out: Any = None, include_initial: bool = False) -> Any:
    """The array-API cumulative product (optionally starting with 1)."""
    return _cumulative(cumprod, x, axis, dtype, include_initial, 1)


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = _np._NoValue,
         append: Any = _np._NoValue) -> Any:
    """The n-th discrete difference along `axis`."""
    a = asarray(a)
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if _nd(a) == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis1(axis, _nd(a))
    parts = []
    for extra in (prepend, append):
        if extra is _np._NoValue:
            parts.append(None)
            continue
        e = asarray(extra)
        if _nd(e) == 0:
            s = list(_shape(a))
            s[ax] = 1
            e = _ops.broadcast_to(e, tuple(s))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        a = _ops.concatenate([p for p in (parts[0], a, parts[1]) if p is not None], ax)
    op = _ops.not_equal if _dtype(a) == bool else _ops.subtract
    for _ in range(n):
        k = _shape(a)[ax]
        hi = a[(slice(None),) * ax + (slice(1, None),)]
        lo = a[(slice(None),) * ax + (slice(None, builtins.max(k - 1, 0)),)]
        a = op(hi, lo)
    return a


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive elements of the flattened array."""
    d = diff(_ops.ravel(asarray(ary)))
    parts = [_ops.ravel(asarray(v)) for v in (to_begin,) if v is not None] + [d] + \
        [_ops.ravel(asarray(v)) for v in (to_end,) if v is not None]
    return _ops.concatenate([astype(p, _dtype(d)) for p in parts], 0) if len(parts) > 1 else d


# -------------------------------------------------------------------- NaN-ignoring reductions

def _isnan(a: Any) -> Any:
    return P.isnan(a)


@takes_out
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = _np._NoValue, where: Any = True) -> Any:
    """Sum treating NaNs as zero."""
    return _ops.sum(_nan0(a), axis, dtype, out, keepdims, initial, where)


@takes_out
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = _np._NoValue, where: Any = True) -> Any:
    """Product treating NaNs as one."""
    return _ops.prod(_nan_to(a, 1.0), axis, dtype, out, keepdims, initial, where)


def _nan0(a: Any) -> Any:
    return _nan_to(a, 0.0)


def _nan_to(a: Any, v: float) -> Any:
    a = asarray(a)
    return _ops.where(_isnan(a), v, a) if _dtype(a).kind in "fc" else a


def _nan_count(a: Any, axis: Any, keepdims: bool) -> Any:
    a = asarray(a)
    if _dtype(a).kind not in "fc":
        return _np.asarray(_count(a, axis), _np.float64)
    return _ops.sum(astype(_ops.logical_not(_isnan(a)), _np.intp), axis, keepdims=keepdims)


@takes_out
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, *, where: Any = True) -> Any:
    """Mean of the non-NaN entries (NaN for an all-NaN slice)."""
    a = asarray(a)
    if _dtype(a).kind not in "fc":  # (no NaNs: NumPy's mean, in `dtype` if given)
        return _ops.mean(a, axis, dtype, out, keepdims, where=where)
    s = nansum(a, axis, dtype, out, keepdims, where=where)
    kept = _ops.logical_not(_isnan(a))
    n = _ops.sum(astype(kept if where is True else _ops.logical_and(kept, where), _np.intp),
                 axis, keepdims=keepdims)
    return _ops.divide(s, astype(n, _dtype(s)))


@takes_out
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, mean: Any = None, correction: Any = None) -> Any:
    """Variance of the non-NaN entries."""
    if correction is not None:
        ddof = correction
    dt = _var_dtype(a, dtype, "nanvar")
    a = _float(asarray(a))
    real = dt if dt is not None and dt.kind == "f" else None  # (NumPy's sums' dtype)
    m = nanmean(a, axis, real, keepdims=True) if mean is None else mean
    d = _nan0(_ops.subtract(a, m))
    sq = _ops.multiply(d, d) if _dtype(d).kind != "c" else _ops.square(_ops.abs(d))
    s = _ops.sum(sq, axis, real, keepdims=keepdims)
    n = _ops.subtract(astype(_nan_count(a, axis, keepdims), _dtype(s)), float(ddof))
    return _in(_ops.divide(s, _ops.maximum(n, 0.0)), dt)


@takes_out
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, mean: Any = None, correction: Any = None) -> Any:
    """Standard deviation of the non-NaN entries."""
    return _sqrt0(nanvar(a, axis, dtype, None, ddof, keepdims, mean=mean,
                         correction=correction))


def _nan_extreme(red: Callable, fill: float, a: Any, axis: Any, keepdims: bool) -> Any:
    a = asarray(a)
    if _dtype(a).kind not in "fc":
        return red(a, axis, keepdims=keepdims)
    nan = _isnan(a)
    r = red(_ops.where(nan, fill, a), axis, keepdims=keepdims)
    return _ops.where(all(nan, axis, keepdims=keepdims), _np.nan, r)  # all-NaN: NaN


@takes_out
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Maximum ignoring NaNs (NaN for an all-NaN slice)."""
    return _nan_extreme(_ops.max, -_np.inf, a, axis, keepdims)


@takes_out
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Minimum ignoring NaNs (NaN for an all-NaN slice)."""
    return _nan_extreme(_ops.min, _np.inf, a, axis, keepdims)


@takes_out
def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum treating NaNs as zero."""
    return cumsum(_nan0(a), axis, dtype)


@takes_out
def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product treating NaNs as one."""
    return cumprod(_nan_to(a, 1.0), axis, dtype)


# ---------------------------------------------------------------------- select, piecewise

def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """The entry of the first choice whose condition holds, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for c in condlist:
        if _dtype(c) != bool:
            raise TypeError("invalid entry in condlist: should be boolean ndarray")
    choices = [asarray(c) for c in choicelist]
    # (a Python number default is weak, as in NumPy: bools with 0 are int64, int8 with 0.5
    # float64, float32 with 0 float32)
    dt = _np.result_type(*[_dtype(c) for c in choices], default
                         if isinstance(default, (int, float, complex)) else _dtype(default))
    out = asarray(default) if isinstance(default, Tracer) else _np.asarray(default, dt)
    for c, v in zip(reversed(list(condlist)), reversed(choices)):
        out = _ops.where(c, v, out)
    return astype(out, dt)


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """Evaluate `funclist[i]` where `condlist[i]` holds (later conditions win; a value in
    place of a function is a constant; one extra function is the default). The result has x's
    dtype. With traced conditions every function sees the whole array, but values (and
    gradients) are taken only where its condition holds."""
    x = asarray(x)
    if not isinstance(condlist, (list, tuple)) or not condlist or _np.ndim(condlist[0]) == 0 \
            and _nd(x) > 0 and len(condlist) == _shape(x)[0]:
        condlist = [condlist]  # one condition (an array, or a list of bools per entry)
    condlist = list(condlist)
    if len(funclist) == len(condlist) + 1:
        condlist = condlist + [_ops.logical_not(_any_of(condlist))]
    elif len(funclist) != len(condlist):
        raise ValueError(f"with {len(condlist)} condition(s), either {len(condlist)} or "
                         f"{len(condlist) + 1} functions are expected")
    y = _ops.broadcast_to(_np.zeros((), _dtype(x)), _shape(x))
    for cond, f in zip(condlist, funclist):
        c = _ops.broadcast_to(asarray(cond), _shape(x))
        if callable(f):
            inner = _ops.where(c, x, P.stop_gradient(x)) if isinstance(x, Tracer) else x
            v = f(inner, *args, **kw)
        else:
            v = f
        y = _ops.where(c, astype(asarray(v), _dtype(x)), y)
    return y


def _any_of(conds: list) -> Any:
    out = conds[0]
    for c in conds[1:]:
        out = _ops.logical_or(out, c)
    return out
