"""Statistics of `vecgrad.numpy`: var/std/average/cov/corrcoef/ptp and all/any/count_nonzero
(scans: _scans.py; NaN-ignoring reductions: _nanstats.py; select and piecewise: _choose.py).
"""
from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable
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
    "ptp",
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
