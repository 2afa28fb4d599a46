"""numpy.polynomial's evaluation of series with traced coefficients or points:
polynomial.polyval (Horner), chebyshev.chebval and legendre.legval (Clenshaw), NumPy's own
recurrences step for step (so values round as NumPy's do), differentiable in x and c.

NumPy's functions make a plain array of the coefficients first (np.array(c, ndmin=1)), which a
traced value is not: while tracing, pyarrays puts these in their place for calls from the
user's code with a traced argument."""
from __future__ import annotations

from typing import Any

import numpy as _np

from ..tracing import Tracer
from . import _ops
from ._base import _dtype, _shape, asarray, astype

__all__: list[str] = []


def _prepared(x: Any, c: Any, tensor: bool) -> tuple[Any, Any]:
    """NumPy's preamble: c at least 1-d and floating, x an array if a list, and c given a
    trailing axis per axis of x where x is an array and `tensor` holds."""
    c = asarray(c)
    if len(_shape(c)) == 0:
        c = _ops.reshape(c, (1,))
    if _dtype(c).kind in "biu":
        c = astype(c, _np.float64)
    if isinstance(x, (tuple, list)):
        x = asarray(x)
    nd = len(_shape(x)) if isinstance(x, (Tracer, _np.ndarray)) else 0
    if tensor and nd:
        c = _ops.reshape(c, _shape(c) + (1,) * nd)
    return x, c


def polyval(x: Any, c: Any, tensor: bool = True) -> Any:
    """numpy.polynomial.polynomial.polyval: sum_k c[k] x**k, by Horner's rule."""
    x, c = _prepared(x, c, tensor)
    c0 = c[-1] + x * 0
    for i in range(2, _shape(c)[0] + 1):
        c0 = c[-i] + c0 * x
    return c0


def chebval(x: Any, c: Any, tensor: bool = True) -> Any:
    """numpy.polynomial.chebyshev.chebval: sum_k c[k] T_k(x), by Clenshaw's recurrence."""
    x, c = _prepared(x, c, tensor)
    n = _shape(c)[0]
    if n <= 2:
        c0, c1 = c[0], (c[1] if n == 2 else 0)
    else:
        x2 = 2 * x
        c0, c1 = c[-2], c[-1]
        for i in range(3, n + 1):
            c0, c1 = c[-i] - c1, c0 + c1 * x2
    return c0 + c1 * x


def legval(x: Any, c: Any, tensor: bool = True) -> Any:
    """numpy.polynomial.legendre.legval: sum_k c[k] P_k(x), by Clenshaw's recurrence."""
    x, c = _prepared(x, c, tensor)
    n = _shape(c)[0]
    if n <= 2:
        c0, c1 = c[0], (c[1] if n == 2 else 0)
    else:
        nd = n
        c0, c1 = c[-2], c[-1]
        for i in range(3, n + 1):
            nd = nd - 1
            c0, c1 = c[-i] - (c1 * (nd - 1)) / nd, c0 + (c1 * x * (2 * nd - 1)) / nd
    return c0 + c1 * x


SERIES = {("numpy.polynomial.polynomial", "polyval"): polyval,
          ("numpy.polynomial.chebyshev", "chebval"): chebval,
          ("numpy.polynomial.legendre", "legval"): legval}
