"""`np.pad` in every NumPy mode: copies of the input (constant, edge, reflect, symmetric,
wrap, empty) gathered in runs, odd reflections 2 * edge - mirror, statistics of the edge
regions (maximum, minimum, mean, median over `stat_length`) and linear ramps to
`end_values`. Axes are padded one after another, each seeing the earlier axes' padding, as
NumPy's own loop does; the gradient sums every copy back onto the elements it came from."""
from __future__ import annotations

from typing import Any

import numpy as _np

from ..errors import unsupported
from . import _ops
from ._base import _dtype, _shape, asarray, astype
from ._order import median
from ._shape_ops import _at_axis, _nd, fresh
from ._tiling import gather_runs
from ._ufuncs import floor, rint

__all__ = ["pad"]

_COPIES = ("edge", "reflect", "symmetric", "wrap")
_STATS = {"maximum": _ops.max, "minimum": _ops.min, "mean": _ops.mean, "median": median}
_KWARGS = {"empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
           "linear_ramp": ("end_values",), "reflect": ("reflect_type",),
           "symmetric": ("reflect_type",), **{m: ("stat_length",) for m in _STATS}}


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array as `np.pad` does, in every mode but a callable one (constant, edge,
    reflect and symmetric with `reflect_type` 'even' or 'odd', wrap, empty, maximum, minimum,
    mean, median with `stat_length`, linear_ramp with `end_values`)."""
    a = asarray(array)
    nd = _nd(a)
    widths = _pairs(pad_width, nd, index=True)
    if callable(mode):
        raise unsupported("numpy.pad with a callable mode")
    if mode not in _KWARGS:
        raise ValueError(f"mode '{mode}' is not supported")
    extra = set(kwargs) - set(_KWARGS[mode])
    if extra:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {extra}")
    if mode not in ("constant", "empty"):
        for ax, (lo, hi) in enumerate(widths):
            if _shape(a)[ax] == 0 and (lo or hi):
                raise ValueError(f"can't extend empty axis {ax} using modes other than "
                                 "'constant' or 'empty'")
        if 0 in _shape(a):
            return fresh(a, array)
    odd = kwargs.get("reflect_type", "even") == "odd"
    values = _pairs(kwargs.get("constant_values", kwargs.get("end_values", 0)), nd)
    lengths = _pairs(kwargs.get("stat_length"), nd, index=True)
    for ax, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        if mode in ("constant", "empty"):
            a = _constant(a, ax, lo, hi, values[ax])
        elif mode in _COPIES:
            a = _copies(a, ax, lo, hi, mode, odd)
        elif mode == "linear_ramp":
            a = _ramps(a, ax, lo, hi, values[ax])
        else:
            a = _stats(a, ax, lo, hi, _STATS[mode], lengths[ax])
    return fresh(a, array)


def _pairs(x: Any, nd: int, index: bool = False) -> list:
    """NumPy's `_as_pairs`: a value, a pair or one pair per axis, as nd (before, after)."""
    if x is None:
        return [(None, None)] * nd
    v = _np.asarray(x)
    if index:
        v = _np.round(v).astype(_np.int64)
        if (v < 0).any():
            raise ValueError("index can't contain negative values")
    return [tuple(p) for p in _np.broadcast_to(v, (nd, 2)).tolist()]


def _side(a: Any, ax: int, width: int, part: Any) -> Any:
    """`part` (of length 1 along ax, or a constant) repeated `width` times along ax."""
    s = list(_shape(a))
    s[ax] = width
    return _ops.broadcast_to(part, tuple(s))


def _join(a: Any, ax: int, left: Any, lo: int, right: Any, hi: int) -> Any:
    return _ops.concatenate([p for p, w in ((left, lo), (a, 1), (right, hi)) if w], ax)


def _constant(a: Any, ax: int, lo: int, hi: int, cv: tuple) -> Any:
    parts = [_np.full((), v, dtype=_dtype(a)) for v in cv]
    return _join(a, ax, _side(a, ax, lo, parts[0]), lo, _side(a, ax, hi, parts[1]), hi)


def _copies(a: Any, ax: int, lo: int, hi: int, mode: str, odd: bool) -> Any:
    n = _shape(a)[ax]
    out = gather_runs(a, _np.pad(_np.arange(n), (lo, hi), mode=mode), ax)
    if not odd or mode not in ("reflect", "symmetric") or n == 1:  # (a single element:
        return out  # NumPy repeats it for either reflect_type)
    if max(lo, hi) > (n if mode == "symmetric" else n - 1):
        raise unsupported(f"numpy.pad mode={mode!r} with reflect_type='odd' wider than the "
                          "axis (reflected more than once)")
    first, last = a[_at_axis(slice(0, 1), ax)], a[_at_axis(slice(n - 1, n), ax)]
    left = _ops.subtract(_ops.multiply(2, first), out[_at_axis(slice(0, lo), ax)])
    right = _ops.subtract(_ops.multiply(2, last), out[_at_axis(slice(lo + n, None), ax)])
    return _join(a, ax, left, lo, right, hi)


def _ramps(a: Any, ax: int, lo: int, hi: int, ends: tuple) -> Any:
    """np.linspace(end, edge, width, endpoint=False) before, and reversed after (NumPy's
    formula: k * ((edge - end) / width) + end, floored for integer dtypes)."""
    n = _shape(a)[ax]
    parts = []
    for width, edge, end in ((lo, a[_at_axis(slice(0, 1), ax)], ends[0]),
                             (hi, a[_at_axis(slice(n - 1, n), ax)], ends[1])):
        if not width:
            parts.append(None)
            continue
        shape = [1] * _nd(a)
        shape[ax] = width
        k = _np.arange(width, dtype=_np.float64).reshape(shape)
        edge_f = astype(edge, _np.float64) if _dtype(a).kind in "biu" else edge
        ramp = _ops.add(_ops.multiply(k, _ops.divide(_ops.subtract(edge_f, end), width)), end)
        if _dtype(a).kind in "biu":
            ramp = floor(ramp)
        parts.append(astype(ramp, _dtype(a)))
    right = parts[1][_at_axis(slice(None, None, -1), ax)] if hi else None
    return _join(a, ax, parts[0], lo, right, hi)


def _stats(a: Any, ax: int, lo: int, hi: int, stat: Any, lengths: tuple) -> Any:
    """The statistic of the first (last) `stat_length` entries along ax, rounded for integer
    dtypes, repeated over the pad: NumPy's `_get_stats`."""
    n = _shape(a)[ax]
    left_n, right_n = (n if k is None or k > n else k for k in lengths)
    if (left_n == 0 or right_n == 0) and stat in (_ops.max, _ops.min):
        raise ValueError("stat_length of 0 yields no value for padding")
    parts = []
    for width, sl in ((lo, slice(0, left_n)), (hi, slice(n - right_n, n))):
        v = stat(a[_at_axis(sl, ax)], axis=ax, keepdims=True)
        if _dtype(a).kind in "biu":
            v = rint(v)
        parts.append(_side(a, ax, width, astype(v, _dtype(a))) if width else None)
    return _join(a, ax, parts[0], lo, parts[1], hi)
