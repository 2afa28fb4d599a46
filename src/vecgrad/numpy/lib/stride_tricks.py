"""`vecgrad.numpy.lib.stride_tricks`: windows over an array as a read-only view, as NumPy's.

`as_strided` is left out on purpose: it reads arbitrary memory, which no gradient can follow.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple

from ... import primitives as P
from ...errors import UnsupportedError, _where, user_src
from ...tracing import Tracer, as_view

__all__ = ["sliding_window_view"]


def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> Any:
    """Every window of `window_shape` over `x` along `axis` (all axes by default), as NumPy's:
    the windowed axes shrink to `n - w + 1` and the window axes are appended in `axis`
    order. The result is a read-only view (one strided gather, no copy), and its gradient
    adds each window's cotangent back with one strided add per window offset."""
    if not isinstance(x, Tracer):
        return _np.lib.stride_tricks.sliding_window_view(x, window_shape, axis, subok=subok,
                                                         writeable=writeable)
    if writeable:
        raise UnsupportedError(
            "sliding_window_view(..., writeable=True): windows overlap, so a write through "
            f"one would change others; vecgrad's windows are read-only{_where(user_src())}. "
            "Write into a buffer (`buf[t:t+k] += v`) instead.")
    window_shape = (tuple(map(operator.index, window_shape)) if _np.iterable(window_shape)
                    else (operator.index(window_shape),))
    if any(w < 0 for w in window_shape):
        raise ValueError("`window_shape` cannot contain negative values")
    nd = len(x.shape)
    if axis is None:
        axis = tuple(range(nd))
        if len(window_shape) != nd:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(window_shape)} window_shape "
                             f"elements and `x.ndim` is {nd}.")
    else:
        axis = normalize_axis_tuple(axis, nd, allow_duplicate=True)
        if len(window_shape) != len(axis):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(window_shape)} window_shape elements and {len(axis)} "
                             f"axes elements.")
    kept = list(x.shape)
    for a, w in zip(axis, window_shape):
        if kept[a] < w:
            raise ValueError("window shape cannot be larger than input array shape")
        kept[a] -= w - 1

    def along(a: int) -> tuple[int, ...]:
        return tuple(int(k == a) for k in range(nd))

    dims = (tuple((kept[a], along(a)) for a in range(nd))
            + tuple((w, along(a)) for a, w in zip(axis, window_shape)))
    params = {"start": (0,) * nd, "dims": dims}
    return as_view(P.strided(x, **params), x, P.strided, params,
                   readonly="the read-only view returned by sliding_window_view")
