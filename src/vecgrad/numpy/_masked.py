"""`x[mask]` for a traced boolean mask: a selection whose length depends on the data.

It cannot be a traced array (shapes are static), yet NumPy programs use it in two forms whose
result has x's own shape: an in-place update of the selected entries, `x[x < 0] *= 0.1`
(Python runs `t = x[m]; t *= 0.1; x[m] = t`), and a copy between arrays of one shape,
`y[m] = x[m]`. A `MaskedSelection` keeps the array it selects from and applies those as
`where(m, f(x), x)`: exactly NumPy's values, since f works entry by entry. Its values are
read as numpy/_selected.py says (reductions, entrywise work: `np.sum(x[m] ** 2)`); any
other use (its length, indexing along it, returning it) raises.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Self

import numpy as _np

from ..errors import CastingError, TraceError, user_src
from ..tracing import Tracer
from . import _ops
from ._base import _dtype, astype
from ._moved import expand_ellipsis, select_moved, write_moved
from ._selected import SelectedValues, _at, _data_dependent, filled


class MaskedSelection(SelectedValues):
    """The entries of `base` where `mask` (over its leading axes) is true, as `value` (an
    array of base's shape whose selected entries are the selection's current values)."""

    __slots__ = ("base", "mask", "src", "value", "version")

    def __init__(self, base: Tracer, mask: Tracer):
        self.base, self.mask, self.version, self.value = base, mask, base.atom, base
        self.src = user_src(3)  # (the line of `x[mask]`)

    def _update(self, other: Any, fn: Callable, name: str) -> Self:
        other = self._operand(other)  # (a selection by this mask, or a scalar / a row)
        new = fn(self._vals(), other)  # (unselected entries: the first selected one's)
        if not _np.can_cast(_dtype(new), self.base.dtype, "same_kind"):
            raise CastingError(name, _dtype(new), self.base.dtype, user_src(3))
        self.value = astype(new, self.base.dtype)
        return self

    def __iadd__(self, o: Any) -> Self:
        return self._update(o, _ops.add, "add")

    def __isub__(self, o: Any) -> Self:
        return self._update(o, _ops.subtract, "subtract")

    def __imul__(self, o: Any) -> Self:
        return self._update(o, _ops.multiply, "multiply")

    def __itruediv__(self, o: Any) -> Self:
        return self._update(o, _ops.divide, "divide")

    def __ipow__(self, o: Any) -> Self:
        return self._update(o, operator.pow, "power")

    def write_into(self, target: Tracer, mask: Any) -> bool:
        """`target[mask] = self`: where(mask, value, target), if the masks are one and the
        shapes agree (else raise: NumPy would pair entries by position)."""
        if not isinstance(mask, Tracer) or mask.atom is not self.mask.atom \
                or target.shape != self.value.shape:
            raise _data_dependent(self.src)
        if self.base.atom is not self.version:
            raise TraceError("x[mask] was read, then x was written, then the selection was "
                             "written back: vecgrad keeps x[mask] as a view of x. Use "
                             "vnp.where(mask, ...) instead" + _at())
        m = _ops.reshape(self.mask, self.mask.shape + (1,) * (target.ndim - self.mask.ndim))
        new = astype(_ops.where(m, self.value, target), target.dtype)
        target._replace(new.atom)
        return True

    def _vals(self) -> Tracer:
        return filled(self.mask, self.value)

    def _reduced(self) -> Tracer:  # (np.sum(x[m]): the mask's where= alone, no fill)
        return self.value


def _whole(rest: tuple) -> bool:
    return all(k is Ellipsis or type(k) is slice and k == slice(None) for k in rest)


def _leading_mask(key: Any) -> tuple[Any, tuple]:
    """(mask, the basic indices after it) of x[mask, ...] (x[m, :] is x[m]); (key, ())
    for any other key."""
    if type(key) is tuple and key and isinstance(key[0], Tracer) and key[0].dtype == bool \
            and all(type(k) in (int, slice) or k is Ellipsis for k in key[1:]) \
            and sum(k is Ellipsis for k in key[1:]) <= 1:
        return key[0], () if _whole(key[1:]) else key[1:]
    return key, ()


def select(x: Tracer, key: Any) -> SelectedValues | None:
    """`x[key]` as a MaskedSelection where key is one traced boolean mask over x's leading
    axes, then full slices (`x[m, :]`); x[m, 1:], x[m, 0] (basic indices after the mask) as
    that selection's values indexed by rows (read-only); None otherwise."""
    key, rest = _leading_mask(expand_ellipsis(key, x.ndim))
    if isinstance(key, Tracer) and key.dtype == bool and key.ndim \
            and x.shape[:key.ndim] == key.shape:
        sel = MaskedSelection(x, key)
        return sel[(slice(None), *rest)] if rest else sel
    moved = select_moved(x, key, filled)  # (x[:, m]; x[i, m] is x[i][m])
    if moved is None and type(key) is tuple and key and type(key[0]) is int and any(
            isinstance(k, Tracer) and k.dtype == bool for k in key):
        i = next(j for j, k in enumerate(key) if type(k) is not int)
        return select(x[key[:i]], key[i:])
    return moved


def write_masked(x: Tracer, mask: Any, value: Any) -> bool:
    """`x[mask] = v` for a traced boolean mask over x's leading axes and a v that broadcasts
    to one selected entry (a scalar, or a row): `where(mask, v, x)`, exactly NumPy's result.
    False if the write is not of that form (tracing's write at a traced key asks here
    first). `x[m, 1:] = v`, `x[m, 0] = v` (basic indices after the mask) write the same way
    into that part of x."""
    mask = expand_ellipsis(mask, x.ndim)
    if write_moved(x, mask, value):  # (x[:, m] = v)
        return True
    mask, rest = _leading_mask(mask)  # (x[m, :] = v is x[m] = v)
    if rest:
        if not (isinstance(mask, Tracer) and x.shape[:mask.ndim] == mask.shape):
            return False
        part = (slice(None),) * mask.ndim + rest
        sub = x[part]
        if not write_masked(sub, mask, value):
            return False
        x[part] = sub
        return True
    write_into = getattr(type(value), "write_into", None)  # (MaskedSelection)
    if write_into is not None:  # y[mask] = x[mask], or x[mask] *= c written back
        return write_into(value, x, mask)
    if not (isinstance(mask, Tracer) and mask.dtype == bool and mask.ndim
            and x.shape[:mask.ndim] == mask.shape):
        return False
    rest = x.shape[mask.ndim:]
    try:
        ok = _np.broadcast_shapes(_np.shape(value), rest) == rest
    except ValueError:
        ok = False
    if not ok:
        return False
    m = _ops.reshape(mask, mask.shape + (1,) * len(rest))
    new = astype(_ops.where(m, value, x), x.dtype)
    x._replace(new.atom)
    return True
