"""`np.gradient`: second-order central differences inside, one-sided (order 1 or 2) at the
edges, on uniform grids (a scalar spacing per axis) and on coordinate arrays (NumPy's
non-uniform formulas, with traced or constant coordinates). A constant coordinate array whose
steps are all equal is NumPy's uniform case, as NumPy checks; a traced one takes the
non-uniform formulas, equal to the uniform ones to rounding where the steps are equal."""
from __future__ import annotations

from typing import Any

import numpy as _np

from ..tracing import Tracer
from . import _ops
from ._base import _axis1, _dtype, _nd, _shape, asarray, astype

__all__ = ["gradient"]


def _float(a: Any) -> Any:
    return astype(a, _np.float64) if _dtype(a).kind in "biu" else a


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """NumPy's gradient of f along `axis` (all axes by default): a tuple for several axes.
    `varargs`: none (unit spacing), one scalar for every axis, or one scalar or 1-D
    coordinate array per axis."""
    f = _float(asarray(f))
    nd = _nd(f)
    axes = list(range(nd)) if axis is None else [
        _axis1(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else [axis])]
    if len(varargs) == 0:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and _np.ndim(varargs[0]) == 0:
        dx = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        dx = [_spacing(d, _shape(f)[ax]) for d, ax in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    # (NumPy divides in place: the result keeps f's float dtype whatever the spacing's)
    outs = [astype(_gradient_1(f, ax, h, edge_order), _dtype(f)) for ax, h in zip(axes, dx)]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _spacing(d: Any, n: int) -> Any:
    """A scalar spacing, or the steps of a coordinate array (as NumPy: ints made float64
    first; a constant one with equal steps is a scalar)."""
    if _np.ndim(d) == 0:
        return d
    if _np.ndim(d) != 1:
        raise ValueError("distances must be either scalars or 1d")
    if _shape(d)[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    d = _float(asarray(d))
    steps = _ops.subtract(d[1:], d[:-1])  # (np.diff)
    if not isinstance(steps, Tracer) and (steps == steps[0]).all():
        return steps[0]
    return ("steps", steps)


def _gradient_1(f: Any, ax: int, h: Any, order: int) -> Any:
    n = _shape(f)[ax]
    if n < order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")

    def s(a: Any, b: Any) -> Any:
        return f[(slice(None),) * ax + (slice(a, b),)]
    if isinstance(h, tuple):
        return _nonuniform(s, f, ax, h[1], order)
    mid = _ops.divide(_ops.subtract(s(2, None), s(None, -2)), _ops.multiply(2.0, h))
    if order == 1:
        lo = _ops.divide(_ops.subtract(s(1, 2), s(0, 1)), h)
        hi = _ops.divide(_ops.subtract(s(-1, None), s(-2, -1)), h)
    else:
        lo = _ops.divide(_ops.add(_ops.add(_ops.multiply(-1.5, s(0, 1)),
                                           _ops.multiply(2.0, s(1, 2))),
                                  _ops.multiply(-0.5, s(2, 3))), h)
        hi = _ops.divide(_ops.add(_ops.add(_ops.multiply(0.5, s(-3, -2)),
                                           _ops.multiply(-2.0, s(-2, -1))),
                                  _ops.multiply(1.5, s(-1, None))), h)
    return _ops.concatenate([lo, mid, hi], ax)


def _three(s: Any, lo: int, a: Any, b: Any, c: Any) -> Any:
    """a f[lo] + b f[lo + 1] + c f[lo + 2] (slices of three along the axis)."""
    def at(k: int) -> Any:
        return s(k, k + 1 if k != -1 else None)
    return _ops.add(_ops.add(_ops.multiply(a, at(lo)), _ops.multiply(b, at(lo + 1))),
                    _ops.multiply(c, at(lo + 2)))


def _nonuniform(s: Any, f: Any, ax: int, dx: Any, order: int) -> Any:
    """NumPy's formulas for the steps `dx` (n - 1 of them) along axis `ax`."""
    def along(v: Any) -> Any:  # (steps broadcast along the axis)
        return _ops.reshape(v, (-1,) + (1,) * (_nd(f) - ax - 1))
    d1, d2 = along(dx[:-1]), along(dx[1:])
    a = _ops.negative(_ops.divide(d2, _ops.multiply(d1, _ops.add(d1, d2))))
    b = _ops.divide(_ops.subtract(d2, d1), _ops.multiply(d1, d2))
    c = _ops.divide(d1, _ops.multiply(d2, _ops.add(d1, d2)))
    mid = _ops.add(_ops.add(_ops.multiply(a, s(None, -2)), _ops.multiply(b, s(1, -1))),
                   _ops.multiply(c, s(2, None)))
    if order == 1:
        lo = _ops.divide(_ops.subtract(s(1, 2), s(0, 1)), dx[0])
        hi = _ops.divide(_ops.subtract(s(-1, None), s(-2, -1)), dx[-1])
    else:
        p, q = dx[0], dx[1]
        lo = _three(s, 0, -(2.0 * p + q) / (p * (p + q)), (p + q) / (p * q), -p / (q * (p + q)))
        p, q = dx[-2], dx[-1]
        hi = _three(s, -3, q / (p * (p + q)), -(q + p) / (p * q), (2.0 * q + p) / (q * (p + q)))
    return _ops.concatenate([lo, mid, hi], ax)
