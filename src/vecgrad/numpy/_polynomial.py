"""Convolution, correlation, polynomials, interpolation and integration of `vecgrad.numpy`,
built from slices, products and sums (differentiable in every float operand)."""
from __future__ import annotations

from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import unsupported
from ..tracing import Tracer
from . import _ops, linalg
from ._base import _dtype, _shape, asarray, astype
from ._contract import einsum
from ._indexing import take
from ._order import argsort
from ._scans import diff
from ._ufuncs import remainder

__all__ = ["convolve", "correlate", "interp", "poly", "polyadd", "polyder", "polyfit",
           "polyint", "polymul", "polysub", "polyval", "trapezoid", "vander"]


def _1d(a: Any, name: str) -> Any:
    a = asarray(a)
    if len(_shape(a)) != 1:
        a = _ops.ravel(a) if len(_shape(a)) == 0 else a
        if len(_shape(a)) != 1:
            raise ValueError(f"{name}: object too deep for desired array")
    return a


def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """Discrete linear convolution of two 1-d arrays (modes full, same, valid), as NumPy's:
    out[i] = sum_k p[i + k] v[m - 1 - k] over the windows of the (zero-padded) longer array
    p. The windows are one strided view and the sum one contraction, so a loop of
    convolutions batches into one contraction and the gradient is a strided add per tap."""
    a, v = _1d(a, "convolve"), _1d(v, "convolve")
    n, m = _shape(a)[0], _shape(v)[0]
    if n == 0 or m == 0:
        raise ValueError("v cannot be empty" if m == 0 else "a cannot be empty")
    if m > n:
        a, v, n, m = v, a, m, n
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'full', 'same' or 'valid' (got {mode!r})")
    if mode == "valid" or m == 1:
        src, lo, count = a, 0, n - m + 1
    else:
        zeros = _np.zeros(m - 1, _np.result_type(_dtype(a), _dtype(v)))
        src = _ops.concatenate([zeros, a, zeros], 0)
        lo, count = (0, n + m - 1) if mode == "full" else ((m - 1) // 2, n)
    windows = P.strided(src, start=(lo,), dims=((count, (1,)), (m, (1,))))
    return einsum("tk,k->t", windows, v[::-1])


def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """Cross-correlation of two 1-d arrays: convolve(a, conj(v)[::-1]) as NumPy."""
    a, v = _1d(a, "correlate"), _1d(v, "correlate")
    if mode == "same" and _shape(v)[0] > _shape(a)[0]:
        # NumPy correlates the longer v against a and reverses that (conjugated): its 'same'
        # window then sits where the swapped call puts it
        out = correlate(v, a, mode)[::-1]
        return _conj(out) if _np.result_type(_dtype(a), _dtype(v)).kind == "c" else out
    return convolve(a, _conj(v)[::-1], mode)  # c[k] = sum_n a[n + k] v[n]


def _conj(v: Any) -> Any:
    if _dtype(v).kind != "c":
        return v
    return _ops.conj(v)


def polyval(p: Any, x: Any) -> Any:
    """The polynomial with coefficients p (highest degree first) at x (Horner's scheme, as
    NumPy: y = y * x + p[k] from y = 0)."""
    p = asarray(p)
    y = _np.zeros(_shape(x), _dtype(x))
    for k in range(_shape(p)[0]):
        y = _ops.add(_ops.multiply(y, x), p[k])
    return y


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix: columns x**(N-1), ..., x**0 (or increasing), in NumPy's
    dtype, x's promoted with int (float32 and int8 give float64 and int64)."""
    x = _1d(x, "vander")
    dt = _np.promote_types(_dtype(x), int)
    if dt != _dtype(x):
        x = astype(x, dt)
    n = _shape(x)[0] if N is None else int(N)
    cols = [_ops.power(x, k) if k > 1 else x if k == 1 else _ops.power(x, 0)
            for k in range(n)]
    if not increasing:
        cols = cols[::-1]
    return _ops.stack(cols, 1) if cols else _ops.reshape(x[:0], (_shape(x)[0], 0))


def _poly1d(p: Any) -> Any:
    p = asarray(p)
    if len(_shape(p)) == 0:
        p = _ops.reshape(p, (1,))
    return p


def polyadd(a1: Any, a2: Any) -> Any:
    """Sum of two polynomials (coefficients highest first)."""
    a1, a2 = _poly1d(a1), _poly1d(a2)
    n1, n2 = _shape(a1)[0], _shape(a2)[0]
    if n1 < n2:
        a1 = _ops.concatenate([_np.zeros(n2 - n1, _dtype(a1)), a1], 0)
    elif n2 < n1:
        a2 = _ops.concatenate([_np.zeros(n1 - n2, _dtype(a2)), a2], 0)
    return _ops.add(a1, a2)


def polysub(a1: Any, a2: Any) -> Any:
    """Difference of two polynomials."""
    return polyadd(a1, _ops.negative(_poly1d(a2)))


def polymul(a1: Any, a2: Any) -> Any:
    """Product of two polynomials."""
    return convolve(_poly1d(a1), _poly1d(a2))


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with these roots (1-d input)."""
    z = asarray(seq_of_zeros)
    if len(_shape(z)) != 1:
        raise unsupported("numpy.poly of a matrix (needs its eigenvalues)")
    c = _np.ones(1, _np.result_type(_dtype(z), _np.float64))
    for k in range(_shape(z)[0]):
        c = convolve(c, _ops.stack([_np.ones((), _dtype(z)), _ops.negative(z[k])]))
    return c


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: bool = False) -> Any:
    """Least-squares polynomial fit (NumPy's column scaling), differentiable in x, y and w."""
    if full or cov:
        raise unsupported("numpy.polyfit with full=True or cov=True")
    x, y = astype(asarray(x), _np.float64), astype(asarray(y), _np.float64)
    order = int(deg) + 1
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = asarray(w)
        lhs = _ops.multiply(lhs, _ops.reshape(w, (-1, 1)))
        rhs = _ops.multiply(rhs, w if len(_shape(rhs)) == 1 else _ops.reshape(w, (-1, 1)))
    if rcond is None:
        rcond = _shape(x)[0] * _np.finfo(_np.float64).eps
    scale = _ops.sqrt(_ops.sum(_ops.multiply(lhs, lhs), axis=0))
    c = linalg.lstsq(_ops.divide(lhs, scale), rhs, rcond)[0]
    return _ops.divide(c, scale if len(_shape(c)) == 1 else _ops.reshape(scale, (-1, 1)))


def polyder(p: Any, m: int = 1) -> Any:
    """The m-th derivative of a polynomial."""
    p = _poly1d(p)
    for _ in range(m):
        n = _shape(p)[0] - 1
        if n <= 0:
            return _ops.multiply(p[:1], 0)
        p = _ops.multiply(p[:-1], _np.arange(n, 0, -1))
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative of a polynomial (integration constants k, default 0)."""
    p = _poly1d(p)
    ks = _np.zeros(m) if k is None else _np.atleast_1d(k)
    if len(ks) == 1 and m > 1:
        ks = _np.full(m, ks[0])
    for i in range(m):
        n = _shape(p)[0]
        scaled = _ops.divide(p, _np.arange(n, 0, -1).astype(float))
        p = _ops.concatenate([scaled, _np.asarray([ks[i]], _np.result_type(_dtype(scaled)))], 0)
    return p


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """Integral of y by the trapezoidal rule along `axis` (sample points x or spacing dx)."""
    y = asarray(y)
    nd = len(_shape(y))
    ax = axis % nd
    lo = y[(slice(None),) * ax + (slice(None, -1),)]
    hi = y[(slice(None),) * ax + (slice(1, None),)]
    mid = _ops.add(lo, hi)
    if x is None:
        return _ops.divide(_ops.sum(_ops.multiply(mid, dx), axis=ax), 2.0)
    x = asarray(x)
    if len(_shape(x)) == 1:
        d = _ops.subtract(x[1:], x[:-1])
        d = _ops.reshape(d, tuple(-1 if i == ax else 1 for i in range(nd)))
    else:
        d = diff(x, axis=ax)
    return _ops.divide(_ops.sum(_ops.multiply(d, mid), axis=ax), 2.0)


def _periodic(x: Any, xp: Any, fp: Any, period: Any) -> tuple:
    """NumPy's periodic interp: x and xp modulo the period, xp sorted (fp with it), and one
    wrapped sample added at each end."""
    if _np.ndim(period) or not _np.isfinite(period) or isinstance(period, Tracer):
        raise unsupported("numpy.interp with a period that is not a finite Python number")
    if period == 0:
        raise ValueError("period must be a non-zero value")
    period = abs(float(period))
    if _shape(xp)[0] != _shape(fp)[0]:
        raise ValueError("fp and xp are not of the same length")
    x, xp, fp = (astype(asarray(v), _np.float64) if _dtype(asarray(v)).kind != "c" else
                 asarray(v) for v in (x, xp, fp))
    x, xp = remainder(x, period), remainder(xp, period)
    order = argsort(xp)
    xp, fp = take(xp, order), take(fp, order)
    xp = _ops.concatenate([_ops.subtract(xp[-1:], period), xp, _ops.add(xp[0:1], period)], 0)
    return x, xp, _ops.concatenate([fp[-1:], fp, fp[0:1]], 0)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolation of (xp, fp) at x (xp increasing); differentiable in x,
    fp and xp. Outside [xp[0], xp[-1]] the value is `left` / `right` (default fp[0] /
    fp[-1]). With `period`, x and xp are taken modulo it (left and right are ignored), as
    NumPy does."""
    xp, fp = _1d(xp, "interp"), _1d(fp, "interp")
    if period is not None:
        x, xp, fp = _periodic(x, xp, fp, period)
        left = right = None
    n = _shape(xp)[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    if _shape(fp)[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    x = asarray(x)
    if _dtype(fp).kind == "c":
        raise unsupported("numpy.interp of complex values")
    # (NumPy interpolates in float64, whatever the inputs' dtypes)
    x, xp, fp = (astype(v, _np.float64) for v in (x, xp, fp))
    if n == 1:
        j = _np.zeros((), _np.intp)
    else:
        j = _ops.clip(_ops.subtract(P.searchsorted(xp, x, side="right"), 1), 0, n - 2)
    x0, y0 = take(xp, j), take(fp, j)
    if n == 1:
        val = _ops.broadcast_to(y0, _shape(x)).copy()
    else:
        x1, y1 = take(xp, _ops.add(j, 1)), take(fp, _ops.add(j, 1))
        slope = _ops.divide(_ops.subtract(y1, y0), _ops.subtract(x1, x0))
        val = _ops.add(_ops.multiply(slope, _ops.subtract(x, x0)), y0)
        val = _ops.where(_ops.equal(x, xp[n - 1]), fp[n - 1], val)
    lo = fp[0] if left is None else left
    hi = fp[n - 1] if right is None else right
    val = _ops.where(_ops.less(x, xp[0]), lo, val)
    return _ops.where(_ops.greater(x, xp[n - 1]), hi, val)

