"""Python's `max` and `min` of traced 0-d values, while a function is traced.

`max(buf[i], v)` and `min(d(x, c) for c in centres)` compare traced values, and Python asks
the comparison's truth (`bool()`), which a trace does not know. While vecgrad traces a user's
function, `builtins.max` / `builtins.min` are these wrappers: where every item is a number or
a traced 0-d value of one dtype, the result is Python's own fold written as selections,

    m = items[0];  for it in items[1:]:  m = where(it > m, it, m)     (min: it < m)

which is exactly what Python computes (the first of equal items wins, a NaN is kept only where
Python keeps it, since a comparison with NaN is False), and whose gradient goes to the item
picked. From FOLD_AT_ONCE items on, the same result is one selection: the item at an argmax
of the stacked items (a chain of n selections grew with the items of `max(... for i in
range(n))`). Any other call (no traced item, a `key=`, arrays that are not 0-d, mixed dtypes whose
winner's dtype would depend on the values) is Python's own function, unchanged: it raises the
ConcretizationError for traced values as before. Outside a trace the builtins are untouched."""
from __future__ import annotations

import builtins
import contextlib
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import pyarrays
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


# From this many items, the fold runs as one selection (below, a chain of selections, each
# reading the previous one, is cheaper): `max(f(x[i]) for i in range(n))` is then one stack,
# one argmax and one gather whatever n, not a chain of n steps.
FOLD_AT_ONCE = 8


def _fold(items: list, greater: bool) -> Any:
    if len(items) >= FOLD_AT_ONCE:
        return _select(items, greater)
    m = items[0]
    for it in items[1:]:
        c = it > m if greater else it < m
        if isinstance(c, Tracer):
            m = NUMPY.where(c, it, m)
        elif c:
            m = it
    return m


def _select(items: list, greater: bool) -> Any:
    """Python's fold as one selection, exactly: the item at the argmax (argmin) of the
    stacked items, which is the first of equal ones as Python's strict comparison keeps it;
    NaNs after the first place can never win (a comparison with NaN is False) and count as
    -inf (+inf), while a NaN in the first place is kept (argmax picks the first NaN)."""
    dt = next(x.dtype for x in items if isinstance(x, Tracer))
    s = NUMPY.stack([x if isinstance(x, Tracer) else np.asarray(x, dt) for x in items])
    key = s
    if np.issubdtype(dt, np.floating):
        later = np.arange(len(items)) > 0
        key = NUMPY.where(np.isnan(s) & later, -np.inf if greater else np.inf, s)
    return s[key.argmax() if greater else key.argmin()]


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
    """`builtins.max` / `builtins.min` fold traced 0-d values inside, and `np.array` /
    `np.asarray` & co. of traced values called from the user's code make traced arrays (see
    pyarrays; nested uses share one patch, removed when the outermost ends)."""
    global _depth
    if _depth == 0:
        builtins.max, builtins.min = _TRACED_MAX, _TRACED_MIN
        pyarrays.patch()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            builtins.max, builtins.min = _MAX, _MIN
            pyarrays.unpatch()


__all__ = ["traced_builtins"]
