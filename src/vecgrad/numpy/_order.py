"""Order statistics of `vecgrad.numpy`: sort, argsort, partition, argmax/argmin (and their
NaN-ignoring forms), quantiles, percentiles and medians. Sorting and partitioning are
primitives whose VJPs permute the cotangent back; quantiles read sorted or partitioned values
at static positions (or, ignoring NaNs, at traced ones)."""
from __future__ import annotations

import math
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import ComplexError, unsupported
from ..tracing import Tracer
from . import _ops
from ._base import _axis1, _dtype, _nd, _shape, asarray, astype, takes_out
from ._creation import linspace
from ._indexing import take, take_along_axis
from ._nanstats import _isnan, _nan_to
from ._scans import cumsum
from ._stats import _flat_or, _float, any

__all__ = [
    "argmax",
    "argmin",
    "argpartition",
    "argsort",
    "histogram",
    "histogram_bin_edges",
    "median",
    "nanargmax",
    "nanargmin",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "partition",
    "percentile",
    "quantile",
    "sort",
]


# ------------------------------------------------------------------------------- sorting

def _kind(kind: Any, stable: Any) -> Any:
    return "stable" if stable else kind


def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> Any:
    """Sorted copy along `axis`; the gradient is permuted back through the sort."""
    if order is not None:
        raise unsupported("numpy.sort with order= (structured arrays)")
    a, ax = _flat_or(a, axis)
    return P.sort(a, axis=ax, kind=_kind(kind, stable)) if _nd(a) else a


def argsort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None) -> Any:
    """Indices that sort `a` along `axis` (no gradient)."""
    if order is not None:
        raise unsupported("numpy.argsort with order= (structured arrays)")
    a, ax = _flat_or(a, axis)
    return P.argsort(a, axis=ax, kind=_kind(kind, stable))


def _kth(kth: Any, n: int) -> tuple[int, ...]:
    ks = tuple(int(k) for k in _np.atleast_1d(kth))
    for k in ks:
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")
    return tuple(sorted(k % n for k in ks))


def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """Partially sorted copy: the kth entries in sorted position, smaller ones before."""
    a, ax = _flat_or(a, axis)
    return P.partition(a, axis=ax, kth=_kth(kth, _shape(a)[ax]))


def argpartition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
                 order: Any = None) -> Any:
    """Indices that partition `a` (no gradient)."""
    a, ax = _flat_or(a, axis)
    return P.argpartition(a, axis=ax, kth=_kth(kth, _shape(a)[ax]))


def _arg(prim: P.Primitive, a: Any, axis: Any, keepdims: bool) -> Any:
    a = asarray(a)
    if axis is None:
        r = prim(_ops.ravel(a), axis=0)
        return _ops.reshape(r, (1,) * _nd(a)) if keepdims else r
    ax = _axis1(axis, _nd(a))
    r = prim(a, axis=ax)
    return _ops.expand_dims(r, ax) if keepdims else r


@takes_out
def argmax(a: Any, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the maximum (the first one) along `axis` (no gradient)."""
    return _arg(P.argmax, a, axis, keepdims)


@takes_out
def argmin(a: Any, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the minimum (the first one) along `axis` (no gradient)."""
    return _arg(P.argmin, a, axis, keepdims)


# ------------------------------------------------------------------ quantiles and medians

# NumPy's continuous methods other than linear: virtual index n q + alpha + q (1 - alpha -
# beta) - 1 (Hyndman and Fan)
_ALPHA_BETA = {"weibull": (0.0, 0.0), "hazen": (0.5, 0.5), "median_unbiased": (1 / 3, 1 / 3),
               "normal_unbiased": (3 / 8, 3 / 8), "interpolated_inverted_cdf": (0.0, 1.0)}
_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", *_ALPHA_BETA)


def _lerp(a: Any, b: Any, t: Any) -> Any:
    """NumPy's interpolation between a and b, exact at both ends."""
    d = _ops.subtract(b, a)
    lo = _ops.add(a, _ops.multiply(d, t))
    if not isinstance(t, Tracer):
        return _ops.subtract(b, _ops.multiply(d, 1 - t)) if t >= 0.5 else lo
    hi = _ops.subtract(b, _ops.multiply(d, _ops.subtract(1, t)))
    return _ops.where(_ops.greater_equal(t, 0.5), hi, lo)


def _static_quantile(srt: Any, q: float, n: int, method: str) -> Any:
    """One quantile along the last axis of sorted rows of n entries (NumPy's arithmetic)."""
    if method in ("lower", "higher", "nearest"):
        i = {"lower": math.floor, "higher": math.ceil,
             "nearest": lambda v: int(_np.around(v))}[method]((n - 1) * q)
        return srt[..., i]
    if method == "midpoint":
        vi = 0.5 * (math.floor((n - 1) * q) + math.ceil((n - 1) * q))
    elif method == "linear":
        vi = (n - 1) * q
    else:
        al, be = _ALPHA_BETA[method]
        vi = n * q + (al + q * (1 - al - be)) - 1
    lo = math.floor(vi)
    gamma = vi - lo
    if method == "midpoint":
        gamma = 0.5 if vi % 1 else 0.0
    lo, hi = (n - 1, n - 1) if vi >= n - 1 else (0, 0) if vi < 0 else (lo, lo + 1)
    return _lerp(srt[..., lo], srt[..., hi], gamma)


def _traced_quantile(srt: Any, q: float, n: Any, method: str) -> Any:
    """The same for rows with a traced count n of valid (non-NaN, sorted first) entries."""
    n1 = _ops.subtract(n, 1)
    if method in ("lower", "higher", "nearest"):
        vi = _ops.multiply(n1, q)
        vi = {"lower": P.floor, "higher": P.ceil, "nearest": lambda v: P.round_(v, decimals=0)
              }[method](vi)
        lo, hi, gamma = vi, vi, 0.0
    else:
        if method == "midpoint":
            v = _ops.multiply(n1, q)
            vi = _ops.multiply(_ops.add(P.floor(v), P.ceil(v)), 0.5)
        elif method == "linear":
            vi = _ops.multiply(n1, q)
        else:
            al, be = _ALPHA_BETA[method]
            vi = _ops.subtract(_ops.add(_ops.multiply(n, q), al + q * (1 - al - be)), 1)
        lo = P.floor(vi)
        gamma = _ops.subtract(vi, lo)
        if method == "midpoint":
            gamma = _ops.where(_ops.equal(gamma, 0), 0.0, 0.5)
        above, below = _ops.greater_equal(vi, n1), _ops.less(vi, 0)
        lo = _ops.where(above, n1, _ops.where(below, 0, lo))
        hi = _ops.where(above, n1, _ops.where(below, 0, _ops.add(lo, 1)))
    last = _shape(srt)[-1] - 1
    idx = astype(_ops.clip(_ops.stack([lo, hi], -1), 0, last), _np.intp)
    both = P.take_along(srt, idx, axis=_nd(srt) - 1)
    return _lerp(both[..., 0], both[..., 1], gamma)


def _quantile_dtype(a: Any, method: str, name: str, q_given: Any) -> _np.dtype:
    """NumPy's result dtype for this input dtype, q and method (its rules: values taken as
    they are keep the input's dtype, interpolated ones promote with the weight, which is weak
    for a Python-number q), asked of NumPy on a two-element stand-in."""
    with _np.errstate(all="ignore"):
        return _np.asarray(getattr(_np, name)(_np.zeros(2, _dtype(a)), q_given,
                                              method=method)).dtype


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, ignore_nan: bool,
              name: str, q_given: Any = None, weights: Any = None) -> Any:
    a = asarray(a)
    if weights is not None and method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    if method in _METHODS or method == "inverted_cdf":
        a = astype(a, _quantile_dtype(a, method, name, q if q_given is None else q_given))
    if isinstance(q, Tracer):
        raise unsupported(f"numpy.{name} with traced q (pass q as Python numbers or a NumPy "
                          "array)")
    qs = _np.asarray(q, dtype=_np.float64)
    if ((qs < 0) | (qs > 1)).any():
        raise ValueError("Quantiles must be in the range [0, 1]")
    if method == "inverted_cdf" and not ignore_nan:  # (unit weights: the unweighted rule)
        weights = _np.ones(_shape(a)) if weights is None else weights
    elif method not in _METHODS:
        raise unsupported(f"numpy.{name} with method={method!r}")
    nd = _nd(a)
    axes = _ops._axes(axis, nd)
    rest = [i for i in range(nd) if i not in axes]
    x = _ops.transpose(a, rest + list(axes))
    x = _ops.reshape(x, tuple(_shape(a)[i] for i in rest) + (-1,))
    srt = sort(x, -1)  # NaNs sort last
    m = _shape(srt)[-1]
    inexact = _dtype(x).kind in "fc"
    if weights is not None:
        w = _weights(weights, a, axes)
        w = _np.transpose(w, rest + list(axes)).reshape(_shape(x))
        outs = _weighted(x, w, qs.reshape(-1))
        if inexact:
            has_nan = any(_isnan(x), -1)
            outs = [_ops.where(has_nan, _np.nan, o) for o in outs]
    elif ignore_nan and inexact:
        n = _ops.sum(astype(_ops.logical_not(_isnan(x)), _np.float64), -1)
        outs = [_traced_quantile(srt, float(v), n, method) for v in qs.reshape(-1)]
        outs = [_ops.where(_ops.equal(n, 0), _np.nan, o) for o in outs]
    else:
        if m == 0:
            raise ValueError(f"cannot compute {name} of an empty array")
        outs = [_static_quantile(srt, float(v), m, method) for v in qs.reshape(-1)]
        if inexact:
            has_nan = any(_isnan(x), -1)
            outs = [_ops.where(has_nan, _np.nan, o) for o in outs]
    outs = [o if _dtype(o) == _dtype(a) else astype(o, _dtype(a)) for o in outs]
    shape = tuple(1 if (i in axes) else d for i, d in enumerate(_shape(a))) if keepdims \
        else tuple(_shape(a)[i] for i in rest)
    res = _ops.stack([_ops.reshape(o, shape) for o in outs]) if outs else None
    return _ops.reshape(res, qs.shape + shape)


def _weights(weights: Any, a: Any, axes: tuple) -> _np.ndarray:
    """NumPy's checks of quantile weights (known while tracing: NumPy checks their values),
    broadcast to a's shape."""
    if isinstance(weights, Tracer):
        raise unsupported("numpy.quantile with traced weights (NumPy checks their values)")
    w = _np.asarray(weights)
    if w.shape != _shape(a):
        if w.shape != tuple(_shape(a)[i] for i in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        w = w.transpose(_np.argsort(axes)).reshape(
            tuple(s if i in axes else 1 for i, s in enumerate(_shape(a))))
    if _np.any(w < 0):
        raise ValueError("Weights must be non-negative.")
    total = _np.sum(_np.broadcast_to(w, _shape(a)), axis=axes, dtype=_np.float64)
    if not _np.all(_np.isfinite(total) & (total != 0)):
        raise ValueError("Weights included NaN, inf or were all zero.")
    return _np.broadcast_to(w, _shape(a))


def _weighted(x: Any, w: _np.ndarray, qs: _np.ndarray) -> list:
    """Weighted inverted-CDF quantiles along x's last axis, as NumPy finds them: the first
    sorted entry whose cumulative weight reaches q (leading zero weights skipped); the
    gradient goes to that entry."""
    order = argsort(x, -1)
    srt = take_along_axis(x, order, -1)
    cdf = cumsum(take_along_axis(astype(asarray(w), _np.float64), order, -1), -1)
    cdf = _ops.divide(cdf, cdf[..., -1:])
    m, outs = _shape(x)[-1], []
    for v in qs:
        below = _ops.logical_or(_ops.less(cdf, v), _ops.equal(cdf, 0))
        idx = _ops.minimum(_ops.sum(astype(below, _np.int64), -1, keepdims=True), m - 1)
        outs.append(take_along_axis(srt, idx, -1)[..., 0])
    return outs


@takes_out
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
             weights: Any = None, interpolation: Any = None) -> Any:
    """q-th quantiles along `axis` (q static; methods linear, lower, higher, nearest,
    midpoint, hazen, weibull, median_unbiased, normal_unbiased, interpolated_inverted_cdf;
    inverted_cdf also with `weights`, known while tracing)."""
    return _quantile(a, q, axis, interpolation or method, keepdims, False, "quantile",
                     weights=weights)


@takes_out
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> Any:
    """q-th percentiles (q in [0, 100]) along `axis`."""
    return _quantile(a, _np.true_divide(q, 100), axis, interpolation or method, keepdims,
                     False, "percentile", q_given=q, weights=weights)


@takes_out
def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None, interpolation: Any = None) -> Any:
    """Quantiles ignoring NaNs (NaN for an all-NaN slice)."""
    if weights is not None:
        raise unsupported("numpy.nanquantile with weights=")
    return _quantile(a, q, axis, interpolation or method, keepdims, True, "nanquantile")


@takes_out
def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Any:
    """Percentiles ignoring NaNs."""
    if weights is not None:
        raise unsupported("numpy.nanpercentile with weights=")
    return _quantile(a, _np.true_divide(q, 100), axis, interpolation or method, keepdims,
                     True, "nanpercentile", q_given=q)


def _reduced_last(a: Any, axis: Any, keepdims: bool) -> tuple[Any, tuple[int, ...]]:
    """`a` with the reduced axes moved last and merged into one, and the reduction's result
    shape (with the reduced axes kept as ones if `keepdims`)."""
    nd = _nd(a)
    axes = _ops._axes(axis, nd)
    rest = [i for i in range(nd) if i not in axes]
    x = _ops.reshape(_ops.transpose(a, rest + list(axes)),
                     tuple(_shape(a)[i] for i in rest) + (math.prod(_shape(a)[i] for i in axes),))
    shape = tuple(1 if i in axes else d for i, d in enumerate(_shape(a))) if keepdims \
        else tuple(_shape(a)[i] for i in rest)
    return x, shape


def _nan_of_nothing(x: Any, shape: tuple[int, ...]) -> Any:
    """NumPy's median of an empty slice, the mean of nothing: nan in x's float dtype."""
    return _ops.reshape(_ops.multiply(_ops.sum(x, -1), _np.nan), shape)


@takes_out
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """Median along `axis` (the mean of the two middle values for an even count)."""
    a = _float(asarray(a))
    x, shape = _reduced_last(a, axis, keepdims)
    m = _shape(x)[-1]
    if m == 0:
        return _nan_of_nothing(x, shape)
    k = (m - 1) // 2
    part = partition(x, (k, m // 2) if m % 2 == 0 else (k,), -1)
    med = part[..., k] if m % 2 else _ops.divide(_ops.add(part[..., k], part[..., m // 2]), 2)
    med = _ops.where(any(_isnan(x), -1), _np.nan, med) if _dtype(x).kind in "fc" else med
    return _ops.reshape(med, shape)


@takes_out
def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """Median ignoring NaNs (NaN for an all-NaN slice): the middle valid value, or the mean
    of the two middle ones, as NumPy's (so [-inf, 0, inf] gives 0, where the interpolation
    of nanquantile(a, 0.5) gives NaN)."""
    a = _float(asarray(a))
    x, shape = _reduced_last(a, axis, keepdims)
    if _shape(x)[-1] == 0:
        return _nan_of_nothing(x, shape)
    if _dtype(x).kind != "f":
        return nanquantile(a, 0.5, axis, keepdims=keepdims)
    srt = sort(x, -1)  # NaNs sort last
    n = _ops.sum(astype(_ops.logical_not(_isnan(x)), _np.float64), -1)
    lo = _ops.maximum(P.floor(_ops.multiply(_ops.subtract(n, 1), 0.5)), 0)
    hi = _ops.minimum(P.floor(_ops.multiply(n, 0.5)), _shape(x)[-1] - 1)
    both = P.take_along(srt, astype(_ops.stack([lo, hi], -1), _np.intp), axis=_nd(srt) - 1)
    mid = _ops.divide(_ops.add(both[..., 0], both[..., 1]), 2)
    med = _ops.where(_ops.equal(n, 0), _np.nan, _ops.where(_ops.equal(lo, hi), both[..., 0], mid))
    return _ops.reshape(astype(med, _dtype(x)), shape)


@takes_out
def nanargmax(a: Any, axis: int | None = None, out: Any = None, *,
              keepdims: bool = False) -> Any:
    """Index of the maximum ignoring NaNs (NumPy raises for an all-NaN slice; here it is 0)."""
    return argmax(_nan_to(a, -_np.inf), axis, keepdims=keepdims)


@takes_out
def nanargmin(a: Any, axis: int | None = None, out: Any = None, *,
              keepdims: bool = False) -> Any:
    """Index of the minimum ignoring NaNs (NumPy raises for an all-NaN slice; here it is 0)."""
    return argmin(_nan_to(a, _np.inf), axis, keepdims=keepdims)


# ----------------------------------------------------------------------------- histograms

def _hist_edges(a: Any, bins: Any, range: Any) -> tuple[Any, int | None]:
    """(edges, number of equal bins or None for given edges), as NumPy computes them."""
    if _dtype(a).kind == "c":  # (NumPy bins the real parts, warning as it drops the rest)
        raise ComplexError("numpy.histogram", why="NumPy bins only the real parts")
    if isinstance(bins, str):
        raise unsupported(f"numpy.histogram with bins={bins!r} (pass a number of bins or the "
                          "edges)")
    if isinstance(bins, Tracer) or _np.ndim(bins) == 1:
        edges = asarray(bins)
        if not isinstance(edges, Tracer) and (_np.diff(edges) < 0).any():
            raise ValueError("`bins` must increase monotonically, when an array")
        return edges, None
    n = int(bins)
    if n < 1:
        raise ValueError("`bins` must be positive, when an integer")
    first, last = _outer_edges(a if range is not None else _float(a), range)
    if isinstance(first, Tracer):
        return linspace(first, last, n + 1), n
    return _np.linspace(first, last, n + 1, dtype=_np.result_type(_dtype(a), first, last, 1.0)), n


def _outer_edges(a: Any, range: Any) -> tuple[Any, Any]:
    """NumPy's `_get_outer_edges`: the range given (checked), (0, 1) for no data, else the
    data's minimum and maximum (traced); equal ends are widened by 1/2 each."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (_np.isfinite(first) and _np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
        return (first - 0.5, last + 0.5) if first == last else (first, last)
    if math.prod(_shape(a)) == 0:
        return 0, 1
    first, last = _ops.min(a), _ops.max(a)
    same = _ops.equal(first, last)
    return (_ops.where(same, _ops.subtract(first, 0.5), first),
            _ops.where(same, _ops.add(last, 0.5), last))


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:
    """The bin edges `histogram` uses (bins a number or the edges; range static)."""
    return _hist_edges(_ops.ravel(asarray(a)), bins, range)[0]


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple:
    """Counts (or summed weights) of the values in each bin, and the edges; NumPy's bin
    assignment (the last bin includes its right edge). Counts have no gradient; summed
    weights and densities do, and so do the edges when they come from the data's range."""
    a = _ops.ravel(asarray(a))
    edges, n = _hist_edges(a, bins, range)
    nb = n if n is not None else _shape(edges)[0] - 1
    if n is not None:  # equal bins: NumPy's arithmetic, then its one-off corrections
        first, last = edges[0], edges[nb]
        f = _ops.multiply(_ops.divide(_ops.subtract(a, first), _ops.subtract(last, first)), nb)
        idx = astype(P.floor(_ops.where(P.isfinite(f), f, -1.0)), _np.intp)
        idx = _ops.clip(_ops.where(_ops.equal(idx, nb), nb - 1, idx), 0, nb - 1)
        idx = _ops.where(_ops.less(a, take(edges, idx)), _ops.subtract(idx, 1), idx)
        up = _ops.logical_and(_ops.greater_equal(a, take(edges, _ops.add(idx, 1))),
                              _ops.not_equal(idx, nb - 1))
        idx = _ops.clip(_ops.where(up, _ops.add(idx, 1), idx), 0, nb - 1)
    else:
        idx = _ops.subtract(P.searchsorted(edges, a, side="right"), 1)
        idx = _ops.clip(_ops.where(_ops.equal(a, edges[nb]), nb - 1, idx), 0, max(nb - 1, 0))
        first, last = edges[0], edges[nb]
    inside = _ops.logical_and(_ops.greater_equal(a, first), _ops.less_equal(a, last))
    w = _np.ones(_shape(a)) if weights is None else _ops.ravel(asarray(weights))
    w = _ops.where(inside, w, 0)
    hist = P.scatter_add_along(w, idx, axis=0, size=nb)
    if density:
        db = _ops.subtract(edges[1:], edges[:-1])
        return _ops.divide(_ops.divide(hist, db), _ops.sum(hist)), edges
    return (astype(hist, _np.intp) if weights is None else hist), edges
