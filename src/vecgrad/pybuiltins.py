"""Python's `max` and `min` of traced 0-d values, while a function is traced.

`max(buf[i], v)` and `min(d(x, c) for c in centres)` compare traced values, and Python asks
the comparison's truth (`bool()`), which a trace does not know. While vecgrad traces a user's
function, `builtins.max` / `builtins.min` are these wrappers: where every item is a number or
a traced 0-d value of one dtype, the result is Python's own fold written as selections,

    m = items[0];  for it in items[1:]:  m = where(it > m, it, m)     (min: it < m)

which is exactly what Python computes (the first of equal items wins, a NaN is kept only where
Python keeps it, since a comparison with NaN is False), and whose gradient goes to the item
picked. Any other call (no traced item, a `key=`, arrays that are not 0-d, mixed dtypes whose
winner's dtype would depend on the values) is Python's own function, unchanged: it raises the
ConcretizationError for traced values as before. Outside a trace the builtins are untouched."""
from __future__ import annotations

import builtins
import contextlib
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

from .hooks import NUMPY
from .tracing import Tracer

_MAX, _MIN = builtins.max, builtins.min
_depth = 0


def _foldable(items: list) -> bool:
    """Some item traced, every traced one 0-d of one dtype, the others numbers that do not
    promote it (so the result's dtype does not depend on which item wins)."""
    traced = [x for x in items if isinstance(x, Tracer)]
    if not traced:
        return False
    dt = traced[0].dtype
    for x in items:
        if isinstance(x, Tracer):
            if x.shape != () or x.dtype != dt:
                return False
        elif isinstance(x, bool) or not isinstance(x, (numbers.Number, np.ndarray, np.generic)) or np.ndim(x) != 0 or np.result_type(dt, x) != dt:
            return False
    return True


def _fold(items: list, greater: bool) -> Any:
    m = items[0]
    for it in items[1:]:
        c = it > m if greater else it < m
        if isinstance(c, Tracer):
            m = NUMPY.where(c, it, m)
        elif c:
            m = it
    return m


def _wrap(orig: Any, greater: bool) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not args or kwargs.get("key") is not None:
            return orig(*args, **kwargs)
        if len(args) == 1:
            items = list(args[0])  # (an iterator is consumed once, as Python's own does)
            if not items or not _foldable(items):
                return orig(items, **kwargs)
            return _fold(items, greater)
        if kwargs or not _foldable(list(args)):
            return orig(*args, **kwargs)
        return _fold(list(args), greater)
    wrapper.__name__, wrapper.__doc__ = orig.__name__, orig.__doc__
    return wrapper


_TRACED_MAX, _TRACED_MIN = _wrap(_MAX, True), _wrap(_MIN, False)


@contextlib.contextmanager
def traced_builtins() -> Iterator[None]:
    """`builtins.max` / `builtins.min` fold traced 0-d values inside (nested uses share one
    patch, removed when the outermost ends)."""
    global _depth
    if _depth == 0:
        builtins.max, builtins.min = _TRACED_MAX, _TRACED_MIN
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            builtins.max, builtins.min = _MAX, _MIN


__all__ = ["traced_builtins"]
