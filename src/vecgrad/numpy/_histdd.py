"""`np.histogramdd` and `np.histogram2d`: NumPy's bin search per dimension (searchsorted, the
last edge inside the last bin), one scatter-add over the flattened bins with an outlier bin on
each side, stripped. Counts have no gradient; summed weights and densities do, and so do the
edges when they come from the data's range. (As `histogram`, a non-finite value in data whose
range is not given gives non-finite edges where NumPy raises.)"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import ComplexError
from ..tracing import Tracer
from . import _ops
from ._base import _dtype, _shape, asarray, astype
from ._creation import linspace
from ._order import _outer_edges

__all__ = ["histogram2d", "histogramdd"]


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple:
    """The D-dimensional histogram of N points (an (N, D) array, or a sequence of D arrays of
    length N) and the D arrays of edges, as NumPy computes them."""
    s = _sample(sample)
    if _dtype(s).kind == "c":  # (NumPy bins the real parts, warning as it drops the rest)
        raise ComplexError("numpy.histogramdd", why="NumPy bins only the real parts")
    n, d = _shape(s)
    try:
        if len(bins) != d:
            raise ValueError("The dimension of bins must be equal to the dimension of the "
                             "sample x.")
    except TypeError:
        bins = [bins] * d
    range = (None,) * d if range is None else range
    if len(range) != d:
        raise ValueError("range argument must have one entry per dimension")
    cols = [s[:, i] for i in _np.arange(d)]
    edges = [_edges(c, b, r, i) for i, (c, b, r) in enumerate(zip(cols, bins, range))]
    nbin = [_shape(e)[0] + 1 for e in edges]  # (an outlier bin on each end)
    flat, stride = _np.zeros((), _np.intp), 1
    for c, e, nb in reversed(list(zip(cols, edges, nbin))):
        k = P.searchsorted(e, c, side="right")
        k = _ops.where(_ops.equal(c, e[_shape(e)[0] - 1]), _ops.subtract(k, 1), k)
        flat, stride = _ops.add(flat, _ops.multiply(k, stride)), stride * nb
    w = _np.ones(n) if weights is None else astype(asarray(weights), _np.float64)
    hist = P.scatter_add_along(_ops.broadcast_to(w, (n,)), astype(flat, _np.intp), axis=0,
                               size=math.prod(nbin))
    hist = _ops.reshape(hist, tuple(nbin))[(slice(1, -1),) * d]
    if density:
        total = _ops.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = nbin[i] - 2
            hist = _ops.divide(hist, _ops.reshape(_ops.subtract(e[1:], e[:-1]), tuple(shape)))
        hist = _ops.divide(hist, total)
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple:
    """The 2-D histogram of points (x, y) and the x and y edges, as NumPy computes them."""
    if len(x) != len(y):
        raise ValueError("x and y must have the same length.")
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


def _sample(sample: Any) -> Any:
    """(N, D) points, as NumPy reads them: a sequence of D coordinate arrays is stacked."""
    if isinstance(sample, (list, tuple)):
        return _ops.stack([asarray(c) for c in sample], axis=1)
    s = asarray(sample)
    return _ops.reshape(s, (-1, 1)) if len(_shape(s)) < 2 else s


def _edges(col: Any, b: Any, r: Any, i: int) -> Any:
    if isinstance(b, Tracer) or _np.ndim(b) == 1:
        e = asarray(b)
        if not isinstance(e, Tracer) and _np.any(e[:-1] > e[1:]):
            raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
        return e
    if _np.ndim(b) != 0:
        raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
    if b < 1:
        raise ValueError(f"`bins[{i}]` must be positive, when an integer")
    try:
        k = operator.index(b)
    except TypeError as e:
        raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from e
    first, last = _outer_edges(col, r)
    if isinstance(first, Tracer):  # (in the data's dtype, or float64 for integers: NumPy's)
        return linspace(first, last, k + 1)
    return _np.linspace(first, last, k + 1)
